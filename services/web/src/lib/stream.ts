// One event stream per tab, read with fetch() so the Authorization header can
// be sent (EventSource cannot). Any byte (keep-alive comments included) resets
// a watchdog; on a drop it reconnects with full-jitter backoff (1 s to 30 s,
// honouring 429 Retry-After, reset by a fresh `init`), at once when the
// browser comes back online, and drops at once when it goes offline; a 401
// stops it and signs out. At feature level 3 frames carry ids: a reconnect
// sends the last one as Last-Event-ID, and `init.resumed` says whether the
// server replayed what was missed (then nothing needs fetching).
import { SseParser } from './sse.js';

export type StreamState = 'connecting' | 'live' | 'reconnecting' | 'stopped';

export interface StreamOptions {
  url: string;
  /** The key to send; null stops the stream. */
  key(): string | null;
  onInit(data: Record<string, unknown>): void;
  onEvent(type: string, data: Record<string, unknown>): void;
  onState(state: StreamState, detail?: { retryInMs?: number; attempt?: number }): void;
  onUnauthorized(code: string, message: string): void;
  fetch?: typeof fetch;
  watchdogMs?: number;
  minDelayMs?: number;
  maxDelayMs?: number;
  random?: () => number;
}

export class LiveStream {
  private abort: AbortController | null = null;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private watchdog: ReturnType<typeof setTimeout> | null = null;
  private attempt = 0;
  private running = false;
  /** The id of the last frame (feature level 3 frames carry one): sent back as Last-Event-ID on reconnect, to resume. */
  lastEventId: string | null = null;
  state: StreamState = 'stopped';

  constructor(private readonly o: StreamOptions) {}

  start() {
    if (this.running) return;
    this.running = true;
    void this.connect();
  }

  stop() {
    this.running = false;
    this.clearTimers();
    this.abort?.abort();
    this.abort = null;
    this.setState('stopped');
  }

  /** Reconnect now (the browser is online again, the tab woke up). */
  reconnectNow() {
    if (!this.running || this.state === 'live') return;
    this.clearTimers();
    this.abort?.abort();
    void this.connect();
  }

  /** The browser went offline: drop the connection now (a dead socket may take minutes to notice) and retry with backoff. */
  dropNow() {
    if (!this.running) return;
    this.abort?.abort();
  }

  /** The delay before reconnect attempt `attempt` (0-based): full jitter on 1 s x 2^n, capped. */
  delayFor(attempt: number, retryAfterMs = 0) {
    const min = this.o.minDelayMs ?? 1_000;
    const max = this.o.maxDelayMs ?? 30_000;
    const ceiling = Math.min(max, min * 2 ** attempt);
    const jittered = Math.max(min / 2, (this.o.random ?? Math.random)() * ceiling);
    return Math.max(jittered, retryAfterMs);
  }

  private setState(state: StreamState, detail?: { retryInMs?: number; attempt?: number }) {
    this.state = state;
    this.o.onState(state, detail);
  }

  private clearTimers() {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.watchdog) clearTimeout(this.watchdog);
    this.retryTimer = this.watchdog = null;
  }

  private armWatchdog(controller: AbortController) {
    if (this.watchdog) clearTimeout(this.watchdog);
    this.watchdog = setTimeout(() => controller.abort(), this.o.watchdogMs ?? 45_000);
  }

  private async connect() {
    const key = this.o.key();
    if (!key || !this.running) return this.stop();
    const controller = new AbortController();
    this.abort = controller;
    this.setState(this.attempt === 0 ? 'connecting' : 'reconnecting', { attempt: this.attempt });
    let retryAfterMs = 0;
    try {
      this.armWatchdog(controller);
      const res = await (this.o.fetch ?? fetch)(this.o.url, {
        headers: { Authorization: `Bearer ${key}`, Accept: 'text/event-stream', ...(this.lastEventId ? { 'Last-Event-ID': this.lastEventId } : {}) },
        signal: controller.signal,
        cache: 'no-store',
      });
      if (res.status === 401) {
        const body = (await res.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
        this.running = false;
        this.clearTimers();
        this.setState('stopped');
        this.o.onUnauthorized(body?.error?.code ?? 'unauthorized', body?.error?.message ?? 'the key was refused');
        return;
      }
      if (res.status === 429) retryAfterMs = Number(res.headers.get('Retry-After') ?? '0') * 1000;
      if (res.ok && res.body) await this.read(res.body, controller);
      else await res.body?.cancel().catch(() => undefined);
    } catch {
      // A network error or our own abort (watchdog, stop): handled below.
    }
    if (this.watchdog) clearTimeout(this.watchdog);
    if (!this.running || this.abort !== controller) return;
    const delay = this.delayFor(this.attempt, retryAfterMs);
    this.attempt += 1;
    this.setState('reconnecting', { retryInMs: delay, attempt: this.attempt });
    this.retryTimer = setTimeout(() => void this.connect(), delay);
  }

  private async read(body: ReadableStream<Uint8Array>, controller: AbortController) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    const parser = new SseParser();
    for (;;) {
      const { value, done } = await reader.read();
      if (done || controller.signal.aborted) return;
      this.armWatchdog(controller);
      for (const frame of parser.push(decoder.decode(value, { stream: true }))) {
        let data: Record<string, unknown>;
        try {
          data = JSON.parse(frame.data) as Record<string, unknown>;
        } catch {
          continue;
        }
        if (frame.id) this.lastEventId = frame.id;
        if (frame.event === 'init') {
          this.attempt = 0;
          this.setState('live');
          this.o.onInit(data);
        } else this.o.onEvent(frame.event, data);
      }
    }
  }
}
