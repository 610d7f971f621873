#!/usr/bin/env python3
"""Descriptor exhaustion: `beckon serve` with a low open-files limit (RLIMIT_NOFILE soft = hard =
512) and more connections at once than it allows.

    scripts/overload-descriptors.py BECKON_BINARY [--scale small|full] [--keep]

A: the default http.max-connections (the open-files limit less 256): connections over it are
closed at once, never more answered than the limit; requests keep coming on connections held
from before and are answered (the reserve leaves SQLite its descriptors), a sync session held
through it gets its message live; then recovery, and nothing acknowledged lost.
B: http.max-connections set above the open-files limit (2000), so accept(2) meets EMFILE and
SQLite competes for descriptors: no crash, nothing but 2xx or 503 in the error form on the held
connections, recovery once the connections go, nothing acknowledged lost.

Small scale (CI): 600 and 700 connections; full: 1,500 each. One row; exits 1 if a check failed
(the work directory with the server's log is then kept and printed). Loopback only.
"""
import asyncio, collections

from beckonlib.asynchttp import Answer, Connection, Sync, attempt, close_writer, kind
from beckonlib.overload import (REFUSED, Result, hold_connections, issue_key, lost_messages, main, message, now,
                                recover, register, server_after)
from beckonlib.report import counted, seconds, spread


