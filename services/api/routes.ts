// Every API route, in one table: a reader finds each resource's module here.
import { RouteTable } from '../../shared/http/route.js';
import { docsRoutes } from './openapi.js';
import { apiKeyRoutes } from './modules/api-keys/api-keys.routes.js';
import { channelRoutes } from './modules/channels/channels.routes.js';
import { dmRoutes } from './modules/dms/dms.routes.js';
import { interactionRoutes } from './modules/interactions/interactions.routes.js';
import { messageRoutes } from './modules/messages/messages.routes.js';
import { userRoutes } from './modules/users/users.routes.js';
import { workspaceRoutes } from './modules/workspaces/workspaces.routes.js';

export function apiRoutes(): RouteTable[] {
  const v1 = new RouteTable('/api/v1');
  workspaceRoutes(v1);
  userRoutes(v1);
  apiKeyRoutes(v1);
  channelRoutes(v1);
  messageRoutes(v1, { base: '/channels/{channel_id}', param: 'channel_id', kind: 'channel', tag: 'Messages', typing: true });
  dmRoutes(v1);
  interactionRoutes(v1);
  const tables = [v1];
  return [...tables, docsRoutes(tables)];
}
