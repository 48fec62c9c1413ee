// The OpenAPI 3.1 document, generated from the very route specs and zod
// schemas the API validates with: nothing is written twice.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ERROR_STATUS } from '../../shared/errors.js';
import { RouteTable, type RouteSpec } from '../../shared/http/route.js';
import { FEATURE_LEVEL } from '../../shared/http/request-context.js';

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

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

const SERVICE_HEADERS = {
  'X-Service-Feature-Level': headerRef('FeatureLevel'),
  'X-RateLimit-Limit': headerRef('RateLimitLimit'),
  'X-RateLimit-Remaining': headerRef('RateLimitRemaining'),
  'X-RateLimit-Reset': headerRef('RateLimitReset'),
};

function operation(spec: RouteSpec, fullPath: string) {
  const json = () => ({
    description: 'Success',
    headers: SERVICE_HEADERS,
    content: fullPath.startsWith('/hooks/compat')
      ? { 'text/plain': { schema: { type: 'string', const: 'ok' } } }
      : { 'application/json': { schema: ref(spec.method === 'get' && isList(spec) ? 'ListEnvelope' : 'DataEnvelope') } },
  });
  const success: Record<string, unknown> = {};
  for (const status of [spec.status ?? (spec.method === 'delete' ? 204 : 200), ...(spec.alsoStatus ?? [])]) {
    success[String(status)] = status === 204 ? { description: 'Done', headers: SERVICE_HEADERS } : json();
  }
  const errors = Object.fromEntries(
    [...new Set(Object.values(ERROR_STATUS))].map((code) => [
      String(code),
      { description: 'Error', headers: SERVICE_HEADERS, content: { 'application/json': { schema: ref('Error') } } },
    ]),
  );
  const bodyContent: Record<string, unknown> = {};
  if (spec.body) {
    if (spec.rawBody) bodyContent['multipart/form-data'] = { schema: { type: 'object', properties: { file: { type: 'string', format: 'binary' } } } };
    else {
      bodyContent['application/json'] = { schema: toSchema(spec.body) };
      if (spec.form) bodyContent['application/x-www-form-urlencoded'] = { schema: { type: 'object', properties: { payload: { type: 'string' } } } };
    }
  }
  return {
    summary: spec.summary,
    tags: [spec.tag],
    operationId: `${spec.method}${fullPath.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    security: (spec.auth ?? 'key') === 'key' ? [{ bearer: [] }] : [],
    parameters: [...parameters(spec.params, 'path'), ...parameters(spec.query, 'query')],
    ...(spec.body ? { requestBody: { required: true, content: bodyContent } } : {}),
    responses: { ...success, ...errors },
  };
}

const isList = (spec: RouteSpec) => {
  const shape = (spec.query as z.ZodObject | undefined)?.shape;
  return Boolean(shape && 'cursor' in shape);
};

export function buildOpenApi(tables: RouteTable[], baseUrl: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const table of tables) {
    for (const spec of table.specs) {
      const fullPath = table.prefix + spec.path;
      (paths[fullPath] ??= {})[spec.method] = operation(spec, fullPath);
    }
  }
  paths['/api/v1/stream'] = {
    get: {
      summary: 'Server-sent events stream (served by the gateway role)',
      tags: ['Stream'],
      operationId: 'getApiV1Stream',
      security: [{ bearer: [] }],
      responses: {
        '200': { description: 'text/event-stream: `init` first, then events', headers: SERVICE_HEADERS, content: { 'text/event-stream': { schema: { type: 'string' } } } },
        '401': { description: 'Error', content: { 'application/json': { schema: ref('Error') } } },
      },
    },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Axid API',
      version: `feature-level-${FEATURE_LEVEL}`,
      description: 'Workspace chat for people and AI agents. Every response carries `X-Service-Feature-Level`.',
    },
    servers: [{ url: baseUrl }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An Axid API key' } },
      headers: {
        FeatureLevel: { schema: { type: 'integer' }, description: 'Monotonically increasing feature level (currently 2)' },
        RateLimitLimit: { schema: { type: 'integer' }, description: 'Requests allowed per window' },
        RateLimitRemaining: { schema: { type: 'integer' }, description: 'Requests left in the current window' },
        RateLimitReset: { schema: { type: 'integer' }, description: 'Unix time (seconds) when the window resets' },
      },
      schemas: {
        DataEnvelope: { type: 'object', required: ['data'], properties: { data: {} } },
        ListEnvelope: {
          type: 'object',
          required: ['data', 'pagination'],
          properties: {
            data: { type: 'array', items: {} },
            pagination: {
              type: 'object',
              required: ['next_cursor', 'has_more'],
              properties: { next_cursor: { type: ['string', 'null'] }, has_more: { type: 'boolean' } },
            },
          },
        },
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: { code: { type: 'string', enum: Object.keys(ERROR_STATUS) }, message: { type: 'string' } },
            },
          },
        },
      },
    },
  };
}

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
export function docsRoutes(tables: RouteTable[], router: RouteTable['router']): RouteTable {
  const docs = new RouteTable('', router);
  let cached: unknown = null;
  const assets = new Map<string, Buffer>();
  docs
    .add({ method: 'get', path: '/api/v1/openapi.json', summary: 'This OpenAPI 3.1 document', tag: 'Reference', auth: 'none' }, ({ rt }) => {
      cached ??= buildOpenApi([...tables, docs], rt.config.publicBaseUrl);
      return cached;
    })
    .add({ method: 'get', path: '/docs', summary: 'API reference page', tag: 'Reference', auth: 'none' }, ({ ctx }) => {
      ctx.type = 'text/html; charset=utf-8';
      return DOCS_PAGE;
    })
    .add(
      { method: 'get', path: '/docs/assets/{asset}', summary: 'Reference page assets', tag: 'Reference', auth: 'none', params: z.object({ asset: z.string() }) },
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
