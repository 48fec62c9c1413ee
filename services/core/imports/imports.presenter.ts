import { z } from 'zod';
import { Timestamp, named } from '../../../shared/http/responses.js';
import type { ImportCounts, ImportReport } from './slack-import.js';

export interface ImportRow {
  id: string;
  workspace_id: string;
  created_by: string | null;
  source: 'slack';
  status: 'queued' | 'running' | 'finished' | 'failed';
  storage_key: string;
  counts: Partial<ImportCounts>;
  report: ImportReport | null;
  error: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

const COUNT_NAMES = ['users', 'channels', 'dms', 'messages', 'replies', 'reactions', 'pins', 'files'] as const;

export const ImportCountsSchema = named(
  'ImportCounts',
  z.strictObject(Object.fromEntries(COUNT_NAMES.map((n) => [n, z.number().int()])) as Record<(typeof COUNT_NAMES)[number], z.ZodNumber>),
);

export const ImportReportSchema = named(
  'ImportReport',
  z.strictObject({
    already_imported: z.strictObject({ users: z.number().int(), conversations: z.number().int(), messages: z.number().int() }).describe('Left as they are: imported by an earlier run'),
    system_messages: z.record(z.string(), z.number().int()).describe("Slack's system messages (joins, topic changes...), not imported, by subtype"),
    skipped: z.array(z.strictObject({ item: z.string(), reason: z.string() })).describe('Every item not imported (or imported in part), with the reason'),
    notes: z.array(z.string()),
  }),
);

export const ImportSchema = named(
  'Import',
  z.strictObject({
    id: z.string(),
    source: z.literal('slack'),
    status: z.enum(['queued', 'running', 'finished', 'failed']),
    counts: ImportCountsSchema.describe('What the import added so far'),
    report: ImportReportSchema.nullable().describe('Once finished'),
    error: z.string().nullable().describe('Why it failed (a broken export names the file)'),
    created_by: z.string().nullable(),
    created_at: Timestamp,
    started_at: Timestamp.nullable(),
    finished_at: Timestamp.nullable(),
  }),
);

export const presentImport = (row: ImportRow): z.infer<typeof ImportSchema> => ({
  id: row.id,
  source: row.source,
  status: row.status,
  counts: Object.fromEntries(COUNT_NAMES.map((n) => [n, row.counts?.[n] ?? 0])) as unknown as ImportCounts,
  report: row.report ? { already_imported: row.report.already_imported, system_messages: row.report.system_messages, skipped: row.report.skipped, notes: row.report.notes } : null,
  error: row.error,
  created_by: row.created_by,
  created_at: row.created_at,
  started_at: row.started_at,
  finished_at: row.finished_at,
});
