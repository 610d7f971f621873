#!/usr/bin/env python3
"""APNs fault soak (reliability issue, item 5): `beckon serve` on SQLite pushing to a standalone
`beckon apns-emulator` that injects Apple's failures, one kind after another.

    scripts/apns-fault-soak.py BECKON_BINARY [--seconds N] [--seed S] [--cycles K] [--rate R]
                               [--grace G] [--phases A,B] [--json F] [--keep]

What it runs (beckonlib.node.Deployment: a generated P-256 key, the emulator with --auto-register,
one node pointed at it through apps.chat.apns.host/port/ca-file):

- The app uses the `content` strategy, so every message to a device without a sync session is
  one alert push (README, "Delivery"); the devices never connect.
- Phases, one per fault kind, alone and then combined (scripts/apns_faults/phases.py). In each,
  messages are posted at a steady --rate, one recipient each, while the fault is in force; then
  the faults are cleared, posting pauses, and the phase ends only when the server has drained:
  every push it decided is `sent` or `failed`, none `pending`. Draining between phases makes each
  phase's figures its own: nothing of one phase is still retrying in the next.
- The expired-token phase turns `wedge-on-expired-token` on, but the emulator wedges a connection
  only after refusing a really expired JWT (over an hour old), not after a forced
  `respond ExpiredProviderToken`; so the wedge itself comes from `POST /connections/wedge` (every
  live connection answers ExpiredProviderToken from then on), with forced answers in between.
- Last, shutdown with hung sends: `never-respond` in force, one message to each of --hung devices
  of their own, SIGTERM once every send hangs, and the time to exit; then a restart with the
  faults cleared, after which those pushes must reach their devices.

Settings that differ from the defaults, and why: delivery.retry-base-seconds 1 and
retry-cap-seconds 2 (defaults 5 and 600), so the outbox's 8 attempts fit in seconds and a phase
drains quickly; it also makes a lasting fault use them up sooner. database.cache-mib 2 and
database.mmap-mib 0 (defaults 32 and 0): the cache is bounded, but larger than this run's
whole database, so with the default memory would follow the database's growth for the whole run;
small, they fill early, and what still grows is the push path. shutdown.grace-seconds is --grace.

Where outcomes are read:

- The server's `GET /v1/delivery/report` (from the outbox, so it survives restarts): pushes,
  sent, failed and pending per push kind. A push is terminal when `sent` or `failed`.
- The server's `/metrics`, polled while draining (the report is read once, at the end: it loads
  every push record of its window, about 600 bytes each, and the allocator keeps that memory,
  which polling it would add to the memory check): `beckon_pushes_total` (pushes decided),
  `beckon_push_results_total{result}` (`sent` and `failed` are final, `retry` is an outbox retry),
  `beckon_delivery_events_queued`, and the APNs client's `apns_retries_total`.
- The emulator's `GET /counters` (requests received, answers by status and reason, GOAWAYs,
  resets, streams left unanswered) and, at the end, each device's `GET /devices/{token}/received`:
  the apns-ids it accepted, and how many times each.
- The node's outbox table (`push_outbox`, read-only from the SQLite file at the end): each push's
  apns-id, state, last status and reason, and attempts; a push belongs to the phase during which
  it was created. This is what joins the server's outcomes to the emulator's per push.

The checks (exit 0 only if all pass):

1. Terminal outcomes: every phase drains within its limit (client deadline 30 s + every outbox
   backoff at its cap + 15 s, 30 s more for a phase with never-answered streams); at the end the
   report says pending 0, pushes = messages posted (each message became one push) and sent +
   failed = pushes; every push recorded `sent` was accepted by the emulator, and it accepted
   nothing the server did not decide. A push recorded `failed` may still have been accepted, when
   the connection died with the answer pending: shown as "acc.f", not an error.
2. No retry storm: per phase, requests received by the emulator / pushes at most the documented
   bound, the APNs client's attempts per send (4, README "Limits and timings") x delivery.attempts
   (8, README "Configuration") = 32; and no push accepted more than 32 times. A stream left
   unprocessed by GOAWAY or refused is resent by the client without using an attempt; the emulator
   never processed it and does not count it. The `retry-exhaustion` probe (beside the
   never-respond phase) shows the bound is reached but not passed: a token answered 503 for good
   gets 4 x 8 requests per push, and the push ends `failed`.
3. Memory plateaus: the server's VmRSS (/proc/PID/status), sampled every 0.5 s from the first
   phase to the last drain. With --cycles K >= 2 (the phases run K times), the last cycle's peak
   at most 10 % + 8 MiB above the cycle before's: the same faults again must not need more
   memory. With one cycle, the last third's peak against the middle third's, alike (a short run
   says little). RssAnon is shown beside it.
4. Shutdown: SIGTERM while sends hang ends the process within shutdown.grace-seconds + 2 s (the
   margin: closing the store, checkpointing the WAL; an idle node's stop is measured and shown).
   The hung pushes were claimed, not lost: after a restart each reaches its device.
5. Every message posted got 202, and the server never exits on its own during the soak.

Timing: the default (CI) run, --seconds 24 (2.2 s of posting per phase), takes about 65 s on a
2-core machine when shutdown keeps its grace (90 s while it waits out the client's 30 s deadline);
the never-respond phase must wait out that deadline too. A long run: --seconds 720 --cycles 3
(about 18 s per phase, one more combined phase, about 16 minutes). Everything stays on loopback.
"""
import argparse, collections, json, os, random, shutil, signal, subprocess, sys, tempfile, threading, time
from concurrent.futures import ThreadPoolExecutor

