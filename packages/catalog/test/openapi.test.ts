import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import openapiTS, { astToString } from 'openapi-typescript';
import { describe, expect, it } from 'vitest';
import { generatedArtefacts, ROOT } from '../../../scripts/generate-schema';
import { ERROR_TABLE } from '../src/errors';
import { OPERATION_LIMITS } from '../src/limits';
import { buildOpenApi } from '../src/openapi';
import { OPERATIONS } from '../src/operations';

// biome-ignore lint/suspicious/noExplicitAny: the document is walked as plain JSON.
type Doc = any;

const artefacts = generatedArtefacts();
const doc: Doc = JSON.parse(artefacts['schema/openapi.json'] as string);

function operationOf(path: string, method: string): Doc {
  const op = doc.paths?.[path]?.[method.toLowerCase()];
  if (!op) throw new Error(`no ${method} ${path} in schema/openapi.json`);
  return op;
}

/** Follow a local `$ref` (one level at a time) until a concrete object is reached. */
function resolve(node: Doc): Doc {
  let current = node;
  while (current && typeof current.$ref === 'string') {
    const pointer = current.$ref.replace(/^#\//, '').split('/');
    current = pointer.reduce((at: Doc, part: string) => at?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    if (current === undefined) throw new Error(`dangling $ref ${node.$ref}`);
  }
  return current;
}

function parameters(op: Doc): Doc[] {
  return (op.parameters ?? []).map(resolve);
}

function bodySchema(path: string, method: string): Doc {
  return resolve(operationOf(path, method).requestBody.content['application/json'].schema);
}

describe('generated artefacts', () => {
  it.each(Object.keys(artefacts))('%s is committed and up to date', (relative) => {
    let committed: string | null = null;
    try {
      committed = readFileSync(join(ROOT, relative), 'utf8');
    } catch {
      committed = null;
    }
    expect(committed, `${relative} is missing: run \`pnpm generate\` and commit it`).not.toBeNull();
    expect(committed === artefacts[relative], `${relative} is stale: run \`pnpm generate\` and commit it`).toBe(true);
  });

  it('is deterministic: keys sorted recursively, two-space indent, trailing newline', () => {
    const text = artefacts['schema/openapi.json'] as string;
    expect(text.endsWith('}\n')).toBe(true);
    expect(generatedArtefacts()).toEqual(artefacts);
    const check = (value: unknown): void => {
      if (Array.isArray(value)) {
        for (const item of value) check(item);
      } else if (value && typeof value === 'object') {
        const keys = Object.keys(value);
        expect(keys).toEqual([...keys].sort());
        for (const v of Object.values(value)) check(v);
      }
    };
    check(doc);
    expect(text).toBe(`${JSON.stringify(doc, null, 2)}\n`);
    expect(text).not.toContain('"$schema"');
    expect(text).not.toContain('$defs');
  });
});

describe('OpenAPI 3.1 validity', () => {
  it('validates with swagger-parser', async () => {
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.servers.map((server: Doc) => server.url)).toEqual(['/']);
    expect(doc.info.license.name).toBeTruthy();
  });

  it('the validator is not vacuous: a broken document is refused', async () => {
    const broken = structuredClone(doc);
    delete broken.info.version;
    await expect(SwaggerParser.validate(broken)).rejects.toThrow();
  });

  it('every $ref resolves', () => {
    const walk = (value: unknown): void => {
      if (Array.isArray(value)) {
        for (const item of value) walk(item);
      } else if (value && typeof value === 'object') {
        if (typeof (value as Doc).$ref === 'string') resolve(value);
        for (const v of Object.values(value)) walk(v);
      }
    };
    walk(doc);
  });

  it('buildOpenApi is derived afresh on every call', () => {
    expect(buildOpenApi()).toEqual(buildOpenApi());
    expect(buildOpenApi()).not.toBe(buildOpenApi());
  });
});

describe('catalog operations in the document', () => {
  it('has exactly one document operation per catalog operation', () => {
    const found: string[] = [];
    for (const item of Object.values(doc.paths) as Doc[]) {
      for (const op of Object.values(item) as Doc[]) found.push(op.operationId);
    }
    expect(found.sort()).toEqual(OPERATIONS.map((op) => op.name).sort());
  });

  it.each(OPERATIONS.map((op) => [op.name, op] as const))('%s', (_name, op) => {
    const o = operationOf(op.path, op.method);
    expect(o.operationId).toBe(op.name);
    expect(o.summary).toBe(op.summary);
    expect(o['x-tool-name']).toBe(op.tool);
    expect(o['x-scope']).toBe(op.scope);
    expect(o['x-capability']).toBe(op.capability);
    expect(o['x-idempotent']).toBe(op.idempotent);
    expect(o['x-max-items']).toBe(op.maxItems);
    expect(o['x-limits']).toEqual(OPERATION_LIMITS);
    expect(o.security).toEqual([{ bearer: op.scope ? [op.scope] : [] }]);

    const params = parameters(o);
    const names = (where: string) => params.filter((p) => p.in === where).map((p) => p.name);
    expect(names('path')).toEqual(Object.keys(op.input.params.shape));
    expect(names('query')).toEqual(Object.keys(op.input.query.shape));
    for (const p of params.filter((p) => p.in === 'path')) expect(p.required).toBe(true);

    const headers = names('header');
    expect(headers.includes('Idempotency-Key')).toBe(op.idempotent);
    expect(headers.includes('X-Service-Workspace')).toBe(op.workspace === 'selected');
    expect(headers).toContain('X-Request-Id');
    for (const p of params) expect(p.description, `${op.name} ${p.in} ${p.name}`).toMatch(/\S/);
    expect(o.description.startsWith(`${op.summary}\n`)).toBe(true);
    expect(o.description.includes('Idempotency-Key')).toBe(op.idempotent);

    expect(o.requestBody !== undefined).toBe(op.input.body !== null);
    if (op.input.body) expect(o.requestBody.required).toBe(true);
    expect(o.responses['200'].content['application/json'].schema).toBeTruthy();

    const statuses = Object.keys(o.responses);
    for (const s of ['400', '401', '403', '404', '405', '413', '429', '500', '503']) expect(statuses).toContain(s);
    expect(statuses.includes('409')).toBe(op.mutates || op.idempotent || (op.name as string) === 'recall');
    for (const s of statuses.filter((s) => s !== '200')) {
      const response = resolve(o.responses[s]);
      expect(response.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    }
  });
});

describe('bounds survive into the document', () => {
  it('memories.create body: text 1-32768, evidence_ids max 32 with default []', () => {
    const body = bodySchema('/v1/memories', 'POST');
    expect(body.additionalProperties).toBe(false);
    expect(body.properties.text).toMatchObject({ type: 'string', minLength: 1, maxLength: 32768 });
    expect(body.properties.evidence_ids).toMatchObject({ type: 'array', maxItems: 32, default: [] });
    expect(body.properties.evidence_ids.items).toMatchObject({
      minLength: 1,
      maxLength: 200,
      pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$',
    });
    expect(body.properties.valid_to.default).toBeNull();
    expect([...body.required].sort()).toEqual(['kind', 'namespace_id', 'text', 'valid_from']);
  });

  it('memory keys: optional on create and list (1-256, no control character), on every Memory, in keyed receipts', () => {
    const key = { type: 'string', minLength: 1, maxLength: 256, pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f]*$' };
    expect(bodySchema('/v1/memories', 'POST').properties.key).toEqual(key);
    const filter = parameters(operationOf('/v1/memories', 'GET')).find((p) => p.name === 'key');
    expect(filter).toMatchObject({ in: 'query', required: false, schema: key });
    const pattern = new RegExp(key.pattern);
    expect(pattern.test('crm:42 \u2013 Ana')).toBe(true);
    for (const control of ['\u0000', '\u001f', '\u007f', '\u009f']) expect(pattern.test(`a${control}`)).toBe(false);
    const memory = doc.components.schemas.Memory;
    expect(memory.required).toContain('key');
    expect(memory.properties.key).toEqual({ anyOf: [key, { type: 'null' }] });
    const receipt = doc.components.schemas.MemoryDeletionReceipt;
    expect(receipt.properties.erased_key_sha256).toEqual({ type: 'string', pattern: '^[a-f0-9]{64}$' });
    expect(receipt.required).not.toContain('erased_key_sha256');
  });

  it('namespaces.list query limit: integer 1-100, default 50, optional', () => {
    const limit = parameters(operationOf('/v1/namespaces', 'GET')).find((p) => p.name === 'limit');
    expect(limit).toMatchObject({ in: 'query', required: false });
    expect(limit.schema).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 50 });
  });

  it('evidence.create body: excerpt 1-65536, source_locator 1-2048, lowercase sha256', () => {
    const body = bodySchema('/v1/evidence', 'POST');
    expect(body.properties.excerpt).toMatchObject({ minLength: 1, maxLength: 65536 });
    expect(body.properties.source_locator).toMatchObject({ minLength: 1, maxLength: 2048 });
    expect(body.properties.content_root_sha256.pattern).toBe('^[a-f0-9]{64}$');
  });

  it('grants: max 100 per put, max 6 capabilities per grant', () => {
    const body = bodySchema('/v1/namespaces/{id}/grants', 'PUT');
    expect(body.properties.grants.maxItems).toBe(100);
    const grant = resolve(body.properties.grants.items);
    expect(grant.properties.capabilities).toMatchObject({ type: 'array', maxItems: 6 });
  });

  it('Idempotency-Key is required (id pattern, 1-200) on idempotent operations only', () => {
    for (const op of OPERATIONS) {
      const key = parameters(operationOf(op.path, op.method)).find((p) => p.name === 'Idempotency-Key');
      if (!op.idempotent) {
        expect(key, op.name).toBeUndefined();
        continue;
      }
      expect(key, op.name).toMatchObject({ in: 'header', required: true });
      expect(key.schema).toMatchObject({ type: 'string', minLength: 1, maxLength: 200 });
      expect(key.schema.pattern).toBe('^[A-Za-z0-9][A-Za-z0-9._:-]*$');
    }
  });

  it('the Error schema is the closed error table', () => {
    const error = resolve({ $ref: '#/components/schemas/Error' });
    expect(error).toMatchObject({ additionalProperties: false, required: ['error'] });
    const inner = error.properties.error;
    expect(inner.additionalProperties).toBe(false);
    expect([...inner.required].sort()).toEqual(
      ['code', 'message', 'request_id', 'retry_after_seconds', 'retryable', 'status'].sort(),
    );
    const codes = Object.keys(ERROR_TABLE);
    expect(inner.properties.code.enum).toEqual(codes);
    expect([...inner.properties.message.enum].sort()).toEqual(
      [...new Set(Object.values(ERROR_TABLE).map((row) => row.message))].sort(),
    );
    expect(inner.properties.status.type).toBe('integer');
    expect([...inner.properties.status.enum].sort()).toEqual(
      [...new Set(Object.values(ERROR_TABLE).map((row) => row.status))].sort(),
    );
    expect(inner.properties.retry_after_seconds).toEqual({
      anyOf: [{ type: 'number', minimum: 0, maximum: 3600 }, { type: 'null' }],
    });
  });

  it('X-Service-Workspace: optional where a bound credential may call, required where only workspace admins may', () => {
    const selected = OPERATIONS.filter((op) => op.workspace === 'selected');
    expect(selected.length).toBeGreaterThan(10);
    const adminOnly = selected.filter((op) => op.capability === 'workspace_admin').map((op) => op.name);
    // memories.create with an installation credential (no header) is the case a validating proxy flagged.
    expect(adminOnly).not.toContain('memories.create');
    expect(adminOnly).toEqual(expect.arrayContaining(['credentials.create', 'webhooks.list']));
    for (const op of selected) {
      const header = parameters(operationOf(op.path, op.method)).find((p) => p.name === 'X-Service-Workspace');
      expect(header, op.name).toMatchObject({ in: 'header', required: adminOnly.includes(op.name) });
      expect(JSON.stringify(header.schema)).toContain('^ws_');
      const told = /a service key or installation credential may omit it/.test(
        operationOf(op.path, op.method).description,
      );
      expect(told, op.name).toBe(!adminOnly.includes(op.name));
    }
    const optional = resolve({ $ref: '#/components/parameters/X-Service-Workspace' });
    expect(optional.required).toBe(false);
    expect(optional.description).toMatch(/service key or product-installation credential .* may omit it/);
    expect(optional.description).toContain('must name that same workspace');
    const required = resolve({ $ref: '#/components/parameters/X-Service-Workspace-Required' });
    expect(required).toMatchObject({ name: 'X-Service-Workspace', required: true });
    expect(required.description).toContain('403 forbidden');
  });

  it('a client generated from the document (openapi-typescript) asks for the key header and for the workspace only where it is needed', async () => {
    const types = astToString(await openapiTS(structuredClone(doc), { silent: true }));
    const start = types.indexOf('export interface operations {');
    expect(start).toBeGreaterThan(0);
    const operations = types.slice(start);
    for (const op of OPERATIONS) {
      // Keys are quoted only when they need it (`recall: {`, `"memories.create": {`).
      const key = /^[a-z]+$/.test(op.name) ? op.name : `"${op.name}"`;
      const at = operations.indexOf(`\n    ${key}: {`);
      expect(at, op.name).toBeGreaterThan(0);
      const next = operations.slice(at + 1).search(/\n {4}"?[a-z.]+"?: \{/);
      const block = operations.slice(at, next === -1 ? undefined : at + 1 + next);
      // `"Name": T` is a required property of the generated header type, `"Name"?: T` an optional one.
      const adminOnly = op.workspace === 'selected' && op.capability === 'workspace_admin';
      expect(block.includes('"X-Service-Workspace": '), op.name).toBe(adminOnly);
      expect(block.includes('"X-Service-Workspace"?: '), op.name).toBe(op.workspace === 'selected' && !adminOnly);
      expect(block.includes('"Idempotency-Key": '), op.name).toBe(op.idempotent);
      expect(block).toContain('"X-Request-Id"?: ');
    }
  });

  it('the Idempotency-Key description states the rules of decisions §8', () => {
    const description = resolve({ $ref: '#/components/parameters/Idempotency-Key' }).description;
    for (const fact of [
      'scoped to the authenticated principal',
      '24 hours',
      'path parameters',
      'canonical JSON body',
      'selected workspace',
      'byte for',
      '409 idempotency_conflict',
      '400 idempotency_required',
    ]) {
      expect(description).toContain(fact);
    }
  });

  it('every tag is described', () => {
    expect(doc.tags.length).toBeGreaterThan(5);
    for (const tag of doc.tags) expect(tag.description, tag.name).toMatch(/\S/);
  });

  it('error responses list their codes and carry the headers of decisions §7', () => {
    const unauthorized = resolve(operationOf('/v1/me', 'GET').responses['401']);
    expect(Object.keys(unauthorized.headers)).toContain('WWW-Authenticate');
    // RFC 6750 §3: the reason, also in X-Error-Detail; a plain `Bearer` without a token.
    expect(Object.keys(unauthorized.headers)).toContain('X-Error-Detail');
    const challenge = new RegExp(resolve(unauthorized.headers['WWW-Authenticate']).schema.pattern);
    expect(challenge.test('Bearer')).toBe(true);
    expect(challenge.test('Bearer error="invalid_token", error_description="the token has expired"')).toBe(true);
    expect(challenge.test('Bearer error="invalid_token", error_description="a"b"')).toBe(false);
    const tooMany = resolve(operationOf('/v1/me', 'GET').responses['429']);
    expect(Object.keys(tooMany.headers)).toContain('Retry-After');
    const forbidden = resolve(operationOf('/v1/workspaces', 'POST').responses['403']);
    expect(forbidden.description).toContain('enrollment_required');
    const invalid = resolve(operationOf('/v1/me', 'GET').responses['400']);
    expect(resolve(invalid.headers['X-Error-Detail'])).toMatchObject({ required: false });
    // A 413 states the limit it passed.
    const tooLarge = resolve(operationOf('/v1/memories', 'POST').responses['413']);
    expect(Object.keys(tooLarge.headers)).toContain('X-Error-Detail');
    const unavailable = resolve(operationOf('/v1/me', 'GET').responses['503']);
    expect(Object.keys(unavailable.headers)).toContain('Retry-After');
    const notAllowed = resolve(operationOf('/v1/me', 'GET').responses['405']);
    expect(Object.keys(notAllowed.headers)).toContain('Allow');
    for (const item of Object.values(doc.paths) as Doc[]) {
      for (const op of Object.values(item) as Doc[]) {
        for (const response of Object.values(op.responses)) {
          expect(Object.keys(resolve(response).headers)).toContain('X-Request-Id');
        }
      }
    }
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });
});
