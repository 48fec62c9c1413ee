// The one outbound fetcher: every request the service makes to an address a
// user gave it (event subscriptions' challenges and deliveries, contract §11;
// link previews, §14) goes through `OutboundFetcher.fetch`, so that such an
// address can neither reach our own network nor slow anyone but its owner:
// - the URL: https, no user name or password (http too under the private switch);
// - the address: the host is resolved and every address it gives checked
//   (ipaddr.js names its range; only public unicast passes unless the caller's
//   private switch is on); the connection goes to the address that was
//   checked (a lookup that answers it), so a second resolution cannot rebind
//   the name; errors name the host, never what it resolved to;
// - DNS: asked of the DNS servers directly (c-ares, `dns.Resolver`), never
//   through getaddrinfo, whose calls hold one of libuv's four threads each:
//   four slow names used to stall every other user's lookups (and the
//   password hashes and file reads on the same threads). Resolution is inside
//   the overall deadline and cancelled at it. `OUTBOUND_DNS_SERVERS` names the
//   servers (the system's otherwise). `localhost` and `*.localhost` are
//   loopback without asking (RFC 6761); /etc/hosts is not read;
// - no redirects (a 3xx is the answer), an overall deadline (waiting for a
//   share, DNS, connecting, the answer and its body), at most `maxBytes` of
//   body read, and optionally only some content types;
// - a share per owner: at most `perOwner` fetches of one owner (a user) run at
//   once in this process; more wait, within their deadline, for one to end.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Refused before or instead of connecting (scheme, address, an unwanted content type): retrying changes nothing. */
export class OutboundRefused extends Error {}

/** No usable answer (DNS, connection, timeout): another try may do. */
export class OutboundFailed extends Error {}

/** The owner's share was taken for the whole deadline. */
export class OutboundBusy extends OutboundFailed {}

/** Woken for a place with less time than this left, a fetch does not start: it is busy. */
const TOO_LATE_TO_START_MS = 100;

export interface ResolvedAddress {
  address: string;
  /** 4 or 6. */
  family: number;
}

/** Resolves a name to its addresses within `timeoutMs` (tests give their own to see a rebinding). */
export type Resolver = (hostname: string, timeoutMs: number) => Promise<ResolvedAddress[]>;

export interface OutboundSettings {
  /** DNS servers (`host` or `host:port`, `[v6]:port`); empty: the system's. */
  dnsServers: string[];
  /** Fetches one owner may run at once in this process. */
  perOwner: number;
}

export interface FetchOptions {
  method?: 'GET' | 'POST';
  /** A request body (POST). */
  body?: string;
  headers?: Record<string, string>;
  /** Whose share of concurrency this fetch takes (a user id). */
  owner: string;
  /** Admits http:// and every address (local development and tests). */
  allowPrivate: boolean;
  /** Everything, from waiting for a share to the last byte read. */
  timeoutMs: number;
  /** At most this much of the body is read. */
  maxBytes: number;
  /** Past maxBytes: keep the first maxBytes (`truncate`, the default) or fail (`refuse`). */
  oversize?: 'truncate' | 'refuse';
  /** Media types accepted (`text/html`); any other answer is refused before its body is read. */
  contentTypes?: string[];
  /** The resolver (tests). */
  resolve?: Resolver;
}

export interface OutboundAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The media type of the answer, lower case, without parameters; null when none was sent. */
  contentType: string | null;
  /** The first maxBytes of the body. */
  body: Buffer;
  /** Whether the body was longer than maxBytes (and cut). */
  truncated: boolean;
}

/** The range ipaddr.js gives an address ('unicast' for a public one); IPv4-mapped IPv6 is judged as its IPv4. */
export function addressRange(address: string): string {
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  return ip.range();
}

/** Whether a URL may be fetched at all: its scheme and form (the address is checked when fetching). */
export function urlProblem(raw: string, allowPrivate: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) return 'must be an https:// URL';
  if (url.username || url.password) return 'must not carry a user name or password';
  if (!url.hostname) return 'must name a host';
  return null;
}

