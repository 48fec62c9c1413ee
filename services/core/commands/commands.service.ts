// Slash commands (level 3, contract §15): each agent declares its commands;
// a member of a conversation the agent is also in invokes one, and the
// agent alone is told (its streams and event subscriptions), as it is of a
// click on its buttons.
import { randomUUID } from 'node:crypto';
import type { Actor } from '../../../shared/auth.js';
import { AppError, forbidden, invalid, isUniqueViolation, notFound } from '../../../shared/errors.js';
import { recordEvents } from '../../../shared/events.js';
import { decodeCursor, pageOf, type PageQuery } from '../../../shared/http/envelope.js';
import { isUuid } from '../../../shared/ids.js';
import type { Runtime } from '../../../shared/runtime.js';
import { findWithMembership, isMember } from '../channels/channels.store.js';
import { isRootOf } from '../messages/messages.store.js';
import { presentCommand, type CommandRow } from './commands.presenter.js';
import type { CommandsInput, InvokeInput } from './commands.schemas.js';
import * as store from './commands.store.js';

/** Replaces the calling agent's commands (all of them: a PUT); a name another agent holds answers 409 name_taken. */
export async function putCommands(rt: Runtime, actor: Actor, commands: CommandsInput) {
  if (!actor.isAgent) throw forbidden('only an agent declares slash commands');
  try {
    const rows = await rt.db.transaction((trx) => store.replaceCommands(trx, actor.workspaceId, actor.userId, commands));
    return rows.map(presentCommand);
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('name_taken', 'a command of that name belongs to another agent of this workspace');
    throw err;
  }
}

export async function listCommands(rt: Runtime, actor: Actor, q: PageQuery) {
  const rows = await rt.reads.read(actor, (db) => store.listCommands(db, actor.workspaceId, { after: decodeCursor(q.cursor), limit: q.limit }));
  return pageOf(
    rows.map((r) => ({ ...r, seq: Number(r.seq) })),
    q.limit,
    (r: CommandRow) => presentCommand(r),
  );
}

/**
 * Invokes a command: the caller is a member of the conversation and so is
 * the command's agent; anything else (no such command, a conversation the
 * caller cannot read or is not in, the agent not in it) answers the same
 * 404, so an invocation never tells who is where.
 */
export async function invokeCommand(rt: Runtime, actor: Actor, body: InvokeInput) {
  const name = body.command.replace(/^\//, '');
  const hidden = () => notFound('Command or conversation');
  const found = isUuid(body.conversation_id) ? await findWithMembership(rt.db, actor, body.conversation_id) : undefined;
  if (!found || !found.isMember) throw hidden();
  const command = await store.findCommand(rt.db, actor.workspaceId, name);
  if (!command || !(await isMember(rt.db, found.channel.id, command.user_id))) throw hidden();
  const threadId = body.thread_id ?? null;
  if (threadId !== null && !(isUuid(threadId) && (await isRootOf(rt.db, found.channel.id, threadId)))) {
    throw invalid('thread_id: must name a top-level message of this conversation');
  }
  const invocation = {
    id: randomUUID(),
    command: name,
    text: body.text,
    user_id: actor.userId,
    conversation_id: found.channel.id,
    thread_id: threadId,
    created_at: new Date(),
  };
  // Durable (the outbox): an agent that was away gets it on resuming its stream.
  await recordEvents(rt, rt.db, [{ type: 'command.invoked', to: { scope: 'users', workspace_id: actor.workspaceId, user_ids: [command.user_id] }, data: invocation }]);
  return { id: invocation.id };
}
