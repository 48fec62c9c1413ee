// The feature level (interface: "new capabilities raise the feature level";
// docs/feature-levels.md). FEATURE_LEVEL sets it once in the config loader.
// A capability's levels are declared once, as a LevelSpan beside what it
// governs (a route's `since`, a field's `fromLevel`, an error's ERROR_SINCE,
// or a named span such as KEY_SCOPES, SCHEDULED_POSTS, STREAM_REPLAY), and
// asked only through `existsAt(span, level)`: no code compares the level with
// a number. The level itself is read where a process is put together: the
// route table (which also feeds the OpenAPI document), the header
// (shared/http/request-context.ts), the stream (services/gateway), the
// start-up (services/stack.ts, services/core/bootstrap.ts) and the runtime's
// presenters, bound to the level once (services/core/presenters.ts).
export const FEATURE_LEVELS = [2, 3] as const;
export type FeatureLevel = (typeof FEATURE_LEVELS)[number];

/** The level a process runs at when FEATURE_LEVEL is unset: the documented interface. */
export const DEFAULT_FEATURE_LEVEL: FeatureLevel = 2;

/** A route or capability's span of levels: it exists from `since` through `until` (both inclusive). */
export interface LevelSpan {
  since?: FeatureLevel;
  until?: FeatureLevel;
}

/** Whether something declared for `span` exists at `level`. */
export const existsAt = (span: LevelSpan, level: FeatureLevel): boolean =>
  level >= (span.since ?? 2) && level <= (span.until ?? Infinity);

// Fields that exist from a level on (a user's `email` at 3): declared once on
// the zod schema with `fromLevel`, then left out of a level below it by the
// route table (request bodies and queries: the field is unknown there, as
// before) and by the OpenAPI document (response objects). Presenters, bound
// to the runtime's level once, add such a field only where it exists.
const fieldLevels = new WeakMap<object, LevelSpan>();

/** Marks a field's schema as existing at `span` only (`{since: 3}`). */
export function fromLevel<T extends object>(span: LevelSpan, schema: T): T {
  fieldLevels.set(schema, span);
  return schema;
}

/** The names of an object shape's fields that do not exist at `level`. */
export function fieldsAbsentAt(shape: Record<string, unknown>, level: FeatureLevel): string[] {
  return Object.entries(shape)
    .filter(([, field]) => {
      const span = field && typeof field === 'object' ? fieldLevels.get(field) : undefined;
      return span !== undefined && !existsAt(span, level);
    })
    .map(([name]) => name);
}
