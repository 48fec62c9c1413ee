// The relay's reads and deletes of the outbox table (rows written by
// shared/events.ts recordEvents in the transaction of each change).

/** A committed event as the relay publishes it: the JSON is published as stored. */
export interface OutboxRow {
  id: number;
  type: string;
  event: string;
  /** The channel the event is about (shared/event-bus.ts channelOf: the shard is picked by it). */
  channelId: string | null;
}

type Query = <R>(sql: string, params: unknown[]) => Promise<R[]>;

export interface OutboxTable {
  /**
   * Deletes the rows `published` and returns the next `limit` rows, oldest
   * first, none of them one of `published`: one statement, one round trip.
   */
  next(published: number[], limit: number): Promise<OutboxRow[]>;
  delete(ids: number[]): Promise<void>;
}

export function outboxTable(query: Query): OutboxTable {
  return {
    async next(published, limit) {
      // The SELECT sees the table as it was before the DELETE in the same
      // statement, hence the NOT (id = ANY …).
      const rows = await query<{ id: string; type: string; event: string; channel_id: string | null }>(
        `WITH done AS (DELETE FROM outbox WHERE id = ANY($1::bigint[]))
         SELECT id, event->>'type' AS type, event::text AS event,
                COALESCE(event->'to'->>'channel_id', event->'data'->'conversation'->>'id') AS channel_id FROM outbox
          WHERE NOT (id = ANY($1::bigint[])) ORDER BY id LIMIT $2`,
        [published, limit],
      );
      return rows.map((r) => ({ id: Number(r.id), type: r.type, event: r.event, channelId: r.channel_id }));
    },
    async delete(ids) {
      if (ids.length > 0) await query('DELETE FROM outbox WHERE id = ANY($1::bigint[])', [ids]);
    },
  };
}
