// Which links of a message are previewed, and what a page says of itself
// (services/core/unfurls): no I/O.
import { expect } from 'chai';
import { linksKey, linksToUnfurl } from '../../services/core/unfurls/unfurls.links.js';
import { readPage } from '../../services/core/unfurls/unfurls.page.js';

describe('link previews: the links taken', () => {
  it('takes explicit links, autolinks and bare URLs in order, each once, at most 3', () => {
    const content = '[docs](https://a.example/1) <https://b.example/2> https://c.example/3 again https://a.example/1 and https://d.example/4';
    expect(linksToUnfurl(content, false)).to.deep.equal(['https://a.example/1', 'https://b.example/2', 'https://c.example/3']);
  });

  it('never takes a URL inside a code span, an indented or fenced code block', () => {
    const content = ['`https://span.example/`', '', '    https://indented.example/', '', '```', 'https://fenced.example/', '```', '', '~~~js', 'fetch("https://tilde.example/")', '~~~', '``https://double.example/``'].join('\n');
    expect(linksToUnfurl(content, false)).to.deep.equal([]);
  });

  it('takes https only; http, mailto, javascript and data only never (http under the private switch)', () => {
    const content = 'http://plain.example/ [x](javascript:alert(1)) [y](data:text/html,hi) <mailto:a@b.example> https://ok.example/';
    expect(linksToUnfurl(content, false)).to.deep.equal(['https://ok.example/']);
    expect(linksToUnfurl(content, true)).to.deep.equal(['http://plain.example/', 'https://ok.example/']);
  });

  it('names a set of links by its content and order', () => {
    expect(linksKey(['https://a.example/'])).to.equal(linksKey(['https://a.example/']));
    expect(linksKey(['https://a.example/', 'https://b.example/'])).to.not.equal(linksKey(['https://b.example/', 'https://a.example/']));
  });
});

describe('link previews: reading a page', () => {
  const base = new URL('https://site.example/post/1');

  it('prefers Open Graph, decodes entities, folds whitespace and resolves a relative image', () => {
    const page = readPage(
      `<html><head><title>Plain</title><meta property="og:title" content="  Big &amp; bold\n news "><meta name="description" content="meta">
       <meta property="og:description" content="OG description"><meta property="og:site_name" content="Site"><meta property="og:image" content="/img/a.png"></head><body></body></html>`,
      base,
    );
    expect(page).to.deep.equal({ title: 'Big & bold news', description: 'OG description', site_name: 'Site', image: 'https://site.example/img/a.png' });
  });

  it('falls back to <title> and meta description; reads nothing from the body; refuses an image that is not http(s)', () => {
    const page = readPage(
      `<head><title>The &lt;title&gt;</title><meta name="description" content="desc"><meta property="og:image" content="javascript:alert(1)"></head>
       <body><meta property="og:title" content="from the body"><title>body title</title></body>`,
      base,
    );
    expect(page).to.deep.equal({ title: 'The <title>', description: 'desc', site_name: null, image: null });
  });

  it('cuts a long title and survives HTML that is cut off', () => {
    const page = readPage(`<head><title>${'x'.repeat(400)}</title><meta property="og:description" content="unterminated`, base);
    expect([...page.title!]).to.have.length(300);
    expect(page.title!.endsWith('…')).to.equal(true);
  });
});
