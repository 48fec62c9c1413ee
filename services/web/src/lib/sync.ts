// After every `init` (first connect or reconnect) the client catches up, as
// the interface prescribes (no replay at feature level 2): live events are
// buffered, the open timelines are paged newest-first until a message we
// already hold (at most five pages, else the window restarts from the newest
// page), the others are marked stale to reload when opened, then the buffer is
// replayed. Upserts by id make the overlap harmless: nothing shows twice.
import { applyEvent } from './events.js';
import type { Store } from './store.js';
import type { Message, Page } from './types.js';

export type FetchPage = (timelineKey: string, cursor: string | null) => Promise<Page<Message>>;

export const MAX_GAP_PAGES = 5;

/** Pages a timeline newest-first until it meets a message the store holds. */
export async function fillGap(store: Store, key: string, fetchPage: FetchPage, maxPages = MAX_GAP_PAGES): Promise<'filled' | 'reset'> {
  const known = store.serverIds(key);
  const fresh: Message[] = [];
  let cursor: string | null = null;
  let first: Page<Message> | null = null;
  for (let i = 0; i < maxPages; i++) {
    const page = await fetchPage(key, cursor);
    first ??= page;
    fresh.push(...page.data);
    if (!known.size || page.data.some((m) => known.has(m.id)) || !page.pagination.has_more) {
      store.pruneMissing(key, fresh);
      for (const m of fresh) store.upsert(m, { live: true });
      if (!known.size) store.addPage(key, [], first.pagination, false);
      store.changed();
      return 'filled';
    }
    cursor = page.pagination.next_cursor;
  }
  store.resetTimeline(key, first!.data, first!.pagination);
  return 'reset';
}

export class Sync {
  private buffering = false;
  private buffer: { type: string; data: Record<string, unknown> }[] = [];
  private generation = 0;

  constructor(
    private readonly store: Store,
    private readonly fetchPage: FetchPage,
    /** The timelines on screen (the open channel, the open thread). */
    private readonly openKeys: () => string[],
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  /** A fresh `init`: catch up the open timelines, then replay what arrived meanwhile. */
  async onInit(reconnect: boolean, resumed = false) {
    // A resumed stream (level 3) replays every missed event after this init: nothing to page.
    if (!reconnect || resumed) return;
    const generation = ++this.generation;
    this.buffering = true;
    const open = this.openKeys().filter((k) => this.store.hasTimeline(k));
    this.store.markStale(new Set(open));
    try {
      for (const key of open) await fillGap(this.store, key, this.fetchPage);
    } catch (err) {
      this.onError(err);
    }
    if (generation !== this.generation) return; // a newer init took over
    this.buffering = false;
    const buffered = this.buffer;
    this.buffer = [];
    for (const e of buffered) applyEvent(this.store, e.type, e.data);
    this.store.changed();
  }

  onEvent(type: string, data: Record<string, unknown>) {
    if (this.buffering) this.buffer.push({ type, data });
    else applyEvent(this.store, type, data);
  }
}
