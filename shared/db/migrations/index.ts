import type { Knex } from 'knex';
import * as core from './001_core.js';
import * as filesWebhooks from './003_files_webhooks.js';
import * as messagePageHints from './004_message_page_hints.js';
import * as messageInsertChecks from './005_message_insert_checks.js';
import * as jobOutbox from './006_job_outbox.js';
import * as messageJsonAsWritten from './007_message_json_as_written.js';
import * as outboxCommitBy from './010_outbox_commit_by.js';
import * as jobOutboxCommitBy from './011_job_outbox_commit_by.js';
import * as privateChannelNames from './012_private_channel_names.js';
import * as interactions from './020_interactions.js';
import * as messageEdits from './021_message_edits.js';
import * as streamingReplies from './022_streaming_replies.js';
import * as idempotencyKeys from './023_idempotency_keys.js';
import * as messageSearch from './024_message_search.js';
import * as messageSearchStatistics from './025_message_search_statistics.js';
import * as readState from './040_read_state.js';
import * as eventSubscriptions from './050_event_subscriptions.js';
import * as signIn from './060_sign_in.js';
import * as outboxAutovacuum from './070_outbox_autovacuum.js';
import * as eventCursor from './080_event_cursor.js';
import * as messageChannelKey from './081_message_channel_key.js';
import * as messageSearchTable from './090_message_search_table.js';
import * as emailIdentity from './100_email_identity.js';
import * as derivedCredentials from './101_derived_credentials.js';
import * as streamedReplyAppends from './110_streamed_reply_appends.js';
import * as fileCarriers from './120_file_carriers.js';
import * as slackImport from './130_slack_import.js';
import * as auditLogRetention from './140_audit_log_retention.js';
import * as userPreferences from './150_user_preferences.js';
import * as traceContext from './160_trace_context.js';
import * as agentsAtHome from './170_agents_at_home.js';
import * as scopedKeys from './180_scoped_keys.js';
import * as userGroups from './190_user_groups.js';
import * as userNamesNotGroupHandles from './191_user_names_not_group_handles.js';
import * as pinsArchivedChannels from './195_pins_archived_channels.js';
import * as scheduledMessages from './200_scheduled_messages.js';
import * as customEmoji from './201_custom_emoji.js';
import * as messageUnfurls from './205_message_unfurls.js';
import * as emailNotifications from './206_email_notifications.js';
import * as oauth from './210_oauth.js';
import * as followedThreads from './235_followed_threads.js';
import * as messageJsonParts from './240_message_json_parts.js';
import * as authorIndexThreadsOnly from './241_author_index_threads_only.js';
import * as retentionWalksSeq from './250_retention_walks_seq.js';

// Ordered by name; append new migrations here.
export const migrations: Record<string, Knex.Migration> = {
  '001_core': core,
  '003_files_webhooks': filesWebhooks,
  '004_message_page_hints': messagePageHints,
  '005_message_insert_checks': messageInsertChecks,
  '006_job_outbox': jobOutbox,
  '007_message_json_as_written': messageJsonAsWritten,
  '010_outbox_commit_by': outboxCommitBy,
  '011_job_outbox_commit_by': jobOutboxCommitBy,
  '012_private_channel_names': privateChannelNames,
  '020_interactions': interactions,
  '021_message_edits': messageEdits,
  '022_streaming_replies': streamingReplies,
  '023_idempotency_keys': idempotencyKeys,
  '024_message_search': messageSearch,
  '025_message_search_statistics': messageSearchStatistics,
  '040_read_state': readState,
  '050_event_subscriptions': eventSubscriptions,
  '060_sign_in': signIn,
  '070_outbox_autovacuum': outboxAutovacuum,
  '080_event_cursor': eventCursor,
  '081_message_channel_key': messageChannelKey,
  '090_message_search_table': messageSearchTable,
  '100_email_identity': emailIdentity,
  '101_derived_credentials': derivedCredentials,
  '110_streamed_reply_appends': streamedReplyAppends,
  '120_file_carriers': fileCarriers,
  '130_slack_import': slackImport,
  '140_audit_log_retention': auditLogRetention,
  '150_user_preferences': userPreferences,
  '160_trace_context': traceContext,
  '170_agents_at_home': agentsAtHome,
  '180_scoped_keys': scopedKeys,
  '190_user_groups': userGroups,
  '191_user_names_not_group_handles': userNamesNotGroupHandles,
  '195_pins_archived_channels': pinsArchivedChannels,
  '200_scheduled_messages': scheduledMessages,
  '201_custom_emoji': customEmoji,
  '205_message_unfurls': messageUnfurls,
  '206_email_notifications': emailNotifications,
  '210_oauth': oauth,
  '235_followed_threads': followedThreads,
  '240_message_json_parts': messageJsonParts,
  '241_author_index_threads_only': authorIndexThreadsOnly,
  '250_retention_walks_seq': retentionWalksSeq,
};
