// Bad input through HTTP: strings that cannot be stored, runaway nesting,
// script links in content, tricky block URLs and unknown body fields. Every
// refusal is 400 validation_error naming the field, and writes nothing.
import { expect } from 'chai';
import { z } from 'zod';
import { apiRoutes } from '../../services/api/routes.js';
import { neutralizeLinks } from '../../services/core/messages/messages.sanitize.js';
import { Client } from '../support/client.js';
import { createChannel, messagesUrl, postMessage } from '../support/conversations.js';
import { expectError, expectOk } from '../support/expect.js';
import { waitFor } from '../support/files.js';
import { newWorkspace, stack, uniqueName, type TestWorkspace } from '../support/stack.js';

const NUL = 'a\u0000b';
const LONE_SURROGATE = 'a\ud800b'; // JSON.stringify writes it as "\ud800", as an attacker would
const BAD = 'must not contain NUL or unpaired surrogate characters';

/** `{a: {a: ... {leaf}}}` with `levels` objects. */
function nested(levels: number, leaf: unknown = 1): Record<string, unknown> {
  let value: unknown = leaf;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value as Record<string, unknown>;
}

/** The same as JSON text, written directly (JSON.stringify itself overflows at 10,000 levels). */
const nestedJson = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
const JSON_TYPE = { 'content-type': 'application/json' };

const anon = () => new Client(stack().url);
const hookMessages = (hookId: string) => stack().rt.db('messages').where({ webhook_id: hookId });

interface Setup {
  ws: TestWorkspace;
  channelId: string;
  hookId: string;
}

async function setup(): Promise<Setup> {
  const ws = await newWorkspace();
  const channel = await createChannel(ws.owner);
  const hook = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: channel.id, name: 'CI' }), 201).data;
  return { ws, channelId: channel.id, hookId: hook.id };
}

/** One request carrying `bad` in one field, and the field the error must name. */
interface Case {
  route: string;
  field: string;
  send(s: Setup, bad: string): Promise<Awaited<ReturnType<Client['post']>>>;
}

const message = (s: Setup, body: Record<string, unknown>) => s.ws.owner.post(messagesUrl(s.channelId), body);
const textDoc = (text: string) => ({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text }] }] });

const CASES: Case[] = [
  { route: 'POST messages', field: 'content', send: (s, bad) => message(s, { content: bad }) },
  { route: 'POST messages', field: 'metadata.type', send: (s, bad) => message(s, { content: 'x', metadata: { type: bad, data: {} } }) },
  { route: 'POST messages', field: 'metadata.data', send: (s, bad) => message(s, { content: 'x', metadata: { type: 't', data: { [bad]: 1 } } }) },
  { route: 'POST messages', field: 'metadata.data.k', send: (s, bad) => message(s, { content: 'x', metadata: { type: 't', data: { k: bad } } }) },
  { route: 'POST messages', field: 'content_json.content.0.content.0.text', send: (s, bad) => message(s, { content: 'x', content_json: textDoc(bad) }) },
  { route: 'POST /channels', field: 'name', send: (s, bad) => s.ws.owner.post('/api/v1/channels', { name: bad }) },
  { route: 'POST /channels', field: 'description', send: (s, bad) => s.ws.owner.post('/api/v1/channels', { name: uniqueName('c'), description: bad }) },
  { route: 'POST /users', field: 'name', send: (s, bad) => s.ws.owner.post('/api/v1/users', { name: bad }) },
  { route: 'POST /users', field: 'display_name', send: (s, bad) => s.ws.owner.post('/api/v1/users', { name: uniqueName('u'), display_name: bad }) },
  { route: 'PATCH /users/me', field: 'avatar_url', send: (s, bad) => s.ws.owner.patch('/api/v1/users/me', { avatar_url: `https://x.example/${bad}` }) },
  { route: 'POST /api-keys', field: 'name', send: (s, bad) => s.ws.owner.post('/api/v1/api-keys', { name: bad }) },
  { route: 'POST /webhooks/incoming', field: 'name', send: (s, bad) => s.ws.owner.post('/api/v1/webhooks/incoming', { channel_id: s.channelId, name: bad }) },
  { route: 'PATCH /workspaces/current', field: 'name', send: (s, bad) => s.ws.owner.patch('/api/v1/workspaces/current', { name: bad }) },
  { route: 'POST /hooks/{id}', field: 'content', send: (s, bad) => anon().post(`/hooks/${s.hookId}`, { content: bad }) },
  { route: 'POST /hooks/{id}', field: 'metadata.data.k', send: (s, bad) => anon().post(`/hooks/${s.hookId}`, { content: 'x', metadata: { type: 't', data: { k: bad } } }) },
  { route: 'POST /hooks/compat/{id}', field: 'text', send: (s, bad) => anon().post(`/hooks/compat/${s.hookId}`, { text: bad }) },
  {
    route: 'POST /hooks/compat/{id} form payload=',
    field: 'text',
    send: (s, bad) =>
      anon().post(`/hooks/compat/${s.hookId}`, `payload=${encodeURIComponent(JSON.stringify({ text: bad }))}`, {
        'content-type': 'application/x-www-form-urlencoded',
      }),
  },
];

