// The rooms of the code base and who may enter which (docs/architecture.md).
// `npm run depcheck` runs it; test/packaging/architecture.test.ts proves each rule fails
// on a violation.
const ROLES = '(api|gateway|worker|mcp|web)';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-role-imports-another-role',
      comment: 'api, gateway, worker, mcp and web share code through services/core and shared/ only',
      severity: 'error',
      from: { path: `^services/${ROLES}/` },
      to: { path: `^services/${ROLES}/`, pathNot: '^services/$1/' },
    },
    {
      name: 'no-role-imports-the-composition',
      comment: 'services/*.ts (stack, app, main) compose the roles; a role never reaches back',
      severity: 'error',
      from: { path: `^services/(${ROLES.slice(1, -1)}|core)/` },
      to: { path: '^services/[^/]+\\.ts$' },
    },
    {
      name: 'core-imports-no-role',
      comment: 'the domain (services/core) is used by the roles, never the other way round',
      severity: 'error',
      from: { path: '^services/core/' },
      to: { path: `^services/${ROLES}/` },
    },
    {
      name: 'shared-imports-no-service',
      comment: 'shared/ is plumbing under every service: it imports none of them',
      severity: 'error',
      from: { path: '^shared/' },
      to: { path: '^services/' },
    },
    {
      name: 'no-cycles',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // npm packages stay in the graph as leaves (test/packaging/architecture.test.ts reads which ones a role loads).
    exclude: { path: '^(dist/|services/web/dist/|services/mcp/templates/)' },
    // The graph as it runs: type-only imports are erased, so a cycle of them
    // loads nothing twice. A type import across rooms still fails `tsc -b`:
    // each project references only the rooms it may use (shared, core).
    tsPreCompilationDeps: false,
  },
};
