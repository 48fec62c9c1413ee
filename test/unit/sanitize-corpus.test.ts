// The sanitizer agrees with CommonMark renderers: every variant of the corpus
// (test/fixtures/markup-corpus.ts), once sanitized, renders to nothing that
// runs in markdown-it or micromark with raw HTML on; content it cannot make
// safe is refused (400), never stored as sent. Through HTTP: test/api/sanitize.test.ts.
import { expect } from 'chai';
import { sanitizeContent } from '../../services/core/messages/messages.sanitize.js';
import { AppError } from '../../shared/errors.js';
import { corpus, executableMarkup, PAYLOADS, renderings } from '../fixtures/markup-corpus.js';

describe('sanitized content renders to nothing that runs (markdown-it and micromark, raw HTML on)', () => {
  it('the check itself finds every payload of the corpus when it is not sanitized', () => {
    for (const payload of PAYLOADS) {
      const found = renderings(payload).flatMap((r) => executableMarkup(r.html));
      expect(found, payload).to.not.deep.equal([]);
    }
  });

  it(`holds for every variant of the corpus (${corpus().length} of them)`, function () {
    this.timeout(60_000);
    const failures: string[] = [];
    let refused = 0;
    for (const input of corpus()) {
      let stored: string;
      try {
        stored = sanitizeContent(input);
      } catch (err) {
        expect(err, JSON.stringify(input)).to.be.instanceOf(AppError);
        refused++;
        continue;
      }
      for (const { renderer, html } of renderings(stored)) {
        const found = executableMarkup(html);
        if (found.length > 0) failures.push(`${JSON.stringify(input)} → ${JSON.stringify(stored)}: ${renderer} ${found.join(', ')}`);
      }
      // Stored content is a fixed point: sanitizing it again changes nothing.
      if (sanitizeContent(stored) !== stored) failures.push(`${JSON.stringify(input)}: not stable`);
    }
    expect(failures, failures.slice(0, 20).join('\n')).to.deep.equal([]);
    expect(refused, 'refused rather than made safe').to.be.below(corpus().length / 20);
  });

  it('keeps benign content byte for byte, code included', () => {
    const kept = [
      'use `<img onerror=x>` as an example',
      '``a ` <b>not html</b> ``',
      '```html\n<script>alert(1)</script>\n```',
      '    <script>indented code</script>',
      '\\<not a tag>',
      '<@U123> and <#C1|general> and <!here> and <!channel>',
      '<https://example.com> <mailto:a@b.c>',
      'a < b and x <3 y, `a<b`',
      '[link](https://example.com) ![img](/x.png)',
      '<b>bold</b> and <i>it</i> <code>c</code>',
      '<a href="https://ok.example">ok</a>',
      '> quote with <em>em</em>\n- list',
    ];
    for (const text of kept) expect(sanitizeContent(text), text).to.equal(text);
  });
});
