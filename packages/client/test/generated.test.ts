import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLIENT_GENERATED_PATH, generateClientModule } from '../../../scripts/generate-client';
import { generatedArtefacts, ROOT } from '../../../scripts/generate-schema';
import { OPERATION_TABLE } from '../src/generated';

const openapi = JSON.parse(readFileSync(join(ROOT, 'schema/openapi.json'), 'utf8'));

describe('generated client', () => {
  it('is committed and up to date with schema/openapi.json (run `pnpm generate`)', () => {
    const committed = readFileSync(join(ROOT, CLIENT_GENERATED_PATH), 'utf8');
    expect(committed === generateClientModule(openapi), `${CLIENT_GENERATED_PATH} is stale`).toBe(true);
    expect(generatedArtefacts()[CLIENT_GENERATED_PATH] === committed).toBe(true);
  });

  it('has one table entry per operation of the document, with its method, path and headers', () => {
    const fromDoc: Record<string, unknown> = {};
    for (const [path, item] of Object.entries<Record<string, { operationId: string; parameters: { $ref?: string }[] }>>(
      openapi.paths,
    )) {
      for (const [method, op] of Object.entries(item)) {
        const refs = op.parameters.map((p) => p.$ref ?? '');
        fromDoc[op.operationId] = {
          method: method.toUpperCase(),
          path,
          idempotent: refs.includes('#/components/parameters/Idempotency-Key'),
          workspace: refs.includes('#/components/parameters/X-Service-Workspace'),
        };
      }
    }
    const fromTable = Object.fromEntries(
      Object.entries(OPERATION_TABLE).map(([name, e]) => [
        name,
        { method: e.method, path: e.path, idempotent: e.idempotent, workspace: e.workspace },
      ]),
    );
    expect(fromTable).toEqual(fromDoc);
    expect(OPERATION_TABLE['memories.list'].pager).toEqual({ param: 'cursor', next: 'next_cursor', items: 'items' });
    expect(OPERATION_TABLE['memories.get'].pager).toBeNull();
  });

  it('picks up an operation added to the document with no code of its own (a feed paged by after)', () => {
    const doc = structuredClone(openapi);
    doc.paths['/v1/changes'] = {
      get: {
        operationId: 'changes.list',
        summary: 'Changes after a sequence.',
        parameters: [
          { name: 'after', in: 'query', required: false, schema: { type: 'integer', minimum: 0 } },
          { $ref: '#/components/parameters/X-Service-Workspace' },
        ],
        responses: {
          '200': {
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: {
                    changes: {
                      type: 'array',
                      items: { type: 'object', properties: { sequence: { type: 'integer' } } },
                    },
                    next_after: { type: 'integer' },
                    head_sequence: { type: 'integer' },
                  },
                  required: ['changes', 'next_after', 'head_sequence'],
                },
              },
            },
          },
          '404': { $ref: '#/components/responses/NotFound' },
        },
      },
    };
    const module = generateClientModule(doc);
    expect(module).toContain(
      '"changes.list": {"method":"GET","path":"/v1/changes","pathParams":[],"query":["after"],"body":false,"idempotent":false,"mutates":false,"workspace":true,"pager":{"param":"after","next":"next_after","items":"changes"}}',
    );
    expect(module).toMatch(
      /changes: \{\n[\s\S]*list\(input\?: ChangesListInput, options\?: CallOptions\): Promise<ChangesListOutput>;/,
    );
    expect(module).toContain(
      '"changes.list": { input: ChangesListInput; output: ChangesListOutput; errors: "not_found" };',
    );
  });

  it('refuses a document whose names would collide', () => {
    const doc = structuredClone(openapi);
    doc.paths['/v1/me'].get.operationId = 'me';
    doc.paths['/v1/workspaces'].get.operationId = 'me.list';
    expect(() => generateClientModule(doc)).toThrow(/already/);
  });
});
