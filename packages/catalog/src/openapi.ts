import { z } from 'zod';
import { ERROR_CODES, ERROR_TABLE, type ErrorCode } from './errors';
import { OPERATION_LIMITS } from './limits';
import type { OperationSpec } from './operation';
import { OPERATIONS } from './operations';
import { commitSchema, idSchema, workspaceIdSchema } from './primitives';
import {
  actorSchema,
  attestationSchema,
  evidenceDeletionReceiptSchema,
  evidenceSchema,
  grantSchema,
  grantTargetSchema,
  invalidationSchema,
  memberSchema,
  memoryDeletionReceiptSchema,
  memoryListItemSchema,
  memorySchema,
  memoryViewSchema,
  namespaceSchema,
  revisionSchema,
  verificationSchema,
  workspaceSchema,
} from './resources';

/**
 * The OpenAPI 3.1 description of the /v1 REST mirror, derived from the operation catalog only:
 * paths, parameters, bodies and bounds come from the zod schemas, attributes from each
 * operation's entry, errors from ERROR_TABLE and limits from OPERATION_LIMITS.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

const JSON_MEDIA_TYPE = 'application/json';
const SECURITY_SCHEME = 'bearer';

const schemaRef = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const parameterRef = (name: string): JsonObject => ({ $ref: `#/components/parameters/${name}` });
const headerRef = (name: string): JsonObject => ({ $ref: `#/components/headers/${name}` });
const responseRef = (name: string): JsonObject => ({ $ref: `#/components/responses/${name}` });

/** Deep copy with object keys in code-unit order, so equal values serialise identically. */
export function sortKeysDeep(value: Json): Json {
  if (Array.isArray(value)) return value.map(sortKeysDeep);
  if (value !== null && typeof value === 'object') {
    const out: JsonObject = {};
    for (const key of Object.keys(value).sort()) out[key] = sortKeysDeep(value[key] as Json);
    return out;
  }
  return value;
}

function canonical(value: Json): string {
  return JSON.stringify(sortKeysDeep(value));
}

/** One zod schema as a self-contained JSON Schema (2020-12) fragment, without `$schema`. */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const out = z.toJSONSchema(schema, { io, target: 'draft-2020-12' }) as JsonObject;
  delete out.$schema;
  const text = JSON.stringify(out);
  // Fragments are embedded under paths and components, where `#/$defs/...` would not resolve.
  if ('$defs' in out || text.includes('"$ref"')) {
    throw new Error('catalog schema produced $defs/$ref; inline it or extend the OpenAPI generator');
  }
  return out;
}

/** Shared resource schemas, published under components/schemas and referenced where they occur. */
const RESOURCE_SCHEMAS: ReadonlyArray<readonly [string, z.ZodType]> = [
  ['Actor', actorSchema],
  ['Attestation', attestationSchema],
  ['Commit', commitSchema],
  ['Evidence', evidenceSchema],
  ['EvidenceDeletionReceipt', evidenceDeletionReceiptSchema],
  ['Grant', grantSchema],
  ['GrantTarget', grantTargetSchema],
  ['Invalidation', invalidationSchema],
  ['Member', memberSchema],
  ['Memory', memorySchema],
  ['MemoryDeletionReceipt', memoryDeletionReceiptSchema],
  ['MemoryListItem', memoryListItemSchema],
  ['MemoryView', memoryViewSchema],
  ['Namespace', namespaceSchema],
  ['Revision', revisionSchema],
  ['Verification', verificationSchema],
  ['Workspace', workspaceSchema],
];

function distinct<T>(values: Iterable<T>): T[] {
  return [...new Set(values)];
}

const ERROR_MESSAGES = distinct(ERROR_CODES.map((code) => ERROR_TABLE[code].message));
const ERROR_STATUSES: number[] = distinct(ERROR_CODES.map((code) => ERROR_TABLE[code].status)).sort((a, b) => a - b);

/** The body of every failure (interface.md, Errors): `{error: {...}}` with exactly these fields. */
export const errorBodySchema = z.strictObject({
  error: z.strictObject({
    code: z.enum(ERROR_CODES as [ErrorCode, ...ErrorCode[]]),
    message: z.enum(ERROR_MESSAGES as [string, ...string[]]),
    status: z
      .int()
      .min(400)
      .max(599)
      .refine((status) => ERROR_STATUSES.includes(status), { message: 'not a status of the error table' })
      .meta({ enum: ERROR_STATUSES }),
    retryable: z.boolean(),
    request_id: idSchema,
    retry_after_seconds: z.number().min(0).max(3600).nullable(),
  }),
});

