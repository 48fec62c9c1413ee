// The feature level (interface: "new capabilities raise the feature level";
// docs/feature-levels.md). FEATURE_LEVEL sets it once in the config loader;
// it is asked in few places only: the route table (a route declares the level
// it starts at, which also feeds the OpenAPI document), the header
// (shared/http/request-context.ts), the stream's frames and `init`
// (services/gateway), and the start-up of level-3 machinery (services/stack.ts).
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
