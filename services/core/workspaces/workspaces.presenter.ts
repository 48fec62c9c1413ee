export interface WorkspaceRow {
  id: string;
  name: string;
  settings: { max_users?: number | null };
  created_at: Date;
}

export const presentWorkspace = (row: WorkspaceRow) => ({
  id: row.id,
  name: row.name,
  settings: { max_users: row.settings.max_users ?? null },
  created_at: row.created_at,
});
