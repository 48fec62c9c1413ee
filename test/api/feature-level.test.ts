// The level switch (docs/feature-levels.md): FEATURE_LEVEL=2 (the shared stack)
// is the documented interface; FEATURE_LEVEL=3 adds the routes declared with
// `since: 3` and drops the ones declared `until: 2`.
import { expect } from 'chai';
import { Client } from '../support/client.js';
import { expectError } from '../support/expect.js';
import { level3Stack, newWorkspace, stack } from '../support/stack.js';
import { apiRoutes } from '../../services/api/routes.js';
import { buildOpenApi } from '../../services/api/openapi.js';

describe('feature level', () => {
  it('answers X-Service-Feature-Level 2 by default and 3 on a level-3 stack, on successes and errors alike', async () => {
    const ws = await newWorkspace();
    expect((await ws.owner.get('/api/v1/users/me')).headers.get('x-service-feature-level')).to.equal('2');
    const s3 = await level3Stack();
    const ws3 = await newWorkspace(s3);
    expect((await ws3.owner.get('/api/v1/users/me')).headers.get('x-service-feature-level')).to.equal('3');
    const anonymous = await new Client(s3.url).get('/api/v1/users/me');
    expectError(anonymous, 401, 'unauthorized');
    expect(anonymous.headers.get('x-service-feature-level')).to.equal('3');
  });

  it('keeps POST /interactions/actions at 501 at level 2', async () => {
    const ws = await newWorkspace();
    expectError(await ws.owner.post('/api/v1/interactions/actions', { message_id: 'x', action_id: 'y' }), 501, 'not_implemented');
  });

  it('serves the OpenAPI document of its own level', async () => {
    const ws = await newWorkspace();
    expect((await ws.owner.get('/api/v1/openapi.json')).body.info.version).to.equal('feature-level-2');
    const s3 = await level3Stack();
    const doc3 = (await new Client(s3.url).get('/api/v1/openapi.json')).body;
    expect(doc3.info.version).to.equal('feature-level-3');
    expect(doc3.components.headers.FeatureLevel.description).to.match(/currently 3/);
  });

  it('builds each level from one route table: a route declared for a level is served and documented at that level only', () => {
    const paths = (level: 2 | 3) => {
      const doc = buildOpenApi(apiRoutes(level).tables) as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
      return doc.paths;
    };
    const two = paths(2);
    const three = paths(3);
    // At 2 the actions route answers only 501; at 3 it is the real one, or absent until built.
    expect(Object.keys(two['/api/v1/interactions/actions']!.post!.responses)).to.include('501');
    expect(Object.keys(three['/api/v1/interactions/actions']?.post?.responses ?? {})).to.not.include('501');
    // Everything of level 2 but the 501 route is also at 3, unchanged in path and method.
    for (const [path, ops] of Object.entries(two)) {
      if (path === '/api/v1/interactions/actions') continue;
      for (const method of Object.keys(ops)) expect(three[path]?.[method], `${method} ${path} at level 3`).to.exist;
    }
  });

  it('exists at every route of level 2 on the level-2 stack: no level-3 path answers there', async () => {
    const ws = await newWorkspace();
    const level2 = new Set(Object.keys((buildOpenApi(apiRoutes(2).tables) as { paths: object }).paths));
    const onlyAt3 = Object.keys((buildOpenApi(apiRoutes(3).tables) as { paths: object }).paths).filter((p) => !level2.has(p));
    for (const template of onlyAt3) {
      const path = template.replace(/\{[^}]+\}/g, '00000000-0000-0000-0000-000000000000');
      const res = await ws.owner.get(path);
      expect(res.status, `GET ${path} at level 2`).to.be.oneOf([404, 405]);
      if (res.status === 404) expect(res.body.error.code).to.equal('not_found');
    }
    expect(stack().rt.config.featureLevel).to.equal(2);
  });
});
