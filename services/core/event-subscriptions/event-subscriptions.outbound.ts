// The one way the service POSTs to a subscriber's address, so that it cannot
// be aimed at our own network (contract §11): the host is resolved and every
// address checked (ipaddr.js names its range; only public unicast passes
// unless EVENT_SUBSCRIPTION_ALLOW_PRIVATE), the connection goes to the address
// that was checked (a lookup that answers it, so a second resolution cannot
// rebind the name), redirects are not followed, the whole attempt is
// time-boxed and the answer read up to a small limit.
import dns from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/** An address refused by the rule above: recorded, never retried. */
export class RefusedAddress extends Error {}

/** The attempt failed before an answer came (timeout, refused connection, unknown host). */
export class DeliveryFailed extends Error {}

/** At most this much of an answer is read (the challenge is all we ever look at). */
export const MAX_ANSWER_BYTES = 16 * 1024;

export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

const systemResolver: Resolver = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/** The range ipaddr.js gives an address ('unicast' for a public one); IPv4-mapped IPv6 is judged as its IPv4. */
export function addressRange(address: string): string {
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  return ip.range();
}

/** Whether a subscriber URL may be used at all: its scheme and form (the address is checked separately). */
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

/**
 * Resolves the host and checks every address it gives (a name with one
 * private address among public ones is refused: the connection could go to
 * either). Returns the address to connect to.
 */
export async function resolveChecked(hostname: string, allowPrivate: boolean, resolve: Resolver = systemResolver): Promise<{ address: string; family: number }> {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  let addresses: { address: string; family: number }[];
  if (ipaddr.isValid(bare)) {
    addresses = [{ address: bare, family: ipaddr.parse(bare).kind() === 'ipv6' ? 6 : 4 }];
  } else {
    try {
      addresses = await resolve(bare);
    } catch (err) {
      throw new DeliveryFailed(`the host ${bare} did not resolve (${(err as { code?: string }).code ?? 'error'})`);
    }
  }
  if (addresses.length === 0) throw new DeliveryFailed(`the host ${bare} did not resolve`);
  if (!allowPrivate) {
    for (const { address } of addresses) {
      const range = addressRange(address);
      if (range !== 'unicast') {
        throw new RefusedAddress(`the host ${bare} is (or resolves to) ${address}, a ${range} address: only public addresses receive events`);
      }
    }
  }
  return addresses[0]!;
}

export interface PostOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  headers?: Record<string, string>;
  /** The resolver (tests give one that answers differently the second time). */
  resolve?: Resolver;
}

export interface Answer {
  status: number;
  /** The first MAX_ANSWER_BYTES of the body. */
  body: string;
}

/** POSTs `body` to `url` under the rules above; throws RefusedAddress or DeliveryFailed when no answer comes. */
export async function postJson(url: URL, body: string, o: PostOptions): Promise<Answer> {
  const deadline = Date.now() + o.timeoutMs;
  const target = await resolveChecked(url.hostname, o.allowPrivate, o.resolve);
  // The checked address, whatever the name resolves to by now.
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (err: null, addresses: { address: string; family: number }[]) => void)(null, [target]);
    else callback(null, target.address, target.family);
  };
  const transport = url.protocol === 'https:' ? https : http;
  const left = Math.max(1, deadline - Date.now());
  return new Promise<Answer>((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | null, answer?: Answer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(answer!);
    };
    const req = transport.request(url, {
      method: 'POST',
      // No pooled connection: each attempt resolves and checks again.
      agent: false,
      lookup,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'Axid-Events/1', ...o.headers },
    });
    const timer = setTimeout(() => {
      finish(new DeliveryFailed(`no answer within ${o.timeoutMs} ms`));
      req.destroy();
    }, left);
    req.on('error', (err: NodeJS.ErrnoException) => finish(new DeliveryFailed(`the connection failed (${err.code ?? err.message})`)));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => {
        finish(null, { status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8', 0, Math.min(size, MAX_ANSWER_BYTES)) });
        res.destroy();
      };
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= MAX_ANSWER_BYTES) done();
      });
      res.on('end', done);
      res.on('error', () => done());
      res.on('close', done);
    });
    req.end(body);
  });
}
