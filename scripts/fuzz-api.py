#!/usr/bin/env python3
"""Fuzzes Beckon's HTTP API with schemathesis against openapi.yaml, every operation with the
credential its `security` names, and fails on any server error or any answer outside the document.

    scripts/fuzz-api.py BECKON_BINARY [--cases N] [--seed S] [--only OPERATION_ID] [--details] [--keep]

Starts `beckon serve` on a free loopback port with a fresh SQLite database in a temporary
directory (rate limits off: a 429 would stand in for the answer under test), issues an API key
with the admin token, registers a device for each of two users with user tokens it signs (HS256
JWTs, aud = app id, sub = user id), then runs schemathesis's phases: examples, coverage, fuzzing,
and stateful sequences that follow the document's `links` (register -> update -> delete, register
-> post -> fetch, post -> fetch, post -> end call -> end again, issue key -> revoke key). Checks:

  schemathesis's own  not_a_server_error, status_code_conformance, content_type_conformance,
                      response_schema_conformance, response_headers_conformance, ignored_auth
                      (a 2xx is retried without a credential and with a broken one: both 401);
  error_form          every 4xx/5xx is `{"error": {"code", "message"}}` and nothing else, as
                      application/json, with a documented code that agrees with the status
                      (401 unauthorized, 404 not_found, ...), a non-empty message, 400s about a
                      field naming it first (`recipients.users[1]: ...`), a Bearer
                      WWW-Authenticate on 401 and a Retry-After of whole seconds on 429;
  credential_accepted a credential the run holds as valid is never answered 401;
  known_ids_found     a device, message, call, key or app the run created and that still exists
                      is not 403/404 to a credential that reaches it (the device's own, the app's
                      key, a recipient's device);
  answers_match_requests  a 2xx names what was sent: the registered device id and the token's
                      user, the updated device, the recipients; a fetched message is one of the
                      fetching device's user;
  integral_numbers_accepted  a number like 45.0 is an integer for the document's JSON Schema,
                      so `type: integer` fields must not refuse it as "not an integer".

Credentials, per operation, from its `security`: adminToken for the admin routes, userToken for
POST /v1/devices (one of two users), apiKey for messages, call ends and the delivery report,
deviceCredential for the device routes, message fetches and /v1/sync; DELETE /v1/devices/{id}
takes the device's credential or the API key, half and half. Cases in which schemathesis tests a
missing or broken credential are left alone. Device credentials follow what the run does: a
device registered (or registered again) by a case is known with its new credential, a deleted one
forgotten; PUT/DELETE of a known device and GET of a known message go with that device's
credential or a recipient's (one time in eight another device's, for the 403/404 paths).

Some positive cases are pointed at what exists, so that the fuzzing gets past the checks of
ownership and configuration to the code behind them: in the examples, coverage and fuzzing
phases half of the path parameters become ids the run created (devices, messages, calls, keys,
the app); half of the device bodies get the app's bundle id and team id (configuration the
document cannot state); most message bodies with an Idempotency-Key header get the same key in
the body (they must agree); half of the device recipients become devices the run registered.

--cases N is the least number of requests to send in all: the phases run in rounds (the first
with all phases, the next with fuzzing and stateful only), each with a new seed, until N were
sent; schemathesis's --max-examples is N / 40, from 50 to 250 (--per-operation sets it), as the
stateful phase runs a few dozen sequences per round whatever the examples per operation. The
default, 1,200 (one round), is the CI run (30 to 50 s on two busy cores); the long run is

    scripts/fuzz-api.py BECKON_BINARY --cases 10000

The summary gives per operation the cases, those answered other than 401 (proof that the
operation was reached past authentication), the 2xx, the statuses and the credential kinds sent;
the stateful steps taken; the server log's levels; and the failures. Exits 0 only if no check
failed, the server stayed up, every documented operation had a non-401 answer, and every line of
the server's log is whole (an id with a newline must not start a line of its own). On failure
the temporary directory stays: server.log, requests.jsonl (every request and answer), JUnit
reports. --only OPERATION_ID (repeatable) fuzzes some operations only (without the stateful phase
unless --phases names it), --phases runs some phases only;
--details prints the commonest error answers per operation; --also-check adds a schemathesis check.

Requirements: Python >= 3.10 and schemathesis 4 (`python3 -m pip install 'schemathesis>=4.32,<5'`,
which brings hypothesis, requests and PyYAML; written against schemathesis 4.32.5).
"""
import argparse, collections, os, random, re, shutil, sys, tempfile, time