async def case_descriptors(context):
    scale = context.scale
    result = Result("1 descriptors", "")
    nofile = 512
    # A: the default http.max-connections (the open-files limit less 256).
    server = context.server("fd-default", nofile=nofile)
    server.start()
    port, limit = server.port, server.limit()
    result.check(limit == nofile - 256, f"http.max-connections with RLIMIT_NOFILE {nofile} is {limit}, expected {nofile - 256}")
    key = await issue_key(port, "chat")
    device = await register(port, "chat", "u1")
    session = await Sync.open(port, device.credential)
    await session.hello()
    keeper = Connection(port)  # held from before the flood
    assert (await keeper.request("GET", "/health")).status == 200
    count = scale["fd_flood"]
    held, kinds, refused_after, _ = await hold_connections(port, count, connect_timeout=5, answer_timeout=5)
    result.answers.update(kinds)
    answered = sum(v for k, v in kinds.items() if k.endswith("(held)"))
    result.check(answered <= limit, f"{answered} connections answered, over http.max-connections {limit}")
    result.check(kinds[REFUSED] >= count - limit - 2,
                 f"only {kinds[REFUSED]} of the {count - limit} excess connections were closed at once")
    fds = server.descriptors()
    # The reserve must leave SQLite its descriptors: a post on a connection held from before.
    post = await attempt(keeper.request("POST", "/v1/messages", message(["u1"], during="exhaustion"), key))
    result.answers[f"post while full: {kind(post)}"] += 1
    acknowledged = {"u1": set()}
    if result.check(isinstance(post, Answer) and post.status == 202, f"a post on a held connection while full: {kind(post)}"):
        acknowledged["u1"].add(post.json()["id"])
        frame = await attempt(session.receive(timeout=5))
        result.check(isinstance(frame, dict) and frame.get("id") == post.json()["id"],
                     f"the sync session held through the flood did not get the message live ({frame!r:.80})")
    # Work kept coming while full (as in B below, where it kills the server): the reserve holds.
    busy = collections.Counter()
    busy_until = now() + scale["fd_busy_seconds"]
    while now() < busy_until and server.alive():
        for outcome in (await attempt(keeper.request("GET", f"/v1/messages/{post.json()['id']}", token=device.credential)),
                        await attempt(keeper.request("POST", "/v1/messages", message(["u1"], during="full"), key))):
            busy[kind(outcome)] += 1
            if isinstance(outcome, Answer) and outcome.status == 202:
                acknowledged["u1"].add(outcome.json()["id"])
    result.check(set(busy) <= {"200", "202"} and server.alive(),
                 f"requests on a held connection while full for {scale['fd_busy_seconds']} s: {counted(busy)}"
                 + ("" if server.alive() else f"; {server.crashed()}"))
    result.answers.update({f"while full: {k}": v for k, v in busy.items()})
    for _, writer in held:
        close_writer(writer)
    recovery, probe = await recover(port, key)
    result.check(recovery is not None, "no /health 200 and post 202 within 30 s after the excess went")
    if probe:
        acknowledged["u-recovery"] = {probe}
    refusal = f"refused ones closed {spread(refused_after)} after connect" if refused_after else "none refused"
    result.note(f"A (default limit {limit}, RLIMIT_NOFILE {nofile}): {count} connections at once: {counted(kinds)}; "
                f"{refusal}; server descriptors while full {fds}/{nofile}; recovery {seconds(recovery)}")
    recovery_devices = {"u1": device, "u-recovery": await register(port, "chat", "u-recovery")}
    result.lost = len(await lost_messages(port, acknowledged, recovery_devices))
    result.check(result.lost == 0, f"{result.lost} acknowledged messages missing")
    await session.bye()
    keeper.close()
    await server_after(result, server)
    server.stop()
    recoveries = [recovery]

    # B: http.max-connections above the open-files limit: accept(2) meets EMFILE and SQLite
    # competes for descriptors. No crash (a process with no descriptor left can be aborted), no
    # 500, recovery once they go.
    server = context.server("fd-misconfigured", nofile=nofile, env={"BECKON_HTTP_MAX_CONNECTIONS": "2000"})
    server.start()
    port = server.port
    key = await issue_key(port, "chat")
    device = await register(port, "chat", "u1")
    keepers = [Connection(port) for _ in range(8)]  # held from before the flood
    first = await keepers[0].request("POST", "/v1/messages", message(["u1"], before="exhaustion"), key)
    for keeper in keepers[1:]:
        assert (await keeper.request("GET", "/health")).status == 200
    acknowledged = {"u1": {first.json()["id"]}}
    count = scale["fd_misconfigured_flood"]
    held, kinds_b, _, _ = await hold_connections(port, count, connect_timeout=3, answer_timeout=3)
    fds = server.descriptors()
    # Concurrent reads and writes on the held connections: SQLite may need new descriptors
    # (a reader connection of the pool) when there are none left.
    # Kept up for a few seconds: libdispatch's worker monitor opens /proc/<tid>/stat once a
    # second while work is queued, and that open must not be the one that fails.
    during = collections.Counter()
    reads, posts = [], []
    busy_until = now() + scale["fd_busy_seconds"]
    while now() < busy_until and server.alive():
        reads += await asyncio.gather(*(attempt(k.request("GET", f"/v1/messages/{first.json()['id']}", token=device.credential))
                                        for k in keepers))
        posts += await asyncio.gather(*(attempt(k.request("POST", "/v1/messages", message(["u1"], during="EMFILE"), key))
                                        for k in keepers))
    if not server.alive():
        for _, writer in held:
            close_writer(writer)
        result.failures.append(f"B: {server.crashed()} with every descriptor in use; its log ends: {server.log_tail(3)!r}")
        result.answers.update({f"B: {k}": v for k, v in kinds_b.items()})
        result.answers[f"B: server died ({server.crashed().split(': ')[-1]})"] += 1
        result.note(f"B (http.max-connections 2000 over RLIMIT_NOFILE {nofile}): {count} connections at once: "
                    f"{counted(kinds_b)}; the server died while requests kept coming on the held connections")
        result.done = (f"RLIMIT_NOFILE 512: {scale['fd_flood']} conns vs default limit {limit}; "
                       f"then limit 2000 > fds, {count} conns (EMFILE)")
        result.recovery = f"{seconds(recoveries[0])} / never (dead)"
        result.after = "A alive; B DEAD"
        return [result]
    for outcome, what in [(o, "GET /v1/messages/{id}") for o in reads] + [(o, "post") for o in posts]:
        during[f"{what.split()[0]} {kind(outcome)}"] += 1
        if what == "post" and isinstance(outcome, Answer) and outcome.status == 202:
            acknowledged["u1"].add(outcome.json()["id"])
    for outcome, what in [(o, "GET /v1/messages/{id}") for o in reads] + [(o, "post") for o in posts]:
        if not result.check(isinstance(outcome, Answer) and (outcome.status < 500 or (outcome.status == 503 and outcome.error_form())),
                            f"B: {what} on a held connection with every descriptor in use: {kind(outcome)} "
                            f"(expected 2xx, or 503 in the error form)"):
            break
    result.answers.update({f"B: {k}": v for k, v in (kinds_b + during).items()})
    for _, writer in held:
        close_writer(writer)
    for keeper in keepers:
        keeper.close()
    recovery, probe = await recover(port, key)
    recoveries.append(recovery)
    result.check(recovery is not None, "B: no /health 200 and post 202 within 30 s after the excess went")
    if probe:
        acknowledged["u-recovery"] = {probe}
    result.note(f"B (http.max-connections 2000 over RLIMIT_NOFILE {nofile}): {count} connections at once: "
                f"{counted(kinds_b)}; descriptors {fds}/{nofile}; on a held connection: {counted(during)}; "
                f"recovery {seconds(recovery)}")
    devices = {"u1": device, "u-recovery": await register(port, "chat", "u-recovery")}
    lost_b = len(await lost_messages(port, acknowledged, devices))
    result.lost += lost_b
    result.check(lost_b == 0, f"B: {lost_b} acknowledged messages missing")
    await server_after(result, server)
    server.stop()
    result.done = (f"RLIMIT_NOFILE 512: {scale['fd_flood']} conns vs default limit {limit}; "
                   f"then limit 2000 > fds, {count} conns (EMFILE)")
    result.recovery = " / ".join(seconds(r) for r in recoveries)
    return [result]


if __name__ == "__main__":
    main(__doc__, [("1 descriptors", case_descriptors)])
