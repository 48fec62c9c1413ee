// `webhook.render`, run by the worker: a compatible post's attachments become
// quoted text in `content` and quote blocks in `content_json`, then
// message.updated. The pending row is taken in the same transaction, so a
// retried job renders nothing twice.
import { validateContentJson } from '../../../shared/blocks/index.js';
import { AppError } from '../../../shared/errors.js';
import type { JobHandler } from '../../../shared/jobs.js';
import { replaceMessageContent } from '../messages/messages.service.js';
import { renderCompatMessage } from './webhooks.compat.js';
import * as store from './webhooks.store.js';

export const renderWebhookMessage: JobHandler<'webhook.render'> = async (rt, { messageId }) => {
  await rt.db.transaction(async (trx) => {
    const pending = await store.takePendingRender(trx, messageId);
    if (!pending) return; // rendered by an earlier attempt, or the message is gone
    const { content, doc } = renderCompatMessage(pending.text, pending.attachments, rt.presenters.textMentions);
    const checked = validateContentJson(doc, { trackerHosts: rt.config.trackerHosts, codeHosts: rt.config.codeHosts });
    if (!checked.valid) rt.log.warn({ message_id: messageId, problem: checked.message }, 'rendered attachments kept as text only');
    try {
      // Checks (content rules, sanitizing, blocks) come before its write.
      await replaceMessageContent(rt, trx, messageId, { content, content_json: checked.valid ? doc : null });
    } catch (err) {
      // Refused content would be refused on every retry: the placeholder stays.
      if (!(err instanceof AppError && err.code === 'validation_error')) throw err;
      rt.log.warn({ message_id: messageId, problem: err.message }, 'rendered attachments refused; the message keeps its text');
    }
    await store.deletePendingRender(trx, messageId);
  });
};
