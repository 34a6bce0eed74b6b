#!/usr/bin/env bash
# Follow a workspace's change feed with curl. Needs TMS_URL, TOKEN and WS; AFTER resumes from a
# persisted next_after (default 0); UNTIL_CAUGHT_UP=1 stops at the head instead of waiting on.
set -euo pipefail
AFTER=${AFTER:-0}
while :; do
  # wait_ms: with no commit after AFTER yet, the answer waits up to 10 s for one.
  PAGE=$(curl -sf "$TMS_URL/v1/changes?after=$AFTER&limit=100&wait_ms=10000" \
    -H "Authorization: Bearer $TOKEN" -H "X-Service-Workspace: $WS")
  jq -c '.changes[] | {sequence, operation, subjects: [.subjects[] | "\(.type) \(.id)"]}' <<<"$PAGE"
  # Persist next_after: it moves past commits you may not see too, and a restart misses nothing.
  AFTER=$(jq .next_after <<<"$PAGE")
  if [ -n "${UNTIL_CAUGHT_UP:-}" ] && [ "$AFTER" -ge "$(jq .head_sequence <<<"$PAGE")" ]; then break; fi
done
