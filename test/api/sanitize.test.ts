import { expect } from 'chai';
import { expectError, expectOk } from '../support/expect.js';
import { createChannel, messagesUrl, postMessage } from '../support/conversations.js';
import { Client } from '../support/client.js';
import { waitFor } from '../support/files.js';
import { executableMarkup, PAYLOADS, renderings } from '../fixtures/markup-corpus.js';
import { level3Stack, newWorkspace, stack } from '../support/stack.js';
import { sanitizeContent } from '../../services/core/messages/messages.sanitize.js';

describe('content sanitizing through the API', () => {
  it('stores sanitized content on post and on edit', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner);
    const m = await postMessage(ws.owner, c.id, 'hi <img src=x onerror=alert(1)><script>steal()</script>');
    expect(m.content).not.to.match(/onerror|script/);
    expect(expectOk(await ws.owner.get(`${messagesUrl(c.id)}/${m.id}`)).data.content).to.equal(m.content);
    const md = await postMessage(ws.owner, c.id, 'a < b && c > d **bold**');
    expect(md.content).to.equal('a < b && c > d **bold**');
    const edited = expectOk(await ws.owner.patch(`${messagesUrl(c.id)}/${md.id}`, { content: '<a href="javascript:x()">y</a>' })).data;
    expect(edited.content).not.to.match(/javascript/);
  });

  it('answers 400 validation_error when nothing is left after sanitizing', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner);
    const res = await ws.owner.post(messagesUrl(c.id), { content: '<script>alert(1)</script>' });
    expectError(res, 400, 'validation_error');
    expect(res.body.error.message).to.match(/^content/);
  });
});

describe('stored markup renders to nothing that runs, on every path that writes content', function () {
  this.timeout(60_000);
  // A payload per case, each behind another of the tricks (test/fixtures/markup-corpus.ts).
  const TRICKS = ['\\` ', '` ', '`` x ` ', '> ', 'text\n', '- ', '\\`` '];
  const cases = PAYLOADS.map((payload, i) => `${TRICKS[i % TRICKS.length]}${payload}${i % 2 ? ' `' : ''}`);

  function expectInert(stored: string, input: string) {
    for (const { renderer, html } of renderings(stored)) expect(executableMarkup(html), `${renderer}: ${JSON.stringify(input)} → ${JSON.stringify(stored)}`).to.deep.equal([]);
  }

  it('posts, edits, both hook formats and the worker\'s rendering of attachments', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner);
    const hook = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: c.id, name: 'CI' }), 201).data;
    const anon = new Client(stack().url);
    const benign = await postMessage(ws.owner, c.id, 'to be edited');
    let stored = 0;
    for (const input of cases) {
      const posted = await ws.owner.post(messagesUrl(c.id), { content: `x ${input}` });
      if (posted.status === 201) {
        stored++;
        expectInert(expectOk(await ws.owner.get(`${messagesUrl(c.id)}/${posted.body.data.id}`)).data.content, input);
      } else expectError(posted, 400, 'validation_error');
      const edited = await ws.owner.patch(`${messagesUrl(c.id)}/${benign.id}`, { content: `x ${input}` });
      if (edited.status === 200) expectInert(edited.body.data.content, input);
      else expectError(edited, 400, 'validation_error');
      const native = await anon.post(`/hooks/${hook.id}`, { content: `x ${input}` });
      if (native.status === 201) expectInert(native.body.data.content, input);
      else expectError(native, 400, 'validation_error');
      const compat = await anon.post(`/hooks/compat/${hook.id}`, { text: `x ${input}`, attachments: [{ title: 'build', text: input, pretext: input }] });
      if (compat.status !== 200) expectError(compat, 400, 'validation_error');
    }
    expect(stored, 'most are made safe and stored, not refused').to.be.above(cases.length / 2);
    // The worker renders the attachments; every message of the channel, once rendered, is inert.
    const all = await waitFor(async () => {
      const page = expectOk(await ws.owner.get(`${messagesUrl(c.id)}?limit=200`)).data as { content: string; webhook_id: string | null; content_json: unknown }[];
      const compat = page.filter((m) => m.webhook_id && m.content.includes('build'));
      return compat.length > 0 && compat.every((m) => m.content_json !== null) ? page : undefined;
    }, 'the attachments to be rendered', 30_000);
    for (const m of all) expectInert(m.content, m.content);
  });
});

