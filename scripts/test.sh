#!/usr/bin/env bash
# Every test: the Swift suites, real third-party APNs clients against the emulator, the crash
# test (SIGKILL during a load of posts; nothing acknowledged may be lost), and the demo of the
# whole path (a post becomes an emulator push, and the reconnect after it a measured wake), with
# PostgreSQL the demo again and three nodes on one database, and every built-in simulator
# scenario (timelines in artifacts/simulations/).
set -euo pipefail
cd "$(dirname "$0")/.."
# Every log the suite writes stays in one directory (the scripts' servers log at trace, the Swift
# tests' every record goes to one file) and is scanned for secrets in full at the end (issue 15).
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/beckon-test-logs.XXXXXX")
export TMPDIR="$LOGS" BECKON_TEST_LOG_FILE="$LOGS/swift-test.log" BECKON_LOG_LEVEL=trace
# Every HTTP answer the Swift tests see is recorded and checked against openapi.yaml.
export BECKON_TEST_RESPONSES_FILE="$LOGS/responses.jsonl"
echo "logs of this run: $LOGS"
swift test 2>&1 | tee "$LOGS/swift-test.out"
python3 scripts/check-responses.py --min-responses 300 "$BECKON_TEST_RESPONSES_FILE"
python3 scripts/check-citations.py
scripts/apns-interop.sh
# Every target depends on what it imports from the package (an Xcode app that links one product
# gets only the targets that product declares).
python3 scripts/check-imports.py
python3 scripts/check-folders.py BeckonServer BeckonDelivery BeckonStore docs/design.md
python3 scripts/check-json.py
swift build --product beckon >/dev/null
# The iOS adapters and docs/client-sdk.md's samples against a stand-in for Apple's SDK, as app and extension.
scripts/typecheck-apple.sh
# An app's view of the package: with `traits: []` it resolves GRDB and swift-crypto only, and builds.
scripts/consumer-check.sh
BECKON="$(swift build --show-bin-path)/beckon"
python3 scripts/crash-durability.py "$BECKON"
# Three SIGKILLs under mixed load: nothing acknowledged lost or seen twice, every decided push
# sent, rule 5 across a crash (docs/reliability.md; --kills 20 is the long version).
python3 scripts/crash-soak.py "$BECKON"
# Every fault Apple is known for, alone and combined: each push ends sent or failed, no retry
# storm, memory flat, and SIGTERM within shutdown.grace-seconds with sends hung.
python3 scripts/apns-fault-soak.py "$BECKON"
# Hostile WebSocket input on sync sessions while well-behaved ones carry on (100,000 frames;
# --frames 1000000 is the long version); beside it, each on a server of its own, the ping timeout
# and the memory of a client that sends pings and never reads (--mib 64 is the long version).
python3 scripts/sync-ping-timeout.py "$BECKON" & PING_TIMEOUT=$!
python3 scripts/sync-unread-pings.py "$BECKON" & UNREAD_PINGS=$!
python3 scripts/sync-hostile-input.py "$BECKON"
wait "$PING_TIMEOUT"
wait "$UNREAD_PINGS"
# schemathesis against openapi.yaml, each operation with the credential it names (about 1,400
# cases; --cases 10000 is the long version).
python3 scripts/fuzz-api.py "$BECKON"
# Overload and resource faults, small scale (--scale full is the long version), each case on
# servers of its own.
for case in descriptors slowloris connections reconnect-storm post-flood storage; do
    python3 "scripts/overload-$case.py" "$BECKON"
done
python3 scripts/demo.py "$BECKON"
# The operator's status page in headless Chromium, over the data of a real run (the driver is
# self-tested first); the screenshot lands in artifacts/.
python3 scripts/chromium-selftest.py
python3 scripts/status-page.py "$BECKON"
# Beckon as an XEP-0357 app server behind a real Prosody with mod_cloud_notify: the harness's own
# self-test first (what Prosody publishes, with a stub component), then Beckon in its place.
python3 scripts/xmpp-harness-selftest.py
python3 scripts/xmpp-push.py "$BECKON"
if [ -n "${BECKON_TEST_POSTGRES_URL:-}" ]; then
    # The same path, from a post to a measured wake, with the store on PostgreSQL (issue 13).
    DB="beckon_demo_$$"
    psql "$BECKON_TEST_POSTGRES_URL" -qc "CREATE DATABASE $DB"
    BECKON_DATABASE_URL="${BECKON_TEST_POSTGRES_URL%/*}/$DB" python3 scripts/demo.py "$BECKON"
    psql "$BECKON_TEST_POSTGRES_URL" -qc "DROP DATABASE $DB WITH (FORCE)"
    # Three nodes on one database: live delivery across nodes, one session per device, and a
    # node killed with SIGKILL under load (docs/cluster.md).
    python3 scripts/multi-node.py "$BECKON"
fi
scripts/simulate.sh "$BECKON"
python3 scripts/scan-logs.py --min-lines 2000 "$LOGS"
