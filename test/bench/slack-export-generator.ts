// A Slack export of any size, in the documented format, for the import's
// bench and its process tests: users, public channels with members, a day
// file per 100 messages of a channel, threads (every 10th top-level message
// is a root with 3 replies, one in 20 of them answered the next day),
// reactions by several people, mentions, mrkdwn, and files (held in a folder
// by Slack file id, as --files-from reads them). Written with yazl as it is
// generated, so memory stays flat whatever the size.
//   tsx test/bench/slack-export-generator.ts <out.zip> <files-dir> [messages] [channels] [users] [files]
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ZipWriter } from '../../services/core/imports/zip-writer.js';

export interface GeneratorOptions {
  messages: number;
  channels: number;
  users: number;
  files: number;
  /** Where the files go (by Slack file id). */
  filesDir: string;
  perDay?: number;
}

export interface Generated {
  messages: number;
  replies: number;
  reactions: number;
  files: number;
  days: number;
}

const START = 1_600_000_000;

export async function generateSlackExport(out: string, o: GeneratorOptions): Promise<Generated> {
  const perDay = o.perDay ?? 100;
  // Deflated, as Slack's exports are: the import's time includes inflating them.
  const zip = new ZipWriter(out);
  const add = (name: string, value: unknown) => zip.addJson(name, value);
  const uid = (n: number) => `U${String(n).padStart(8, '0')}`;

  await add(
    'users.json',
    Array.from({ length: o.users }, (_, i) => ({
      id: uid(i),
      name: `user${i}`,
      real_name: `User ${i}`,
      deleted: i % 97 === 96,
      is_bot: i % 250 === 249,
      profile: { display_name: `user${i}`, real_name: `User ${i}`, ...(i % 3 === 0 ? {} : { email: `user${i}@example.com` }) },
    })),
  );
  const membersOf = (c: number) => Array.from({ length: Math.min(50, o.users) }, (_, k) => uid((c * 7 + k * 101) % o.users));
  await add(
    'channels.json',
    Array.from({ length: o.channels }, (_, c) => ({ id: `C${String(c).padStart(8, '0')}`, name: `channel-${c}`, created: START, creator: uid(0), is_general: c === 0, members: membersOf(c), purpose: { value: `Channel ${c}` } })),
  );
  await add('groups.json', []);
  await add('mpims.json', []);
  await add('dms.json', []);

  mkdirSync(o.filesDir, { recursive: true });
  const totals: Generated = { messages: 0, replies: 0, reactions: 0, files: 0, days: 0 };
  const perChannel = Math.ceil(o.messages / o.channels);
  const fileEvery = o.files > 0 ? Math.max(1, Math.floor(o.messages / o.files)) : Infinity;
  let fileNo = 0;
  for (let c = 0; c < o.channels && totals.messages < o.messages; c++) {
    const members = membersOf(c);
    const channelMessages = Math.min(perChannel, o.messages - totals.messages);
    let carry: Record<string, unknown>[] = [];
    let made = 0;
    for (let day = 0; made < channelMessages; day++) {
      const dayStart = START + day * 86_400;
      const messages: Record<string, unknown>[] = carry;
      carry = [];
      let t = 0;
      while (messages.length < perDay && made < channelMessages) {
        const n = totals.messages;
        const author = members[n % members.length]!;
        const ts = `${dayStart + 60 + t * 60}.${String(n % 1_000_000).padStart(6, '0')}`;
        t++;
        const text = n % 7 === 0 ? `Hey <@${members[(n + 1) % members.length]}>, *deploy* ${n} is _done_` : `Message ${n} in channel ${c}`;
        const m: Record<string, unknown> = { type: 'message', user: author, text, ts };
        if (n % 5 === 0) {
          m.reactions = [{ name: 'thumbsup', users: [members[(n + 2) % members.length], members[(n + 3) % members.length]], count: 2 }];
          totals.reactions += 2;
        }
        if (n % fileEvery === 0 && fileNo < o.files) {
          const id = `F${String(fileNo++).padStart(8, '0')}`;
          writeFileSync(path.join(o.filesDir, id), `file ${id}\n`.repeat(64));
          m.subtype = 'file_share';
          m.files = [{ id, name: `${id}.txt`, mimetype: 'text/plain', size: 64 * (id.length + 6) }];
          totals.files++;
        }
        messages.push(m);
        made++;
        totals.messages++;
        if (n % 10 === 0 && made + 3 <= channelMessages) {
          m.thread_ts = ts;
          m.reply_count = 3;
          for (let r = 1; r <= 3; r++) {
            const late = r === 3 && n % 200 === 0;
            const replyTs = late ? `${dayStart + 86_400 + r}.${String(n % 1_000_000).padStart(6, '0')}` : `${dayStart + 60 + (t - 1) * 60 + r}.${String(n % 1_000_000).padStart(6, '0')}`;
            const reply = { type: 'message', user: members[(n + r) % members.length], text: `Reply ${r} to ${n}`, ts: replyTs, thread_ts: ts };
            (late ? carry : messages).push(reply);
            made++;
            totals.messages++;
            totals.replies++;
          }
        }
      }
      if (messages.length) {
        await add(`channel-${c}/${new Date(dayStart * 1000).toISOString().slice(0, 10)}.json`, messages);
        totals.days++;
      }
      if (made >= channelMessages && carry.length) {
        await add(`channel-${c}/${new Date((dayStart + 86_400) * 1000).toISOString().slice(0, 10)}.json`, carry);
        totals.days++;
        carry = [];
      }
    }
  }
  await zip.end();
  return totals;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [out, filesDir, messages = '100000', channels = '1000', users = '5000', files = '1000'] = process.argv.slice(2);
  if (!out || !filesDir) {
    process.stderr.write('usage: tsx test/bench/slack-export-generator.ts <out.zip> <files-dir> [messages] [channels] [users] [files]\n');
    process.exit(2);
  }
  const started = Date.now();
  const made = await generateSlackExport(out, { filesDir, messages: Number(messages), channels: Number(channels), users: Number(users), files: Number(files) });
  process.stdout.write(`${JSON.stringify({ ...made, seconds: (Date.now() - started) / 1000 })}\n`);
}
