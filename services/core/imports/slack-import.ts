// Moving in from Slack (contract §13, docs/migrating-from-slack.md): reads a
// Slack export ZIP and writes its people, conversations and history into a
// workspace. Two passes over the ZIP:
// 1. check: every metadata file and every day file is read and parsed, and
//    every message's author must be defined. A broken export fails here,
//    naming the file, before anything is written.
// 2. write: users, bots, conversations and members, then each
//    conversation's days in order, in batches of messages (one transaction
//    and a few statements each). What was imported is recorded in
//    slack_import_map in the same transactions, so a run cut short (or run
//    again, or run on a later export) carries on and adds only what is new.
// Imported messages publish no event (event_xid NULL); the import ends with
// one `import.finished` to the workspace's owners and admins.
import { randomUUID } from 'node:crypto';
import type { OutboundFetcher } from '../../../shared/http/outbound-fetch.js';
import type { PageCache } from '../messages/page-cache.js';
import type { S3Client } from '@aws-sdk/client-s3';
import { validateContentJson } from '../../../shared/blocks/index.js';
import { emailIdentity } from '../../../shared/identity.js';
import type { Knex } from '../../../shared/db/knex.js';
import { recordEvents, type EventSink } from '../../../shared/events.js';
import { recordJob } from '../../../shared/jobs.js';
import type { JobWakeups } from '../../../shared/job-wakeups.js';
import type { Logger } from '../../../shared/logger.js';
import * as memberships from '../channels/channels.store.js';
import { charCount } from '../channels/channels.schemas.js';
import { storageKey } from '../files/files.service.js';
import { cleanFileName, cleanMimeType } from '../files/files.upload.js';
import { sanitizeContent } from '../messages/messages.sanitize.js';
import { MAX_CONTENT, isEmoji } from '../messages/messages.schemas.js';
import { readAttachment, readDisplay, renderAttachment, type CompatAttachment } from '../webhooks/webhooks.compat.js';
import { SlackConversation, SlackMessage, SlackUser, arrayOf, tsToDate, type SlackFile } from './slack-export.schemas.js';
import { BadExport, SlackZip } from './slack-export.zip.js';
import { MissingFile, hasSource, openSlackFile, storeStream, type FileSources } from './slack-files.js';
import * as store from './slack-import.store.js';
import { recordAudit } from '../audit/audit.store.js';
import { convertSlackText, type MappedChannel, type MappedUser } from './slack-text.js';

export interface ImportCounts {
  users: number;
  channels: number;
  dms: number;
  messages: number;
  replies: number;
  reactions: number;
  pins: number;
  files: number;
}

export interface SkippedItem {
  /** What was skipped: a file in the export, a message (`folder/day.json ts`), a user. */
  item: string;
  reason: string;
}

export interface ImportReport {
  dry_run: boolean;
  /** What this run added (a second run of the same export: all zero). */
  counts: ImportCounts;
  /** What was already imported by an earlier run and left alone. */
  already_imported: { users: number; conversations: number; messages: number };
  /** Slack's system messages (joins, leaves, topic changes...), not imported, by subtype. */
  system_messages: Record<string, number>;
  skipped: SkippedItem[];
  /** Mapping choices worth knowing (restricted users, merged group DMs, broadcasts kept as replies...). */
  notes: string[];
}

export interface ImportProgress {
  phase: 'checking' | 'users' | 'conversations' | 'messages' | 'done';
  done: number;
  total: number;
}

export interface ImportOptions {
  workspaceId: string;
  dryRun?: boolean;
  filesFrom?: string | null;
  defaultEmailDomain?: string | null;
  /** Messages per transaction. */
  batchSize?: number;
  /** Called inside every write transaction with the counts so far (an API import keeps them on its row, exact across a crash). */
  saveProgress?: (trx: Knex.Transaction, counts: ImportCounts) => Promise<void>;
  onProgress?: (p: ImportProgress) => void;
}

/** What an import needs of the runtime (the CLI builds it without starting any role). */
export interface ImportDeps extends EventSink {
  db: Knex;
  s3: S3Client;
  bucket: string;
  log: Logger;
  jobs: JobWakeups;
  /** PUBLIC_BASE_URL: channel links point at the web app. */
  baseUrl: string;
  allowPrivate: boolean;
  /** The one outbound fetcher (downloads by URL). */
  outbound: OutboundFetcher;
  blockRules: { trackerHosts: string[]; codeHosts: string[] };
  /** The page cache, where the caller has one (the worker; `npm run import:slack` has none: pages it changed go within PAGE_CACHE_SECONDS). */
  pages?: Pick<PageCache, 'invalidate'>;
}

