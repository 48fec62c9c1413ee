// Spectral's `oas` ruleset on the served document: no errors, no warnings
// beyond the rules .spectral.yaml turns off (each with its reason there).
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { Document, Spectral } from '@stoplight/spectral-core';
// A CommonJS package whose named exports Node's ES module loader cannot see (tests run as ES modules: .mocharc.json).
import spectralParsers from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import { parse } from 'yaml';
import { Client } from '../support/client.js';
import { stack } from '../support/stack.js';

const { Json } = spectralParsers;

/** .spectral.yaml as a ruleset object: it extends `spectral:oas` and turns rules off. */
function committedRuleset() {
  const file = parse(readFileSync(new URL('../../.spectral.yaml', import.meta.url), 'utf8')) as { extends: string; rules?: Record<string, 'off'> };
  if (file.extends !== 'spectral:oas') throw new Error('.spectral.yaml: this test knows only `extends: spectral:oas`');
  return { extends: [oas], rules: file.rules ?? {} };
}

/** Errors (severity 0) and warnings (1), one line each. */
async function lint(text: string): Promise<string[]> {
  const spectral = new Spectral();
  spectral.setRuleset(committedRuleset() as never);
  const results = await spectral.run(new Document(text, Json, 'openapi.json'));
  return results.filter((r) => r.severity <= 1).map((r) => `${r.code} at ${r.path.join('.')}: ${r.message}`);
}

describe('the OpenAPI document under Spectral', () => {
  let text: string;
  before(async () => {
    text = (await new Client(stack().url).get('/api/v1/openapi.json')).text;
  });

  it('has no errors or warnings from the `oas` ruleset (.spectral.yaml)', async () => {
    const findings = await lint(text);
    expect(findings, findings.slice(0, 20).join('\n')).to.deep.equal([]);
  });

  it('would report an operation without a description or with an undeclared tag (the ruleset runs)', async () => {
    const doc = JSON.parse(text);
    delete doc.paths['/api/v1/users/me'].get.description;
    doc.tags = doc.tags.filter((t: { name: string }) => t.name !== 'Files');
    const findings = await lint(JSON.stringify(doc));
    expect(findings.some((f) => f.startsWith('operation-description at paths./api/v1/users/me.get'))).to.equal(true);
    expect(findings.some((f) => f.startsWith('operation-tag-defined at paths./api/v1/files'))).to.equal(true);
  });
});
