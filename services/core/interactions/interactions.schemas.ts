import { z } from 'zod';

/** `POST /interactions/actions` (level 3): the button clicked, named by its message and its `actionId`. */
export const ActionBody = z.strictObject({
  message_id: z.string({ error: 'is required (a message id)' }).min(1, 'is required (a message id)'),
  action_id: z.string({ error: 'is required (the actionId of a button)' }).min(1, 'is required (the actionId of a button)').max(255, 'must be at most 255 characters'),
});
export type ActionInput = z.infer<typeof ActionBody>;
