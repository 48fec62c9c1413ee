// Stream events -> store updates (docs/realtime.md lists the payloads).
import type { Store } from './store.js';
import { applyTeamEvent } from './team-chat.js';
import type { Channel, Conversation, Message, User } from './types.js';

export function applyEvent(store: Store, type: string, data: Record<string, unknown>) {
  const me = store.me?.id;
  switch (type) {
    case 'message.created': {
      const m = data.message as Message;
      store.upsert(m, { live: true });
      store.clearTyping(m.channel_id, m.author_id);
      store.clearAgentStatus(m.channel_id, m.author_id);
      break;
    }
    case 'agent.status':
      store.setAgentStatus(data.conversation_id as string, data.user_id as string, data.status as string, data.expires_at as string);
      break;
    case 'message.ephemeral':
      // Level 3: shown to this person only, below the conversation, until dismissed or the page reloads.
      store.addEphemeral(data.message as Message);
      break;
    case 'message.updated':
      store.upsert(data.message as Message, { live: true });
      break;
    case 'message.appended':
      store.append(data.message_id as string, data.content_delta as string);
      break;
    case 'message.deleted':
      store.remove(data.message_id as string);
      break;
    case 'reaction.added':
      store.addReaction(data.message_id as string, data.emoji as string, data.user_id as string);
      break;
    case 'reaction.removed':
      store.removeReaction(data.message_id as string, data.emoji as string, data.user_id as string);
      break;
    case 'typing':
      store.setTyping(data.channel_id as string, data.user_id as string);
      break;
    case 'channel.created':
    case 'channel.updated':
      store.upsertChannel(data.channel as Channel);
      break;
    case 'channel.member_added':
      if (data.user) store.users.set((data.user as User).id, data.user as User);
      if (data.user_id === me) store.memberOf.add(data.channel_id as string);
      break;
    case 'channel.member_removed':
      if (data.user_id === me) {
        const channel = store.channels.get(data.channel_id as string);
        if (channel?.is_private) store.removeChannel(channel.id);
        else store.memberOf.delete(data.channel_id as string);
      }
      break;
    case 'dm.created': {
      const c = (data.conversation ?? data.dm) as Conversation | undefined;
      if (c) store.dms.set(c.id, c);
      break;
    }
    case 'user.created':
    case 'user.updated':
    case 'member.updated':
    {
      // An event carries a user as the whole workspace sees them: no email and
      // no email_notifications. What only this viewer reads (from GET /users/me
      // or the admin's list) stays; the event's public fields replace the rest.
      const user = data.user as User | undefined;
      if (!user) break;
      store.users.set(user.id, { ...store.users.get(user.id), ...user });
      if (store.me?.id === user.id) store.me = { ...store.me, ...user };
      break;
    }
    case 'channel.read':
      store.readElsewhere(data.channel_id as string, data.last_read_message_id as string);
      break;
    case 'presence.updated':
      store.presence.set(data.user_id as string, data.status === 'online' ? 'online' : 'offline');
      break;
    case 'member.removed':
      store.users.delete(data.user_id as string);
      break;
    default:
      // Level 3's user groups and pins (lib/team-chat.ts).
      if (!applyTeamEvent(store, type, data)) return false;
  }
  store.changed();
  return true;
}
