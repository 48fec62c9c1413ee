import { z } from 'zod';
import type { Actor } from '../../../shared/auth.js';
import { existsAt, fromLevel, type FeatureLevel, type LevelSpan } from '../../../shared/feature-level.js';
import { Timestamp, named } from '../../../shared/http/responses.js';
import { canSeeEmail } from './users.policy.js';

export interface UserRow {
  id: string;
  seq: number;
  workspace_id: string;
  name: string;
  display_name: string | null;
  avatar_url: string | null;
  role: 'owner' | 'admin' | 'member';
  is_agent: boolean;
  created_at: Date;
  deactivated_at: Date | null;
  /** Level 3 (contract §12): set by invites, owners/admins, single sign-on. */
  email: string | null;
  /** A scrypt hash in PHC form (services/core/auth/passwords.ts); never rendered. */
  password_hash: string | null;
  /** Level 3 (contract §15): an agent's suggested prompts; null when it set none. */
  suggested_prompts?: { title: string; message: string }[] | null;
  /** Level 3 (contract §14): whether missed mentions and DMs are emailed (services/core/email). */
  email_notifications?: 'mentions' | 'never';
}

/** `email` is a field of level 3 (contract §12). */
export const USER_EMAIL: LevelSpan = { since: 3 };
/** `suggested_prompts` is a field of level 3 (contract §15), on agents. */
export const USER_SUGGESTED_PROMPTS: LevelSpan = { since: 3 };

export const SuggestedPromptSchema = named('SuggestedPrompt', z.strictObject({ title: z.string(), message: z.string() }));

export const UserSchema = named(
  'User',
  z.strictObject({
    id: z.string(),
    name: z.string(),
    display_name: z.string().nullable(),
    avatar_url: z.string().nullable(),
    role: z.enum(['owner', 'admin', 'member']),
    is_agent: z.boolean(),
    created_at: Timestamp,
    email: fromLevel(
      USER_EMAIL,
      z.string().nullable().optional().describe('Shown to the user and to owners and admins only (feature level 3); null when none is set'),
    ),
    suggested_prompts: fromLevel(
      USER_SUGGESTED_PROMPTS,
      z.array(SuggestedPromptSchema).optional().describe('On agents (feature level 3): at most 4 prompts the agent suggests, offered in an empty DM with it'),
    ),
    email_notifications: fromLevel(
      USER_EMAIL,
      z.enum(['mentions', 'never']).optional().describe('Shown to the user only (feature level 3): whether missed mentions and DMs are emailed (PATCH /users/me)'),
    ),
  }),
);

export type UserObject = z.infer<typeof UserSchema>;

/** A user as created: with its first API key (shown once) and the default channels it joined. */
export const CreatedUserSchema = named(
  'CreatedUser',
  UserSchema.extend({
    api_key: z.string().describe('The first API key of the user; shown once'),
    joined_channels: z.array(z.strictObject({ id: z.string(), name: z.string() })),
  }),
);

/** A user as anyone in the workspace sees it (events, other people's reads): never with an email. */
export const presentUser = (row: UserRow): UserObject => ({
  id: row.id,
  name: row.name,
  display_name: row.display_name,
  avatar_url: row.avatar_url,
  role: row.role,
  is_agent: row.is_agent,
  created_at: row.created_at,
});

/** Renders users as `viewer` reads them. */
export type PresentUserTo = (viewer: Pick<Actor, 'userId' | 'role'>) => (row: UserRow) => UserObject;

/**
 * Users as a viewer reads them at a level: with `email` where the level has
 * it (USER_EMAIL) and the viewer is the user or an owner/admin. Made once per
 * runtime (services/core/presenters.ts), so rendering asks no level.
 */
export const userPresenterTo = (level: FeatureLevel): PresentUserTo => {
  const withPrompts = existsAt(USER_SUGGESTED_PROMPTS, level);
  // An agent's prompts follow its other fields (email included), as the schema lists them.
  const prompts = (row: UserRow, user: UserObject): UserObject =>
    withPrompts && row.is_agent ? { ...user, suggested_prompts: row.suggested_prompts ?? [] } : user;
  return existsAt(USER_EMAIL, level)
    ? (viewer) => (row) => {
        if (!canSeeEmail(viewer, row.id)) return prompts(row, presentUser(row));
        const user: UserObject = { ...presentUser(row), email: row.email ?? null };
        if (viewer.userId === row.id) user.email_notifications = row.email_notifications ?? 'mentions';
        return prompts(row, user);
      }
    : () => presentUser;
};
