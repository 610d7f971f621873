#!/usr/bin/env bash
# Type-checks the iOS adapters and the marked samples of docs/client-sdk.md on Linux, against a
# stand-in for the part of Apple's SDK they use (Tests/AppleSDK: declarations kept to Apple's
# documentation; docs/client-sdk.md, "What the type-check proves"). Twice: as an app, and as an
# app extension (-D APPLICATION_EXTENSION makes the stand-in's extension-unavailable API
# unavailable, since the Linux compiler does not evaluate iOS availability).
#
#   scripts/typecheck-apple.sh [BIN_PATH]
#
# BIN_PATH is where SwiftPM put the package's modules (default: `swift build --show-bin-path`);
# BeckonClient must have been built there (`swift build`, `swift test`, or
# `swift build --target BeckonClient`). The compiler flags that reach GRDB's C module and the
# package name are read from SwiftPM's own build manifest, as `swift build -v` prints them.
# One line per compiled unit (`ok  …` / `FAIL …`), then `N passed, N failed`; exit 1 on a failure.
# KEEP_TMP=1 keeps the work directory (stand-ins, logs, extracted samples) and prints its path.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${1:-$(swift build --show-bin-path)}
BIN=$(cd "$BIN" && pwd -P)
CONFIG=$(basename "$BIN")               # debug or release
SCRATCH=$(cd "$BIN/../.." && pwd -P)   # .build/<triple>/debug -> .build
MANIFEST="$SCRATCH/$CONFIG.yaml"
for f in "$BIN/Modules/BeckonClient.swiftmodule" "$MANIFEST"; do
    [ -e "$f" ] || { echo "missing $f: build the package first (swift build)" >&2; exit 2; }
done

SWIFTC=${SWIFTC:-swiftc}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/beckon-typecheck-apple.XXXXXX")
[ -n "${KEEP_TMP:-}" ] && echo "keeping $TMP" || trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/cache" "$TMP/app" "$TMP/ext" "$TMP/samples" "$TMP/api"

# The search paths, C module maps and package name SwiftPM compiled BeckonClient with.
mapfile -t PACKAGE_FLAGS < <(python3 - "$MANIFEST" <<'PY'
import json, re, sys
for line in open(sys.argv[1]):
    m = re.match(r'\s*args: (\[.*\])\s*$', line)
    if not m:
        continue
    args = json.loads(m.group(1))
    if '-module-name' not in args or args[args.index('-module-name') + 1] != 'BeckonClient':
        continue
    keep, i = [], 0
    while i < len(args):
        a = args[i]
        if a == '-I' and args[i + 1].endswith('/Modules'):
            i += 2  # the package's own modules: BIN_PATH's are used
            continue
        if a in ('-I', '-Xcc', '-package-name', '-target', '-sdk'):
            keep += [a, args[i + 1]]
            i += 2
            continue
        if a.startswith('-I') and len(a) > 2:
            keep.append(a)
        i += 1
    print('\n'.join(keep))
    break
else:
    sys.exit('no BeckonClient command in ' + sys.argv[1])
PY
)

