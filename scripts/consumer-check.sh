#!/usr/bin/env bash
# An iOS app's view of the package (issue 37): a consumer package that depends on Beckon with
# `traits: []`, as docs/client-sdk.md says to, and links the three client products. It must
# resolve only the client's dependencies (GRDB, swift-crypto and swift-crypto's swift-asn1) and
# build. Prints the consumer's Package.resolved identities; exit 1 if they differ.
#
#   scripts/consumer-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd -P)
EXPECTED="grdb.swift swift-asn1 swift-crypto"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/beckon-consumer.XXXXXX")
[ -n "${KEEP_TMP:-}" ] && echo "keeping $TMP" || trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/Sources/ChatApp"
cat >"$TMP/Package.swift" <<MANIFEST
// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "ChatApp",
    platforms: [.iOS(.v16), .macOS(.v14)],
    dependencies: [.package(path: "$REPO", traits: [])],
    targets: [
        .target(name: "ChatApp", dependencies: [
            .product(name: "BeckonClient", package: "$(basename "$REPO")"),
            .product(name: "BeckonClientApple", package: "$(basename "$REPO")"),
            .product(name: "BeckonClientAppleApp", package: "$(basename "$REPO")"),
        ]),
    ]
)
MANIFEST
printf 'import BeckonClient\n\npublic let app = BeckonApp.self\n' >"$TMP/Sources/ChatApp/App.swift"
(cd "$TMP" && swift package resolve >"$TMP/resolve.log" 2>&1) || { cat "$TMP/resolve.log"; exit 1; }
GOT=$(python3 -c 'import json,sys; print(" ".join(sorted(p["identity"] for p in json.load(open(sys.argv[1]))["pins"])))' "$TMP/Package.resolved")
echo "consumer resolves: $GOT"
if [ "$GOT" != "$EXPECTED" ]; then
    echo "FAIL: expected only the client's dependencies: $EXPECTED" >&2
    exit 1
fi
(cd "$TMP" && swift build >"$TMP/build.log" 2>&1) || { tail -30 "$TMP/build.log"; echo "FAIL: the consumer does not build" >&2; exit 1; }
echo "ok  consumer builds with the client products alone"