from beckonlib import metrics
from beckonlib.httpjson import request, user_token
from beckonlib.measure import memory_kib
from beckonlib.node import Deployment
from apns_faults.figures import aggregate, outbox, per_push, plateau, print_table
from apns_faults.phases import phases

SECRET = "fault-soak-user-token-secret-0123456789ab"
ADMIN = "fault-soak-admin-token-0123456789abcdef01"

# The documented retry policy (README "The APNs client", "Configuration").
CLIENT_ATTEMPTS = 4          # APNSClientConfiguration.maximumAttempts
CLIENT_DEADLINE = 30         # APNSClientConfiguration.defaultDeadline, seconds
DELIVERY_ATTEMPTS = 8        # delivery.attempts (default, kept)
RETRY_BASE, RETRY_CAP = 1, 2  # delivery.retry-base/cap-seconds: short, so a phase drains in seconds
SHUTDOWN_MARGIN = 2.0        # seconds allowed past shutdown.grace-seconds
CACHE_MIB = 2                # database.cache-mib (see main)


def log(text):
    print(text, flush=True)


# --- Reading the three sources ------------------------------------------------------------------

def report_totals(base, key):
    status, report = request(base, "GET", "/v1/delivery/report?sinceSeconds=86400", token=key, timeout=30)
    assert status == 200, report
    totals = {"pushes": 0, "sent": 0, "failed": 0, "pending": 0}
    for kind in report["kinds"]:
        for field in totals:
            totals[field] += kind[field]
    return totals


# --- The soak -----------------------------------------------------------------------------------