const DEFAULT_BATCH = 2000;
const CONVERSATIONS_PER_TRANSACTION = 200;
const PROGRESS_EVERY = 5000;

/** Slack subtypes that are events, not things people said: counted in the report, not imported. */
const SYSTEM_SUBTYPES = new Set([
  'channel_join', 'channel_leave', 'group_join', 'group_leave', 'channel_topic', 'channel_purpose', 'channel_name',
  'group_topic', 'group_purpose', 'group_name', 'channel_archive', 'channel_unarchive', 'group_archive', 'group_unarchive',
  'pinned_item', 'unpinned_item', 'bot_add', 'bot_remove', 'bot_enable', 'bot_disable', 'channel_convert_to_private',
  'channel_convert_to_public', 'reminder_add', 'app_conversation_join', 'channel_posting_permissions',
  'joiner_notification', 'joiner_notification_for_inviter', 'slackbot_response', 'sh_room_created', 'huddle_thread',
]);
/** Subtypes of changes to other messages, or of what is no longer there. */
const GONE_SUBTYPES = new Set(['message_changed', 'message_deleted', 'message_replied', 'tombstone']);

interface Conversation {
  slack: SlackConversation;
  kind: 'channel' | 'private' | 'group_dm' | 'dm';
  /** The export's folder (name for channels, groups and group DMs; id for DMs). */
  folder: string;
  source: string;
  days: string[];
}

interface UserInfo extends MappedUser {
  active: boolean;
}

class Importer {
  private readonly report: ImportReport = {
    dry_run: false,
    counts: { users: 0, channels: 0, dms: 0, messages: 0, replies: 0, reactions: 0, pins: 0, files: 0 },
    already_imported: { users: 0, conversations: 0, messages: 0 },
    system_messages: {},
    skipped: [],
    notes: [],
  };
  private users = new Map<string, SlackUser>();
  /** Slack user or bot key → the Axid user it became. */
  private readonly people = new Map<string, UserInfo>();
  private readonly bots = new Map<string, { name: string }>();
  private conversations: Conversation[] = [];
  private readonly channels = new Map<string, MappedChannel>();
  /** DMs and group DMs of this run by their people (two Slack group DMs of the same people are one here). */
  private readonly byMemberKey = new Map<string, string>();
  private readonly fileIds = new Map<string, { id: string; name: string; size: number; content_type: string }>();
  private totalMessages = 0;
  private processed = 0;
  private readonly dryRun: boolean;
  private readonly sources: FileSources;

  constructor(
    private readonly deps: ImportDeps,
    private readonly zip: SlackZip,
    private readonly o: ImportOptions,
  ) {
    this.dryRun = o.dryRun ?? false;
    this.report.dry_run = this.dryRun;
    this.sources = { zip, filesFrom: o.filesFrom ?? null, allowPrivate: deps.allowPrivate, outbound: deps.outbound };
  }

  private progress(phase: ImportProgress['phase'], done: number, total: number) {
    this.o.onProgress?.({ phase, done, total });
  }

  private skip(item: string, reason: string) {
    this.report.skipped.push({ item, reason });
  }

  // ---- pass 1: check -------------------------------------------------------