const LOOPBACK: ResolvedAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];

/** A resolver asking `servers` (the system's when empty) for A and AAAA records, cancelled after `timeoutMs`. */
export function dnsResolver(servers: string[]): Resolver {
  return async (hostname, timeoutMs) => {
    if (hostname === 'localhost' || hostname.endsWith('.localhost')) return LOOPBACK;
    // One resolver (one c-ares channel) per lookup, so that its cancel ends this lookup only.
    const resolver = new dns.promises.Resolver({ timeout: Math.max(1, Math.ceil(timeoutMs)), tries: 1 });
    if (servers.length > 0) resolver.setServers(servers);
    const timer = setTimeout(() => resolver.cancel(), Math.max(1, timeoutMs));
    try {
      const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
      const found: ResolvedAddress[] = [
        ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
        ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
      ];
      if (found.length > 0) return found;
      const code = [v4, v6].map((r) => (r.status === 'rejected' ? (r.reason as { code?: string }).code : undefined)).find((c) => c && c !== 'ENODATA') ?? 'ENODATA';
      throw Object.assign(new Error(code), { code });
    } finally {
      clearTimeout(timer);
    }
  };
}

/** One owner's fetches running and waiting in this process. */
interface Share {
  running: number;
  waiting: Array<() => void>;
}

export class OutboundFetcher {
  private readonly shares = new Map<string, Share>();
  private readonly resolve: Resolver;

  constructor(private readonly settings: OutboundSettings) {
    this.resolve = dnsResolver(settings.dnsServers);
  }

  /**
   * Resolves the host and checks every address it gives (a name with one
   * private address among public ones is refused). Returns the address to
   * connect to. Refusals name the host and the range, never the address a
   * name resolved to (that would map our network for whoever asks).
   */
  async resolveChecked(hostname: string, allowPrivate: boolean, timeoutMs: number, resolve: Resolver = this.resolve): Promise<ResolvedAddress> {
    const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
    if (ipaddr.isValid(bare)) {
      const literal: ResolvedAddress = { address: bare, family: ipaddr.parse(bare).kind() === 'ipv6' ? 6 : 4 };
      const range = addressRange(bare);
      if (!allowPrivate && range !== 'unicast') throw new OutboundRefused(`the host ${bare} is a ${range} address: only public addresses are fetched`);
      return literal;
    }
    let addresses: ResolvedAddress[];
    const started = Date.now();
    try {
      addresses = await resolve(bare, timeoutMs);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'ECANCELLED' || code === 'ETIMEOUT' || Date.now() - started >= timeoutMs) throw new OutboundFailed(`the host ${bare} did not resolve within ${timeoutMs} ms`);
      throw new OutboundFailed(`the host ${bare} did not resolve (${code ?? 'error'})`);
    }
    if (addresses.length === 0) throw new OutboundFailed(`the host ${bare} did not resolve`);
    if (!allowPrivate) {
      for (const { address } of addresses) {
        const range = addressRange(address);
        if (range !== 'unicast') throw new OutboundRefused(`the host ${bare} resolves to a ${range} address: only public addresses are fetched`);
      }
    }
    return addresses[0]!;
  }

  /** Fetches `url` under the rules above; throws OutboundRefused or OutboundFailed when no usable answer comes. */
  async fetch(url: URL, o: FetchOptions): Promise<OutboundAnswer> {
    const problem = urlProblem(url.href, o.allowPrivate);
    if (problem) throw new OutboundRefused(`the url ${problem}`);
    const deadline = Date.now() + o.timeoutMs;
    const left = () => Math.max(1, deadline - Date.now());
    const release = await this.takeShare(o.owner, deadline);
    try {
      const target = await this.resolveChecked(url.hostname, o.allowPrivate, left(), o.resolve);
      return await request(url, target, o, left(), o.timeoutMs);
    } finally {
      release();
    }
  }

  /** Fetches of `owner` running now in this process (tests, metrics). */
  running(owner: string): number {
    return this.shares.get(owner)?.running ?? 0;
  }

  /** Waits (until `deadline`) for a place in the owner's share; returns its release. */
  private async takeShare(owner: string, deadline: number): Promise<() => void> {
    let share = this.shares.get(owner);
    if (!share) this.shares.set(owner, (share = { running: 0, waiting: [] }));
    while (share.running >= this.settings.perOwner) {
      const s = share;
      const woken = await new Promise<boolean>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          resolve(true);
        };
        const timer = setTimeout(() => {
          s.waiting.splice(s.waiting.indexOf(wake), 1);
          resolve(false);
        }, Math.max(0, deadline - Date.now()));
        s.waiting.push(wake);
      });
      // Woken as the deadline passes (a running fetch timed out at about the same deadline): too little time
      // is left to resolve and connect (a loaded process took longer than a few ms), so it is busy all the
      // same, and the place goes to the next in line.
      if (!woken || deadline - Date.now() < TOO_LATE_TO_START_MS) {
        if (woken) s.waiting.shift()?.();
        this.forget(owner, s);
        throw new OutboundBusy(`${this.settings.perOwner} outbound requests of this user were running until the deadline: try again shortly`);
      }
    }
    share.running++;
    let released = false;
    const s = share;
    return () => {
      if (released) return;
      released = true;
      s.running--;
      s.waiting.shift()?.();
      this.forget(owner, s);
    };
  }

  private forget(owner: string, share: Share) {
    if (share.running === 0 && share.waiting.length === 0 && this.shares.get(owner) === share) this.shares.delete(owner);
  }
}

