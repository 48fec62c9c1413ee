// One identity per email address (issue 33; docs/security.md, "One identity"),
// through every path: for every code point whose case PostgreSQL and
// JavaScript fold differently, every one whose case mappings merge distinct
// strings (a dotless i, a long s, a final sigma, a sharp s, ...), and
// compatibility characters that look like letters (a Kelvin sign, fullwidth
// letters), each spelling of an address is refused everywhere (400, or
// `email_unsupported` from single sign-on), or is one identity everywhere:
// single sign-on matches the same person, a password signs in the same
// person, and failed attempts count together. The exhaustive property of the
// normaliser itself: test/unit/identity.test.ts.
import { expect } from 'chai';
import { Client, serverLevels } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { signInWithoutBrowser, sparePort, startTestProvider, type TestProvider } from '../support/oidc-provider.js';
import { separateStack } from '../support/separate-stack.js';
import { PASSWORD } from '../support/sign-in.js';

const LIMIT = 10;
const lowerEach = (s: string) => Array.from(s, (c) => c.toLowerCase()).join('');
/** Compatibility characters that read as letters, and their neighbours. */
const LOOKALIKES = ['\u212A', '\u212B', '\u2126', '\uFF21', '\uFF4B', '\u017F', '\uFB01', '\u{1D400}', '\u24B6', '\u01C5', '\u1E9E'];