  async check() {
    const users = arrayOf('users.json', await this.zip.json('users.json'), SlackUser);
    this.users = new Map(users.map((u) => [u.id, u]));
    const lists: [string, Conversation['kind']][] = [
      ['channels.json', 'channel'],
      ['groups.json', 'private'],
      ['mpims.json', 'group_dm'],
      ['dms.json', 'dm'],
    ];
    if (!this.zip.has('channels.json')) throw new BadExport('channels.json: is not in the export (is this a Slack export ZIP?)');
    const byFolder = new Map<string, string[]>();
    for (const name of this.zip.entries.keys()) {
      const m = /^(.+)\/(\d{4}-\d{2}-\d{2})\.json$/.exec(name);
      if (!m) continue;
      const days = byFolder.get(m[1]!) ?? [];
      days.push(name);
      byFolder.set(m[1]!, days);
    }
    for (const [file, kind] of lists) {
      for (const c of arrayOf(file, await this.zip.jsonOr(file, []), SlackConversation)) {
        const folder = kind === 'dm' ? c.id : c.name ?? c.id;
        if (kind !== 'dm' && !c.name) throw new BadExport(`${file}: conversation ${c.id} has no name`);
        const days = (byFolder.get(folder) ?? []).sort();
        byFolder.delete(folder);
        this.conversations.push({ slack: c, kind, folder, source: file, days });
      }
    }
    for (const folder of byFolder.keys()) this.skip(`${folder}/`, 'a folder that no conversation in channels.json, groups.json, mpims.json or dms.json names');

    const allDays = this.conversations.reduce((n, c) => n + c.days.length, 0);
    let read = 0;
    for (const c of this.conversations) {
      for (const day of c.days) {
        const messages = arrayOf(day, await this.zip.json(day), SlackMessage);
        for (const m of messages) {
          this.totalMessages++;
          if (SYSTEM_SUBTYPES.has(m.subtype ?? '')) continue;
          if (m.user && !this.users.has(m.user) && !(m.subtype === 'bot_message' && m.bot_id)) {
            throw new BadExport(`${day}: the message of ts ${m.ts} is by user ${m.user}, whom users.json does not define`);
          }
          if (!m.user && (m.bot_id || m.subtype === 'bot_message')) {
            const key = m.bot_id ?? `name:${m.username ?? 'bot'}`;
            if (!this.bots.has(key)) this.bots.set(key, { name: m.bot_profile?.name ?? m.username ?? m.bot_id ?? 'bot' });
          }
        }
        this.progress('checking', ++read, allDays);
      }
    }
  }

  // ---- pass 2: write -------------------------------------------------------

  async write() {
    await this.writeUsers();
    await this.writeConversations();
    for (const c of this.conversations) await this.writeMessages(c);
    await this.flush();
    await this.writing;
    this.progress('messages', this.processed, this.totalMessages);
    this.progress('done', this.processed, this.totalMessages);
  }