const STATUS_NAMES: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  413: 'ContentTooLarge',
  429: 'TooManyRequests',
  500: 'InternalServerError',
  503: 'ServiceUnavailable',
};

function statusName(status: number): string {
  const name = STATUS_NAMES[status];
  if (!name) throw new Error(`no response name for HTTP status ${status}`);
  return name;
}

function codesWithStatus(status: number): ErrorCode[] {
  return ERROR_CODES.filter((code) => ERROR_TABLE[code].status === status);
}

/** Response headers that go with particular error statuses (decisions.md §7). */
const ERROR_STATUS_HEADERS: Record<number, string[]> = {
  400: ['X-Error-Detail'],
  401: ['WWW-Authenticate', 'X-Error-Detail'],
  405: ['Allow'],
  409: ['Retry-After', 'X-Error-Detail'],
  413: ['X-Error-Detail'],
  429: ['Retry-After'],
  503: ['Retry-After'],
};

function errorResponse(status: number): JsonObject {
  const codes = codesWithStatus(status);
  const headers: JsonObject = {
    'Cache-Control': headerRef('Cache-Control'),
    'X-Request-Id': headerRef('X-Request-Id'),
  };
  for (const name of ERROR_STATUS_HEADERS[status] ?? []) headers[name] = headerRef(name);
  return {
    description: `Error with status ${status}; code ${codes.map((c) => `\`${c}\``).join(', ')}.`,
    headers,
    content: { [JSON_MEDIA_TYPE]: { schema: schemaRef('Error') } },
  };
}

/** Reads that can answer `projection_pending` (409) when asked to (decisions.md §5). */
const PROJECTION_READS: ReadonlySet<string> = new Set(['recall']);

/**
 * Error statuses an operation can answer with: every status of ERROR_TABLE, except 409
 * (`conflict`, `idempotency_conflict`, `projection_pending`) which only writes and recall can give.
 */
export function errorStatusesOf(op: OperationSpec): number[] {
  const can409 = op.mutates || op.idempotent || PROJECTION_READS.has(op.name);
  return ERROR_STATUSES.filter((status) => status !== 409 || can409);
}

function pathParamNames(path: string): string[] {
  return [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
}

/** What each path segment before `{id}` addresses, for the description of that parameter. */
const ADDRESSED_RESOURCES: Record<string, string> = {
  credentials: 'service key',
  evidence: 'evidence',
  installations: 'product installation',
  proofs: 'revision, evidence or verification',
  memories: 'memory',
  namespaces: 'namespace',
  webhooks: 'webhook',
  workspaces: 'workspace',
};

/** Descriptions of the query parameters the zod schemas leave undescribed (bounds stay in `schema`). */
const QUERY_PARAMETER_DESCRIPTIONS: Record<string, string> = {
  limit: 'Items per page.',
  cursor:
    'Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it.',
  namespace_id: 'Only items in this namespace.',
  parent_id: 'List the readable children of this namespace instead of the whole workspace.',
  kind: 'Only memories of this kind.',
  key: 'Only the memories holding this key (compared exactly) as seen at `as_of` and `known_at`: at most one.',
  include_evidence: 'Whether the view carries the evidence behind the revision.',
  product_installation_id: 'Only the credentials of this product installation.',
  after: 'List the changes after this sequence: the `next_after` of the previous page, 0 to start.',
  include_descendants: 'With `namespace_id`: also the namespaces below it.',
  head_sequence: 'Prove against the head at this sequence (a head kept earlier); default: the latest.',
  wait_ms: 'When no change follows `after` yet, wait up to this long for the next commit.',
};

function parameterDescription(op: OperationSpec, name: string, where: 'path' | 'query', schema: JsonObject): string {
  if (typeof schema.description === 'string') return schema.description;
  const described =
    where === 'path'
      ? ADDRESSED_RESOURCES[op.path.match(new RegExp(`/([a-z_]+)/\\{${name}\\}`))?.[1] ?? '']
      : QUERY_PARAMETER_DESCRIPTIONS[name];
  if (described === undefined) throw new Error(`${op.name}: describe the ${where} parameter ${name} in openapi.ts`);
  return where === 'path' ? `Id of the ${described} addressed.` : described;
}

function fieldParameters(op: OperationSpec, objectSchema: JsonObject, where: 'path' | 'query'): JsonObject[] {
  const properties = (objectSchema.properties ?? {}) as Record<string, JsonObject>;
  const required = new Set((objectSchema.required ?? []) as string[]);
  return Object.entries(properties).map(([name, schema]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    description: parameterDescription(op, name, where, schema),
    schema,
  }));
}

function parametersOf(op: OperationSpec): Json[] {
  const params = jsonSchemaOf(op.input.params, 'input');
  const query = jsonSchemaOf(op.input.query, 'input');
  const declared = Object.keys((params.properties ?? {}) as JsonObject);
  const inPath = pathParamNames(op.path);
  if (canonical(declared.sort()) !== canonical([...inPath].sort())) {
    throw new Error(`${op.name}: path ${op.path} and params {${declared.join(', ')}} disagree`);
  }
  const requiredParams = new Set((params.required ?? []) as string[]);
  for (const name of declared) {
    if (!requiredParams.has(name)) throw new Error(`${op.name}: path parameter ${name} must be required`);
  }
  const out: Json[] = [...fieldParameters(op, params, 'path'), ...fieldParameters(op, query, 'query')];
  if (op.idempotent) out.push(parameterRef('Idempotency-Key'));
  if (op.workspace === 'selected') out.push(parameterRef(workspaceParameterOf(op)));
  out.push(parameterRef('X-Request-Id'));
  return out;
}

/**
 * The workspace selector of a `selected` operation. A service key or installation credential may
 * omit the header (it runs in its own workspace), so the header is optional wherever such a
 * credential may call; only operations for workspace admins, which a credential never is (its role
 * is `member`), need it from every caller that may call them.
 */
function workspaceParameterOf(op: OperationSpec): 'X-Service-Workspace' | 'X-Service-Workspace-Required' {
  return op.capability === 'workspace_admin' ? 'X-Service-Workspace-Required' : 'X-Service-Workspace';
}

function workspaceSourceOf(op: OperationSpec): string {
  if (op.workspace === 'directory') return 'Needs no workspace.';
  if (op.workspace === 'path') return 'Runs in the workspace named by the path.';
  return workspaceParameterOf(op) === 'X-Service-Workspace'
    ? 'Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).'
    : 'Runs in the workspace named by `X-Service-Workspace`.';
}

/** The operation's attributes from the catalog, in words (the same facts as its `x-` fields). */
function operationDescription(op: OperationSpec): string {
  const lines = [op.summary, ''];
  lines.push(op.scope ? `OAuth scope \`${op.scope}\` (sessions are not scope-limited).` : 'No OAuth scope is needed.');
  if (op.capability === 'workspace_admin') lines.push('Only workspace admins may call it.');
  else if (op.capability) lines.push(`Needs the \`${op.capability}\` capability on the namespace concerned.`);
  lines.push(workspaceSourceOf(op));
  if (op.idempotent) {
    lines.push('Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.');
  }
  if (op.mutates) lines.push('Writes, and answers with the commit it made.');
  if (op.maxItems > 1) lines.push(`At most ${op.maxItems} items per answer.`);
  if (op.revealsSecret) lines.push('The `secret` is shown in this answer only; a replay carries `secret: null`.');
  return lines.join('\n');
}

