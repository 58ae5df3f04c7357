#!/usr/bin/env bash
# Smoke test of memo-mcp through MCP Inspector's CLI (needs Node.js >= 22.19, the
# Inspector's own `engines`, and npx; fetches the Inspector from npm on first use). Not run
# by CI.
#
#   scripts/inspector-smoke.sh [--http] [NOTES_DIR] [QUERY]
#
# NOTES_DIR defaults to the repository's examples/notes. Wrong arguments (an unknown option,
# a NOTES_DIR that is missing or not a folder, more than two) exit 2 with one line, before
# anything runs; a missing tool (Node.js too old, npx, the server command, curl) exits 1.
#
# --http: start `memo-mcp --http` on a free loopback port with a fresh MEMO_TOKEN, and run
# the Inspector against http://127.0.0.1:PORT/mcp with `--header "Authorization: Bearer …"`
# (needs curl); the server is stopped at the end.
#
# Lists the tools, then calls memo_search. The server command is `.venv/bin/memo-mcp` when
# the repository has a .venv, else `memo-mcp` from PATH; override it with MEMO_MCP_CMD,
# e.g. MEMO_MCP_CMD="uvx --from . memo-mcp". MEMO_MODEL_DIR / MEMO_CACHE_DIR, when set, are
# passed on to the server (the Inspector does not pass its own environment through).
set -euo pipefail

INSPECTOR="@modelcontextprotocol/inspector@2.12.0"
NODE_MIN=(22 19) # the Inspector's engines: node >= 22.19.0
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
usage="usage: scripts/inspector-smoke.sh [--http] [NOTES_DIR] [QUERY]"

refuse() { # one line on stderr, then exit with the given status
    echo "inspector-smoke: $2" >&2
    exit "$1"
}

http=0
if [[ "${1:-}" == "--http" ]]; then
    http=1
    shift
fi
if [[ "${1:-}" == -* ]]; then refuse 2 "unknown option $1; $usage"; fi
if (($# > 2)); then refuse 2 "too many arguments; $usage"; fi
notes="${1:-$repo/examples/notes}"
if [[ ! -e "$notes" ]]; then refuse 2 "no such folder: $notes"; fi
if [[ ! -d "$notes" ]]; then refuse 2 "not a folder: $notes"; fi
notes="$(cd "$notes" && pwd)"
query="${2:-как восстановить бэкап}"

node_want="the Inspector needs Node.js >= ${NODE_MIN[0]}.${NODE_MIN[1]}"
node_version="$(node --version 2>/dev/null)" || refuse 1 "Node.js not found; $node_want"
if [[ ! "$node_version" =~ ^v([0-9]+)\.([0-9]+) ]] ||
    ((BASH_REMATCH[1] < NODE_MIN[0] ||
        (BASH_REMATCH[1] == NODE_MIN[0] && BASH_REMATCH[2] < NODE_MIN[1]))); then
    refuse 1 "Node.js $node_version is too old; $node_want"
fi
command -v npx >/dev/null || refuse 1 "npx not found (it comes with Node.js's npm)"

if [[ -n "${MEMO_MCP_CMD:-}" ]]; then
    read -r -a server <<<"$MEMO_MCP_CMD"
elif [[ -x "$repo/.venv/bin/memo-mcp" ]]; then
    server=("$repo/.venv/bin/memo-mcp")
else
    server=(memo-mcp)
fi
command -v "${server[0]}" >/dev/null ||
    refuse 1 "${server[0]} not found: install memo (see the README) or set MEMO_MCP_CMD"
if ((http)) && ! command -v curl >/dev/null; then refuse 1 "curl not found (--http needs it)"; fi

env_args=()
for var in MEMO_MODEL_DIR MEMO_CACHE_DIR; do
    if [[ -n "${!var:-}" ]]; then env_args+=(-e "$var=${!var}"); fi
done

# Keep the Inspector's server catalog out of ~/.mcp-inspector.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
export MCP_CATALOG_PATH="$scratch/mcp.json"

inspect() {
    # --root: memo-mcp may use only the notes folder under test (its default is $HOME).
    # ${a[@]+...}: bash 3.2 (macOS's) calls an empty array unbound under `set -u`.
    npx -y "$INSPECTOR" --cli --cwd "$repo" ${env_args[@]+"${env_args[@]}"} "${server[@]}" \
        --root "$notes" "$@"
}

if ((http)); then
    py="$repo/.venv/bin/python"
    [[ -x "$py" ]] || py=python3
    port="$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    token="$("$py" -c 'import secrets; print(secrets.token_urlsafe(24))')"
    url="http://127.0.0.1:$port/mcp"
    MEMO_TOKEN="$token" "${server[@]}" --http --port "$port" --root "$notes" \
        2>"$scratch/server.log" &
    server_pid=$!
    trap 'kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; rm -rf "$scratch"' EXIT
    for _ in $(seq 100); do
        curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
        kill -0 "$server_pid" 2>/dev/null || { cat "$scratch/server.log" >&2; exit 1; }
        sleep 0.1
    done
    echo "== GET /health"
    curl -sf "http://127.0.0.1:$port/health"
    echo
    inspect() {
        npx -y "$INSPECTOR" --cli "$url" --transport http \
            --header "Authorization: Bearer $token" "$@"
    }
    server=("$url" "(bearer token)")
fi

echo "== tools/list (${server[*]})"
inspect --method tools/list
echo
echo "== tools/call memo_search path=$notes query=$query k=2"
inspect --method tools/call --tool-name memo_search \
    --tool-arg "path=$notes" --tool-arg "query=$query" --tool-arg k=2
echo
echo "== resources/read memo://collections"
inspect --method resources/read --uri memo://collections
echo
echo "== prompts/list"
inspect --method prompts/list
