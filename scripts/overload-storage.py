#!/usr/bin/env python3
"""Storage faults under posts: 6a "locked", another process holds BEGIN EXCLUSIVE on the SQLite
file for longer than its busy timeout (5 s); 6b "disk-full", the database on a small tmpfs,
filled.

    scripts/overload-storage.py BECKON_BINARY [--scale small|full] [--only locked|disk-full] [--keep]

Expected: 503 (507 for the full disk) in the documented error form with Retry-After, never 500;
recovery without help (a 202 within 5 s of the lock's release, within 10 s of space freed);
nothing acknowledged lost, checked after a SIGKILL and a restart; and in 6a every message
acknowledged for a never-connected device pushed. 6b mounts a tmpfs, so it needs root (it is
reported as skipped otherwise). Two rows; exits 1 if a check failed. Loopback only.
"""
import asyncio, collections, os, sqlite3, subprocess, threading, time

from beckonlib.asynchttp import Answer, Connection, Sync, attempt, call, healthy, kind
from beckonlib.overload import (Result, SQLITE_BUSY_SECONDS, issue_key, lost_messages, main, message, missing_by_get,
                                now, pushes_missing, register, register_many, server_after)
from beckonlib.report import counted, seconds, spread


async def posting(port, key, user, end, writers, record):
    """`writers` connections posting to `user` until `end`; record(outcome, started, finished)."""
    async def writer(number):
        connection = Connection(port)
        n = 0
        while now() < end:
            n += 1
            started = now()
            outcome = await attempt(connection.request("POST", "/v1/messages", message([user], w=number, n=n), key, timeout=30))
            record(outcome, started, now())
            if not (isinstance(outcome, Answer) and outcome.status == 202):
                await asyncio.sleep(0.1)
        connection.close()
    await asyncio.gather(*(writer(i) for i in range(writers)))


def storage_checks(result, outcomes, expected_statuses, what):
    """Every refusal must be one of `expected_statuses` in the error form; never 500."""
    for outcome in outcomes:
        # A read may well succeed while writes wait (SQLite's WAL lets readers past a writer).
        if isinstance(outcome, Answer) and not 200 <= outcome.status < 300:
            if not result.check(outcome.status in expected_statuses and outcome.error_form(),
                                f"{what}: answered {outcome.status} {outcome.body[:90]!r}; expected "
                                f"{' or '.join(map(str, expected_statuses))} in the error form"):
                return
        elif not isinstance(outcome, Answer):
            result.check(False, f"{what}: no answer ({kind(outcome)})")
            return


