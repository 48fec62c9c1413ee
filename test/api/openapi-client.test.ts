// A client generated from the served document (openapi-typescript) must type
// response bodies: a small program reading their fields through openapi-fetch
// compiles under `strict` only if they are typed (`const n: string = ...`
// does not compile against `unknown` or `{}`).
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { Client } from '../support/client.js';
import { stack } from '../support/stack.js';

const require = createRequire(import.meta.url);
const openapiFetchDir = path.dirname(require.resolve('openapi-fetch/package.json'));

const PROGRAM = `
import createClient from 'openapi-fetch';
import type { components, paths } from './schema';

const api = createClient<paths>({ baseUrl: 'http://127.0.0.1:3000' });

export async function readTypedFields(): Promise<string[]> {
  const out: string[] = [];
  const posted = await api.POST('/api/v1/channels/{channel_id}/messages', {
    params: { path: { channel_id: 'c1' } },
    body: { content: 'hello' },
  });
  if (posted.data) {
    const id: string = posted.data.data.id;
    const author: string | null = posted.data.data.author_id;
    const emoji: string | undefined = posted.data.data.reactions[0]?.emoji;
    const replies: number | undefined = posted.data.data.thread?.reply_count;
    out.push(id, author ?? '', emoji ?? '', String(replies));
  }
  if (posted.error) {
    const code: components['schemas']['Error']['error']['code'] = posted.error.error.code;
    out.push(code);
  }
  const channels = await api.GET('/api/v1/channels', { params: { query: { limit: 10 } } });
  if (channels.data) {
    const name: string = channels.data.data[0]!.name;
    const next: string | null = channels.data.pagination.next_cursor;
    const more: boolean = channels.data.pagination.has_more;
    out.push(name, next ?? '', String(more));
  }
  const history = await api.GET('/api/v1/channels/{channel_id}/messages', { params: { path: { channel_id: 'c1' }, query: {} } });
  if (history.data) {
    const content: string = history.data.data[0]!.content;
    out.push(content);
  }
  const me = await api.GET('/api/v1/users/me');
  if (me.data) {
    const role: 'owner' | 'admin' | 'member' = me.data.data.role;
    const agent: boolean = me.data.data.is_agent;
    out.push(role, String(agent));
  }
  const user = await api.POST('/api/v1/users', { body: { name: 'bot' } });
  if (user.data) {
    const key: string = user.data.data.api_key;
    out.push(key);
  }
  const members = await api.GET('/api/v1/channels/{channel_id}/members', { params: { path: { channel_id: 'c1' }, query: {} } });
  if (members.data) {
    const who: string = members.data.data[0]!.user.name;
    out.push(who);
  }
  const file = await api.GET('/api/v1/files/{file_id}', { params: { path: { file_id: 'f1' } } });
  if (file.data) {
    const url: string = file.data.data.download_url;
    const status: 'processing' | 'ready' | 'failed' = file.data.data.status;
    out.push(url, status);
  }
  const dm = await api.POST('/api/v1/dms', { body: { user_ids: ['u2'] } });
  if (dm.data) {
    const members: string[] = dm.data.data.member_ids;
    out.push(...members);
  }
  const reaction = await api.POST('/api/v1/channels/{channel_id}/messages/{message_id}/reactions', {
    params: { path: { channel_id: 'c1', message_id: 'm1' } },
    body: { emoji: 'tada' },
  });
  if (reaction.data) {
    const by: string = reaction.data.data.user_id;
    out.push(by);
  }
  const hook = await api.POST('/api/v1/webhooks/incoming', { body: { channel_id: 'c1', name: 'ci' } });
  if (hook.data) {
    const url: string = hook.data.data.url;
    out.push(url);
  }
  const ws = await api.GET('/api/v1/workspaces/current');
  if (ws.data) {
    const cap: number | null = ws.data.data.settings.max_users;
    out.push(String(cap));
  }
  return out;
}
`;

/** Generates the client types from `doc` and type-checks PROGRAM against them: the diagnostics, one line each. */
async function typeCheckClient(doc: object): Promise<string[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'axid-client-'));
  try {
    writeFileSync(path.join(dir, 'schema.d.ts'), astToString(await openapiTS(doc as never)));
    writeFileSync(path.join(dir, 'program.ts'), PROGRAM);
    const program = ts.createProgram([path.join(dir, 'program.ts')], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: [],
      skipLibCheck: true,
      paths: { 'openapi-fetch': [openapiFetchDir] },
    });
    return ts
      .getPreEmitDiagnostics(program)
      .map((d) => `${d.file ? path.basename(d.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('a client generated from the OpenAPI document', function () {
  this.timeout(120_000);
  let doc: { components: { schemas: Record<string, unknown> } };
  before(async () => {
    doc = (await new Client(stack().url).get('/api/v1/openapi.json')).body;
  });

  it('reads typed fields of responses under tsc --strict (openapi-typescript + openapi-fetch)', async () => {
    const problems = await typeCheckClient(doc);
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it('fails to compile when a response body is untyped (the check has teeth)', async () => {
    const untyped = structuredClone(doc);
    untyped.components.schemas.Channel = {};
    const problems = await typeCheckClient(untyped);
    expect(problems.join('\n')).to.match(/program\.ts: .*'name'/);
  });
});
