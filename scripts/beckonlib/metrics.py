"""A node's `GET /metrics` (Prometheus text format) as numbers."""
import re
import urllib.request


def parse(text):
    """{(name, ((label, value), ...)): number} of every sample."""
    values = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = re.match(r'^([A-Za-z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$', line)
        if not match:
            continue
        labels = tuple(sorted(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match.group(2) or "")))
        try:
            values[(match.group(1), labels)] = float(match.group(3))
        except ValueError:
            pass
    return values


def fetch(base):
    with urllib.request.urlopen(base + "/metrics", timeout=10) as answer:
        return parse(answer.read().decode())


def total(values, name, **labels):
    """The sum of `name`'s samples whose labels include `labels`."""
    return sum(v for (n, ls), v in values.items()
               if n == name and all(dict(ls).get(k) == want for k, want in labels.items()))
