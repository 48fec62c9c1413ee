// What the importer reads of Slack's export format ("How to read Slack data
// exports"): the fields it uses, each checked with the one validation layer
// (zod); everything else in an object is ignored. A file that breaks these
// shapes fails the import naming the file and the item.
import { z } from 'zod';
import { BadExport } from './slack-export.zip.js';

const SlackId = z.string().min(1).max(64);
const Text = z.string().max(1_000_000);

export const SlackUser = z.looseObject({
  id: SlackId,
  name: z.string().max(200).optional(),
  real_name: z.string().max(500).optional(),
  deleted: z.boolean().optional(),
  is_bot: z.boolean().optional(),
  is_app_user: z.boolean().optional(),
  is_restricted: z.boolean().optional(),
  is_ultra_restricted: z.boolean().optional(),
  is_admin: z.boolean().optional(),
  is_owner: z.boolean().optional(),
  profile: z
    .looseObject({
      email: z.string().max(320).optional(),
      display_name: z.string().max(500).optional(),
      real_name: z.string().max(500).optional(),
    })
    .optional(),
});
export type SlackUser = z.infer<typeof SlackUser>;

const Purpose = z.looseObject({ value: z.string().max(5000).optional() }).optional();

export const SlackConversation = z.looseObject({
  id: SlackId,
  name: z.string().max(500).optional(),
  created: z.number().optional(),
  creator: z.string().optional(),
  is_archived: z.boolean().optional(),
  is_general: z.boolean().optional(),
  members: z.array(z.string()).optional(),
  purpose: Purpose,
  topic: Purpose,
});
export type SlackConversation = z.infer<typeof SlackConversation>;

const Ts = z.string().regex(/^\d{1,12}\.\d{1,6}$/, 'must be a Slack timestamp such as "1700000000.000100"');

export const SlackFile = z.looseObject({
  id: SlackId,
  name: z.string().max(1000).nullable().optional(),
  title: z.string().max(1000).nullable().optional(),
  mimetype: z.string().max(255).nullable().optional(),
  size: z.number().nullable().optional(),
  mode: z.string().max(64).nullable().optional(),
  url_private_download: z.string().max(4096).nullable().optional(),
  url_private: z.string().max(4096).nullable().optional(),
});
export type SlackFile = z.infer<typeof SlackFile>;

export const SlackMessage = z.looseObject({
  type: z.string().optional(),
  subtype: z.string().max(100).optional(),
  user: z.string().max(64).optional(),
  bot_id: z.string().max(64).optional(),
  username: z.string().max(200).optional(),
  text: Text.optional(),
  ts: Ts,
  thread_ts: Ts.optional(),
  hidden: z.boolean().optional(),
  edited: z.looseObject({ user: z.string().optional(), ts: Ts }).optional(),
  reactions: z.array(z.looseObject({ name: z.string().max(200), users: z.array(z.string()).optional() })).optional(),
  files: z.array(SlackFile).optional(),
  attachments: z.array(z.unknown()).optional(),
  pinned_to: z.array(z.string()).optional(),
  icons: z.looseObject({ emoji: z.string().optional() }).optional(),
  bot_profile: z.looseObject({ name: z.string().max(200).optional() }).optional(),
});
export type SlackMessage = z.infer<typeof SlackMessage>;

/** `value` as an array of `schema`, or BadExport naming the file and the first bad item. */
export function arrayOf<T>(file: string, value: unknown, schema: z.ZodType<T>): T[] {
  if (!Array.isArray(value)) throw new BadExport(`${file}: must be a JSON array`);
  return value.map((item, i) => {
    const parsed = schema.safeParse(item);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const where = [i, ...issue.path].map(String).join('.');
      throw new BadExport(`${file}: item ${where}: ${issue.message}`);
    }
    return parsed.data;
  });
}

/** Slack's `ts` ("1700000000.000100") as a Date (to the millisecond). */
export const tsToDate = (ts: string) => new Date(Math.floor(Number(ts) * 1000));
