// Button actions (level 3): a reader of a message clicks one of its actionId
// buttons; the click is kept and told to the message's author alone (the bot
// that posted the buttons), on its own streams.
import type { Actor } from '../../../shared/auth.js';
import { AppError, invalid, notFound } from '../../../shared/errors.js';
import { recordEvents } from '../../../shared/events.js';
import { isUuid } from '../../../shared/ids.js';
import type { Runtime } from '../../../shared/runtime.js';
import { refuseArchived, requireReadable } from '../channels/channels.access.js';
import type { ContentNode } from '../messages/messages.presenter.js';
import { presentInteraction } from './interactions.presenter.js';
import { countClick } from './interactions.limits.js';
import type { ActionInput } from './interactions.schemas.js';
import * as store from './interactions.store.js';

/** Every `actionId` of the button_group blocks in a document, at any depth. */
export function actionIdsOf(doc: { content?: ContentNode[] } | null): Set<string> {
  const ids = new Set<string>();
  const stack: ContentNode[] = [...(doc?.content ?? [])];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.type === 'block_button_group') {
      const buttons = (node.attrs?.props as { buttons?: { actionId?: unknown }[] } | undefined)?.buttons ?? [];
      for (const b of buttons) if (typeof b.actionId === 'string') ids.add(b.actionId);
    }
    if (node.content) stack.push(...node.content);
  }
  return ids;
}

/** No channel has this id: an unknown message's access check asks for it. */
const NO_CHANNEL = '00000000-0000-0000-0000-000000000000';

export async function invokeAction(rt: Runtime, actor: Actor, body: ActionInput) {
  const target = isUuid(body.message_id) ? await store.findActionTarget(rt.db, actor.workspaceId, body.message_id) : undefined;
  // A message the caller cannot read answers as one that does not exist, after
  // the same work: an unknown one runs the access check too (for a channel
  // that is not there), so neither answers sooner than the other.
  const readable = await requireReadable(rt.db, actor, target?.channel_id ?? NO_CHANNEL, target && target.kind !== 'channel' ? 'conversation' : 'channel', rt.access).then(
    (found) => found.channel,
    (err: unknown) => {
      if (err instanceof AppError && err.code === 'not_found') return undefined;
      throw err;
    },
  );
  if (!target || !readable) throw notFound('Message');
  // A click is a write in the conversation: an archived channel takes none.
  refuseArchived(readable);
  if (!actionIdsOf(target.content_json).has(body.action_id)) {
    throw invalid(`action_id: the message has no button with actionId "${body.action_id}"`);
  }
  await countClick(rt, actor.userId, target.id);
  return rt.db.transaction(async (trx) => {
    const row = await store
      .insertInteraction(trx, { workspace_id: actor.workspaceId, message_id: target.id, channel_id: target.channel_id, action_id: body.action_id, user_id: actor.userId })
      .catch((err: { code?: string }) => {
        // 23503: the message was deleted meanwhile.
        throw err.code === '23503' ? notFound('Message') : err;
      });
    const interaction = presentInteraction(row);
    // A webhook post has no author: the click is kept, nobody is told.
    if (target.author_id) {
      await recordEvents(rt, trx, [
        { type: 'interaction.action', to: { scope: 'users', workspace_id: actor.workspaceId, user_ids: [target.author_id] }, data: { interaction } },
      ]);
    }
    return interaction;
  });
}
