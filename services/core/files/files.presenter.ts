import { z } from 'zod';
import type { LevelSpan } from '../../../shared/feature-level.js';
import { Timestamp, named } from '../../../shared/http/responses.js';

/** Level 3 (contract §17): a file is read where it was posted, and deleted (DELETE /files/{id}). */
export const FILES_FOLLOW_CONVERSATIONS: LevelSpan = { since: 3 };

/** The metadata type of a message that carries a file: `{type: "axid.file", data: {file_id, ...}}` (the web app's attachment). */
export const FILE_METADATA_TYPE = 'axid.file';

export interface FileRow {
  id: string;
  seq: number;
  workspace_id: string;
  uploader_id: string | null;
  name: string;
  size: number;
  content_type: string;
  status: 'processing' | 'ready' | 'failed';
  failure_reason: string | null;
  sha256: string | null;
  width: number | null;
  height: number | null;
  storage_key: string;
  thumbnail_key: string | null;
  created_at: Date;
}

/** The File object (its schema is the OpenAPI document's, services/api/openapi.ts); sha256 only once the worker has made it ready. */
export const FileSchema = named(
  'File',
  z.strictObject({
    id: z.string(),
    name: z.string(),
    size: z.number().int(),
    content_type: z.string(),
    status: z.enum(['processing', 'ready', 'failed']),
    sha256: z.string().nullable().describe('Hex SHA-256 of the content, once ready'),
    width: z.number().int().nullable(),
    height: z.number().int().nullable(),
    uploader_id: z.string().nullable(),
    failure_reason: z.string().nullable(),
    created_at: Timestamp,
  }),
);

export type FileObject = z.infer<typeof FileSchema>;

/** `GET /files/{file_id}`: the File with a presigned download address. */
export const FileWithDownloadSchema = named(
  'FileWithDownload',
  FileSchema.extend({ download_url: z.string().describe('Absolute URL usable without the key, valid at most 15 minutes') }),
);

export const presentFile = (row: FileRow): FileObject => ({
  id: row.id,
  name: row.name,
  size: row.size,
  content_type: row.content_type,
  status: row.status,
  sha256: row.status === 'ready' ? row.sha256 : null,
  width: row.width,
  height: row.height,
  uploader_id: row.uploader_id,
  failure_reason: row.status === 'failed' ? row.failure_reason : null,
  created_at: row.created_at,
});