/** One tag per resource family (the first part of an operation name). */
const TAG_DESCRIPTIONS: Record<string, string> = {
  changes: 'The change feed: commits after a sequence, ids only, resumable from `next_after`.',
  credentials: 'Service keys bound to a workspace (workspace admins only).',
  evidence: 'Exact source excerpts, their verifications and their forgetting.',
  installations: 'Product installations and their credentials (workspace admins only).',
  ledger: "The ledger's hash chain: signed heads and proofs a reader checks with SHA-256 (docs/ledger-proofs.md).",
  me: 'Who the server resolved the caller to.',
  memories: 'Bitemporal memories: revisions, corrections, attestations, history and forgetting.',
  namespaces: 'The namespace tree of a workspace and the grants on it.',
  recall: 'Ranked retrieval over the memories the caller may read.',
  webhooks: 'Signed deliveries of the change feed to an HTTPS endpoint (workspace admins only).',
  workspaces: 'Workspaces and their members.',
};

function tagOf(op: OperationSpec): string {
  const tag = op.name.split('.')[0] as string;
  if (!(tag in TAG_DESCRIPTIONS)) throw new Error(`${op.name}: describe the tag ${tag} in openapi.ts`);
  return tag;
}

function operationObject(op: OperationSpec): JsonObject {
  const responses: JsonObject = {
    '200': {
      description: 'Success.',
      headers: { 'Cache-Control': headerRef('Cache-Control'), 'X-Request-Id': headerRef('X-Request-Id') },
      content: { [JSON_MEDIA_TYPE]: { schema: jsonSchemaOf(op.output, 'output') } },
    },
  };
  for (const status of errorStatusesOf(op)) responses[String(status)] = responseRef(statusName(status));

  const operation: JsonObject = {
    operationId: op.name,
    summary: op.summary,
    description: operationDescription(op),
    tags: [tagOf(op)],
    parameters: parametersOf(op),
    responses,
    security: [{ [SECURITY_SCHEME]: op.scope ? [op.scope] : [] }],
    'x-tool-name': op.tool,
    'x-scope': op.scope,
    'x-capability': op.capability,
    'x-idempotent': op.idempotent,
    'x-mutates': op.mutates,
    'x-workspace': op.workspace,
    'x-max-items': op.maxItems,
    'x-limits': { ...OPERATION_LIMITS },
  };
  if (op.input.body) {
    operation.requestBody = {
      required: true,
      content: { [JSON_MEDIA_TYPE]: { schema: jsonSchemaOf(op.input.body, 'input') } },
    };
  }
  return operation;
}

