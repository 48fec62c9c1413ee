// Slack exports for the import tests, in the documented format (users.json,
// channels.json, groups.json, mpims.json, dms.json, a folder per
// conversation with a JSON array of messages per day), zipped with yazl.
import { createWriteStream, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yazl from 'yazl';

export type ExportEntries = Record<string, unknown>;

/** Writes the entries (objects as JSON, strings and Buffers as they are) into a ZIP; returns its path. */
export async function writeZip(entries: ExportEntries, file = path.join(mkdtempSync(path.join(os.tmpdir(), 'axid-slack-')), 'export.zip')): Promise<string> {
  const zip = new yazl.ZipFile();
  for (const [name, value] of Object.entries(entries)) {
    const bytes = Buffer.isBuffer(value) ? value : Buffer.from(typeof value === 'string' ? value : JSON.stringify(value, null, 1));
    zip.addBuffer(bytes, name, { mtime: new Date('2024-01-01T00:00:00Z') });
  }
  zip.end();
  await new Promise<void>((resolve, reject) => {
    const out = createWriteStream(file);
    out.on('close', resolve);
    out.on('error', reject);
    zip.outputStream.pipe(out);
  });
  return file;
}

/** A folder holding files by Slack file id (what --files-from reads). */
export function filesFolder(files: Record<string, Buffer>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'axid-slack-files-'));
  for (const [id, bytes] of Object.entries(files)) {
    mkdirSync(path.join(dir, id));
    writeFileSync(path.join(dir, id, 'original-name.bin'), bytes);
  }
  return dir;
}

export const SPEC_BYTES = Buffer.from('The spec, version 1\n\u00e9t\u00e9 \u2713\n');

const user = (id: string, name: string, extra: Record<string, unknown> = {}, profile: Record<string, unknown> = {}) => ({
  id,
  team_id: 'T001',
  name,
  real_name: `${name[0]!.toUpperCase()}${name.slice(1)} Example`,
  deleted: false,
  is_bot: false,
  profile: { real_name: `${name[0]!.toUpperCase()}${name.slice(1)} Example`, display_name: name, ...profile },
  ...extra,
});

const msg = (ts: string, userId: string | undefined, text: string, extra: Record<string, unknown> = {}) => ({
  type: 'message',
  ...(userId ? { user: userId } : {}),
  text,
  ts,
  ...extra,
});

/** Small ids of the sample's people and conversations. */
export const SAMPLE = {
  rootTs: '1704100100.000200',
  channelName: 'general',
  unicodeName: '日本語-チャンネル',
};

/**
 * The sample export: people without email, a deleted user, a bot user and an
 * integration bot, a restricted user; public, private, archived, empty and
 * unicode channels; a DM; two group DMs of the same people; threads whose
 * replies run into the next day, a broadcast, reactions by several people and
 * a custom one, an edit, a pin, mentions of people, a channel and @here,
 * files present and missing, and system messages.
 */
