// The rooms rule (.dependency-cruiser.cjs, docs/architecture.md): the code
// base keeps it, and each rule fails on a tree that breaks it.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.join(repoRoot, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const CONFIG = path.join(repoRoot, '.dependency-cruiser.cjs');

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
  cycle?: { name: string }[];
}

interface Cruise {
  modules: { source: string; dependencies: { resolved: string; dynamic: boolean }[] }[];
  summary: { violations: Violation[] };
}

function cruiseAll(cwd: string): Cruise {
  const run = spawnSync(process.execPath, [CLI, 'services', 'shared', '--config', CONFIG, '--output-type', 'json'], { cwd, encoding: 'utf8' });
  if (!run.stdout) throw new Error(`depcruise produced nothing: ${run.stderr}`);
  return JSON.parse(run.stdout) as Cruise;
}

const cruise = (cwd: string) => cruiseAll(cwd).summary.violations;

/** The packages a module loads when imported: static imports followed, dynamic ones left out (types are not in the graph). */
function packagesLoadedBy(graph: Cruise, entry: string): string[] {
  const bySource = new Map(graph.modules.map((m) => [m.source, m]));
  const seen = new Set<string>();
  const packages = new Set<string>();
  const visit = (source: string) => {
    if (seen.has(source)) return;
    seen.add(source);
    for (const d of bySource.get(source)?.dependencies ?? []) {
      if (d.dynamic) continue;
      const pkg = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(d.resolved);
      if (pkg) packages.add(pkg[1]!);
      else visit(d.resolved);
    }
  };
  visit(entry);
  return [...packages].sort();
}

describe('architecture rules (dependency-cruiser)', function () {
  this.timeout(60_000);

  it('holds for the code base', function () {
    const violations = cruise(repoRoot);
    expect(violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`)).to.deep.equal([]);
  });

  it('loads the roles lazily: a gateway-only process loads neither sharp nor BullMQ, a worker both', function () {
    const graph = cruiseAll(repoRoot);
    // services/main.ts imports the stack once tracing is started (or not), and
    // ROLES=gateway loads the stack, then imports the gateway (services/stack.ts).
    const main = packagesLoadedBy(graph, 'services/stack.ts');
    expect(main).to.include.members(['koa', 'ioredis', 'knex']);
    const gateway = packagesLoadedBy(graph, 'services/gateway/gateway.ts');
    for (const heavy of ['sharp', 'bullmq']) {
      expect(main, 'services/main.ts').not.to.include(heavy);
      expect(gateway, 'services/gateway/gateway.ts').not.to.include(heavy);
    }
    expect(packagesLoadedBy(graph, 'services/worker/worker.ts')).to.include.members(['sharp', 'bullmq']);
  });

  it('loads nothing of OpenTelemetry unless traces are asked for: only shared/tracing.ts imports the SDK module, dynamically', function () {
    const graph = cruiseAll(repoRoot);
    const isOtel = (resolved: string) => resolved.startsWith('node_modules/@opentelemetry/');
    // What every role loads at start: the entrypoint, the stack and each role's module.
    for (const entry of ['services/main.ts', 'services/stack.ts', 'services/gateway/gateway.ts', 'services/worker/worker.ts', 'services/worker/event-deliveries.ts', 'services/api/routes.ts']) {
      expect(packagesLoadedBy(graph, entry).filter((p) => p.startsWith('@opentelemetry/')), entry).to.deep.equal([]);
    }
    // No module of ours imports OpenTelemetry statically, and only the SDK module imports it at all.
    const importers = (test: (resolved: string) => boolean) =>
      graph.modules.filter((m) => m.dependencies.some((d) => test(d.resolved))).map((m) => ({ source: m.source, dynamic: m.dependencies.filter((d) => test(d.resolved)).every((d) => d.dynamic) }));
    expect(importers(isOtel)).to.deep.equal([{ source: 'shared/tracing-sdk.ts', dynamic: true }]);
    expect(importers((r) => r === 'shared/tracing-sdk.ts')).to.deep.equal([{ source: 'shared/tracing.ts', dynamic: true }]);
  });

  it('reports a role importing another role, core importing a role, shared importing a service, a role importing the composition and a cycle', function () {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'axid-depcruise-'));
    try {
      const files: Record<string, string> = {
        'services/stack.ts': `export const stack = 1;\n`,
        'services/gateway/gateway.ts': `export const gateway = 1;\n`,
        'services/api/routes.ts': `import { gateway } from '../gateway/gateway.js';\nexport const routes = gateway;\n`,
        'services/core/users/users.service.ts': `import { routes } from '../../api/routes.js';\nexport const users = routes;\n`,
        'services/worker/worker.ts': `import { stack } from '../stack.js';\nexport const worker = stack;\n`,
        'shared/config.ts': `import { users } from '../services/core/users/users.service.js';\nexport const config = users;\n`,
        'services/core/a/a.store.ts': `import { b } from '../b/b.store.js';\nexport const a = () => b();\n`,
        'services/core/b/b.store.ts': `import { a } from '../a/a.store.js';\nexport const b = () => a();\n`,
        // A cycle through type-only imports loads nothing twice: allowed.
        'shared/x.ts': `import type { Y } from './y.js';\nexport interface X { y?: Y }\n`,
        'shared/y.ts': `import type { X } from './x.js';\nexport interface Y { x?: X }\n`,
      };
      for (const [file, text] of Object.entries(files)) {
        mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        writeFileSync(path.join(dir, file), text);
      }
      const found = cruise(dir).map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
      expect(found).to.include.members([
        'no-role-imports-another-role: services/api/routes.ts → services/gateway/gateway.ts',
        'core-imports-no-role: services/core/users/users.service.ts → services/api/routes.ts',
        'no-role-imports-the-composition: services/worker/worker.ts → services/stack.ts',
        'shared-imports-no-service: shared/config.ts → services/core/users/users.service.ts',
        'no-cycles: services/core/a/a.store.ts → services/core/b/b.store.ts',
      ]);
      expect(found.filter((v) => v.includes('shared/x.ts') || v.includes('shared/y.ts'))).to.deep.equal([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
