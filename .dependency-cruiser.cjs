// The rooms of the code base and who may enter which (docs/architecture.md).
// `npm run depcheck` runs it; test/architecture.test.ts proves each rule fails
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
      comment: 'type-only imports are erased at run time, so a cycle of them loads nothing twice',
      severity: 'error',
      from: {},
      to: { circular: true, dependencyTypesNot: ['type-only'], viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist|templates)/' },
    // Type-only imports count too: they couple the rooms as much as values do.
    tsPreCompilationDeps: true,
  },
};
