import { setEmailNotifications } from '../email/email.store.js';
import type { Runtime } from '../../../shared/runtime.js';
import type { Actor } from '../../../shared/auth.js';
import { issueApiKey } from '../../../shared/auth.js';
import type { Knex } from '../../../shared/db/knex.js';
import { AppError, forbidden, isUniqueViolation, notFound } from '../../../shared/errors.js';
import { recordEvents, type AxidEvent } from '../../../shared/events.js';
import { decodeCursor, pageOf } from '../../../shared/http/envelope.js';
import * as memberships from '../channels/channels.store.js';
import { changePassword } from '../auth/auth.service.js';
import { canCreateUsers } from './users.policy.js';
import { presentUser, type UserRow } from './users.presenter.js';
import type { CreateUserInput, SuggestedPromptsInput } from './users.schemas.js';
import * as store from './users.store.js';
import { recordAudit } from '../audit/audit.store.js';

export const nameTaken = (name: string) => new AppError('name_taken', `the name "${name}" is already taken in this workspace`);
export const emailTaken = () => new AppError('conflict', 'this email address already belongs to someone in this workspace');

export async function getUser(rt: Runtime, actor: Actor, userId: string) {
  const row = await rt.reads.read(actor, (db) => store.findActiveUser(db, actor.workspaceId, userId));
  if (!row) throw notFound('User');
  return rt.presenters.userTo(actor)(row);
}

export async function listUsers(rt: Runtime, actor: Actor, q: { limit: number; cursor?: string; is_agent?: boolean }) {
  const rows = await rt.reads.read(actor, (db) =>
    store.listActiveUsers(db, actor.workspaceId, {
      after: decodeCursor(q.cursor),
      limit: q.limit,
      isAgent: q.is_agent,
    }),
  );
  return pageOf(rows, q.limit, rt.presenters.userTo(actor));
}

/**
 * Creates a person or an agent with its first API key (shown once). Agents
 * join every default channel. Humans count toward settings.max_users.
 */
export async function createUser(rt: Runtime, actor: Actor, input: CreateUserInput) {
  const db = rt.db;
  if (!canCreateUsers(actor)) {
    throw forbidden(actor.isAgent ? 'agents cannot create users or agents' : 'only workspace owners and admins create users');
  }
  const role = input.role ?? 'member';
  if (role === 'owner' && actor.role !== 'owner') throw forbidden('only an owner can create another owner');
  const isAgent = input.is_agent ?? false;

  try {
    return await db.transaction(async (trx) => {
      if (!isAgent) await enforceUserLimit(trx, actor.workspaceId);
      const user = await store.insertUser(trx, {
        workspace_id: actor.workspaceId,
        name: input.name,
        display_name: input.display_name ?? null,
        avatar_url: input.avatar_url ?? null,
        role,
        is_agent: isAgent,
      });
      const apiKey = await issueApiKey(trx, { workspaceId: actor.workspaceId, userId: user.id, name: 'initial key' }, rt.presenters.apiKey);
      await recordAudit(trx, { workspaceId: actor.workspaceId, action: 'user.created', actor, target: { type: 'user', id: user.id }, details: { name: user.name, role, is_agent: isAgent, api_key_id: apiKey.id } });
      const joined = isAgent ? await memberships.joinDefaultChannels(trx, actor.workspaceId, user.id) : [];
      const channels = await store.findChannelsByIds(trx, joined);
      const events: AxidEvent[] = [
        { type: 'user.created', to: { scope: 'workspace', workspace_id: actor.workspaceId }, data: { user: presentUser(user) } },
        ...channels.map(
          (c): AxidEvent => ({
            type: 'channel.member_added',
            to: { scope: 'channel', workspace_id: actor.workspaceId, channel_id: c.id, user_ids: [user.id] },
            data: { channel_id: c.id, user_id: user.id, user: presentUser(user) },
          }),
        ),
      ];
      await recordEvents(rt, trx, events);
      return {
        ...rt.presenters.userTo(actor)(user),
        api_key: apiKey.key,
        joined_channels: channels.map((c: { id: string; name: string }) => ({ id: c.id, name: c.name })),
      };
    });
  } catch (err) {
    if (isUniqueViolation(err, 'users_workspace_name')) throw nameTaken(input.name);
    throw err;
  }
}

/** Throws user_limit_reached when the workspace has its settings.max_users humans (run in the creating transaction). */
export async function enforceUserLimit(trx: Knex.Transaction, workspaceId: string) {
  // Lock the workspace row so two concurrent creations cannot both take the last seat.
  const ws = await trx('workspaces').where({ id: workspaceId }).forUpdate().first('settings');
  const max = ws?.settings?.max_users;
  if (typeof max === 'number' && (await store.countActiveHumans(trx, workspaceId)) >= max) {
    throw new AppError('user_limit_reached', `this workspace allows at most ${max} users (agents do not count)`);
  }
}

export async function updateMe(
  rt: Runtime,
  actor: Actor,
  input: {
    name?: string;
    display_name?: string | null;
    avatar_url?: string | null;
    password?: string;
    current_password?: string;
    suggested_prompts?: SuggestedPromptsInput;
    email_notifications?: 'mentions' | 'never';
  },
  address: string,
) {
  const db = rt.db;
  const { password, current_password, suggested_prompts, email_notifications, ...fields } = input;
  if (suggested_prompts !== undefined && !actor.isAgent) throw forbidden('suggested_prompts: only an agent suggests prompts');
  const patch = suggested_prompts === undefined ? fields : { ...fields, suggested_prompts: JSON.stringify(suggested_prompts) };
  try {
    return await db.transaction(async (trx) => {
      if (password !== undefined) {
        const me = (await store.findActiveUser(trx, actor.workspaceId, actor.userId)) as UserRow;
        await changePassword(rt, trx, actor, me, { password, current_password }, address);
      }
      // Turning emails off also drops what was waiting to be emailed (services/core/email).
      if (email_notifications !== undefined) await setEmailNotifications(trx, actor.userId, email_notifications);
      const user: UserRow = Object.keys(patch).length
        ? await store.updateUser(trx, actor.userId, patch)
        : ((await store.findActiveUser(trx, actor.workspaceId, actor.userId)) as UserRow);
      await recordEvents(rt, trx, [
        { type: 'user.updated', to: { scope: 'workspace', workspace_id: actor.workspaceId }, data: { user: presentUser(user) } },
      ]);
      return rt.presenters.userTo(actor)(user);
    });
  } catch (err) {
    if (isUniqueViolation(err, 'users_workspace_name')) throw nameTaken(patch.name ?? '');
    throw err;
  }
}
