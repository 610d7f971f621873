#!/usr/bin/env bash
# Measures the APNs client (`beckon bench apns`) and h2load side by side, against the same
# APNs emulator, in one run. Release build; loopback only. The emulator allows 1000 streams from
# the start (Apple allows 1 until a valid token), because h2load opens all its streams before it
# reads the server's SETTINGS and would see the extra ones refused. Usage:
#   scripts/bench-apns.sh [COUNT] [CONNECTIONS] [STREAMS_PER_CONNECTION]
# SCRATCH_PATH picks the build directory (default .build); BENCH_ARGS adds options to
# `beckon bench apns` (e.g. BENCH_ARGS=--executor-preference).
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${1:-200000}
CONNECTIONS=${2:-8}
STREAMS=${3:-125}
PORT=${PORT:-22197}
WORK=$(mktemp -d)
EMULATOR=; trap 'kill $EMULATOR 2>/dev/null || true; rm -rf "$WORK"' EXIT

command -v h2load >/dev/null || { echo "h2load missing: apt-get install nghttp2-client" >&2; exit 1; }
SCRATCH_PATH=${SCRATCH_PATH:-.build}
swift build -c release --product beckon --scratch-path "$SCRATCH_PATH" >/dev/null
BECKON=$(swift build -c release --scratch-path "$SCRATCH_PATH" --show-bin-path)/beckon

openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$WORK/AuthKey.p8" 2>/dev/null
TEAM=TEAM123456; KEY=KEY1234567; TOPIC=com.example.bench
"$BECKON" apns-emulator --listen 127.0.0.1:$PORT --auth-key "$KEY:$TEAM:$WORK/AuthKey.p8" \
    --topic $TOPIC --auto-register --initial-streams 1000 --state-dir "$WORK" >"$WORK/emulator.log" 2>&1 &
EMULATOR=$!
for _ in $(seq 50); do grep -q "CA certificate" "$WORK/emulator.log" 2>/dev/null && break; sleep 0.2; done
CA="$WORK/ca.pem"

echo "== beckon bench apns (client: $CONNECTIONS connections, $((CONNECTIONS * STREAMS)) in flight)"
"$BECKON" bench apns --host 127.0.0.1 --port $PORT --ca-file "$CA" \
    --team-id $TEAM --key-id $KEY --key-file "$WORK/AuthKey.p8" --topic $TOPIC \
    --connections "$CONNECTIONS" --concurrency $((CONNECTIONS * STREAMS)) --count "$COUNT" ${BENCH_ARGS:-}

# The same request h2load sends: same headers, same 100-byte alert body, same token auth.
JWT=$("$BECKON" jwt --team-id $TEAM --key-id $KEY --key-file "$WORK/AuthKey.p8")
TOKEN=$(openssl rand -hex 32)
printf '{"aps":{"alert":{"body":"%s"}}}' "$(head -c 100 /dev/zero | tr '\0' x)" >"$WORK/body.json"
echo "== h2load (reference: $CONNECTIONS connections x $STREAMS streams)"
h2load -n "$COUNT" -c "$CONNECTIONS" -m "$STREAMS" -t 1 \
    -H "authorization: bearer $JWT" -H "apns-topic: $TOPIC" -H "apns-push-type: alert" \
    -H "apns-priority: 10" -d "$WORK/body.json" \
    "https://127.0.0.1:$PORT/3/device/$TOKEN" | grep -E "finished in|requests:|status codes:|time for request:"
