// A person's preferences (level 3, docs/web.md): read and replaced by the
// person only (GET and PATCH /users/me/preferences). No row yet reads as the
// defaults; the first change writes it (an upsert, so two devices racing
// leave one row).
import type { z } from 'zod';
import type { Actor } from '../../../shared/auth.js';
import type { Runtime } from '../../../shared/runtime.js';
import { type PreferencesRow, type PreferencesSchema, type UpdatePreferencesBody } from './preferences.schemas.js';

const DEFAULTS = { muted_conversation_ids: [] as string[], theme: 'system' as const, updated_at: null };

const present = (row: PreferencesRow | undefined): z.infer<typeof PreferencesSchema> =>
  row ? { muted_conversation_ids: row.muted_conversation_ids, theme: row.theme, updated_at: row.updated_at } : { ...DEFAULTS };

export async function getPreferences(rt: Runtime, actor: Actor) {
  const row = await rt.db<PreferencesRow>('user_preferences').where({ user_id: actor.userId }).first();
  return present(row);
}

export async function updatePreferences(rt: Runtime, actor: Actor, body: z.infer<typeof UpdatePreferencesBody>) {
  const patch = {
    ...(body.muted_conversation_ids !== undefined ? { muted_conversation_ids: [...new Set(body.muted_conversation_ids)] } : {}),
    ...(body.theme !== undefined ? { theme: body.theme } : {}),
  };
  if (!Object.keys(patch).length) return getPreferences(rt, actor);
  const [row] = await rt.db('user_preferences')
    .insert({ user_id: actor.userId, workspace_id: actor.workspaceId, ...DEFAULTS, ...patch, updated_at: rt.db.fn.now() })
    .onConflict('user_id')
    .merge({ ...patch, updated_at: rt.db.fn.now() })
    .returning(['user_id', 'muted_conversation_ids', 'theme', 'updated_at']);
  return present(row as PreferencesRow);
}
