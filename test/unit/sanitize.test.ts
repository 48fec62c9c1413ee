// Content sanitizing (services/core/messages/messages.sanitize.ts) without I/O; through HTTP: test/api/sanitize.test.ts.
import { expect } from 'chai';
import { isSafeDestination, sanitizeContent } from '../../services/core/messages/messages.sanitize.js';

describe('content sanitizing', () => {
  describe('plain markdown is kept byte for byte', () => {
    const kept = [
      'a < b && c > d',
      '**bold** _it_ ~~s~~ `code`',
      '<https://x.y|link> and <https://example.com> and <mailto:a@b.c|mail>',
      '<@U123> <#C1|general> <!here>',
      '```\n<script>alert(1)</script>\n```',
      'use `<div>` for layout',
      '[a link](https://example.com "title")',
      '1 << 2 >> 3 &amp; &lt;',
      '> quoted\n- list\n  - nested',
      'x <3 y',
      'emoji 🎉 and ünïcödé',
    ];
    for (const text of kept) {
      it(`keeps ${JSON.stringify(text)}`, () => expect(sanitizeContent(text)).to.equal(text));
    }
  });

  describe('HTML is sanitized', () => {
    const cases: [string, (out: string) => void][] = [
      ['<b>bold</b><script>alert(1)</script>', (o) => expect(o).to.equal('<b>bold</b>')],
      ['<img src="x.png" onerror="alert(1)">', (o) => expect(o).not.to.match(/onerror/i)],
      ['<a href="javascript:alert(1)">x</a>', (o) => expect(o).not.to.match(/javascript:/i)],
      ['<a href="JaVaScRiPt:alert(1)" onclick="y()">x</a>', (o) => expect(o).not.to.match(/javascript:|onclick/i)],
      ['<a href="https://ok.example">ok</a>', (o) => expect(o).to.equal('<a href="https://ok.example">ok</a>')],
      ['<p style="color:red" onmouseover="x()">p</p>', (o) => expect(o).to.equal('<p>p</p>')],
      ['<iframe src="https://evil"></iframe>text', (o) => expect(o).to.equal('text')],
      ['<svg><script>alert(1)</script></svg>hi', (o) => expect(o).not.to.match(/script|svg/i)],
      ['a < b <b>c</b>', (o) => expect(o).to.equal('a &lt; b <b>c</b>')],
    ];
    for (const [input, check] of cases) {
      it(`sanitizes ${JSON.stringify(input)}`, () => check(sanitizeContent(input)));
    }
  });

  it('neutralizes script URLs in markdown links and autolinks', () => {
    expect(sanitizeContent('[x](javascript:alert(1))')).to.equal('[x](#)');
    expect(sanitizeContent('<javascript:alert(1)>')).to.equal('\\<javascript:alert(1)>');
    expect(sanitizeContent('[r]: javascript:alert(1)')).to.equal('[r]: #');
  });

  it('reads a destination scheme as a browser does, and allows only http, https, mailto or none', () => {
    const unsafe = ['javascript:x', ' JavaScript:x', 'java\tscript:x', 'java\nscript:x', '\u0001javascript:x', 'vbscript:x', 'data:text/html,x', 'file:///etc/passwd', 'foo:bar'];
    for (const d of unsafe) expect(isSafeDestination(d), JSON.stringify(d)).to.equal(false);
    const safe = ['https://x.example', 'HTTP://x.example', 'mailto:a@b.c', '/relative', '#top', '?q=1', '//x.example/p', 'a/b:c'];
    for (const d of safe) expect(isSafeDestination(d), JSON.stringify(d)).to.equal(true);
  });

  it('rewrites only the destination: text, titles and the rest stay as written', () => {
    expect(sanitizeContent('a [x](javascript:alert(1) "t") b ![i](<data:x>) c\n\n[r]: vbscript:1 "t"')).to.equal(
      'a [x](# "t") b ![i](<#>) c\n\n[r]: # "t"',
    );
    // Rewritten content is stable: sanitizing it again changes nothing.
    const once = sanitizeContent('<javascript:x> [y](&#106;avascript:1)');
    expect(once).to.equal('\\<javascript:x> [y](#)');
    expect(sanitizeContent(once)).to.equal(once);
  });

  it('rewrites content with tens of thousands of edits exactly (one pass over the text; each tag cleaned once), one line or many', () => {
    const n = 13_000;
    expect(sanitizeContent(`<b>x</b> ${'a<'.repeat(n)}`)).to.equal(`<b>x</b> ${'a&lt;'.repeat(n)}`);
    expect(sanitizeContent(`<b>x</b>\n${'a<\n'.repeat(n)}`)).to.equal(`<b>x</b>\n${'a&lt;\n'.repeat(n)}`);
    expect(sanitizeContent(`x ${'<img src=x onerror=y()>'.repeat(3000)}`)).to.equal(`x ${'<img src="x" />'.repeat(3000)}`);
    // A bare < inside a tag's edit stays with the tag: `<b>` kept, the `<` of `<@U1>` escaped, the script dropped whole.
    expect(sanitizeContent(`<b>y</b> <@U1> <script>a<b</script> ${'1<2 '.repeat(5)}`)).to.equal(`<b>y</b> &lt;@U1>  ${'1&lt;2 '.repeat(5)}`);
  });
});

