// The OpenAPI 3.1 document, generated from the very route specs and zod
// schemas the API validates with: nothing is written twice.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ERROR_SINCE, ERROR_STATUS, type ErrorCode } from '../../shared/errors.js';
import { KEY_SCOPES, STREAM_SCOPE } from '../../shared/scopes.js';
import { namedSchemas, schemaName } from '../../shared/http/responses.js';
import { RouteTable, type RouteSpec } from '../../shared/http/route.js';
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_TTL_HOURS, REPLAYED_HEADER } from '../../shared/http/idempotency.js';
import { DEFAULT_FEATURE_LEVEL, existsAt, fieldsAbsentAt, type FeatureLevel } from '../../shared/feature-level.js';

type JsonSchema = Record<string, unknown>;

const toSchema = (schema: z.ZodType): JsonSchema => {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  delete json.$schema;
  return json;
};

function parameters(schema: z.ZodType | undefined, where: 'path' | 'query') {
  if (!schema) return [];
  const json = toSchema(schema) as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || (json.required ?? []).includes(name),
    schema: s,
  }));
}

const SCHEMAS = '#/components/schemas/';
const ref = (name: string) => ({ $ref: `${SCHEMAS}${name}` });
const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** The header of the create routes that honour it (shared/http/idempotency.ts; only in documents of its levels). */
const IDEMPOTENCY_PARAMETER = {
  name: IDEMPOTENCY_HEADER,
  in: 'header',
  required: false,
  description: `1 to 255 printable ASCII characters. Repeating a key (per caller, within ${IDEMPOTENCY_TTL_HOURS} h) with the same body answers the first status and body again with \`${REPLAYED_HEADER}: true\` and creates nothing; with another body: 422 \`idempotency_key_reused\`; while the first request runs: 409 \`idempotency_in_progress\`.`,
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
};

const SERVICE_HEADERS = {
  'X-Service-Feature-Level': headerRef('FeatureLevel'),
  'X-RateLimit-Limit': headerRef('RateLimitLimit'),
  'X-RateLimit-Remaining': headerRef('RateLimitRemaining'),
  'X-RateLimit-Reset': headerRef('RateLimitReset'),
};

/** Every tag, in the order the reference page shows them. */
const TAGS = [
  { name: 'Workspace', description: 'The workspace of the API key, its settings and members' },
  { name: 'Users and agents', description: 'People and AI agents; creating one returns its first API key once' },
  { name: 'API keys', description: "The caller's own keys" },
  { name: 'Sign-in', description: 'Invites, passwords, single sign-on and one-time codes, each ending in an ordinary API key (feature level 3)' },
  { name: 'Channels', description: 'Public and private channels and their members' },
  { name: 'Messages', description: 'Messages, threads and reactions in a channel' },
  { name: 'Direct messages', description: 'Conversations between 2 to 9 users, and their messages' },
  { name: 'Interactions', description: 'Button actions on message cards' },
  { name: 'Agents', description: "An agent's working status and ephemeral messages in a conversation (feature level 3)" },
  { name: 'Commands', description: "Agents' slash commands: declared by each agent, invoked in a conversation the agent is in (feature level 3)" },
  { name: 'Files', description: 'Uploads, checked by the worker, and their download addresses' },
  { name: 'Imports', description: "Moving in from Slack: a Slack export imported by the worker (feature level 3; `npm run import:slack` at any level)" },
  { name: 'Webhooks', description: 'Incoming webhooks: managing them with a key, posting to them without one' },
  { name: 'Audit log', description: 'Security-relevant actions of the workspace, for owners and admins (docs/operations.md)' },
  { name: 'OAuth', description: "MCP clients' authorization requests, answered by a person on the web app's consent screen (feature level 3; docs/mcp.md)" },
  { name: 'Stream', description: 'Server-sent events, served by the gateway role' },
  { name: 'Reference', description: 'This document and its reference page' },
];

