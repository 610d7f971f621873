#!/usr/bin/env bash
# Points real third-party APNs clients at `beckon apns-emulator`, changing nothing but host, port
# and trusted CA, and checks Apple's answers (apns.md A.5–A.7):
#   curl --http2 (nghttp2) and Python aioapns (which offers no ALPN):
#   200 + apns-id; 400 BadDeviceToken / DeviceTokenNotForTopic; 403 with a JWT from an unknown key;
#   410 Unregistered with the timestamp of an unregistration done through the control API;
#   and, with curl, certificate-based authentication (a client certificate whose UID is the topic).
# Needs: curl with HTTP/2, openssl, python3 with aioapns (pip install aioapns h2), swift.
# Exits non-zero on the first setup failure, or after all checks if any check failed.
# BECKON_BIN=path/to/beckon uses that binary instead of building one with `swift build`.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d "${TMPDIR:-/tmp}/beckon-interop.XXXXXX")
emulator_pid=""
cleanup() {
    if [ -n "$emulator_pid" ] && kill -0 "$emulator_pid" 2>/dev/null; then
        kill "$emulator_pid" 2>/dev/null || true
        wait "$emulator_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() { echo "apns-interop: $*" >&2; exit 1; }

# --- the emulator binary -------------------------------------------------------------------
beckon="${BECKON_BIN:-}"
if [ -z "$beckon" ]; then
    # Always through SwiftPM (incremental: seconds when up to date), so a stale binary from an
    # older checkout is never the one tested.
    echo "apns-interop: swift build --product beckon"
    swift build --product beckon >/dev/null
    beckon="$(swift build --show-bin-path)/beckon"
fi
[ -x "$beckon" ] || fail "no beckon binary at $beckon"
command -v curl >/dev/null || fail "curl is not installed"
curl -V | grep -q HTTP2 || fail "this curl has no HTTP/2 support"
python3 -c 'import aioapns' 2>/dev/null || fail "python3 cannot import aioapns (pip install aioapns h2)"

# --- keys and tokens -----------------------------------------------------------------------
key_id=ABC123DEFG
team_id=TEAM123456
topic=com.example.interop
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/AuthKey.p8" 2>/dev/null
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/OtherKey.p8" 2>/dev/null
token() { openssl rand -hex 32; }
ok_token=$(token)          # an app of $topic, online, in the sandbox
wrong_env_token=$(token)   # a production token: BadDeviceToken in the sandbox (apns.md G.1)
other_app_token=$(token)   # a token of another app: DeviceTokenNotForTopic (apns.md G.2)
gone_token=$(token)        # unregistered through the control API: 410 (apns.md A.5)

# A provider certificate for certificate-based authentication: UID = the bundle id, as Apple
# issues them (apns.md B.4), from a throwaway client CA.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
    -keyout "$work/client-ca.key" -out "$work/client-ca.pem" -subj "/CN=Interop Client CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/client.key" \
    -out "$work/client.csr" -subj "/UID=$topic/CN=Apple Push Services: $topic" 2>/dev/null
printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n' >"$work/client.ext"
openssl x509 -req -in "$work/client.csr" -CA "$work/client-ca.pem" -CAkey "$work/client-ca.key" \
    -CAcreateserial -days 1 -extfile "$work/client.ext" -out "$work/client.pem" 2>/dev/null

# --- start the emulator on free ports --------------------------------------------------------
"$beckon" apns-emulator --listen 127.0.0.1:0 --control 127.0.0.1:0 --environment sandbox \
    --auth-key "$key_id:$team_id:$work/AuthKey.p8" --topic "$topic" --topic com.example.other \
    --client-ca "$work/client-ca.pem" \
    --state-dir "$work" >"$work/emulator.log" 2>&1 &
emulator_pid=$!
for _ in $(seq 1 100); do
    grep -q "Control API listening" "$work/emulator.log" 2>/dev/null && break
    kill -0 "$emulator_pid" 2>/dev/null || { cat "$work/emulator.log" >&2; fail "the emulator exited"; }
    sleep 0.1
done
port=$(sed -n 's/^APNs emulator .* listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$work/emulator.log")
control=$(sed -n 's/^Control API listening on \(http:[^ ]*\)$/\1/p' "$work/emulator.log")
ca="$work/ca.pem"
[ -n "$port" ] && [ -n "$control" ] && [ -s "$ca" ] || { cat "$work/emulator.log" >&2; fail "the emulator did not start"; }
echo "apns-interop: emulator $beckon on 127.0.0.1:$port, control API $control"

api() {  # METHOD PATH [JSON] -> body on stdout; fails unless 2xx
    if [ $# -ge 3 ]; then
        curl -sS --fail-with-body -X "$1" -H 'content-type: application/json' -d "$3" "$control$2"
    else
        curl -sS --fail-with-body -X "$1" "$control$2"
    fi
}
api POST /devices "{\"token\":\"$ok_token\",\"bundleId\":\"$topic\"}" >/dev/null
api POST /devices "{\"token\":\"$wrong_env_token\",\"bundleId\":\"$topic\",\"environment\":\"production\"}" >/dev/null
api POST /devices "{\"token\":\"$other_app_token\",\"bundleId\":\"com.example.other\"}" >/dev/null
api POST /devices "{\"token\":\"$gone_token\",\"bundleId\":\"$topic\"}" >/dev/null
gone_at=$(api POST "/devices/$gone_token/unregister" | python3 -c 'import json,sys; print(json.load(sys.stdin)["unregisteredAt"])')

failures=0
check() {  # WHAT CONDITION-RESULT(0/1) DETAIL
    if [ "$2" = 0 ]; then echo "ok   $1 -- $3"; else echo "FAIL $1 -- $3"; failures=$((failures + 1)); fi
}

# --- curl --http2 --------------------------------------------------------------------------
jwt=$("$beckon" jwt --team-id "$team_id" --key-id "$key_id" --key-file "$work/AuthKey.p8")
bad_jwt=$("$beckon" jwt --team-id "$team_id" --key-id "$key_id" --key-file "$work/OtherKey.p8")
push() {  # JWT TOKEN [extra curl args...] -> sets status, headers, body
    local auth=$1 device=$2; shift 2
    status=$(curl -sS --http2 --cacert "$ca" -o "$work/body" -D "$work/headers" -w '%{http_code}' \
        -H "authorization: bearer $auth" -H "apns-topic: $topic" -H "apns-push-type: alert" \
        "$@" -d '{"aps":{"alert":"hello from curl"}}' "https://127.0.0.1:$port/3/device/$device")
    headers=$(tr -d '\r' <"$work/headers")
    body=$(cat "$work/body")
}
header() { printf '%s\n' "$headers" | sed -n "s/^$1: //Ip" | head -1; }

push "$jwt" "$ok_token"
id=$(header apns-id)
version=$(printf '%s\n' "$headers" | head -1 | cut -d' ' -f1)
[ "$status" = 200 ] && [ -n "$id" ] && [ "$version" = HTTP/2 ] && [ -z "$body" ] && r=0 || r=1
check "curl: 200 over HTTP/2 with a generated apns-id and no body" $r "$version $status apns-id=$id body='$body'"
[ "$id" = "$(printf '%s' "$id" | tr a-f A-F)" ] && r=0 || r=1
check "curl: a generated apns-id is uppercase (apns.md A.5)" $r "apns-id=$id"
[ -n "$(header apns-unique-id)" ] && r=0 || r=1
check "curl: apns-unique-id in the sandbox" $r "apns-unique-id=$(header apns-unique-id)"

given=0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0
push "$jwt" "$ok_token" -H "apns-id: $given" -H "apns-collapse-id: interop"
[ "$status" = 200 ] && [ "$(header apns-id)" = "$given" ] && r=0 || r=1
check "curl: 200 echoes the apns-id it was given" $r "$status apns-id=$(header apns-id)"

push "$jwt" "$wrong_env_token"
[ "$status" = 400 ] && [ "$body" = '{"reason":"BadDeviceToken"}' ] && r=0 || r=1
check "curl: 400 BadDeviceToken for a production token" $r "$status $body"

push "$jwt" "$other_app_token"
[ "$status" = 400 ] && [ "$body" = '{"reason":"DeviceTokenNotForTopic"}' ] && r=0 || r=1
check "curl: 400 DeviceTokenNotForTopic for another app's token" $r "$status $body"

push "$jwt" "$gone_token"
[ "$status" = 410 ] && [ "$body" = "{\"reason\":\"Unregistered\",\"timestamp\":$gone_at}" ] \
    && [ "$(header content-type)" = application/json ] && r=0 || r=1
check "curl: 410 Unregistered with the unregistration time in ms" $r "$status $body (unregistered at $gone_at)"

push "$bad_jwt" "$ok_token"
[ "$status" = 403 ] && [ "$body" = '{"reason":"InvalidProviderToken"}' ] && r=0 || r=1
check "curl: 403 InvalidProviderToken for a JWT from another key" $r "$status $body"

# Certificate-based authentication: no JWT; the topic must be the certificate's (apns.md B.4).
cert_push() {  # TOPIC -> sets status, body
    status=$(curl -sS --http2 --cacert "$ca" --cert "$work/client.pem" --key "$work/client.key" \
        -o "$work/body" -w '%{http_code}' -H "apns-topic: $1" -H "apns-push-type: alert" \
        -d '{"aps":{"alert":"hello from a certificate"}}' "https://127.0.0.1:$port/3/device/$ok_token")
    body=$(cat "$work/body")
}
cert_push "$topic"
[ "$status" = 200 ] && [ -z "$body" ] && r=0 || r=1
check "curl: 200 with a client certificate (UID=$topic) and no JWT" $r "$status $body"
cert_push com.example.other
[ "$status" = 400 ] && [ "$body" = '{"reason":"BadTopic"}' ] && r=0 || r=1
check "curl: 400 BadTopic for a topic the certificate doesn't carry" $r "$status $body"

# --- aioapns -------------------------------------------------------------------------------
r=0
python3 scripts/apns-interop-aioapns.py --port "$port" --ca "$ca" --key "$work/AuthKey.p8" \
    --bad-key "$work/OtherKey.p8" --key-id "$key_id" --team-id "$team_id" --topic "$topic" \
    --ok "$ok_token" --wrong-env "$wrong_env_token" --gone "$gone_token" --gone-at "$gone_at" || r=$?
[ "$r" = 0 ] || failures=$((failures + 1))

# --- what the device got, through the control API -------------------------------------------
received=$(api GET "/devices/$ok_token/received" | python3 -c '
import json, sys
print(" | ".join(n["payload"]["aps"]["alert"] for n in json.load(sys.stdin)["notifications"]))')
expected="hello from curl | hello from curl | hello from a certificate | hello from aioapns"
[ "$received" = "$expected" ] && r=0 || r=1
check "control API: the device received curl's and aioapns's pushes, in order" $r "$received"
counters=$(api GET /counters)
echo "counters: $counters"

if [ "$failures" -ne 0 ]; then
    echo "apns-interop: $failures check(s) failed; emulator log:" >&2
    cat "$work/emulator.log" >&2
    exit 1
fi
echo "apns-interop: all checks passed"
