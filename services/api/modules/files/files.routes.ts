import { z } from 'zod';
import { ok } from '../../../../shared/http/envelope.js';
import type { RouteTable } from '../../../../shared/http/route.js';
import { dataOf } from '../../../../shared/http/responses.js';
import { FileSchema, FileWithDownloadSchema } from './files.presenter.js';
import * as files from './files.service.js';

export const FileIdParams = z.object({ file_id: z.string() });

export function fileRoutes(routes: RouteTable) {
  const tag = 'Files';
  routes
    .add(
      {
        method: 'post',
        path: '/files',
        summary: 'Upload a file (multipart/form-data, field "file", at most 100 MB); the worker then hashes and checks it',
        tag,
        status: 201,
        // documented as multipart/form-data; the handler streams the body itself
        body: z.unknown(),
        rawBody: true,
        response: dataOf(FileSchema),
        errors: ['file_too_large', 'unsupported_media_type'],
      },
      async ({ rt, actor, ctx }) => {
        try {
          return ok(await files.uploadFile(rt, actor, ctx.req));
        } catch (err) {
          // The client may still be sending: close the connection after answering.
          ctx.set('Connection', 'close');
          throw err;
        }
      },
    )
    .add({ method: 'get', path: '/files/{file_id}', summary: 'File metadata and a download URL valid 15 minutes', tag, params: FileIdParams, response: dataOf(FileWithDownloadSchema) }, async ({ rt, actor, params }) =>
      ok(await files.getFile(rt, actor, params.file_id)),
    );
}
