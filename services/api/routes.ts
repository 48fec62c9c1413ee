// Every API route, in one place: a reader finds each resource's module here.
// Each route declares the scope a key needs to call it (`scope`, documented on
// RouteSpec in shared/http/route.ts; docs/security.md, "Scopes"): the table
// checks it, and test/unit/route-scopes.test.ts holds each route family to
// its scope (a new family adds its rule there).
import Router from '@koa/router';
import type { AppState } from '../../shared/http/context.js';
import { DEFAULT_FEATURE_LEVEL, type FeatureLevel } from '../../shared/feature-level.js';
import { RouteTable } from '../../shared/http/route.js';
import { docsRoutes } from './openapi.js';
import { agentRoutes } from './modules/agents/agents.routes.js';
import { commandRoutes } from './modules/commands/commands.routes.js';
import { apiKeyRoutes } from './modules/api-keys/api-keys.routes.js';
import { auditRoutes } from './modules/audit/audit.routes.js';
import { authRoutes } from './modules/auth/auth.routes.js';
import { inviteRoutes } from './modules/invites/invites.routes.js';
import { oauthRoutes } from './modules/oauth/oauth.routes.js';
import { channelRoutes } from './modules/channels/channels.routes.js';
import { dmRoutes } from './modules/dms/dms.routes.js';
import { eventSubscriptionRoutes } from './modules/event-subscriptions/event-subscriptions.routes.js';
import { fileRoutes } from './modules/files/files.routes.js';
import { importRoutes } from './modules/imports/imports.routes.js';
import { unfurlRoutes } from './modules/unfurls/unfurls.routes.js';
import { emailRoutes } from './modules/email/email.routes.js';
import { interactionRoutes } from './modules/interactions/interactions.routes.js';
import { searchRoutes } from './modules/search/search.routes.js';
import { threadRoutes } from './modules/threads/threads.routes.js';
import { emojiRoutes } from './modules/emoji/emoji.routes.js';
import { reminderRoutes } from './modules/reminders/reminders.routes.js';
import { scheduledMessageRoutes } from './modules/scheduled-messages/scheduled-messages.routes.js';
import { messageRoutes } from './modules/messages/messages.routes.js';
import { userGroupRoutes } from './modules/user-groups/user-groups.routes.js';
import { pinRoutes } from './modules/pins/pins.routes.js';
import { userRoutes } from './modules/users/users.routes.js';
import { preferenceRoutes } from './modules/preferences/preferences.routes.js';
import { hookRoutes, webhookRoutes } from './modules/webhooks/webhooks.routes.js';
import { workspaceRoutes } from './modules/workspaces/workspaces.routes.js';

/**
 * Every API route of a feature level in one router (one path match per
 * request), and the tables that declare them (which the OpenAPI document is
 * built from).
 */
export function apiRoutes(level: FeatureLevel = DEFAULT_FEATURE_LEVEL): { router: Router<AppState>; tables: RouteTable[] } {
  const router = new Router<AppState>();
  const v1 = new RouteTable('/api/v1', router, level);
  workspaceRoutes(v1);
  userRoutes(v1);
  preferenceRoutes(v1);
  userGroupRoutes(v1);
  apiKeyRoutes(v1);
  authRoutes(v1);
  inviteRoutes(v1);
  channelRoutes(v1);
  messageRoutes(v1, { base: '/channels/{channel_id}', param: 'channel_id', kind: 'channel', tag: 'Messages', typing: true });
  pinRoutes(v1, { base: '/channels/{channel_id}', param: 'channel_id', kind: 'channel', tag: 'Messages' });
  dmRoutes(v1);
  agentRoutes(v1, { base: '/channels/{channel_id}', param: 'channel_id', kind: 'channel', tag: 'Agents' });
  agentRoutes(v1, { base: '/dms/{conversation_id}', param: 'conversation_id', kind: 'conversation', tag: 'Agents' });
  scheduledMessageRoutes(v1);
  reminderRoutes(v1);
  emojiRoutes(v1);
  interactionRoutes(v1);
  commandRoutes(v1);
  searchRoutes(v1);
  threadRoutes(v1);
  fileRoutes(v1);
  importRoutes(v1);
  unfurlRoutes(v1);
  emailRoutes(v1);
  webhookRoutes(v1);
  eventSubscriptionRoutes(v1);
  auditRoutes(v1);
  oauthRoutes(v1);
  const hooks = new RouteTable('', router, level);
  hookRoutes(hooks);
  const tables = [v1, hooks];
  return { router, tables: [...tables, docsRoutes(tables, router, level)] };
}
