import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Validator } from '@seriousme/openapi-schema-validator';
import { apiRoutes } from '../../services/api/routes.js';
import { Client } from '../support/client.js';
import { checkResponses } from '../support/openapi-responses.js';
import { stack } from '../support/stack.js';

type Schema = { $ref?: string; properties?: Record<string, Schema>; items?: Schema };
type Response = { $ref?: string; description?: string; 'x-error-codes'?: string[]; content?: Record<string, { schema: Schema }> };
type Operation = { summary?: string; description?: string; tags: string[]; responses: Record<string, Response> };
type Doc = {
  openapi: string;
  servers: { url: string }[];
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; responses: Record<string, Response> };
};

const operations = (doc: Doc) =>
  Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ name: `${method} ${path}`, op })));

describe('OpenAPI document', () => {
  let doc: Doc;
  before(async () => {
    const res = await new Client(stack().url).get('/api/v1/openapi.json');
    expect(res.status).to.equal(200);
    expect(res.headers.get('x-service-feature-level')).to.equal('2');
    doc = res.body;
  });

  it('is valid OpenAPI 3.1', async () => {
    expect(doc.openapi).to.equal('3.1.0');
    const result = await new Validator().validate(doc as never);
    expect(result.valid, JSON.stringify(result.errors, null, 2)).to.equal(true);
  });

  it('lists every route the router serves, and serves every path it lists', () => {
    const served = new Set<string>();
    for (const layer of apiRoutes().router.stack) {
      for (const method of layer.methods.filter((m) => m !== 'HEAD')) {
        served.add(`${method.toLowerCase()} ${String(layer.path).replace(/:(\w+)/g, '{$1}')}`);
      }
    }
    const documented = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const method of Object.keys(ops)) documented.add(`${method} ${path}`);
    }
    documented.delete('get /api/v1/stream'); // served by the gateway role, not the API router
    expect([...served].sort()).to.deep.equal([...documented].sort());
  });

  it('has a relative server URL, so the page at /docs and clients call the host that served it', () => {
    expect(doc.servers).to.deep.equal([{ url: '/', description: 'The host serving this document' }]);
  });

  it('gives every operation a summary, a description and one tag declared at the top level', () => {
    const declared = new Set(doc.tags.map((t) => t.name));
    for (const { name, op } of operations(doc)) {
      expect(op.summary, name).to.be.a('string').and.not.empty;
      expect(op.description, name).to.be.a('string').and.not.empty;
      expect(op.tags, name).to.have.length(1);
      expect(declared.has(op.tags[0]!), `${name}: tag ${op.tags[0]}`).to.equal(true);
    }
  });

  it('types every JSON success body with named schemas: an object envelope or a list of a named item', () => {
    const named = (s: Schema | undefined) => Boolean(s?.$ref?.startsWith('#/components/schemas/'));
    const resolve = (s: Schema) => (s.$ref ? doc.components.schemas[s.$ref.split('/').pop()!]! : s);
    let typed = 0;
    for (const { name, op } of operations(doc)) {
      for (const [status, response] of Object.entries(op.responses)) {
        const schema = response.content?.['application/json']?.schema;
        if (!status.startsWith('2') || !schema || name === 'get /api/v1/openapi.json') continue;
        const data = resolve(schema).properties?.data;
        expect(named(data) || named(data?.items), `${name} ${status}: ${JSON.stringify(data)}`).to.equal(true);
        typed++;
      }
    }
    expect(typed).to.be.greaterThan(35);
    for (const name of ['User', 'Channel', 'ChannelMember', 'Message', 'Reaction', 'Thread', 'Conversation', 'File', 'ApiKey', 'Webhook', 'Workspace', 'Error']) {
      expect(doc.components.schemas, name).to.have.property(name);
    }
    for (const name of ['UserList', 'ChannelList', 'ChannelMemberList', 'MessageList', 'ConversationList', 'ApiKeyList', 'WebhookList']) {
      expect(doc.components.schemas[name]?.properties?.data?.items?.$ref, name).to.equal(`#/components/schemas/${name.slice(0, -4)}`);
    }
  });

  it('lists per operation the statuses it answers, not one blanket set', () => {
    const statuses = (name: string) => {
      const [method, path] = name.split(' ');
      return Object.keys(doc.paths[path!]![method!]!.responses);
    };
    expect(statuses('get /api/v1/users/me')).to.deep.equal(['200', '401', '429', '500', '503']);
    expect(statuses('post /api/v1/channels')).to.deep.equal(['201', '400', '401', '403', '404', '409', '413', '415', '429', '500', '503']);
    expect(statuses('post /api/v1/channels/{channel_id}/messages/{message_id}/reactions').filter((s) => s.startsWith('2'))).to.deep.equal(['201']);
    expect(statuses('post /api/v1/dms').filter((s) => s.startsWith('2'))).to.deep.equal(['200', '201']);
    expect(statuses('delete /api/v1/api-keys/{key_id}')[0]).to.equal('204');
    // Errors refer to shared responses named after their codes, which list the codes.
    expect(doc.paths['/api/v1/users/me']!.get!.responses['401']).to.deep.equal({ $ref: '#/components/responses/UnauthorizedOrKeyExpired' });
    const unauthorized = doc.components.responses.UnauthorizedOrKeyExpired!;
    expect(unauthorized['x-error-codes']).to.deep.equal(['unauthorized', 'key_expired']);
    expect(unauthorized.content!['application/json']!.schema).to.deep.equal({ $ref: '#/components/schemas/Error' });
    expect(doc.paths['/api/v1/users']!.post!.responses['403']).to.deep.equal({ $ref: '#/components/responses/ForbiddenOrUserLimitReached' });
  });

  it('lists a success status for every operation but the button action, which answers only 501', () => {
    for (const { name, op } of operations(doc)) {
      const success = Object.keys(op.responses).filter((s) => /^2/.test(s));
      if (name === 'post /api/v1/interactions/actions') {
        expect(success, name).to.deep.equal([]);
        expect(op.responses['501'], name).to.deep.equal({ $ref: '#/components/responses/NotImplemented' });
      } else expect(success, name).to.not.be.empty;
    }
  });

  it('describes /docs as HTML and the compatible webhook answer as text', () => {
    expect(Object.keys(doc.paths['/docs']!.get!.responses['200']!.content!)).to.deep.equal(['text/html']);
    expect(Object.keys(doc.paths['/hooks/compat/{webhook_id}']!.post!.responses['200']!.content!)).to.deep.equal(['text/plain']);
  });

  it('is printed by `npm run --silent openapi` without a server, byte for byte the same each run and as served', async () => {
    const run = () => promisify(execFile)('npm', ['run', '--silent', 'openapi'], { cwd: new URL('../..', import.meta.url).pathname });
    const [first, second] = [await run(), await run()];
    expect(first.stdout).to.equal(second.stdout);
    expect(JSON.parse(first.stdout)).to.deep.equal(doc);
  });

  it('documents the stream served by the gateway', () => {
    expect(doc.paths['/api/v1/stream']).to.have.property('get');
  });

  it('serves a reference page at /docs that loads nothing from other hosts', async () => {
    const anon = new Client(stack().url);
    const page = await anon.get('/docs');
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.match(/text\/html/);
    const refs = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(refs).to.not.be.empty;
    for (const ref of refs) {
      expect(ref.startsWith('/'), ref).to.equal(true);
      const asset = await anon.get(ref);
      expect(asset.status, ref).to.equal(200);
      expect(asset.text).not.to.match(/https?:\/\/(?:unpkg|cdn|cdnjs|fonts\.googleapis)/);
    }
  });

  it('cannot be framed by another page (frame-ancestors, X-Frame-Options)', async () => {
    const page = await new Client(stack().url).get('/docs');
    expect(page.headers.get('content-security-policy')).to.match(/frame-ancestors 'none'/);
    expect(page.headers.get('x-frame-options')).to.equal('DENY');
  });
});

