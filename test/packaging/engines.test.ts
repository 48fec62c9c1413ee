// package.json promises a Node version (engines); every installed package must
// support it too, or `npm install` warns EBADENGINE and the promise is false.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import semver from 'semver';
import { repoRoot } from '../support/stack-process.js';

const readJson = (file: string) => JSON.parse(readFileSync(path.join(repoRoot, file), 'utf8'));

describe('Node versions', () => {
  const ours: string = readJson('package.json').engines.node;
  const oldest = semver.minVersion(ours)!.version;

  it('every package in package-lock.json supports the oldest Node that package.json engines allows', () => {
    const packages: Record<string, { engines?: { node?: string } }> = readJson('package-lock.json').packages;
    const unsupported = Object.entries(packages)
      .filter(([name, p]) => name !== '' && typeof p.engines?.node === 'string' && !semver.satisfies(oldest, p.engines.node))
      .map(([name, p]) => `${name} needs node ${p.engines!.node}`);
    expect(unsupported, `package.json engines says node ${ours}`).to.deep.equal([]);
  });

  it('the README names the same Node version as package.json engines', () => {
    expect(readFileSync(path.join(repoRoot, 'README.md'), 'utf8')).to.include(`Node ${semver.minVersion(ours)!.major}.${semver.minVersion(ours)!.minor}`);
  });
});