# An app is not in the package: its code sees the SDK's public API only, without `package` access.
APP_FLAGS=()
for ((i = 0; i < ${#PACKAGE_FLAGS[@]}; i++)); do
    if [ "${PACKAGE_FLAGS[$i]}" = -package-name ]; then i=$((i + 1)); else APP_FLAGS+=("${PACKAGE_FLAGS[$i]}"); fi
done

# The package's modules, except the adapters' own: SwiftPM builds those empty on Linux, and an
# adapter that fails here must not be found there instead.
mkdir -p "$TMP/package"
for m in "$BIN"/Modules/*; do
    case "$(basename "$m")" in BeckonClientApple.* | BeckonClientAppleApp.*) ;; *) ln -s "$m" "$TMP/package/" ;; esac
done

COMMON=(-parse-as-library -swift-version 6 -Onone -diagnostic-style llvm -module-cache-path "$TMP/cache" -DSWIFT_PACKAGE -DDEBUG)

# report NAME RC LOG: one line for a compiled unit; a failure's diagnostics, indented, below it.
report() {
    if [ "$2" -eq 0 ]; then
        echo "ok  $1"
    else
        echo "FAIL $1"
        { grep -E 'error:' "$3" | grep -v 'command failed with exit code' || cat "$3"; } | sed 's/^/      /'
    fi
}

# standins FLAVOUR: the stand-in modules, in dependency order, into $TMP/FLAVOUR.
standins() {
    local flavour=$1 defines=() module failed=0
    [ "$flavour" = ext ] && defines=(-DAPPLICATION_EXTENSION)
    for module in FoundationAppleOnly UIKit UserNotifications PushKit CallKit Network os Security Intents SwiftUI; do
        if ! "$SWIFTC" "${COMMON[@]}" "${defines[@]}" -I "$TMP/$flavour" -emit-module -module-name "$module" \
            -emit-module-path "$TMP/$flavour/$module.swiftmodule" Tests/AppleSDK/"$module"/*.swift \
            >"$TMP/standin-$flavour-$module.log" 2>&1; then
            report "Apple SDK stand-in: $module ($flavour)" 1 "$TMP/standin-$flavour-$module.log"
            failed=1
        fi
    done
    [ $failed -eq 1 ] || echo "ok  Apple SDK stand-in, 10 modules ($flavour)"
}

# typecheck NAME FLAVOUR ARGS...: against the package's modules and the flavour's stand-ins, with
# Foundation's Apple-only members imported implicitly (they need no import on Apple platforms).
# The adapters are compiled as part of the package; with APP_CODE=1, as an app's code (samples).
typecheck() {
    local name=$1 flavour=$2 log extra=() rc=0 flags=("${PACKAGE_FLAGS[@]}")
    shift 2
    log="$TMP/$(echo "$name" | tr -c 'A-Za-z0-9' '_').log"
    [ "$flavour" = ext ] && extra=(-application-extension)
    [ -n "${APP_CODE:-}" ] && flags=("${APP_FLAGS[@]}")
    "$SWIFTC" "${COMMON[@]}" -I "$TMP/$flavour" -I "$TMP/package" "${flags[@]}" "${extra[@]}" \
        -DBECKON_APPLE_SDK_STANDIN -Xfrontend -import-module -Xfrontend FoundationAppleOnly "$@" >"$log" 2>&1 || rc=$?
    report "$name" $rc "$log"
}

# adapter MODULE FLAVOUR LABEL: an adapter module, emitted for what compiles against it next.
adapter() {
    typecheck "$1 ($3)" "$2" -emit-module -module-name "$1" -emit-module-path "$TMP/$2/$1.swiftmodule" Sources/"$1"/*.swift
}

# say FILE...: print step output and keep it for the count.
say() { cat "$@" | tee -a "$TMP/transcript"; }
: >"$TMP/transcript"

# 1. The stand-ins, both flavours at once.
standins app >"$TMP/1-app" 2>&1 & job=$!
standins ext >"$TMP/1-ext" 2>&1
wait $job
say "$TMP/1-app" "$TMP/1-ext"

# 2. The adapters: the extension-safe module in both flavours, the app-only module as an app.
adapter BeckonClientApple ext extension >"$TMP/2-ext" 2>&1 & job=$!
{ adapter BeckonClientApple app app; adapter BeckonClientAppleApp app app; } >"$TMP/2-app" 2>&1
wait $job
say "$TMP/2-app" "$TMP/2-ext"

# 3. The negative self-test: the extension flavour must reject extension-unavailable API and the
# app flavour accept it, or the extension checks prove nothing.
printf 'import UIKit\n\n@MainActor func touch() { _ = UIApplication.shared }\n' >"$TMP/samples/SelfTest.swift"
{
    if "$SWIFTC" "${COMMON[@]}" -application-extension -I "$TMP/ext" -typecheck "$TMP/samples/SelfTest.swift" \
        >"$TMP/selftest-ext.log" 2>&1; then
        echo "FAIL self-test: UIApplication.shared compiled in the extension flavour"
    elif grep -q 'unavailable in application extensions' "$TMP/selftest-ext.log"; then
        echo "ok  self-test: UIApplication.shared rejected (extension)"
    else
        report "self-test: UIApplication.shared rejected, but not as extension-unavailable (extension)" 1 "$TMP/selftest-ext.log"
    fi
    rc=0
    "$SWIFTC" "${COMMON[@]}" -I "$TMP/app" -typecheck "$TMP/samples/SelfTest.swift" >"$TMP/selftest-app.log" 2>&1 || rc=$?
    report "self-test: UIApplication.shared accepted (app)" $rc "$TMP/selftest-app.log"
} >"$TMP/3" 2>&1
say "$TMP/3"

# 4. The samples: each ```swift block of docs/client-sdk.md right after a line
# `<!-- typecheck: app -->` or `<!-- typecheck: extension -->`, as a module of its own (a sample
# may define small helpers at its end). App samples see BeckonClientApple and BeckonClientAppleApp
# with the app stand-ins; extension samples see BeckonClientApple with the extension stand-ins.
python3 - docs/client-sdk.md "$TMP/samples" >"$TMP/samples/list" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split('\n')
for i, line in enumerate(lines):
    m = re.fullmatch(r'\s*<!-- typecheck: (app|extension) -->\s*', line)
    if not m:
        continue
    if i + 1 >= len(lines) or lines[i + 1].strip() != '```swift':
        sys.exit(f'{sys.argv[1]}:{i + 1}: a typecheck marker must come right before a ```swift block')
    end = lines.index('```', i + 2)
    path = f'{sys.argv[2]}/Sample{i + 2}.swift'
    # Diagnostics point at the document's own lines.
    open(path, 'w').write(f'#sourceLocation(file: "{sys.argv[1]}", line: {i + 3})\n'
                          + '\n'.join(lines[i + 2:end]) + '\n')
    print('app' if m.group(1) == 'app' else 'ext', i + 2, m.group(1), path)
PY
n=0
while read -r flavour line kind path; do
    APP_CODE=1 typecheck "docs/client-sdk.md:$line ($kind)" "$flavour" -typecheck -module-name "Sample$line" "$path" >"$TMP/4-$n" 2>&1 &
    n=$((n + 1))
    if [ $((n % 2)) -eq 0 ]; then wait; fi
done <"$TMP/samples/list"
wait
for ((i = 0; i < n; i++)); do say "$TMP/4-$i"; done

# 5. The sample app (issue 37): Examples/BeckonChat's app target (with the shared files) as an app,
# its notification service extension (with the same shared files) as an extension; as an app's
# code, each target one module, as Xcode builds them.
{
    ex=Examples/BeckonChat
    APP_CODE=1 typecheck "$ex: app" app -typecheck -module-name BeckonChat "$ex"/Shared/*.swift "$ex"/BeckonChat/*.swift &
    APP_CODE=1 typecheck "$ex: notification service extension" ext -typecheck -module-name NotificationService \
        "$ex"/Shared/*.swift "$ex"/NotificationService/*.swift
    wait
    # docs/client-sdk.md shows these files: each ```swift block right after `<!-- example: PATH -->`
    # must be PATH as it is, so the page never drifts from what is checked.
    rc=0
    python3 - docs/client-sdk.md >"$TMP/examples-in-docs.log" 2>&1 <<'PY' || rc=$?
import re, sys
lines = open(sys.argv[1]).read().split('\n')
shown, stale = 0, []
for i, line in enumerate(lines):
    m = re.fullmatch(r'\s*<!-- example: (\S+) -->\s*', line)
    if not m:
        continue
    end = lines.index('```', i + 2)
    shown += 1
    if '\n'.join(lines[i + 2:end]) != open(m.group(1)).read().rstrip('\n'):
        stale.append(f'{sys.argv[1]}:{i + 1}: the block differs from {m.group(1)}')
print('\n'.join(stale) if stale else f'{shown} files shown as they are')
sys.exit(1 if stale or not shown else 0)
PY
    report "docs/client-sdk.md shows $ex's files as they are" $rc "$TMP/examples-in-docs.log"
} >"$TMP/5" 2>&1
say "$TMP/5"

# 6. The public surface of what an app links (issue 37): every public declaration of the client
# modules, as swift-symbolgraph-extract lists it, must equal docs/client-api.txt, so a change to
# it is deliberate. UPDATE_API=1 rewrites the list.
{
    # The extractor takes the compiler's search flags, not its package name.
    flags=("${APP_FLAGS[@]}")
    for module in BeckonClient BeckonClientApple BeckonClientAppleApp; do
        search=(-I "$TMP/app" -I "$TMP/package")
        "${SWIFTC%swiftc}swift-symbolgraph-extract" -module-name "$module" -target "$(uname -m)-unknown-linux-gnu" \
            "${search[@]}" "${flags[@]}" -minimum-access-level public -skip-synthesized-members \
            -output-dir "$TMP/api" >"$TMP/api-$module.log" 2>&1 || { report "public API: $module" 1 "$TMP/api-$module.log"; continue; }
    done
    python3 - "$TMP/api" >"$TMP/api.txt" <<'PY'
import glob, json, sys
lines = set()
for path in glob.glob(sys.argv[1] + '/*.symbols.json'):
    graph = json.load(open(path))
    module = graph['module']['name']
    for symbol in graph['symbols']:
        if symbol['accessLevel'] != 'public':
            continue
        declaration = ''.join(f['spelling'] for f in symbol.get('declarationFragments', []))
        lines.add(f"{module}.{'.'.join(symbol['pathComponents'])}: {' '.join(declaration.split())}")
print('\n'.join(sorted(lines)))
PY
    # What an app calls has a DocC comment: every public type, and every public member of the
    # types the docs' walk-through and Examples/ use.
    python3 - "$TMP/api" >"$TMP/undocumented.txt" <<'PY'
import glob, json, sys
app_facing = {
    'BeckonApp', 'BeckonAppDelegateBridge', 'BeckonSetup', 'DeviceRegistrar', 'DeviceRegistration',
    'NotificationServiceHandler', 'BeckonNotificationServiceExtension', 'PushKitRegistrar', 'CallKitReporter',
    'RemoteNotificationsSetup', 'NetworkPathObserver', 'KeychainCredentialStore', 'StoredMessage',
    'SyncSessionEvent', 'NotificationContent', 'NotificationTap', 'NotificationResponse', 'StoreRetention',
    'ClientStore', 'CallCoordinator', 'CallReport', 'VoIPPush', 'RegistrationError',
}
for path in glob.glob(sys.argv[1] + '/*.symbols.json'):
    graph = json.load(open(path))
    for symbol in graph['symbols']:
        components = symbol['pathComponents']
        if symbol['accessLevel'] == 'public' and not symbol.get('docComment') and (
                len(components) == 1 or components[0] in app_facing):
            print(graph['module']['name'] + '.' + '.'.join(components))
PY
    if [ -s "$TMP/undocumented.txt" ]; then
        report "public API without a DocC comment" 1 "$TMP/undocumented.txt"
    else
        echo "ok  public API: every type, and every member of what an app calls, has a DocC comment"
    fi
    if [ -n "${UPDATE_API:-}" ]; then cp "$TMP/api.txt" docs/client-api.txt; fi
    if diff -u docs/client-api.txt "$TMP/api.txt" >"$TMP/api.diff" 2>&1; then
        echo "ok  public API: $(wc -l <"$TMP/api.txt") declarations, as docs/client-api.txt lists them"
    else
        report "public API differs from docs/client-api.txt (UPDATE_API=1 rewrites it, if the change is meant)" 1 "$TMP/api.diff"
    fi
} >"$TMP/6" 2>&1
say "$TMP/6"

PASSED=$(grep -c '^ok' "$TMP/transcript" || true)
FAILED=$(grep -c '^FAIL' "$TMP/transcript" || true)
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
