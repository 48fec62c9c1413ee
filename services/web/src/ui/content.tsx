// A message's body. content_json is rendered node by node as components (text
// as text nodes, so no HTML is ever parsed); without it, `content` goes
// through markdown.ts. Links and images pass lib/links.ts; variants map to
// classes, never style attributes.
import { render, type ComponentChildren, type JSX } from 'preact';
import { Suspense, lazy } from 'preact/compat';
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { errorMessage } from '../lib/api.js';
import { safeUrl } from '../lib/links.js';
import type { DocNode, Message } from '../lib/types.js';
import { displayName, useClient } from './context.js';
import { CodeBlock } from './code-block.js';
import { contentToHtml } from './markdown.js';
import { EmojiText } from './emoji-glyph.js';

export function MessageBody({ message }: { message: Message }) {
  const doc = message.content_json;
  const html = useRef<HTMLDivElement>(null);
  const content = doc && Array.isArray(doc.content) && doc.content.length ? null : contentToHtml(message.content);
  // Code blocks of rendered markdown become CodeBlocks here (copy, colours); the rest stays DOMPurify's output.
  useLayoutEffect(() => {
    const mounts: HTMLElement[] = [];
    for (const pre of html.current?.querySelectorAll('pre') ?? []) {
      const code = pre.querySelector('code');
      // markdown-it's `language-x` class, the one class ui/markdown.ts lets through.
      const language = /^language-(\S+)$/.exec(code?.className ?? '')?.[1] ?? null;
      const mount = document.createElement('div');
      pre.replaceWith(mount);
      render(<CodeBlock code={(code ?? pre).textContent?.replace(/\n$/, '') ?? ''} language={language} />, mount);
      mounts.push(mount);
    }
    return () => mounts.forEach((m) => render(null, m));
  }, [content]);
  if (content === null) {
    return <div class="body">{doc!.content!.map((n, i) => <Node node={n} key={i} message={message} />)}</div>;
  }
  // The HTML comes out of DOMPurify (markdown.ts), never straight from the message.
  return <div class="body" ref={html} dangerouslySetInnerHTML={{ __html: content }} />;
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');

function Children({ node, message }: { node: DocNode; message: Message }) {
  return <>{(node.content ?? []).map((n, i) => <Node node={n} key={i} message={message} />)}</>;
}

export function ExternalLink({ href, children, class: cls }: { href: unknown; children: ComponentChildren; class?: string }) {
  const url = safeUrl(href);
  if (!url) return <span class={cls}>{children}</span>;
  return (
    <a class={cls} href={url} target="_blank" rel="noopener noreferrer">
      {children}
    </a>
  );
}

function Text({ node }: { node: DocNode }) {
  const code = node.marks?.some((m) => m.type === 'code');
  let out: ComponentChildren = code ? node.text ?? '' : <EmojiText text={node.text ?? ''} />;
  for (const mark of node.marks ?? []) {
    if (mark.type === 'bold' || mark.type === 'strong') out = <strong>{out}</strong>;
    else if (mark.type === 'italic' || mark.type === 'em') out = <em>{out}</em>;
    else if (mark.type === 'code') out = <code>{out}</code>;
    else if (mark.type === 'strike') out = <s>{out}</s>;
    else if (mark.type === 'link') out = <ExternalLink href={mark.attrs?.href}>{out}</ExternalLink>;
  }
  return <>{out}</>;
}

function Mention({ node }: { node: DocNode }) {
  const client = useClient();
  const user = client.store.users.get(str(node.attrs?.id));
  return <span class="mention">@{user ? displayName(user) : str(node.attrs?.label) || 'someone'}</span>;
}

function Node({ node, message }: { node: DocNode; message: Message }): JSX.Element | null {
  if (!node || typeof node.type !== 'string') return null;
  if (node.type.startsWith('block_')) return <Block node={node} message={message} />;
  switch (node.type) {
    case 'text':
      return <Text node={node} />;
    case 'mention':
      return <Mention node={node} />;
    case 'paragraph':
      return <p class={node.attrs?.kind === 'footer' ? 'card-footer' : undefined}><Children node={node} message={message} /></p>;
    case 'heading':
      return <h4><Children node={node} message={message} /></h4>;
    case 'blockquote':
      // A compatible hook's attachment (webhooks.compat.ts): a card with its colour bar.
      if (node.attrs?.kind === 'attachment') {
        return (
          <div class={`attachment-card ${attachmentColour(node.attrs.color)}`} role="group" aria-label="Attachment">
            <Children node={node} message={message} />
          </div>
        );
      }
      return <blockquote><Children node={node} message={message} /></blockquote>;
    case 'bullet_list':
    case 'bulletList':
      return <ul class={node.attrs?.kind === 'fields' ? 'card-fields' : undefined}><Children node={node} message={message} /></ul>;
    case 'ordered_list':
    case 'orderedList':
      return <ol><Children node={node} message={message} /></ol>;
    case 'list_item':
    case 'listItem':
      return <li><Children node={node} message={message} /></li>;
    case 'code_block':
    case 'codeBlock':
      return <CodeBlock code={(node.content ?? []).map((n) => n.text ?? '').join('')} language={str(node.attrs?.language) || null} />;
    case 'hard_break':
    case 'hardBreak':
      return <br />;
    case 'horizontal_rule':
    case 'horizontalRule':
      return <hr />;
    default:
      return <Children node={node} message={message} />;
  }
}

/** An attachment's colour as one of a few classes (never a style attribute): named ones, else a hex colour's hue. */
export function attachmentColour(raw: unknown): string {
  if (raw === 'good' || raw === 'warning' || raw === 'danger') return `bar-${raw}`;
  const hex = typeof raw === 'string' ? /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(raw) : null;
  if (!hex) return 'bar-none';
  const h = hex[1]!.length === 3 ? [...hex[1]!].map((c) => c + c).join('') : hex[1]!;
  const [r, g, b] = [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16) / 255) as [number, number, number];
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  if (max - min < 0.12) return 'bar-grey';
  const hue = max === r ? ((g - b) / (max - min) + 6) % 6 : max === g ? (b - r) / (max - min) + 2 : (r - g) / (max - min) + 4;
  return `bar-h${Math.round(hue) % 6}`;
}