  private async writeUsers() {
    const { db } = this.deps;
    const ws = this.o.workspaceId;
    const mapped = await store.loadMap(db, ws, 'user');
    const mappedBots = await store.loadMap(db, ws, 'bot');
    const existing = await store.activeUsers(db, ws);
    const byEmail = new Map(existing.filter((u) => u.email_key).map((u) => [u.email_key!, u]));
    const takenNames = new Set(existing.map((u) => u.name));
    const known = new Map<string, { name: string; active: boolean }>(
      (await db('users').where({ workspace_id: ws }).whereIn('id', [...mapped.values(), ...mappedBots.values()]).select('id', 'name', 'deactivated_at')).map(
        (u: { id: string; name: string; deactivated_at: Date | null }) => [u.id, { name: u.name, active: u.deactivated_at === null }],
      ),
    );
    const fresh: store.NewUser[] = [];
    const freshKeys: { key: string; id: string }[] = [];
    const freshBotKeys: { key: string; id: string }[] = [];
    const uniqueName = (wanted: string) => {
      const base = wanted.slice(0, 70) || 'user';
      let name = base;
      for (let n = 2; takenNames.has(name); n++) name = `${base}-${n}`;
      takenNames.add(name);
      return name;
    };

    let done = 0;
    for (const u of this.users.values()) {
      this.progress('users', ++done, this.users.size);
      const label = (u.profile?.display_name || u.profile?.real_name || u.real_name || u.name || u.id).slice(0, 80);
      const already = mapped.get(u.id);
      if (already) {
        const k = known.get(already);
        this.people.set(u.id, { id: already, name: k?.name ?? u.name ?? u.id, label, active: k?.active ?? false });
        this.report.already_imported.users++;
        continue;
      }
      const isBot = Boolean(u.is_bot || u.is_app_user || u.id === 'USLACKBOT');
      const deleted = Boolean(u.deleted);
      let email = u.profile?.email?.trim() || null;
      if (!email && this.o.defaultEmailDomain && !isBot) email = `${(u.name ?? u.id).toLowerCase()}@${this.o.defaultEmailDomain}`;
      // One identity for an address, as everywhere (shared/identity.ts): matched and stored by it.
      const emailKey = email ? (emailIdentity(email) ?? null) : null;
      const same = emailKey && !deleted ? byEmail.get(emailKey) : undefined;
      if (same) {
        // The same person already here (the owner who exports their own Slack): one account.
        this.people.set(u.id, { id: same.id, name: same.name, label, active: true });
        freshKeys.push({ key: u.id, id: same.id });
        this.report.notes.push(`user ${u.name ?? u.id} (${u.id}) is the existing user ${same.name} (same email)`);
        continue;
      }
      const id = randomUUID();
      const name = deleted ? (u.name ?? u.id).slice(0, 80) : uniqueName(u.name ?? u.id);
      if (!deleted && name !== (u.name ?? u.id)) this.report.notes.push(`user ${u.name ?? u.id} (${u.id}) is named ${name}: the name was taken`);
      if (emailKey && !deleted) byEmail.set(emailKey, { id, name, email_key: emailKey });
      fresh.push({ id, name, display_name: label === name ? null : label, email: deleted ? null : email, email_key: deleted ? null : emailKey, is_agent: isBot, deactivated: deleted });
      freshKeys.push({ key: u.id, id });
      this.people.set(u.id, { id, name, label, active: !deleted });
      this.report.counts.users++;
      if (u.is_restricted || u.is_ultra_restricted) this.group('guests', 'Guests in Slack, members here in the channels the export lists', name);
      if (u.is_admin || u.is_owner) this.group('admins', "Slack owners and admins, members here (give roles in Axid's settings)", name);
      if (deleted) this.group('deleted', 'Deactivated in Slack, removed members here whose messages keep their author', name);
      if (!email && !isBot && !deleted) this.group('no-email', 'No email in the export: they sign in once an owner sets one (or import with --default-email-domain)', name);
    }
    for (const [key, bot] of this.bots) {
      const already = mappedBots.get(key);
      if (already) {
        const k = known.get(already);
        this.people.set(`bot:${key}`, { id: already, name: k?.name ?? bot.name, label: bot.name, active: k?.active ?? true });
        continue;
      }
      const id = randomUUID();
      const name = uniqueName(bot.name);
      fresh.push({ id, name, display_name: null, email: null, email_key: null, is_agent: true, deactivated: false });
      freshBotKeys.push({ key, id });
      this.people.set(`bot:${key}`, { id, name, label: bot.name, active: true });
      this.report.counts.users++;
      this.report.notes.push(`integration ${bot.name} (${key}) is the agent ${name}, without a key`);
    }
    if (this.dryRun) return;
    for (let i = 0; i < fresh.length; i += 1000) {
      const users = fresh.slice(i, i + 1000);
      const ids = new Set(users.map((u) => u.id));
      await this.transaction(async (trx) => {
        await store.insertUsers(trx, ws, users);
        await store.insertMappings(trx, ws, 'user', '', freshKeys.filter((k) => ids.has(k.id)));
        await store.insertMappings(trx, ws, 'bot', '', freshBotKeys.filter((k) => ids.has(k.id)));
      });
    }
    // Matches with existing users (by email) have no row of their own to write.
    const existingMatches = freshKeys.filter((k) => !fresh.some((u) => u.id === k.id));
    if (existingMatches.length) await this.transaction((trx) => store.insertMappings(trx, ws, 'user', '', existingMatches));
  }

  /** Every write: one transaction, which also records the progress so far where the caller keeps it (an API import's row). */
  private transaction(write: (trx: Knex.Transaction) => Promise<unknown>) {
    // The counts as of the call: a batch's flush is called when the batch is cut, before the next one is converted.
    const counts = { ...this.report.counts };
    return this.deps.db.transaction(async (trx) => {
      await write(trx);
      await this.o.saveProgress?.(trx, counts);
    });
  }

  private person(slackId: string | undefined): UserInfo | undefined {
    return slackId ? this.people.get(slackId) : undefined;
  }

