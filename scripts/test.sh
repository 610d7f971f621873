#!/usr/bin/env bash
# Every test: the Swift suites, then real third-party APNs clients against the emulator.
set -euo pipefail
cd "$(dirname "$0")/.."
swift test
scripts/apns-interop.sh
