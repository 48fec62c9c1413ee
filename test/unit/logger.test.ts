// The logger redacts what the app's secrets look like wherever they sit in a
// line (shared/logger.ts), and nothing else: names of things (migrations, job
// ids, UUIDs, routes) are kept. Through the stack: test/api/logs.test.ts.
import { randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { createLogger } from '../../shared/logger.js';
import { migrations } from '../../shared/db/migrations/index.js';

/** A logger writing into `lines` (one parsed object per line). */
function capture() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _e, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const flushed = () => new Promise((resolve) => setImmediate(resolve));
  return { log: createLogger('debug', sink), lines, flushed };
}

// The formats the app issues (shared/auth.ts, webhooks.service.ts, codes.store.ts, event-subscriptions.signature.ts).
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const secrets = () => ({
  key: `axid_${randomBytes(32).toString('base64url')}`,
  signingSecret: `axsec_${Array.from(randomBytes(43), (b) => BASE62[b % 62]).join('')}`,
  hookId: randomBytes(24).toString('base64url'),
  code: randomBytes(32).toString('base64url'),
  // An identity provider's authorization code has a format of its own (here short hex): known by its parameter's name.
  idpCode: randomBytes(8).toString('hex'),
});

describe('log redaction', () => {
  it('takes keys, signing secrets, hook ids, codes and tokens out of paths, queries, fields, error messages, stacks and the message text', async () => {
    // Many draws: a random secret must never slip through, whatever its characters.
    for (let i = 0; i < 200; i++) {
      const { log, lines, flushed } = capture();
      const s = secrets();
      const err = Object.assign(new Error(`invalid input syntax for type uuid: "${s.key}"`), { code: '22P02' });
      log.error(
        {
          err,
          path: `/hooks/compat/${s.hookId}`,
          native: `/hooks/${s.hookId}`,
          url: `/api/v1/auth/oidc/callback?code=${s.idpCode}&state=${s.code}`,
          link: `https://chat.example/#key=${s.key}`,
          nested: { list: [`secret ${s.signingSecret}`, { headers: { authorization: `Bearer ${s.key}` } }] },
          password: 'short words',
        },
        `failed at /hooks/${s.hookId} with ${s.code}`,
      );
      log.warn(`plain text with ${s.key.slice(5)}`);
      await flushed();
      const out = lines.join('\n');
      for (const secret of [s.key, s.key.slice(5), s.signingSecret, s.hookId, s.code, s.idpCode, 'short words']) expect(out, `draw ${i}`).to.not.include(secret);
      expect(out).to.include('22P02');
      expect(out).to.include('/hooks/compat/[redacted]');
    }
  });

  it('keeps migration names, job ids, UUIDs, routes and other ordinary names', async () => {
    const { log, lines, flushed } = capture();
    const applied = Object.keys(migrations);
    const id = randomUUID();
    const kept = [
      ...applied,
      id,
      id.toUpperCase(),
      `file.postprocess-${id}`,
      'messages.finish_stale_streams',
      '/api/v1/channels/{channel_id}/messages',
      '/hooks/compat/{webhook_id}',
      'ERR_STREAM_PREMATURE_CLOSE',
      'processTicksAndRejections',
      '0123456789abcdef0123456789abcdef', // a hex digest (what is stored of a key, not the key)
    ];
    log.info({ applied, id, job: `file.postprocess-${id}`, code: 'validation_error' }, 'migrations applied');
    log.info({ kept }, `kept: ${kept.join(' ')}`);
    await flushed();
    const out = lines.join('\n');
    expect(out).to.not.include('[redacted]');
    for (const name of kept) expect(out).to.include(name);
    expect(applied.some((name) => name.length >= 20), 'a migration name of 20+ characters is among them').to.equal(true);
    expect(out).to.include('"code":"validation_error"');
  });
});