/**
 * Errors every route may answer, and the ones its declaration implies; the
 * route's own `errors` add the rest. The response check (test/support/
 * openapi-responses.ts) fails on any status a route answers that is not listed.
 */
function impliedErrors(spec: RouteSpec, level: FeatureLevel): ErrorCode[] {
  const codes: ErrorCode[] = [];
  if ((spec.auth ?? 'key') === 'key') codes.push('unauthorized', 'key_expired');
  // A scoped key without the route's scope (shared/scopes.ts), where keys have scopes.
  if (level >= (ERROR_SINCE.insufficient_scope ?? 2) && spec.scope !== 'public' && spec.scope !== 'any_key') codes.push('insufficient_scope');
  if (spec.params || spec.query || spec.body) codes.push('validation_error');
  if (spec.params) codes.push('not_found');
  // A body of another media type reads as {} and fails validation (400); an
  // upload (rawBody) names its own errors.
  if (spec.body && !spec.rawBody) codes.push('payload_too_large');
  // A Content-Encoding the route does not decode (shared/http/route.ts).
  if (spec.body) codes.push('unsupported_media_type');
  codes.push('rate_limited', 'internal_error', 'service_unavailable');
  return codes;
}

/**
 * An operation's error responses by status, each a `$ref` to a shared one in
 * `components.responses` named after its codes (`UnauthorizedOrKeyExpired`),
 * which `shared` collects.
 */
function errorResponses(codes: ErrorCode[], shared: Map<string, JsonSchema>) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  return Object.fromEntries(
    [...byStatus.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, list]) => {
        const name = list.map((c) => c.replace(/(?:^|_)(.)/g, (_, ch: string) => ch.toUpperCase())).join('Or');
        shared.set(name, {
          description: `Error with code ${list.map((c) => `\`${c}\``).join(' or ')}`,
          // The codes in machine-readable form: the response check holds answers to them.
          'x-error-codes': list,
          headers: SERVICE_HEADERS,
          content: { 'application/json': { schema: ref('Error') } },
        });
        return [String(status), { $ref: `#/components/responses/${name}` }];
      }),
  );
}

const successStatuses = (spec: RouteSpec) =>
  spec.succeeds === false ? [] : [spec.status ?? (spec.response || spec.produces ? 200 : 204), ...(spec.alsoStatus ?? []), ...(spec.otherResponses ?? []).map((o) => o.status)];

/** Every response body a route declares: its main one and those of otherResponses. */
const responsesOf = (spec: RouteSpec): z.ZodType[] => [...(spec.response ? [spec.response] : []), ...(spec.otherResponses ?? []).map((o) => o.response)];

