#!/usr/bin/env bash
# Every test: the Swift suites, real third-party APNs clients against the emulator, and the
# crash test (SIGKILL during a load of posts; nothing acknowledged may be lost).
set -euo pipefail
cd "$(dirname "$0")/.."
swift test
scripts/apns-interop.sh
swift build --product beckon >/dev/null
python3 scripts/crash-durability.py "$(swift build --show-bin-path)/beckon"
