import { list, ok } from '../../../../shared/http/envelope.js';
import { dataOf, listOf } from '../../../../shared/http/responses.js';
import { ChannelMemberSchema, ChannelSchema } from '../../../core/channels/channels.presenter.js';
import type { RouteTable } from '../../../../shared/http/route.js';
import { AddMemberBody, ChannelParams, CreateChannelBody, ListChannelsQuery, ListQuery, MemberParams, UpdateChannelBody } from '../../../core/channels/channels.schemas.js';
import * as channels from '../../../core/channels/channels.service.js';
import { markRead } from '../../../core/read-state/read-state.js';
import { ReadBody } from '../../../core/read-state/read-state.schemas.js';

export function channelRoutes(routes: RouteTable) {
  const tag = 'Channels';
  routes
    .add({ method: 'get', path: '/channels', scope: 'read', summary: 'List public channels and the private ones the caller is in', tag, query: ListChannelsQuery, response: listOf(ChannelSchema) }, async ({ rt, actor, query }) =>
      list(await channels.listChannels(rt, actor, query)),
    )
    .add(
      { method: 'post', path: '/channels', scope: 'channels:write', summary: 'Create a channel; the creator becomes a member', tag, body: CreateChannelBody, status: 201, response: dataOf(ChannelSchema), errors: ['forbidden', 'not_found', 'name_taken'], idempotent: 'actor' },
      async ({ rt, actor, body }) => ok(await channels.createChannel(rt, actor, body)),
    )
    .add({ method: 'get', path: '/channels/{channel_id}', scope: 'read', summary: 'Channel details', tag, params: ChannelParams, response: dataOf(ChannelSchema) }, async ({ rt, actor, params }) =>
      ok(await channels.getChannel(rt, actor, params.channel_id)),
    )
    .add(
      { method: 'patch', path: '/channels/{channel_id}', scope: 'channels:write', summary: 'Update name or description', tag, params: ChannelParams, body: UpdateChannelBody, response: dataOf(ChannelSchema), errors: ['forbidden', 'name_taken', 'channel_archived'] },
      async ({ rt, actor, params, body }) => ok(await channels.updateChannel(rt, actor, params.channel_id, body)),
    )
    .add(
      {
        method: 'post',
        path: '/channels/{channel_id}/archive', scope: 'channels:write',
        summary: "Archive a channel: read-only, and left out of GET /channels (owners, admins, the channel's creator; not a default channel)",
        tag,
        since: 3,
        params: ChannelParams,
        response: dataOf(ChannelSchema),
        errors: ['forbidden', 'conflict'],
      },
      async ({ rt, actor, params }) => ok(await channels.setArchived(rt, actor, params.channel_id, true)),
    )
    .add(
      {
        method: 'post',
        path: '/channels/{channel_id}/unarchive', scope: 'channels:write',
        summary: "Unarchive a channel (owners, admins, the channel's creator)",
        tag,
        since: 3,
        params: ChannelParams,
        response: dataOf(ChannelSchema),
        errors: ['forbidden'],
      },
      async ({ rt, actor, params }) => ok(await channels.setArchived(rt, actor, params.channel_id, false)),
    )
    .add(
      {
        method: 'post',
        path: '/channels/{channel_id}/read',
        scope: 'messages:write',
        summary: 'Record that the caller has read up to a message (it never moves back); channel.read to their own streams',
        tag,
        since: 3,
        params: ChannelParams,
        body: ReadBody,
        errors: ['forbidden', 'not_found'],
      },
      async ({ rt, actor, params, body }) => {
        await markRead(rt, actor, params.channel_id, body.message_id, 'channel');
      },
    )
    .add(
      { method: 'get', path: '/channels/{channel_id}/members', scope: 'read', summary: 'List channel members', tag, params: ChannelParams, query: ListQuery, response: listOf(ChannelMemberSchema) },
      async ({ rt, actor, params, query }) => list(await channels.listMembers(rt, actor, params.channel_id, query)),
    )
    .add(
      { method: 'post', path: '/channels/{channel_id}/members', scope: 'channels:write', summary: 'Add a member', tag, params: ChannelParams, body: AddMemberBody, status: 201, response: dataOf(ChannelMemberSchema), errors: ['forbidden', 'already_member', 'channel_archived'] },
      async ({ rt, actor, params, body }) => ok(await channels.addMember(rt, actor, params.channel_id, body.user_id)),
    )
    .add(
      { method: 'delete', path: '/channels/{channel_id}/members/{user_id}', scope: 'channels:write', summary: 'Remove a member (or leave)', tag, params: MemberParams, errors: ['forbidden', 'channel_archived'] },
      async ({ rt, actor, params }) => {
        await channels.removeMember(rt, actor, params.channel_id, params.user_id);
      },
    );
}