from beckonlib.httpjson import free_port
from beckonlib.node import NO_RATE_LIMITS, Node

try:
    from api_fuzz import checks
    from api_fuzz.world import ADMIN, APP, SECRET, TEAM, World
except ImportError:
    sys.exit("fuzz-api: needs schemathesis 4: python3 -m pip install 'schemathesis>=4.32,<5'")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCUMENT = os.path.join(ROOT, "openapi.yaml")
CHECKS = ["not_a_server_error", "status_code_conformance", "content_type_conformance",
          "response_schema_conformance", "response_headers_conformance", "error_form", "credential_accepted",
          "known_ids_found", "answers_match_requests", "integral_numbers_accepted", "ignored_auth",
          "stateful_links"]


def log(text):
    print(f"fuzz-api: {text}", flush=True)


def start_server(binary, work):
    server = Node(binary, work, secret=SECRET, admin=ADMIN, apps=(APP,), team=TEAM,
                  database=os.path.join(work, "beckon.sqlite"), env=dict(
                      NO_RATE_LIMITS, BECKON_HTTP_HOST="127.0.0.1",
                      # The drop-ins serve the app: gorush with its API key, Matrix for one app id.
                      BECKON_APPS_CHAT_GORUSH="key", BECKON_APPS_CHAT_MATRIX_APP_IDS="org.example.chat.ios",
                      # XEP-0357 registrations are served; the component's XMPP server is a closed
                      # port (it retries in the background; no publish is fuzzed here).
                      BECKON_XMPP_HOST="127.0.0.1", BECKON_XMPP_PORT=str(free_port()), BECKON_XMPP_APP=APP,
                      BECKON_XMPP_COMPONENT_JID="push.localhost", BECKON_XMPP_COMPONENT_SECRET="fuzz-component-secret-0123"))
    try:
        server.start()
    except RuntimeError:
        sys.exit(f"fuzz-api: the server did not start (see {work}/server.log)")
    return server


