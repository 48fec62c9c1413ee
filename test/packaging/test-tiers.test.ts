// The tests stay in their tiers (README.md, "Tests"): every test file is in a
// tier folder, each tier has its script, and unit tests start nothing.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const testDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TIERS = ['unit', 'api', 'processes', 'packaging', 'web'];

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : testFiles(full);
    return e.name.endsWith('.test.ts') ? [path.relative(testDir, full)] : [];
  });
}

describe('test tiers', () => {
  it('keeps every test file in a tier folder', () => {
    const outside = testFiles(testDir).filter((f) => !TIERS.includes(f.split(path.sep)[0] as string));
    expect(outside, `test files outside ${TIERS.map((t) => `test/${t}/`).join(', ')}`).to.deep.equal([]);
  });

  it('runs each tier alone with npm run test:<tier>, and all of them with npm test', () => {
    const scripts = (JSON.parse(readFileSync(path.join(testDir, '..', 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    for (const tier of TIERS) expect(scripts[`test:${tier}`], `test:${tier}`).to.equal(`mocha 'test/${tier}/**/*.test.ts'`);
    expect(scripts.test).to.match(/^npm run typecheck && npm run depcheck && mocha 'test\/\*\*\/\*\.test\.ts'$/);
  });

  it('gives unit tests nothing that starts a stack, a process or a server', () => {
    const unit = testFiles(path.join(testDir, 'unit'));
    expect(unit.length).to.be.greaterThan(0);
    for (const file of unit) {
      const text = readFileSync(path.join(testDir, file), 'utf8');
      // Type-only imports load nothing.
      const imports = [...text.matchAll(/^(?:import|export)(?!\s+type\b)\b[^;]*?from '([^']+)'/gm)].map((m) => m[1] as string);
      const starters = imports.filter((i) => /\/support\/|services\/stack|shared\/embedded|node:(child_process|net|http)|^(pg|ioredis|knex)$/.test(i));
      expect(starters, `test/${file} imports`).to.deep.equal([]);
    }
  });
});