describe('strings that cannot be stored (NUL, unpaired surrogates)', () => {
  let s: Setup;
  before(async () => {
    s = await setup();
  });

  for (const [what, bad] of [
    ['NUL', NUL],
    ['a lone surrogate', LONE_SURROGATE],
  ] as const) {
    for (const c of CASES) {
      it(`refuses ${what} in ${c.field} (${c.route})`, async () => {
        const before = await stack().rt.db('messages').where({ channel_id: s.channelId }).count<{ count: string }[]>('* as count');
        const res = await c.send(s, bad);
        expectError(res, 400, 'validation_error');
        expect(res.body.error.message).to.equal(`${c.field}: ${c.field === 'metadata.data' ? 'keys ' : ''}${BAD}`);
        const after = await stack().rt.db('messages').where({ channel_id: s.channelId }).count<{ count: string }[]>('* as count');
        expect(after[0]!.count).to.equal(before[0]!.count);
      });
    }
  }

  it('refuses them in query strings and path parameters too', async () => {
    const q = await s.ws.owner.get(`/api/v1/channels?cursor=${encodeURIComponent(NUL)}`);
    expectError(q, 400, 'validation_error');
    expect(q.body.error.message).to.equal(`cursor: ${BAD}`);
    const p = await s.ws.owner.get(`/api/v1/channels/${encodeURIComponent(NUL)}`);
    expectError(p, 400, 'validation_error');
    expect(p.body.error.message).to.equal(`channel_id: ${BAD}`);
    // Percent-encoded bytes that are not UTF-8 (a surrogate's would-be encoding, a broken escape).
    for (const raw of ['%ED%A0%80', '%ZZ', '%C0%80']) {
      const res = await s.ws.owner.get(`/api/v1/channels/${raw}`);
      expect(res.status, `${raw}: ${res.text}`).to.be.within(400, 404);
    }
  });

  it('keeps well-formed text, emoji (surrogate pairs) included', async () => {
    const m = await postMessage(s.ws.owner, s.channelId, { content: 'ok 🎉 \u00e9', metadata: { type: 't', data: { '🎉': '𝄞' } } });
    expect(m.content).to.equal('ok 🎉 \u00e9');
    expect(m.metadata.data).to.deep.equal({ '🎉': '𝄞' });
  });
});

