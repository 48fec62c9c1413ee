import { z } from 'zod';
import { PageQuery } from '../../../shared/http/envelope.js';
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

// The message rules of contract §5 (the messages module applies the same on write).
export const Metadata = z
  .strictObject({
    type: z.string().min(1).max(100),
    data: z.record(z.string(), z.unknown()),
  })
  .refine((m) => Buffer.byteLength(JSON.stringify(m)) <= 16 * 1024, 'must be at most 16 KB as JSON');

export const NativePostBody = z.object({
  content: z
    .string()
    .min(1)
    .max(MAX_CONTENT)
    .refine((s) => s.trim().length > 0, 'must not be only white space'),
  metadata: Metadata.optional(),
});
export type NativePost = z.infer<typeof NativePostBody>;
