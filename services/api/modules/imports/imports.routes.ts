import { z } from 'zod';
import { ok } from '../../../../shared/http/envelope.js';
import type { RouteTable } from '../../../../shared/http/route.js';
import { dataOf } from '../../../../shared/http/responses.js';
import { ImportSchema } from '../../../core/imports/imports.presenter.js';
import * as imports from '../../../core/imports/imports.service.js';

const ImportParams = z.object({ import_id: z.string() });

// Moving in from Slack through the API (contract §13, level 3; the commands work at any level).
export function importRoutes(routes: RouteTable) {
  const tag = 'Imports';
  routes
    .add(
      {
        method: 'post',
        path: '/imports/slack',
        scope: 'admin',
        summary: "Import a Slack export (multipart/form-data, field \"file\": the ZIP of Slack's Export data); the worker runs it (owners)",
        tag,
        status: 202,
        // documented as multipart/form-data; the handler streams the body to storage itself
        body: z.unknown(),
        rawBody: true,
        response: dataOf(ImportSchema),
        errors: ['forbidden', 'file_too_large', 'unsupported_media_type'],
        since: 3,
      },
      async ({ rt, actor, ctx }) => ok(await imports.startSlackImport(rt, actor, ctx.req)),
    )
    .add(
      { method: 'get', path: '/imports/{import_id}', scope: 'read', summary: 'An import: its status, counts so far, and once finished its report (owners)', tag, params: ImportParams, response: dataOf(ImportSchema), errors: ['forbidden'], since: 3 },
      async ({ rt, actor, params }) => ok(await imports.getImport(rt, actor, params.import_id)),
    );
}
