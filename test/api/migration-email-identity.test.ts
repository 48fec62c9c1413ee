// Migration 100 (shared/db/migrations/100_email_identity.ts) on a database
// with addresses stored before it: each gets the identity key the one
// normaliser makes, one that cannot be normalised gets none, and of two active
// people of a workspace whose addresses now meet, the older keeps the key.
import { expect } from 'chai';
import type { Knex } from 'knex';
import { createDb, ensureDatabase } from '../../shared/db/knex.js';
import { migrateLatest, migrationSource } from '../../shared/db/migrate.js';
import { migrations } from '../../shared/db/migrations/index.js';
import { testEnv, type TestEnv } from '../support/stack.js';

describe('migration 100: email identity keys', () => {
  let env: TestEnv;
  let db: Knex;

  before(async () => {
    env = testEnv();
    await ensureDatabase(env.config.databaseUrl);
    db = createDb(env.config.databaseUrl, 2);
  });
  after(async () => {
    await db?.destroy();
    await env?.cleanup();
  });

  it('keys every stored address by the normaliser, refuses the unsafe, and keeps a key for the oldest of two that meet', async () => {
    for (const name of Object.keys(migrations).filter((m) => m < '100')) await db.migrate.up({ migrationSource, name });
    const [ws] = await db('workspaces').insert({ name: 'w' }).returning('id');
    const [other] = await db('workspaces').insert({ name: 'o' }).returning('id');
    const user = async (workspace: string, name: string, email: string, deactivated = false) =>
      (await db('users').insert({ workspace_id: workspace, name, role: 'member', email, deactivated_at: deactivated ? new Date() : null }).returning('id'))[0].id as string;
    const kate = await user(ws.id, 'kate', 'Kate@Corp.TEST');
    const gone = await user(ws.id, 'gone', 'kate@corp.test', true);
    const elsewhere = await user(other.id, 'kate2', 'KATE@corp.test');
    const sharp = await user(ws.id, 'sharp', 'straße@corp.test');
    // Two active holders that meet under the new key: possible where the old index's lower() folded
    // otherwise (another collation); here made by taking that index away first.
    await db.raw('DROP INDEX users_workspace_email');
    const older = await user(ws.id, 'older', 'Ömer@corp.test');
    const newer = await user(ws.id, 'newer', 'ömer@corp.test');

    expect(await migrateLatest(db)).to.include('100_email_identity');
    const keys = Object.fromEntries((await db('users').select('id', 'email_key', 'email')).map((r) => [r.id, r.email_key]));
    expect(keys[kate]).to.equal('kate@corp.test');
    expect(keys[gone]).to.equal('kate@corp.test');
    expect(keys[elsewhere]).to.equal('kate@corp.test');
    expect(keys[sharp]).to.equal(null);
    expect(keys[older]).to.equal('ömer@corp.test');
    expect(keys[newer]).to.equal(null);
    // The addresses as typed stay; the unique index holds on the key.
    expect((await db('users').where({ id: kate }).first('email')).email).to.equal('Kate@Corp.TEST');
    const clash = db('users').insert({ workspace_id: ws.id, name: 'again', role: 'member', email: 'x', email_key: 'kate@corp.test' });
    await clash.then(
      () => expect.fail('a second active holder of one key'),
      (err: { constraint?: string }) => expect(err.constraint).to.equal('users_workspace_email'),
    );
  });
});
