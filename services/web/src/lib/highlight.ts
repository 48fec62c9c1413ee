// Syntax highlighting of code blocks, loaded only when a code block is on
// screen (ui/code-block.tsx imports this module then): lowlight, which runs
// highlight.js's grammars and answers a tree of spans (hast) that the view
// draws as elements, so no HTML is ever parsed. Each language's grammar is its
// own small chunk, loaded the first time a block names it; a block without a
// language is guessed among the common ones (loaded together, once).
import type { Root } from 'hast';
import type { LanguageFn } from 'highlight.js';
import { createLowlight } from 'lowlight';

type Loader = () => Promise<{ default: LanguageFn }>;

/** The grammars offered, by highlight.js name. A static table, so the bundler makes one chunk per grammar. */
const GRAMMARS: Record<string, Loader> = {
  bash: () => import('highlight.js/lib/languages/bash'),
  c: () => import('highlight.js/lib/languages/c'),
  cpp: () => import('highlight.js/lib/languages/cpp'),
  csharp: () => import('highlight.js/lib/languages/csharp'),
  css: () => import('highlight.js/lib/languages/css'),
  diff: () => import('highlight.js/lib/languages/diff'),
  dockerfile: () => import('highlight.js/lib/languages/dockerfile'),
  go: () => import('highlight.js/lib/languages/go'),
  ini: () => import('highlight.js/lib/languages/ini'),
  java: () => import('highlight.js/lib/languages/java'),
  javascript: () => import('highlight.js/lib/languages/javascript'),
  json: () => import('highlight.js/lib/languages/json'),
  kotlin: () => import('highlight.js/lib/languages/kotlin'),
  markdown: () => import('highlight.js/lib/languages/markdown'),
  php: () => import('highlight.js/lib/languages/php'),
  python: () => import('highlight.js/lib/languages/python'),
  ruby: () => import('highlight.js/lib/languages/ruby'),
  rust: () => import('highlight.js/lib/languages/rust'),
  shell: () => import('highlight.js/lib/languages/shell'),
  sql: () => import('highlight.js/lib/languages/sql'),
  swift: () => import('highlight.js/lib/languages/swift'),
  typescript: () => import('highlight.js/lib/languages/typescript'),
  xml: () => import('highlight.js/lib/languages/xml'),
  yaml: () => import('highlight.js/lib/languages/yaml'),
};

/** Names people write after ``` that are another grammar's. */
const ALIASES: Record<string, string> = {
  js: 'javascript', jsx: 'javascript', mjs: 'javascript', cjs: 'javascript', node: 'javascript',
  ts: 'typescript', tsx: 'typescript',
  py: 'python', rb: 'ruby', rs: 'rust', kt: 'kotlin', cs: 'csharp', 'c#': 'csharp', 'c++': 'cpp', h: 'c', hpp: 'cpp',
  sh: 'bash', zsh: 'bash', console: 'shell', html: 'xml', svg: 'xml', vue: 'xml',
  yml: 'yaml', toml: 'ini', md: 'markdown', golang: 'go', docker: 'dockerfile', patch: 'diff', jsonc: 'json',
};

/** Guessed among for a block with no language: what chat code mostly is. */
const GUESSED = ['bash', 'css', 'go', 'java', 'javascript', 'json', 'python', 'sql', 'typescript', 'xml', 'yaml'];

/** Longer code is left plain: highlighting it would hold the page up. */
const MAX_CHARS = 20_000;
/** A guess below this relevance (highlight.js's score) is too unsure to colour. */
const MIN_GUESS_RELEVANCE = 5;

const lowlight = createLowlight();
const loading = new Map<string, Promise<void>>();

export function grammarName(language: string | null | undefined): string | null {
  const name = (language ?? '').trim().toLowerCase();
  if (!name) return null;
  const known = ALIASES[name] ?? name;
  return known in GRAMMARS ? known : null;
}

function load(name: string): Promise<void> {
  let p = loading.get(name);
  if (!p) {
    p = GRAMMARS[name]!().then((m) => lowlight.register(name, m.default));
    loading.set(name, p);
  }
  return p;
}

/**
 * The code as highlighted spans, or null when it stays plain: a language we
 * do not offer, code too long, or (no language given) no confident guess.
 */
export async function highlight(code: string, language: string | null): Promise<Root | null> {
  if (code.length > MAX_CHARS) return null;
  if (language) {
    const name = grammarName(language);
    if (!name) return null;
    await load(name);
    return lowlight.highlight(name, code);
  }
  await Promise.all(GUESSED.map(load));
  const tree = lowlight.highlightAuto(code, { subset: GUESSED });
  return (tree.data?.relevance ?? 0) >= MIN_GUESS_RELEVANCE ? tree : null;
}
