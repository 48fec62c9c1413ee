import type { Knex } from 'knex';

// Authority ends with whoever granted it (issue 33; docs/security.md,
// "Derived credentials"):
// - api_keys.parent_key_id: the key a key was made with (POST /api-keys, the
//   web key a sign-in link's code gives). Revoking a key revokes its
//   descendants; a child never expires after its parent.
// - sign_in_codes.created_by: who made a password-reset link, checked again
//   when the link is used (still there, still allowed to reset that person).
// - sign_in_codes.parent_key_id: the key a sign-in link was made with; the
//   key the link gives is its child.
// Reset links made before this have no maker to check: they go (they live a
// day; an admin makes a new one).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE api_keys ADD COLUMN parent_key_id uuid REFERENCES api_keys(id) ON DELETE CASCADE;
    -- revoking a key finds its children
    CREATE INDEX api_keys_parent ON api_keys (parent_key_id) WHERE parent_key_id IS NOT NULL;
    ALTER TABLE sign_in_codes
      ADD COLUMN created_by uuid REFERENCES users(id) ON DELETE CASCADE,
      ADD COLUMN parent_key_id uuid REFERENCES api_keys(id) ON DELETE CASCADE;
    CREATE INDEX sign_in_codes_created_by ON sign_in_codes (created_by) WHERE created_by IS NOT NULL;
    DELETE FROM sign_in_codes WHERE purpose = 'password_reset';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX IF EXISTS sign_in_codes_created_by;
    ALTER TABLE sign_in_codes DROP COLUMN IF EXISTS parent_key_id, DROP COLUMN IF EXISTS created_by;
    DROP INDEX IF EXISTS api_keys_parent;
    ALTER TABLE api_keys DROP COLUMN IF EXISTS parent_key_id;
  `);
}
