// The message list: virtua's VList over the flat rows of lib/rows.ts, each
// row's element made only when it is near the viewport. Older
// pages load near the top (`shift` keeps the view still while they are
// prepended); new messages are followed only when the view is at the bottom.
import type { VNode } from 'preact';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { VList, type VListHandle } from 'virtua';
import { buildRows, type Row } from '../lib/rows.js';
import type { AxidClient } from '../lib/client.js';
import { useStore } from './context.js';
import { MessageItem } from './message.js';
import { Icon } from './icons.js';

type ReadMark = { afterId: string | null; afterTime: string | null; me: string | null };
const readMarkNow = (store: AxidClient['store'], id: string): ReadMark => ({ afterId: store.lastReadId(id), afterTime: store.lastReadAt(id) || null, me: store.me?.id ?? null });
const timelineLoaded = (store: AxidClient['store'], key: string) => store.timeline(key).loaded;

const dayLabel = (iso: string) => new Date(iso).toLocaleDateString(undefined, { weekday: 'long', year: 'numeric', month: 'long', day: 'numeric' });

export function Timeline({ timelineKey, conversationId, inThread }: { timelineKey: string; conversationId: string; inThread?: boolean }) {
  const client = useStore();
  const store = client.store;
  const messages = store.list(timelineKey);
  // Where the person stopped reading, as it was when the conversation opened (the line stays while they read on).
  // Moved on, though, while they watch the end with nothing unread: what arrives then is seen, not new.
  const mark = useRef<{ key: string; at: ReadMark | null } | null>(null);
  if (mark.current?.key !== timelineKey) mark.current = { key: timelineKey, at: inThread ? null : readMarkNow(store, conversationId) };
  const [markMoved, setMarkMoved] = useState(0);
  const rows = useMemo(() => buildRows(messages, dayLabel, mark.current!.at ?? undefined), [store.version, timelineKey, markMoved]);
  const lineAtOpen = useRef<{ key: string; drawn: boolean } | null>(null);
  if (lineAtOpen.current?.key !== timelineKey && timelineLoaded(store, timelineKey)) lineAtOpen.current = { key: timelineKey, drawn: rows.some((r) => r.kind === 'unread') };
  const list = useRef<VListHandle>(null);
  const atBottom = useRef(true);
  const [prepending, setPrepending] = useState(false);
  const loading = useRef(false);
  const loadingNewer = useRef(false);
  const [newCount, setNewCount] = useState(0);
  const lastKey = useRef<string | null>(null);
  const timeline = store.timeline(timelineKey);

  // Follow the end when at the bottom; else count what arrived below.
  const last = rows.at(-1)?.key ?? null;
  useLayoutEffect(() => {
    if (!rows.length) return;
    if (atBottom.current || lastKey.current === null) {
      list.current?.scrollToIndex(rows.length - 1, { align: 'end' });
      // The end is on screen: what arrived is read (at level 3 the server hears of it, once per newest message).
      if (!inThread) {
        store.markRead(conversationId);
        const watched = lastKey.current !== null && document.visibilityState === 'visible' && lineAtOpen.current?.drawn === false;
        if (watched && rows.some((r) => r.kind === 'unread')) {
          const newest = messages.findLast((m) => m.state === 'sent');
          mark.current = { key: timelineKey, at: newest ? { afterId: newest.id, afterTime: newest.created_at, me: store.me?.id ?? null } : null };
          setMarkMoved((n) => n + 1);
        }
      }
    }
    // Pages below a segment far back are no news: the "Jump to newest" control stands for them.
    else if (last !== lastKey.current && !prepending && timeline.newerCursor === null) setNewCount((n) => n + 1);
    lastKey.current = last;
  }, [last, rows.length]);

  useEffect(() => {
    atBottom.current = true;
    lastKey.current = null;
    setNewCount(0);
    if (inThread) return;
    // Opening a conversation reads it; while its end is on screen, new messages count as read.
    store.viewing = { id: conversationId, atBottom: true };
    const counted = store.unreadCount(conversationId) + store.mentionCount(conversationId);
    store.markRead(conversationId);
    // A render (sidebar badge, title) only when there was something to clear.
    if (counted) store.changed();
    return () => {
      if (store.viewing?.id === conversationId) store.viewing = null;
    };
  }, [timelineKey]);

  useEffect(() => setPrepending(false), [rows.length]);

  // A row that grows at the end (a streamed reply, an edit, a reaction or an image that loads) keeps a view
  // that was at the bottom there: virtua measures it after the render, so this follows the content's size.
  const wrap = useRef<HTMLDivElement>(null);
  const lastIndex = useRef(0);
  lastIndex.current = rows.length - 1;
  const shown = timeline.loaded && rows.length > 0;
  useEffect(() => {
    const content = wrap.current?.querySelector('.timeline > div');
    if (!content) return;
    const follow = new ResizeObserver(() => {
      if (atBottom.current && lastIndex.current >= 0) list.current?.scrollToIndex(lastIndex.current, { align: 'end' });
    });
    follow.observe(content);
    return () => follow.disconnect();
  }, [shown, timelineKey]);

  // A permalink or search result (client.jumpTo): once its message is in the list, bring it into view;
  // in the conversation's list a reply is represented by its thread's root.
  const h = client.highlight;
  const targetId = h ? (inThread ? h.id : h.rootId ?? h.id) : null;
  const target = targetId ? rows.findIndex((r) => r.kind === 'message' && r.message.id === targetId) : -1;
  // Once per jump: pages loaded later (scrolling up from it) must not pull the view back.
  const jumpedFor = useRef<string | null>(null);
  useLayoutEffect(() => {
    const jump = `${timelineKey}:${h?.seq}`;
    if (target < 0 || jumpedFor.current === jump) return;
    jumpedFor.current = jump;
    atBottom.current = false;
    list.current?.scrollToIndex(target, { align: 'center' });
  }, [target, h?.seq]);

  // One element per row for as long as the rows stand (until the store changes): virtua re-renders
  // while it measures and scrolls, and an unchanged element lets its memoised item skip the work.
  const made = useMemo(() => new Map<Row, VNode>(), [rows]);
  const rowElement = (row: Row) => {
    let el = made.get(row);
    if (!el) made.set(row, (el = makeRow(row)));
    return el;
  };
  const makeRow = (row: Row): VNode =>
    row.kind === 'day' ? (
      <div key={row.key} class="day" role="separator" aria-label={row.label}>
        <span>{row.label}</span>
      </div>
    ) : row.kind === 'unread' ? (
      <div key={row.key} class="unread-line" role="separator" aria-label="New messages">
        <span>New messages</span>
      </div>
    ) : (
      <MessageItem key={row.key} message={row.message} grouped={row.grouped} inThread={inThread} />
    );

  // A segment far back (client.jumpTo at level 3): its end is not the live end.
  const detached = timeline.newerCursor !== null;
  const onScroll = (offset: number) => {
    const h = list.current;
    if (!h) return;
    const nearEnd = offset + h.viewportSize >= h.scrollSize - 400;
    if (detached && nearEnd && !loadingNewer.current) {
      loadingNewer.current = true;
      void client.loadNewer(timelineKey).finally(() => (loadingNewer.current = false));
    }
    atBottom.current = !detached && offset + h.viewportSize >= h.scrollSize - 10;
    if (atBottom.current) {
      setNewCount(0);
      if (!inThread) {
        store.viewing = { id: conversationId, atBottom: true };
        if (store.unreadCount(conversationId)) {
          store.markRead(conversationId);
          store.changed();
        }
      }
    } else if (!inThread) store.viewing = { id: conversationId, atBottom: false };
    if (offset < 400 && timeline.hasMore && timeline.loaded && !loading.current) {
      loading.current = true;
      setPrepending(true);
      void client.loadOlder(timelineKey).finally(() => (loading.current = false));
    }
  };

  if (!timeline.loaded) {
    return (
      <div class="timeline-wrap" role="status" aria-label="Loading messages">
        {[60, 80, 45, 70].map((w) => (
          <div key={w} class="skeleton-message">
            <div class="skeleton avatar-box" />
            <div class={`skeleton line w${w}`} />
          </div>
        ))}
      </div>
    );
  }
  if (!rows.length) {
    return (
      <div class="empty">
        <p>{inThread ? 'No replies yet.' : 'No messages here yet.'}</p>
        <p class="muted">{inThread ? 'Write the first reply below.' : 'Write the first one below: Enter sends, Shift+Enter starts a new line, @ mentions someone.'}</p>
      </div>
    );
  }
  return (
    <div class="timeline-wrap" ref={wrap}>
      {/* Rows are made only for what is near the viewport (virtua calls this per index), never for the whole history. */}
      <VList ref={list as never} data={rows} class="timeline" shift={prepending} onScroll={onScroll} role="log" aria-label="Messages" aria-live="off">
        {rowElement}
      </VList>
      {detached ? (
        <button
          class="new-toast"
          onClick={() => {
            atBottom.current = true;
            void client.jumpToNewest(timelineKey);
          }}
        >
          Jump to newest <Icon name="arrowDown" size={14} />
        </button>
      ) : newCount > 0 ? (
        <button class="new-toast" onClick={() => (list.current?.scrollToIndex(rows.length - 1, { align: 'end' }), setNewCount(0))}>
          {newCount} new <Icon name="arrowDown" size={14} />
        </button>
      ) : null}
    </div>
  );
}
