import { expect } from 'chai';
import { contentDisposition } from '../../services/core/files/files.service.js';
import { canDeleteWebhook, seesAllWebhooks } from '../../services/core/webhooks/webhooks.policy.js';
import { mrkdwnToMarkdown, readCompatPost, renderCompatMessage, slackLinksToMarkdown } from '../../services/core/webhooks/webhooks.compat.js';
import type { Actor } from '../../shared/auth.js';
import { validateContentJson } from '../../shared/blocks/index.js';

const actor = (role: Actor['role'], userId = 'u1'): Actor => ({ keyId: 'k', userId, workspaceId: 'w', role, isAgent: false, scopes: null, conversationIds: null });

describe('webhook compat rules (pure)', () => {
  it('turns Slack link syntax into markdown links, only for http(s) addresses', () => {
    expect(slackLinksToMarkdown('see <https://a.example/x|the graph> or <http://b.example>')).to.equal(
      'see [the graph](https://a.example/x) or http://b.example',
    );
    expect(slackLinksToMarkdown('<javascript:alert(1)|x> <!channel>')).to.equal('<javascript:alert(1)|x> <!channel>');
  });

  it('turns mrkdwn into markdown at ingest: bold, italic, strike, code, links; snake_case and markdown bold stay', () => {
    expect(mrkdwnToMarkdown('Deploy *done* by _bob_ ~old~ `x*y*` see <https://a.example/x|the log> and <https://b.example>')).to.equal(
      'Deploy **done** by *bob* ~~old~~ `x*y*` see [the log](https://a.example/x) and [https://b.example](https://b.example)',
    );
    expect(mrkdwnToMarkdown('snake_case_name a*b*c **already** <!here> <@U123>')).to.equal('snake_case_name a*b*c **already** <!here> <@U123>');
    const { content, doc } = renderCompatMessage('*Build* &lt;42&gt;', []);
    expect(content).to.equal('**Build** &lt;42&gt;');
    expect(doc.content).to.deep.equal([{ type: 'paragraph', content: [{ type: 'text', text: 'Build', marks: [{ type: 'bold' }] }, { type: 'text', text: ' <42>' }] }]);
  });

  it('renders attachment cards the one block validator accepts, and it refuses card attributes of another shape', () => {
    const post = readCompatPost({ text: '*hi*', attachments: [{ color: '#36a64f', title: 'T', title_link: 'https://x.example', text: 'x', fields: [{ title: 'a', value: 'b' }], footer: 'f' }] });
    const rules = { trackerHosts: [], codeHosts: [] };
    expect(validateContentJson(renderCompatMessage(post.text, post.attachments).doc, rules).valid).to.equal(true);
    const bad = { type: 'doc', content: [{ type: 'blockquote', attrs: { kind: 'attachment', color: 'url(javascript:x)' }, content: [] }] };
    expect(validateContentJson(bad, rules)).to.include({ valid: false, path: 'content.0.attrs.color' });
    const other = { type: 'doc', content: [{ type: 'paragraph', attrs: { kind: 'script' }, content: [] }] };
    expect(validateContentJson(other, rules)).to.include({ valid: false, path: 'content.0.attrs.kind' });
  });

  it('keeps an attachment colour only when it is good, warning, danger or a hex colour', () => {
    const color = (c: unknown) => readCompatPost({ attachments: [{ title: 'T', color: c }] }).attachments[0]!.color;
    expect([color('good'), color('danger'), color('#36A64F'), color('abc'), color('red'), color('url(x)'), color(5)]).to.deep.equal(['good', 'danger', '#36a64f', '#abc', null, null, null]);
  });

  it('ignores unknown fields and keeps only valid display overrides', () => {
    const post = readCompatPost({ text: 'hi', channel: '#x', icon_url: '/relative.png', icon_emoji: 'not an emoji', username: 'Bot' });
    expect(post.display).to.deep.equal({ username: 'Bot' });
  });

  it('refuses a non-string text, non-array attachments and a block layout alone, naming the field', () => {
    expect(() => readCompatPost({ text: 5 })).to.throw(/^text: /);
    expect(() => readCompatPost({ attachments: {} })).to.throw(/^attachments: /);
    expect(() => readCompatPost({ blocks: [{ type: 'section' }] })).to.throw(/^blocks: /);
    expect(() => readCompatPost({ text: '   ' })).to.throw(/^text: /);
    expect(() => readCompatPost('nope')).to.throw(/^body: /);
  });

  it('links a title only to an absolute http(s) address', () => {
    const rendered = (title_link: string) =>
      renderCompatMessage(null, readCompatPost({ attachments: [{ title: 'T', title_link }] }).attachments).content;
    expect(rendered('https://x.example/a')).to.equal('> **[T](https://x.example/a)**');
    expect(rendered('/#/alerts')).to.equal('> **T**');
    expect(rendered('javascript:alert(1)')).to.equal('> **T**');
  });
});

describe('file download names (pure)', () => {
  it('gives an ASCII fallback and the exact name in RFC 5987 form', () => {
    expect(contentDisposition('a b.txt')).to.equal('attachment; filename="a b.txt"');
    expect(contentDisposition('naïve.txt')).to.equal(`attachment; filename="na_ve.txt"; filename*=UTF-8''na%C3%AFve.txt`);
    expect(contentDisposition('x"y\\.txt')).to.equal(`attachment; filename="x_y_.txt"; filename*=UTF-8''x%22y%5C.txt`);
  });
});

describe('webhook policy (pure)', () => {
  it('lets admins and owners see and delete every hook, members their own', () => {
    expect(seesAllWebhooks(actor('admin'))).to.equal(true);
    expect(seesAllWebhooks(actor('member'))).to.equal(false);
    expect(canDeleteWebhook(actor('member', 'u1'), { created_by: 'u1' })).to.equal(true);
    expect(canDeleteWebhook(actor('member', 'u1'), { created_by: 'u2' })).to.equal(false);
    expect(canDeleteWebhook(actor('owner', 'u1'), { created_by: null })).to.equal(true);
  });
});
