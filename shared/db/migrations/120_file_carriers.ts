import type { Knex } from 'knex';

// Files follow their conversations (level 3, contract §17): a file is read by
// whoever can read a conversation where a message carrying it was posted. A
// message carries a file by its metadata, `{type: "axid.file", data:
// {file_id}}` (the web app's attachment), so the carriers of a file are
// found by that expression; the index is partial, so messages that carry no
// file add nothing to it. Avatars uploaded as files (`avatar_url` naming
// `/api/v1/files/<id>`) stay readable by the workspace: their users are found
// by the id in that address.
export const CARRIED_FILE_ID = `(metadata->'data'->>'file_id')`;
export const CARRIES_A_FILE = `(metadata->>'type') = 'axid.file'`;
export const AVATAR_FILE_ID = `substring(avatar_url from '/api/v1/files/([0-9A-Fa-f-]{36})$')`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX messages_carried_file ON messages (${CARRIED_FILE_ID}) WHERE ${CARRIES_A_FILE};
    CREATE INDEX users_avatar_file ON users (${AVATAR_FILE_ID}) WHERE avatar_url LIKE '%/api/v1/files/%';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS messages_carried_file; DROP INDEX IF EXISTS users_avatar_file;');
}
