import type { LevelSpan } from '../../../shared/feature-level.js';

/**
 * The remote MCP endpoint and its OAuth (contract §15): the endpoint, its
 * authorization server (composed in services/stack.ts) and the consent routes
 * (services/api/modules/oauth/oauth.routes.ts) exist at these levels. Kept
 * apart from oauth.service.ts so that the stack asks it without loading the
 * service.
 */
export const REMOTE_MCP: LevelSpan = { since: 3 };
