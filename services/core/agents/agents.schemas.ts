import { z } from 'zod';
import type { LevelSpan } from '../../../shared/feature-level.js';
import { Content } from '../messages/messages.schemas.js';

/** Agents at home (contract §15): working status, ephemeral messages, the loop guard and the agent blocks exist from level 3. */
export const AGENTS_AT_HOME: LevelSpan = { since: 3 };

/** How long a working status lasts unless the agent sets another, clears it or posts in its thread. */
export const STATUS_TTL_MS = 120_000;

export const StatusBody = z.strictObject({
  thread_id: z.string().nullable().optional(),
  status: z.string().max(100).describe('What the agent is doing ("is reading the logs…"); "" clears it'),
  loading_messages: z.array(z.string().min(1).max(100)).max(10).optional().describe('Up to 10 lines the client rotates while the status lasts'),
});
export type StatusInput = z.infer<typeof StatusBody>;

export const EphemeralBody = z.strictObject({
  user_id: z.string(),
  content: Content,
  content_json: z.unknown().optional(),
  thread_id: z.string().nullable().optional(),
});
export type EphemeralInput = z.infer<typeof EphemeralBody>;
