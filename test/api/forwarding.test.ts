// Forwarding headers are believed only from TRUSTED_PROXIES
// (shared/http/client-address.ts): a client sending a fresh X-Forwarded-For
// per request, with made-up keys or hook ids, is still one address to the
// per-address rate limit. The test client connects from 127.0.0.1.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Client } from '../support/client.js';
import { separateStack } from '../support/separate-stack.js';

const POINTS = 4;
// Never 10.x: the trusted proxies of these tests are 10.0.0.0/8 (a client there would be skipped as a hop, 1 run in 220).
const randomAddress = () => `${11 + (randomBytes(1)[0]! % 200)}.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${1 + (randomBytes(1)[0]! % 250)}`;
const randomV6 = () => `2001:db8::${randomBytes(2).toString('hex')}`;

/** Forgeries a client may send: each request a fresh address, in each header a proxy might read. */
const FORGERIES: Array<() => Record<string, string>> = [
  () => ({ 'x-forwarded-for': randomAddress() }),
  () => ({ 'x-forwarded-for': `${randomAddress()}, ${randomAddress()}` }),
  () => ({ 'x-forwarded-for': randomV6() }),
  () => ({ 'x-real-ip': randomAddress() }),
  () => ({ forwarded: `for=${randomAddress()}` }),
  () => ({ 'x-forwarded-for': randomAddress(), 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' }),
];

/** Requests keyed by address: no key, a made-up key, a made-up hook id. */
const REQUESTS: Array<(c: Client, h: Record<string, string>) => Promise<{ status: number }>> = [
  (c, h) => c.get('/api/v1/users/me', h),
  (c, h) => c.get('/api/v1/users/me', { ...h, authorization: `Bearer axid_${randomBytes(24).toString('hex')}` }),
  (c, h) => c.post(`/hooks/${randomBytes(12).toString('hex')}`, { text: 'x' }, h),
];

async function statuses(c: Client, n: number, headers: (i: number) => Record<string, string>) {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await REQUESTS[i % REQUESTS.length]!(c, headers(i))).status);
  return out;
}

describe('forwarding headers (TRUSTED_PROXIES)', () => {
  describe('unset (the default): no proxy is trusted', () => {
    let s: Awaited<ReturnType<typeof separateStack>>;
    before(async () => {
      s = await separateStack({ RATE_LIMIT_POINTS: String(POINTS), RATE_LIMIT_DURATION: '60' });
    });
    after(async () => s?.stop());

    it('counts a client forging a fresh address per request (X-Forwarded-For, X-Real-IP, Forwarded; v4, v6, chains) against its own address', async () => {
      const got = await statuses(new Client(s.stack.url), POINTS + FORGERIES.length * 2, (i) => FORGERIES[i % FORGERIES.length]!());
      expect(got.slice(0, POINTS).every((x) => x !== 429), got.join(',')).to.equal(true);
      expect(got.slice(POINTS).every((x) => x === 429), got.join(',')).to.equal(true);
    });
  });

  describe('a list: only those proxies are believed', () => {
    let s: Awaited<ReturnType<typeof separateStack>>;
    before(async () => {
      s = await separateStack({ RATE_LIMIT_POINTS: String(POINTS), RATE_LIMIT_DURATION: '60', TRUSTED_PROXIES: '10.0.0.0/8, 127.0.0.1' });
    });
    after(async () => s?.stop());

    it('takes the client from the right: the address the trusted proxy appended, whatever the client wrote before it', async () => {
      const client = randomAddress();
      const got = await statuses(new Client(s.stack.url), POINTS + 3, () => ({ 'x-forwarded-for': `${randomAddress()}, ${client}` }));
      expect(got.slice(0, POINTS).every((x) => x !== 429)).to.equal(true);
      expect(got.slice(POINTS)).to.deep.equal([429, 429, 429]);
    });

    it('skips every trusted hop (10.x here) and gives clients behind it a budget each', async () => {
      const a = randomAddress();
      const b = randomAddress();
      const got = await statuses(new Client(s.stack.url), POINTS + 2, () => ({ 'x-forwarded-for': `${a}, 10.1.2.3` }));
      expect(got.slice(POINTS)).to.deep.equal([429, 429]);
      expect((await statuses(new Client(s.stack.url), 1, () => ({ 'x-forwarded-for': `${b}, 10.1.2.3` })))[0]).to.not.equal(429);
    });
  });

  describe('a list not holding the peer', () => {
    let s: Awaited<ReturnType<typeof separateStack>>;
    before(async () => {
      s = await separateStack({ RATE_LIMIT_POINTS: String(POINTS), RATE_LIMIT_DURATION: '60', TRUSTED_PROXIES: '10.0.0.0/8' });
    });
    after(async () => s?.stop());

    it('ignores X-Forwarded-For from an untrusted peer', async () => {
      const got = await statuses(new Client(s.stack.url), POINTS + 2, () => ({ 'x-forwarded-for': `${randomAddress()}, 10.9.9.9` }));
      expect(got.slice(POINTS)).to.deep.equal([429, 429]);
    });
  });

  describe('a hop count', () => {
    let s: Awaited<ReturnType<typeof separateStack>>;
    before(async () => {
      s = await separateStack({ RATE_LIMIT_POINTS: String(POINTS), RATE_LIMIT_DURATION: '60', TRUSTED_PROXIES: '1' });
    });
    after(async () => s?.stop());

    it('believes exactly one hop: the last entry is the client, entries before it are the client\'s own', async () => {
      const client = randomAddress();
      const got = await statuses(new Client(s.stack.url), POINTS + 2, () => ({ 'x-forwarded-for': `${randomAddress()}, ${client}` }));
      expect(got.slice(POINTS)).to.deep.equal([429, 429]);
      const fresh = await statuses(new Client(s.stack.url), 1, () => ({ 'x-forwarded-for': randomAddress() }));
      expect(fresh[0]).to.not.equal(429);
    });
  });
});