/** Prose for routes that bring none: who may call, what comes back. */
function describe(spec: RouteSpec, bodies: Map<z.ZodType, JsonSchema>): string {
  const who = (spec.auth ?? 'key') === 'key' ? 'Needs an API key.' : 'Needs no key.';
  if (spec.succeeds === false) return `${spec.summary}. ${who} Answers only errors.`;
  const body = spec.response ? bodies.get(spec.response)! : undefined;
  const data = (body?.properties as JsonSchema | undefined)?.data as JsonSchema | undefined;
  const what = spec.response
    ? ` with ${body?.$ref ? `\`${String(body.$ref).slice(SCHEMAS.length)}\`` : data?.$ref ? `\`{data: ${String(data.$ref).slice(SCHEMAS.length)}}\`` : 'a JSON object'}`
    : spec.produces
      ? ` with ${spec.produces.join(' or ')}`
      : ' with no body';
  const others = (spec.otherResponses ?? []).map((o) => {
    const ref = ((bodies.get(o.response)?.properties as JsonSchema | undefined)?.data as JsonSchema | undefined)?.$ref;
    return `; ${o.status}${ref ? ` with \`{data: ${String(ref).slice(SCHEMAS.length)}}\`` : ''}`;
  });
  if (others.length) return `${spec.summary}. ${who} Answers ${successStatuses(spec).filter((s) => !spec.otherResponses!.some((o) => o.status === s)).join(' or ')}${what}${others.join('')}.`;
  return `${spec.summary}. ${who} Answers ${successStatuses(spec).join(' or ')}${what}.`;
}

function operation(spec: RouteSpec, fullPath: string, bodies: Map<z.ZodType, JsonSchema>, errors: Map<string, JsonSchema>, level: FeatureLevel) {
  const success: Record<string, unknown> = {};
  for (const status of successStatuses(spec)) {
    const response = spec.otherResponses?.find((o) => o.status === status)?.response ?? spec.response;
    const content = response
      ? { 'application/json': { schema: bodies.get(response) } }
      : spec.produces
        ? Object.fromEntries(spec.produces.map((type) => [type, { schema: { type: 'string' } }]))
        : undefined;
    const headers = spec.idempotent ? { ...SERVICE_HEADERS, [REPLAYED_HEADER]: headerRef('IdempotentReplayed') } : SERVICE_HEADERS;
    success[String(status)] = { description: status === 201 ? 'Created' : content ? 'Success' : 'Done', headers, ...(content ? { content } : {}) };
  }
  const bodyContent: Record<string, unknown> = {};
  if (spec.body) {
    if (spec.rawBody) {
      const fields = Object.entries(spec.multipartFields ?? { file: 'binary' }).map(([name, kind]) => [name, kind === 'binary' ? { type: 'string', format: 'binary' } : { type: 'string' }]);
      bodyContent['multipart/form-data'] = { schema: { type: 'object', properties: Object.fromEntries(fields) } };
    }
    else {
      bodyContent['application/json'] = { schema: toSchema(spec.body) };
      if (spec.form) bodyContent['application/x-www-form-urlencoded'] = { schema: { type: 'object', properties: { payload: { type: 'string' } } } };
    }
  }
  return {
    summary: spec.summary,
    description: spec.description ?? describe(spec, bodies),
    tags: [spec.tag],
    operationId: `${spec.method}${fullPath.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    security: (spec.auth ?? 'key') === 'key' ? [{ bearer: [] }] : [],
    // The scope a key needs (shared/http/route.ts `scope`), where keys have scopes.
    ...(existsAt(KEY_SCOPES, level) && spec.scope !== 'public' ? { 'x-scope': spec.scope } : {}),
    parameters: [...parameters(spec.params, 'path'), ...parameters(spec.query, 'query'), ...(spec.idempotent ? [IDEMPOTENCY_PARAMETER] : [])],
    ...(spec.body ? { requestBody: { required: true, content: bodyContent } } : {}),
    responses: { ...success, ...errorResponses([...impliedErrors(spec, level), ...(spec.errors ?? [])], errors) },
  };
}

/**
 * The named response schemas (shared/http/responses.ts) as `components.schemas`,
 * and each route's response body as JSON Schema referring to them. One zod
 * registry converts them together, so a named schema inside a body becomes a `$ref`.
 */
