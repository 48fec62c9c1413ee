import type { Knex } from 'knex';

// OAuth for the remote MCP endpoint (contract §15; docs/mcp.md, docs/security.md
// "OAuth for MCP clients"):
// - oauth_clients: clients registered dynamically (RFC 7591). All are public
//   clients (PKCE, no secret), so nothing secret is kept about them.
// - oauth_authorizations: one authorization request from /authorize, decided
//   on the consent screen by a signed-in person; approval sets a one-time code
//   (its SHA-256 only), valid a minute, used at most once (used_at).
// - oauth_grants: what the token endpoint gave a client: the current access
//   key (an API key made from the consenting key, so it ends with it) and the
//   refresh token's hash, replaced at every refresh.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE oauth_clients (
      client_id text PRIMARY KEY,
      client_name text,
      redirect_uris text[] NOT NULL,
      metadata jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE oauth_authorizations (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      client_id text NOT NULL REFERENCES oauth_clients(client_id) ON DELETE CASCADE,
      redirect_uri text NOT NULL,
      code_challenge text NOT NULL,
      state text,
      scopes text[] NOT NULL,
      resource text,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      decided_at timestamptz,
      user_id uuid REFERENCES users(id) ON DELETE CASCADE,
      parent_key_id uuid REFERENCES api_keys(id) ON DELETE CASCADE,
      granted_scopes text[],
      conversation_ids uuid[],
      code_hash text UNIQUE,
      code_expires_at timestamptz,
      used_at timestamptz,
      key_id uuid REFERENCES api_keys(id) ON DELETE SET NULL
    );
    CREATE INDEX oauth_authorizations_expires ON oauth_authorizations (expires_at);
    CREATE TABLE oauth_grants (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      client_id text NOT NULL REFERENCES oauth_clients(client_id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      parent_key_id uuid NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
      key_id uuid NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
      refresh_token_hash text NOT NULL UNIQUE,
      scopes text[],
      conversation_ids uuid[],
      created_at timestamptz NOT NULL DEFAULT now(),
      refreshed_at timestamptz,
      expires_at timestamptz NOT NULL
    );
    CREATE INDEX oauth_grants_key ON oauth_grants (key_id);
    CREATE INDEX oauth_grants_expires ON oauth_grants (expires_at);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE IF EXISTS oauth_grants;
    DROP TABLE IF EXISTS oauth_authorizations;
    DROP TABLE IF EXISTS oauth_clients;
  `);
}