describe('one identity per email address, through every path (level 3)', function () {
  this.timeout(900_000);
  let provider: TestProvider;
  let s: Awaited<ReturnType<typeof separateStack>>;
  let anon: Client;
  let address = 0;
  let login = 0;
  const nextAddress = () => `10.44.${Math.floor(++address / 250) % 250}.${(address % 250) + 1}`;

  before(async () => {
    const port = await sparePort();
    const base = `http://127.0.0.1:${port}`;
    provider = await startTestProvider([`${base}/api/v1/auth/oidc/callback`]);
    s = await separateStack({
      FEATURE_LEVEL: '3',
      PORT: String(port),
      PUBLIC_BASE_URL: base,
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: provider.clientId,
      OIDC_CLIENT_SECRET: provider.clientSecret,
      OIDC_NAME: 'Test IdP',
      OIDC_AUTO_CREATE: 'true',
      TRUSTED_PROXIES: '127.0.0.1',
      RATE_LIMIT_POINTS: '1000000',
    });
    serverLevels.set(s.stack.url, '3');
    anon = new Client(s.stack.url);
  });
  after(async () => {
    if (s) serverLevels.delete(s.stack.url);
    await s?.stop();
    await provider?.close();
  });

  const signIn = (email: string, password: string) => anon.request('POST', '/api/v1/auth/sign-in', { email, password }, { 'X-Forwarded-For': nextAddress() });

  /** Single sign-on as a person the provider vouches for with `email`: the user it signed in (made if new), or the error code. */
  async function sso(email: string): Promise<{ userId: string; key: string } | { error: string }> {
    const sub = `person-${process.pid}-${++login}`;
    provider.people.set(sub, { email, email_verified: true });
    const location = await signInWithoutBrowser(s.stack.url, sub);
    const error = /^\/#sign_in_error=(\w+)$/.exec(location)?.[1];
    if (error) return { error };
    const code = /^\/#code=([\w-]+)$/.exec(location)?.[1];
    if (!code) throw new Error(`unexpected callback: ${location}`);
    const signedIn = expectOk(await anon.post('/api/v1/auth/exchange', { code })).data;
    return { userId: signedIn.user.id, key: signedIn.api_key.key };
  }

  it('every spelling of an address is one identity in every path, or refused in every path', async () => {
    // Where PostgreSQL's lower()/upper() and JavaScript's differ, found by asking PostgreSQL about every code point with case.
    const { rows } = await s.stack.rt.db.raw<{ rows: { cp: number; l: string; u: string }[] }>(
      `SELECT cp, lower(chr(cp)) AS l, upper(chr(cp)) AS u FROM generate_series(128, 1114111) AS cp
        WHERE (cp < 55296 OR cp > 57343) AND (lower(chr(cp)) <> chr(cp) OR upper(chr(cp)) <> chr(cp))`,
    );
    const pg = new Map(rows.map((r) => [r.cp, r]));
    const chars = new Set<string>(LOOKALIKES);
    for (const r of rows) {
      const c = String.fromCodePoint(r.cp);
      if (c.toLowerCase() !== r.l || c.toUpperCase() !== r.u) chars.add(c);
    }
    const pgDiffers = chars.size - LOOKALIKES.length;
    for (let cp = 128; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      if (c.toUpperCase().toLowerCase() !== c.toLowerCase()) chars.add(c); // distinct strings one fold merges
    }
    expect(pgDiffers, 'code points PostgreSQL folds otherwise').to.be.greaterThan(10);

    let n = 0;
    const tally = { refusedEverywhere: 0, sameEverywhere: 0, distinctEverywhere: 0 };
    const check = async (c: string) => {
      const id = ++n;
      const p = pg.get(c.codePointAt(0)!);
      const spellings = [...new Set([c, c.toLowerCase(), c.toUpperCase(), p?.l ?? c, p?.u ?? c, c.normalize('NFKC'), lowerEach(c.normalize('NFKC')), c.toUpperCase().toLowerCase()])];
      const emailOf = (v: string) => `p${v}q.${process.pid}.${id}@identity.test`;
      const at = `U+${c.codePointAt(0)!.toString(16)}`;

      // Single sign-on, in order: the first spelling it takes makes the person (auto-create); later ones match them or not.
      const viaSso = new Map<string, string>();
      let home: { spelling: string; userId: string; key: string } | undefined;
      for (const v of spellings) {
        const r = await sso(emailOf(v));
        if ('error' in r) {
          expect(r.error, `${at} ${JSON.stringify(v)}`).to.equal('email_unsupported');
          viaSso.set(v, 'refused');
        } else {
          home ??= { spelling: v, ...r };
          viaSso.set(v, r.userId === home.userId ? 'same' : 'distinct');
        }
      }
      if (!home) {
        for (const v of spellings) expect((await signIn(emailOf(v), PASSWORD)).status, `${at} ${JSON.stringify(v)}`).to.equal(400);
        tally.refusedEverywhere += spellings.length;
        return;
      }
      expectOk(await new Client(s.stack.url, home.key).patch('/api/v1/users/me', { password: PASSWORD }));

      // A password: refused where single sign-on refused, the same person where it matched, nobody else's account otherwise.
      const others = spellings.filter((v) => v !== home!.spelling);
      let same = 0;
      for (const v of others) {
        const res = await signIn(emailOf(v), PASSWORD);
        const kind = viaSso.get(v) as 'refused' | 'same' | 'distinct';
        const expected = { refused: 400, same: 200, distinct: 401 }[kind];
        expect(res.status, `${at} ${JSON.stringify(v)} (single sign-on: ${viaSso.get(v)})`).to.equal(expected);
        if (res.status === 200) {
          expect(res.body.data.user.id).to.equal(home.userId);
          same++;
        }
        tally[({ refused: 'refusedEverywhere', same: 'sameEverywhere', distinct: 'distinctEverywhere' } as const)[kind]]++;
      }
      if (!others.some((v) => viaSso.get(v) !== 'refused')) return;

      // Failed attempts: one with each spelling taken; those of the same identity count against the home spelling's limit, the others not.
      for (const v of others) if (viaSso.get(v) !== 'refused') expect((await signIn(emailOf(v), 'a wrong password')).status).to.equal(401);
      for (let i = 0; i < LIMIT - same; i++) expect((await signIn(emailOf(home.spelling), 'a wrong password')).status, `${at}: attempt ${i + 1} of its own`).to.equal(401);
      expect((await signIn(emailOf(home.spelling), PASSWORD)).status, `${at}: ${same} attempts of other spellings counted with it`).to.equal(429);
    };
    const queue = [...chars];
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let c = queue.shift(); c !== undefined; c = queue.shift()) await check(c);
      }),
    );
    console.log(`      ${chars.size} code points (${pgDiffers} folded otherwise by PostgreSQL): spellings refused everywhere ${tally.refusedEverywhere}, one identity everywhere ${tally.sameEverywhere}, distinct everywhere ${tally.distinctEverywhere}`);
    expect(tally.sameEverywhere, 'case spellings that are one identity').to.be.greaterThan(10);
  });

  it("the issue's cases: a dotted capital I and a Kelvin sign neither reach nor share a count with the ASCII address", async () => {
    for (const [ascii, lookalike] of [['info', 'İnfo'], ['kate', '\u212Aate']] as const) {
      const email = `${ascii}.${process.pid}.${++login}@identity.test`;
      const person = await sso(email);
      expect(person).to.have.property('userId');
      expectOk(await new Client(s.stack.url, (person as { key: string }).key).patch('/api/v1/users/me', { password: PASSWORD }));
      const spelled = email.replace(ascii, lookalike);
      expect((await signIn(spelled, PASSWORD)).status).to.equal(400);
      expect(await sso(spelled)).to.deep.equal({ error: 'email_unsupported' });
      expect(expectOk(await signIn(email.toUpperCase(), PASSWORD)).data.user.id).to.equal((person as { userId: string }).userId);
    }
  });
});
