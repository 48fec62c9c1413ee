import { expect } from 'chai';
import { Validator } from '@seriousme/openapi-schema-validator';
import { apiRoutes } from '../services/api/routes.js';
import { Client } from './support/client.js';
import { stack } from './support/stack.js';

type Doc = { openapi: string; paths: Record<string, Record<string, unknown>> };

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
});
