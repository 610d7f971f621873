#!/usr/bin/env python3
"""Issue 36's fleet figures: each strategy on the two fleets, stored beside shown.

Runs `beckon simulate fleet` for every strategy on
  - one:    10,000 phones, one message each (10,000 messages in the first 540 s),
  - chatty:  2,000 phones, four messages each (8,000 messages),
one run at a time (each takes the machine; run nothing else beside it), keeps each run's JSON
report in --out, and prints a Markdown table: stored, shown, reached (shown, or synced with the
app in front), the share on a screen within two minutes of its post (in all, and the lowest of the
behaviours a push can reach: every one but `offline`, whose phones are away for half the run),
and the pushes it cost.

  scripts/fleet-figures.py .build/release/beckon --out fleet-after
  scripts/fleet-figures.py --table fleet-before fleet-after      # the table again, from reports
"""
import argparse
import json
import os
import subprocess
import sys

STRATEGIES = ["wake", "service-extension", "filtering", "content"]
FLEETS = {"one": (10000, 10000), "chatty": (2000, 8000)}


def run(binary, out, time_scale, fleets):
    os.makedirs(out, exist_ok=True)
    for fleet, (devices, messages) in FLEETS.items():
        if fleet not in fleets:
            continue
        for strategy in STRATEGIES:
            report = os.path.join(out, f"{fleet}-{strategy}.json")
            command = [binary, "simulate", "fleet", "--devices", str(devices), "--messages", str(messages),
                       "--time-scale", str(time_scale), "--strategy", strategy, "--report", report]
            print("$", " ".join(command), file=sys.stderr, flush=True)
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)


def percent(part, whole):
    return f"{100 * part / whole:.2f}%" if whole else "n/a"


def rows(directory):
    label = os.path.basename(os.path.normpath(directory))
    for fleet in FLEETS:
        for strategy in STRATEGIES:
            path = os.path.join(directory, f"{fleet}-{strategy}.json")
            if not os.path.exists(path):
                continue
            r = json.load(open(path))
            n = r["messages"]
            reachable = {b: c for b, c in r["byBehaviour"].items() if b != "offline" and c["messages"]}
            worst = min(reachable.items(), key=lambda kv: kv[1]["reachedWithin120Seconds"] / kv[1]["messages"])
            reasons = ", ".join(f"{k} {v:,}" for k, v in sorted(r["pushesByReason"].items()))
            # Shown on the phones' timelines, as this table always counted it: since issue 40
            # `shown` is the server's receipts, which lack what iOS showed to an app never reopened.
            shown = r.get("shownOnTimeline", r["shown"])
            yield (f"| {label} | {fleet} ({r['devices']:,} × {n // r['devices']}) | `{strategy}` "
                   f"| {percent(r['stored'], n)} | {percent(shown, n)} | {percent(r['reached'], n)} "
                   f"| {percent(r['reachedWithin120Seconds'], n)} "
                   f"| {percent(worst[1]['reachedWithin120Seconds'], worst[1]['messages'])} ({worst[0]}) "
                   f"| {r['pushesPerReachedMessage']:.2f} | {reasons} "
                   f"| {sum(r['violations'].values()) or 'none'} | {r['realSeconds']:.0f} s |")


def table(directories):
    print("| build | fleet | strategy | stored | shown | reached | within 2 min | lowest reachable behaviour within 2 min "
          "| pushes per reached | pushes by reason | iOS violations | wall clock |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for directory in directories:
        for row in rows(directory):
            print(row)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary", nargs="?")
    parser.add_argument("--out", default="fleet-figures")
    parser.add_argument("--time-scale", type=float, default=5)
    parser.add_argument("--fleets", default="one,chatty", help="which fleets to run (one, chatty)")
    parser.add_argument("--table", nargs="+", metavar="DIR", help="print the table from earlier reports")
    args = parser.parse_args()
    if args.table:
        table(args.table)
        return
    if not args.binary:
        parser.error("the beckon binary is required")
    run(args.binary, args.out, args.time_scale, args.fleets.split(","))
    table([args.out])


if __name__ == "__main__":
    main()