/**
 * Replace every subschema that is exactly a published component with a `$ref` to it, outermost
 * first. Only exact structural matches are replaced, so the document means the same either way.
 */
function referenceComponents(node: Json, components: Map<string, string>, self?: string): Json {
  if (Array.isArray(node)) return node.map((item) => referenceComponents(item, components));
  if (node === null || typeof node !== 'object') return node;
  const name = components.get(canonical(node));
  if (name !== undefined && name !== self) return schemaRef(name);
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) out[key] = referenceComponents(value, components);
  return out;
}

function componentSchemas(): { schemas: JsonObject; byCanonical: Map<string, string> } {
  const schemas: JsonObject = { Error: jsonSchemaOf(errorBodySchema, 'output') };
  const byCanonical = new Map<string, string>();
  for (const [name, schema] of RESOURCE_SCHEMAS) {
    const json = jsonSchemaOf(schema, 'output');
    schemas[name] = json;
    const key = canonical(json);
    if (!byCanonical.has(key)) byCanonical.set(key, name);
  }
  for (const [name, json] of Object.entries(schemas)) {
    schemas[name] = referenceComponents(json as Json, byCanonical, name);
  }
  return { schemas, byCanonical };
}

const IDEMPOTENCY_DESCRIPTION = [
  'Required on every idempotent write (missing: `400 idempotency_required`). Keys are scoped to the',
  'authenticated principal and kept at least 24 hours. The request fingerprint covers the operation,',
  'the path parameters, the canonical JSON body (defaults applied) and the selected workspace.',
  'A retry with the same key and the same fingerprint replays the stored status and body byte for',
  'byte (a concurrent twin waits for the first and replays it); the same key with a different',
  'fingerprint is `409 idempotency_conflict`.',
].join(' ');

const WORKSPACE_SELECTION = [
  'Canonical workspace id (`ws_...`) selecting the workspace. Session and OAuth callers must send it',
  '(missing or malformed: `400 invalid_input`; a workspace they are not a member of: `404 not_found`).',
].join(' ');

const WORKSPACE_HEADER_DESCRIPTION = [
  WORKSPACE_SELECTION,
  'A service key or product-installation credential is bound to its workspace and may omit it;',
  'if sent, it must name that same workspace (another one is `404 not_found`).',
].join(' ');

const WORKSPACE_HEADER_REQUIRED_DESCRIPTION = [
  WORKSPACE_SELECTION,
  'Only workspace admins may call this operation, and a service key or product-installation',
  'credential never is one (it is refused with `403 forbidden`), so every caller that may call it sends it.',
].join(' ');

function sharedParameters(): JsonObject {
  return {
    'Idempotency-Key': {
      name: 'Idempotency-Key',
      in: 'header',
      required: true,
      description: IDEMPOTENCY_DESCRIPTION,
      schema: jsonSchemaOf(idSchema, 'input'),
    },
    // Optional: bound credentials (service keys, installation credentials) omit it, and a client
    // generated from the document must not demand what the service does not need.
    'X-Service-Workspace': {
      name: 'X-Service-Workspace',
      in: 'header',
      required: false,
      description: WORKSPACE_HEADER_DESCRIPTION,
      schema: jsonSchemaOf(workspaceIdSchema, 'input'),
    },
    // The same header on the operations for workspace admins, which no bound credential may call.
    'X-Service-Workspace-Required': {
      name: 'X-Service-Workspace',
      in: 'header',
      required: true,
      description: WORKSPACE_HEADER_REQUIRED_DESCRIPTION,
      schema: jsonSchemaOf(workspaceIdSchema, 'input'),
    },
    'X-Request-Id': {
      name: 'X-Request-Id',
      in: 'header',
      required: false,
      description: 'Echoed as `request_id` and in the response header when valid; otherwise the server picks one.',
      schema: jsonSchemaOf(idSchema, 'input'),
    },
  };
}

