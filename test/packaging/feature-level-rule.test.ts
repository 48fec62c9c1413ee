// The feature level is asked one way (shared/feature-level.ts): a capability's
// levels are a LevelSpan declared beside what it governs, asked through
// `existsAt`, so no server code compares the level with a number or writes a
// span where it asks. The web app and the MCP package read a server's level
// from its header and are left out.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLIENTS = [path.join('services', 'web'), path.join('services', 'mcp')];
// A level on either side of a comparison with a number: `level >= 3`, `config.featureLevel < 3`, `3 <= routes.level`
// (a markdown token's `token.level` is not the feature level).
const LEVEL = String.raw`(?:(?<![\w.])level|\b(?:routes|this)\.level|\bfeatureLevel)\b`;
const OPERATOR = String.raw`\s*(?:>=|<=|>|<|===|!==|==|!=)\s*`;
const COMPARISON = new RegExp(String.raw`${LEVEL}${OPERATOR}\d|\d${OPERATOR}[\w.]*${LEVEL}`);
/** A span written where it is asked (`existsAt({ since: 3 }, level)`) has no name to find it by. */
const UNNAMED_SPAN = /existsAt\(\s*\{/;

function sources(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'dist' || CLIENTS.includes(rel) ? [] : sources(rel);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts') ? [rel] : [];
  });
}

describe('the feature level', () => {
  it('is never compared with a number in server code: each decision is a named span asked through existsAt', () => {
    const files = [...sources('services'), ...sources('shared')];
    expect(files.length).to.be.greaterThan(100);
    const found = files.flatMap((file) =>
      readFileSync(path.join(root, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (COMPARISON.test(line) || UNNAMED_SPAN.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).to.deep.equal([]);
  });

  it('would find each way of writing such a comparison, and a span written where it is asked', () => {
    for (const line of ['if (config.featureLevel >= 3) start()', '...(routes.level >= 3 ? {} : {})', 'level === 2', '3 <= rt.config.featureLevel', 'if (level<3)']) {
      expect(COMPARISON.test(line), line).to.equal(true);
    }
    expect(UNNAMED_SPAN.test('roles.has(\'worker\') && existsAt({ since: 3 }, config.featureLevel)')).to.equal(true);
    expect(UNNAMED_SPAN.test('existsAt(EVENT_SUBSCRIPTIONS, config.featureLevel)')).to.equal(false);
    for (const line of ['existsAt(KEY_SCOPES, level)', 'if (token.level === 0) open()', 'logLevel: "info"']) expect(COMPARISON.test(line), line).to.equal(false);
  });
});
