// The agent blocks (level 3) in the one validator: refused as unknown where
// the rules do not have them (level 2's answer unchanged), checked where they do.
import { expect } from 'chai';
import { validateContentJson, type BlockRules } from '../../shared/blocks/index.js';

const RULES: BlockRules = { trackerHosts: ['linear.app'], codeHosts: ['github.com'] };
const AGENT_RULES: BlockRules = { ...RULES, agentBlocks: true };
const block = (name: string, props: unknown) => ({ type: `block_${name}`, attrs: { blockName: name, version: 1, props } });
const doc = (...content: unknown[]) => ({ type: 'doc', content });
const ahead = (ms: number) => new Date(Date.now() + ms).toISOString();

describe('agent blocks (block_feedback_buttons, block_approval_request)', () => {
  it('are unknown blocks without agentBlocks, with the stable list as the hint', () => {
    for (const name of ['feedback_buttons', 'approval_request']) {
      const result = validateContentJson(doc(block(name, {})), RULES);
      expect(result).to.include({ valid: false, path: 'content.0.type', message: `content.0.type: unknown block "block_${name}"` });
      expect((result as { hint: string }).hint).to.not.include('feedback_buttons');
    }
  });

  it('take their props with agentBlocks, and the preview reads the request', () => {
    const ok = validateContentJson(doc(block('feedback_buttons', {}), block('approval_request', { title: 'Deploy?', description: 'main to prod', expires_at: ahead(60_000), approver_ids: ['0b6f5c1e-1111-4222-8333-444455556666'] })), AGENT_RULES);
    expect(ok).to.include({ valid: true, preview: 'Deploy? main to prod' });
  });

  it('refuse bad props, naming the field', () => {
    const cases: [unknown, string][] = [
      [block('feedback_buttons', { counts: { positive: 9 } }), 'content.0.attrs.props.counts'],
      [block('feedback_buttons', null), 'content.0.attrs.props'],
      [block('approval_request', { title: '', expires_at: ahead(60_000) }), 'content.0.attrs.props.title'],
      [block('approval_request', { title: 't', expires_at: ahead(-1) }), 'content.0.attrs.props.expires_at'],
      [block('approval_request', { title: 't', expires_at: ahead(31 * 24 * 3600_000) }), 'content.0.attrs.props.expires_at'],
      [block('approval_request', { title: 't', expires_at: '2030-01-01' }), 'content.0.attrs.props.expires_at'],
      [block('approval_request', { title: 't', expires_at: ahead(60_000), approver_ids: [] }), 'content.0.attrs.props.approver_ids'],
      [block('approval_request', { title: 't', expires_at: ahead(60_000), approve_label: 'x'.repeat(101) }), 'content.0.attrs.props.approve_label'],
      [block('approval_request', { title: 't', expires_at: ahead(60_000), decision: { decision: 'approve' } }), 'content.0.attrs.props.decision'],
    ];
    for (const [node, path] of cases) expect(validateContentJson(doc(node), AGENT_RULES), path).to.include({ valid: false, path });
  });

  it('allow one approval request per message', () => {
    const request = block('approval_request', { title: 't', expires_at: ahead(60_000) });
    expect(validateContentJson(doc(request, request), AGENT_RULES)).to.include({ valid: false, path: 'content.1.type' });
  });
});
