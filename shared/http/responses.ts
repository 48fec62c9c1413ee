// Response body schemas. Presenters declare the object they render with zod
// (services/api/modules/<r>/<r>.presenter.ts) and type their result from it;
// routes declare their body as `dataOf(X)` or `listOf(X)`; the OpenAPI
// document (services/api/openapi.ts) turns the same schemas into
// `components.schemas`, so the document says exactly what presenters produce.
import { z } from 'zod';
import { ERROR_STATUS } from '../errors.js';
import { fromLevel } from '../feature-level.js';

/** Every named response schema, by the name it has in `components.schemas`. */
export const namedSchemas = new Map<string, z.ZodType>();
const nameOf = new Map<z.ZodType, string>();

/** Names a schema: the document declares it once and refers to it with `$ref`. */
export function named<T extends z.ZodType>(name: string, schema: T): T {
  if (namedSchemas.has(name)) throw new Error(`response schema ${name} is declared twice`);
  namedSchemas.set(name, schema);
  nameOf.set(schema, name);
  return schema;
}

export const schemaName = (schema: z.ZodType): string | undefined => nameOf.get(schema);

/**
 * Timestamps: presenters hand Date objects to the JSON encoder, which writes
 * ISO 8601 strings; the document says `string` with format `date-time`.
 */
export const Timestamp = z.date();

export const Pagination = named(
  'Pagination',
  z.strictObject({
    next_cursor: z.string().nullable().describe('Pass as `cursor` for the next page; null when there is no more'),
    has_more: z.boolean(),
    prev_cursor: fromLevel(
      { since: 3 },
      z
        .string()
        .nullable()
        .optional()
        .describe('Message history lists only: pass as `after` for the page of messages newer than this one; null when there are none newer (feature level 3)'),
    ),
  }),
);

/** `{data: X}`, the envelope of one object (shared/http/envelope.ts `ok`). */
export const dataOf = <T extends z.ZodType>(schema: T) => z.strictObject({ data: schema });

const lists = new Map<z.ZodType, z.ZodType>();
/** `{data: X[], pagination}`, the list envelope (shared/http/envelope.ts `list`), named `<X>List`. */
export function listOf<T extends z.ZodType>(schema: T): z.ZodObject<{ data: z.ZodArray<T>; pagination: typeof Pagination }> {
  const name = schemaName(schema);
  if (!name) throw new Error('listOf takes a named schema');
  let envelope = lists.get(schema);
  if (!envelope) {
    envelope = named(`${name}List`, z.strictObject({ data: z.array(schema), pagination: Pagination }));
    lists.set(schema, envelope);
  }
  return envelope as z.ZodObject<{ data: z.ZodArray<T>; pagination: typeof Pagination }>;
}

/** The error envelope (shared/http/errors.ts renders it). */
export const ErrorBody = named(
  'Error',
  z.strictObject({
    error: z.strictObject({
      code: z.enum(Object.keys(ERROR_STATUS) as [keyof typeof ERROR_STATUS, ...(keyof typeof ERROR_STATUS)[]]),
      message: z.string().describe('What went wrong, naming the field at fault'),
    }),
  }),
);
