import { z } from 'zod';
import { PageQuery } from '../../../shared/http/envelope.js';
import { Metadata } from '../messages/messages.schemas.js';
import { MAX_CONTENT } from './webhooks.compat.js';

const Name = z
  .string()
  .min(1)
  .max(80)
  .refine((s) => s.trim().length > 0, 'must not be only white space');

export const CreateWebhookBody = z.strictObject({
  channel_id: z.string().min(1).max(100),
  name: Name,
});

export const ListWebhooksQuery = PageQuery;

export const WebhookIdParams = z.object({ webhook_id: z.string() });

export const NativePostBody = z.strictObject({
  content: z
    .string()
    .min(1)
    .max(MAX_CONTENT)
    .refine((s) => s.trim().length > 0, 'must not be only white space'),
  metadata: Metadata.optional(),
});
/** Level 3 (contract §11): `thread_id` replies in a thread of the hook's channel, as on message create. */
export const NativePostBodyWithThread = NativePostBody.extend({ thread_id: z.string().max(100).nullable().optional() });
export type NativePost = z.infer<typeof NativePostBodyWithThread>;
