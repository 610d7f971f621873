#!/usr/bin/env python3
"""Duplicate pushes under APNs faults (issue 36, item 4): how many devices get one apns-id twice.

    scripts/apns-duplicates.py BECKON_BINARY [--devices 2000] [--failure-rate 0.6] [--goaway-every 97]
                               [--runs 1] [--seed S] [--json F]

What it runs (beckonlib.node.Deployment, as scripts/apns-fault-soak.py: a standalone `beckon
apns-emulator` with --auto-register and one `beckon serve` on SQLite pointed at it):

- --devices offline devices (one user each; they never open a sync session), app strategy
  `content`, so each message is one alert push (README, "Delivery");
- the emulator fails --failure-rate of the requests that pass validation, half 500
  `InternalServerError`, half 503 `ServiceUnavailable`, and each connection sends GOAWAY after
  --goaway-every streams (`random-failures` and `goaway-after-streams`, docs/apns-emulator.md);
- one message to each user, 100 recipients per POST, posted at once; then it waits until every
  push is `sent` or `failed` (the server's /metrics), and reads what each device received
  (`GET /devices/{token}/received`).

It prints, per run: devices with two (or more) deliveries of one apns-id (the figure of issue 36),
devices that got nothing, the outbox attempts of each duplicated push (1: the APNs client's own
retries sent it twice; more: the outbox tried again after the client gave up), and the emulator's
counters. A duplicate that APNs' behaviour forces (a 200 lost with its connection, docs/apns.md G.19)
can remain; the script fails (exit 1) only when a device got nothing.

delivery.retry-base-seconds 1 and retry-cap-seconds 2 (defaults 5 and 600) so the outbox's
retries fit in seconds; everything else is the default. Loopback only.
"""
import argparse, collections, json, os, random, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor

from beckonlib import metrics
from beckonlib.httpjson import request, user_token
from beckonlib.node import Deployment, store_rows

SECRET = "duplicates-user-token-secret-0123456789ab"
ADMIN = "duplicates-admin-token-0123456789abcdef01"


def log(text):
    print(text, flush=True)


def metric_sum(base, name, **labels):
    return metrics.total(metrics.fetch(base), name, **labels)


def run_once(binary, args, seed):
    work = tempfile.mkdtemp(prefix="beckon-duplicates.")
    sqlite_path = os.path.join(work, "beckon.sqlite")
    deployment = Deployment(binary, work, SECRET, ADMIN, sqlite_path=sqlite_path, extra_env={
        "BECKON_APPS_CHAT_DELIVERY_STRATEGY": "content",
        "BECKON_DELIVERY_RETRY_BASE_SECONDS": "1", "BECKON_DELIVERY_RETRY_CAP_SECONDS": "2"})
    try:
        base = deployment.base(1)
        emulator = deployment.emulator
        status, answer = request(base, "POST", "/v1/admin/apps/chat/keys", {}, ADMIN)
        assert status == 201, answer
        key = answer["key"]
        rng = random.Random(seed)
        tokens = {f"u{n}": bytes(rng.getrandbits(8) for _ in range(32)).hex() for n in range(args.devices)}

        def register(user):
            status, answer = request(base, "POST", "/v1/devices", {
                "deviceId": "phone-" + user, "bundleId": "com.example.chat", "environment": "sandbox",
                "tokens": {"remote": tokens[user]}}, user_token(SECRET, "chat", user, lifetime=7200), timeout=30)
            assert status == 201, answer

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(register, tokens))
        half = args.failure_rate / 2
        for fault in ({"type": "random-failures", "internalServerErrorRate": half, "serviceUnavailableRate": half},
                      {"type": "goaway-after-streams", "streams": args.goaway_every}):
            emulator.fault(fault)
        # Connections opened before the faults would never reach the GOAWAY's stream count.
        emulator("POST", "/connections/goaway", {"reason": "Shutdown"})

        users = list(tokens)
        batches = [users[i:i + 100] for i in range(0, len(users), 100)]
        started = time.time()

        def post(batch):
            status, answer = request(base, "POST", "/v1/messages", {
                "recipients": {"users": batch}, "kind": "message", "payload": {"n": batch[0]},
                "notification": {"title": "Duplicates", "body": "one alert each"}}, key, timeout=60)
            assert status == 202, answer

        with ThreadPoolExecutor(4) as pool:
            list(pool.map(post, batches))
        limit = started + 300
        while time.time() < limit:
            decided = metric_sum(base, "beckon_pushes_total")
            final = metric_sum(base, "beckon_push_results_total", result="sent") + \
                metric_sum(base, "beckon_push_results_total", result="failed")
            if decided >= len(users) and final >= decided:
                break
            time.sleep(0.5)
        drained = time.time() - started
        counters = emulator.counters()
        emulator.clear_faults()

        outbox = {row[0].lower(): (row[1], row[2], row[3])
                  for row in store_rows(sqlite_path, "SELECT id, state, attempts, apns_reason FROM push_outbox")}
        duplicated, missing, copies = [], [], collections.Counter()
        for user, token in tokens.items():
            ids = emulator.received_ids(token)
            if not ids:
                missing.append(user)
            counted = collections.Counter(ids)
            extra = {pid: count for pid, count in counted.items() if count > 1}
            if extra:
                duplicated.append((user, extra))
                copies.update(extra.values())
        attempts = collections.Counter(outbox.get(pid, (None, None))[1] for _, extra in duplicated for pid in extra)
        failed_accepted = sum(1 for pid, (state, _, _) in outbox.items() if state == "failed")
        row = {"seed": seed, "devices": len(tokens), "duplicated_devices": len(duplicated), "missing_devices": len(missing),
               "copies": dict(copies), "outbox_attempts_of_duplicates": {str(k): v for k, v in attempts.items()},
               "failed_pushes": failed_accepted, "duplicated_ids": sorted(pid for _, extra in duplicated for pid in extra), "drain_seconds": round(drained, 1),
               "client_retries": metric_sum(base, "apns_retries_total"),
               "emulator": {k: counters.get(k) for k in ("requests", "byStatus", "goAwaysSent", "connectionsAccepted",
                                                         "connectionResets", "refusedStreams", "delivered")},
               "work": work}
        return row
    finally:
        deployment.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--devices", type=int, default=2000)
    parser.add_argument("--failure-rate", type=float, default=0.6, help="share of valid requests answered 500/503 (half each)")
    parser.add_argument("--goaway-every", type=int, default=97, help="GOAWAY after this many streams per connection")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1, help="seeds the device tokens (the emulator's failures are random)")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    rows = []
    for run in range(args.runs):
        row = run_once(binary, args, args.seed + run)
        rows.append(row)
        log(f"run {run + 1}: {row['duplicated_devices']} of {row['devices']} devices got one apns-id twice "
            f"({100 * row['duplicated_devices'] / row['devices']:.2f} %), {row['missing_devices']} got nothing; "
            f"outbox attempts of the duplicated pushes {row['outbox_attempts_of_duplicates']}; "
            f"{row['failed_pushes']} pushes ended failed; drained in {row['drain_seconds']} s; "
            f"client retries {row['client_retries']:.0f}; emulator {json.dumps(row['emulator'])}; logs in {row['work']}")
    total = sum(r["duplicated_devices"] for r in rows)
    log(f"apns-duplicates: {total} devices with a duplicate over {len(rows)} run(s) of {args.devices} devices "
        f"({', '.join(str(r['duplicated_devices']) for r in rows)})")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=1)
    sys.exit(1 if any(r["missing_devices"] for r in rows) else 0)


if __name__ == "__main__":
    main()