  private async writeConversations() {
    const { db } = this.deps;
    const ws = this.o.workspaceId;
    const mapped = await store.loadMap(db, ws, 'conversation');
    const publicByName = await store.publicChannelsByName(db, ws);
    // Each conversation is written with its members and its mapping in one transaction (a few hundred together).
    let pending: { fresh: store.NewConversation | null; id: string; members: string[]; key: string }[] = [];
    const writePending = async () => {
      const group = pending;
      pending = [];
      if (this.dryRun || group.length === 0) return;
      await this.transaction(async (trx) => {
        for (const g of group) {
          if (g.fresh) await store.insertConversation(trx, ws, g.fresh);
          await memberships.insertMembersIfMissing(trx, g.id, ws, g.members);
        }
        await store.insertMappings(trx, ws, 'conversation', '', group.map((g) => ({ key: g.key, id: g.id })));
      });
    };
    let done = 0;
    for (const c of this.conversations) {
      this.progress('conversations', ++done, this.conversations.length);
      const s = c.slack;
      const members = [...new Set((s.members ?? []).map((m) => this.person(m)).filter((p): p is UserInfo => p !== undefined && p.active).map((p) => p.id))];
      for (const m of s.members ?? []) if (!this.people.has(m)) this.skip(`${c.source} ${c.folder}: member ${m}`, 'a user users.json does not define');
      let id = mapped.get(s.id);
      // Written with its members and its mapping in one transaction: a run cut short never leaves a conversation the next run does not know.
      let fresh: store.NewConversation | null = null;
      if (id) this.report.already_imported.conversations++;
      else if (c.kind === 'channel' || c.kind === 'private') {
        const existing = c.kind === 'channel' ? publicByName.get(c.folder) : undefined;
        if (existing) {
          id = existing;
          this.report.notes.push(`channel #${c.folder} went into the existing channel of that name`);
        } else {
          id = randomUUID();
          const name = [...c.folder].slice(0, 80).join('');
          const description = [...(s.purpose?.value || s.topic?.value || '')].slice(0, 1000).join('');
          {
            fresh = {
              id,
              kind: 'channel',
              name,
              description,
              is_private: c.kind === 'private',
              is_default: Boolean(s.is_general) && c.kind === 'channel',
              member_key: null,
              created_by: this.person(s.creator)?.id ?? null,
              created_at: s.created ? new Date(s.created * 1000) : new Date(),
              archived_at: s.is_archived ? new Date() : null,
            };
          }
          if (c.kind === 'channel') publicByName.set(c.folder, id);
          this.report.counts.channels++;
        }
      } else {
        const everyone = [...new Set((s.members ?? []).map((m) => this.person(m)?.id).filter((x): x is string => x !== undefined))].sort();
        if (everyone.length === 0) {
          this.skip(`${c.source} ${s.id}`, 'a conversation none of whose members users.json defines');
          c.days = [];
          continue;
        }
        const memberKey = everyone.join(',');
        id = this.byMemberKey.get(memberKey) ?? (await store.conversationByKey(db, ws, memberKey));
        if (id) this.report.notes.push(`${c.kind === 'dm' ? 'DM' : 'group DM'} ${c.folder} went into the existing conversation of the same people`);
        else {
          id = randomUUID();
          {
            fresh = {
              id,
              kind: everyone.length <= 2 && c.kind === 'dm' ? 'dm' : 'group_dm',
              name: null,
              description: '',
              is_private: true,
              is_default: false,
              member_key: memberKey,
              created_by: everyone[0] ?? null,
              created_at: s.created ? new Date(s.created * 1000) : new Date(),
              archived_at: null,
            };
          }
          this.report.counts.dms++;
        }
        this.byMemberKey.set(memberKey, id);
      }
      this.channels.set(s.id, { id, name: c.kind === 'channel' || c.kind === 'private' ? c.folder : c.folder });
      pending.push({ fresh, id, members, key: s.id });
      if (pending.length >= CONVERSATIONS_PER_TRANSACTION) await writePending();
    }
    await writePending();
  }

