import { z } from 'zod';
import { Timestamp, named } from '../../../shared/http/responses.js';
import { existsAt, fromLevel, type FeatureLevel, type LevelSpan } from '../../../shared/feature-level.js';

export interface WorkspaceRow {
  id: string;
  name: string;
  settings: { max_users?: number | null; retention_days?: number | null };
  created_at: Date;
}

/**
 * Where the Workspace shows `settings.retention_days`. Retention is set at
 * any level (contract §16), but at level 2 the Workspace stays byte for byte
 * the documented object, so the setting is shown from level 3 on
 * (docs/operations.md, "Retention").
 */
export const RETENTION_SHOWN: LevelSpan = { since: 3 };

const RetentionDays = z.number().int().nullable().describe('Days messages are kept; null: for ever (contract §16)');

export const WorkspaceSchema = named(
  'Workspace',
  z.strictObject({
    id: z.string(),
    name: z.string(),
    settings: z.strictObject({
      max_users: z.number().int().nullable().describe('Cap on human users; null: no limit'),
      retention_days: fromLevel(RETENTION_SHOWN, RetentionDays.optional()),
    }),
    created_at: Timestamp,
  }),
);

export type WorkspaceObject = z.infer<typeof WorkspaceSchema>;

/** The Workspace as level 2 has it (bootstrap; the level's presenter below adds what later levels show). */
export const presentWorkspace = (row: WorkspaceRow): WorkspaceObject => ({
  id: row.id,
  name: row.name,
  settings: { max_users: row.settings.max_users ?? null },
  created_at: row.created_at,
});

/** The Workspace at a level (services/core/presenters.ts). */
export const workspacePresenter = (level: FeatureLevel): ((row: WorkspaceRow) => WorkspaceObject) =>
  existsAt(RETENTION_SHOWN, level)
    ? (row) => ({ ...presentWorkspace(row), settings: { max_users: row.settings.max_users ?? null, retention_days: row.settings.retention_days ?? null } })
    : presentWorkspace;
