import { z } from 'zod';
import { Timestamp, named } from '../../../shared/http/responses.js';

export interface InviteRow {
  id: string;
  seq: number;
  workspace_id: string;
  token_hash: string;
  role: 'owner' | 'admin' | 'member';
  email: string | null;
  created_by: string;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
  used_by: string | null;
  revoked_at: Date | null;
}

export const InviteSchema = named(
  'Invite',
  z.strictObject({
    id: z.string(),
    role: z.enum(['owner', 'admin', 'member']),
    email: z.string().nullable().describe('Only this address may accept; null: anyone with the link'),
    expires_at: Timestamp,
    created_by: z.string(),
    created_at: Timestamp,
  }),
);

/** An invite as created: with its link, shown in this response only (the token is stored hashed). */
export const CreatedInviteSchema = named(
  'CreatedInvite',
  InviteSchema.extend({ url: z.string().describe('`<PUBLIC_BASE_URL>/#invite=<token>`: the token travels in the fragment, which no server sees') }),
);

export const presentInvite = (row: InviteRow): z.infer<typeof InviteSchema> => ({
  id: row.id,
  role: row.role,
  email: row.email,
  expires_at: row.expires_at,
  created_by: row.created_by,
  created_at: row.created_at,
});
