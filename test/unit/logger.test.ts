// The logger redacts keys, hook ids and tokens wherever they sit in a line
// (shared/logger.ts); through the stack: test/api/logs.test.ts.
import { randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { createLogger } from '../../shared/logger.js';

describe('log redaction', () => {
  it('takes keys, hook ids and tokens out of paths, fields, error messages and stacks, and the message text; keeps UUIDs', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _e, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const log = createLogger('debug', sink);
    const key = `axid_${randomBytes(32).toString('base64url')}`;
    const hook = randomBytes(24).toString('base64url');
    const token = randomBytes(20).toString('hex');
    const id = randomUUID();
    const err = Object.assign(new Error(`invalid input syntax for type uuid: "${key}"`), { code: '22P02' });
    log.error({ err, path: `/hooks/compat/${hook}`, nested: { list: [`?code=${token}`] }, message_id: id }, `failed at /hooks/${hook}`);
    log.warn(`plain text with ${key}`);
    await new Promise((resolve) => setImmediate(resolve));
    const out = lines.join('');
    for (const secret of [key, key.slice(5), hook, token]) expect(out).to.not.include(secret);
    expect(out).to.include(id);
    expect(out).to.include('[redacted]');
    expect(out).to.include('22P02');
  });
});
