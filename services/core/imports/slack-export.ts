// Moving out (contract §13): a workspace, or some of its channels, written as
// a Slack export ZIP (users.json, channels.json, groups.json, mpims.json,
// dms.json, a folder per conversation with a JSON array per day, and the
// files under files/<file id>/<name>), streamed with yazl: each conversation
// is read in keyset pages and each day written once it is complete, the
// files are read from storage when the ZIP reaches them. importSlackExport
// reads the same ZIP back (files included), so Axid → ZIP → Axid keeps the
// counts and texts.
import type { ImportCounts } from './slack-import.js';
import type { Readable } from 'node:stream';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Knex } from '../../../shared/db/knex.js';
import { invalid } from '../../../shared/errors.js';
import { recordAudit } from '../audit/audit.store.js';
import { markdownToMrkdwn } from './slack-text.js';
import * as store from './slack-import.store.js';
import { ZipWriter } from './zip-writer.js';

export interface ExportDeps {
  db: Knex;
  s3: S3Client;
  bucket: string;
  baseUrl: string;
}

export interface ExportOptions {
  workspaceId: string;
  /** Names of channels to export (public or private); all conversations when absent. */
  channels?: string[] | null;
  onProgress?: (p: { phase: 'messages' | 'done'; done: number; total: number }) => void;
}

/** What an export holds: the same counts as an import's report, so a round trip compares them as they are. */
export type ExportCounts = ImportCounts;

interface UserRow {
  id: string;
  name: string;
  display_name: string | null;
  email: string | null;
  is_agent: boolean;
  role: string;
  deactivated_at: Date | null;
}

interface ChannelRow {
  id: string;
  kind: 'channel' | 'dm' | 'group_dm';
  name: string | null;
  description: string;
  is_private: boolean;
  is_default: boolean;
  created_by: string | null;
  created_at: Date;
  archived_at: Date | null;
}

interface MessageRow {
  id: string;
  seq: string;
  author_id: string | null;
  thread_id: string | null;
  content: string;
  metadata: { type: string; data: Record<string, unknown> } | null;
  display: { username?: string; icon_emoji?: string } | null;
  created_at: Date;
  edited_at: Date | null;
  pinned_at: Date | null;
  has_replies: boolean;
  has_reactions: boolean;
}

const PAGE = 1000;

/** A Slack-looking id for an Axid id that did not come from Slack. */
const slackIdFor = (prefix: string, uuid: string) => `${prefix}${uuid.replace(/-/g, '').toUpperCase()}`;
const unix = (d: Date) => Math.floor(d.getTime() / 1000);
const dayOf = (d: Date) => d.toISOString().slice(0, 10);

