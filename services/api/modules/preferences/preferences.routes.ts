import { ok } from '../../../../shared/http/envelope.js';
import type { RouteTable } from '../../../../shared/http/route.js';
import { dataOf } from '../../../../shared/http/responses.js';
import { PreferencesSchema, UpdatePreferencesBody } from '../../../core/preferences/preferences.schemas.js';
import * as preferences from '../../../core/preferences/preferences.service.js';

export function preferenceRoutes(routes: RouteTable) {
  const tag = 'Users and agents';
  routes
    .add(
      { method: 'get', path: '/users/me/preferences', scope: 'read', summary: "The caller's preferences (muted conversations, theme), the same on every device", tag, response: dataOf(PreferencesSchema), since: 3 },
      async ({ rt, actor }) => ok(await preferences.getPreferences(rt, actor)),
    )
    .add(
      { method: 'patch', path: '/users/me/preferences', scope: 'admin', summary: "Change the caller's preferences (a field given replaces the stored one)", tag, body: UpdatePreferencesBody, response: dataOf(PreferencesSchema), since: 3 },
      async ({ rt, actor, body }) => ok(await preferences.updatePreferences(rt, actor, body)),
    );
}
