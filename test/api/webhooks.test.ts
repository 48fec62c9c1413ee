import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { IncomingWebhook } from '@slack/webhook';
import { expect } from 'chai';
import { startStack, type Stack } from '../../services/stack.js';
import { handlers } from '../../services/core/jobs.js';
import { createLogger } from '../../shared/logger.js';
import { keys } from '../../shared/redis.js';
import { Client } from '../support/client.js';
import { expectError, expectOk } from '../support/expect.js';
import { waitFor } from '../support/files.js';
import { newWorkspace, stack, testEnv, uniqueName, type TestWorkspace } from '../support/stack.js';
import { busEvents } from '../support/bus.js';
import { redisKeys } from '../support/redis-keys.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'slack-incoming');

// Channels are written directly: these tests are about hooks, not the channel endpoints.
async function makeChannel(ws: TestWorkspace, o: { is_private?: boolean; members?: string[] } = {}, s: Stack = stack()) {
  const [channel] = await s.rt
    .db('channels')
    .insert({ workspace_id: ws.workspaceId, name: uniqueName('ch'), is_private: o.is_private ?? false, created_by: ws.ownerId })
    .returning('*');
  const members = o.members ?? [ws.ownerId];
  if (members.length) {
    await s.rt.db('channel_members').insert(members.map((user_id) => ({ channel_id: channel.id, user_id, workspace_id: ws.workspaceId })));
  }
  return channel as { id: string };
}

async function makeHook(ws: TestWorkspace, client: Client = ws.owner, s: Stack = stack()) {
  const channel = await makeChannel(ws, {}, s);
  const hook = expectOk(await client.post('/api/v1/webhooks/incoming', { channel_id: channel.id, name: 'CI' }), 201).data;
  return { channel, hook };
}

const hooks = (s: Stack = stack()) => new Client(s.url);
const messagesOf = (hookId: string) => stack().rt.db('messages').where({ webhook_id: hookId }).orderBy('seq');

/** Events on the run's Redis stream about one message. */
async function messageEvents(messageId: string) {
  const s = stack();
  return (await busEvents(s)).filter((e) => e.data?.message?.id === messageId);
}

async function renderedMessage(hookId: string) {
  return waitFor(async () => {
    const [m] = await messagesOf(hookId);
    return m && m.content_json ? m : undefined;
  }, 'the rendered webhook message');
}

