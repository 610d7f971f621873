#!/usr/bin/env python3
"""Checks that every series deploy/grafana-dashboard.json queries is one a Beckon node exports.

    scripts/check-dashboard.py METRICS_URL      (e.g. http://127.0.0.1:8080/metrics)

scripts/demo.py calls `missing(...)` after a push and a measured wake, when every series the
dashboard uses exists; run by hand against any node that has done both.
"""
import json, os, re, sys, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DASHBOARD = os.path.join(ROOT, "deploy", "grafana-dashboard.json")
SERIES = re.compile(r"\b((?:beckon|apns)_[a-z_]+)\b")


def queried(path=DASHBOARD):
    """Every series name in the dashboard's queries."""
    with open(path) as file:
        dashboard = json.load(file)
    names = set()
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            names.update(SERIES.findall(target["expr"]))
    return names


def exported(metrics_text):
    """Every series name in a Prometheus text exposition."""
    return {line.split("{")[0].split(" ")[0] for line in metrics_text.splitlines() if line and not line.startswith("#")}


def missing(metrics_text, path=DASHBOARD):
    return sorted(queried(path) - exported(metrics_text))


def main():
    with urllib.request.urlopen(sys.argv[1], timeout=10) as response:
        text = response.read().decode()
    absent = missing(text)
    names = queried()
    print(f"check-dashboard: {len(names)} series queried, {len(absent)} not exported: {', '.join(absent) or 'none'}")
    sys.exit(1 if absent else 0)


if __name__ == "__main__":
    main()
