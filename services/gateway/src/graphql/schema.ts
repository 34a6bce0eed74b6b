import type { GraphQLSchema } from 'graphql';
import { builder } from './builder';
import './types/SafeInt';
import './types/Actor';
import './types/Attestation';
import './types/Change';
import './types/ChangePage';
import './types/ChangeSubject';
import './types/Commit';
import './types/Credential';
import './types/Enrollment';
import './types/Evidence';
import './types/EvidenceDeletionReceipt';
import './types/Grant';
import './types/GrantTarget';
import './types/Installation';
import './types/Invalidation';
import './types/Me';
import './types/Member';
import './types/Memory';
import './types/MemoryDeletionReceipt';
import './types/MemoryListItem';
import './types/MemoryRead';
import './types/MemoryRevision';
import './types/MemoryView';
import './types/Namespace';
import './types/Verification';
import './types/Webhook';
import './types/Workspace';
import './operations/reads';
import './operations/changes';
import { registerCatalogFields } from './operations/catalog-fields';

builder.queryType({ description: 'Reads: one field per read operation of the catalog.' });
builder.mutationType({ description: 'Writes: one field per write operation of the catalog.' });
builder.subscriptionType({ description: 'Streams over server-sent events: the change feed as it commits.' });
registerCatalogFields();

let schema: GraphQLSchema | null = null;

/** The GraphQL schema (built once per process; it holds no request state). */
export function graphqlSchema(): GraphQLSchema {
  schema ??= builder.toSchema();
  return schema;
}
