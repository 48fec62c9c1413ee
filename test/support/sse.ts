// SSE clients for tests: a raw reader that keeps every byte (to check the
// wire format) and parses frames, and the `eventsource` package.
import http from 'node:http';
import { EventSource } from 'eventsource';
import { EVENT_TYPES, INTERNAL_EVENT_TYPES } from '../../shared/events.js';

export interface Frame {
  event: string;
  /** The `id:` line's value (level 3), if any. */
  id?: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  data: any;
  raw: string;
}

export interface RawStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Everything received, bytes as text. */
  text(): string;
  frames: Frame[];
  /** Comment lines seen (keep-alives). */
  comments: number;
  ended: Promise<void>;
  isEnded(): boolean;
  /** Resolves with the first frame (from the start) matching pred. */
  waitFor(pred: (f: Frame) => boolean, timeoutMs?: number): Promise<Frame>;
  /** Resolves once n frames match pred. */
  waitForCount(pred: (f: Frame) => boolean, n: number, timeoutMs?: number): Promise<Frame[]>;
  events(type: string): Frame[];
  pause(): void;
  close(): void;
  /** The JSON body of a non-200 answer. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body?: any;
  res: http.IncomingMessage;
}

/** Opens GET /api/v1/stream; resolves when the headers arrived (and, for 200, the init frame). */
export function openRaw(
  baseUrl: string,
  key: string | undefined,
  o: { waitInit?: boolean; headers?: Record<string, string>; query?: string } = {},
): Promise<RawStream> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...o.headers };
    if (key !== undefined) headers.authorization = `Bearer ${key}`;
    const req = http.get(`${baseUrl}/api/v1/stream${o.query ? `?${o.query}` : ''}`, { headers, agent: false }, (res) => {
      let text = '';
      let buffer = '';
      const frames: Frame[] = [];
      const waiters: (() => void)[] = [];
      let ended = false;
      let endResolve!: () => void;
      const endedP = new Promise<void>((r) => (endResolve = r));
      const stream: RawStream = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        res,
        text: () => text,
        frames,
        comments: 0,
        ended: endedP,
        isEnded: () => ended,
        waitFor: (pred, timeoutMs = 10_000) => stream.waitForCount(pred, 1, timeoutMs).then((f) => f[0] as Frame),
        waitForCount(pred, n, timeoutMs = 10_000) {
          return new Promise((res2, rej) => {
            const check = () => {
              const found = frames.filter(pred);
              if (found.length >= n) {
                clearTimeout(timer);
                res2(found.slice(0, n));
                return true;
              }
              if (ended) {
                clearTimeout(timer);
                rej(new Error(`stream ended with ${found.length}/${n} matching frames: ${frames.map((f) => f.event).join(',')}`));
                return true;
              }
              return false;
            };
            const timer = setTimeout(() => {
              const i = waiters.indexOf(wake);
              if (i >= 0) waiters.splice(i, 1);
              rej(new Error(`timed out with ${frames.filter(pred).length}/${n} matching frames; got: ${frames.map((f) => f.event).join(',')}`));
            }, timeoutMs);
            const wake = () => {
              if (!check()) waiters.push(wake);
            };
            wake();
          });
        },
        events: (type) => frames.filter((f) => f.event === type),
        pause: () => res.pause(),
        close: () => {
          req.destroy();
        },
      };
      const notify = () => {
        for (const w of waiters.splice(0)) w();
      };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        buffer += chunk;
        let i: number;
        while ((i = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, i);
          buffer = buffer.slice(i + 2);
          if (block.startsWith(':')) {
            stream.comments++;
            continue;
          }
          let event = 'message';
          let id: string | undefined;
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('id: ')) id = line.slice(4);
            else if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          const joined = data.join('\n');
          let parsed: unknown = joined;
          try {
            parsed = JSON.parse(joined);
          } catch {
            /* kept as text */
          }
          frames.push({ event, data: parsed, raw: block, ...(id === undefined ? {} : { id }) });
        }
        notify();
      });
      const finish = () => {
        if (ended) return;
        ended = true;
        endResolve();
        notify();
      };
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
      if (res.statusCode !== 200) {
        res.on('end', () => {
          try {
            stream.body = JSON.parse(text);
          } catch {
            /* not JSON */
          }
          resolve(stream);
        });
        return;
      }
      if (o.waitInit === false) resolve(stream);
      else stream.waitFor((f) => f.event === 'init').then(() => resolve(stream), reject);
    });
    req.on('error', reject);
  });
}

export interface EsStream {
  es: EventSource;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  received: { type: string; data: any }[];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  waitFor(pred: (e: { type: string; data: any }) => boolean, timeoutMs?: number): Promise<{ type: string; data: any }>;
  waitForCount(pred: (e: { type: string; data: any }) => boolean, n: number, timeoutMs?: number): Promise<void>;
  close(): void;
}

// Listens for internal types too, to prove they never arrive.
const ALL_TYPES = ['init', ...EVENT_TYPES, ...INTERNAL_EVENT_TYPES];

/** An `eventsource` client (the package browsers' polyfills use); resolves after init. */
export function openEventSource(baseUrl: string, key: string): Promise<EsStream> {
  const es = new EventSource(`${baseUrl}/api/v1/stream`, {
    fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers ?? {}), Authorization: `Bearer ${key}` } }),
  });
  const received: EsStream['received'] = [];
  const waiters: (() => void)[] = [];
  for (const type of ALL_TYPES) {
    es.addEventListener(type, (ev: MessageEvent) => {
      received.push({ type, data: JSON.parse(ev.data as string) });
      for (const w of waiters.splice(0)) w();
    });
  }
  const stream: EsStream = {
    es,
    received,
    close: () => es.close(),
    waitFor: (pred, timeoutMs) => stream.waitForCount(pred, 1, timeoutMs).then(() => received.find(pred)!),
    waitForCount(pred, n, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`timed out: ${received.filter(pred).length}/${n}; got ${received.map((e) => e.type).join(',')}`)),
          timeoutMs,
        );
        const check = () => {
          if (received.filter(pred).length >= n) {
            clearTimeout(timer);
            resolve();
          } else waiters.push(check);
        };
        check();
      });
    },
  };
  return new Promise((resolve, reject) => {
    es.addEventListener('error', (err) => {
      if (received.length === 0) {
        es.close();
        reject(new Error(`eventsource failed: ${String((err as { message?: string }).message)}`));
      }
    });
    stream.waitFor((e) => e.type === 'init').then(() => resolve(stream), reject);
  });
}
