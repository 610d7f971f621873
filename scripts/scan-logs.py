#!/usr/bin/env python3
"""Scans log files for secrets written in full: device tokens, API keys, device credentials,
user tokens (and any other JWT), and bearer credentials (issue 15, item 3; README: "never log
device tokens or secrets in full").

    scripts/scan-logs.py PATH... [--min-lines N]
    scripts/scan-logs.py --self-test

Each PATH is a file, or a directory searched for *.log and *.out files. scripts/test.sh runs it
over the whole test suite's logs: the Swift tests' (every record at trace level, see
Tests/TestCapture), the swift test output, and the logs of every `beckon serve` and emulator
the scripts started (BECKON_LOG_LEVEL=trace). What Beckon may log is a shortened form: a token's
first 8 hex digits and "…", a key's public prefix `bk_<id>`. Exits 1 and prints each finding
(with the secret itself shortened) if any line holds one, or if fewer than --min-lines lines
were scanned (a scan of nothing proves nothing).
"""
import argparse, os, re, sys

# Beckon's secrets are `<kind>_<12-character id>_<43-character secret>`, base64 with `-` and `.`
# (Sources/BeckonStore/Shared/SecretToken.swift); a public prefix stops after the id.
SECRET = r"[A-Za-z0-9.\-]"
PATTERNS = [
    ("API key", re.compile(rf"\bbk_{SECRET}{{12}}_{SECRET}{{16,}}")),
    ("device credential", re.compile(rf"\bbkd_{SECRET}{{12}}_{SECRET}{{16,}}")),
    # A JWT: three base64url parts, the first two JSON objects ("eyJ" is `{"`).
    ("user token or other JWT", re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}")),
    # APNs device tokens are hex (32 bytes today; Apple: do not assume a length). Sixteen or more
    # hex digits in a word, at least one a letter (a long decimal number is not a token), is a
    # token or a digest, neither of which belongs in a log.
    ("device token (hex)", re.compile(r"(?<![0-9A-Za-z])(?=[0-9]*[A-Fa-f])[0-9A-Fa-f]{16,}(?![0-9A-Za-z])")),
    ("bearer credential", re.compile(r"(?i)\bbearer\s+(?!<)[^\s\"'…,;)\]]{12,}")),
    # A struct printed whole (Swift's default description, as a service lifecycle logs its
    # services): a field named for a secret or a token, with a string in it.
    ("secret field of a printed value", re.compile(r"(?i)\b\w*(secret|token)\w*: \\?\"[^\"\\]{8,}")),
]


BUILD_STEP = re.compile(r"^\[\d+/\d+\] ")
# Hummingbird's id of a request (random hex it makes for each), in a route's log metadata: not a
# token, though it looks like one.
REQUEST_ID = re.compile(r"\bhb\.request\.id=[0-9a-f]+\b")


def findings(line):
    line = REQUEST_ID.sub("hb.request.id=…", line)
    for name, pattern in PATTERNS:
        for match in pattern.finditer(line):
            yield name, match.group(0)


def shortened(secret):
    return secret[:10] + "…" + f"({len(secret)} characters)"


def files(paths):
    for path in paths:
        if os.path.isdir(path):
            for root, _, names in os.walk(path):
                for name in sorted(names):
                    if name.endswith((".log", ".out")):
                        yield os.path.join(root, name)
        else:
            yield path


def scan(paths, out=sys.stdout):
    """(lines scanned, files scanned, findings as (file, line number, kind, secret))."""
    lines = scanned = 0
    found = []
    for path in files(paths):
        scanned += 1
        with open(path, "r", errors="replace") as log:
            for number, line in enumerate(log, 1):
                lines += 1
                if BUILD_STEP.match(line):
                    continue  # swift build's progress ("[2/7] Write swift-version-6A52383ED409C6A7.txt")
                for kind, secret in findings(line):
                    found.append((path, number, kind, secret))
    return lines, scanned, found


def self_test():
    """The patterns catch what they must and pass what Beckon is allowed to write."""
    leaks = [
        "info beckon.store: app=chat key=bk_-idoVq4PzblS_N0tAR3alKeyButL0ngEnoughT0B3One.x-y [BeckonStore] API key created",
        "debug sync: credential=bkd_QROQ.Ad1ZdJd_abcdefghijklmnopqrstuvwxyz0123456789AB session ended",
        "warning apns: token=aabbccdd00112233aabbccdd00112233 rejected",
        "debug http: hb.request.id=0123abcd token=aabbccdd00112233aabbccdd00112233 refused",
        'debug beckon.server: sl-service=X(api: BeckonAPI(configuration: C(userTokenSecret: \\"sec-0123456789\\")) started',
        'debug beckon.server: sl-service=S(componentSecret: "02e204b7d3ed5fed", appID: "chat") finished',
        "error http: authorization=Bearer eyJhbGciOiJIUzI1NiJ9.eyJhdWQiOiJjaGF0In0.c2lnbmF0dXJlLXBhcnQtaGVyZQ",
        "error http: Authorization: Bearer admin-token-0123456789abcdef",
    ]
    allowed = [
        "info beckon.store: app=chat key=bk_-idoVq4PzblS [BeckonStore] API key created",
        "debug beckon.apns: token=aabbccdd… attempt=2 delay=0.0017303792177338184 retrying a notification",
        "info beckon.push: message=01a20fa8-853e-7e2f-bd6f-bdadf28dae3d device=phone-1 pushed",
        "info beckon.server: Authorization: Bearer <admin.token> is required",
        "debug beckon.sync.test: hb.request.id=cbad4f604a791028e655734ceded12bb request cancelled at shutdown",
    ]
    failures = [line for line in leaks if not list(findings(line))]
    failures += [line for line in allowed if list(findings(line))]
    for line in failures:
        print(f"scan-logs self-test: misjudged: {line}", file=sys.stderr)
    return not failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--min-lines", type=int, default=1)
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        ok = self_test()
        print("scan-logs self-test:", "ok" if ok else "FAILED")
        sys.exit(0 if ok else 1)
    if not self_test():
        sys.exit("scan-logs: the patterns fail their own self-test")
    lines, scanned, found = scan(args.paths)
    for path, number, kind, secret in found[:50]:
        print(f"{path}:{number}: {kind} in full: {shortened(secret)}")
    print(f"scan-logs: {lines} lines in {scanned} files, {len(found)} secrets in full")
    if lines < args.min_lines:
        sys.exit(f"scan-logs: only {lines} lines scanned (at least {args.min_lines} expected)")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
