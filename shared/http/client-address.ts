// Who sent a request, for the per-address rate limit (shared/http/rate-limit.ts).
// X-Forwarded-For is believed only as far as TRUSTED_PROXIES reaches: read
// from the right, each hop added by a trusted proxy is skipped, and the first
// address not trusted is the client (proxy-addr, as Express reads it). With
// no trusted proxies (the default) the client is the socket's peer, and a
// client sending a fresh X-Forwarded-For per request is still one address.
// Koa's own `proxy: true` took the leftmost entry, which the client writes.
import proxyaddr from 'proxy-addr';
import type { Next } from 'koa';
import type { TrustedProxies } from '../config.js';
import type { AppContext } from './context.js';

export function trustFunction(trusted: TrustedProxies): (addr: string, hop: number) => boolean {
  if (typeof trusted === 'number') return (_addr, hop) => hop < trusted;
  return trusted.length === 0 ? () => false : proxyaddr.compile(trusted);
}

export function clientAddress(trusted: TrustedProxies) {
  const trust = trustFunction(trusted);
  return async function clientAddressMiddleware(ctx: AppContext, next: Next): Promise<void> {
    // A socket already closed has no peer address; proxy-addr then reads undefined.
    ctx.request.ip = ctx.req.socket.remoteAddress === undefined ? '' : proxyaddr(ctx.req, trust);
    await next();
  };
}