describe('the response check (run by the root hooks at the end of every run)', () => {
  const created = { id: 'u1', name: 'n', display_name: null, avatar_url: null, role: 'member', is_agent: false, created_at: '2026-01-01T00:00:00.000Z' };
  const me = (status: number, body: unknown) => ({ method: 'GET', path: '/api/v1/users/me', status, contentType: 'application/json; charset=utf-8', body, level: 2 });

  it('accepts a body that matches its schema', () => {
    expect(checkResponses([me(200, { data: created })])).to.deep.equal({ checked: 1, problems: [] });
  });

  it('reports a status or error code the operation does not list, a missing or extra field, and a wrong media type', () => {
    const { problems } = checkResponses([
      me(409, { error: { code: 'conflict', message: 'x' } }),
      me(401, { error: { code: 'not_found', message: 'x' } }),
      me(200, { data: { ...created, extra: 1 } }),
      me(200, { data: { ...created, role: undefined } }),
      { method: 'GET', path: '/docs', status: 200, contentType: 'application/json', body: {}, level: 2 },
    ]);
    expect(problems).to.have.length(5);
    expect(problems[0]).to.equal('GET /api/v1/users/me → 409 is not listed');
    expect(problems[1]).to.equal('GET /api/v1/users/me → 401: code not_found is not listed (unauthorized, key_expired)');
    expect(problems[2]).to.match(/additional properties/);
    expect(problems[3]).to.match(/must have required property 'role'/);
    expect(problems[4]).to.match(/application\/json, documented as text\/html/);
  });
});
