// A Slack message's text as an Axid message: mrkdwn through the one converter
// the compatible webhooks use (webhooks.compat.ts), with Slack's special
// forms turned into what they mean here (contract §13):
// - `<@U…>` (and `<@U…|name>`): a mention of the mapped user, `@name` in
//   content and a mention node in content_json (so mentioned_user_ids);
// - `<#C…|name>`: a link to the mapped channel (`<base>/c/<id>`, the web app's
//   address of a conversation);
// - `<!here>`, `<!channel>`, `<!everyone>`: the text `@here` / `@channel`
//   (§14's group mentions read it);
// - `<!subteam^S…|@team>`, `<!date^…|fallback>` and other `<!…>`: their label.
// The forms are swapped for placeholders before the mrkdwn pass, so a name
// with `_` or `*` in it never turns into emphasis, then put back.
import { inlineNodes, mrkdwnToMarkdown, type DocNode } from '../webhooks/webhooks.compat.js';

export interface MappedUser {
  id: string;
  name: string;
  label: string;
}
export interface MappedChannel {
  id: string;
  name: string;
}

export interface TextContext {
  user(slackId: string): MappedUser | undefined;
  channel(slackId: string): MappedChannel | undefined;
  /** PUBLIC_BASE_URL: channel links point into the web app. */
  baseUrl: string;
}

export interface ConvertedText {
  content: string;
  /** A doc of paragraphs; null when the text has nothing a doc adds (no mention, link or mark). */
  doc: { type: 'doc'; content: DocNode[] } | null;
  /** Slack user ids mentioned that the export does not define (kept as their text). */
  unknownUsers: string[];
}

type Token = { kind: 'user'; user: MappedUser } | { kind: 'channel'; channel: MappedChannel | null; label: string } | { kind: 'text'; text: string };

