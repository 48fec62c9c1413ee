import { z } from 'zod';
import { ok } from '../../../../shared/http/envelope.js';
import type { RouteTable } from '../../../../shared/http/route.js';
import { dataOf } from '../../../../shared/http/responses.js';
import { FileSchema, FileWithDownloadSchema } from '../../../core/files/files.presenter.js';
import * as files from '../../../core/files/files.service.js';

export const FileIdParams = z.object({ file_id: z.string() });
const DownloadQuery = z.object({ expires: z.string().optional(), sig: z.string().optional() });

export function fileRoutes(routes: RouteTable) {
  const tag = 'Files';
  routes
    .add(
      {
        method: 'post',
        path: '/files',
        scope: 'files:write',
        summary: 'Upload a file (multipart/form-data, field "file", at most 100 MB); the worker then hashes and checks it',
        tag,
        status: 201,
        // documented as multipart/form-data; the handler streams the body itself
        body: z.unknown(),
        rawBody: true,
        response: dataOf(FileSchema),
        errors: ['file_too_large', 'unsupported_media_type'],
      },
      // A refused upload's remaining body is read and discarded (files.upload.ts), so the client reads the answer.
      async ({ rt, actor, ctx }) => ok(await files.uploadFile(rt, actor, ctx.req)),
    )
    .add(
      {
        method: 'get',
        path: '/files/{file_id}/download',
        scope: 'public',
        summary: 'The file as an attachment, through the signed link of GET /files/{file_id} (embedded store only; no key needed)',
        tag,
        auth: 'none',
        params: FileIdParams,
        query: DownloadQuery,
        produces: ['application/octet-stream'],
        errors: ['forbidden'],
      },
      async ({ rt, params, query, ctx }) => {
        const file = await files.downloadFile(rt, params.file_id, query);
        ctx.set(file.headers);
        return file.body;
      },
    )
    .add({ method: 'get', path: '/files/{file_id}', scope: 'read', summary: 'File metadata and a download URL valid 15 minutes', tag, params: FileIdParams, response: dataOf(FileWithDownloadSchema) }, async ({ rt, actor, params }) =>
      ok(await files.getFile(rt, actor, params.file_id)),
    )
    .add(
      {
        method: 'delete',
        path: '/files/{file_id}',
        scope: 'files:write',
        summary: 'Delete a file and its stored object (its uploader, an admin or the owner); messages that carried it show it as removed',
        since: 3,
        tag,
        params: FileIdParams,
        errors: ['forbidden'],
      },
      async ({ rt, actor, params }) => {
        await files.deleteFile(rt, actor, params.file_id);
      },
    );
}
