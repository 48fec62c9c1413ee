// Slack's text as Axid's (services/core/imports/slack-text.ts): mrkdwn through
// the webhooks' converter, with Slack's special forms mapped, and back.
import { expect } from 'chai';
import { convertSlackText, markdownToMrkdwn } from '../../services/core/imports/slack-text.js';

const UID = '00000000-0000-4000-8000-000000000001';
const CID = '00000000-0000-4000-8000-000000000002';
const ctx = {
  user: (id: string) => (id === 'U1' ? { id: UID, name: 'jane_doe', label: 'Jane' } : undefined),
  channel: (id: string) => (id === 'C1' ? { id: CID, name: 'dev-ops' } : undefined),
  baseUrl: 'https://chat.example.com',
};

describe('Slack text → Axid (import)', () => {
  it('a mention of a mapped person: @name in content (no emphasis from the name\'s _), a mention node in content_json', () => {
    const out = convertSlackText('hi <@U1> and _you_', ctx);
    expect(out.content).to.equal('hi @jane_doe and *you*');
    expect(out.doc!.content[0]!.content).to.deep.include({ type: 'mention', attrs: { id: UID, label: 'Jane' } });
    expect(out.unknownUsers).to.deep.equal([]);
  });

  it('a mention inside bold keeps the bold around it', () => {
    expect(convertSlackText('*ping <@U1>*', ctx).content).to.equal('**ping @jane_doe**');
  });

  it('an unknown person stays as text and is reported; a label given with the id is used', () => {
    const out = convertSlackText('cc <@U9> <@U8|bob>', ctx);
    expect(out.content).to.equal('cc @U9 @bob');
    expect(out.unknownUsers).to.deep.equal(['U9', 'U8']);
  });

  it('channel links, group mentions, user groups and dates', () => {
    expect(convertSlackText('see <#C1|dev-ops> and <#C9|gone>', ctx).content).to.equal(`see [#dev-ops](https://chat.example.com/c/${CID}) and #gone`);
    expect(convertSlackText('<!here> <!channel> <!everyone> <!here|here>', ctx).content).to.equal('@here @channel @channel @here');
    expect(convertSlackText('<!subteam^S1|@oncall> <!date^1700000000^{date}|Nov 14>', ctx).content).to.equal('@oncall Nov 14');
  });

  it('plain text has no content_json; links keep their label', () => {
    expect(convertSlackText('just words', ctx).doc).to.equal(null);
    expect(convertSlackText('<https://x.example/a|the doc>', ctx).content).to.equal('[the doc](https://x.example/a)');
  });
});

describe('Axid text → Slack (export)', () => {
  const back = { userIdByName: new Map([['jane_doe', 'U1']]), channelSlackId: (id: string) => (id === CID ? 'C1' : undefined), baseUrl: 'https://chat.example.com' };
  it('inverts the import for what it produces', () => {
    for (const text of ['hi <@U1> and _you_', '*ping <@U1>*', 'see <#C1|dev-ops>', '<!here> and <!channel>', '~gone~ `*code*` <https://x.example/a|the doc>']) {
      const imported = convertSlackText(text, ctx).content;
      expect(markdownToMrkdwn(imported, back), text).to.equal(text);
    }
  });
});
