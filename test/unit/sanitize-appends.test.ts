// A streamed reply's appends sanitize only what follows its settled part
// (messages.sanitize.ts, appendSanitized): every variant of the markup corpus,
// streamed in small pieces after content of every kind of block (so a piece
// lands inside a paragraph, a list item, a quote, a fence, an HTML block),
// ends as content that renders to nothing that runs, like content sanitized
// whole (test/unit/sanitize-corpus.test.ts); and an append's work follows the
// open block and the append, not the reply.
import { expect } from 'chai';
import { sanitizeAppend, sanitizeContent, settledLength } from '../../services/core/messages/messages.sanitize.js';
import { AppError } from '../../shared/errors.js';
import { corpus, executableMarkup, renderings } from '../fixtures/markup-corpus.js';

/** A streamed reply as appendToMessage keeps it: the settled part, never read again, and the open part after it. */
interface StreamedContent {
  settled: string;
  open: string;
}
/** Stored (sanitized) content as a streaming reply, as the first append finds it. */
const streaming = (content: string): StreamedContent => ({ settled: content.slice(0, settledLength(content)), open: content.slice(settledLength(content)) });
function appendSanitized(state: StreamedContent, delta: string): StreamedContent {
  const next = sanitizeAppend(state.open, delta);
  return { settled: state.settled + next.tail.slice(0, next.settles), open: next.tail.slice(next.settles) };
}
const contentOf = (state: StreamedContent) => state.settled + state.open;

/** What a reply may already hold when a piece arrives: each leaves a different block open. */
const CONTEXTS = [
  '',
  'Intro paragraph.\n\n',
  'Intro paragraph\n',
  '- item one\n- item two\n',
  '- item one\n\n  continued\n\n',
  '1. first\n2. second\n   ',
  '> quoted\n',
  '```\ncode\n',
  '```\ncode\n```\n\n',
  '    indented code\n',
  '<div>\n',
  '<pre>\n',
  '<!-- open comment\n',
  '[ref]: https://example.com\n\n',
  '# Heading\n',
];

/** Cuts text into pieces of 1 to 7 characters (deterministic). */
function pieces(text: string, seed: number): string[] {
  const out: string[] = [];
  let at = 0;
  let x = seed;
  while (at < text.length) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    const n = 1 + (x % 7);
    out.push(text.slice(at, at + n));
    at += n;
  }
  return out;
}

describe('streamed replies: appends sanitize what follows the settled part', () => {
  it(`leave nothing that runs, for every corpus variant (${corpus().length}) streamed after every kind of open block`, function () {
    this.timeout(120_000);
    const failures: string[] = [];
    let n = 0;
    for (const input of corpus()) {
      const context = CONTEXTS[n % CONTEXTS.length]!;
      n++;
      let state: StreamedContent;
      try {
        state = streaming(sanitizeContent(context));
        for (const piece of pieces(`${input}\n\nafter ${input}`, n)) state = appendSanitized(state, piece);
      } catch (err) {
        expect(err, JSON.stringify(input)).to.be.instanceOf(AppError);
        continue;
      }
      for (const { renderer, html } of renderings(contentOf(state))) {
        const found = executableMarkup(html);
        if (found.length > 0) failures.push(`${JSON.stringify(context)} + ${JSON.stringify(input)} → ${JSON.stringify(contentOf(state))}: ${renderer} ${found.join(', ')}`);
      }
    }
    expect(failures, failures.slice(0, 10).join('\n')).to.deep.equal([]);
  });

  it('settles up to the last top-level block or list item, never inside an open one', () => {
    expect(settledLength('one\n\ntwo')).to.equal('one\n\n'.length);
    expect(settledLength('- a\n- b\n- c')).to.equal('- a\n- b\n'.length);
    expect(settledLength('para\nstill para')).to.equal(0);
    expect(settledLength('```\nopen fence\n\nstill code')).to.equal(0);
    expect(settledLength('<pre>\nraw\n\nstill raw')).to.equal(0);
    expect(settledLength('> quote\nlazy\n\nnext')).to.equal('> quote\nlazy\n\n'.length);
    expect(settledLength('one\r\n\r\ntwo')).to.equal(0);
  });

  it('stores benign content streamed word by word as sanitizing it whole does', () => {
    const text = '# Plan\n\nSome **bold** and <b>tags</b>, a [link](https://example.com).\n\n- one\n- two <i>it</i>\n\n```ts\nconst a: Array<number> = [];\n```\n\n> quoted <em>x</em>\n\nDone.';
    // (A piece that cuts a tag, `<i>it</`, is a bare `<` until the rest comes: written `&lt;`, as before.)
    let state = streaming('');
    for (const word of text.split(/(?<= )/)) state = appendSanitized(state, word);
    expect(contentOf(state)).to.equal(sanitizeContent(text));
  });

  it('costs what the open block and the append cost, not the reply: a 1-byte append to a 38 KB reply as to a small one', () => {
    const block = 'Some **bold** text with a [link](https://example.com) and <b>tag</b> here.\n\n';
    const whole = block.repeat(500);
    const big = streaming(sanitizeContent(whole));
    const small = streaming(sanitizeContent(block));
    // Both sanitize the same open block: the last paragraph.
    expect(big.open).to.equal(small.open);
    const bigNow = appendSanitized(big, 'x');
    const time = (f: () => unknown, n: number) => {
      f();
      const started = performance.now();
      for (let i = 0; i < n; i++) f();
      return (performance.now() - started) / n;
    };
    const append = time(() => appendSanitized(bigNow, '<b>y</b>'), 50);
    const sanitizeWhole = time(() => sanitizeContent(whole + '<b>y</b>'), 5);
    console.log(`      a 1-byte append to a 38 KB reply: ${append.toFixed(2)} ms; sanitizing the reply whole (before): ${sanitizeWhole.toFixed(1)} ms`);
    expect(append * 20, `append ${append.toFixed(2)} ms, whole ${sanitizeWhole.toFixed(1)} ms`).to.be.below(sanitizeWhole);
  });
});
