import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import RelayPlugin from '@pothos/plugin-relay';
import type { GraphQLContext } from './context';

/**
 * The Pothos schema builder: configuration only. Every type lives in its own file under
 * `types/`, the operation fields in `operations/`; `schema.ts` assembles them.
 *
 * - Relay connections without the global `Node` machinery: ids are the ledger's own ids, and
 *   connection cursors are the domain's opaque cursors (`after` = the `/v1` `cursor`).
 * - Edge cursors are nullable: the domain issues one cursor per page, so only the last edge of a
 *   page that has a successor carries it (it equals `pageInfo.endCursor`).
 * - Fields are non-null unless they may be absent; fields read through loaders or another
 *   operation are nullable, so that their failure leaves the rest of the answer.
 * - Complexity: every field costs 1; list fields multiply their selection by their bound (see
 *   the fields), connection edges by 1 since the connection's `first` already multiplies.
 */
export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  Scalars: {
    ID: { Input: string; Output: string };
    SafeInt: { Input: number; Output: number };
  };
  DefaultFieldNullability: false;
  DefaultEdgesNullability: false;
  DefaultNodeNullability: false;
}>({
  plugins: [RelayPlugin, ComplexityPlugin],
  defaultFieldNullability: false,
  relay: {
    nodeQueryOptions: false,
    nodesQueryOptions: false,
    cursorFieldOptions: { nullable: true as false },
    edgesFieldOptions: { nullable: false, complexity: { field: 1, multiplier: 1 } },
    nodeFieldOptions: { nullable: false },
    pageInfoTypeOptions: { description: 'Forward paging only: pass `endCursor` as `after` while `hasNextPage`.' },
  },
  complexity: { defaultComplexity: 1, defaultListMultiplier: 10 },
});