  private async writeMessages(c: Conversation) {
    const { db } = this.deps;
    const ws = this.o.workspaceId;
    const channel = this.channels.get(c.slack.id);
    if (!channel) return;
    // ts → message id of what earlier runs imported of this conversation.
    const ids = this.dryRun ? new Map<string, string>() : await store.loadMap(db, ws, 'message', c.slack.id);
    // Thread roots by ts: what a reply needs. Only they are kept (Slack marks a root with thread_ts = ts),
    // so memory follows the threads of one conversation, not its messages.
    const roots = new Map<string, string>();
    for (const day of c.days) {
      const messages = arrayOf(day, await this.zip.json(day), SlackMessage).sort((a, b) => compareTs(a.ts, b.ts));
      for (const m of messages) {
        this.processed++;
        if (this.processed % PROGRESS_EVERY === 0) this.progress('messages', this.processed, this.totalMessages);
        const existing = ids.get(m.ts);
        if (existing) {
          if (m.thread_ts === m.ts) roots.set(m.ts, existing);
          this.report.already_imported.messages++;
          continue;
        }
        const item = `${day} ${m.ts}`;
        const subtype = m.subtype ?? '';
        if (SYSTEM_SUBTYPES.has(subtype)) {
          this.report.system_messages[subtype] = (this.report.system_messages[subtype] ?? 0) + 1;
          continue;
        }
        if (GONE_SUBTYPES.has(subtype) || m.hidden) {
          this.skip(item, subtype ? `a ${subtype} record, not a message` : 'hidden in the export');
          continue;
        }
        const row = await this.messageRow(c, channel, m, item);
        if (!row) continue;
        // Thread: a reply names its root's ts; the root is earlier (this day or before).
        const isReply = m.thread_ts !== undefined && m.thread_ts !== m.ts;
        if (isReply) {
          const root = roots.get(m.thread_ts!);
          if (root) {
            row.thread_id = root;
            const t = this.batch.threads.get(root) ?? { channelId: channel.id, count: 0, last: row.created_at };
            t.count++;
            if (row.created_at > t.last) t.last = row.created_at;
            this.batch.threads.set(root, t);
            this.report.counts.replies++;
            if (subtype === 'thread_broadcast') this.noteOnce('broadcast', 'replies also sent to the channel in Slack (thread_broadcast) are replies in their thread here');
          } else {
            this.skip(item, `its thread's first message (ts ${m.thread_ts}) is not in the export: imported as a top-level message`);
          }
        }
        if (!row.thread_id && m.thread_ts === m.ts) roots.set(m.ts, row.id);
        this.batch.messages.push(row);
        this.batch.keys.push({ scope: c.slack.id, key: m.ts, id: row.id });
        this.report.counts.messages++;
        if (row.pinned_at) this.report.counts.pins++;
        this.addReactions(this.batch, row, m, item);
        this.batch.readMarks.add(channel.id);
        if (this.batch.messages.length >= (this.o.batchSize ?? DEFAULT_BATCH)) await this.flush();
      }
    }
  }

  /** What is waiting to be written: messages of one or more conversations, in order. */
  private batch = emptyBatch();
  /** The batch being written: one at a time, in order (seq follows it), while the next is read and converted. */
  private writing: Promise<void> = Promise.resolve();

  private async flush() {
    const b = this.batch;
    this.batch = emptyBatch();
    await this.writing;
    if (this.dryRun || (b.messages.length === 0 && b.keys.length === 0)) return;
    const ws = this.o.workspaceId;
    this.writing = this.transaction(async (trx) => {
      await store.writeMessages(trx, ws, b);
      // Imported history starts read (the conversations this batch wrote to).
      await memberships.markAllRead(trx, [...b.readMarks]);
    }).then(() => this.deps.pages?.invalidate(b.messages.map((m) => m.channel_id)));
    // Not awaited here: the next batch is read and converted meanwhile; its flush waits for this one.
    this.writing.catch(() => undefined);
  }

  /** Notes that name many people: one line per kind. */
  private readonly grouped = new Map<string, { text: string; names: string[] }>();
  private group(kind: string, text: string, name: string) {
    const g = this.grouped.get(kind) ?? { text, names: [] };
    g.names.push(name);
    this.grouped.set(kind, g);
  }

  private noted = new Set<string>();
  private noteOnce(key: string, note: string) {
    if (this.noted.has(key)) return;
    this.noted.add(key);
    this.report.notes.push(note);
  }

  private addReactions(batch: store.Batch, row: store.NewMessage, m: SlackMessage, item: string) {
    for (const r of m.reactions ?? []) {
      // Skin tones (`thumbsup::skin-tone-2`) have no place in a reaction name here: the base emoji.
      const emoji = r.name.split('::')[0]!;
      if (!isEmoji(emoji)) {
        this.skip(`${item} reaction :${r.name}:`, 'not a reaction name Axid accepts (a-z, 0-9, _ + -, at most 64)');
        continue;
      }
      for (const u of new Set(r.users ?? [])) {
        const person = this.person(u);
        if (!person) {
          this.skip(`${item} reaction :${r.name}: by ${u}`, 'a user users.json does not define');
          continue;
        }
        batch.reactions.push({ message_id: row.id, user_id: person.id, emoji, created_at: row.created_at });
        row.has_reactions = true;
        this.report.counts.reactions++;
      }
    }
  }

