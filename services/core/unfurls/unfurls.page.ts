// What a page says of itself: Open Graph (`og:title`, `og:description`,
// `og:site_name`, `og:image`), else the `<title>` and `<meta name=description>`,
// read by htmlparser2 (never by a pattern over HTML). Only the head matters:
// parsing stops at <body>.
import { Parser } from 'htmlparser2';

export interface PageSummary {
  title: string | null;
  description: string | null;
  site_name: string | null;
  /** Absolute, resolved against the page's URL; null when none or not http(s). */
  image: string | null;
}

/** Text as shown in a preview: whitespace folded, at most `max` characters. */
const tidy = (text: string | undefined, max: number) => {
  const folded = (text ?? '').replace(/\s+/g, ' ').trim();
  if (!folded) return null;
  return [...folded].length > max ? `${[...folded].slice(0, max - 1).join('')}…` : folded;
};

export function readPage(html: string, pageUrl: URL): PageSummary {
  const meta = new Map<string, string>();
  let title = '';
  let inTitle = false;
  let done = false;
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (done) return;
        if (name === 'body') {
          done = true;
          parser.pause();
          return;
        }
        if (name === 'title') inTitle = true;
        if (name === 'meta') {
          const key = (attrs.property ?? attrs.name ?? '').toLowerCase();
          if (key && attrs.content !== undefined && !meta.has(key)) meta.set(key, attrs.content);
        }
      },
      ontext(text) {
        if (inTitle) title += text;
      },
      onclosetag(name) {
        if (name === 'title') inTitle = false;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  if (!done) parser.end();
  return {
    title: tidy(meta.get('og:title') ?? meta.get('twitter:title') ?? title, 300),
    description: tidy(meta.get('og:description') ?? meta.get('twitter:description') ?? meta.get('description'), 1000),
    site_name: tidy(meta.get('og:site_name') ?? meta.get('application-name'), 200),
    image: imageUrl(meta.get('og:image:secure_url') ?? meta.get('og:image') ?? meta.get('og:image:url') ?? meta.get('twitter:image'), pageUrl),
  };
}

function imageUrl(raw: string | undefined, base: URL): string | null {
  if (!raw?.trim()) return null;
  try {
    const url = new URL(raw.trim(), base);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch {
    return null;
  }
}
