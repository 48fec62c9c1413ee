// Mixed markdown/HTML that has fooled sanitizers which guess at CommonMark
// (escaped and unbalanced backticks before raw HTML, tags across container
// lines, comments/CDATA/PIs that browsers end elsewhere), rendered the way
// other clients render it: two independent CommonMark renderers with raw HTML
// on, and their output read by a real HTML parser (parse5, the WHATWG
// algorithm browsers follow) looking for anything that runs.
import MarkdownIt from 'markdown-it';
import { micromark } from 'micromark';
import { parseFragment } from 'parse5';

/** Each one runs script when rendered as written. */
export const PAYLOADS = [
  '<img src=x onerror=alert(1)>',
  '<img src="x" onerror="alert(1)"/>',
  '<script>alert(1)</script>',
  '<a href="javascript:alert(1)">x</a>',
  '<a href="&#106;avascript:alert(1)">x</a>',
  '<a href=javascript&colon;alert(1)>x</a>',
  '<a href=" java\tscript:alert(1)">x</a>',
  '<svg onload=alert(1)>',
  '<svg><script>alert(1)</script></svg>',
  '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
  '<details open ontoggle=alert(1)>x</details>',
  '<form action="javascript:alert(1)"><button>x</button></form>',
  '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
  '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
  '<style>x{}</style><img src=x onerror=alert(1)>',
  '<![CDATA[ > <img src=x onerror=alert(1)> ]]>',
  '<? > <img src=x onerror=alert(1)> ?>',
  '<!--> <img src=x onerror=alert(1)> -->',
  '<!-- a --!> <img src=x onerror=alert(1)> -->',
  '<p onclick=alert(1)>x</p>',
  '<div\nonmouseover=alert(1)>x</div>',
  '<a\nhref="javascript:alert(1)">x</a>',
  '<object data="javascript:alert(1)"></object>',
  '<embed src="javascript:alert(1)">',
  '<base href="javascript:alert(1)//">',
  '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
  '[x](javascript:alert(1))',
  '![x](javascript:alert(1))',
  '[x](&#106;avascript:alert(1))',
  '<javascript:alert(1)>',
  '[x]\n\n[x]: javascript:alert(1)',
  '[x](<javascript:alert(1)>)',
];

/** What may come before a payload: the backtick tricks, containers, other blocks. */
export const PREFIXES = [
  '',
  'text ',
  '\\` ',
  '\\`',
  '` ',
  '`',
  '`` x ` ',
  '`a` ` ',
  '\\`` ',
  '``` ',
  '` `` ',
  '\\\\` ',
  '> ',
  '> > ',
  '- ',
  '1. ',
  '# ',
  'text\n',
  '    ',
  '\t',
  '- \t',
  '| a |\n|---|\n| ',
  '**',
  '[',
  '*x* <b>',
  '<div>\n',
  '<!-- ok -->\n',
];

export const SUFFIXES = ['', ' `', '\\`', ' `` ', '\n`', ' |', '**', '](x)', '\n\ntext'];

/** Payloads every prefix × every suffix goes around (the others get each prefix and each suffix alone). */
const AROUND_ALL = [0, 16];

/** Prefix × payload, payload × suffix, prefix × payload × suffix for a few, and each payload's lines split inside a quote and a list. */
export function corpus(): string[] {
  const out: string[] = [];
  for (const [i, payload] of PAYLOADS.entries()) {
    for (const prefix of PREFIXES) {
      for (const suffix of SUFFIXES) if (AROUND_ALL.includes(i) || prefix === '' || suffix === '') out.push(prefix + payload + suffix);
    }
    const spaced = payload.replace(/ /g, '\n');
    out.push(`> ${spaced.replace(/\n/g, '\n> ')}`, `- ${spaced.replace(/\n/g, '\n  ')}`, `> a\n${spaced}`);
  }
  return out;
}

const markdownIt = new MarkdownIt({ html: true });
// Its own link check off: the content must be safe without a renderer's help.
markdownIt.validateLink = () => true;

/** The HTML other clients make of content: markdown-it and micromark, raw HTML on, no protocol filter of their own. */
export function renderings(content: string): Array<{ renderer: string; html: string }> {
  return [
    { renderer: 'markdown-it', html: markdownIt.render(content) },
    { renderer: 'micromark', html: micromark(content, { allowDangerousHtml: true, allowDangerousProtocol: true }) },
  ];
}

const URL_ATTRIBUTES = new Set(['href', 'src', 'action', 'formaction', 'data', 'xlink:href', 'poster', 'background', 'lowsrc', 'dynsrc', 'ping', 'cite', 'codebase', 'manifest', 'srcset']);
const RUNS = new Set(['script', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'base', 'meta', 'link', 'svg', 'math', 'form', 'style', 'template', 'noscript', 'xmp', 'plaintext']);

interface Node {
  nodeName: string;
  tagName?: string;
  attrs?: Array<{ name: string; value: string }>;
  childNodes?: Node[];
  content?: Node;
}

/** What in `html` would run, as a browser parses it: elements that run or embed, event handlers, script URLs. */
export function executableMarkup(html: string): string[] {
  const found: string[] = [];
  const walk = (node: Node) => {
    if (node.tagName) {
      if (RUNS.has(node.tagName)) found.push(`<${node.tagName}>`);
      for (const { name, value } of node.attrs ?? []) {
        if (name.startsWith('on')) found.push(`${node.tagName} ${name}`);
        if (name === 'srcdoc' || name === 'style') found.push(`${node.tagName} ${name}`);
        // A URL's scheme as browsers read it: controls and spaces around it, tabs and newlines anywhere, dropped.
        const cleaned = value.replace(/^[\u0000-\u0020]+/, '').replace(/[\t\n\r]/g, '');
        if (URL_ATTRIBUTES.has(name) && /^(javascript|vbscript|data):/i.test(cleaned)) found.push(`${node.tagName} ${name}=${value}`);
      }
    }
    for (const child of node.childNodes ?? []) walk(child);
    if (node.content) walk(node.content);
  };
  walk(parseFragment(html) as unknown as Node);
  return found;
}
