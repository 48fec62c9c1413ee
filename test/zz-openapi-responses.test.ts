// Runs last (file order): every response the suite received through the test
// client must be documented by the OpenAPI document and match its schema.
import { expect } from 'chai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Client, recordedResponses } from './support/client.js';
import { newWorkspace, stack } from './support/stack.js';

type Operation = { responses: Record<string, { content?: Record<string, { schema: object }> }> };
type Doc = { paths: Record<string, Record<string, Operation>>; components: object };

describe('responses the suite received', () => {
  it('are each documented by the OpenAPI document, with bodies that match it', async () => {
    // A few of our own, so this holds when the file runs alone too.
    const ws = await newWorkspace();
    await ws.owner.get('/api/v1/users/me');
    await ws.owner.get('/api/v1/users?limit=1');
    await ws.owner.post('/api/v1/users', {});

    const doc: Doc = (await new Client(stack().url).get('/api/v1/openapi.json')).body;
    const ajv = new Ajv2020({ strict: false, allErrors: false });
    const templates = Object.keys(doc.paths).map((template) => ({
      template,
      re: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
      params: (template.match(/\{/g) ?? []).length,
    }));
    const validators = new Map<string, ReturnType<typeof ajv.compile>>();
    const problems: string[] = [];
    let checked = 0;

    for (const r of recordedResponses) {
      if (r.path === '/api/v1/openapi.json') continue;
      // The most specific template wins (/users/me before /users/{user_id}).
      const match = templates.filter((t) => t.re.test(r.path)).sort((a, b) => a.params - b.params)[0];
      const op = match && doc.paths[match.template]![r.method.toLowerCase()];
      if (!op) continue; // unknown routes answer 404 by design; they are not in the document
      const documented = op.responses[String(r.status)];
      if (!documented) {
        problems.push(`${r.method} ${match.template} → ${r.status} is not documented`);
        continue;
      }
      const schema = r.contentType.includes('json') ? documented.content?.['application/json']?.schema : undefined;
      if (!schema || r.body === undefined) continue;
      const key = `${match.template} ${r.method} ${r.status}`;
      let validate = validators.get(key);
      if (!validate) {
        validate = ajv.compile({ ...schema, components: doc.components });
        validators.set(key, validate);
      }
      checked++;
      if (!validate(r.body)) problems.push(`${key}: ${ajv.errorsText(validate.errors)}`);
    }
    expect(checked).to.be.greaterThan(2);
    expect([...new Set(problems)], [...new Set(problems)].slice(0, 20).join('\n')).to.deep.equal([]);
  });
});
