import type { Knex } from 'knex';

// The two parts of a Message that live in other tables, as functions the
// history page calls only for the messages whose hints say they have them
// (messages.has_replies, messages.has_reactions; MESSAGE_FIELD_SQL in
// services/core/messages/messages.store.ts). Written inline, as subqueries,
// they cost every page about a quarter of its PostgreSQL time even when no
// message needs them: a statement sets up each subquery's plan (its tables
// and indexes opened and locked) on every execution, used or not; a PL/pgSQL
// function runs, with its own kept plan, only when it is called
// (docs/bench.md, "History pages: the thread and reactions of a message").
// Their JSON is byte for byte what messagePresenter gives (a test holds it).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- The thread record of a root, as {"reply_count":…,"last_reply_at":…}; null when it has no replies.
    CREATE FUNCTION axid_thread_json(root_id uuid) RETURNS json LANGUAGE plpgsql STABLE AS $$
    BEGIN
      RETURN (SELECT to_json((SELECT y FROM (SELECT t.reply_count,
                                                    to_char(t.last_reply_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS last_reply_at) y))
                FROM threads t WHERE t.root_message_id = root_id AND t.reply_count > 0);
    END $$;

    -- The reactions of a message, summarised per emoji in the order first added, as a JSON array.
    CREATE FUNCTION axid_reactions_json(of_message uuid) RETURNS json LANGUAGE plpgsql STABLE AS $$
    BEGIN
      RETURN (SELECT coalesce('[' || string_agg(to_json((SELECT y FROM (SELECT x.emoji, x.count, x.user_ids) y))::text, ',' ORDER BY x.first, x.emoji) || ']', '[]')::json
                FROM (SELECT r.emoji, count(*)::int AS count, array_agg(r.user_id::text ORDER BY r.created_at, r.user_id) AS user_ids,
                             min(r.created_at) AS first
                        FROM reactions r WHERE r.message_id = of_message GROUP BY r.emoji) x);
    END $$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP FUNCTION IF EXISTS axid_reactions_json(uuid);
    DROP FUNCTION IF EXISTS axid_thread_json(uuid);
  `);
}
