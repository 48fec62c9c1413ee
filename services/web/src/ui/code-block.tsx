// A code block: its text, a Copy button, and syntax colours once it is on
// screen. The highlighter (lib/highlight.ts, lowlight and a grammar per
// language) is imported only when a block first becomes visible, so a channel
// whose code stays scrolled away loads none of it. Colours are classes
// (media.css, light and dark), never style attributes.
import type { ElementContent, Root } from 'hast';
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { whenVisible } from './when-visible.js';
import './media.css';

/** Trees already made, so a row the list drew again shows its colours at once. */
const done = new Map<string, Root | null>();
const key = (code: string, language: string | null) => `${language ?? ''}\u0000${code}`;

/** lowlight's spans as elements: only `span`s with highlight.js's classes, and text. */
function draw(nodes: ElementContent[]): ComponentChildren {
  return nodes.map((n, i) => {
    if (n.type === 'text') return n.value;
    if (n.type !== 'element') return null;
    const cls = Array.isArray(n.properties.className) ? n.properties.className.filter((c) => typeof c === 'string' && c.startsWith('hljs-')).join(' ') : '';
    return <span key={i} class={cls || undefined}>{draw(n.children)}</span>;
  });
}

export function CodeBlock({ code, language }: { code: string; language: string | null }) {
  const pre = useRef<HTMLPreElement>(null);
  const [tree, setTree] = useState<Root | null | undefined>(() => done.get(key(code, language)));
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    const k = key(code, language);
    if (done.has(k)) return setTree(done.get(k));
    let live = true;
    const stop = whenVisible(pre.current!, () =>
      void import('../lib/highlight.js')
        .then((m) => m.highlight(code, language))
        .then(
          (t) => {
            if (done.size >= 500) done.clear(); // bounded: a long session scrolls through many blocks
            done.set(k, t);
            if (live) setTree(t);
          },
          () => undefined, // a chunk that failed to load (offline) leaves the block plain, to try again when drawn again
        ),
    );
    return () => ((live = false), stop());
  }, [code, language]);
  return (
    <div class="code-block">
      <pre ref={pre} data-highlighted={tree ? 'true' : undefined}>
        <code class={tree ? 'hljs' : undefined} data-language={tree?.data?.language ?? language ?? undefined}>
          {tree ? draw(tree.children as ElementContent[]) : code}
        </code>
      </pre>
      <button type="button" class="btn small copy-code" aria-label="Copy code" onClick={() => void navigator.clipboard?.writeText(code).then(() => setCopied(true))}>
        {copied ? 'Copied' : 'Copy'}
      </button>
    </div>
  );
}