class Soak:
    def __init__(self, args, deployment, work):
        self.args, self.deployment, self.work = args, deployment, work
        self.rng = random.Random(args.seed)
        self.emu = deployment.emulator
        self.base = deployment.base(1)
        self.posted = 0
        self.post_errors = []
        self.lock = threading.Lock()
        self.pool = ThreadPoolExecutor(4)
        self.samples = []          # (time, VmRSS KiB, RssAnon KiB, cycle)
        self.cycle = 0
        self.sampling = False

    # Setup

    def register(self, user, device):
        token = os.urandom(32).hex()
        status, answer = request(self.base, "POST", "/v1/devices", {
            "deviceId": device, "bundleId": "com.example.chat", "environment": "sandbox",
            "tokens": {"remote": token}}, user_token(SECRET, "chat", user, lifetime=7200))
        assert status == 201, answer
        return token

    def setup(self):
        status, answer = request(self.base, "POST", "/v1/admin/apps/chat/keys", {}, ADMIN)
        assert status == 201, answer
        self.key = answer["key"]
        self.users = [f"u{n}" for n in range(self.args.devices)]
        self.token_of = {user: self.register(user, "phone-" + user) for user in self.users}
        self.tokens = [self.token_of[user] for user in self.users]
        # Devices of their own: the retry-exhaustion probe, and the sends hung at shutdown.
        self.doomed_user = "doomed"
        self.token_of[self.doomed_user] = self.register(self.doomed_user, "phone-doomed")
        self.shutdown_users = [f"s{n}" for n in range(self.args.hung)]
        for user in self.shutdown_users:
            self.token_of[user] = self.register(user, "phone-" + user)

    # Posting

    def post(self, user, marker="soak"):
        with self.lock:
            self.posted += 1
            number = self.posted
        body = {"recipients": {"users": [user]}, "kind": "message", "payload": {"n": number},
                "notification": {"title": "Soak", "body": f"{marker} {number}"}}
        try:
            status, answer = request(self.base, "POST", "/v1/messages", body, self.key, timeout=30)
        except OSError as error:
            status, answer = None, str(error)
        if status != 202:
            with self.lock:
                self.posted -= 1
                self.post_errors.append((status, answer))

    # Memory

    def sample_memory(self):
        pid = self.deployment.nodes[1].process.pid
        while self.sampling:
            rss, anon = memory_kib(pid, "VmRSS"), memory_kib(pid, "RssAnon")
            if rss is not None and anon is not None:
                self.samples.append((time.time(), rss, anon, self.cycle))
            time.sleep(0.5)

    # Snapshots and draining

    def snapshot(self):
        return {"time": time.time(), "emulator": self.emu.counters(), "metrics": metrics.fetch(self.base), "posted": self.posted}

    def drained(self):
        """The metrics say every message was planned and every push decided has a final result."""
        values = metrics.fetch(self.base)
        decided = metrics.total(values, "beckon_pushes_total")
        final = metrics.total(values, "beckon_push_results_total", result="sent") + \
            metrics.total(values, "beckon_push_results_total", result="failed")
        queued = metrics.total(values, "beckon_delivery_events_queued")
        return decided >= self.posted and final >= decided and queued == 0, (decided, final, queued)

    def drain(self, limit):
        started = time.time()
        while time.time() - started < limit:
            # Metrics only: the delivery report reads every push record of its window, and the
            # allocator keeps that much memory afterwards, which would blur the memory check.
            done, figures = self.drained()
            if done:
                return True, time.time() - started, figures
            self.alive()
            time.sleep(0.25)
        return False, time.time() - started, self.drained()[1]

    def alive(self):
        process = self.deployment.nodes[1].process
        if process.poll() is not None:
            raise SystemExit(f"apns-fault-soak: FAIL: beckon serve exited on its own (status {process.returncode}); "
                             f"see {self.work}/node1.log")

    # One phase

    def doom(self):
        self.emu.fault({"type": "respond", "reason": "ServiceUnavailable", "deviceToken": self.token_of[self.doomed_user]})

    def post_probe(self):
        self.post(self.doomed_user, marker="doomed")
        self.probe_pushes += 1

    def run_phase(self, phase, seconds):
        self.emu("DELETE", "/faults")
        before = self.snapshot()
        self.probe_pushes = 0
        if phase.probe:
            self.doom()
        for fault in phase.faults:
            self.emu.fault(fault)
        if phase.start:
            phase.start(self)
        if phase.probe:
            self.post_probe()
        started = time.time()
        interval = 1.0 / self.args.rate
        futures, n, next_tick = [], 0, 0.0
        while True:
            now = time.time()
            if now - started >= seconds:
                break
            if (phase.tick or phase.probe) and now - started >= next_tick:
                if phase.tick:
                    phase.tick(self, next_tick)
                if phase.probe and next_tick > 0 and next_tick % 10 == 0:
                    self.post_probe()
                next_tick += 0.25
                continue
            due = started + n * interval
            if now >= due:
                futures.append(self.pool.submit(self.post, self.rng.choice(self.users)))
                n += 1
                continue
            wake = min(due, started + next_tick) if phase.tick or phase.probe else due
            time.sleep(max(0.0, min(wake, started + seconds) - time.time()))
        for future in futures:
            future.result()
        posting = time.time() - started
        # Faults off (but the probe's), then wait for every push to end.
        self.emu("DELETE", "/faults")
        if phase.probe:
            self.doom()
        limit = CLIENT_DEADLINE + RETRY_CAP * DELIVERY_ATTEMPTS + 15 + (CLIENT_DEADLINE if "never" in phase.name else 0)
        ok, drain_seconds, figures = self.drain(limit)
        self.emu("DELETE", "/faults")
        after = self.snapshot()
        return self.figures(phase, before, after, posting, drain_seconds, ok, figures)

    def figures(self, phase, before, after, posting, drain_seconds, ok, stuck):
        e0, e1 = before["emulator"], after["emulator"]
        m0, m1 = before["metrics"], after["metrics"]

        def emu(field):
            return e1.get(field, 0) - e0.get(field, 0)

        def status(code):
            return e1["byStatus"].get(code, 0) - e0["byStatus"].get(code, 0)

        def reason(name):
            return e1["byReason"].get(name, 0) - e0["byReason"].get(name, 0)

        def metric(name, **labels):
            return metrics.total(m1, name, **labels) - metrics.total(m0, name, **labels)

        pushes = metric("beckon_pushes_total")
        requests = emu("requests")
        row = {
            "phase": phase.name, "faults": phase.description, "drained": ok, "drain_seconds": round(drain_seconds, 1),
            "window": (before["time"], after["time"]),
            "posting_seconds": round(posting, 1), "messages": after["posted"] - before["posted"], "pushes": int(pushes),
            "requests": requests, "factor": round(requests / pushes, 3) if pushes else None,
            "sent": int(metric("beckon_push_results_total", result="sent")),
            "failed": int(metric("beckon_push_results_total", result="failed")),
            "dispatcher_retries": int(metric("beckon_push_results_total", result="retry")),
            "client_attempts": int(metric("apns_requests_total")),
            "client_no_answer": int(metric("apns_requests_total", status="none")),
            "client_retries": int(metric("apns_retries_total")),
            "answers": {code: status(code) for code in sorted(set(e1["byStatus"]) | set(e0["byStatus"])) if status(code)},
            "reasons": {name: reason(name) for name in sorted(set(e1["byReason"]) | set(e0["byReason"])) if reason(name)},
            "unanswered": emu("unanswered"), "goaways": emu("goAwaysSent"), "resets": emu("connectionResets"),
            "refused_streams": emu("refusedStreams"), "connections": emu("connectionsAccepted"),
            "error_budget_goaways": emu("errorBudgetDisconnects"),
        }
        if not ok:
            row["stuck"] = {"decided": stuck[0], "final": stuck[1], "queued": stuck[2]}
        if not phase.probe:
            return [row]
        # Only the probe's token is answered 503 in this phase: its requests, exactly. Every
        # other push of the phase must end sent, so the phase's failures are the probe's.
        probe = dict(row, phase="retry-exhaustion", faults="one token answered 503 for good (beside " + phase.name + ")",
                     pushes=self.probe_pushes, requests=reason("ServiceUnavailable"), sent=0,
                     failed=min(row["failed"], self.probe_pushes), answers={"503": reason("ServiceUnavailable")},
                     reasons={"ServiceUnavailable": reason("ServiceUnavailable")}, unanswered=0, goaways=0, resets=0,
                     connections=0, error_budget_goaways=0, dispatcher_retries=None, client_retries=None,
                     client_attempts=None, client_no_answer=None, probe=True)
        probe["factor"] = round(probe["requests"] / probe["pushes"], 3)
        row["pushes"] -= probe["pushes"]
        row["requests"] -= probe["requests"]
        row["failed"] -= probe["failed"]
        row["answers"]["503"] = row["answers"].get("503", 0) - probe["requests"]
        row["reasons"]["ServiceUnavailable"] = row["reasons"].get("ServiceUnavailable", 0) - probe["requests"]
        row["answers"] = {k: v for k, v in row["answers"].items() if v}
        row["reasons"] = {k: v for k, v in row["reasons"].items() if v}
        row["factor"] = round(row["requests"] / row["pushes"], 3) if row["pushes"] else None
        row["faults"] += " (the retry-exhaustion probe beside it, counted apart)"
        return [row, probe]