// Only agents' answers carry these (level 3): loaded with the first such message, never at start.
const FeedbackBlock = lazy(() => import('./agent-blocks.js').then((m) => ({ default: m.FeedbackBlock })));
const ApprovalBlock = lazy(() => import('./agent-blocks.js').then((m) => ({ default: m.ApprovalBlock })));

const VARIANTS = new Set(['info', 'success', 'warning', 'error']);
const STYLES = new Set(['primary', 'secondary', 'danger']);

interface Button {
  label?: unknown;
  url?: unknown;
  actionId?: unknown;
  style?: unknown;
}

function Block({ node, message }: { node: DocNode; message: Message }) {
  const name = str(node.attrs?.blockName) || node.type.slice('block_'.length);
  const p = (node.attrs?.props ?? {}) as Record<string, unknown>;
  switch (name) {
    case 'text':
      return <p class="block-text">{str(p.text)}</p>;
    case 'heading': {
      const level = p.level === 1 ? 'h3' : p.level === 2 ? 'h4' : 'h5';
      const H = level as 'h3';
      return <H class="block-heading">{str(p.text)}</H>;
    }
    case 'quote':
      return <blockquote class="block-quote">{str(p.text)}</blockquote>;
    case 'divider':
      return <hr class="block-divider" />;
    case 'image': {
      const url = safeUrl(p.url, { allowMailto: false });
      return url ? <img class="block-image" src={url} alt={str(p.alt)} loading="lazy" referrerpolicy="no-referrer" /> : null;
    }
    case 'link_unfurl':
      return (
        <ExternalLink href={p.url} class="block-unfurl card">
          <strong>{str(p.title) || str(p.url)}</strong>
          {p.description ? <span class="muted">{str(p.description)}</span> : null}
        </ExternalLink>
      );
    case 'callout':
      return (
        <div class="block-callout">
          {p.emoji ? <span class="callout-emoji" aria-hidden="true">{str(p.emoji)}</span> : null}
          <span>{str(p.text)}</span>
        </div>
      );
    case 'alert_banner': {
      const variant = VARIANTS.has(str(p.variant)) ? str(p.variant) : 'info';
      return (
        <div class={`block-alert alert-${variant}`} role="note" aria-label={`${variant} alert`}>
          <span>{str(p.text)}</span>
          {p.actionLabel && safeUrl(p.actionUrl) ? <ExternalLink href={p.actionUrl} class="btn small">{str(p.actionLabel)}</ExternalLink> : null}
        </div>
      );
    }
    case 'button_group':
      return (
        <div class="block-buttons" role="group" aria-label="Actions">
          {(Array.isArray(p.buttons) ? (p.buttons as Button[]) : []).slice(0, 10).map((b, i) => <BlockButton key={i} button={b} message={message} />)}
        </div>
      );
    case 'tracker_issue_card':
      return (
        <ExternalLink href={p.url} class="block-card card">
          <span class="card-kind">Issue</span>
          <strong>{str(p.title) || str(p.url)}</strong>
          {p.status ? <span class="pill">{str(p.status)}</span> : null}
        </ExternalLink>
      );
    case 'repo_pr_card':
      return (
        <ExternalLink href={p.url} class="block-card card">
          <span class="card-kind">Pull request</span>
          <strong>{str(p.title) || str(p.url)}</strong>
          {p.state ? <span class="pill">{str(p.state)}</span> : null}
        </ExternalLink>
      );
    // Level 3 agent blocks, answered by their readers (agent-blocks.tsx).
    case 'feedback_buttons':
      return <Suspense fallback={null}><FeedbackBlock props={p} message={message} /></Suspense>;
    case 'approval_request':
      return <Suspense fallback={null}><ApprovalBlock props={p} message={message} /></Suspense>;
    default:
      return null;
  }
}

function BlockButton({ button, message }: { button: Button; message: Message }) {
  const client = useClient();
  const [note, setNote] = useState<string | null>(null);
  const style = STYLES.has(str(button.style)) ? str(button.style) : 'secondary';
  const label = str(button.label);
  if (button.url !== undefined) {
    const url = safeUrl(button.url, { allowMailto: false });
    return url ? (
      <a class={`btn btn-${style}`} href={url} target="_blank" rel="noopener noreferrer">
        {label}
      </a>
    ) : (
      <button class={`btn btn-${style}`} disabled title="This link is not allowed">
        {label}
      </button>
    );
  }
  // Button actions exist only when the server offers them (lib/features.ts); else they show disabled.
  const enabled = client.store.features.actions;
  const invoke = async () => {
    try {
      const res = await client.api.POST('/api/v1/interactions/actions' as never, { body: { message_id: message.id, action_id: str(button.actionId) } } as never);
      setNote((res as { response: Response }).response.ok ? 'Sent' : 'The action failed');
    } catch (err) {
      setNote(errorMessage(err));
    }
  };
  return (
    <button
      class={`btn btn-${style}`}
      disabled={!enabled}
      title={enabled ? `Action ${str(button.actionId)}` : 'Button actions are not available on this server yet (feature level 2)'}
      data-action-id={str(button.actionId)}
      onClick={enabled ? invoke : undefined}
    >
      {label}
      {note ? <span class="muted"> · {note}</span> : null}
    </button>
  );
}