async def case_locked(context):
    scale = context.scale
    hold = scale["lock_seconds"]
    server = context.server("locked")
    server.start()
    port = server.port
    key = await issue_key(port, "chat")
    # u1's device stays connected (its messages need no push): posts to it show what a client
    # is answered while the lock is held.
    device = await register(port, "chat", "u1")
    session = await Sync.open(port, device.credential)
    await session.hello()
    # Devices that never connect get one message each, posted from 1 s before the lock on: the
    # ones appended just before it are planned while it is held. Each must still get its push.
    pool = list((await register_many(port, "chat", [f"offline{i:03d}" for i in range(scale["lock_offline"])],
                                     concurrency=32)).values())
    offline = {user.user: user for user in pool}
    offline_acked, offline_answers = {}, collections.Counter()
    acknowledged, outcomes, timeline = {"u1": set()}, [], []
    released = {}

    def record(outcome, started, finished):
        outcomes.append(outcome)
        timeline.append((started, finished, outcome))
        if isinstance(outcome, Answer) and outcome.status == 202:
            acknowledged["u1"].add(outcome.json()["id"])

    def locker(ready):
        connection = sqlite3.connect(server.database, timeout=30, isolation_level=None)
        connection.execute("BEGIN EXCLUSIVE")
        ready.set()
        time.sleep(hold)
        connection.execute("COMMIT")
        connection.close()
        released["at"] = now()

    async def post_to_offline(end):
        connection = Connection(port)
        while pool and now() < end:
            target = pool.pop()
            outcome = await attempt(connection.request("POST", "/v1/messages", message([target.user], offline=True), key, timeout=30))
            offline_answers[kind(outcome)] += 1
            if isinstance(outcome, Answer) and outcome.status == 202:
                offline_acked[outcome.json()["id"]] = target
        connection.close()

    async def drain_session():
        while True:
            frame = await session.receive()
            if frame.get("type") == "message":
                await session.send({"type": "ack", "upTo": frame["seq"]})

    started = now()
    offline_posters = [asyncio.ensure_future(post_to_offline(started + 0.5 + hold + 3)) for _ in range(8)]
    reader = asyncio.ensure_future(drain_session())
    await asyncio.sleep(0.5)
    # The lock, held `hold` s (over SQLite's 5 s busy timeout), and posts until 4 s after it went.
    ready = threading.Event()
    thread = threading.Thread(target=locker, args=(ready,))
    thread.start()
    await asyncio.to_thread(ready.wait)
    locked_at = now()
    read_during = None

    async def read_while_locked():
        nonlocal read_during
        await asyncio.sleep(1)
        some, target = next(iter(offline_acked.items()))
        read_during = await attempt(call(port, "GET", f"/v1/messages/{some}", token=target.credential, timeout=20))
    await asyncio.gather(posting(port, key, "u1", locked_at + hold + 4, 4, record), read_while_locked(), *offline_posters)
    thread.join()
    unpushed = await pushes_missing(server, offline_acked, wait=15)
    reader.cancel()
    session.close()
    during = collections.Counter(kind(o) for s, f, o in timeline if f <= released["at"] + 0.05)
    first_ok = min((f for s, f, o in timeline if s >= released["at"] and isinstance(o, Answer) and o.status == 202), default=None)
    result = Result("6a locked", f"BEGIN EXCLUSIVE from another process for {hold} s (busy timeout "
                                 f"{SQLITE_BUSY_SECONDS} s) under 4 posting connections, and posts to "
                                 f"never-connected devices across it; SIGKILL + restart")
    result.answers.update(collections.Counter(kind(o) for o in outcomes))
    result.answers[f"GET message while locked: {kind(read_during)}"] += 1
    result.answers.update({f"offline devices' posts: {k}": v for k, v in offline_answers.items()})
    storage_checks(result, outcomes + [o for o in [read_during]], (503,), "a request while the database was locked")
    refused = [o for o in outcomes if isinstance(o, Answer) and o.status == 503]
    result.check(all(o.headers.get("retry-after", "").isdigit() for o in refused), "a 503 without Retry-After")
    recovery = (first_ok - released["at"]) if first_ok else None
    result.check(recovery is not None and recovery < 5, f"posts after the lock went: first 202 {seconds(recovery)} after release")
    result.recovery = seconds(recovery)
    waits = [f - s for s, f, o in timeline]
    result.note(f"posts to the connected device answered while locked: {counted(during)}; their latency {spread(waits)}")
    result.note(f"first 202 {seconds(recovery)} after the lock was released")
    result.note(f"never-connected devices, one post each from 0.5 s before the lock: {counted(offline_answers)}; "
                f"{len(offline_acked) - len(unpushed)} of the {len(offline_acked)} acknowledged got their push")
    result.check(not unpushed, f"{len(unpushed)} messages answered 202 for a never-connected device never got a push "
                               f"(15 s after the lock went): the store error dropped their planning "
                               f"(e.g. {[(i, d.user) for i, d in list(unpushed.items())[:2]]})")
    server.kill()
    server.start()
    lost_ids = await lost_messages(port, acknowledged, {"u1": device}) + await missing_by_get(port, offline_acked)
    result.lost = len(lost_ids)
    total = len(acknowledged["u1"]) + len(offline_acked)
    result.check(result.lost == 0, f"{result.lost} of {total} acknowledged messages missing after SIGKILL and restart")
    await server_after(result, server)
    server.stop()
    return [result]


