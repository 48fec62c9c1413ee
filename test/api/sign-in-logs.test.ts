// What sign-in leaves in the logs (docs/security.md, "What never reaches a
// log"): a stack at level 3 logging at debug (one access-log line per
// request) into memory, through invites, password sign-ins (right and wrong),
// a password change, sign-in and reset links and their exchange: no
// password, invite token, one-time code or key appears in any line, and the
// attempts are logged with their outcome.
import { expect } from 'chai';
import { pino } from 'pino';
import { startStack, type Stack } from '../../services/stack.js';
import { createWorkspaceWithOwner } from '../../services/core/workspaces/workspaces.service.js';
import { Client, serverLevels } from '../support/client.js';
import { testEnv, uniqueName, type TestEnv } from '../support/stack.js';
import { uniqueEmail } from '../support/sign-in.js';

describe('sign-in logs (level 3)', () => {
  const lines: string[] = [];
  let s: Stack;
  let env: TestEnv;

  before(async () => {
    env = testEnv({ FEATURE_LEVEL: '3', LOG_LEVEL: 'debug' });
    const log = pino({ level: 'debug', redact: { paths: ['req.headers.authorization', 'key', 'api_key'], censor: '[redacted]' } }, { write: (line: string) => void lines.push(line) });
    s = await startStack(env.config, log);
    serverLevels.set(s.url, '3');
  });
  after(async () => {
    serverLevels.delete(s.url);
    await s?.close();
    await env?.cleanup();
  });

  it('never logs a password, an invite token, a one-time code or a key, and logs each attempt', async () => {
    const created = await createWorkspaceWithOwner(s.rt.db, { name: uniqueName('ws'), ownerName: uniqueName('owner') });
    const owner = new Client(s.url, created.key);
    const anon = new Client(s.url);
    const secrets: string[] = [created.key];
    const PASSWORD = 'a very secret passphrase 1';
    const NEW = 'another secret passphrase 2';
    secrets.push(PASSWORD, NEW);

    const invite = (await owner.post('/api/v1/invites', {})).body.data;
    const token = new URL(invite.url).hash.replace('#invite=', '');
    secrets.push(token);
    const email = uniqueEmail('logged');
    const joined = (await anon.post('/api/v1/auth/accept-invite', { token, name: uniqueName('p'), email, password: PASSWORD })).body.data;
    secrets.push(joined.api_key.key);
    expect((await anon.post('/api/v1/auth/sign-in', { email, password: 'wrong but secret-ish 3' })).status).to.equal(401);
    secrets.push('wrong but secret-ish 3');
    const signed = (await anon.post('/api/v1/auth/sign-in', { email, password: PASSWORD })).body.data;
    secrets.push(signed.api_key.key);
    const person = new Client(s.url, signed.api_key.key);
    expect((await person.patch('/api/v1/users/me', { password: NEW, current_password: PASSWORD })).status).to.equal(200);

    const link = (await person.post('/api/v1/auth/links')).body.data;
    const code = new URL(link.url).hash.replace('#code=', '');
    secrets.push(code);
    const exchanged = (await anon.post('/api/v1/auth/exchange', { code })).body.data;
    secrets.push(exchanged.api_key.key);
    expect((await anon.post('/api/v1/auth/exchange', { code })).status).to.equal(401);
    const reset = (await owner.post(`/api/v1/workspaces/current/members/${joined.user.id}/password-reset`)).body.data;
    const resetCode = new URL(reset.url).hash.replace('#reset=', '');
    secrets.push(resetCode);
    expect((await anon.post('/api/v1/auth/reset-password', { code: resetCode, password: PASSWORD })).status).to.equal(200);

    const text = lines.join("");
    expect(lines.filter((l) => l.includes('"msg":"request"')).length, 'the access log ran').to.be.at.least(10);
    for (const secret of secrets) expect(text.includes(secret), `a log line holds ${secret.slice(0, 6)}…`).to.equal(false);
    expect(text.includes(email), 'the email typed').to.equal(false);
    const attempts = lines.map((l) => JSON.parse(l) as { msg: string; method?: string; outcome?: string }).filter((l) => l.msg === 'sign-in');
    expect(attempts.map((a) => `${a.method}:${a.outcome}`)).to.include.members(['password:invalid_credentials', 'password:ok', 'code:ok']);
    const metrics = await s.rt.metrics.registry.getSingleMetricAsString('axid_sign_in_attempts_total');
    expect(metrics).to.match(/method="password",outcome="invalid_credentials"\} 1/);
    expect(metrics).to.match(/method="invite",outcome="ok"\} 1/);
  });
});
