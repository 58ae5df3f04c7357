#!/usr/bin/env bash
# Smoke test of memo-mcp through MCP Inspector's CLI (needs Node.js >= 20 and npx; fetches
# the Inspector from npm on first use). Not run by CI.
#
#   scripts/inspector-smoke.sh [NOTES_DIR] [QUERY]
#
# Lists the tools, then calls memo_search. The server command is `.venv/bin/memo-mcp` when
# the repository has a .venv, else `memo-mcp` from PATH; override it with MEMO_MCP_CMD,
# e.g. MEMO_MCP_CMD="uvx --from . memo-mcp". MEMO_MODEL_DIR / MEMO_CACHE_DIR, when set, are
# passed on to the server (the Inspector does not pass its own environment through).
set -euo pipefail

INSPECTOR="@modelcontextprotocol/inspector@2.12.0"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
notes="$(cd "${1:-$repo/examples/notes}" && pwd)"
query="${2:-как восстановить бэкап}"

if [[ -n "${MEMO_MCP_CMD:-}" ]]; then
    read -r -a server <<<"$MEMO_MCP_CMD"
elif [[ -x "$repo/.venv/bin/memo-mcp" ]]; then
    server=("$repo/.venv/bin/memo-mcp")
else
    server=(memo-mcp)
fi

env_args=()
for var in MEMO_MODEL_DIR MEMO_CACHE_DIR; do
    if [[ -n "${!var:-}" ]]; then env_args+=(-e "$var=${!var}"); fi
done

# Keep the Inspector's server catalog out of ~/.mcp-inspector.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
export MCP_CATALOG_PATH="$scratch/mcp.json"

inspect() {
    npx -y "$INSPECTOR" --cli --cwd "$repo" "${env_args[@]}" "${server[@]}" "$@"
}

echo "== tools/list (${server[*]})"
inspect --method tools/list
echo
echo "== tools/call memo_search path=$notes query=$query k=2"
inspect --method tools/call --tool-name memo_search \
    --tool-arg "path=$notes" --tool-arg "query=$query" --tool-arg k=2