describe('compatible hook: everything checked before anything is written', () => {
  it('refuses a NUL in an attachment field with 400 and posts nothing (a 5xx would be retried and post twice)', async () => {
    const s = await setup();
    for (const attachment of [
      { title: 'ok', fields: [{ title: 'f', value: NUL }] },
      { fallback: 'x', footer: LONE_SURROGATE },
      { title: 'ok', title_link: `https://x.example/${NUL}` },
    ]) {
      const res = await anon().post(`/hooks/compat/${s.hookId}`, { text: 'deploy', attachments: [attachment] });
      expectError(res, 400, 'validation_error');
      expect(res.body.error.message).to.match(/^attachments\.0\./);
    }
    const form = await anon().post(
      `/hooks/compat/${s.hookId}`,
      `payload=${encodeURIComponent(JSON.stringify({ text: 'x', attachments: [{ text: NUL }] }))}`,
      { 'content-type': 'application/x-www-form-urlencoded' },
    );
    expectError(form, 400, 'validation_error');
    expect(form.body.error.message).to.equal(`attachments.0.text: ${BAD}`);
    // Rendered attachments the link rule would refuse (long, with a script link): refused before posting too.
    const long = await anon().post(`/hooks/compat/${s.hookId}`, { text: 'x', attachments: [{ text: `${'word '.repeat(1_000)}[x](javascript:1)` }] });
    expectError(long, 400, 'validation_error');
    expect(long.body.error.message).to.match(/^attachments: has a link or image whose address uses a scheme other than/);
    expect(await hookMessages(s.hookId)).to.have.length(0);
  });

  it('writes the message, its pending render and its job together or not at all', async () => {
    const s = await setup();
    const db = stack().rt.db;
    // A real failure between the message and its render row: a trigger of this
    // run's own database refuses one marked render (other tests never send it).
    await db.raw(`CREATE OR REPLACE FUNCTION refuse_marked_render() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.text = 'refuse-this-render' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`);
    await db.raw('CREATE TRIGGER refuse_marked_render BEFORE INSERT ON webhook_renders FOR EACH ROW EXECUTE FUNCTION refuse_marked_render()');
    try {
      const res = await anon().post(`/hooks/compat/${s.hookId}`, { text: 'refuse-this-render', attachments: [{ title: 'deploy', text: 'done' }] });
      expectError(res, 500, 'internal_error');
      expect(await hookMessages(s.hookId)).to.have.length(0);
    } finally {
      await db.raw('DROP TRIGGER refuse_marked_render ON webhook_renders');
      await db.raw('DROP FUNCTION refuse_marked_render()');
    }
    const ok = await anon().post(`/hooks/compat/${s.hookId}`, { text: 'fine', attachments: [{ title: 'deploy', text: 'done' }] });
    expect(ok.status).to.equal(200);
    expect(await hookMessages(s.hookId)).to.have.length(1);
  });
});