/** The media type of a content-type header, lower case; null when absent. */
const mediaType = (header: string | undefined) => (header ? header.split(';')[0]!.trim().toLowerCase() || null : null);

function request(url: URL, target: ResolvedAddress, o: FetchOptions, leftMs: number, timeoutMs: number): Promise<OutboundAnswer> {
  // The checked address, whatever the name resolves to by now.
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (err: null, addresses: ResolvedAddress[]) => void)(null, [target]);
    else callback(null, target.address, target.family);
  };
  const transport = url.protocol === 'https:' ? https : http;
  const headers: Record<string, string | number> = { 'user-agent': 'Axid/1', ...o.headers };
  if (o.body !== undefined) headers['content-length'] = Buffer.byteLength(o.body);
  return new Promise<OutboundAnswer>((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | null, answer?: OutboundAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(answer!);
      req.destroy();
    };
    const req = transport.request(url, {
      method: o.method ?? (o.body !== undefined ? 'POST' : 'GET'),
      // No pooled connection: each fetch resolves and checks again.
      agent: false,
      lookup,
      headers,
    });
    const timer = setTimeout(() => finish(new OutboundFailed(`no answer within ${timeoutMs} ms`)), leftMs);
    // Codes only: a socket error's message names the address it tried.
    req.on('error', (err: NodeJS.ErrnoException) => finish(new OutboundFailed(`the connection failed (${err.code ?? 'error'})`)));
    req.on('response', (res) => {
      const contentType = mediaType(res.headers['content-type']);
      if (o.contentTypes && (contentType === null || !o.contentTypes.includes(contentType))) {
        finish(new OutboundRefused(`the address answered ${contentType ?? 'no content type'}, not ${o.contentTypes.join(' or ')}`));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      const done = (truncated: boolean) => {
        const body = Buffer.concat(chunks);
        finish(null, { status: res.statusCode ?? 0, headers: res.headers, contentType, body: body.subarray(0, o.maxBytes), truncated });
      };
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size > o.maxBytes) {
          if (o.oversize === 'refuse') finish(new OutboundRefused(`the answer is larger than ${o.maxBytes} bytes`));
          else done(true);
        }
      });
      res.on('end', () => done(false));
      res.on('error', () => done(false));
      res.on('close', () => done(false));
    });
    req.end(o.body);
  });
}
