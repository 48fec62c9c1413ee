// The API role serves the built web app: caching, the CSP, client routes, and
// the API's own 404s; the web app's API types are not stale.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { API_TYPES_FILE, webApiTypes } from '../../services/api/openapi-web-types.js';
import { stack } from '../support/stack.js';
import { ensureWebBuild } from './browser.js';

describe('web app: served by the API role', () => {
  before(() => ensureWebBuild());

  it('serves index.html at / and at client routes, never cached, with a strict CSP', async () => {
    for (const path of ['/', '/c/some-channel', '/settings']) {
      const res = await fetch(stack().url + path);
      expect(res.status, path).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/html/);
      expect(res.headers.get('cache-control')).to.equal('no-cache');
      const csp = res.headers.get('content-security-policy') ?? '';
      for (const directive of ["script-src 'self'", "connect-src 'self'", "object-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "style-src 'self'"]) {
        expect(csp, directive).to.include(directive);
      }
      expect(csp).to.not.include('unsafe-inline');
      const html = await res.text();
      expect(html).to.include('<div id="app">');
      // No inline script: every <script> has a src.
      expect(html.match(/<script(?![^>]*\bsrc=)[^>]*>/g)).to.equal(null);
    }
  });

  it('serves hashed assets cached for a year; a missing asset is a 404, not the page', async () => {
    const html = await (await fetch(stack().url + '/')).text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const res = await fetch(stack().url + script);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/javascript/);
    expect(res.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
    expect((await fetch(stack().url + '/assets/gone-1234.js')).status).to.equal(404);
  });

  it('leaves /api/... and /hooks/... to the API: unknown ones keep their JSON 404', async () => {
    for (const path of ['/api/v1/nothing', '/api', '/hooks/nothing/else']) {
      const res = await fetch(stack().url + path);
      expect(res.status, path).to.equal(404);
      expect((await res.json()).error.code).to.equal('not_found');
    }
    // Other methods on app paths are not the app's business either.
    expect((await fetch(stack().url + '/settings', { method: 'POST' })).status).to.equal(404);
  });

  it('has API types generated from the current OpenAPI document (run `npm run web:api-types` when this fails)', async () => {
    expect(readFileSync(API_TYPES_FILE, 'utf8') === (await webApiTypes()), 'services/web/src/lib/api-schema.d.ts is stale: run `npm run web:api-types`').to.equal(true);
  });
});