describe('incoming webhooks: management', () => {
  it('creates a hook for a readable channel with a random id and a posting url', async () => {
    const ws = await newWorkspace();
    const channel = await makeChannel(ws);
    const res = await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: channel.id, name: 'Deploys ☂' });
    const hook = expectOk(res, 201).data;
    expect(hook).to.include({ name: 'Deploys ☂', channel_id: channel.id });
    expect(hook.id).to.match(/^[A-Za-z0-9_-]{32}$/); // 24 random bytes = 192 bits
    expect(hook.url).to.equal(`${stack().rt.config.publicBaseUrl}/hooks/${hook.id}`);
    const other = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: channel.id, name: 'Deploys ☂' }), 201).data;
    expect(other.id).not.to.equal(hook.id);
  });

  it('answers 404 channel_not_found for an absent or hidden channel, and creates nothing', async () => {
    const ws = await newWorkspace();
    const member = await ws.user();
    const hidden = await makeChannel(ws, { is_private: true });
    const foreign = await makeChannel(await newWorkspace());
    for (const channel_id of [hidden.id, foreign.id, '00000000-0000-4000-8000-000000000000', 'nope']) {
      expectError(await member.client.post('/api/v1/webhooks/incoming', { channel_id, name: 'x' }), 404, 'channel_not_found');
    }
    expect(await stack().rt.db('incoming_webhooks').where({ workspace_id: ws.workspaceId })).to.have.length(0);
  });

  it('lets a member of a private channel create a hook for it', async () => {
    const ws = await newWorkspace();
    const member = await ws.user();
    const secret = await makeChannel(ws, { is_private: true, members: [member.id] });
    expectOk(await member.client.post('/api/v1/webhooks/incoming', { channel_id: secret.id, name: 'mine' }), 201);
  });

  it('answers 400 validation_error naming the field for a bad body', async () => {
    const ws = await newWorkspace();
    const channel = await makeChannel(ws);
    const res = await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: channel.id, name: '  ' });
    expectError(res, 400, 'validation_error');
    expect(res.body.error.message).to.match(/^name: /);
    expectError(await ws.owner.post('/api/v1/webhooks/incoming', { name: 'x' }), 400, 'validation_error');
  });

  it('lists every hook to admins and their own hooks to members, a page at a time', async () => {
    const ws = await newWorkspace();
    const member = await ws.user();
    const channel = await makeChannel(ws);
    const ids: string[] = [];
    for (const client of [ws.owner, member.client, ws.owner]) {
      ids.push(expectOk(await client.post('/api/v1/webhooks/incoming', { channel_id: channel.id, name: 'h' }), 201).data.id);
    }
    const first = expectOk(await ws.owner.get('/api/v1/webhooks/incoming?limit=2'));
    expect(first.data.map((h: { id: string }) => h.id)).to.deep.equal(ids.slice(0, 2));
    expect(first.pagination.has_more).to.equal(true);
    const second = expectOk(await ws.owner.get(`/api/v1/webhooks/incoming?limit=2&cursor=${first.pagination.next_cursor}`));
    expect(second.data.map((h: { id: string }) => h.id)).to.deep.equal(ids.slice(2));
    expect(second.pagination).to.deep.equal({ next_cursor: null, has_more: false });
    const mine = expectOk(await member.client.get('/api/v1/webhooks/incoming'));
    expect(mine.data.map((h: { id: string }) => h.id)).to.deep.equal([ids[1]]);
    expectError(await ws.owner.get('/api/v1/webhooks/incoming?limit=0'), 400, 'validation_error');
  });

  it('lets the creator or an admin delete a hook (204), refuses other members (403) and hides other workspaces (404)', async () => {
    const ws = await newWorkspace();
    const creator = await ws.user();
    const other = await ws.user();
    const { hook } = await makeHook(ws, creator.client);
    expectError(await other.client.delete(`/api/v1/webhooks/incoming/${hook.id}`), 403, 'forbidden');
    expectError(await (await newWorkspace()).owner.delete(`/api/v1/webhooks/incoming/${hook.id}`), 404, 'not_found');
    expect(await stack().rt.db('incoming_webhooks').where({ id: hook.id })).to.have.length(1);
    const res = await creator.client.delete(`/api/v1/webhooks/incoming/${hook.id}`);
    expect(res.status).to.equal(204);
    expectError(await creator.client.delete(`/api/v1/webhooks/incoming/${hook.id}`), 404, 'not_found');

    const { hook: second } = await makeHook(ws, other.client);
    expect((await ws.owner.delete(`/api/v1/webhooks/incoming/${second.id}`)).status).to.equal(204);
  });
});