describe('nesting depth', () => {
  let s: Setup;
  before(async () => {
    s = await setup();
  });

  it('accepts metadata.data 20 levels deep and refuses 21, naming the field', async () => {
    const ok = await postMessage(s.ws.owner, s.channelId, { content: 'x', metadata: { type: 't', data: nested(20) } });
    expect(ok.metadata.data).to.deep.equal(nested(20));
    const res = await message(s, { content: 'x', metadata: { type: 't', data: nested(21) } });
    expectError(res, 400, 'validation_error');
    expect(res.body.error.message).to.equal('metadata.data: must be nested at most 20 levels deep');
  });

  it('refuses 10,000 levels in metadata.data (messages and the native hook) without a stack overflow', async () => {
    const before = await stack().rt.db('messages').where({ channel_id: s.channelId }).count<{ count: string }[]>('* as count');
    const body = `{"content": "x", "metadata": {"type": "t", "data": ${nestedJson(10_000)}}}`;
    for (const res of [
      await s.ws.owner.post(messagesUrl(s.channelId), body, JSON_TYPE),
      await anon().post(`/hooks/${s.hookId}`, body, JSON_TYPE),
    ]) {
      expectError(res, 400, 'validation_error');
      expect(res.body.error.message).to.equal('metadata.data: must not be nested more than 64 levels deep');
    }
    const after = await stack().rt.db('messages').where({ channel_id: s.channelId }).count<{ count: string }[]>('* as count');
    expect(after[0]!.count).to.equal(before[0]!.count);
  });

  it('refuses deep nesting anywhere in a JSON body (content_json, unknown fields, the compatible hook)', async () => {
    const cases: [Promise<Awaited<ReturnType<Client['post']>>>, string][] = [
      [s.ws.owner.post(messagesUrl(s.channelId), `{"content": "x", "content_json": ${nestedJson(10_000)}}`, JSON_TYPE), 'content_json.a'],
      [s.ws.owner.post('/api/v1/channels', `{"name": "x", "extra": [${nestedJson(10_000)}]}`, JSON_TYPE), 'extra.0'],
      [anon().post(`/hooks/compat/${s.hookId}`, `{"text": "x", "attachments": [${nestedJson(10_000)}]}`, JSON_TYPE), 'attachments.0'],
      [
        anon().post(`/hooks/compat/${s.hookId}`, `payload=${encodeURIComponent(`{"text": "x", "attachments": [${nestedJson(10_000)}]}`)}`, {
          'content-type': 'application/x-www-form-urlencoded',
        }),
        'attachments.0',
      ],
    ];
    for (const [pending, field] of cases) {
      const res = await pending;
      expectError(res, 400, 'validation_error');
      expect(res.body.error.message).to.equal(`${field}: must not be nested more than 64 levels deep`);
    }
  });
});

describe('script links in stored content', () => {
  let s: Setup;
  before(async () => {
    s = await setup();
  });

  const stored = async (content: string) => {
    const m = await postMessage(s.ws.owner, s.channelId, content);
    const read = expectOk(await s.ws.owner.get(`${messagesUrl(s.channelId)}/${m.id}`)).data.content as string;
    expect(read).to.equal(m.content);
    // Nothing left for the CommonMark pass to take out.
    expect(neutralizeLinks(read)).to.equal(read);
    return read;
  };

  it('neutralizes a markdown link beside an HTML tag', async () => {
    expect(await stored('<b>x</b> [y](javascript:alert(1))')).to.equal('<b>x</b> [y](#)');
  });

  it('neutralizes entity-encoded and escaped schemes, as CommonMark decodes them', async () => {
    expect(await stored('[x](&#106;avascript:alert(1))')).to.equal('[x](#)');
    expect(await stored('[x](javascript&colon;alert(1))')).to.equal('[x](#)');
    expect(await stored('[x](&#x6A;ava&Tab;script:alert(1) "t")')).to.equal('[x](# "t")');
    expect(await stored('![i](data:text/html;base64,PHNjcmlwdD4=)')).to.equal('![i](#)');
    expect(await stored('[r]\n\n[r]: vbscript:x')).to.equal('[r]\n\n[r]: #');
    // An entity the HTML pass decodes must not assemble a script link either.
    expect(await stored('<i>x</i> [y](&#106;avascript:alert(1))')).to.equal('<i>x</i> [y](#)');
  });

  it('keeps safe links, relative links and code exactly as written', async () => {
    const safe = '[a](https://x.example/(p)) [b](mailto:a@b.c) [c](/relative) [d](#top) <https://x.y|label> `[e](javascript:x)`';
    expect(await stored(safe)).to.equal(safe);
  });

  it('refuses, rather than spend seconds rewriting, unsafe links in huge or deeply nested content', async () => {
    const before = await stack().rt.db('messages').where({ channel_id: s.channelId }).count<{ count: string }[]>('* as count');
    // 19,000 nested list items: a CommonMark parser's worst case.
    const deep = await message(s, { content: `${'- '.repeat(19_000)}[x](javascript:alert(1))` });
    expectError(deep, 400, 'validation_error');
    expect(deep.body.error.message).to.match(/^content: quotes, lists or emphasis are nested too deeply/);
    const long = await message(s, { content: `${'word '.repeat(1_000)}[x](javascript:alert(1))` });
    expectError(long, 400, 'validation_error');
    expect(long.body.error.message).to.equal('content: has a link or image whose address uses a scheme other than http, https, mailto; remove it');
    const after = await stack().rt.db('messages').where({ channel_id: s.channelId }).count<{ count: string }[]>('* as count');
    expect(after[0]!.count).to.equal(before[0]!.count);
    // Deep nesting without anything that could be a link is kept as written.
    const quotes = `${'> '.repeat(100)}just text`;
    expect(await stored(quotes)).to.equal(quotes);
  });

  it('neutralizes script links in compatible hook attachments once the worker renders them', async () => {
    const res = await anon().post(`/hooks/compat/${s.hookId}`, {
      text: 'deploy [t](javascript:alert(1))',
      attachments: [
        {
          title: 'x](javascript:alert(2)) [y',
          title_link: 'https://x.example/a',
          text: '[z](&#106;avascript:alert(3))',
          fields: [{ title: 'f', value: '[w](javascript&colon;alert(4))' }],
        },
      ],
    });
    expect(res.status, res.text).to.equal(200);
    const rendered = await waitFor(async () => {
      const [m] = await hookMessages(s.hookId);
      return m && m.content_json ? (m as { content: string }) : undefined;
    }, 'the rendered webhook message');
    expect(rendered.content).to.include('deploy [t](#)');
    expect(rendered.content).to.include('[z](#)');
    expect(rendered.content).to.include('[w](#)');
    expect(rendered.content).not.to.match(/javascript/i);
    expect(neutralizeLinks(rendered.content)).to.equal(rendered.content);
  });
});

