// The team chat's client logic without a browser (level 3, docs/team-chat.md):
// what the composer's `@` offers, custom emoji in text, the rules checked
// before a group or an emoji is sent, and the pin and group events.
import { expect } from 'chai';
import { mentionCandidates } from '../../services/web/src/lib/mention-candidates.js';
import { emojiImagePath, setCustomEmoji, splitCustomEmoji } from '../../services/web/src/lib/custom-emoji.js';
import { emojiNameProblem, groupHandleProblem, type UserGroup } from '../../services/web/src/lib/team-chat.js';
import { Store } from '../../services/web/src/lib/store.js';
import { applyEvent } from '../../services/web/src/lib/events.js';
import type { Message, User } from '../../services/web/src/lib/types.js';

const user = (name: string, display_name: string | null = null): User => ({ id: `u-${name}`, name, display_name, avatar_url: null, role: 'member', is_agent: false, created_at: '2026-01-01T00:00:00.000Z' });
const group = (handle: string, name: string, member_ids: string[] = []): UserGroup => ({ id: `g-${handle}`, handle, name, description: '', member_ids, created_by: null, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' });

describe('web app: team chat logic', () => {
  it('offers people, then @here, @channel and groups by handle or name; no groups at level 2', () => {
    const users = [user('bob'), user('hera', 'Hera Smith')];
    const groups = [group('backend', 'Backend team', ['u-bob']), group('design', 'Hardware designers')];
    expect(mentionCandidates('he', users, groups).map((c) => c.label)).to.deep.equal(['Hera Smith', '@here']);
    expect(mentionCandidates('back', users, groups).map((c) => [c.insert, c.hint])).to.deep.equal([['backend', 'Backend team, 1 member']]);
    // A group is found by its name too; what is inserted is its handle.
    expect(mentionCandidates('hard', users, groups).map((c) => c.insert)).to.deep.equal(['design']);
    expect(mentionCandidates('', users, groups).map((c) => c.insert)).to.deep.equal(['bob', 'hera', 'here', 'channel', 'backend', 'design']);
    expect(mentionCandidates('he', users, null).map((c) => c.label)).to.deep.equal(['Hera Smith']);
  });

  it('keeps room for groups among many people, and at most six in all', () => {
    const users = Array.from({ length: 10 }, (_, i) => user(`cha${i}`));
    const found = mentionCandidates('cha', users, [group('chaos', 'Chaos')]);
    expect(found).to.have.length(6);
    expect(found.slice(-2).map((c) => c.insert)).to.deep.equal(['channel', 'chaos']);
  });

  it('splits text into words and custom emoji it knows, only on the page’s own origin and emoji-image path', () => {
    setCustomEmoji(
      [
        { name: 'party', url: 'https://chat.example/api/v1/emoji-images/abc123' },
        { name: 'pending', url: null },
        { name: 'evil', url: 'https://chat.example/api/v1/files/xyz' },
      ],
      'http://127.0.0.1:3000',
    );
    expect(splitCustomEmoji('go :party: now :pending: :evil: :PARTY:')).to.deep.equal([
      'go ',
      { emoji: 'party', src: 'http://127.0.0.1:3000/api/v1/emoji-images/abc123' },
      ' now :pending: :evil: ',
      { emoji: 'party', src: 'http://127.0.0.1:3000/api/v1/emoji-images/abc123' },
    ]);
    expect(splitCustomEmoji('no emoji here')).to.deep.equal(['no emoji here']);
    expect(emojiImagePath('javascript:alert(1)', 'http://x')).to.equal(null);
    setCustomEmoji([], 'http://127.0.0.1:3000');
    expect(splitCustomEmoji('go :party:')).to.deep.equal(['go :party:']);
  });

  it('checks handles and emoji names as the API does', () => {
    expect(groupHandleProblem('backend.team_1-x')).to.equal(null);
    expect(groupHandleProblem('Backend')).to.match(/lower-case/);
    expect(groupHandleProblem('channel')).to.match(/mention of its own/);
    expect(groupHandleProblem('a'.repeat(41))).to.match(/1 to 40/);
    expect(emojiNameProblem('party+parrot_2-x')).to.equal(null);
    expect(emojiNameProblem('party.parrot')).to.match(/1 to 64/);
    expect(emojiNameProblem('')).to.match(/name/);
  });

  it('applies pin and group events: the message is marked without moving, an open pins list follows', () => {
    const s = new Store();
    const m = { id: 'm1', channel_id: 'c1', thread_id: null, author_id: 'u-bob', content: 'hi', content_json: null, metadata: null, created_at: '2026-01-01T00:00:00.000Z', edited_at: null, reactions: [], thread: null, pinned_at: null, pinned_by: null } as unknown as Message;
    s.upsert(m, { live: false });
    s.team.pins.set('c1', []);
    const pinned = { ...m, pinned_at: '2026-01-02T00:00:00.000Z', pinned_by: 'u-me' };
    expect(applyEvent(s, 'message.pinned', { message_id: 'm1', channel_id: 'c1', user_id: 'u-me', message: pinned })).to.equal(true);
    expect(s.messages.get('m1')!.pinned_by).to.equal('u-me');
    expect(s.list('c1').map((x) => x.id)).to.deep.equal(['m1']);
    expect(s.team.pins.get('c1')!.map((x) => x.id)).to.deep.equal(['m1']);
    applyEvent(s, 'message.unpinned', { message_id: 'm1', channel_id: 'c1', user_id: 'u-me' });
    expect(s.messages.get('m1')!.pinned_at).to.equal(null);
    expect(s.team.pins.get('c1')).to.deep.equal([]);
    applyEvent(s, 'user_group.created', { user_group: group('ops', 'Ops') });
    expect([...s.team.groups.keys()]).to.deep.equal(['g-ops']);
    applyEvent(s, 'user_group.deleted', { user_group_id: 'g-ops' });
    expect(s.team.groups.size).to.equal(0);
    expect(applyEvent(s, 'no.such.event', {})).to.equal(false);
  });
});
