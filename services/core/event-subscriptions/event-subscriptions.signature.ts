// Axid-Signature (contract §11), Stripe's scheme: `t=<unix seconds>,v1=<hex
// HMAC-SHA256 of "<t>.<raw body>">`, one v1 per live secret during a rotation.
// Receivers check one v1 in constant time and refuse a t older than 5 minutes
// (docs/bots.md has a receiver; the serverless starters carry one).
import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';

/** The tolerance receivers should apply to `t` (contract §11). */
export const SIGNATURE_TOLERANCE_S = 300;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `axsec_` + 43 base62 characters (about 256 bits). */
export function newSecret(): string {
  let out = 'axsec_';
  for (let i = 0; i < 43; i++) out += BASE62[randomInt(62)];
  return out;
}

const hmac = (secret: string, t: number, body: string) => createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');

export function signatureHeader(secrets: string[], body: string, t: number = Math.floor(Date.now() / 1000)): string {
  return [`t=${t}`, ...secrets.map((s) => `v1=${hmac(s, t, body)}`)].join(',');
}

/** Checks a header as a receiver should: one v1 matching in constant time, `t` within the tolerance. */
export function verifySignature(header: string, body: string, secret: string, now: number = Math.floor(Date.now() / 1000)): boolean {
  const parts = header.split(',').map((p) => p.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t) || Math.abs(now - t) > SIGNATURE_TOLERANCE_S) return false;
  const expected = Buffer.from(hmac(secret, t, body), 'hex');
  return parts.some(([k, v]) => {
    if (k !== 'v1' || !v || !/^[0-9a-f]{64}$/.test(v)) return false;
    return timingSafeEqual(Buffer.from(v, 'hex'), expected);
  });
}
