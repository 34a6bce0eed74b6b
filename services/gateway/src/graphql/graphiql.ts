import { workspaceIdSchema } from '@tms/catalog';
import { GRAPHQL_PATH } from './yoga';

/** The query GraphiQL opens with: it works for any signed-in caller, no workspace needed. */
export const EXAMPLE_QUERY = `# Temporal Memory Service: GraphQL explorer.
# Requests carry the headers of the Headers tab below: a bearer token, and
# "X-Service-Workspace": "ws_..." to read the namespaces and memories of a
# workspace (or open /graphql?workspace=ws_... to have it filled in).
query Example {
  me {
    actor { id }
    callerKind
  }
  workspaces(first: 10) {
    edges { node { id name createdAt } }
    enrollment { canCreateWorkspace }
  }
}
`;

export interface GraphiqlOptions {
  /** GRAPHIQL=0 turns the explorer (and introspection) off. */
  enabled: boolean;
  /** DEV_AUTH=1: a fresh dev-admin session token for the header editor. */
  devToken: (() => Promise<string>) | null;
}

/**
 * The GraphiQL page (its scripts are inlined: no CDN). It holds no data: every request it
 * makes is an ordinary authenticated POST to /graphql, and the schema it explores comes from
 * introspection, which only admins may run. With DEV_AUTH=1 (never in production) the header
 * editor is pre-filled with a working dev-admin token.
 */
export async function graphiqlPage(url: URL, options: GraphiqlOptions): Promise<string> {
  const headers: Record<string, string> = {
    Authorization: options.devToken ? `Bearer ${await options.devToken()}` : 'Bearer <access token>',
  };
  const workspace = url.searchParams.get('workspace');
  if (workspace && workspaceIdSchema.safeParse(workspace).success) headers['X-Service-Workspace'] = workspace;
  // Loaded on the first page view, not at start: its inlined scripts are ~30 MiB of strings in
  // the heap, which a gateway that never serves the page (API traffic only) should not carry.
  const { renderGraphiQL } = await import('@graphql-yoga/render-graphiql');
  return renderGraphiQL({
    title: 'Temporal Memory Service · GraphQL',
    endpoint: GRAPHQL_PATH,
    method: 'POST',
    useGETForQueries: false,
    headers: JSON.stringify(headers, null, 2),
    defaultQuery: EXAMPLE_QUERY,
    shouldPersistHeaders: false,
    defaultEditorToolsVisibility: 'headers',
  });
}