const SPECIAL = /<([@#!])([^<>|\s]+)(?:\|([^<>]*))?>/g;
const MARK = '\u0000';
const PLACEHOLDER = /\u0000(\d+)\u0000/g;

export function convertSlackText(raw: string, ctx: TextContext): ConvertedText {
  const tokens: Token[] = [];
  const unknownUsers: string[] = [];
  const swapped = raw.replaceAll(MARK, '').replace(SPECIAL, (whole, sigil: string, id: string, label?: string) => {
    let token: Token;
    if (sigil === '@') {
      const user = ctx.user(id);
      if (user) token = { kind: 'user', user };
      else {
        unknownUsers.push(id);
        token = { kind: 'text', text: `@${label || id}` };
      }
    } else if (sigil === '#') {
      const channel = ctx.channel(id) ?? null;
      token = { kind: 'channel', channel, label: channel?.name ?? label ?? id };
    } else {
      const word = id.split('^')[0]!;
      if (word === 'here') token = { kind: 'text', text: '@here' };
      else if (word === 'channel' || word === 'everyone') token = { kind: 'text', text: '@channel' };
      else token = { kind: 'text', text: label || `@${word}` };
    }
    void whole;
    tokens.push(token);
    return `${MARK}${tokens.length - 1}${MARK}`;
  });

  const markdownOf = (t: Token) =>
    t.kind === 'user' ? `@${t.user.name}` : t.kind === 'channel' ? (t.channel ? `[#${t.label}](${channelUrl(ctx, t.channel)})` : `#${t.label}`) : t.text;
  const content = mrkdwnToMarkdown(swapped).replace(PLACEHOLDER, (_m, n: string) => markdownOf(tokens[Number(n)]!));

  let rich = false;
  const paragraphs: DocNode[] = [];
  for (const line of swapped.split('\n')) {
    if (line.trim() === '') continue;
    const nodes: DocNode[] = [];
    for (const node of inlineNodes(line)) {
      if (node.marks?.length) rich = true;
      nodes.push(...expandPlaceholders(node, tokens, ctx, () => (rich = true)));
    }
    if (nodes.length) paragraphs.push({ type: 'paragraph', content: nodes });
  }
  return { content, doc: rich && paragraphs.length ? { type: 'doc', content: paragraphs } : null, unknownUsers };
}

const channelUrl = (ctx: TextContext, channel: MappedChannel) => `${ctx.baseUrl}/c/${channel.id}`;

/** A text node with placeholders as text, mention and link nodes (keeping its marks). */
function expandPlaceholders(node: DocNode, tokens: Token[], ctx: TextContext, sawRich: () => void): DocNode[] {
  const text = node.text ?? '';
  if (!text.includes(MARK)) return [node];
  const out: DocNode[] = [];
  const marks = node.marks ?? [];
  const push = (t: string, extra: DocNode['marks'] = []) => {
    if (t === '') return;
    const all = [...marks, ...extra];
    out.push({ type: 'text', text: t, ...(all.length ? { marks: all } : {}) });
  };
  let at = 0;
  for (const m of text.matchAll(PLACEHOLDER)) {
    push(text.slice(at, m.index));
    const token = tokens[Number(m[1])]!;
    if (token.kind === 'user') {
      sawRich();
      out.push({ type: 'mention', attrs: { id: token.user.id, label: token.user.label } });
    } else if (token.kind === 'channel' && token.channel) {
      const url = channelUrl(ctx, token.channel);
      // Block links are https only (shared/blocks); elsewhere the name stays text.
      if (url.startsWith('https://')) sawRich();
      push(`#${token.label}`, url.startsWith('https://') ? [{ type: 'link', attrs: { href: url } }] : []);
    } else push(token.kind === 'channel' ? `#${token.label}` : token.text);
    at = m.index + m[0].length;
  }
  push(text.slice(at));
  return out;
}

// ---- The way back: an Axid message's markdown as mrkdwn (export) ----------

export interface ExportContext {
  /** Slack id of a mentioned user, by Axid user name. */
  userIdByName: Map<string, string>;
  /** Slack id of a channel, by Axid channel id. */
  channelSlackId(axidId: string): string | undefined;
  baseUrl: string;
}

/**
 * The inverse of the import's conversion for what it produces: `**b**` →
 * `*b*`, `*i*` → `_i_`, `~~s~~` → `~s~`, `[l](u)` → `<u|l>`, a channel link
 * → `<#C…|name>`, `@name` of a mentioned user → `<@U…>`, `@here` /
 * `@channel` → `<!here>` / `<!channel>`. Code spans are left alone.
 */
export function markdownToMrkdwn(markdown: string, ctx: ExportContext): string {
  const parts = markdown.split(/(`[^`\n]+`)/);
  return parts
    .map((part, i) => {
      if (i % 2 === 1) return part;
      let s = part;
      const links: string[] = [];
      s = s.replace(/\[([^\]\n]*)\]\(([^)\s]+)\)/g, (_m, label: string, url: string) => {
        const channel = new RegExp(`^${escapeRegExp(ctx.baseUrl)}/c/([0-9a-f-]{36})$`).exec(url);
        const slackId = channel ? ctx.channelSlackId(channel[1]!) : undefined;
        links.push(slackId && label.startsWith('#') ? `<#${slackId}|${label.slice(1)}>` : `<${url}|${label}>`);
        return `${MARK}${links.length - 1}${MARK}`;
      });
      s = s
        .replace(/\*\*(?=\S)([^*\n]*?\S)\*\*/g, `${MARK}b$1${MARK}b`)
        .replace(/(?<![\w*])\*(?=\S)([^*\n]*?\S)\*(?![\w*])/g, '_$1_')
        .replace(new RegExp(`${MARK}b`, 'g'), '*')
        .replace(/~~(?=\S)([^~\n]*?\S)~~/g, '~$1~')
        .replace(/(^|[^\w@])@(here|channel)\b/g, '$1<!$2>')
        .replace(/(^|[^\w])@([\p{L}\p{N}._-]+)/gu, (m, before: string, name: string) => {
          const id = ctx.userIdByName.get(name);
          return id ? `${before}<@${id}>` : m;
        });
      return s.replace(PLACEHOLDER, (_m, n: string) => links[Number(n)]!);
    })
    .join('');
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