describe('POST /hooks/{id} (native)', () => {
  it('posts content and metadata as the creator, with webhook_id set, and answers 201 with the message', async () => {
    const ws = await newWorkspace();
    const { channel, hook } = await makeHook(ws);
    const res = await hooks().post(`/hooks/${hook.id}`, { content: 'deploy **done**', metadata: { type: 'deploy.finished', data: { sha: 'abc', ok: true } } });
    const message = expectOk(res, 201).data;
    expect(message).to.include({ channel_id: channel.id, author_id: ws.ownerId, content: 'deploy **done**', webhook_id: hook.id, thread_id: null });
    expect(message.metadata).to.deep.equal({ type: 'deploy.finished', data: { sha: 'abc', ok: true } });
    expect(res.headers.get('x-ratelimit-limit')).to.be.a('string');
    const events = await waitFor(async () => {
      const found = await messageEvents(message.id);
      return found.length ? found : undefined;
    }, 'message.created');
    expect(events[0]).to.deep.include({ type: 'message.created', to: { scope: 'channel', workspace_id: ws.workspaceId, channel_id: channel.id } });
  });

  it('applies the message rules: content required and not blank, metadata shape, HTML sanitized', async () => {
    const ws = await newWorkspace();
    const { hook } = await makeHook(ws);
    for (const [body, field] of [
      [{}, 'content'],
      [{ content: '   ' }, 'content'],
      [{ content: 'x'.repeat(40_001) }, 'content'],
      [{ content: 'x', metadata: { type: '', data: {} } }, 'metadata.type'],
      [{ content: 'x', metadata: { type: 't', data: 'no' } }, 'metadata.data'],
      [{ content: 'x', metadata: { type: 't', data: { big: 'y'.repeat(17_000) } } }, 'metadata'],
    ] as const) {
      const res = await hooks().post(`/hooks/${hook.id}`, body);
      expectError(res, 400, 'validation_error');
      expect(res.body.error.message).to.match(new RegExp(`^${field.replace('.', '\\.')}: `));
    }
    expect(await messagesOf(hook.id)).to.have.length(0);
    const res = await hooks().post(`/hooks/${hook.id}`, { content: 'hi <script>alert(1)</script><a href="javascript:x()">x</a>' });
    expect(expectOk(res, 201).data.content).not.to.match(/script|javascript:/);
  });

  it('answers 404 not_found for an unknown or deleted hook, posting nothing', async () => {
    const ws = await newWorkspace();
    const { hook } = await makeHook(ws);
    expect((await ws.owner.delete(`/api/v1/webhooks/incoming/${hook.id}`)).status).to.equal(204);
    expectError(await hooks().post(`/hooks/${hook.id}`, { content: 'x' }), 404, 'not_found');
    expectError(await hooks().post(`/hooks/compat/${hook.id}`, { text: 'x' }), 404, 'not_found');
    expectError(await hooks().post('/hooks/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', { content: 'x' }), 404, 'not_found');
    expectError(await hooks().post('/hooks/short', { content: 'x' }), 404, 'not_found');
    expect(await messagesOf(hook.id)).to.have.length(0);
  });

  it('refuses a hook deleted after it was used (and so cached) at once', async () => {
    const ws = await newWorkspace();
    const { hook } = await makeHook(ws);
    expectOk(await hooks().post(`/hooks/${hook.id}`, { content: 'first' }), 201);
    expect((await ws.owner.delete(`/api/v1/webhooks/incoming/${hook.id}`)).status).to.equal(204);
    expectError(await hooks().post(`/hooks/${hook.id}`, { content: 'second' }), 404, 'not_found');
    expect(await messagesOf(hook.id)).to.have.length(1);
  });

  it('stops the hooks of a member removed from the workspace (404 on both addresses, even once cached); other hooks keep posting', async () => {
    const ws = await newWorkspace();
    const member = await ws.user();
    const { channel, hook } = await makeHook(ws, member.client);
    const kept = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: channel.id, name: 'kept' }), 201).data;
    expectOk(await hooks().post(`/hooks/${hook.id}`, { content: 'before' }), 201);
    expectOk(await ws.owner.delete(`/api/v1/workspaces/current/members/${member.id}`), 204);
    expectError(await hooks().post(`/hooks/${hook.id}`, { content: 'after' }), 404, 'not_found');
    expectError(await hooks().post(`/hooks/compat/${hook.id}`, { text: 'after' }), 404, 'not_found');
    expect((await messagesOf(hook.id)).map((m) => m.content)).to.deep.equal(['before']);
    expectOk(await hooks().post(`/hooks/${kept.id}`, { content: 'still here' }), 201);
  });

  it('answers 404 channel_not_found when the channel of a hook already in use is gone, once its cached hook has expired', async () => {
    const ws = await newWorkspace();
    const { channel, hook } = await makeHook(ws);
    expectOk(await hooks().post(`/hooks/${hook.id}`, { content: 'first' }), 201);
    // Nothing in the API deletes a channel; one deleted in the database is seen when the cached hook is read again.
    await stack().rt.db('messages').where({ channel_id: channel.id }).delete();
    await stack().rt.db('channels').where({ id: channel.id }).delete();
    stack().rt.access.dropHook(hook.id);
    expectError(await hooks().post(`/hooks/${hook.id}`, { content: 'x' }), 404, 'channel_not_found');
    expectError(await hooks().post(`/hooks/compat/${hook.id}`, { text: 'x' }), 404, 'channel_not_found');
  });

  it('answers 404 channel_not_found when the hook channel is gone', async () => {
    const ws = await newWorkspace();
    const { channel, hook } = await makeHook(ws);
    await stack().rt.db('channels').where({ id: channel.id }).delete();
    expectError(await hooks().post(`/hooks/${hook.id}`, { content: 'x' }), 404, 'channel_not_found');
    expectError(await hooks().post(`/hooks/compat/${hook.id}`, { text: 'x' }), 404, 'channel_not_found');
    expect(await messagesOf(hook.id)).to.have.length(0);
  });
});

