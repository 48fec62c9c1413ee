// Mentions written in a message's `content` (level 3, contract §14;
// docs/team-chat.md): `@name` (an active user), `@<group handle>` (the
// group's members who can read the conversation), `@channel` (every member)
// and `@here` (the members with an open stream, as presence has them:
// services/gateway/presence.ts). A Slack-compatible hook's `<!here>` and
// `<!channel>` reach here as `@here` and `@channel` (webhooks.compat.ts); its
// `<@U…>` names no one of ours and is not a mention. Where content is code (a code span, an indented or fenced
// block) is decided by the CommonMark parser that the sanitizer uses
// (markdown-it, messages.sanitize.ts), so what renders as code never mentions.
// A message without `@` costs a substring search and nothing else: no parse,
// no query.
import MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';
import type { Db } from '../../../shared/db/knex.js';
import { serviceUnavailable } from '../../../shared/errors.js';
import { answering, onlineUsersKey } from '../../../shared/redis.js';
import type { Runtime } from '../../../shared/runtime.js';
import { CHANNEL, HERE } from './user-groups.schemas.js';


/** The most distinct names one message may mention by text (the rest are left as text). */
const MAX_NAMES = 50;

export interface TextMentions {
  /** `@word`s in text, in order of first appearance, `here` and `channel` included. */
  names: string[];
}

const parser = new MarkdownIt('commonmark', { html: true });

/**
 * `@` then a name: letters, digits, `.`, `_`, `-` (a trailing `.` ends the
 * sentence, not the name). Not after a word character (an email address),
 * `<` (Slack's `<@U123>`, which names no one here) or another `@`.
 */
const AT_NAME = /(?<![\p{L}\p{N}_.<@/-])@([\p{L}\p{N}_][\p{L}\p{N}._-]{0,79})/gu;
/** The names `content` mentions in text outside code, in order; null when it mentions none. */
export function textMentions(content: string): TextMentions | null {
  // The hot path's whole cost for most messages.
  if (!content.includes('@')) return null;
  const names = new Set<string>();
  const add = (name: string) => {
    if (names.size < MAX_NAMES) names.add(name);
  };
  const visit = (tokens: Token[]) => {
    for (const token of tokens) {
      if (token.type === 'text') {
        for (const match of token.content.matchAll(AT_NAME)) add(match[1]!.replace(/\.+$/, ''));
      }
      // code_inline, code_block and fence are code: never visited for mentions.
      if (token.children) visit(token.children);
    }
  };
  visit(parser.parse(content, {}));
  return names.size > 0 ? { names: [...names] } : null;
}

export interface ResolvedMentions {
  userIds: string[];
  groupIds: string[];
}

interface MentionRow {
  kind: 'user' | 'group' | 'reached' | 'member';
  id: string;
  name: string | null;
}

/**
 * Who the names reach, in one query: users named so, groups with the handle
 * (their members who can read the conversation: anyone of the workspace for
 * a public channel, its members otherwise), and the conversation's members
 * for `@channel` and `@here`.
 */
const RESOLVE_SQL = `
  WITH c AS (SELECT id, kind, is_private FROM channels WHERE id = ?::uuid),
       g AS (SELECT id, handle FROM user_groups WHERE workspace_id = ?::uuid AND handle = ANY (?::text[]))
  SELECT 'user' AS kind, u.id::text AS id, u.name FROM users u
   WHERE u.workspace_id = ?::uuid AND u.deactivated_at IS NULL AND u.name = ANY (?::text[])
  UNION ALL
  SELECT 'group', g.id::text, g.handle FROM g
  UNION ALL
  SELECT 'reached', gm.user_id::text, NULL FROM g JOIN user_group_members gm ON gm.group_id = g.id
    JOIN users u ON u.id = gm.user_id AND u.deactivated_at IS NULL, c
   WHERE (c.kind = 'channel' AND NOT c.is_private)
      OR EXISTS (SELECT 1 FROM channel_members cm WHERE cm.channel_id = c.id AND cm.user_id = gm.user_id)
  UNION ALL
  SELECT 'member', cm.user_id::text, NULL FROM channel_members cm JOIN users u ON u.id = cm.user_id AND u.deactivated_at IS NULL
   WHERE ?::boolean AND cm.channel_id = ?::uuid`;

/**
 * The users and groups the names of a message in `channelId` mention.
 * `@here` asks presence (Redis) who of the members has an open stream now.
 */
export async function resolveMentions(rt: Runtime, db: Db, o: { workspaceId: string; channelId: string; names: string[] }): Promise<ResolvedMentions> {
  const here = o.names.includes(HERE);
  // Without Redis no one knows who is online: 503 at once, not a wait in ioredis's offline queue (a hung one: its command timeout).
  if (here && !answering(rt.redis)) throw serviceUnavailable();
  const everyone = o.names.includes(CHANNEL);
  const others = o.names.filter((n) => n !== HERE && n !== CHANNEL);
  const handles = others.map((n) => n.toLowerCase());
  const { rows } = await db.raw<{ rows: MentionRow[] }>(RESOLVE_SQL, [o.channelId, o.workspaceId, handles, o.workspaceId, others, here || everyone, o.channelId]);
  const online = here ? new Set(await rt.redis.smembers(onlineUsersKey(rt.config.redisKeyPrefix, o.workspaceId))) : null;
  const userIds = new Set<string>();
  const groupByHandle = new Map<string, string>();
  for (const row of rows) {
    if (row.kind === 'user' || row.kind === 'reached') userIds.add(row.id);
    else if (row.kind === 'group') groupByHandle.set(row.name!, row.id);
    else if (everyone || online!.has(row.id)) userIds.add(row.id);
  }
  // In the order they were written.
  const groupIds: string[] = [];
  for (const name of o.names) {
    const id = name === HERE || name === CHANNEL ? (name === HERE ? HERE : CHANNEL) : groupByHandle.get(name.toLowerCase());
    if (id !== undefined && !groupIds.includes(id)) groupIds.push(id);
  }
  return { userIds: [...userIds], groupIds };
}