async def case_disk_full(context):
    scale = context.scale
    result = Result("6b disk-full", "database on an 8 MiB tmpfs, filled; posts; space freed; SIGKILL + restart")
    mount = os.path.join(context.work, "tiny-disk")
    os.makedirs(mount, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", mount], capture_output=True, text=True)
    if mounted.returncode != 0:
        result.done = "skipped: could not mount a tmpfs"
        result.note(f"mount -t tmpfs failed ({mounted.stderr.strip() or mounted.returncode}); this case needs root "
                    f"(CAP_SYS_ADMIN) or a prepared small filesystem; nothing was checked")
        result.after = "-"
        result.skipped = True
        return [result]
    server = None
    try:
        server = context.server("disk-full", database=os.path.join(mount, "beckon.sqlite"))
        server.start()
        port = server.port
        key = await issue_key(port, "chat")
        device = await register(port, "chat", "u1")
        acknowledged, outcomes = set(), []
        connection = Connection(port)
        for n in range(20):
            answer = await connection.request("POST", "/v1/messages", message(["u1"], n=n), key)
            assert answer.status == 202
            acknowledged.add(answer.json()["id"])
        ballast = [os.path.join(mount, "ballast"), os.path.join(mount, "ballast-small")]
        for path, block in zip(ballast, (1 << 16, 512)):
            with open(path, "wb", buffering=0) as f:
                try:
                    while True:
                        f.write(b"\0" * block)
                        f.flush()
                except OSError:
                    pass
        full = collections.Counter()
        for n in range(scale["disk_posts"]):
            outcome = await attempt(connection.request("POST", "/v1/messages", message(["u1"], n=n, pad="x" * 2000), key, timeout=30))
            outcomes.append(outcome)
            full[kind(outcome)] += 1
            if isinstance(outcome, Answer) and outcome.status == 202:
                acknowledged.add(outcome.json()["id"])
        health_full = await healthy(port)
        read_full = await attempt(connection.request("GET", f"/v1/messages/{next(iter(acknowledged))}", token=device.credential))
        storage_checks(result, outcomes, (503, 507), "a post with the disk full")
        for path in ballast:
            os.remove(path)
        freed = now()
        first_ok, after = None, collections.Counter()
        while now() - freed < 10:
            outcome = await attempt(connection.request("POST", "/v1/messages", message(["u1"], after="freed"), key, timeout=30))
            after[kind(outcome)] += 1
            if isinstance(outcome, Answer) and outcome.status == 202:
                acknowledged.add(outcome.json()["id"])
                first_ok = now() - freed
                break
            await asyncio.sleep(0.1)
        connection.close()
        result.answers.update({f"full: {k}": v for k, v in full.items()})
        result.answers[f"full: /health {'200' if health_full else 'failed'}"] += 1
        result.answers[f"full: GET message {kind(read_full)}"] += 1
        result.answers.update({f"freed: {k}": v for k, v in after.items()})
        result.recovery = seconds(first_ok)
        result.check(first_ok is not None, "no 202 within 10 s after the space was freed")
        server.kill()
        server.start()
        lost_ids = await lost_messages(port, {"u1": acknowledged}, {"u1": device})
        result.lost = len(lost_ids)
        result.check(result.lost == 0, f"{result.lost} of {len(acknowledged)} acknowledged messages missing after SIGKILL and restart")
        result.note(f"disk full: {counted(full)}; /health {'200' if health_full else 'failed'}; "
                    f"first 202 {seconds(first_ok)} after freeing")
        await server_after(result, server)
        server.stop()
    finally:
        if server is not None and server.alive():
            server.kill()
        subprocess.run(["umount", "-l", mount], capture_output=True)
    return [result]


# --- The run ------------------------------------------------------------------------------------


if __name__ == "__main__":
    main(__doc__, [("6a locked", case_locked), ("6b disk-full", case_disk_full)])