# --- Checks and the run ---------------------------------------------------------------------------

def received_ids(emu, token):
    """The apns-ids the device accepted (one per copy) and the payloads."""
    notifications = emu.received(token)
    return [n["apnsId"].lower() for n in notifications], [n.get("payload") for n in notifications]


def shutdown_test(soak, deployment, args, checks):
    """never-respond for everything, one message to each shutdown device, SIGTERM once they hang."""
    emu, base, key = soak.emu, soak.base, soak.key
    emu("DELETE", "/faults")
    before = emu.counters()
    emu.fault({"type": "never-respond"})
    for user in soak.shutdown_users:
        soak.post(user, marker="hung")
    hung = 0
    deadline = time.time() + 20
    while time.time() < deadline:
        hung = emu.counters()["unanswered"] - before["unanswered"]
        if hung >= len(soak.shutdown_users):
            break
        time.sleep(0.1)
    process = deployment.nodes[1].process
    started = time.time()
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=args.grace + 60)
        killed = False
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        killed = True
    took = time.time() - started
    limit = args.grace + SHUTDOWN_MARGIN
    checks.append(("shutdown with hung sends within grace", not killed and took <= limit,
                   f"{hung} sends hung at SIGTERM; exited after {took:.1f} s (status {process.returncode}"
                   f"{', killed after waiting ' + str(args.grace + 60) + ' s' if killed else ''}); "
                   f"limit shutdown.grace-seconds {args.grace} + {SHUTDOWN_MARGIN:.0f} s"))
    # Restart with the faults cleared: the hung pushes were claimed, not lost.
    emu("DELETE", "/faults")
    shutil.move(os.path.join(soak.work, "node1.log"), os.path.join(soak.work, "node1-before-restart.log"))
    restarted = time.time()
    deployment.start(1)
    soak.base = base = deployment.base(1)
    arrived = {}
    while time.time() - restarted < 60:
        arrived = {user: any(p and p.get("aps", {}).get("alert", {}).get("body", "").startswith("hung ")
                             for p in received_ids(emu, soak.token_of[user])[1]) for user in soak.shutdown_users}
        if all(arrived.values()):
            break
        time.sleep(0.25)
    totals = report_totals(base, key)
    checks.append(("hung pushes sent after restart", all(arrived.values()) and totals["pending"] == 0,
                   f"{sum(arrived.values())} of {len(arrived)} reached their device {time.time() - restarted:.1f} s "
                   f"after the restart began; report: pending {totals['pending']}"))
    # The same stop without hung sends, for comparison.
    process = deployment.nodes[1].process
    started = time.time()
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    idle = time.time() - started
    return took, idle, totals


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--seconds", type=float, default=24, help="seconds of posting under faults, shared by the phases")
    parser.add_argument("--seed", type=int, default=1, help="seeds who gets each message and the token-scoped faults")
    parser.add_argument("--rate", type=float, default=25, help="messages a second while a phase posts")
    parser.add_argument("--devices", type=int, default=40, help="devices (one user each) the messages go to")
    parser.add_argument("--hung", type=int, default=6, help="sends hung at SIGTERM")
    parser.add_argument("--grace", type=int, default=5, help="shutdown.grace-seconds")
    parser.add_argument("--long", action="store_true", help="also the phases meant for long runs (on with --seconds >= 300)")
    parser.add_argument("--phases", help="only these phases, comma-separated (e.g. to reproduce one)")
    parser.add_argument("--cycles", type=int, default=1, help="run the phases this many times (--seconds is shared by all)")
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("--keep", action="store_true", help="keep the database too (the logs are always kept)")
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    selected = [p for p in phases() if not p.long_only or args.long or args.seconds >= 300]
    if args.phases:
        wanted = args.phases.split(",")
        unknown = set(wanted) - {p.name for p in phases()}
        if unknown:
            sys.exit(f"apns-fault-soak: no phase {', '.join(sorted(unknown))}; there are {', '.join(p.name for p in phases())}")
        selected = [p for p in phases() if p.name in wanted]
    per_phase = max(1.0, args.seconds / (len(selected) * args.cycles))

    work = tempfile.mkdtemp(prefix="beckon-fault-soak.")
    began = time.time()
    deployment = Deployment(binary, work, SECRET, ADMIN, sqlite_path=os.path.join(work, "beckon.sqlite"), extra_env={
        "BECKON_APPS_CHAT_DELIVERY_STRATEGY": "content",
        "BECKON_DELIVERY_ATTEMPTS": str(DELIVERY_ATTEMPTS),
        "BECKON_DELIVERY_RETRY_BASE_SECONDS": str(RETRY_BASE), "BECKON_DELIVERY_RETRY_CAP_SECONDS": str(RETRY_CAP),
        "BECKON_SHUTDOWN_GRACE_SECONDS": str(args.grace),
        # The store's caches are bounded by design but larger than this run's whole database (32 MiB
        # of pages per SQLite connection, a 1 GiB memory map), so with the defaults memory would
        # follow the database's growth for the whole run. Small and saturated early, they leave any
        # growth that remains to the push path.
        "BECKON_DATABASE_CACHE_MIB": str(CACHE_MIB), "BECKON_DATABASE_MMAP_MIB": "0"})
    checks, rows, passed = [], [], False
    try:
        soak = Soak(args, deployment, work)
        soak.setup()
        log(f"apns-fault-soak: emulator and beckon serve started, {len(soak.token_of)} devices registered "
            f"in {time.time() - began:.1f} s (work directory {work})")
        bound = CLIENT_ATTEMPTS * DELIVERY_ATTEMPTS
        log(f"apns-fault-soak: {len(selected)} phases of {per_phase:.1f} s at {args.rate:g} messages/s to "
            f"{args.devices} offline devices (content strategy: one alert each), seed {args.seed}; "
            f"request bound per push {CLIENT_ATTEMPTS} client attempts x {DELIVERY_ATTEMPTS} delivery.attempts = {bound}")
        soak.sampling = True
        sampler = threading.Thread(target=soak.sample_memory, daemon=True)
        sampler.start()
        for cycle, phase in [(c, p) for c in range(args.cycles) for p in selected]:
            soak.cycle = cycle
            for row in soak.run_phase(phase, per_phase):
                row["cycle"] = cycle + 1
                rows.append(row)
                log(f"  {time.time() - began:5.0f} s  {row['phase']:<20} {row['pushes']:>5} pushes {row['requests']:>6} "
                    f"requests, factor {row['factor']}, answers {row['answers']}, drained in {row['drain_seconds']} s"
                    + ("" if row["drained"] else f"  NOT DRAINED {row.get('stuck')}"))
        soak.sampling = False
        sampler.join()
        soak_end = time.time()

        # 1. Terminal outcomes.
        totals = report_totals(soak.base, soak.key)
        stuck = [r["phase"] for r in rows if not r["drained"]]
        checks.append(("every phase drained", not stuck, "all phases" if not stuck else "not drained: " + ", ".join(stuck)))
        checks.append(("every push terminal", totals["pending"] == 0 and totals["pushes"] == soak.posted
                       and totals["sent"] + totals["failed"] == totals["pushes"],
                       f"{soak.posted} messages, report: {totals['pushes']} pushes, {totals['sent']} sent, "
                       f"{totals['failed']} failed, {totals['pending']} pending"))
        accepted = collections.Counter()
        for user, token in soak.token_of.items():
            if user not in soak.shutdown_users:
                accepted.update(received_ids(soak.emu, token)[0])
        pushes = outbox(os.path.join(work, "beckon.sqlite"))
        per_push(rows, pushes, accepted)
        sent = {pid for pid, push in pushes.items() if push[1] == "sent"}
        missing, unknown = sent - set(accepted), set(accepted) - set(pushes)
        checks.append(("every push recorded sent reached the emulator", not missing and not unknown,
                       f"{len(sent)} recorded sent, {len(missing)} of them never accepted by the emulator; "
                       f"{len(unknown)} apns-ids accepted that the server never decided; "
                       f"{sum(r['failed_but_accepted'] for r in rows)} recorded failed although accepted (the answer "
                       f"was lost with its connection), {sum(accepted.values()) - len(accepted)} accepted twice"))
        checks.append(("every message accepted", not soak.post_errors,
                       f"{soak.posted} messages got 202" + (f"; {len(soak.post_errors)} did not, first: "
                                                            f"{soak.post_errors[0]}" if soak.post_errors else "")))
        # 2. No retry storm.
        most = max(rows, key=lambda r: r["most_copies"])
        checks.append(("no push accepted more often than the bound", most["most_copies"] <= CLIENT_ATTEMPTS * DELIVERY_ATTEMPTS,
                       f"at most {most['most_copies']} copies of one push ({most['phase']})"))
        over = [f"{r['phase']} {r['factor']}" for r in rows if r["factor"] is not None and r["factor"] > bound]
        all_pushes, all_requests = sum(r["pushes"] for r in rows), sum(r["requests"] for r in rows)
        checks.append(("requests per push within the bound", not over,
                       f"overall {all_requests} requests / {all_pushes} pushes = {all_requests / max(1, all_pushes):.3f}; "
                       f"highest fault phase {max((r['factor'] or 0) for r in rows if not r.get('probe')):.3f}; "
                       f"bound {bound}"
                       + ("" if not over else "; over: " + ", ".join(over))))
        probes = [row for row in rows if row.get("probe")]
        if probes:
            pushed, asked = sum(r["pushes"] for r in probes), sum(r["requests"] for r in probes)
            failed = sum(r["failed"] for r in probes)
            checks.append(("retry exhaustion ends failed, within the bound", asked <= bound * pushed and failed == pushed,
                           f"{pushed} push(es) to the token answered 503 for good got {asked} requests "
                           f"(bound {bound} each) and {failed} ended failed"))
        # 3. Memory.
        ok, text = plateau(soak.samples, args.cycles)
        checks.append(("memory plateaus", ok, text))
        # 4. Shutdown with hung sends, and the restart.
        took, idle, after = shutdown_test(soak, deployment, args, checks)
        checks[-1] = (checks[-1][0], checks[-1][1], checks[-1][2] + f"; an idle stop takes {idle:.1f} s")
        checks.append(("server stayed up", True, "beckon serve never exited on its own during the soak"))

        log("")
        log(f"per fault kind (pushes decided by the server; requests received by the emulator; factor = requests / pushes; "
            f"acc.f = failed although the emulator accepted it; dup = accepted twice; "
            f"no ans. = streams left unanswered; goaway = GOAWAYs sent, error budget included; "
            f"c.retry / d.retry = APNs client / outbox retries):")
        table = aggregate(rows) if args.cycles > 1 else rows
        print_table(table)
        for row in table:
            if row["failed_reasons"]:
                log(f"  {row['phase']}: failed {row['failed_reasons']}, at most {row['max_outbox_attempts']} outbox attempts")
        log("")
        for name, ok, detail in checks:
            log(f"{'PASS' if ok else 'FAIL'}  {name}: {detail}")
        passed = all(ok for _, ok, _ in checks)
        total = time.time() - began
        log(f"\napns-fault-soak: {'PASS' if passed else 'FAIL'} in {total:.0f} s "
            f"(soak {soak_end - began:.0f} s, shutdown test {took:.1f} s); work directory {work}")
        if args.json:
            with open(args.json, "w") as out:
                json.dump({"seed": args.seed, "seconds": args.seconds, "rate": args.rate, "bound": bound, "phases": rows,
                           "checks": [{"name": n, "passed": ok, "detail": d} for n, ok, d in checks],
                           "memory_kib": [(round(t - began, 1), rss, anon, cycle + 1) for t, rss, anon, cycle in soak.samples],
                           "shutdown_seconds": took, "idle_shutdown_seconds": idle, "duration_seconds": total}, out, indent=1)
    finally:
        deployment.stop()
        if passed and not args.keep:
            # The logs stay (scripts/test.sh scans every server log for secrets); the database goes.
            for name in os.listdir(work):
                if name.startswith("beckon.sqlite"):
                    os.remove(os.path.join(work, name))
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
