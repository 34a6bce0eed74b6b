import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OPERATIONS } from '@tms/catalog';
import { describe, expect, it } from 'vitest';
import { generatedArtefacts, ROOT } from '../../../scripts/generate-schema';
import { fieldNameOf } from '../src/graphql/operations/catalog-fields';
import { printGraphqlSchema } from '../src/graphql/print-schema';
import { graphqlSchema } from '../src/graphql/schema';

describe('GraphQL schema artefact', () => {
  it('schema/schema.graphql is the SDL printed from the builder, sorted (run `pnpm generate` when this fails)', () => {
    const printed = printGraphqlSchema();
    expect(generatedArtefacts()['schema/schema.graphql']).toBe(printed);
    const committed = readFileSync(join(ROOT, 'schema/schema.graphql'), 'utf8');
    expect(committed === printed, 'schema/schema.graphql is stale: run `pnpm generate` and commit it').toBe(true);
  });

  it('has a field for every catalog operation: reads as queries, writes as mutations with an idempotency key', () => {
    const schema = graphqlSchema();
    const query = schema.getQueryType()?.getFields() ?? {};
    const mutation = schema.getMutationType()?.getFields() ?? {};
    const reads: Record<string, string> = {
      'me.get': 'me',
      'workspaces.list': 'workspaces',
      'namespaces.list': 'namespaces',
      'namespaces.get': 'namespace',
      'evidence.get': 'evidence',
      'memories.get': 'memory',
      'memories.history': 'memoryHistory',
      'memories.list': 'memories',
    };
    for (const operation of OPERATIONS) {
      const name = reads[operation.name] ?? fieldNameOf(operation);
      const field = operation.mutates ? mutation[name] : query[name];
      expect(field, `${operation.name} has no GraphQL field ${name}`).toBeDefined();
      const key = field?.args.find((arg) => arg.name === 'idempotencyKey');
      expect(key !== undefined, `${operation.name}: idempotencyKey argument`).toBe(operation.idempotent);
      if (key) expect(String(key.type)).toBe('String!');
    }
  });
});
