// A limit checked before the work and counted after it is no limit (issue 33;
// docs/security.md, "Guessing"): concurrent guesses each take their slot before
// the password is hashed, so however many arrive at once, no more than the
// limit are checked, for one email, one client address, or one person's
// current password.
import { expect } from 'chai';
import { Client, serverLevels } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { separateStack } from '../support/separate-stack.js';
import { PASSWORD, personByInvite, uniqueEmail } from '../support/sign-in.js';
import { newWorkspace } from '../support/stack.js';

const LIMIT = 10;
const GUESSES = 50;

type Res = Awaited<ReturnType<Client['post']>>;
const tally = (answers: Res[]) => {
  const counts: Record<number, number> = {};
  for (const a of answers) counts[a.status] = (counts[a.status] ?? 0) + 1;
  return counts;
};

describe('sign-in attempts racing the limit (level 3)', function () {
  this.timeout(120_000);
  let s: Awaited<ReturnType<typeof separateStack>>;
  let address = 0;
  /** A client address of its own per test (the stack trusts the loopback proxy's X-Forwarded-For). */
  const nextAddress = () => `10.33.${Math.floor(++address / 250)}.${(address % 250) + 1}`;

  before(async () => {
    s = await separateStack({ FEATURE_LEVEL: '3', TRUSTED_PROXIES: '127.0.0.1', RATE_LIMIT_POINTS: '100000' });
    serverLevels.set(s.stack.url, '3');
  });
  after(async () => {
    serverLevels.delete(s.stack.url);
    await s.stop();
  });

  const signIn = (email: string, password: string, from: string) =>
    new Client(s.stack.url).request('POST', '/api/v1/auth/sign-in', { email, password }, { 'X-Forwarded-For': from });

  const checks = async () => (await s.stack.rt.metrics.passwordChecks.get()).values.find((v) => v.metricName === 'axid_password_check_seconds_count')!.value;

  it(`checks at most ${LIMIT} of ${GUESSES} concurrent guesses for one email from one address, the right password among them`, async () => {
    const person = await personByInvite(s.stack, await newWorkspace(s.stack));
    const from = nextAddress();
    const before = await checks();
    const answers = await Promise.all(Array.from({ length: GUESSES }, (_, i) => signIn(person.email, i === GUESSES / 2 ? PASSWORD : `wrong guess number ${i}`, from)));
    const counts = tally(answers);
    expect(Object.keys(counts).map(Number)).to.satisfy((statuses: number[]) => statuses.every((st) => [200, 401, 429].includes(st)));
    expect(counts[401] ?? 0, JSON.stringify(counts)).to.be.at.most(LIMIT);
    // A success gives its slot back, so at most one more attempt than the limit is checked.
    expect((counts[401] ?? 0) + (counts[200] ?? 0), JSON.stringify(counts)).to.be.at.most(LIMIT + 1);
    expect(counts[429] ?? 0).to.be.at.least(GUESSES - LIMIT - 1);
    expect((await checks()) - before, 'password hashes run').to.equal((counts[401] ?? 0) + (counts[200] ?? 0));
    for (const a of answers.filter((r) => r.status === 429)) expect(a.headers.get('retry-after')).to.match(/^\d+$/);
  });

  it('checks at most the limit for one email guessed from as many addresses as guesses', async () => {
    const person = await personByInvite(s.stack, await newWorkspace(s.stack));
    const answers = await Promise.all(Array.from({ length: GUESSES }, (_, i) => signIn(person.email, `wrong guess number ${i}`, nextAddress())));
    const counts = tally(answers);
    expect(counts[401] ?? 0, JSON.stringify(counts)).to.be.at.most(LIMIT);
    expect(counts[429] ?? 0).to.equal(GUESSES - (counts[401] ?? 0));
    // the right password past the limit, from a fresh address: refused unchecked
    const late = await signIn(person.email, PASSWORD, nextAddress());
    expect(late.status).to.equal(429);
  });

  it('checks at most the limit for as many emails as guesses from one address', async () => {
    const from = nextAddress();
    const answers = await Promise.all(Array.from({ length: GUESSES }, () => signIn(uniqueEmail('spray'), 'some password here', from)));
    const counts = tally(answers);
    expect(counts[401] ?? 0, JSON.stringify(counts)).to.be.at.most(LIMIT);
    expect(counts[429] ?? 0).to.equal(GUESSES - (counts[401] ?? 0));
  });

  it(`checks at most ${LIMIT} of ${GUESSES} concurrent current_password guesses on PATCH /users/me, the right one among them`, async () => {
    const person = await personByInvite(s.stack, await newWorkspace(s.stack));
    const from = nextAddress();
    const NEW = 'the new passphrase, long';
    const answers = await Promise.all(
      Array.from({ length: GUESSES }, (_, i) =>
        person.client.request('PATCH', '/api/v1/users/me', { password: NEW, current_password: i === GUESSES / 2 ? PASSWORD : `wrong guess number ${i}` }, { 'X-Forwarded-For': from }),
      ),
    );
    const counts = tally(answers);
    expect(Object.keys(counts).map(Number)).to.satisfy((statuses: number[]) => statuses.every((st) => [200, 400, 429].includes(st)));
    expect(counts[400] ?? 0, JSON.stringify(counts)).to.be.at.most(LIMIT);
    expect((counts[400] ?? 0) + (counts[200] ?? 0), JSON.stringify(counts)).to.be.at.most(LIMIT + 1);
    expect(counts[429] ?? 0).to.be.at.least(GUESSES - LIMIT - 1);
    // The password is the new one only if the right guess was among those checked.
    const current = counts[200] ? NEW : PASSWORD;
    expectOk(await signIn(person.email, current, nextAddress()));
  });

  it("gives a success its slot back: the email's count starts again, the address keeps its failures", async () => {
    const person = await personByInvite(s.stack, await newWorkspace(s.stack));
    const [a, b] = [nextAddress(), nextAddress()];
    for (let i = 0; i < LIMIT - 1; i++) expect((await signIn(person.email, 'a wrong password', a)).status).to.equal(401);
    expectOk(await signIn(person.email, PASSWORD, a));
    expect((await signIn(person.email, 'a wrong password', a)).status, "the address's 10th failure").to.equal(401);
    expect((await signIn(person.email, 'a wrong password', b)).status, "the email's count started again").to.equal(401);
    expect((await signIn(person.email, PASSWORD, a)).status, 'the address used its 10').to.equal(429);
    expectOk(await signIn(person.email, PASSWORD, b));
  });
});
