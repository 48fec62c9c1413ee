// Scoped keys (docs/security.md, "Scopes"): every route of the table declares
// the scope a key needs, of the kind the route is. A route added later with no
// scope fails to compile (RouteSpec.scope is required); one with a scope of the
// wrong kind fails here. New route families add their rule to KIND_RULES.
import { expect } from 'chai';
import { apiRoutes } from '../../services/api/routes.js';
import type { RouteSpec } from '../../shared/http/route.js';
import { narrowLimits, reachesEvent, requireScope, SCOPES, type RouteScope } from '../../shared/scopes.js';
import { AppError } from '../../shared/errors.js';

/** The scope a route's kind calls for, first matching rule wins. */
const KIND_RULES: { name: string; matches: (spec: RouteSpec, path: string) => boolean; scope: RouteScope }[] = [
  { name: 'routes without a key are public', matches: (spec) => spec.auth === 'none', scope: 'public' },
  { name: 'event subscriptions need events', matches: (_, path) => path.startsWith('/api/v1/event-subscriptions'), scope: 'events' },
  { name: 'reads need read', matches: (spec) => spec.method === 'get', scope: 'read' },
  // What these make is narrowed to the calling key (shared/scopes.ts narrowLimits).
  { name: 'making a key or a sign-in link needs any key', matches: (spec, path) => spec.method === 'post' && ['/api/v1/api-keys', '/api/v1/auth/links'].includes(path), scope: 'any_key' },
  // Approving an MCP client's request makes it a key from the calling one (narrowed like POST /api-keys).
  { name: 'answering an OAuth authorization request needs any key', matches: (spec, path) => spec.method === 'post' && path.startsWith('/api/v1/oauth/authorizations/'), scope: 'any_key' },
  { name: 'read markers are messages:write', matches: (_, path) => path.endsWith('/read'), scope: 'messages:write' },
  { name: 'message writes, an agent’s status and ephemeral messages, commands invoked', matches: (_, path) => /\/(messages|typing|status|ephemeral)(\/|$)/.test(path) || ['/api/v1/interactions', '/api/v1/commands/invoke', '/api/v1/scheduled-messages', '/api/v1/reminders'].some((p) => path.startsWith(p)), scope: 'messages:write' },
  { name: 'uploads, custom emoji', matches: (_, path) => ['/api/v1/files', '/api/v1/emoji'].some((p) => path.startsWith(p)), scope: 'files:write' },
  {
    name: 'channel and conversation writes, incoming webhooks',
    matches: (_, path) => ['/api/v1/channels', '/api/v1/dms', '/api/v1/webhooks'].some((p) => path.startsWith(p)),
    scope: 'channels:write',
  },
  {
    name: 'administration: workspace, people, invites, profile, keys, imports',
    matches: (_, path) => ['/api/v1/workspaces', '/api/v1/users', '/api/v1/agents', '/api/v1/invites', '/api/v1/api-keys', '/api/v1/imports', '/api/v1/user-groups'].some((p) => path.startsWith(p)),
    scope: 'admin',
  },
];

describe('route scopes', () => {
  for (const level of [2, 3] as const) {
    it(`every route of level ${level} declares the scope of its kind, and only routes without a key are public`, () => {
      const specs = apiRoutes(level).tables.flatMap((table) => table.specs.map((spec) => ({ spec, path: table.prefix + spec.path })));
      expect(specs.length).to.be.greaterThan(50);
      for (const { spec, path } of specs) {
        const name = `${spec.method.toUpperCase()} ${path}`;
        expect(spec.scope, name).to.be.a('string');
        expect(spec.scope === 'public', `${name}: public iff auth none`).to.equal(spec.auth === 'none');
        const rule = KIND_RULES.find((r) => r.matches(spec, path));
        expect(rule, `${name}: no rule says which scope it needs: add one to KIND_RULES`).to.exist;
        expect(spec.scope, `${name} (${rule!.name})`).to.equal(rule!.scope);
      }
    });
  }

  it('requireScope refuses a key without the scope with 403 insufficient_scope naming it, and lets anything through a key without scopes', () => {
    for (const needed of SCOPES) {
      const others = SCOPES.filter((s) => s !== needed);
      let err: unknown;
      try {
        requireScope({ scopes: others }, needed);
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(AppError);
      expect((err as AppError).status).to.equal(403);
      expect((err as AppError).code).to.equal('insufficient_scope');
      expect((err as AppError).message).to.include(needed);
      expect(() => requireScope({ scopes: [needed] }, needed)).not.to.throw();
      expect(() => requireScope({ scopes: null }, needed)).not.to.throw();
    }
    expect(() => requireScope({ scopes: ['read'] }, 'any_key')).not.to.throw();
    expect(() => requireScope({ scopes: ['read'] }, 'public')).not.to.throw();
  });

  it('a child only narrows: no scope its parent lacks, its parent’s limits when it asks none', () => {
    expect(() => narrowLimits({ scopes: ['read'], conversationIds: null }, { scopes: ['read', 'messages:write'] })).to.throw(/messages:write/);
    expect(narrowLimits({ scopes: ['read', 'events'], conversationIds: ['c1'] }, {})).to.deep.equal({ scopes: ['read', 'events'], conversationIds: ['c1'] });
    expect(narrowLimits({ scopes: null, conversationIds: null }, { scopes: ['events', 'read'] })).to.deep.equal({ scopes: ['read', 'events'], conversationIds: null });
    expect(narrowLimits({ scopes: ['read', 'events'], conversationIds: null }, { scopes: ['events'] }).scopes).to.deep.equal(['events']);
  });

  it('an event about another conversation does not reach a key limited to one, wherever the event names it', () => {
    const key = { conversationIds: ['mine'] };
    const ws = { scope: 'workspace', workspace_id: 'w' };
    const about = (id: string) => [
      { to: { scope: 'channel', workspace_id: 'w', channel_id: id }, data: {} },
      { to: ws, data: { channel: { id } } },
      { to: ws, data: { conversation: { id } } },
      { to: { scope: 'users', workspace_id: 'w', user_ids: ['u'] }, data: { channel_id: id } },
      { to: ws, data: { message: { channel_id: id } } },
    ];
    for (const event of about('other')) expect(reachesEvent(key, event), JSON.stringify(event)).to.equal(false);
    for (const event of about('mine')) expect(reachesEvent(key, event), JSON.stringify(event)).to.equal(true);
    expect(reachesEvent(key, { to: ws, data: { user: { id: 'u' } } })).to.equal(true); // about no conversation
    for (const event of about('other')) expect(reachesEvent({ conversationIds: null }, event)).to.equal(true);
  });
});