describe('content_json: unknown marks and attributes are refused, not stored', () => {
  const doc = (...content: unknown[]) => ({ type: 'doc', content });
  const cases: Array<[unknown, string]> = [
    [doc({ type: 'paragraph', content: [{ type: 'text', text: 'x', marks: [{ type: 'evil' }] }] }), 'content_json.content.0.content.0.marks.0.type'],
    [doc({ type: 'paragraph', content: [{ type: 'text', text: 'x', marks: [{ type: 'link', attrs: { href: 'https://x.test', onclick: 'y()' } }] }] }), 'content_json.content.0.content.0.marks.0.attrs.onclick'],
    [doc({ type: 'heading', attrs: { level: 2, style: 'x' }, content: [{ type: 'text', text: 't' }] }), 'content_json.content.0.attrs.style'],
    [doc({ type: 'code_block', attrs: { language: '"><script>' }, content: [{ type: 'text', text: 't' }] }), 'content_json.content.0.attrs.language'],
  ];

  it('answers 400 validation_error naming the path, on post and on edit, and stores nothing', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner);
    const kept = await postMessage(ws.owner, c.id, 'kept');
    for (const [content_json, path] of cases) {
      const posted = await ws.owner.post(messagesUrl(c.id), { content: 'x', content_json });
      expectError(posted, 400, 'validation_error');
      expect(posted.body.error.message).to.match(new RegExp(`^${path.replace(/\./g, '\\.')}`));
      const edited = await ws.owner.patch(`${messagesUrl(c.id)}/${kept.id}`, { content: 'y', content_json });
      expectError(edited, 400, 'validation_error');
      expect(edited.body.error.message).to.match(new RegExp(`^${path.replace(/\./g, '\\.')}`));
    }
    const page = expectOk(await ws.owner.get(messagesUrl(c.id))).data as { id: string; content: string }[];
    expect(page.map((m) => m.content)).to.deep.equal(['kept']);
  });
});

