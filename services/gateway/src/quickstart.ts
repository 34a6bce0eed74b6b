/**
 * The DEV_AUTH=1 banner: a working token and a copy-paste walk through the core operations
 * (needs curl, jq and sha256sum). A test runs this exact script against the server.
 */
export function quickstartBanner(
  baseUrl: string,
  token: string,
  pages: { console: boolean; graphiql: boolean },
): string {
  // The browser pages that open signed in as the dev user (CONSOLE=off and GRAPHIQL=0 drop them).
  const urls = [...(pages.console ? [`${baseUrl}/console`] : []), ...(pages.graphiql ? [`${baseUrl}/graphql`] : [])];
  const browse = urls.length > 0 ? `\nIn a browser, signed in as the dev user: ${urls.join(' and ')}\n` : '';
  return `
================ Temporal Memory Service: dev quickstart ================
A session token for the enrolled dev user (valid 12 h; \`pnpm -s svc token\` prints a fresh one):

export TMS_URL=${baseUrl}
export TOKEN=${token}
${browse}
# Example calls (copy into a shell; they need curl, jq and sha256sum):
${quickstartScript()}
=========================================================================
`;
}

export function quickstartScript(): string {
  return `AUTH="Authorization: Bearer $TOKEN"; JSON="Content-Type: application/json"
WS=$(curl -sf -X POST "$TMS_URL/v1/workspaces" -H "$AUTH" -H "$JSON" -H "Idempotency-Key: ws-$RANDOM$RANDOM" -d '{"name":"demo"}' | jq -r .workspace.id)
NS=$(curl -sf -X POST "$TMS_URL/v1/namespaces" -H "$AUTH" -H "$JSON" -H "X-Service-Workspace: $WS" -H "Idempotency-Key: ns-$RANDOM$RANDOM" -d '{"parent_id":null,"name":"people"}' | jq -r .namespace.id)
EXCERPT="Ana said she prefers tea over coffee."
SHA=$(printf '%s' "$EXCERPT" | sha256sum | cut -d' ' -f1)
EV=$(curl -sf -X POST "$TMS_URL/v1/evidence" -H "$AUTH" -H "$JSON" -H "X-Service-Workspace: $WS" -H "Idempotency-Key: ev-$RANDOM$RANDOM" -d "{\\"namespace_id\\":\\"$NS\\",\\"source_locator\\":\\"chat://demo/1\\",\\"content_root_sha256\\":\\"$SHA\\",\\"excerpt\\":\\"$EXCERPT\\"}" | jq -r .evidence.id)
curl -sf -X POST "$TMS_URL/v1/evidence/$EV/verifications" -H "$AUTH" -H "$JSON" -H "X-Service-Workspace: $WS" -H "Idempotency-Key: vf-$RANDOM$RANDOM" -d "{\\"expected_content_root_sha256\\":\\"$SHA\\",\\"expected_excerpt_sha256\\":\\"$SHA\\",\\"verdict\\":\\"verified\\"}" | jq .verification.verdict
MEM=$(curl -sf -X POST "$TMS_URL/v1/memories" -H "$AUTH" -H "$JSON" -H "X-Service-Workspace: $WS" -H "Idempotency-Key: mem-$RANDOM$RANDOM" -d "{\\"namespace_id\\":\\"$NS\\",\\"kind\\":\\"claim\\",\\"text\\":\\"Ana prefers tea.\\",\\"valid_from\\":1700000000,\\"evidence_ids\\":[\\"$EV\\"]}" | jq -r .memory.id)
curl -sf "$TMS_URL/v1/memories/$MEM?include_evidence=true" -H "$AUTH" -H "X-Service-Workspace: $WS" | jq .view.revision`;
}