def run_schemathesis(base, seed, per_operation, phases, report, extra, checks):
    from schemathesis.cli import schemathesis as cli
    config = os.path.join(os.path.dirname(report), "schemathesis.toml")
    with open(config, "w") as file:
        # Schemathesis's state between runs (failures to replay) stays with this run, not in the tree.
        file.write(f'[cache]\ndirectory = "{os.path.join(os.path.dirname(report), "schemathesis-cache")}"\n\n')
        # Without this, the fuzzing phase draws path parameters from ids seen in earlier answers
        # only, and Hypothesis runs out of new cases for DELETE /v1/devices/{id} after a handful;
        # World.substitute puts known ids in half of the cases instead.
        file.write("[phases.fuzzing.extra-data-sources]\nresponses = false\n")
        # Operations whose only input is a free string in the path (or nothing): a negative case
        # can only break the credential, so in the fuzzing phase nine in ten would be a 401. The
        # coverage phase still sends each of them without a credential and with a broken one.
        file.write('\n[[operations]]\ninclude-operation-id-regex = "^(getMessage|sync|revokeAPIKey|deleteDevice)$"\n'
                   '[operations.phases.fuzzing.generation]\nmode = "positive"\n')
    arguments = ["--config-file", config, "run", DOCUMENT, "--url", base, "--checks", ",".join(checks), "--phases", phases,
                 "--max-examples", str(per_operation), "--seed", str(seed),
                 # One request at a time: World's bookkeeping (which credential is current, what
                 # exists) is exact only if no other request changes the server meanwhile.
                 "--workers", "1",
                 "--generation-database", "none", "--request-timeout", "10", "--continue-on-failure",
                 "--suppress-health-check", "all", "--no-color", "--output-sanitize", "false",
                 "--report", "junit", "--report-junit-path", report] + extra
    try:
        cli.main(args=arguments, standalone_mode=False)
        return 0
    except SystemExit as exit:
        return exit.code or 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--cases", type=int, default=1200, help="least number of requests in all (default 1200)")
    parser.add_argument("--per-operation", type=int, default=None,
                        help="schemathesis's --max-examples in each round (default: cases / 40, from 50 to 250)")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--max-rounds", type=int, default=100)
    parser.add_argument("--only", action="append", default=[], metavar="OPERATION_ID",
                        help="fuzz only this operation (repeatable; to reproduce a failure)")
    parser.add_argument("--also-check", action="append", default=[], metavar="CHECK",
                        help="another schemathesis check to run (repeatable), e.g. use_after_free")
    parser.add_argument("--phases", help="schemathesis phases of every round (default: all in the first, then "
                                             "fuzzing,stateful)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the temporary directory (database, server log, requests.jsonl) even when all passed")
    parser.add_argument("--details", action="store_true", help="also print the commonest error answers per operation")
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    # Each round runs the stateful phase anew (a few dozen sequences, however large
    # --max-examples is), so a long run is better several rounds than one deep one.
    per_operation = args.per_operation or min(250, max(50, args.cases // 40))
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    started = time.time()

    work = tempfile.mkdtemp(prefix="beckon-fuzz.")
    server = start_server(binary, work)
    base = server.base
    log(f"beckon serve on {base}, database and log in {work}; seed {seed}")
    checks.WORLD = WORLD = World(base, seed)
    TALLY = checks.TALLY
    TALLY.journal = open(os.path.join(work, "requests.jsonl"), "w")
    try:
        WORLD.setup()
        checks.install_hooks()
        codes, rounds = [], 0
        while sum(TALLY.cases.values()) < args.cases and rounds < args.max_rounds:
            phases = args.phases or ("examples,coverage,fuzzing,stateful" if rounds == 0 else "fuzzing,stateful")
            if args.only and not args.phases:
                # The links of a few operations may lead nowhere among them; --phases stateful asks.
                phases = phases.replace(",stateful", "")
            log(f"round {rounds + 1}: {phases}, seed {seed + rounds}, {sum(TALLY.cases.values())} cases so far")
            codes.append(run_schemathesis(base, seed + rounds, per_operation, phases,
                                          os.path.join(work, f"junit-{rounds + 1}.xml"),
                                          [option for name in args.only for option in ("--include-operation-id", name)],
                                          CHECKS + args.also_check))
            rounds += 1
            if not server.alive():
                break
    finally:
        alive = server.alive()
        server.stop()
    elapsed = time.time() - started

    operations = sorted(TALLY.cases, key=lambda label: (label.split(" ", 1)[1], label))
    width = max(len(label) for label in operations) if operations else 10
    print()
    print(f"{'operation':<{width}}  {'cases':>6}  {'non-401':>7}  {'2xx':>5}  statuses; credentials sent")
    for label in operations:
        statuses = " ".join(f"{s}:{n}" for s, n in sorted(TALLY.statuses[label].items()))
        kinds = " ".join(f"{k}:{n}" for k, n in sorted(TALLY.kinds[label].items()))
        print(f"{label:<{width}}  {TALLY.cases[label]:>6}  {TALLY.reached[label]:>7}  {TALLY.succeeded[label]:>5}  "
              f"{statuses}; {kinds}")
    total = sum(TALLY.cases.values())
    print(f"{'total':<{width}}  {total:>6}  {sum(TALLY.reached.values()):>7}  {sum(TALLY.succeeded.values()):>5}")
    print()
    if args.details:
        for label in operations:
            print(f"{label}: " + " ".join(f"{p}:{n}" for p, n in sorted(TALLY.phases[label].items())))
            for text, count in TALLY.errors[label].most_common(12):
                print(f"    {count:>6}  {text}")
    if TALLY.links:
        print("stateful sequences, step after step (answers of the second step):")
        for (parent, parent_status, child), statuses in sorted(TALLY.links.items()):
            answers = " ".join(f"{s}:{n}" for s, n in sorted(statuses.items()))
            print(f"    {parent} {parent_status} -> {child}: {answers}")

    levels, notable, broken = server_log(work)
    print("server log: " + ", ".join(f"{n} {level}" for level, n in sorted(levels.items()))
          + (f", {len(broken)} line(s) broken by a request's data" if broken else ""))
    for line in notable:
        print("    " + line)
    reported = junit_failures(work)
    if reported:
        print("failures schemathesis reported (the first of each kind per operation and round; details above):")
        for (label, failure), found in sorted(reported.items()):
            counted = TALLY.failures.get(failure.rsplit("`", 2)[1] if failure.count("`") >= 2 else "", {}).get(label)
            print(f"    {label}: {failure} (in {found} round(s)" + (f"; {counted} failing cases)" if counted else ")"))
    problems = []
    failed_rounds = [n + 1 for n, code in enumerate(codes) if code != 0]
    if failed_rounds:
        problems.append(f"schemathesis reported failures in round(s) {failed_rounds} (details above; "
                        f"JUnit reports in {work})")
    if broken:
        problems.append(f"{len(broken)} line(s) of the server log do not start with a time: a request's data "
                        f"with a newline was written as it came, e.g. {broken[0]}")
    if not alive:
        problems.append(f"the server exited during the run (code {server.returncode}; see {work}/server.log)")
    unreached = [label for label in operations if TALLY.reached[label] == 0 and label != checks.UNDOCUMENTED]
    documented = document_operations()
    if not args.only:
        unreached += sorted(documented - set(operations))
    if unreached:
        problems.append("never answered other than 401 (or never tested): " + ", ".join(unreached))
    log(f"{total} cases in {rounds} round(s), {elapsed:.0f} s, seed {seed}")
    if problems:
        for problem in problems:
            log("FAILED: " + problem)
        sys.exit(1)
    if args.keep:
        log(f"kept {work} (server.log, requests.jsonl: every request and answer)")
    else:
        shutil.rmtree(work, ignore_errors=True)
    log("no check failed; every operation was reached")


def junit_failures(work):
    """{(operation, "- STxxx what failed"): rounds it was reported in}, from the JUnit reports."""
    import xml.etree.ElementTree as ElementTree
    found = collections.Counter()
    for name in sorted(os.listdir(work)):
        if name.startswith("junit-") and name.endswith(".xml"):
            for testcase in ElementTree.parse(os.path.join(work, name)).getroot().iter("testcase"):
                kinds = set()
                for problem in list(testcase.iter("failure")) + list(testcase.iter("error")):
                    lines = [line.strip() for line in (problem.text or "").splitlines()]
                    kinds.update(line for line in lines if line.startswith("- "))
                    if not any(line.startswith("- ") for line in lines):
                        kinds.add("- " + next((line for line in lines if line), problem.get("message") or "error"))
                for kind in kinds:
                    found[(testcase.get("name"), kind)] += 1
    return found


def server_log(work):
    """Lines of the server's log by level; the first few distinct ones at warning or above; and
    the lines that do not start with a time, which a request's data broke off another line (a
    newline in an id written as it came lets a client forge log lines)."""
    levels, notable, seen, broken = collections.Counter(), [], set(), []
    with open(os.path.join(work, "server.log"), errors="replace") as file:
        previous = ""
        for line in file:
            parts = line.split(" ", 3)
            if len(parts) < 4 or not re.match(r"\d{4}-\d\d-\d\dT", parts[0]):
                broken.append(f"{previous.rstrip()[:150]!r} then {line.rstrip()[:150]!r}")
                continue
            previous = line
            levels[parts[1]] += 1
            if parts[1] in ("warning", "error", "critical"):
                shape = re.sub(r"\S*=\S*|\d+", "…", parts[3])[:120]
                if shape not in seen and len(notable) < 8:
                    seen.add(shape)
                    notable.append(line.rstrip()[:300])
    return levels, notable, broken


def document_operations():
    """`METHOD /path` of every operation in openapi.yaml."""
    import yaml
    with open(DOCUMENT) as file:
        document = yaml.safe_load(file)
    return {f"{method.upper()} {path}" for path, item in document["paths"].items() for method in item
            if method in ("get", "put", "post", "delete", "patch", "head", "options")}


if __name__ == "__main__":
    main()
