import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLIENT_GENERATED_PATH, generateClientModule } from '../../../scripts/generate-client';
import { generatedArtefacts, ROOT } from '../../../scripts/generate-schema';
import { OPERATION_TABLE } from '../src/generated';
import { documentOperations, withFeedOperation } from './document-operations';

const openapi = JSON.parse(readFileSync(join(ROOT, 'schema/openapi.json'), 'utf8'));

describe('generated client', () => {
  it('is committed and up to date with schema/openapi.json (run `pnpm generate`)', () => {
    const committed = readFileSync(join(ROOT, CLIENT_GENERATED_PATH), 'utf8');
    expect(committed === generateClientModule(openapi), `${CLIENT_GENERATED_PATH} is stale`).toBe(true);
    expect(generatedArtefacts()[CLIENT_GENERATED_PATH] === committed).toBe(true);
  });

  it('has one table entry per operation of the document, with its method, path and headers', () => {
    const fromDoc = documentOperations(openapi);
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
    const doc = withFeedOperation(openapi, 'changes.list', '/v1/changes', 'changes');
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
