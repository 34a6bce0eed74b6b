#!/usr/bin/env bash
# The same feed as a GraphQL subscription over server-sent events: after the replay from AFTER,
# each change arrives as it commits, one `data:` line per page. Needs TMS_URL, TOKEN and WS.
set -euo pipefail
QUERY='subscription($after: SafeInt) {
  changes(after: $after) { nextAfter changes { sequence operation subjects { type id namespaceId } } }
}'
curl -sfN "$TMS_URL/graphql" -H "Authorization: Bearer $TOKEN" -H "X-Service-Workspace: $WS" \
  -H 'Content-Type: application/json' -H 'Accept: text/event-stream' \
  -d "$(jq -nc --arg query "$QUERY" --argjson after "${AFTER:-0}" '{query: $query, variables: {after: $after}}')"
