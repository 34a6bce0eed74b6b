/** What a client's operation table must say about each operation, read from the OpenAPI document itself. */
export interface DocumentOperation {
  method: string;
  path: string;
  idempotent: boolean;
  workspace: boolean;
}

// biome-ignore lint/suspicious/noExplicitAny: the document is walked as plain JSON.
type Doc = any;

/**
 * Every operation of `openapi` by its operationId. Headers are told by name, not by component:
 * X-Service-Workspace has two components (optional, and required where only workspace admins may call).
 */
export function documentOperations(openapi: Doc): Record<string, DocumentOperation> {
  const out: Record<string, DocumentOperation> = {};
  for (const [path, item] of Object.entries<Record<string, { operationId: string; parameters: { $ref?: string }[] }>>(
    openapi.paths,
  )) {
    for (const [method, op] of Object.entries(item)) {
      const headers = op.parameters
        .map((p) => openapi.components.parameters[(p.$ref ?? '').replace('#/components/parameters/', '')])
        .filter((p) => p?.in === 'header')
        .map((p) => p.name);
      out[op.operationId] = {
        method: method.toUpperCase(),
        path,
        idempotent: headers.includes('Idempotency-Key'),
        workspace: headers.includes('X-Service-Workspace'),
      };
    }
  }
  return out;
}

/**
 * A copy of `openapi` with one more operation: a feed `GET <path>` named `name`, paged by `after`
 * (`next_after`), its items (`{sequence}`) under `items`, answering 404 besides. What a generator
 * must pick up with no code of its own.
 */
export function withFeedOperation(openapi: Doc, name: string, path: string, items: string): Doc {
  const doc = structuredClone(openapi);
  doc.paths[path] = {
    get: {
      operationId: name,
      summary: 'Items after a sequence.',
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
                  [items]: {
                    type: 'array',
                    items: { type: 'object', properties: { sequence: { type: 'integer' } } },
                  },
                  next_after: { type: 'integer' },
                  head_sequence: { type: 'integer' },
                },
                required: [items, 'next_after', 'head_sequence'],
              },
            },
          },
        },
        '404': { $ref: '#/components/responses/NotFound' },
      },
    },
  };
  return doc;
}