function responseSchemas(specs: RouteSpec[], level: FeatureLevel) {
  const registry = z.registry<{ id: string }>();
  for (const [name, schema] of namedSchemas) registry.add(schema, { id: name });
  const inline = new Map<z.ZodType, string>();
  for (const response of specs.flatMap(responsesOf)) {
    if (schemaName(response) || inline.has(response)) continue;
    const id = `~body${inline.size}`;
    inline.set(response, id);
    registry.add(response, { id });
  }
  const { schemas } = z.toJSONSchema(registry, {
    io: 'output',
    target: 'draft-2020-12',
    unrepresentable: 'any',
    uri: (id) => `${SCHEMAS}${id}`,
    // Presenters hand Date objects to JSON.stringify, which writes ISO 8601 strings.
    override: (ctx) => {
      if (ctx.zodSchema._zod.def.type === 'date') {
        ctx.jsonSchema.type = 'string';
        ctx.jsonSchema.format = 'date-time';
      }
      // Fields of another feature level (shared/feature-level.ts fromLevel) are not in this level's document.
      if (ctx.zodSchema instanceof z.ZodObject) {
        const properties = ctx.jsonSchema.properties as JsonSchema | undefined;
        for (const name of fieldsAbsentAt(ctx.zodSchema.shape, level)) {
          delete properties?.[name];
          ctx.jsonSchema.required = (ctx.jsonSchema.required as string[] | undefined)?.filter((r) => r !== name);
        }
      }
    },
  }) as { schemas: Record<string, JsonSchema> };
  for (const json of Object.values(schemas)) {
    delete json.$schema;
    delete json.$id;
  }
  const bodies = new Map<z.ZodType, JsonSchema>();
  for (const response of specs.flatMap(responsesOf)) {
    const name = schemaName(response);
    bodies.set(response, name ? ref(name) : schemas[inline.get(response)!]!);
  }
  // Error codes of a later level are not this level's.
  const codeEnum = (schemas.Error as any)?.properties?.error?.properties?.code; // eslint-disable-line @typescript-eslint/no-explicit-any
  if (codeEnum?.enum) codeEnum.enum = (codeEnum.enum as ErrorCode[]).filter((code) => (ERROR_SINCE[code] ?? 2) <= level);
  // Only the schemas this level's routes refer to (a level-3 object is no component of the level-2 document).
  const used = new Set<string>();
  const visit = (json: unknown): void => {
    if (Array.isArray(json)) return json.forEach(visit);
    if (!json || typeof json !== 'object') return;
    const target = (json as { $ref?: unknown }).$ref;
    if (typeof target === 'string' && target.startsWith(SCHEMAS)) {
      const id = target.slice(SCHEMAS.length);
      if (!used.has(id)) {
        used.add(id);
        visit(schemas[id]);
      }
    }
    Object.values(json).forEach(visit);
  };
  visit([...bodies.values(), ref('Error'), ref('Pagination')]);
  const components = Object.fromEntries(
    Object.keys(schemas)
      .filter((id) => !id.startsWith('~') && used.has(id))
      .sort()
      .map((id) => [id, schemas[id]!]),
  );
  return { bodies, components };
}

/** The document, built from the route tables alone (no server, no config): the same bytes every time. */
/** The document of the routes in `tables`, which hold the routes of one feature level. */
export function buildOpenApi(tables: RouteTable[]) {
  const level = tables[0]?.level ?? DEFAULT_FEATURE_LEVEL;
  const specs = tables.flatMap((table) => table.specs);
  const { bodies, components } = responseSchemas(specs, level);
  const errors = new Map<string, JsonSchema>();
  const paths: Record<string, Record<string, unknown>> = {};
  for (const table of tables) {
    for (const spec of table.specs) {
      const fullPath = table.prefix + spec.path;
      (paths[fullPath] ??= {})[spec.method] = operation(spec, fullPath, bodies, errors, level);
    }
  }
  paths['/api/v1/stream'] = {
    get: {
      summary: 'Server-sent events stream',
      description: 'Served by the gateway role. Needs an API key. Answers 200 with text/event-stream: an `init` event first, then events as they happen. At most `STREAM_MAX_PER_USER` open streams per user per gateway process: past it, 429 `too_many_streams`.',
      tags: ['Stream'],
      operationId: 'getApiV1Stream',
      security: [{ bearer: [] }],
      ...(existsAt(KEY_SCOPES, level) ? { 'x-scope': STREAM_SCOPE } : {}),
      responses: {
        '200': { description: 'The event stream', headers: SERVICE_HEADERS, content: { 'text/event-stream': { schema: { type: 'string' } } } },
        ...errorResponses(
          (['unauthorized', 'key_expired', 'insufficient_scope', 'rate_limited', 'too_many_streams', 'internal_error', 'service_unavailable'] as const).filter(
            (code) => (ERROR_SINCE[code] ?? 2) <= level,
          ),
          errors,
        ),
      },
    },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Axid API',
      version: `feature-level-${level}`,
      description: 'Workspace chat for people and AI agents. Every response carries `X-Service-Feature-Level`.',
    },
    // Relative: the page at /docs and generated clients call the host that served the document.
    servers: [{ url: '/', description: 'The host serving this document' }],
    // Only tags with operations at this level (Sign-in is level 3's).
    tags: TAGS.filter((tag) => Object.values(paths).some((ops) => Object.values(ops).some((op) => (op as { tags: string[] }).tags.includes(tag.name)))),
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An Axid API key' } },
      headers: {
        FeatureLevel: { schema: { type: 'integer' }, description: `Monotonically increasing feature level (currently ${level})` },
        RateLimitLimit: { schema: { type: 'integer' }, description: 'Requests allowed per window' },
        RateLimitRemaining: { schema: { type: 'integer' }, description: 'Requests left in the current window' },
        RateLimitReset: { schema: { type: 'integer' }, description: 'Unix time (seconds) when the window resets' },
        ...(specs.some((spec) => spec.idempotent)
          ? { IdempotentReplayed: { schema: { type: 'string', enum: ['true'] }, description: `\`true\` on the answer to a repeated \`${IDEMPOTENCY_HEADER}\`: the first answer, replayed` } }
          : {}),
      },
      schemas: components,
      responses: Object.fromEntries([...errors.keys()].sort().map((name) => [name, errors.get(name)!])),
    },
  };
}