export function sampleExport(o: { prefix?: string } = {}): ExportEntries {
  const g = o.prefix ? `${o.prefix}-general` : 'general';
  return {
    'users.json': [
      user('U001', 'alice', { is_admin: true }, { email: 'alice@example.com' }),
      user('U002', 'bob'),
      user('U003', 'carol', { deleted: true }, { email: 'carol@example.com' }),
      user('U004', 'dave', { is_restricted: true }, { email: 'dave@example.com' }),
      user('U005', 'deploybot', { is_bot: true }),
      user('U006', 'erin'),
    ],
    'channels.json': [
      { id: 'C001', name: g, created: 1700000000, creator: 'U001', is_archived: false, is_general: !o.prefix, members: ['U001', 'U002', 'U004', 'U005', 'U006'], purpose: { value: 'Company-wide' }, topic: { value: '' } },
      { id: 'C002', name: 'random', created: 1700000000, creator: 'U002', members: ['U001', 'U002'], purpose: { value: '' }, topic: { value: 'Anything' } },
      { id: 'C003', name: SAMPLE.unicodeName, created: 1700000000, creator: 'U001', members: ['U001'] },
      { id: 'C004', name: 'empty-channel', created: 1700000000, creator: 'U001', members: ['U001', 'U002'] },
      { id: 'C005', name: 'old-project', created: 1690000000, creator: 'U001', is_archived: true, members: ['U001'] },
    ],
    'groups.json': [{ id: 'G001', name: 'secret-plans', created: 1700000000, creator: 'U001', members: ['U001', 'U002'] }],
    'mpims.json': [
      { id: 'G002', name: 'mpdm-alice--bob--erin-1', created: 1700000000, creator: 'U001', members: ['U001', 'U002', 'U006'] },
      { id: 'G003', name: 'mpdm-bob--erin--alice-1', created: 1700000001, creator: 'U002', members: ['U002', 'U006', 'U001'] },
    ],
    'dms.json': [{ id: 'D001', created: 1700000000, members: ['U001', 'U002'] }],
    [`${g}/2024-01-01.json`]: [
      msg('1704099000.000050', 'U002', '<@U002> has joined the channel', { subtype: 'channel_join' }),
      // out of order on purpose: the importer sorts a day by ts
      msg('1704100200.000300', 'U001', 'Answer one, cc <@U002>', { thread_ts: SAMPLE.rootTs, parent_user_id: 'U002' }),
      msg('1704100000.000100', 'U001', 'Hello *team* <!here> &amp; friends', {
        reactions: [
          { name: 'thumbsup', users: ['U002', 'U006'], count: 2 },
          { name: 'partyparrot', users: ['U001'], count: 1 },
          { name: '+1::skin-tone-2', users: ['U004'], count: 1 },
        ],
        pinned_to: ['C001'],
      }),
      msg(SAMPLE.rootTs, 'U002', 'Question about <#C002|random>?', { thread_ts: SAMPLE.rootTs, reply_count: 3, replies: [{ user: 'U001', ts: '1704100200.000300' }] }),
      { type: 'message', subtype: 'bot_message', bot_id: 'B001', username: 'CI', text: 'Build *42* passed', ts: '1704100300.000400', icons: { emoji: ':white_check_mark:' } },
    ],
    [`${g}/2024-01-02.json`]: [
      msg('1704186000.000100', 'U006', 'Answer two, the next day', { thread_ts: SAMPLE.rootTs, parent_user_id: 'U002' }),
      msg('1704186100.000200', 'U002', 'Broadcast reply', { subtype: 'thread_broadcast', thread_ts: SAMPLE.rootTs }),
      msg('1704186200.000300', 'U003', 'Edited text', { edited: { user: 'U003', ts: '1704186300.000000' } }),
      msg('1704186400.000400', 'U001', 'Here is the spec', {
        subtype: 'file_share',
        files: [{ id: 'F001', name: 'spec.txt', title: 'spec.txt', mimetype: 'text/plain', size: SPEC_BYTES.length, url_private_download: 'https://files.slack.invalid/F001/spec.txt' }],
      }),
      msg('1704186500.000500', 'U002', '', { subtype: 'file_share', files: [{ id: 'F002', name: 'missing.png', mimetype: 'image/png' }] }),
      msg('1704186600.000600', 'U005', 'I am a bot user'),
      msg('1704186700.000700', 'U001', 'left', { subtype: 'channel_leave' }),
    ],
    'random/2024-01-01.json': [
      msg('1704110000.000100', 'U002', 'In random, see <@U001> and <!channel>'),
      msg('1704110100.000200', 'U001', '_italic_ and ~strike~ and `code`'),
    ],
    [`${SAMPLE.unicodeName}/2024-01-01.json`]: [msg('1704120000.000100', 'U001', 'こんにちは')],
    'old-project/2023-12-01.json': [msg('1701400000.000100', 'U001', 'archived history')],
    'secret-plans/2024-01-01.json': [msg('1704130000.000100', 'U002', 'private stuff')],
    'mpdm-alice--bob--erin-1/2024-01-01.json': [msg('1704140000.000100', 'U006', 'group one')],
    'mpdm-bob--erin--alice-1/2024-01-02.json': [msg('1704226000.000100', 'U001', 'group two, same people')],
    'D001/2024-01-01.json': [msg('1704150000.000100', 'U001', 'hi bob'), msg('1704150100.000200', 'U002', 'hi alice')],
  };
}

/** What the sample adds (the first import into a workspace without a channel named `general`). */
export const SAMPLE_COUNTS = { users: 7, channels: 6, dms: 2, messages: 19, replies: 3, reactions: 4, pins: 1, files: 1 };
