import type { Knex } from 'knex';
import { emailIdentity } from '../../identity.js';

// One identity per email address (issue 33; shared/identity.ts): users get
// email_key, the address as the one identity normaliser makes it, and every
// comparison is equality on it. The indexes on lower(email) go: PostgreSQL's
// lower() folds some letters otherwise than JavaScript, so a spelling could
// find a person under one fold and be counted under another.
//
// Existing addresses are normalised here, by the same function. An address it
// refuses, or a second active person of a workspace whose address now has the
// same key as an older one's, gets no key: the address stays on the row (an
// owner or admin sees it and sets one that can be compared), but signs
// nobody in until then. The oldest holder keeps the key. They are found with
// `SELECT id, email FROM users WHERE email IS NOT NULL AND email_key IS NULL`.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE users ADD COLUMN email_key text');
  const rows: { id: string; workspace_id: string; email: string; active: boolean }[] = await knex('users')
    .whereNotNull('email')
    .orderBy('seq')
    .select('id', 'workspace_id', 'email', knex.raw('deactivated_at IS NULL AS active'));
  const held = new Set<string>();
  const keyed: [string, string][] = [];
  for (const row of rows) {
    const key = emailIdentity(row.email);
    if (!key) continue;
    if (row.active) {
      const slot = `${row.workspace_id}\n${key}`;
      if (held.has(slot)) continue;
      held.add(slot);
    }
    keyed.push([row.id, key]);
  }
  for (let i = 0; i < keyed.length; i += 1000) {
    const batch = keyed.slice(i, i + 1000);
    await knex.raw(
      `UPDATE users SET email_key = v.key FROM (VALUES ${batch.map(() => '(?::uuid, ?)').join(', ')}) AS v(id, key) WHERE users.id = v.id`,
      batch.flat(),
    );
  }
  await knex.raw(`
    DROP INDEX IF EXISTS users_workspace_email;
    DROP INDEX IF EXISTS users_email;
    -- one identity per active person in a workspace; sign-in and single sign-on look it up
    CREATE UNIQUE INDEX users_workspace_email ON users (workspace_id, email_key) WHERE deactivated_at IS NULL AND email_key IS NOT NULL;
    CREATE INDEX users_email_key ON users (email_key) WHERE deactivated_at IS NULL AND email_key IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX IF EXISTS users_email_key;
    DROP INDEX IF EXISTS users_workspace_email;
    ALTER TABLE users DROP COLUMN IF EXISTS email_key;
    CREATE UNIQUE INDEX users_workspace_email ON users (workspace_id, lower(email)) WHERE deactivated_at IS NULL AND email IS NOT NULL;
    CREATE INDEX users_email ON users (lower(email)) WHERE deactivated_at IS NULL AND email IS NOT NULL;
  `);
}
