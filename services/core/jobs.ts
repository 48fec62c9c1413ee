// Every job the worker runs, by name. The type demands exactly one handler per
// job of shared/jobs.ts; startWorker checks it again at boot.
import type { JobHandlers } from '../../shared/jobs.js';
import { postprocessFile, removeFileObjects } from './files/files.jobs.js';
import { renderWebhookMessage } from './webhooks/webhooks.jobs.js';
import { finishStaleStreams } from './messages/messages.jobs.js';
import { sweepIdempotencyKeys } from '../../shared/http/idempotency.js';
import { indexUnsearchedMessages } from './search/search.jobs.js';
import { notifyAway } from './email/email.notify.js';
import { unfurlMessage } from './unfurls/unfurls.jobs.js';
import { retentionSweep } from './retention/retention.jobs.js';
import { runSlackImport } from './imports/imports.jobs.js';
import { processEmoji } from './emoji/emoji.jobs.js';
import { sendReminder } from './reminders/reminders.service.js';
import { sendScheduledMessage } from './scheduled-messages/scheduled-messages.service.js';

export const handlers: JobHandlers = {
  'file.postprocess': postprocessFile,
  'file.remove_objects': removeFileObjects,
  'webhook.render': renderWebhookMessage,
  'messages.finish_stale_streams': finishStaleStreams,
  'idempotency.sweep': async (rt) => {
    await sweepIdempotencyKeys(rt);
  },
  'search.backfill': indexUnsearchedMessages,
  'retention.sweep': retentionSweep,
  'import.slack': runSlackImport,
  'scheduled_message.send': sendScheduledMessage,
  'reminder.send': sendReminder,
  'emoji.process': processEmoji,
  'message.unfurl': unfurlMessage,
  'email.notify_away': notifyAway,
};
