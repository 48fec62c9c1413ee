import type { ParameterizedContext } from 'koa';
import type { Actor } from '../auth.js';
import type { Runtime } from '../runtime.js';

export interface AppState {
  rt: Runtime;
  requestId: string;
  /** Set by authentication on routes that need a key. */
  actor?: Actor;
  /** The matched route pattern, for metrics and logs. */
  route?: string;
}

export type AppContext = ParameterizedContext<AppState>;
