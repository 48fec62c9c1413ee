import { z } from 'zod';
import { Timestamp, named } from '../../../shared/http/responses.js';

export interface WorkspaceRow {
  id: string;
  name: string;
  settings: { max_users?: number | null };
  created_at: Date;
}

export const WorkspaceSchema = named(
  'Workspace',
  z.strictObject({
    id: z.string(),
    name: z.string(),
    settings: z.strictObject({ max_users: z.number().int().nullable().describe('Cap on human users; null: no limit') }),
    created_at: Timestamp,
  }),
);

export const presentWorkspace = (row: WorkspaceRow): z.infer<typeof WorkspaceSchema> => ({
  id: row.id,
  name: row.name,
  settings: { max_users: row.settings.max_users ?? null },
  created_at: row.created_at,
});
