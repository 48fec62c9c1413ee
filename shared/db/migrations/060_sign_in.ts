import type { Knex } from 'knex';

// People signing in (contract §12, docs/security.md): an email and a password
// hash on users, invites, and the one-time codes that end in a key (the OIDC
// redirect, sign-in links, password-reset links). Tokens and codes are stored
// as SHA-256 hashes: they are 256-bit random, shown once.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE users ADD COLUMN email text, ADD COLUMN password_hash text;
    -- one address per active person in a workspace, whatever its case; sign-in looks it up
    CREATE UNIQUE INDEX users_workspace_email ON users (workspace_id, lower(email)) WHERE deactivated_at IS NULL AND email IS NOT NULL;
    CREATE INDEX users_email ON users (lower(email)) WHERE deactivated_at IS NULL AND email IS NOT NULL;

    CREATE TABLE invites (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      seq bigint GENERATED ALWAYS AS IDENTITY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      token_hash text NOT NULL UNIQUE,
      role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
      email text,
      created_by uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      used_by uuid REFERENCES users(id) ON DELETE SET NULL,
      revoked_at timestamptz
    );
    -- GET /invites walks the live ones by seq
    CREATE INDEX invites_workspace_live ON invites (workspace_id, seq) WHERE used_at IS NULL AND revoked_at IS NULL;
    CREATE INDEX invites_created_by ON invites (created_by) WHERE used_at IS NULL AND revoked_at IS NULL;

    CREATE TABLE sign_in_codes (
      code_hash text PRIMARY KEY,
      purpose text NOT NULL CHECK (purpose IN ('sign_in', 'password_reset')),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL
    );
    CREATE INDEX sign_in_codes_user ON sign_in_codes (user_id);
    CREATE INDEX sign_in_codes_expires ON sign_in_codes (expires_at);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE IF EXISTS sign_in_codes;
    DROP TABLE IF EXISTS invites;
    DROP INDEX IF EXISTS users_email;
    DROP INDEX IF EXISTS users_workspace_email;
    ALTER TABLE users DROP COLUMN IF EXISTS password_hash, DROP COLUMN IF EXISTS email;
  `);
}