describe('block URLs', () => {
  let s: Setup;
  before(async () => {
    s = await setup();
  });

  const buttonDoc = (url: string) => ({
    type: 'doc',
    content: [{ type: 'block_button_group', attrs: { blockName: 'button_group', version: 1, props: { buttons: [{ label: 'Go', url }] } } }],
  });
  const cardDoc = (url: string) => ({
    type: 'doc',
    content: [{ type: 'block_repo_pr_card', attrs: { blockName: 'repo_pr_card', version: 1, props: { url } } }],
  });

  it('refuses user info and invisible or bidirectional characters in button URLs', async () => {
    const where = 'content_json.content.0.attrs.props.buttons.0.url';
    const cases: [string, RegExp][] = [
      ['https://github.com@evil.example/', /must not contain user info/],
      ['https://user:pw@x.example/', /must not contain user info/],
      ['https://x.example/\u202Efdp.exe', /invisible or bidirectional/],
      ['https://x\u200B.example/', /invisible or bidirectional/],
      ['https://x.example/\u2066a\u2069', /invisible or bidirectional/],
      ['https://x.example/\uFEFF', /invisible or bidirectional/],
    ];
    for (const [url, reason] of cases) {
      const res = await message(s, { content: 'x', content_json: buttonDoc(url) });
      expectError(res, 400, 'validation_error');
      expect(res.body.error.message).to.match(new RegExp(`^${where.replace(/\./g, '\\.')}: `)).and.match(reason);
    }
  });

  it('stores card and button URLs as parsed (percent-encoded and full-width hosts normalised)', async () => {
    for (const [url, expected] of [
      ['https://git%68ub.com/a/b/pull/1', 'https://github.com/a/b/pull/1'],
      ['https://\uFF47\uFF49\uFF54\uFF48\uFF55\uFF42.com/a/b/pull/2', 'https://github.com/a/b/pull/2'],
      ['https://GitHub.com:443/a/b/pull/3', 'https://github.com/a/b/pull/3'],
    ] as const) {
      const m = await postMessage(s.ws.owner, s.channelId, { content: 'x', content_json: cardDoc(url) });
      expect(m.content_json.content[0].attrs.props.url).to.equal(expected);
      expect(m.card_origin).to.equal('https://github.com');
      const read = expectOk(await s.ws.owner.get(`${messagesUrl(s.channelId)}/${m.id}`)).data;
      expect(read.content_json.content[0].attrs.props.url).to.equal(expected);
    }
    const b = await postMessage(s.ws.owner, s.channelId, { content: 'x', content_json: buttonDoc('https://X.example/a b'.replace(' ', '%20')) });
    expect(b.content_json.content[0].attrs.props.buttons[0].url).to.equal('https://x.example/a%20b');
  });
});

