// A person's preferences (level 3): what the web app keeps on the server so
// it follows them across devices (muted conversations, theme).
import { z } from 'zod';
import { named, Timestamp } from '../../../shared/http/responses.js';
import { isUuid } from '../../../shared/ids.js';

/** More than anyone mutes; keeps the row small. */
export const MAX_MUTED = 1000;
export const THEMES = ['system', 'light', 'dark'] as const;

export interface PreferencesRow {
  user_id: string;
  muted_conversation_ids: string[];
  theme: (typeof THEMES)[number];
  updated_at: Date | null;
}

export const PreferencesSchema = named(
  'Preferences',
  z.strictObject({
    muted_conversation_ids: z.array(z.string()).describe('Channels and DMs the person muted: quiet, except for mentions of them'),
    theme: z.enum(THEMES).describe('The web app\'s colours: the system\'s, or always light or dark'),
    updated_at: Timestamp.nullable().describe('Last change; null while all are the defaults'),
  }),
);

export const UpdatePreferencesBody = z.strictObject({
  muted_conversation_ids: z
    .array(z.string().refine(isUuid, 'must be conversation ids (uuids)'))
    .max(MAX_MUTED, `at most ${MAX_MUTED} conversations`)
    .optional()
    .describe('The whole list (it replaces the stored one)'),
  theme: z.enum(THEMES).optional(),
});
