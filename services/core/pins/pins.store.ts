// Pins are two columns of a message (pinned_at, pinned_by: migration 195);
// a conversation's pins are read on messages_channel_pins.
import type { Db, Knex } from '../../../shared/db/knex.js';

/** A conversation's pins at most (contract §14). */
export const MAX_PINS = 100;

export const countPins = async (db: Db, channelId: string): Promise<number> =>
  Number((await db('messages').where({ channel_id: channelId }).whereNotNull('pinned_at').count<{ n: string }>('* as n').first())?.n ?? 0);

/**
 * Pins a message of the conversation; false when it was pinned already.
 * clock_timestamp(), not now(): taken after the lock is held, so a
 * conversation's pins are ordered as they were made (the list's keyset).
 */
export const pin = async (trx: Knex.Transaction, channelId: string, messageId: string, userId: string): Promise<boolean> =>
  (await trx('messages').where({ id: messageId, channel_id: channelId }).whereNull('pinned_at').update({ pinned_at: trx.raw('clock_timestamp()'), pinned_by: userId })) > 0;

/** Unpins; false when the message was not pinned. */
export const unpin = async (trx: Knex.Transaction, channelId: string, messageId: string): Promise<boolean> =>
  (await trx('messages').where({ id: messageId, channel_id: channelId }).whereNotNull('pinned_at').update({ pinned_at: null, pinned_by: null })) > 0;

/**
 * A page of the conversation's pinned messages as JSON text, newest pin first
 * (messages_channel_pins), rendered as `messageJson` gives a Message. The
 * cursor is the last pin's time in microseconds since the epoch: pins of one
 * conversation are made one at a time (lockForPins), so no two share one.
 */
/** `?`: channel id, cursor (twice; null for the first page), limit + 1. */
export const pinsPageSql = (messageJson: string) => `SELECT ${messageJson} AS message, (extract(epoch FROM m.pinned_at) * 1000000)::bigint AS micros
       FROM messages m
      WHERE m.channel_id = ? AND m.pinned_at IS NOT NULL
        AND (?::bigint IS NULL OR m.pinned_at < timestamptz 'epoch' + ?::bigint * interval '1 microsecond')
      ORDER BY m.pinned_at DESC, m.id DESC
      LIMIT ?`;

export async function listPins(db: Db, messageJson: string, o: { channelId: string; beforeMicros?: number; limit: number }): Promise<{ message: string; micros: number }[]> {
  const { rows } = await db.raw<{ rows: { message: string; micros: string }[] }>(pinsPageSql(messageJson), [o.channelId, o.beforeMicros ?? null, o.beforeMicros ?? null, o.limit + 1]);
  return rows.map((r) => ({ message: r.message, micros: Number(r.micros) }));
}