describe('unknown body fields', () => {
  it('are refused by POST /channels/{id}/members and POST /hooks/{id}', async () => {
    const s = await setup();
    const other = await s.ws.user();
    const add = await s.ws.owner.post(`/api/v1/channels/${s.channelId}/members`, { user_id: other.id, role: 'admin' });
    expectError(add, 400, 'validation_error');
    expect(add.body.error.message).to.match(/role/);
    const hook = await anon().post(`/hooks/${s.hookId}`, { content: 'x', channel: '#general' });
    expectError(hook, 400, 'validation_error');
    expect(hook.body.error.message).to.match(/channel/);
    expect(await hookMessages(s.hookId)).to.have.length(0);
  });

  // Bodies that are not a strict object on purpose: multipart uploads, the
  // chat-platform payload (its senders add fields we do not read), and a
  // route that answers 501 whatever it is sent.
  const LOOSE = new Set(['POST /api/v1/files', 'POST /hooks/compat/{webhook_id}', 'POST /api/v1/interactions/actions']);

  /** Paths inside a schema where an object would accept unknown keys. */
  function looseObjects(schema: z.ZodType, at: string, seen = new Set<z.ZodType>()): string[] {
    if (seen.has(schema)) return [];
    seen.add(schema);
    const def = (schema as unknown as { _zod: { def: Record<string, any> } })._zod.def;
    switch (def.type) {
      case 'object': {
        const strict = def.catchall?._zod?.def?.type === 'never';
        const inner = Object.entries(def.shape as Record<string, z.ZodType>).flatMap(([k, v]) => looseObjects(v, `${at}.${k}`, seen));
        return strict ? inner : [at, ...inner];
      }
      case 'optional':
      case 'nullable':
      case 'default':
      case 'readonly':
      case 'nonoptional':
        return looseObjects(def.innerType, at, seen);
      case 'pipe':
        return [...looseObjects(def.in, at, seen), ...looseObjects(def.out, at, seen)];
      case 'array':
        return looseObjects(def.element, `${at}[]`, seen);
      case 'union':
        return (def.options as z.ZodType[]).flatMap((o) => looseObjects(o, at, seen));
      case 'intersection':
        return [...looseObjects(def.left, at, seen), ...looseObjects(def.right, at, seen)];
      case 'lazy':
        return looseObjects(def.getter(), at, seen);
      case 'record':
        return looseObjects(def.valueType, `${at}{}`, seen);
      case 'unknown':
      case 'any':
        return at === 'body' ? [at] : []; // free-form values (metadata.data, content_json) are checked elsewhere
      default:
        return [];
    }
  }

  it('every route with a JSON body declares a strict schema (checked from the route table)', () => {
    const { tables } = apiRoutes();
    const withBody = tables.flatMap((t) => t.specs.filter((spec) => spec.body).map((spec) => ({ spec, name: `${spec.method.toUpperCase()} ${t.prefix}${spec.path}` })));
    expect(withBody.length).to.be.greaterThan(15);
    const loose = withBody.filter(({ name }) => !LOOSE.has(name)).flatMap(({ spec, name }) => looseObjects(spec.body!, 'body').map((p) => `${name}: ${p}`));
    expect(loose, 'bodies that silently accept unknown fields').to.deep.equal([]);
    // The exceptions still exist (a renamed route must be looked at again).
    for (const name of LOOSE) expect(withBody.map((r) => r.name)).to.include(name);
  });
});
