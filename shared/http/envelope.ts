import { gunzipSync } from 'node:zlib';
import { z } from 'zod';
import { invalid } from '../errors.js';

export const ok = <T>(data: T) => ({ data });

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

const pagination = (nextCursor: string | null) => ({ next_cursor: nextCursor, has_more: nextCursor !== null });

export const list = <T>(page: Page<T>) => ({ data: page.items, pagination: pagination(page.nextCursor) });

/**
 * A response body already rendered as JSON text: sent as is. One kept
 * compressed (a kept history page: services/core/messages/page-cache.ts) is
 * sent compressed to a client that takes gzip, and its text is decompressed
 * only for one that does not (shared/http/route.ts).
 */
export class JsonText {
  private textOf: string | null;
  constructor(
    text: string | null,
    /** The same text, gzipped once where it is kept, instead of once per answer. */
    readonly gzipped: Buffer | null = null,
  ) {
    this.textOf = text;
  }

  static gzipped(gzipped: Buffer) {
    return new JsonText(null, gzipped);
  }

  get text(): string {
    return (this.textOf ??= gunzipSync(this.gzipped!).toString());
  }
}

/** A keyset page whose items the database rendered as a JSON array (history pages). */
export interface JsonPage {
  data: string;
  /** The sequence number of the page's last item; null for an empty page. */
  lastSeq: number | null;
  hasMore: boolean;
  /**
   * Where pages go both ways (level-3 history): the sequence number of the
   * page's first (newest) item and whether there are newer ones than it,
   * which give `prev_cursor`. Left out, the envelope has no prev_cursor.
   */
  firstSeq?: number | null;
  hasNewer?: boolean;
}

/** The list envelope around a JsonPage, with the same cursor pageOf gives. */
export const listJson = (page: JsonPage) => {
  const nextCursor = page.hasMore && page.lastSeq !== null ? encodeCursor(page.lastSeq) : null;
  const paging: Record<string, unknown> = pagination(nextCursor);
  if (page.hasNewer !== undefined) paging.prev_cursor = page.hasNewer && page.firstSeq != null ? encodeCursor(page.firstSeq) : null;
  return new JsonText(`{"data":${page.data},"pagination":${JSON.stringify(paging)}}`);
};

/** Query schema of every list endpoint (cursor and limit: README.md, "The API in brief"). */
export const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().min(1).max(200).optional(),
});
export type PageQuery = z.infer<typeof PageQuery>;

// Cursors are opaque to clients: base64url of the last row's sequence number.
export const encodeCursor = (seq: number) => Buffer.from(`s${seq}`).toString('base64url');

export function decodeCursor(cursor: string | undefined, field = 'cursor'): number | undefined {
  if (cursor === undefined) return undefined;
  const raw = Buffer.from(cursor, 'base64url').toString();
  const match = /^s(\d{1,18})$/.exec(raw);
  if (!match) throw invalid(`${field}: is not a cursor this endpoint returned`);
  return Number(match[1]);
}

/**
 * Keyset page from rows fetched with `limit + 1`: the extra row only says
 * whether there is more, without a COUNT.
 */
export function pageOf<R extends { seq: number }, T>(rows: R[], limit: number, present: (row: R) => T): Page<T> {
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  return { items: items.map(present), nextCursor: more ? encodeCursor(items[items.length - 1]!.seq) : null };
}
