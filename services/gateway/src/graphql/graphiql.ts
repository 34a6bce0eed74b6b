import { workspaceIdSchema } from '@tms/catalog';
import { graphiqlAssets } from './graphiql-assets';
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

/** JSON safe inside an inline `<script>`: no `</script>` or `<!--` can close or change it. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string);

/**
 * The GraphiQL page: a small shell (about 2 KB, `no-store`, since it may carry a dev token) that
 * loads the scripts, stylesheet, Monaco workers and icon from /graphql/assets/, each named by its
 * content hash and cached for a year (see graphiql-assets.ts). It holds no data: every request
 * it makes is an ordinary authenticated POST to /graphql, and the schema it explores comes from
 * introspection, which only admins may run. With DEV_AUTH=1 (never in production) the header
 * editor is pre-filled with a working dev-admin token.
 */
export async function graphiqlPage(url: URL, options: GraphiqlOptions): Promise<string> {
  const headers: Record<string, string> = {
    Authorization: options.devToken ? `Bearer ${await options.devToken()}` : 'Bearer <access token>',
  };
  const workspace = url.searchParams.get('workspace');
  if (workspace && workspaceIdSchema.safeParse(workspace).success) headers['X-Service-Workspace'] = workspace;
  const assets = await graphiqlAssets();
  const title = 'Temporal Memory Service · GraphQL';
  const workerUrls = Object.fromEntries(Object.entries(assets.workers).map(([label, asset]) => [label, asset.url]));
  const graphiqlOptions = {
    title,
    endpoint: GRAPHQL_PATH,
    method: 'POST',
    useGETForQueries: false,
    headers: JSON.stringify(headers, null, 2),
    defaultQuery: EXAMPLE_QUERY,
    shouldPersistHeaders: false,
    defaultEditorToolsVisibility: 'headers',
  };
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(title)}</title>
    <link rel="icon" href="${assets.icon.url}" />
    <link rel="stylesheet" href="${assets.stylesheet.url}" />
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>You need to enable JavaScript to run this app.</noscript>
    <div id="root"></div>
    <script>
      // Monaco starts its workers from these (same-origin, cacheable) scripts.
      const workerUrls = ${scriptJson(workerUrls)};
      self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: (_moduleId, label) => workerUrls[label] };
    </script>
    <script src="${assets.script.url}"></script>
    <script>
      YogaGraphiQL.renderYogaGraphiQL(document.querySelector('#root'), ${scriptJson(graphiqlOptions)});
    </script>
  </body>
</html>
`;
}
