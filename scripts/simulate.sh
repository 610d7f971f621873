#!/usr/bin/env bash
# Plays every built-in simulator scenario and scenarios/lunch.json (docs/simulator.md) against a
# real node, writing each timeline (SVG) and report (JSON) to artifacts/simulations/, with an
# index.html to open them.
# Exits non-zero if any scenario fails. Usage: scripts/simulate.sh [path/to/beckon]
set -euo pipefail
cd "$(dirname "$0")/.."
BECKON="${1:-}"
if [ -z "$BECKON" ]; then
    swift build --product beckon >/dev/null
    BECKON="$(swift build --show-bin-path)/beckon"
fi
OUT=artifacts/simulations
mkdir -p "$OUT"
failed=()
{
    echo '<!doctype html><meta charset="utf-8"><title>Beckon simulator timelines</title>'
    echo '<h1>Beckon simulator: built-in scenarios</h1><ul>'
} >"$OUT/index.html"
while IFS=$'\t' read -r name summary; do
    file=$(basename "$name" .json)
    run() { "$BECKON" simulate "$name" --timeline "$OUT/$file.svg" --report "$OUT/$file.json" >"$OUT/$file.txt" 2>&1; }
    if run; then
        verdict=passed
    elif cp "$OUT/$file.txt" "$OUT/$file.first-run.txt" && run; then
        # Scenarios run in scaled wall-clock time: a loaded machine can miss a window. Passing
        # on the second run is reported, never hidden (see the first run's output).
        verdict="passed on the second run (FLAKY: $OUT/$file.first-run.txt)"
        grep FAIL "$OUT/$file.first-run.txt" || true
    else
        verdict=FAILED
        failed+=("$name")
        cat "$OUT/$file.txt"
    fi
    echo "simulate $name: $verdict"
    echo "<li><a href=\"$file.svg\">$name</a> ($verdict, <a href=\"$file.json\">report</a>): $summary</li>" >>"$OUT/index.html"
done < <("$BECKON" simulate --list; printf 'scenarios/lunch.json\tthe example scenario file (docs/simulator.md)\n')
echo '</ul>' >>"$OUT/index.html"
if [ ${#failed[@]} -gt 0 ]; then
    echo "failed scenarios: ${failed[*]}" >&2
    exit 1
fi
