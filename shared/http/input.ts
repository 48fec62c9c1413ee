// The rule every string a client sends follows, checked once for each request
// by the route layer (shared/http/route.ts) before any schema runs: body
// values and object keys at any depth, query values and path parameters.
// - No NUL (U+0000): Postgres text and jsonb cannot hold it.
// - No unpaired UTF-16 surrogate (JSON allows "\ud800"): it has no UTF-8 form,
//   so Postgres and every client would choke on it.
// - JSON nested at most MAX_JSON_DEPTH levels, so that nothing later
//   (schemas, JSON.stringify, the block validator) recurses without bound.
// The walk itself is iterative. A refusal is 400 validation_error naming the
// field, as every other validation error does (docs/decisions.md, "Strings").
import { AppError } from '../errors.js';

/** Levels of objects/arrays in a request body; the body itself is level 1. Field rules may be tighter. */
export const MAX_JSON_DEPTH = 64;

export const BAD_CHARACTERS = 'must not contain NUL or unpaired surrogate characters';

/** True when `s` has no NUL and no unpaired surrogate. */
export function isStorableText(s: string): boolean {
  return !s.includes('\u0000') && (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

const isContainer = (v: unknown): v is object => typeof v === 'object' && v !== null;

/** Paths as in other validation errors: `metadata.data.key`, `attachments.0.title`. */
const join = (path: string, key: string | number) => (path === '' ? String(key) : `${path}.${key}`);

/**
 * Depth of a JSON value (a scalar is 0, `{}` is 1), counted without recursion
 * and without going deeper than `limit + 1`.
 */
export function jsonDepth(value: unknown, limit: number): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (!isContainer(v)) continue;
    deepest = Math.max(deepest, depth);
    if (depth > limit) return deepest;
    for (const child of Object.values(v)) if (isContainer(child)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/**
 * Refuses a request value (a parsed JSON body, a query or path parameters)
 * holding a string that cannot be stored, or nested too deep. `where` names
 * the value when the problem is at its top (`body`, `query`, `path`).
 */
export function checkInput(value: unknown, where: string): void {
  const stack: [unknown, string, number][] = [[value, '', 1]];
  while (stack.length > 0) {
    const [v, path, depth] = stack.pop()!;
    if (typeof v === 'string') {
      if (!isStorableText(v)) throw new AppError('validation_error', `${path || where}: ${BAD_CHARACTERS}`);
      continue;
    }
    if (!isContainer(v)) continue;
    if (depth > MAX_JSON_DEPTH) {
      // Name the field, not the ten-thousand-segment path to the bottom.
      const field = path.split('.').slice(0, 2).join('.');
      throw new AppError('validation_error', `${field || where}: must not be nested more than ${MAX_JSON_DEPTH} levels deep`);
    }
    // Pushed last to first, so problems are found in the order they are written.
    for (const [key, child] of Object.entries(v).reverse()) {
      if (!isStorableText(key)) throw new AppError('validation_error', `${path || where}: keys ${BAD_CHARACTERS}`);
      stack.push([child, join(path, key), depth + 1]);
    }
  }
}
