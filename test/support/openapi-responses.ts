// The response check: every response the suite received through the test
// client (test/support/client.ts records them) must be listed by the OpenAPI
// document under its operation and status, with a body matching the schema.
// Run by the root hooks (test/support/hooks.ts) after every test file.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { buildOpenApi } from '../../services/api/openapi.js';
import { apiRoutes } from '../../services/api/routes.js';
import type { FeatureLevel } from '../../shared/feature-level.js';
import type { RecordedResponse } from './client.js';

type Response = { $ref?: string; content?: Record<string, { schema: object }>; 'x-error-codes'?: string[] };
type Operation = { responses: Record<string, Response> };

/**
 * Problems found, one line each (at most one per operation, status and kind of
 * mismatch); empty when all match. Each response is checked against the
 * document of the feature level that answered it.
 */
export function checkResponses(recorded: RecordedResponse[]): { checked: number; problems: string[] } {
  const byLevel = new Map<number, RecordedResponse[]>();
  for (const r of recorded) {
    if (!byLevel.has(r.level)) byLevel.set(r.level, []);
    byLevel.get(r.level)!.push(r);
  }
  let checked = 0;
  const problems: string[] = [];
  for (const [level, responses] of byLevel) {
    const result = checkLevel(level as FeatureLevel, responses);
    checked += result.checked;
    problems.push(...result.problems.map((p) => (level === 2 ? p : `(level ${level}) ${p}`)));
  }
  return { checked, problems };
}

function checkLevel(level: FeatureLevel, recorded: RecordedResponse[]): { checked: number; problems: string[] } {
  const doc = buildOpenApi(apiRoutes(level).tables) as unknown as {
    paths: Record<string, Record<string, Operation>>;
    components: { responses: Record<string, Response> };
  };
  // Error responses are shared: `$ref: #/components/responses/<name>`.
  const resolve = (r: Response | undefined) => (r?.$ref ? doc.components.responses[r.$ref.split('/').pop()!] : r);
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  const templates = Object.keys(doc.paths).map((template) => ({
    template,
    re: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    params: (template.match(/\{/g) ?? []).length,
  }));
  const validators = new Map<string, ReturnType<typeof ajv.compile>>();
  const problems = new Set<string>();
  let checked = 0;
  for (const r of recorded) {
    // The most specific template wins (/users/me before /users/{user_id}).
    const match = templates.filter((t) => t.re.test(r.path)).sort((a, b) => a.params - b.params)[0];
    const op = match && doc.paths[match.template]![r.method.toLowerCase()];
    if (!op) continue; // unknown routes answer 404 by design; they are not in the document
    const documented = resolve(op.responses[String(r.status)]);
    if (!documented) {
      problems.add(`${r.method} ${match.template} → ${r.status} is not listed`);
      continue;
    }
    const mediaType = r.contentType.split(';')[0]!.trim();
    if (!documented.content) {
      if (r.body !== undefined) problems.add(`${r.method} ${match.template} → ${r.status} has a body the document does not describe`);
      continue;
    }
    if (!(mediaType in documented.content)) {
      problems.add(`${r.method} ${match.template} → ${r.status} is ${mediaType}, documented as ${Object.keys(documented.content).join(', ')}`);
      continue;
    }
    if (r.body === undefined) continue; // not JSON (or empty): the media type was checked
    const key = `${r.method} ${match.template} → ${r.status}`;
    let validate = validators.get(key);
    if (!validate) {
      validate = ajv.compile({ ...documented.content[mediaType]!.schema, components: doc.components });
      validators.set(key, validate);
    }
    checked++;
    if (!validate(r.body)) problems.add(`${key}: ${ajv.errorsText(validate.errors)}`);
    const code = (r.body as { error?: { code?: string } }).error?.code;
    const codes = documented['x-error-codes'];
    if (codes && code !== undefined && !codes.includes(code)) problems.add(`${key}: code ${code} is not listed (${codes.join(', ')})`);
  }
  return { checked, problems: [...problems] };
}
