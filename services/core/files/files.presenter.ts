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

/** The File object (contract §4); sha256 only once the worker has made it ready. */
export const presentFile = (row: FileRow) => ({
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

export type FileObject = ReturnType<typeof presentFile>;
