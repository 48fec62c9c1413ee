import { expect } from 'chai';
import type { Actor } from '../../shared/auth.js';
import { canAddMember, canRemoveMember, canSetDefault, canUpdateChannel } from '../../services/core/channels/channels.policy.js';
import { canDeleteMessage, canEditMessage, canParticipate } from '../../services/core/messages/messages.policy.js';
import { isEmoji } from '../../services/core/messages/messages.schemas.js';
import { canDeleteFile } from '../../services/core/files/files.policy.js';

const actor = (role: Actor['role'], userId = 'me'): Actor => ({ keyId: 'k', userId, workspaceId: 'w', role, isAgent: false, scopes: null, conversationIds: null });

describe('conversation policies (pure)', () => {
  it('is_default: admins and owners only', () => {
    expect(canSetDefault(actor('member'))).to.equal(false);
    expect(canSetDefault(actor('admin'))).to.equal(true);
    expect(canSetDefault(actor('owner'))).to.equal(true);
  });

  it('updating a channel: members, admins, owners', () => {
    expect(canUpdateChannel(actor('member'), false)).to.equal(false);
    expect(canUpdateChannel(actor('member'), true)).to.equal(true);
    expect(canUpdateChannel(actor('admin'), false)).to.equal(true);
  });

  it('adding: anyone to a public channel, members to a private one', () => {
    expect(canAddMember({ is_private: false }, false)).to.equal(true);
    expect(canAddMember({ is_private: true }, false)).to.equal(false);
    expect(canAddMember({ is_private: true }, true)).to.equal(true);
  });

  it('removing: self, admins/owners, or any member of a private channel', () => {
    expect(canRemoveMember(actor('member'), false, 'me')).to.equal(true);
    expect(canRemoveMember(actor('member'), true, 'other')).to.equal(true);
    expect(canRemoveMember(actor('member'), false, 'other')).to.equal(false);
    expect(canRemoveMember(actor('admin'), false, 'other')).to.equal(true);
  });

  it('messages: members participate; only the author edits; author, admin or owner deletes', () => {
    expect(canParticipate(false)).to.equal(false);
    expect(canEditMessage(actor('owner'), { author_id: 'other' })).to.equal(false);
    expect(canEditMessage(actor('member'), { author_id: 'me' })).to.equal(true);
    expect(canDeleteMessage(actor('member'), { author_id: 'other' })).to.equal(false);
    expect(canDeleteMessage(actor('admin'), { author_id: 'other' })).to.equal(true);
    expect(canDeleteMessage(actor('owner'), { author_id: null })).to.equal(true);
  });

  it('deleting a file (level 3): its uploader, admins, owners', () => {
    expect(canDeleteFile(actor('member'), { uploader_id: 'me' })).to.equal(true);
    expect(canDeleteFile(actor('member'), { uploader_id: 'other' })).to.equal(false);
    expect(canDeleteFile(actor('member'), { uploader_id: null })).to.equal(false);
    expect(canDeleteFile(actor('admin'), { uploader_id: 'other' })).to.equal(true);
    expect(canDeleteFile(actor('owner'), { uploader_id: null })).to.equal(true);
  });

  it('emoji: names and Unicode emoji only', () => {
    for (const ok of ['thumbsup', '+1', '-1', 'white_check_mark', '100', '👍', '🏳️‍🌈', '🇯🇵', '#️⃣']) expect(isEmoji(ok), ok).to.equal(true);
    for (const bad of ['', 'UPPER', 'with space', 'x'.repeat(65), '👍x', 'é', '<b>', '😀'.repeat(40)]) expect(isEmoji(bad), bad).to.equal(false);
  });
});
