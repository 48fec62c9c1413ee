// The objects as a runtime's feature level has them, made once when the
// runtime is built (services/stack.ts: `presenters: presentersAt(level)`).
// What a level changes in core is which fields an object carries, declared
// once on its schema (`fromLevel`, shared/feature-level.ts); here each
// declaration becomes a renderer bound to the level, so core services render
// and query through `rt.presenters` and never ask the level themselves
// (docs/architecture.md, "Where the level is read").
import { apiKeyPresenter, type PresentApiKey } from '../../shared/auth.js';
import { existsAt, type FeatureLevel } from '../../shared/feature-level.js';
import { GROUP_MENTIONS, MESSAGE_UNFURLS, messagePresenter, type PresentMessage } from './messages/messages.presenter.js';
import { messageSqlAt, type MessageSql } from './messages/messages.store.js';
import { FILES_FOLLOW_CONVERSATIONS } from './files/files.presenter.js';
import { AGENTS_AT_HOME } from './agents/agents.schemas.js';
import { TEAM_CHANNELS, channelPresenter, type ChannelObject, type ChannelRow } from './channels/channels.presenter.js';
import { READ_STATE } from './read-state/read-state.schemas.js';
import { EMAIL } from './email/email.mailer.js';
import { HOOK_NAMES } from './webhooks/webhooks.presenter.js';
import { SEARCH } from './search/search.schemas.js';
import { userPresenterTo, type PresentUserTo } from './users/users.presenter.js';
import { workspacePresenter, type WorkspaceObject, type WorkspaceRow } from './workspaces/workspaces.presenter.js';

export interface Presenters {
  /** A Message (`streaming` where the level has it). */
  message: PresentMessage;
  /** The same Message rendered by Postgres: history pages and search results. */
  messageSql: MessageSql;
  /** Users as a viewer reads them (`email` where the level has it, to those who may see it). */
  userTo: PresentUserTo;
  /** Whether Channel and Conversation objects carry the caller's read state (read-state.schemas.ts). */
  readState: boolean;
  /** Whether a post writes its search words (where search exists: migration 090). */
  searchWords: boolean;
  /** Whether files follow their conversations (contract §17) rather than being read by every member (§4). */
  filesFollowConversations: boolean;
  /** Whether messages carry link previews (contract §14: services/core/unfurls). */
  unfurls: boolean;
  /** The Workspace (`settings.retention_days` where the level shows it). */
  workspace: (row: WorkspaceRow) => WorkspaceObject;
  /** An API key (its `scopes` and `conversation_ids` where the level has them: shared/scopes.ts). */
  apiKey: PresentApiKey;
  /** Whether agents are at home (contract §15): the loop guard, the status a post clears, the agent blocks. */
  agentsAtHome: boolean;
  /** Whether `@name`, `@here`, `@channel` and `@<group>` written in content mention (contract §14), beside content_json's mention nodes. */
  textMentions: boolean;
  /** The Channel (`archived_at`, `member_count`, `is_member` where the level has them). */
  channel: (row: ChannelRow) => ChannelObject;
  /** Whether channels can be archived, and lists leave archived ones out unless asked (contract §14). */
  archivedChannels: boolean;
  /** Whether mail is sent where SMTP is configured (contract §14): level 2 sends none. */
  email: boolean;
  /** Whether a hook's posts carry its name in `display.username` (webhooks.presenter.ts). */
  hookNames: boolean;
}

export const presentersAt = (level: FeatureLevel): Presenters => ({
  message: messagePresenter(level),
  messageSql: messageSqlAt(level),
  userTo: userPresenterTo(level),
  readState: existsAt(READ_STATE, level),
  searchWords: existsAt(SEARCH, level),
  filesFollowConversations: existsAt(FILES_FOLLOW_CONVERSATIONS, level),
  unfurls: existsAt(MESSAGE_UNFURLS, level),
  workspace: workspacePresenter(level),
  apiKey: apiKeyPresenter(level),
  agentsAtHome: existsAt(AGENTS_AT_HOME, level),
  textMentions: existsAt(GROUP_MENTIONS, level),
  channel: channelPresenter(level),
  archivedChannels: existsAt(TEAM_CHANNELS, level),
  email: existsAt(EMAIL, level),
  hookNames: existsAt(HOOK_NAMES, level),
});

// The runtime carries them; shared/runtime.ts cannot name core's types, so
// core adds the field to its interface.
declare module '../../shared/runtime.js' {
  interface Runtime {
    /** The objects of this runtime's feature level (services/core/presenters.ts). */
    presenters: Presenters;
  }
}
