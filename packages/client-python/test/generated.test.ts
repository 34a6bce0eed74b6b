import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generatePythonModule, PYTHON_CLIENT_GENERATED_PATH } from '../../../scripts/generate-python-client';
import { generatedArtefacts, ROOT } from '../../../scripts/generate-schema';
import { documentOperations, withFeedOperation } from '../../client/test/document-operations';

/*
 * The Python client's operation layer (src/tms_client/_generated.py) is generated from
 * schema/openapi.json alone: committed fresh, one entry and one method per operation, and a new
 * operation picked up with no code of its own. The pytest suite (scripts/python-tests.mjs) runs it.
 */

const openapi = JSON.parse(readFileSync(join(ROOT, 'schema/openapi.json'), 'utf8'));
const generated = readFileSync(join(ROOT, PYTHON_CLIENT_GENERATED_PATH), 'utf8');

/** `name -> {method, path, idempotent, workspace}` from the generated OPERATIONS table. */
function tableOf(module: string): Record<string, unknown> {
  const entries = module.matchAll(
    /^ {4}"([a-z.]+)": OperationSpec\(\n {8}method="(\w+)",\n {8}path="([^"]+)",[\s\S]*?idempotent=(True|False),[\s\S]*?workspace=(True|False),/gm,
  );
  return Object.fromEntries(
    [...entries].map(([, name, method, path, idempotent, workspace]) => [
      name,
      { method, path, idempotent: idempotent === 'True', workspace: workspace === 'True' },
    ]),
  );
}

describe('generated Python client', () => {
  it('is committed and up to date with schema/openapi.json (run `pnpm generate`)', () => {
    expect(generated === generatePythonModule(openapi), `${PYTHON_CLIENT_GENERATED_PATH} is stale`).toBe(true);
    expect(generatedArtefacts()[PYTHON_CLIENT_GENERATED_PATH] === generated).toBe(true);
  });

  it('has one table entry and one method of each flavour per operation of the document', () => {
    const fromDoc = documentOperations(openapi);
    expect(tableOf(generated)).toEqual(fromDoc);
    for (const name of Object.keys(fromDoc)) {
      // Each method hands its own operation name to the runtime, once per flavour.
      const calls = generated.split(`._call(\n                "${name}",`).length - 1;
      expect(calls, name).toBe(2);
    }
    expect(generated).toContain('    def recall(\n');
    expect(generated).toContain('    async def recall(\n');
    expect(generated).toMatch(/class MemoriesOperations:[\s\S]*?\n {4}def get\(\n {8}self,\n {8}\*,\n {8}id: str,/);
    expect(generated).toContain('        include_evidence: bool | NotGiven = NOT_GIVEN,\n');
    expect(generated).toContain('class AsyncNamespacesGrantsOperations:');
  });

  it('types inputs and outputs as TypedDicts, optional fields NotRequired, closed objects final', () => {
    expect(generated).toMatch(
      /@final\nclass MemoriesCreateInput\(TypedDict\):\n[\s\S]*?\n {4}namespace_id: str\n[\s\S]*?\n {4}valid_to: NotRequired\[float \| None\]\n/,
    );
    expect(generated).toContain(
      'GrantTarget: TypeAlias = "GrantTargetActor | GrantTargetInstallation | GrantTargetCredential"',
    );
    expect(generated).toContain(
      'MemoriesForgetOutput: TypeAlias = "MemoriesForgetOutputWithMemory | MemoriesForgetOutputWithReceipt"',
    );
    // Paged operations iterate over their item type.
    expect(generated).toMatch(
      /operation: Literal\["memories\.list"\],[\s\S]*?\) -> Iterator\[MemoryListItem\]: \.\.\./,
    );
    expect(generated).toMatch(
      /operation: Literal\["memories\.list"\],[\s\S]*?\) -> AsyncIterator\[MemoryListItem\]: \.\.\./,
    );
  });

  it('picks up an operation added to the document with no code of its own (a feed paged by after)', () => {
    const doc = withFeedOperation(openapi, 'things.list', '/v1/things', 'things');
    const module = generatePythonModule(doc);
    expect(tableOf(module)['things.list']).toEqual({
      method: 'GET',
      path: '/v1/things',
      idempotent: false,
      workspace: true,
    });
    expect(module).toContain('pager=Pager(param="after", next="next_after", items="things"),');
    expect(module).toMatch(/class ThingsOperations:[\s\S]*?def list\(\n {8}self,\n {8}\*,\n {8}after: int \| NotGiven/);
    expect(module).toMatch(/class ThingsListOutputThing\(TypedDict\):\n {4}sequence: NotRequired\[int\]\n/);
    expect(module).toMatch(/operation: Literal\["things\.list"\],[\s\S]*?\) -> Iterator\[ThingsListOutputThing\]/);
  });

  it('refuses a document it cannot turn into Python faithfully', () => {
    const keyword = structuredClone(openapi);
    keyword.paths['/v1/me'].get.parameters.unshift({
      name: 'from',
      in: 'query',
      required: false,
      schema: { type: 'string' },
    });
    expect(() => generatePythonModule(keyword)).toThrow(/not a Python identifier/);

    const reserved = structuredClone(openapi);
    reserved.paths['/v1/me'].get.parameters.unshift({
      name: 'request_id',
      in: 'query',
      required: false,
      schema: { type: 'string' },
    });
    expect(() => generatePythonModule(reserved)).toThrow(/collides with a name of the client/);

    const clash = structuredClone(openapi);
    clash.paths['/v1/me'].get.operationId = 'paginate';
    expect(() => generatePythonModule(clash)).toThrow(/name of the client itself/);
  });
});