  private async messageRow(c: Conversation, channel: MappedChannel, m: SlackMessage, item: string): Promise<store.NewMessage | null> {
    const created = tsToDate(m.ts);
    let author: UserInfo | undefined;
    let display: ReturnType<typeof readDisplay> = null;
    if (m.user) author = this.person(m.user);
    if (!author && (m.bot_id || m.subtype === 'bot_message')) {
      author = this.people.get(`bot:${m.bot_id ?? `name:${m.username ?? 'bot'}`}`);
    }
    if (m.subtype === 'bot_message' && (m.username || m.icons?.emoji)) {
      display = readDisplay({ username: m.username, icon_emoji: m.icons?.emoji });
    }
    const converted = convertSlackText(m.text ?? '', {
      user: (id) => this.person(id),
      channel: (id) => this.channels.get(id),
      baseUrl: this.deps.baseUrl,
    });
    for (const u of converted.unknownUsers) this.skip(`${item} mention of ${u}`, 'a user users.json does not define: kept as text');
    const lines: string[] = [];
    const docNodes: unknown[] = converted.doc ? [...converted.doc.content] : [];
    if (converted.content.trim()) lines.push(converted.content);

    // Bots' attachments: rendered as the compatible webhooks render them.
    const attachments = (m.attachments ?? []).map(readAttachment).filter((a): a is CompatAttachment => a !== null);
    for (const a of attachments) {
      const r = renderAttachment(a);
      if (r.markdown.length === 0) continue;
      lines.push(r.markdown.map((l) => (l.trim() === '' ? '>' : `> ${l}`)).join('\n'));
      docNodes.push(r.card);
    }

    let metadata: { type: string; data: Record<string, unknown> } | null = null;
    const shared: { file_id: string; name: string; size: number; content_type: string }[] = [];
    for (const f of m.files ?? []) {
      const got = await this.file(f, author?.id ?? null, created, item);
      let line: string | null = null;
      if (typeof got === 'string') line = `*(file not imported: ${escapeMd(fileName(f))}: ${got})*`;
      else {
        shared.push(got);
        if (!converted.content.trim()) line = `Shared a file: ${escapeMd(got.name)}`;
      }
      if (line) {
        lines.push(line);
        if (converted.doc) docNodes.push({ type: 'paragraph', content: [{ type: 'text', text: typeof got === 'string' ? `(file not imported: ${fileName(f)}: ${got})` : `Shared a file: ${got.name}` }] });
      }
    }
    if (shared.length) metadata = { type: 'axid.file', data: { ...shared[0]!, ...(shared.length > 1 ? { files: shared } : {}) } };

    let content = lines.join('\n\n');
    if (!content.trim()) {
      this.skip(item, 'nothing to show (no text, file or attachment)');
      return null;
    }
    if (charCount(content) > MAX_CONTENT) {
      content = `${[...content].slice(0, MAX_CONTENT - 1).join('')}…`;
      this.skip(item, `text longer than ${MAX_CONTENT} characters: cut`);
    }
    try {
      content = sanitizeContent(content);
    } catch {
      this.skip(item, 'its HTML could not be made safe');
      return null;
    }
    if (!content.trim()) {
      this.skip(item, 'empty once unsafe HTML is removed');
      return null;
    }
    let contentJson: string | null = null;
    let mentioned: string[] = [];
    if (docNodes.length && (converted.doc || attachments.length)) {
      // A doc only when the text is plain paragraphs plus cards; the text's own paragraphs first.
      const doc = { type: 'doc', content: converted.doc ? docNodes : [...paragraphsOf(converted.content), ...docNodes] };
      const checked = validateContentJson(doc, this.deps.blockRules);
      if (checked.valid) {
        contentJson = JSON.stringify(checked.document);
        mentioned = [...new Set(checked.mentioned_user_ids)];
      } else this.skip(`${item} formatting`, `kept as text only (${checked.message})`);
    }
    void c;
    return {
      id: randomUUID(),
      channel_id: channel.id,
      author_id: author?.id ?? null,
      thread_id: null,
      content,
      content_json: contentJson,
      metadata: metadata ? JSON.stringify(metadata) : null,
      mentioned_user_ids: `{${mentioned.join(',')}}`,
      display: display ? JSON.stringify(display) : null,
      created_at: created,
      edited_at: m.edited ? tsToDate(m.edited.ts) : null,
      has_reactions: false,
      pinned_at: m.pinned_to?.length ? created : null,
    };
  }

