#!/usr/bin/env bash
# Benchmarks `beckon serve` (issue 4, point 8): builds release, and for each mode starts a fresh
# server on a temporary SQLite file (configured through BECKON_* environment variables, as
# scripts/crash-durability.py does), runs `beckon bench server --mode MODE` against it on
# loopback, and stops the server by its PID.
#
#   scripts/bench-server.sh [MODE...]          # default: accept latency idle
#
# Extra arguments per mode: ACCEPT_ARGS, LATENCY_ARGS, IDLE_ARGS (e.g. IDLE_ARGS="--sessions 19000").
# BECKON_BIN skips the build and uses that binary.
set -euo pipefail
cd "$(dirname "$0")/.."

MODES=("$@")
[ ${#MODES[@]} -eq 0 ] && MODES=(accept latency idle)

if [ -z "${BECKON_BIN:-}" ]; then
    swift build -c release --product beckon --scratch-path .build-bench
    BECKON_BIN=.build-bench/release/beckon
fi

# Idle sessions need a file descriptor each, on both sides.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
echo "open files limit: $(ulimit -n)"

SECRET="bench-user-token-secret-0123456789abcdef"
ADMIN="bench-admin-token-0123456789abcdef0123456"
WORK=$(mktemp -d /tmp/beckon-bench.XXXXXX)
SERVER_PID=""

stop_server() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID"
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    SERVER_PID=""
}
trap 'stop_server; rm -rf "$WORK"' EXIT

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_server() {  # $1: name of the run
    PORT=$(free_port)
    BECKON_HTTP_PORT=$PORT BECKON_DATABASE_PATH="$WORK/$1.sqlite" BECKON_ADMIN_TOKEN=$ADMIN \
        BECKON_APPS_IDS=chat BECKON_APPS_CHAT_BUNDLE_ID=com.example.chat \
        BECKON_APPS_CHAT_TEAM_ID=TEAM123456 BECKON_APPS_CHAT_USER_TOKEN_SECRET=$SECRET \
        "$BECKON_BIN" serve >"$WORK/$1.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 200); do
        if curl -fsS "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; then return 0; fi
        kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/$1.log"; echo "the server exited" >&2; exit 1; }
        sleep 0.05
    done
    echo "the server did not answer /health" >&2
    exit 1
}

for MODE in "${MODES[@]}"; do
    case "$MODE" in
        accept) EXTRA=${ACCEPT_ARGS:-} ;;
        latency) EXTRA=${LATENCY_ARGS:-} ;;
        idle) EXTRA=${IDLE_ARGS:-} ;;
        *) echo "unknown mode $MODE (accept, latency, idle)" >&2; exit 2 ;;
    esac
    echo "== $MODE"
    start_server "$MODE"
    # shellcheck disable=SC2086
    "$BECKON_BIN" bench server --mode "$MODE" --url "http://127.0.0.1:$PORT" --admin-token "$ADMIN" \
        --app chat --user-token-secret "$SECRET" --server-pid "$SERVER_PID" $EXTRA
    stop_server
done
