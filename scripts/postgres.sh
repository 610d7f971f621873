#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on 127.0.0.1 for the tests and benchmarks (issue 13): never the
# system's cluster, never a port of its own choosing that is taken, gone after `stop`.
#
#   scripts/postgres.sh start     # prints the URL: postgres://beckon@127.0.0.1:PORT/beckon
#   scripts/postgres.sh url       # the URL of the running cluster
#   scripts/postgres.sh stop      # stops it and removes its files
#
# BECKON_PG_DIR (default /tmp/beckon-pg) holds the cluster. BECKON_PG_FAST=1 turns fsync off
# (tests only: a benchmark must keep it on). PostgreSQL refuses to run as root, so as root the
# cluster belongs to the `postgres` user Debian's package creates.
set -euo pipefail
DIR=${BECKON_PG_DIR:-/tmp/beckon-pg}
BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$BIN" ] || BIN=$(dirname "$(command -v pg_ctl)")
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-}" in
start)
    if [ -f "$DIR/url" ] && as_owner "$BIN/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1; then
        cat "$DIR/url"
        exit 0
    fi
    rm -rf "$DIR"
    mkdir -p "$DIR"
    [ "$(id -u)" -eq 0 ] && chown postgres "$DIR"
    PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    as_owner "$BIN/initdb" -D "$DIR/data" -U beckon --auth=trust -E UTF8 --no-locale >"$DIR/initdb.log" 2>&1
    OPTIONS="-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c max_connections=200"
    [ "${BECKON_PG_FAST:-0}" = 1 ] && OPTIONS="$OPTIONS -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    as_owner "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -o "$OPTIONS" -w start >/dev/null
    as_owner "$BIN/createdb" -h 127.0.0.1 -p "$PORT" -U beckon beckon
    echo "postgres://beckon@127.0.0.1:$PORT/beckon" | tee "$DIR/url"
    ;;
url)
    cat "$DIR/url"
    ;;
stop)
    [ -d "$DIR/data" ] && as_owner "$BIN/pg_ctl" -D "$DIR/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$DIR"
    ;;
*)
    echo "usage: $0 start|url|stop" >&2
    exit 2
    ;;
esac
