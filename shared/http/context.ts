import type { ParameterizedContext } from 'koa';
import type { Actor } from '../auth.js';
import type { Runtime } from '../runtime.js';

export interface AppState {
  rt: Runtime;
  requestId: string;
  /** Set once the request's Bearer token is verified (shared/http/rate-limit.ts). */
  actor?: Actor;
  /** The refusal of a Bearer token that is not a valid key (thrown by routes that need one). */
  authFailure?: Error;
  /** The matched route pattern, for metrics and logs. */
  route?: string;
}

export type AppContext = ParameterizedContext<AppState>;