  /** The file stored (or already stored by an earlier run), or the reason it could not be had. */
  private async file(f: SlackFile, uploader: string | null, created: Date, item: string): Promise<{ file_id: string; name: string; size: number; content_type: string } | string> {
    const known = this.fileIds.get(f.id) ?? (await this.mappedFile(f.id));
    if (known) return { file_id: known.id, name: known.name, size: known.size, content_type: known.content_type };
    const name = cleanFileName(fileName(f));
    const contentType = cleanMimeType(f.mimetype ?? undefined);
    if (this.dryRun) {
      const problem = await hasSource(f, this.sources);
      if (problem) {
        this.skip(`${item} file ${f.id} ${name}`, problem);
        return problem;
      }
      this.report.counts.files++;
      return { file_id: randomUUID(), name, size: f.size ?? 0, content_type: contentType };
    }
    const id = randomUUID();
    const key = storageKey(this.o.workspaceId, id);
    let size: number;
    try {
      const opened = await openSlackFile(f, this.sources);
      size = await storeStream(this.deps.s3, this.deps.bucket, key, opened.stream, contentType);
    } catch (err) {
      if (!(err instanceof MissingFile)) throw err;
      this.skip(`${item} file ${f.id} ${name}`, err.message);
      return err.message;
    }
    // The row, its mapping and its processing job commit together (the worker sniffs its type and makes a thumbnail).
    await this.transaction(async (trx) => {
      await store.insertFile(trx, this.o.workspaceId, { id, uploader_id: uploader, name, size, content_type: contentType, storage_key: key, created_at: created });
      await store.insertMappings(trx, this.o.workspaceId, 'file', '', [{ key: f.id, id }]);
      await recordJob(this.deps, trx, 'file.postprocess', { fileId: id });
    });
    const stored = { id, name, size, content_type: contentType };
    this.fileIds.set(f.id, stored);
    this.report.counts.files++;
    return { file_id: id, name, size, content_type: contentType };
  }

  private async mappedFile(slackId: string) {
    if (this.dryRun) return undefined;
    const row = await this.deps
      .db('slack_import_map as s')
      .join('files as f', 'f.id', 's.axid_id')
      .where({ 's.workspace_id': this.o.workspaceId, 's.kind': 'file', 's.scope': '', 's.slack_key': slackId })
      .first('f.id', 'f.name', 'f.size', 'f.content_type');
    if (!row) return undefined;
    const stored = { id: row.id as string, name: row.name as string, size: Number(row.size), content_type: row.content_type as string };
    this.fileIds.set(slackId, stored);
    return stored;
  }

  async finish(importId: string | null) {
    for (const { text, names } of this.grouped.values()) {
      const shown = names.slice(0, 50).join(', ');
      this.report.notes.push(`${text} (${names.length}): ${shown}${names.length > 50 ? ` and ${names.length - 50} more` : ''}`);
    }
    if (this.dryRun) return this.report;
    const { db } = this.deps;
    const ws = this.o.workspaceId;
    const to = await store.ownersAndAdmins(db, ws);
    await db.transaction(async (trx) => {
      if (to.length) {
        await recordEvents(this.deps, trx, [{ type: 'import.finished', to: { scope: 'users', workspace_id: ws, user_ids: to }, data: { import_id: importId, source: 'slack', status: 'finished', counts: this.report.counts } }]);
      }
      // An import by command has no caller: the entry has no actor, and names the import where the API started it.
      await recordAudit(trx, { workspaceId: ws, action: 'import.finished', actor: null, target: importId ? { type: 'import', id: importId } : null, details: { source: 'slack', status: 'finished', counts: this.report.counts } });
    });
    return this.report;
  }
}

const emptyBatch = (): store.Batch & { readMarks: Set<string> } => ({ messages: [], keys: [], reactions: [], threads: new Map(), readMarks: new Set() });

/** Slack ts order ("1700000000.000100" < "1700000000.000200"), numerically. */
export function compareTs(a: string, b: string): number {
  const [as, af = ''] = a.split('.');
  const [bs, bf = ''] = b.split('.');
  return Number(as) - Number(bs) || Number(af.padEnd(6, '0')) - Number(bf.padEnd(6, '0'));
}

const fileName = (f: SlackFile) => f.name || f.title || f.id;
const escapeMd = (s: string) => s.replace(/([\\`*_[\]<>])/g, '\\$1');
const paragraphsOf = (markdownText: string) =>
  markdownText
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => ({ type: 'paragraph', content: [{ type: 'text', text: l }] }));

/**
 * Imports the export at `zipPath` into `o.workspaceId` (see the top of this
 * file). Throws BadExport (400 validation_error, naming the file) for a
 * broken export, before writing anything.
 */
export async function importSlackExport(deps: ImportDeps, zipPath: string, o: ImportOptions, importId: string | null = null): Promise<ImportReport> {
  const zip = await SlackZip.open(zipPath);
  try {
    const importer = new Importer(deps, zip, o);
    await importer.check();
    await importer.write();
    return await importer.finish(importId);
  } finally {
    zip.close();
  }
}
