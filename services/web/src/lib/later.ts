// "Later" (level 3, docs/team-chat.md): messages scheduled to send at a time,
// and reminders the workspace's system agent sends as a DM. The times people
// choose are in their own time zone (the browser's); the API takes ISO 8601.
// The person's scheduled messages are kept here, one list per client, so the
// composer's indicator and the list of all show the same thing.
import { all, data, page } from './api.js';
import type { AxidClient } from './client.js';
import type { components } from './api-schema.js';

export type ScheduledMessage = components['schemas']['ScheduledMessage'];
export type Reminder = components['schemas']['Reminder'];

/** The metadata of the system agent's reminder DM (docs/team-chat.md, "Reminders"). */
export const REMINDER_METADATA_TYPE = 'axid.reminder';

export interface Preset {
  label: string;
  at: Date;
}

/** 9:00 local, `days` days after `now`'s day. */
function nineOn(now: Date, days: number) {
  const d = new Date(now);
  d.setDate(d.getDate() + days);
  d.setHours(9, 0, 0, 0);
  return d;
}

/** Slack's choices for a send: tomorrow at 9, and next Monday at 9 (a week on when today is Monday; tomorrow already when today is Sunday, so then left out). */
export function schedulePresets(now = new Date()): Preset[] {
  const toMonday = ((8 - now.getDay()) % 7) || 7;
  const presets = [{ label: `Tomorrow at ${timeOf(nineOn(now, 1))}`, at: nineOn(now, 1) }];
  if (toMonday !== 1) presets.push({ label: `Monday at ${timeOf(nineOn(now, toMonday))}`, at: nineOn(now, toMonday) });
  return presets;
}

/** Choices for "Remind me" (contract §14): in 20 minutes, in an hour, tomorrow at 9. */
export function reminderPresets(now = new Date()): Preset[] {
  return [
    { label: 'In 20 minutes', at: new Date(now.getTime() + 20 * 60_000) },
    { label: 'In 1 hour', at: new Date(now.getTime() + 60 * 60_000) },
    { label: `Tomorrow at ${timeOf(nineOn(now, 1))}`, at: nineOn(now, 1) },
  ];
}

const timeOf = (d: Date) => d.toLocaleTimeString([], { hour: 'numeric', minute: '2-digit' });