function sharedHeaders(): JsonObject {
  return {
    'X-Request-Id': {
      description: 'The request id (echoed from a valid `X-Request-Id`, else generated); on every response.',
      required: true,
      schema: jsonSchemaOf(idSchema, 'output'),
    },
    'Cache-Control': {
      description: 'Every response is private.',
      required: true,
      schema: { type: 'string', const: 'private, no-store' },
    },
    'WWW-Authenticate': {
      description:
        'The challenge (RFC 6750 §3): `Bearer` when the request carried no token; `Bearer error="invalid_token", error_description="..."` naming why a token or credential was refused (expired, not yet valid, another audience, an unknown issuer or key, malformed, an unknown or revoked credential).',
      required: true,
      schema: { type: 'string', pattern: '^Bearer(?: error="invalid_token", error_description="[ !#-\\[\\]-~]+")?$' },
    },
    Allow: {
      description: 'The methods the path supports, comma separated.',
      required: true,
      schema: { type: 'string' },
    },
    'Retry-After': {
      description:
        'Seconds to wait before retrying, sent whenever the error carries `retry_after_seconds` (rounded up): always with `rate_limited` (429), and with `unavailable` (503) and `projection_pending` (409) when the server knows when to try again.',
      required: false,
      schema: { type: 'integer', minimum: 0, maximum: 3600 },
    },
    'X-Error-Detail': {
      description:
        'With `invalid_input`: what was wrong, e.g. `body.kind: expected one of claim, episode, procedure`, several `; `-separated (as many as fit in 300 characters, then `(and N more)`). With `budget_exceeded`: the limit passed, e.g. `request: the body is over the limit of 262144 bytes`. With `unauthenticated`: why the token was refused, as in `WWW-Authenticate` (absent when none was sent). With `conflict` on `memories.create` when another memory of the namespace holds the key: that memory, `body.key: held by memory mem_…`. The body stays the exact error object; no other code carries a detail.',
      required: false,
      schema: { type: 'string', minLength: 1 },
    },
  };
}

/** Build the whole OpenAPI 3.1 document (keys unordered; sort them when serialising). */
export function buildOpenApi(): JsonObject {
  const { schemas, byCanonical } = componentSchemas();

  const paths: Record<string, JsonObject> = {};
  const seen = new Set<string>();
  for (const op of OPERATIONS as readonly OperationSpec[]) {
    const method = op.method.toLowerCase();
    const key = `${method} ${op.path}`;
    if (seen.has(key)) throw new Error(`duplicate operation for ${op.method} ${op.path}`);
    seen.add(key);
    const item = paths[op.path] ?? {};
    item[method] = referenceComponents(operationObject(op), byCanonical);
    paths[op.path] = item;
  }

  const responses: JsonObject = {};
  for (const status of ERROR_STATUSES) responses[statusName(status)] = errorResponse(status);

  const tags = distinct(OPERATIONS.map((op) => tagOf(op)))
    .sort()
    .map((name) => ({ name, description: TAG_DESCRIPTIONS[name] as string }));

  return {
    openapi: '3.1.0',
    info: {
      title: 'Temporal Memory Service',
      version: '1.0.0',
      description: [
        'REST mirror of the operation catalog. Generated from packages/catalog by `pnpm generate`; do not edit by hand.',
        '',
        'Every failure answers the one `Error` body (`{error: {...}}`, the closed error table of `x-error-table`)',
        'and every response carries `X-Request-Id`.',
      ].join('\n'),
      // The project grants no licence yet (a private workspace); the document says so.
      license: { name: 'Apache License 2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: '/', description: 'The gateway that serves this document (same origin).' }],
    security: [{ [SECURITY_SCHEME]: [] }],
    tags,
    paths,
    components: {
      schemas,
      parameters: sharedParameters(),
      headers: sharedHeaders(),
      responses,
      securitySchemes: {
        [SECURITY_SCHEME]: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            'Session token, OAuth access token (`at+jwt`, scopes `svc:*`), product-installation credential or service key. The security requirement lists the OAuth scope an operation needs.',
        },
      },
    },
    'x-error-table': Object.fromEntries(
      ERROR_CODES.map((code) => [code, { ...ERROR_TABLE[code] } as JsonObject]),
    ) as JsonObject,
  };
}
