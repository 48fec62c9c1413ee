// What `content` mentions in text (contract §14; user-groups.mentions.ts):
// names after `@` in text, never in code (as CommonMark reads it), never in
// an email address, a path or Slack's `<@U…>`.
import { expect } from 'chai';
import { textMentions } from '../../services/core/user-groups/user-groups.mentions.js';
import { mrkdwnToMarkdown, renderCompatMessage } from '../../services/core/webhooks/webhooks.compat.js';

const names = (content: string) => textMentions(content)?.names ?? [];

describe('mentions written in content', () => {
  it('finds @names in text, in order, once each, a sentence\'s final dot left out', () => {
    expect(names('hi @alice and @bob.smith, then @alice again.')).to.deep.equal(['alice', 'bob.smith']);
    expect(names('@here @channel @on-call_team')).to.deep.equal(['here', 'channel', 'on-call_team']);
    expect(names('> quoted @alice\n\n- item @bob\n\n**@carol** [@dave](https://x.example)')).to.deep.equal(['alice', 'bob', 'carol', 'dave']);
    expect(names('(@alice)')).to.deep.equal(['alice']);
  });

  it('finds none in code spans, fenced and indented blocks, whatever their fence', () => {
    for (const content of ['`@alice`', '``a `@alice` b``', '```\n@alice\n```', '~~~js\n@alice\n~~~', '    @alice', '- x\n\n      @alice']) {
      expect(names(content), content).to.deep.equal([]);
    }
    expect(names('`@alice` but @bob')).to.deep.equal(['bob']);
  });

  it('finds none in email addresses, paths, after another @, or in Slack\'s <@U123>', () => {
    for (const content of ['me@alice.example', 'see /users/@alice', '@@alice', '<@U123ABC>', 'a.@alice', 'x-@alice']) {
      expect(names(content), content).to.deep.equal([]);
    }
  });

  it('costs nothing without an @ and looks up at most 50 names', () => {
    expect(textMentions('no mention here, <!here> is not ours')).to.equal(null);
    const many = Array.from({ length: 80 }, (_, i) => `@u${i}`).join(' ');
    expect(names(many)).to.have.length(50);
  });
});

describe('a Slack-compatible hook\'s group mentions', () => {
  it('writes <!here> and <!channel> (labelled or not) as @here and @channel outside code, at level 3 only', () => {
    const text = '<!here> and <!channel|channel>: `<!here>` *<!here>* <@U123>';
    expect(mrkdwnToMarkdown(text, true)).to.equal('@here and @channel: `<!here>` **@here** <@U123>');
    expect(mrkdwnToMarkdown(text)).to.equal(text.replace('*<!here>*', '**<!here>**'));
    expect(names(mrkdwnToMarkdown(text, true))).to.deep.equal(['here', 'channel']);
  });

  it('mentions from the text only, not from attachments (as the platform does)', () => {
    const { content, doc } = renderCompatMessage('<!channel> deploy', [{ text: '<!here> details', fields: [] } as never], true);
    expect(content).to.match(/^@channel deploy/).and.include('<!here> details');
    expect(JSON.stringify(doc)).to.include('"text":"@channel deploy"');
  });
});
