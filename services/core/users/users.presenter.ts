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
}

export const presentUser = (row: UserRow) => ({
  id: row.id,
  name: row.name,
  display_name: row.display_name,
  avatar_url: row.avatar_url,
  role: row.role,
  is_agent: row.is_agent,
  created_at: row.created_at,
});

export type UserObject = ReturnType<typeof presentUser>;
