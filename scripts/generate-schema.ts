import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildOpenApi, type Json, sortKeysDeep } from '../packages/catalog/src/openapi';
import { distributionManifest } from '../packages/ledger/src/distribution';
import { printGraphqlSchema } from '../services/gateway/src/graphql/print-schema';
import { CLIENT_GENERATED_PATH, generateClientModule } from './generate-client';
import { generatePythonModule, PYTHON_CLIENT_GENERATED_PATH } from './generate-python-client';

/** The repository root (this file lives in `scripts/`). */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Deterministic JSON: keys sorted recursively, 2-space indent, trailing newline. */
export function stableJson(value: Json): string {
  return `${JSON.stringify(sortKeysDeep(value), null, 2)}\n`;
}

/**
 * Every generated, committed artefact: path relative to the repository root -> exact content.
 * The script writes them; the tests compare them with what is committed.
 */
export function generatedArtefacts(): Record<string, string> {
  const openapi = stableJson(buildOpenApi());
  return {
    'schema/openapi.json': openapi,
    'schema/schema.graphql': printGraphqlSchema(),
    // Where each ledger table lives on a cluster distributed by workspace (docs/scale-out.md).
    'schema/distribution.json': stableJson(distributionManifest() as Json),
    // The clients are generated from the document exactly as committed, not from the catalog directly.
    [CLIENT_GENERATED_PATH]: generateClientModule(JSON.parse(openapi)),
    [PYTHON_CLIENT_GENERATED_PATH]: generatePythonModule(JSON.parse(openapi)),
  };
}

function main(): void {
  for (const [relative, content] of Object.entries(generatedArtefacts())) {
    const target = join(ROOT, relative);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
    console.log(`wrote ${relative}`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
