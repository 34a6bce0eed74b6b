import { describe, expect, it } from 'vitest';
import { parseEnv } from '../src/env';
import { runsIndexer } from '../src/mcp';

// services/gateway/test/mcp-stdio-recall.test.ts runs svc mcp on both ledgers through recall.
describe('which ledgers make svc mcp index', () => {
  it('always the embedded one; Postgres by default and unless INDEXER=external, as the gateway', () => {
    expect(runsIndexer(parseEnv({}))).toBe(true);
    expect(runsIndexer(parseEnv({ INDEXER: 'external' }))).toBe(true);
    expect(runsIndexer(parseEnv({ DATABASE_URL: 'postgres://127.0.0.1/x' }))).toBe(true);
    expect(runsIndexer(parseEnv({ DATABASE_URL: 'postgres://127.0.0.1/x', INDEXER: 'external' }))).toBe(false);
    expect(() => parseEnv({ INDEXER: 'sometimes' })).toThrow(/INDEXER/);
  });
});
