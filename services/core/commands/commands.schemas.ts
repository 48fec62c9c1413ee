import { z } from 'zod';

/** Names no agent may declare: built into the clients (`/remind`: reminders). */
export const RESERVED_COMMANDS = ['remind'] as const;

export const CommandName = z
  .string()
  .regex(/^[a-z0-9-]{1,32}$/, 'must be 1 to 32 of a-z, 0-9 and -')
  .refine((name) => !(RESERVED_COMMANDS as readonly string[]).includes(name), 'is built in: choose another name');

export const CommandsBody = z
  .array(
    z.strictObject({
      name: CommandName,
      description: z.string().min(1).max(200),
      usage: z.string().max(200).optional(),
    }),
  )
  .max(50)
  .refine((commands) => new Set(commands.map((c) => c.name)).size === commands.length, 'must not name a command twice');
export type CommandsInput = z.infer<typeof CommandsBody>;

export const InvokeBody = z.strictObject({
  conversation_id: z.string(),
  thread_id: z.string().nullable().optional(),
  command: z.string().min(1).max(33).describe('The name, with or without its leading /'),
  text: z.string().max(4000),
});
export type InvokeInput = z.infer<typeof InvokeBody>;