export async function exportSlack(deps: ExportDeps, outPath: string, o: ExportOptions): Promise<ExportCounts> {
  const { db } = deps;
  const ws = o.workspaceId;
  const counts: ExportCounts = { users: 0, channels: 0, dms: 0, messages: 0, replies: 0, reactions: 0, pins: 0, files: 0 };

  const userSlack = new Map([...(await store.slackIdsOf(db, ws, 'bot')), ...(await store.slackIdsOf(db, ws, 'user'))]);
  const convSlack = await store.slackIdsOf(db, ws, 'conversation');
  const fileSlack = await store.slackIdsOf(db, ws, 'file');
  const users: UserRow[] = await db('users').where({ workspace_id: ws }).orderBy('seq').select('id', 'name', 'display_name', 'email', 'is_agent', 'role', 'deactivated_at');
  const uid = (id: string | null) => (id ? (userSlack.get(id) ?? slackIdFor('U', id)) : undefined);
  const nameBySlackId = new Map(users.map((u) => [uid(u.id)!, u.name]));

  let channels: ChannelRow[] = await db('channels')
    .where({ workspace_id: ws })
    .orderBy('seq')
    .select('id', 'kind', 'name', 'description', 'is_private', 'is_default', 'created_by', 'created_at', 'archived_at');
  if (o.channels) {
    const wanted = new Set(o.channels);
    channels = channels.filter((c) => c.kind === 'channel' && wanted.has(c.name ?? ''));
    const missing = [...wanted].filter((n) => !channels.some((c) => c.name === n));
    if (missing.length) throw invalid(`--channels: no channel named ${missing.map((n) => `"${n}"`).join(', ')}`);
  }
  const cid = (c: ChannelRow) => convSlack.get(c.id) ?? slackIdFor(c.kind === 'dm' ? 'D' : c.kind === 'group_dm' || c.is_private ? 'G' : 'C', c.id);
  const channelSlackId = new Map(channels.map((c) => [c.id, cid(c)]));

  const zip = new ZipWriter(outPath);
  const addJson = (name: string, value: unknown) => zip.addJson(name, value, 4);

  const membersOf = new Map<string, string[]>();
  for (let i = 0; i < channels.length; i += 500) {
    const ids = channels.slice(i, i + 500).map((c) => c.id);
    const rows: { channel_id: string; user_id: string }[] = await db('channel_members').whereIn('channel_id', ids).orderBy('seq').select('channel_id', 'user_id');
    for (const r of rows) membersOf.set(r.channel_id, [...(membersOf.get(r.channel_id) ?? []), uid(r.user_id)!]);
  }

  await addJson(
    'users.json',
    users.map((u) => ({
      id: uid(u.id),
      name: u.name,
      real_name: u.display_name ?? u.name,
      deleted: u.deactivated_at !== null,
      is_bot: u.is_agent,
      is_admin: u.role !== 'member',
      is_owner: u.role === 'owner',
      profile: { display_name: u.display_name ?? '', real_name: u.display_name ?? u.name, ...(u.email ? { email: u.email } : {}) },
    })),
  );
  counts.users = users.length;

  // Folders: channel names (unique among public ones; private ones may repeat: a suffix then), DM ids.
  const folders = new Map<string, string>();
  const usedFolders = new Set<string>();
  for (const c of channels) {
    let folder: string;
    if (c.kind === 'dm') folder = cid(c);
    else {
      const base = c.kind === 'group_dm' ? `mpdm-${(membersOf.get(c.id) ?? []).map((m) => nameOfSlack(m)).join('--')}-1` : (c.name ?? cid(c)).replace(/[\\/]/g, '_');
      folder = base;
      for (let n = 2; usedFolders.has(folder); n++) folder = `${base}-${n}`;
    }
    usedFolders.add(folder);
    folders.set(c.id, folder);
  }
  function nameOfSlack(slackUserId: string) {
    return nameBySlackId.get(slackUserId) ?? slackUserId;
  }
  const listing = (c: ChannelRow) => ({
    id: cid(c),
    name: folders.get(c.id),
    created: unix(c.created_at),
    creator: uid(c.created_by) ?? '',
    is_archived: c.archived_at !== null,
    is_general: c.is_default,
    members: membersOf.get(c.id) ?? [],
    purpose: { value: c.description },
    topic: { value: '' },
  });
  await addJson('channels.json', channels.filter((c) => c.kind === 'channel' && !c.is_private).map(listing));
  await addJson('groups.json', channels.filter((c) => c.kind === 'channel' && c.is_private).map(listing));
  await addJson('mpims.json', channels.filter((c) => c.kind === 'group_dm').map(listing));
  await addJson('dms.json', channels.filter((c) => c.kind === 'dm').map((c) => ({ id: cid(c), created: unix(c.created_at), members: membersOf.get(c.id) ?? [] })));
  for (const c of channels) {
    if (c.kind === 'channel') counts.channels++;
    else counts.dms++;
  }

  const userIdByName = new Map(users.map((u) => [u.name, uid(u.id)!]));
  const textContext = { userIdByName, channelSlackId: (id: string) => channelSlackId.get(id), baseUrl: deps.baseUrl };
  const filesAdded = new Set<string>();
  const filesToAdd: { name: string; key: string }[] = [];

  let done = 0;
  for (const c of channels) {
    await exportConversation(c);
    o.onProgress?.({ phase: 'messages', done: ++done, total: channels.length });
  }
  o.onProgress?.({ phase: 'done', done, total: channels.length });
  await zip.end();
  // Data left the workspace: audited once the file is whole, without a caller (a command writes it).
  await recordAudit(db, { workspaceId: ws, action: 'export.created', actor: null, target: null, details: { format: 'slack', channels: o.channels ?? 'all', counts } });
  return counts;

  async function exportConversation(c: ChannelRow) {
    const folder = folders.get(c.id)!;
    const slackChannel = cid(c);
    const days = new Map<string, Record<string, unknown>[]>();
    const usedTs = new Set<string>();
    const tsOf = new Map<string, string>();
    let flushedThrough = '';
    const flush = async (before: string | null) => {
      await addFiles();
      for (const day of [...days.keys()].sort()) {
        if (before !== null && day >= before) break;
        const messages = days.get(day)!.sort((a, b) => Number(a.ts) - Number(b.ts));
        days.delete(day);
        await addJson(`${folder}/${day}.json`, messages);
        flushedThrough = day;
      }
    };
    const place = (m: MessageRow, entry: Record<string, unknown>) => {
      // A day already written (out of order by seq): the next one open takes it.
      let day = dayOf(m.created_at);
      if (day <= flushedThrough) day = [...days.keys()].sort().find((d) => d > flushedThrough) ?? `${flushedThrough}`;
      days.set(day, [...(days.get(day) ?? []), entry]);
    };
    const uniqueTs = (m: MessageRow, original: string | undefined) => {
      let ts = original;
      if (!ts || usedTs.has(ts)) {
        const ms = m.created_at.getTime();
        let micro = (ms % 1000) * 1000;
        do ts = `${Math.floor(ms / 1000)}.${String(micro++).padStart(6, '0')}`;
        while (usedTs.has(ts));
      }
      usedTs.add(ts);
      tsOf.set(m.id, ts);
      return ts;
    };

    let after = '0';
    for (;;) {
      const roots: MessageRow[] = await db('messages')
        .where({ channel_id: c.id })
        .whereNull('thread_id')
        .where('seq', '>', after)
        .orderBy('seq')
        .limit(PAGE)
        .select(MESSAGE_COLUMNS);
      if (roots.length === 0) break;
      after = roots[roots.length - 1]!.seq;
      const withReplies = roots.filter((m) => m.has_replies).map((m) => m.id);
      const replies: MessageRow[] = withReplies.length
        ? await db('messages').whereIn('thread_id', withReplies).orderBy('seq').select(MESSAGE_COLUMNS)
        : [];
      const page = [...roots, ...replies];
      const original = await originalTs(page.map((m) => m.id));
      const reactions = await reactionsOf(page.filter((m) => m.has_reactions).map((m) => m.id));
      const repliesOf = new Map<string, MessageRow[]>();
      for (const r of replies) repliesOf.set(r.thread_id!, [...(repliesOf.get(r.thread_id!) ?? []), r]);

      for (const m of roots) {
        const ts = uniqueTs(m, original.get(m.id));
        const thread = repliesOf.get(m.id) ?? [];
        const entry = await messageEntry(m, ts, reactions.get(m.id), slackChannel);
        if (thread.length) {
          entry.thread_ts = ts;
          entry.reply_count = thread.length;
          entry.replies = thread.map((r) => ({ user: uid(r.author_id) ?? '', ts: uniqueTs(r, original.get(r.id)) }));
        }
        place(m, entry);
        for (const r of thread) {
          const reply = await messageEntry(r, tsOf.get(r.id)!, reactions.get(r.id), slackChannel);
          reply.thread_ts = ts;
          reply.parent_user_id = uid(m.author_id) ?? '';
          place(r, reply);
          counts.replies++;
        }
      }
      // Every day before this page's last is complete: its replies came with their roots.
      await flush(dayOf(roots[roots.length - 1]!.created_at));
    }
    await flush(null);
  }

  async function originalTs(ids: string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows: { axid_id: string; slack_key: string }[] = await db('slack_import_map').where({ workspace_id: ws, kind: 'message' }).whereIn('axid_id', ids).select('axid_id', 'slack_key');
    return new Map(rows.map((r) => [r.axid_id, r.slack_key]));
  }

  async function reactionsOf(ids: string[]) {
    const byMessage = new Map<string, { name: string; users: string[]; count: number }[]>();
    if (ids.length === 0) return byMessage;
    const rows: { message_id: string; emoji: string; users: string[] }[] = await db('reactions')
      .whereIn('message_id', ids)
      .groupBy('message_id', 'emoji')
      .select('message_id', 'emoji', db.raw('array_agg(user_id::text ORDER BY created_at, user_id) AS users'));
    for (const r of rows) {
      byMessage.set(r.message_id, [...(byMessage.get(r.message_id) ?? []), { name: r.emoji, users: r.users.map((u) => uid(u)!), count: r.users.length }]);
      counts.reactions += r.users.length;
    }
    return byMessage;
  }

  async function messageEntry(m: MessageRow, ts: string, reactions: { name: string; users: string[]; count: number }[] | undefined, slackChannel: string) {
    counts.messages++;
    const entry: Record<string, unknown> = { type: 'message', user: uid(m.author_id) ?? '', text: '', ts };
    if (!m.author_id) delete entry.user;
    const sharedFiles = await filesOf(m);
    // A message that only shared files says so in its content ("Shared a file: name"): Slack's text is empty then.
    const onlyShares = sharedFiles.length > 0 && m.content.split('\n\n').every((line) => /^Shared a file: /.test(line));
    entry.text = onlyShares ? '' : markdownToMrkdwn(m.content, textContext);
    if (m.display?.username) {
      entry.subtype = 'bot_message';
      entry.username = m.display.username;
      if (m.display.icon_emoji) entry.icons = { emoji: m.display.icon_emoji };
    }
    if (sharedFiles.length) {
      entry.subtype ??= 'file_share';
      entry.files = sharedFiles;
    }
    if (m.edited_at) entry.edited = { user: uid(m.author_id) ?? '', ts: `${Math.floor(m.edited_at.getTime() / 1000)}.000000` };
    if (m.pinned_at) {
      entry.pinned_to = [slackChannel];
      counts.pins++;
    }
    if (reactions?.length) entry.reactions = reactions;
    return entry;
  }

  /** Files met in messages, added to the ZIP between day files (their bytes read when the ZIP reaches them). */
  async function addFiles() {
    for (const f of filesToAdd.splice(0)) {
      await zip.add(f.name, async () => (await deps.s3.send(new GetObjectCommand({ Bucket: deps.bucket, Key: f.key }))).Body as Readable);
    }
  }

  async function filesOf(m: MessageRow) {
    if (m.metadata?.type !== 'axid.file') return [];
    const data = m.metadata.data;
    const listed = Array.isArray(data.files) ? (data.files as { file_id?: unknown }[]) : [data];
    const ids = listed.map((f) => f.file_id).filter((x): x is string => typeof x === 'string');
    if (ids.length === 0) return [];
    const rows: { id: string; name: string; size: string; content_type: string; storage_key: string }[] = await db('files')
      .where({ workspace_id: ws })
      .whereIn('id', ids)
      .select('id', 'name', 'size', 'content_type', 'storage_key');
    return rows.map((f) => {
      const id = fileSlack.get(f.id) ?? slackIdFor('F', f.id);
      if (!filesAdded.has(id)) {
        filesAdded.add(id);
        counts.files++;
        filesToAdd.push({ name: `files/${id}/${f.name.replace(/[\\/]/g, '_')}`, key: f.storage_key });
      }
      return { id, name: f.name, title: f.name, mimetype: f.content_type, size: Number(f.size), mode: 'hosted', url_private_download: null };
    });
  }
}

const MESSAGE_COLUMNS = ['id', 'seq', 'author_id', 'thread_id', 'content', 'metadata', 'display', 'created_at', 'edited_at', 'pinned_at', 'has_replies', 'has_reactions'];

