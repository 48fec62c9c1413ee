import type { Knex } from 'knex';

// The last foreign key on messages (005 dropped author_id's and
// workspace_id's for the same reason). Its check share-locks the channel row
// on every post, and the posts of one channel lock the same row at once, so
// each post wrote a row lock and a new multixact: 130 of about 640 bytes of
// WAL per post, and the multixact's locking in CPU (measured with pg_waldump,
// 10 writers, 3,000 posts). Nothing in the API deletes a channel, and the
// service checks the channel before writing (channels.access.ts; a webhook's
// hook row says whether its channel exists, webhooks.store.ts). A channel
// deleted in the database behind the API is no longer caught by the insert:
// a hook cached before (30 s at most, access-cache.ts) may still post to it.
// A future channel delete deletes its messages itself (threads and reactions
// follow them by their keys).
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE messages DROP CONSTRAINT IF EXISTS messages_channel_id_fkey');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE messages ADD CONSTRAINT messages_channel_id_fkey FOREIGN KEY (channel_id) REFERENCES channels(id) ON DELETE CASCADE');
}
