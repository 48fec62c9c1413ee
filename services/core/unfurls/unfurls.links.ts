// Which links of a message get a preview (contract §14): the first 3 distinct
// links of its markdown as markdown-it reads it (explicit links, autolinks
// and bare URLs), so a URL inside a code span or block, which markdown-it
// never makes a link, is never fetched. https only (http too under
// UNFURL_ALLOW_PRIVATE, for local development and tests).
import { createHash } from 'node:crypto';
import MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';

export const MAX_UNFURLS = 3;

const parser = new MarkdownIt('commonmark', { html: false, linkify: true }).enable('linkify');

/** A cheap look before parsing: most messages carry no link at all. */
export const mayHaveLinks = (content: string, allowPrivate: boolean) => content.includes('https://') || (allowPrivate && content.includes('http://'));

/** The links to preview, in the order they appear, at most MAX_UNFURLS. */
export function linksToUnfurl(content: string, allowPrivate: boolean): string[] {
  if (!mayHaveLinks(content, allowPrivate)) return [];
  const found: string[] = [];
  const visit = (tokens: Token[]) => {
    for (const token of tokens) {
      if (found.length >= MAX_UNFURLS) return;
      if (token.type === 'link_open') {
        const href = token.attrGet('href');
        if (href && wanted(href, allowPrivate) && !found.includes(href)) found.push(href);
      }
      if (token.children) visit(token.children);
    }
  };
  visit(parser.parse(content, {}));
  return found;
}

function wanted(href: string, allowPrivate: boolean): boolean {
  try {
    const url = new URL(href);
    return url.protocol === 'https:' || (allowPrivate && url.protocol === 'http:');
  } catch {
    return false;
  }
}

/** Names one set of links (a job id: an edit that changes the links is a new job, one that keeps them is not). */
export const linksKey = (links: string[]) => createHash('sha256').update(links.join('\n')).digest('hex').slice(0, 32);
