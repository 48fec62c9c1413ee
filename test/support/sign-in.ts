// Helpers for the sign-in tests (contract §12, level 3).
import { Redis } from 'ioredis';
import type { Stack } from '../../services/stack.js';
import { Client } from './client.js';
import { uniqueName, type TestWorkspace } from './stack.js';

export const PASSWORD = 'correct horse battery';

/** A fresh address nobody in the run has. */
export const uniqueEmail = (base = 'person') => `${uniqueName(base)}@example.test`.toLowerCase();

/**
 * Forgets failed sign-ins counted in Redis: every test signs in from
 * 127.0.0.1, so one test's failures would count against the next's.
 */
export async function clearSignInFailures(s: Stack): Promise<void> {
  const redis = new Redis(s.rt.config.redisUrl);
  try {
    const found = await redis.keys(`${s.rt.config.redisKeyPrefix}rlsign-in*`);
    if (found.length) await redis.del(...found);
  } finally {
    redis.disconnect();
  }
}

/** An invite link's token (from its fragment) made by `by`. */
export async function invite(by: Client, body: Record<string, unknown> = {}) {
  const res = await by.post('/api/v1/invites', body);
  if (res.status !== 201) throw new Error(`invite failed: ${res.status} ${res.text}`);
  return { id: res.body.data.id as string, token: new URL(res.body.data.url).hash.replace(/^#invite=/, ''), body: res.body.data };
}

/** A person who joined `ws` by invite, with a password; their client holds their first web key. */
export async function personByInvite(s: Stack, ws: TestWorkspace, o: { role?: string } = {}) {
  const { token } = await invite(ws.owner, { role: o.role });
  const email = uniqueEmail();
  const res = await new Client(s.url).post('/api/v1/auth/accept-invite', { token, name: uniqueName('person'), email, password: PASSWORD });
  if (res.status !== 201) throw new Error(`accept failed: ${res.status} ${res.text}`);
  return { id: res.body.data.user.id as string, email, key: res.body.data.api_key.key as string, client: new Client(s.url, res.body.data.api_key.key) };
}
