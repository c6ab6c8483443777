/**
 * The OpenAPI 3.1 description of /api/v1, served at /api/v1/openapi.json, assembled here from
 * the function table (openapiFunctions.ts, one entry per function of the gateway's table; a test
 * holds the two to each other), the records (openapiComponents.ts) and the settings' schemas
 * (openapiSchema.ts). The user guide is docs/api.md.
 */

import { SCHEMAS } from './openapiComponents.ts';
import { FUNCTION_DOCS, PARAM_BY_NAME, PARAMS, type FunctionDoc } from './openapiFunctions.ts';
import { JOB_SETTINGS, ref, type Schema } from './openapiSchema.ts';

const ERROR_RESPONSES: Record<string, Schema> = Object.fromEntries<Schema>(
  ([
    ['400', 'invalid or missing parameter, limit exceeded, malformed body'],
    ['401', 'invalid API token'],
    ['404', 'no such job, group or function'],
    ['409', "not allowed in the job's current state"],
    ['413', 'body over 1 MiB'],
    ['500', 'internal error (the message has a request id)'],
    ['503', 'rate limited or briefly unavailable (a store failure too); see Retry-After'],
  ] as const).map(([status, description]) => [status, { description, content: { 'application/json': { schema: ref('Error') } } }]),
);

function operation(name: string, doc: FunctionDoc, method: 'get' | 'post') {
  const properties: Record<string, Schema> = {};
  for (const p of doc.params ?? []) {
    const [wire, schema] = typeof p === 'string' ? [p, PARAM_BY_NAME[p]] : p;
    if (!schema) throw new Error(`openapi: ${name} names unknown parameter ${wire}`);
    properties[wire] = schema;
  }
  if (doc.settings) Object.assign(properties, JOB_SETTINGS);
  const required = doc.required ?? [];
  const ok = {
    description: 'success',
    content: { 'application/json': { schema: { type: 'object', required: ['status', 'code', 'data'], properties: { status: { const: 'success' }, code: { const: 0 }, data: doc.returns } } } },
  };
  const op: Schema = { operationId: `${name}_${method}`, summary: doc.summary, tags: [name.split('_')[0]], responses: { '200': ok, ...ERROR_RESPONSES } };
  if (method === 'get') {
    op.parameters = Object.entries(properties).map(([n, schema]) => ({ name: n, in: 'query', required: required.includes(n), schema }));
  } else {
    const body = name === 'cron_batch_add'
      ? {
          type: 'object',
          required: ['data'],
          properties: {
            data: { type: 'array', maxItems: 1000, items: { type: 'object', required: ['url'], properties: { ...JOB_SETTINGS, run: PARAMS.run, payload: PARAMS.payload } } },
            idempotencyKey: { type: 'string', minLength: 1, maxLength: 255, description: 'as the X-Idempotency-Key header: 1-255 visible ASCII characters' },
          },
        }
      : { type: 'object', required, properties };
    op.requestBody = { content: { 'application/json': { schema: body }, 'application/x-www-form-urlencoded': { schema: body } } };
    if (name === 'cron_batch_add') {
      const description = 'a retry with the same key and batch completes it without duplicates (1-255 visible ASCII characters, per account)';
      op.parameters = [{ name: 'X-Idempotency-Key', in: 'header', required: false, description, schema: { type: 'string', maxLength: 255 } }];
    }
  }
  return op;
}

/** The whole document. Its version is the API's (v1), which FastCron clients pin, not Tock's release. */
export function openApiDocument() {
  const paths: Record<string, Schema> = {};
  for (const [name, doc] of Object.entries(FUNCTION_DOCS)) {
    paths[`/api/v1/${name}`] = name === 'cron_batch_add' ? { post: operation(name, doc, 'post') } : { get: operation(name, doc, 'get'), post: operation(name, doc, 'post') };
  }
  paths['/badge/{token}.svg'] = {
    get: {
      operationId: 'badge_svg',
      summary: "Tock's: a job's status badge (cron_badge), public: the token in the path is the credential. Answers image/svg+xml, cacheable for 60 s; 404 once revoked or the job deleted",
      tags: ['badge'],
      security: [],
      parameters: [{ name: 'token', in: 'path', required: true, schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{32}$' } }],
      responses: {
        '200': { description: 'the badge: the job name (or "cron") and ok, failing, late, paused, disabled, auto-disabled, done or pending', content: { 'image/svg+xml': { schema: { type: 'string' } } } },
        '404': ERROR_RESPONSES['404'],
        '503': ERROR_RESPONSES['503'],
      },
    },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Tock API',
      version: '1.0.0',
      description:
        "FastCron-compatible /api/v1. Parameters may come from the query string, a form or JSON body (names match ignoring case and '_'); PUT, PATCH and DELETE are treated as POST. See docs/api.md.",
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }, { tokenParameter: [] }],
    components: {
      schemas: SCHEMAS,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'the 32-character API token' },
        tokenParameter: { type: 'apiKey', in: 'query', name: 'token', description: 'accepted, but the header keeps the token out of logs' },
      },
    },
    paths,
  };
}