describe('POST /hooks/compat/{id} (chat-platform compatible)', () => {
  it('takes text, username and icons from the official Slack client and answers ok', async () => {
    const ws = await newWorkspace();
    const { hook } = await makeHook(ws);
    const sender = new IncomingWebhook(`${stack().url}/hooks/compat/${hook.id}`, { username: 'Deploy Bot', icon_emoji: ':rocket:' });
    const result = await sender.send({ text: 'v1.2.3 is live', icon_url: 'https://example.com/bot.png', channel: '#ignored' });
    expect(result.text).to.equal('ok');
    const [message] = await messagesOf(hook.id);
    expect(message).to.include({ content: 'v1.2.3 is live', author_id: ws.ownerId, content_json: null });
    expect(message.display).to.deep.equal({ username: 'Deploy Bot', icon_emoji: ':rocket:', icon_url: 'https://example.com/bot.png' });
  });

  it('renders attachments with fields from the Slack client as quoted text and quote blocks within 2 s', async () => {
    const ws = await newWorkspace();
    const { channel, hook } = await makeHook(ws);
    const sender = new IncomingWebhook(`${stack().url}/hooks/compat/${hook.id}`);
    const posted = Date.now();
    await sender.send({
      text: 'Build finished',
      attachments: [
        {
          color: 'good',
          pretext: 'Pipeline #42',
          title: 'Open the build',
          title_link: 'https://ci.example.com/42',
          text: 'All <https://ci.example.com/42/tests|tests> passed',
          fields: [
            { title: 'Branch', value: 'main', short: true },
            { title: 'Duration', value: '3m', short: true },
          ],
          footer: 'CI',
        },
      ],
    });
    const message = await renderedMessage(hook.id);
    expect(Date.now() - posted).to.be.below(2000);
    expect(message.content).to.equal(
      [
        'Build finished',
        '',
        '> Pipeline #42',
        '> **[Open the build](https://ci.example.com/42)**',
        '> All [tests](https://ci.example.com/42/tests) passed',
        '> **Branch**: main',
        '> **Duration**: 3m',
        '> CI',
      ].join('\n'),
    );
    // The attachment as a card: pretext, linked title, text with its link, fields, footer, colour.
    const link = (text: string, href: string) => ({ type: 'text', text, marks: [{ type: 'link', attrs: { href } }] });
    const para = (...content: unknown[]) => ({ type: 'paragraph', content });
    const field = (title: string, value: string) => ({
      type: 'list_item',
      content: [para({ type: 'text', text: title, marks: [{ type: 'bold' }] }, { type: 'text', text: ': ' }, { type: 'text', text: value })],
    });
    expect(message.content_json).to.deep.equal({
      type: 'doc',
      content: [
        para({ type: 'text', text: 'Build finished' }),
        {
          type: 'blockquote',
          attrs: { kind: 'attachment', color: 'good' },
          content: [
            para({ type: 'text', text: 'Pipeline #42' }),
            { type: 'heading', attrs: { level: 4 }, content: [link('Open the build', 'https://ci.example.com/42')] },
            para({ type: 'text', text: 'All ' }, link('tests', 'https://ci.example.com/42/tests'), { type: 'text', text: ' passed' }),
            { type: 'bullet_list', attrs: { kind: 'fields' }, content: [field('Branch', 'main'), field('Duration', '3m')] },
            { type: 'paragraph', attrs: { kind: 'footer' }, content: [{ type: 'text', text: 'CI' }] },
          ],
        },
      ],
    });
    const events = await waitFor(async () => {
      const found = await messageEvents(message.id);
      return found.length >= 2 ? found : undefined;
    }, 'message.created and message.updated');
    expect(events.map((e) => e.type)).to.deep.equal(['message.created', 'message.updated']);
    expect(events[1].to).to.deep.equal({ scope: 'channel', workspace_id: ws.workspaceId, channel_id: channel.id });
    expect(events[1].data.message.content).to.equal(message.content);
    expect(await stack().rt.db('webhook_renders').where({ message_id: message.id })).to.have.length(0);
  });

  it('renders once: running webhook.render again changes nothing and emits nothing', async () => {
    const ws = await newWorkspace();
    const { hook } = await makeHook(ws);
    await hooks().post(`/hooks/compat/${hook.id}`, { attachments: [{ fallback: 'fb', title: 'Once' }] });
    const message = await renderedMessage(hook.id);
    expect(message.content).to.equal('> **Once**');
    await handlers['webhook.render'](stack().rt, { messageId: message.id }, { attempt: 2, lastAttempt: false });
    const [again] = await messagesOf(hook.id);
    expect(again.content).to.equal(message.content);
    // everything recorded so far has been relayed: a second message.updated would be on the stream now
    await waitFor(async () => Number((await stack().rt.db('outbox').count('* as c').first())?.c) === 0, 'the outbox to drain');
    const events = await messageEvents(message.id);
    expect(events.map((e) => e.type)).to.deep.equal(['message.created', 'message.updated']);
  });

  it('never fetches a URL from a payload', async () => {
    let requests = 0;
    const trap = http.createServer((_req, res) => {
      requests++;
      res.end();
    });
    await new Promise<void>((r) => trap.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(trap.address() as AddressInfo).port}/x.png`;
    try {
      const ws = await newWorkspace();
      const { hook } = await makeHook(ws);
      const res = await hooks().post(`/hooks/compat/${hook.id}`, {
        text: `see ${url}`,
        icon_url: url,
        attachments: [{ title: 't', title_link: url, image_url: url, thumb_url: url, author_icon: url, footer_icon: url }],
      });
      expect(res.status).to.equal(200);
      await renderedMessage(hook.id);
      expect(requests).to.equal(0);
    } finally {
      trap.close();
    }
  });

  it('answers 400 validation_error to a payload field that is not JSON', async () => {
    const ws = await newWorkspace();
    const { hook } = await makeHook(ws);
    const res = await hooks().post(`/hooks/compat/${hook.id}`, 'payload=%7Bnot-json', { 'content-type': 'application/x-www-form-urlencoded' });
    expectError(res, 400, 'validation_error');
    expect(res.body.error.message).to.match(/^payload: /);
    expect(await messagesOf(hook.id)).to.have.length(0);
  });

  describe('the real senders in test/fixtures/slack-incoming', () => {
    type Check = (m: { content: string; content_json: unknown; display: unknown }) => void;
    const contains = (...parts: string[]): Check => (m) => {
      for (const p of parts) expect(m.content).to.include(p);
      expect(m.content).not.to.match(/\bnull\b/);
      expect(JSON.stringify(m.content_json)).to.include('"kind":"attachment"');
    };
    const expected: Record<string, { status: 200 | 400; check?: Check; rendered?: boolean }> = {
      'text.json': { status: 200, check: (m) => expect(m.content).to.equal('Hello, world.') },
      'urlencoded_text.txt': {
        status: 200,
        check: (m) => {
          expect(m.content).to.equal('chris has started deploying project tag v0.0.2rc10 to staging');
          expect(m.display).to.deep.equal({
            username: 'DeployBot',
            icon_emoji: ':zap:',
            icon_url: 'https://raw.githubusercontent.com/phallstrom/slackistrano/master/images/slackistrano.png',
          });
        },
      },
      'attachment.json': {
        status: 200,
        rendered: true,
        check: (m) => {
          contains('[FIRING:2] InstanceDown for api-server', 'Alert details', '[Runbook](https://runbook.local/1)')(m);
          expect(m.content).to.include('](https://alertmanager.local//#/alerts?receiver=default)');
        },
      },
      'attachment_fields.json': {
        status: 200,
        rendered: true,
        check: (m) => {
          contains(
            'Build bla bla succeeded',
            '**Requested by**: Some user',
            '**Duration**: 00:02:03',
            '**Build pipeline**: ConsumerAddressModule',
            '> Title without value',
            '> Value without title',
          )(m);
          expect(m.content).not.to.include('Build ConsumerAddressModule_20150407.2 succeeded'); // the fallback is only a placeholder
        },
      },
      'attachment_pieces.json': { status: 200, rendered: true, check: contains('Test') },
      'attachment_pieces_title_null.json': {
        status: 200,
        rendered: true,
        check: (m) => {
          contains('Sample pretext.', 'Sample text.', 'Sample footer.')(m);
          expect(m.content).not.to.include('google');
        },
      },
      'attachment_relative_title_link.json': {
        status: 200,
        rendered: true,
        check: (m) => {
          contains('Sample title.', 'Sample text.')(m);
          expect(m.content).not.to.include('/#/alerts');
          expect(m.content).not.to.include('](');
        },
      },
      'blocks.json': { status: 200, check: (m) => expect(m.content).to.equal('Danny Torrence left a 1 star review for your property.') },
      'attachment_pieces_all_null.json': { status: 400 },
      'null_text.json': { status: 400 },
      'broken_image.json': { status: 400 },
    };

    it('has an expectation for every fixture file', () => {
      const files = readdirSync(FIXTURES).filter((f) => f !== 'README.md').sort();
      expect(files).to.deep.equal(Object.keys(expected).sort());
    });

    for (const [file, want] of Object.entries(expected)) {
      it(`${file}: ${want.status === 200 ? '200 ok' : '400 validation_error'}`, async () => {
        const ws = await newWorkspace();
        const { hook } = await makeHook(ws);
        const raw = readFileSync(path.join(FIXTURES, file), 'utf8');
        const type = file.endsWith('.txt') ? 'application/x-www-form-urlencoded' : 'application/json';
        const res = await hooks().post(`/hooks/compat/${hook.id}`, raw.trim(), { 'content-type': type });
        if (want.status === 400) {
          expectError(res, 400, 'validation_error');
          expect(await messagesOf(hook.id)).to.have.length(0);
          return;
        }
        expect(res.status, res.text).to.equal(200);
        expect(res.text).to.equal('ok');
        const message = want.rendered ? await renderedMessage(hook.id) : (await messagesOf(hook.id))[0];
        expect(message.webhook_id).to.equal(hook.id);
        want.check!(message);
      });
    }
  });
});

describe('webhook rate limits', function () {
  this.timeout(60_000);
  let s: Stack;
  let env: ReturnType<typeof testEnv>;

  before(async () => {
    env = testEnv({ RATE_LIMIT_POINTS: '5', ROLES: 'api' });
    s = await startStack(env.config, createLogger(env.config.logLevel));
  });
  after(async () => {
    await s?.close();
    await env?.cleanup();
  });

  it('answers 429 rate_limited with Retry-After once a hook is flooded past its limit, other hooks unaffected', async () => {
    const ws = await newWorkspace(s);
    const { hook } = await makeHook(ws, ws.owner, s);
    const { hook: quiet } = await makeHook(ws, ws.owner, s);
    const results = [];
    for (let i = 0; i < 7; i++) results.push(await hooks(s).post(`/hooks/${hook.id}`, { content: `n${i}` }));
    expect(results.slice(0, 5).map((r) => r.status)).to.deep.equal([201, 201, 201, 201, 201]);
    for (const res of results.slice(5)) {
      expectError(res, 429, 'rate_limited');
      expect(Number(res.headers.get('retry-after'))).to.be.at.least(1);
      expect(res.headers.get('x-ratelimit-remaining')).to.equal('0');
    }
    // the compatible path counts against the same hook
    expectError(await hooks(s).post(`/hooks/compat/${hook.id}`, { text: 'x' }), 429, 'rate_limited');
    expect(await s.rt.db('messages').where({ webhook_id: hook.id })).to.have.length(5);
    expect((await hooks(s).post(`/hooks/${quiet.id}`, { content: 'still fine' })).status).to.equal(201);
  });

  it('counts posts to made-up hook ids against the client address, with no Redis key per id', async () => {
    const statuses = [];
    for (let i = 0; i < 7; i++) statuses.push((await hooks(s).post(`/hooks/${randomUUID()}`, { content: 'probe' })).status);
    expect(statuses).to.deep.equal([404, 404, 404, 404, 404, 429, 429]);
    const rateKeys = await redisKeys(s.rt.redis, `${keys(s.rt.config.redisKeyPrefix).rateLimit}*`);
    expect(rateKeys.filter((k) => k.includes('hook:'))).to.have.length(2); // the two real hooks above
  });
});
