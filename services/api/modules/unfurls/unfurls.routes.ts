import { z } from 'zod';
import type { RouteTable } from '../../../../shared/http/route.js';
import { readPreviewImage } from '../../../core/unfurls/unfurls.images.js';

const ImageParams = z.object({ workspace_id: z.string(), image_id: z.string() });

export function unfurlRoutes(routes: RouteTable) {
  routes.add(
    {
      method: 'get',
      path: '/unfurl-images/{workspace_id}/{image_id}',
      summary: "A link preview's image as Axid stored it (the `image_url` of a message's `unfurls`; no key needed: an <img> sends none)",
      tag: 'Messages',
      since: 3,
      auth: 'none',
      scope: 'public',
      params: ImageParams,
      produces: ['image/png', 'image/jpeg', 'image/gif', 'image/webp'],
    },
    async ({ rt, params, ctx }) => {
      const image = await readPreviewImage(rt, params.workspace_id, params.image_id);
      ctx.set(image.headers);
      return image.body;
    },
  );
}