/** Any OpenAPI document: an object with its version. */
const OpenApiDocument = z.looseObject({ openapi: z.string() });

const require = createRequire(import.meta.url);
const swaggerDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const DOCS_ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
};

const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Axid API reference</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script>
</body></html>`;

// validatorUrl null: the page loads nothing from other hosts.
const DOCS_INIT = `window.ui = SwaggerUIBundle({ url: '/api/v1/openapi.json', dom_id: '#ui', validatorUrl: null, deepLinking: true });`;

/** `/api/v1/openapi.json` and the `/docs` reference page, served from npm packages. */
export function docsRoutes(tables: RouteTable[], router: RouteTable['router'], level: FeatureLevel): RouteTable {
  const docs = new RouteTable('', router, level);
  let cached: ReturnType<typeof buildOpenApi> | null = null;
  const assets = new Map<string, Buffer>();
  docs
    .add(
      {
        method: 'get',
        path: '/api/v1/openapi.json',
        scope: 'public',
        summary: 'This OpenAPI 3.1 document',
        description: 'This document, built from the route declarations the API validates and answers with. Needs no key. Answers 200 with the document.',
        tag: 'Reference',
        auth: 'none',
        response: OpenApiDocument,
      },
      () => (cached ??= buildOpenApi([...tables, docs])),
    )
    .add({ method: 'get', path: '/docs', scope: 'public', summary: 'API reference page', tag: 'Reference', auth: 'none', produces: ['text/html'] }, ({ ctx }) => {
      ctx.type = 'text/html; charset=utf-8';
      // Never framed (clickjacking): CSP for current browsers, X-Frame-Options for older ones.
      ctx.set('Content-Security-Policy', "frame-ancestors 'none'");
      ctx.set('X-Frame-Options', 'DENY');
      return DOCS_PAGE;
    })
    .add(
      {
        method: 'get',
        path: '/docs/assets/{asset}',
        scope: 'public',
        summary: 'Reference page assets',
        tag: 'Reference',
        auth: 'none',
        params: z.object({ asset: z.string() }),
        produces: ['text/css', 'application/javascript'],
      },
      ({ ctx, params }) => {
        if (params.asset === 'init.js') {
          ctx.type = 'application/javascript; charset=utf-8';
          return DOCS_INIT;
        }
        const type = DOCS_ASSETS[params.asset];
        if (!type) {
          ctx.status = 404;
          return { error: { code: 'not_found', message: 'no such asset' } };
        }
        if (!assets.has(params.asset)) assets.set(params.asset, readFileSync(path.join(swaggerDir, params.asset)));
        ctx.type = type;
        ctx.set('Cache-Control', 'public, max-age=86400');
        return assets.get(params.asset);
      },
    );
  return docs;
}