/** A `datetime-local` input's value for a moment, in the browser's time zone (to the minute). */
export function localInputValue(d: Date) {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}T${two(d.getHours())}:${two(d.getMinutes())}`;
}

/** The moment a `datetime-local` value names in the browser's time zone, or null when it is empty or malformed. */
export function fromLocalInput(value: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value);
  if (!m) return null;
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  return new Date(y!, mo! - 1, d!, h!, mi!, s || 0);
}

/** What the API accepts (1 minute to 120 days ahead), checked before asking, in words: null when fine. */
export function timeProblem(at: Date | null, now = new Date()): string | null {
  if (!at || Number.isNaN(at.getTime())) return 'Choose a date and a time.';
  if (at.getTime() < now.getTime() + 60_000) return 'Choose a time at least a minute from now.';
  if (at.getTime() > now.getTime() + 120 * 86_400_000) return 'Choose a time within the next 120 days.';
  return null;
}

/** "Today at 9:00", "Tomorrow at 9:00", else the date and time, in the person's own words and zone. */
export function whenLabel(iso: string, now = new Date()) {
  const at = new Date(iso);
  const day = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const days = Math.round((day(at) - day(now)) / 86_400_000);
  if (days === 0) return `Today at ${timeOf(at)}`;
  if (days === 1) return `Tomorrow at ${timeOf(at)}`;
  return at.toLocaleString([], { weekday: 'short', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' });
}

export interface ScheduleBody {
  content: string;
  content_json?: unknown;
  metadata?: { type: string; data: Record<string, unknown> } | null;
  thread_id?: string;
}

/** The person's scheduled messages, shared by the composer's indicator and the list of all. */
export class ScheduledList {
  items: ScheduledMessage[] | null = null;
  private loading: Promise<void> | null = null;

  constructor(private readonly client: AxidClient) {}

  /** Loaded once; `fresh` asks again (the worker may have sent some since). */
  load(fresh = false): Promise<void> {
    if (this.loading && !fresh) return this.loading;
    this.loading = all((cursor) => page(this.client.api.GET('/api/v1/scheduled-messages', { params: { query: { cursor, limit: 200 } } }))).then((items) => {
      this.items = items;
      this.client.store.changed();
    });
    return this.loading;
  }

  /** Those still to go, soonest first (in one conversation when given; its thread's too). */
  pending(conversationId?: string) {
    return (this.items ?? []).filter((m) => m.status === 'scheduled' && (!conversationId || m.conversation_id === conversationId)).sort((a, b) => a.send_at.localeCompare(b.send_at));
  }

  /** Those the worker could not post (a member no more, an archived channel...), with the reason. */
  failed() {
    return (this.items ?? []).filter((m) => m.status === 'failed');
  }

  async schedule(conversationId: string, body: ScheduleBody, at: Date) {
    const withTime = { ...body, send_at: at.toISOString() };
    const created = this.client.store.dms.has(conversationId)
      ? await data(this.client.api.POST('/api/v1/dms/{conversation_id}/messages', { params: { path: { conversation_id: conversationId } }, body: withTime }))
      : await data(this.client.api.POST('/api/v1/channels/{channel_id}/messages', { params: { path: { channel_id: conversationId } }, body: withTime }));
    // With send_at the answer is the scheduled message (202), never a posted one.
    this.put(created as unknown as ScheduledMessage);
    return created as unknown as ScheduledMessage;
  }

  async update(id: string, patch: { content?: string; send_at?: string }) {
    // New text goes as plain markdown: its earlier content_json (mention nodes) would say something else.
    const body = patch.content !== undefined ? { ...patch, content_json: null } : patch;
    this.put(await data(this.client.api.PATCH('/api/v1/scheduled-messages/{scheduled_message_id}', { params: { path: { scheduled_message_id: id } }, body })));
  }

  async remove(id: string) {
    await data(this.client.api.DELETE('/api/v1/scheduled-messages/{scheduled_message_id}', { params: { path: { scheduled_message_id: id } } }));
    this.drop(id);
  }

  /**
   * Posts it at once: taken off the schedule first (a 409 then means the
   * worker has just sent it, and nothing is posted twice), then sent as the
   * composer sends, with everything it carried.
   */
  async sendNow(m: ScheduledMessage) {
    await this.remove(m.id);
    await this.client.send(m.conversation_id, m.content, {
      threadId: m.thread_id,
      ...(m.content_json ? { contentJson: m.content_json } : {}),
      ...(m.metadata ? { metadata: m.metadata } : {}),
    });
  }

  private put(m: ScheduledMessage) {
    this.items = [m, ...(this.items ?? []).filter((x) => x.id !== m.id)];
    this.client.store.changed();
  }

  private drop(id: string) {
    this.items = (this.items ?? []).filter((x) => x.id !== id);
    this.client.store.changed();
  }
}

const lists = new WeakMap<AxidClient, ScheduledList>();

export function scheduledList(client: AxidClient) {
  let list = lists.get(client);
  if (!list) lists.set(client, (list = new ScheduledList(client)));
  return list;
}

export const reminders = {
  list: (client: AxidClient) => all((cursor) => page(client.api.GET('/api/v1/reminders', { params: { query: { cursor, limit: 200 } } }))),
  create: (client: AxidClient, at: Date, about: { message_id: string } | { text: string }) => data(client.api.POST('/api/v1/reminders', { body: { remind_at: at.toISOString(), ...about } })),
  remove: (client: AxidClient, id: string) => data(client.api.DELETE('/api/v1/reminders/{reminder_id}', { params: { path: { reminder_id: id } } })),
};
