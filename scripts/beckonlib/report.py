"""How a script reports: checks as lines (`ok` or `FAIL`) and a last line that counts them, which
a run before and after a change can be compared by; and figures for those lines (percentiles,
spreads of durations, counts by kind)."""
import sys


class Checks:
    """Checks in the order they are made; `finish` prints the count and exits 0 only if all held."""

    def __init__(self, name):
        self.name, self.passed, self.failures = name, 0, []

    def check(self, condition, what):
        print(("ok   " if condition else "FAIL ") + what, flush=True)
        if condition:
            self.passed += 1
        else:
            self.failures.append(what)
        return condition

    def finish(self, detail=""):
        total = self.passed + len(self.failures)
        if self.failures:
            print(f"{self.name}: FAILED {len(self.failures)} of {total} checks" + (f"; {detail}" if detail else ""))
            sys.exit(1)
        print(f"{self.name}: all {total} checks passed" + (f"; {detail}" if detail else ""))


def percentile(values, fraction):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def seconds(value):
    return "-" if value is None else f"{value:.2f} s"


def spread(values):
    """p50/p90/p99/max of durations."""
    if not values:
        return "none"
    return (f"p50 {percentile(values, .5):.2f} s, p90 {percentile(values, .9):.2f} s, "
            f"p99 {percentile(values, .99):.2f} s, max {max(values):.2f} s")


def counted(counter):
    """A Counter as "kind ×n, ..." (commonest first)."""
    return ", ".join(f"{kind} ×{count}" for kind, count in counter.most_common()) or "none"