describe('the 40,000-character limit holds for what is stored, on every path that writes content', function () {
  this.timeout(120_000);
  const LIMIT = 40_000;
  // Kinds of content that sanitizing grows: each a head and a unit repeated to
  // fill 40,000 characters sent, stored longer than that.
  const GROWERS: Array<{ kind: string; head: string; unit: string; tail?: string }> = [
    { kind: 'bare < escaped as an entity (&lt;) beside a tag', head: '<b>x</b> ', unit: 'a<' },
    { kind: 'mention-like <@U…> escaped beside a tag', head: '<i>hi</i> ', unit: '<@U123> ' },
    { kind: 'characters escaped in an HTML block (&amp;)', head: '<div>\n', unit: '"&', tail: '\n</div>' },
    { kind: 'unquoted attributes quoted', head: '', unit: '<img src=x>' },
    { kind: 'a declaration kept beside escaped bare <', head: '<u>x</u> <!here> ', unit: '1<2 ' },
  ];
  const filled = (g: (typeof GROWERS)[number], budget = LIMIT) => {
    const room = budget - g.head.length - (g.tail?.length ?? 0);
    return g.head + g.unit.repeat(Math.floor(room / g.unit.length)) + (g.tail ?? '');
  };
  /** The most units whose sanitized content is within the limit (found by bisection). */
  const largestThatFits = (g: (typeof GROWERS)[number]) => {
    const make = (n: number) => g.head + g.unit.repeat(n) + (g.tail ?? '');
    let [lo, hi] = [0, Math.floor(LIMIT / g.unit.length)];
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (sanitizeContent(make(mid)).length <= LIMIT) lo = mid;
      else hi = mid - 1;
    }
    return make(lo);
  };
  const count = async (client: Client, channelId: string) => (expectOk(await client.get(`${messagesUrl(channelId)}?limit=200`)).data as unknown[]).length;

  it('refuses content stored longer than the limit with 400 validation_error (post, edit, native hook), and keeps content that fits once sanitized', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner);
    const hook = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: c.id, name: 'CI' }), 201).data;
    const anon = new Client(stack().url);
    const original = await postMessage(ws.owner, c.id, 'to be edited');
    for (const g of GROWERS) {
      const content = filled(g);
      expect(content.length, g.kind).to.be.at.most(LIMIT);
      const before = await count(ws.owner, c.id);
      for (const res of [
        await ws.owner.post(messagesUrl(c.id), { content }),
        await ws.owner.patch(`${messagesUrl(c.id)}/${original.id}`, { content }),
        await anon.post(`/hooks/${hook.id}`, { content }),
      ]) {
        expectError(res, 400, 'validation_error');
        expect(res.body.error.message, g.kind).to.match(/^content: is \d+ characters once sanitized.*at most 40000 are stored$/);
      }
      expect(await count(ws.owner, c.id), `${g.kind}: nothing posted`).to.equal(before);
      expect(expectOk(await ws.owner.get(`${messagesUrl(c.id)}/${original.id}`)).data.content, `${g.kind}: the edit changed nothing`).to.equal('to be edited');
      // The same kind, short enough to fit once grown, is stored whole.
      const fits = largestThatFits(g);
      const stored = await postMessage(ws.owner, c.id, fits);
      expect(stored.content.length, g.kind).to.be.above(fits.length).and.at.most(LIMIT);
    }
  });

  it('refuses a compatible hook post whose text or attachments grow past the limit as rendered and sanitized, naming the field; nothing is posted', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner);
    const hook = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: c.id, name: 'CI' }), 201).data;
    const anon = new Client(stack().url);
    const bodies: Array<[string, unknown]> = [
      // mrkdwn made markdown: *bold* becomes **bold**, ~strike~ ~~strike~~.
      ['text', { text: '*b* ~s~ '.repeat(LIMIT / 8) }],
      ['text', { text: filled(GROWERS[0]!) }],
      ['attachments', { attachments: [{ title: 'build', text: filled(GROWERS[1]!, LIMIT - 100) }] }],
      ['attachments', { text: 'see below', attachments: [{ text: filled(GROWERS[0]!, LIMIT - 100) }] }],
    ];
    for (const [field, body] of bodies) {
      const res = await anon.post(`/hooks/compat/${hook.id}`, body);
      expectError(res, 400, 'validation_error');
      expect(res.body.error.message).to.match(new RegExp(`^${field}: `));
    }
    expect(await count(ws.owner, c.id)).to.equal(0);
  });

  it('refuses an append that would store more than the limit once the whole reply is sanitized (level 3); the reply keeps its content', async () => {
    const s3 = await level3Stack();
    const ws = await newWorkspace(s3);
    const bot = await ws.user({ is_agent: true });
    const c = await createChannel(ws.owner);
    expectOk(await ws.owner.post(`/api/v1/channels/${c.id}/members`, { user_id: bot.id }), 201);
    const reply = expectOk(await bot.client.post(messagesUrl(c.id), { content: '<b>Thinking</b>', streaming: true }), 201).data;
    for (const g of GROWERS.filter((x) => x.head === '' || x.head.startsWith('<b>') || x.head.startsWith('<i>'))) {
      const delta = ` ${g.unit.repeat(Math.floor((LIMIT - 20) / g.unit.length))}`;
      const res = await bot.client.post(`${messagesUrl(c.id)}/${reply.id}/append`, { content: delta });
      expectError(res, 400, 'validation_error');
      expect(res.body.error.message, g.kind).to.match(/once sanitized/);
    }
    expect(expectOk(await bot.client.get(`${messagesUrl(c.id)}/${reply.id}`)).data).to.include({ content: '<b>Thinking</b>', streaming: true });
    // A delta that fits once grown is stored.
    const grown = expectOk(await bot.client.post(`${messagesUrl(c.id)}/${reply.id}/append`, { content: ` ${'a<'.repeat(1000)}` })).data;
    expect(grown.content).to.equal(`<b>Thinking</b> ${'a&lt;'.repeat(1000)}`);
  });
});
