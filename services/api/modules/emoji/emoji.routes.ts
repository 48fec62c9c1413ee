import { z } from 'zod';
import { PageQuery, list, ok } from '../../../../shared/http/envelope.js';
import type { RouteTable } from '../../../../shared/http/route.js';
import { dataOf, listOf } from '../../../../shared/http/responses.js';
import { CustomEmojiSchema } from '../../../core/emoji/emoji.presenter.js';
import { EmojiImageParams, EmojiNameParams } from '../../../core/emoji/emoji.schemas.js';
import * as emoji from '../../../core/emoji/emoji.service.js';

const tag = 'Custom emoji';

/** A workspace's custom emoji, level 3. */
export function emojiRoutes(routes: RouteTable) {
  routes
    .add(
      {
        method: 'post',
        path: '/emoji',
        scope: 'files:write',
        summary: 'Add a custom emoji (multipart: "name", 1 to 64 of a-z 0-9 _ + - and no standard shortcode; "image", PNG, GIF, JPEG or WebP up to 256 KB, stored at most 128×128)',
        since: 3,
        tag,
        status: 201,
        // documented as multipart/form-data; the handler reads the body itself
        body: z.unknown(),
        rawBody: true,
        multipartFields: { name: 'text', image: 'binary' },
        response: dataOf(CustomEmojiSchema),
        errors: ['file_too_large', 'unsupported_media_type', 'name_taken'],
      },
      async ({ rt, actor, ctx }) => ok(await emoji.createEmoji(rt, actor, ctx.req)),
    )
    .add({ method: 'get', path: '/emoji', scope: 'read', summary: "The workspace's custom emoji, newest first", since: 3, tag, query: PageQuery, response: listOf(CustomEmojiSchema) }, async ({ rt, actor, query }) =>
      list(await emoji.listEmoji(rt, actor, query)),
    )
    .add({ method: 'delete', path: '/emoji/{name}', scope: 'files:write', summary: 'Delete a custom emoji (its creator, an admin or an owner)', since: 3, tag, params: EmojiNameParams, errors: ['forbidden'] }, async ({ rt, actor, params }) => {
      await emoji.deleteEmoji(rt, actor, params.name);
    })
    .add(
      {
        method: 'get',
        path: '/emoji-images/{emoji_id}',
        scope: 'public',
        summary: "A custom emoji's image (WebP, at most 128×128), the `url` of GET /emoji; no key needed",
        since: 3,
        tag,
        auth: 'none',
        params: EmojiImageParams,
        produces: ['image/webp'],
      },
      async ({ rt, params, ctx }) => {
        const image = await emoji.emojiImage(rt, params.emoji_id);
        ctx.set(image.headers);
        return image.body;
      },
    );
}
