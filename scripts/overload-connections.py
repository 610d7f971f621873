#!/usr/bin/env python3
"""N connections opened at once against `beckon serve` (small 1,000, full 10,000).

    scripts/overload-connections.py BECKON_BINARY [--scale small|full] [--keep]

A: under the default http.max-connections every connection is answered, and one more client
while they are held. B: with http.max-connections at N/2 the excess is closed without an answer,
and no later than the admitted ones are answered (both wait only in the accept queue); the
number answered stays within the limit and near it. Each: recovery once they go, nothing
acknowledged lost. Two rows; exits 1 if a check failed. Loopback only.
"""
from beckonlib.asynchttp import Answer, attempt, call, close_writer, kind
from beckonlib.measure import listen_drops
from beckonlib.overload import (REFUSED, Result, hold_connections, issue_key, lost_messages, main, now, recover,
                                register, server_after)
from beckonlib.report import counted, percentile, seconds, spread


async def case_connections(context):
    scale = context.scale
    count = scale["connections"]
    results = []
    for phase, limit in (("A", None), ("B", count // 2)):
        env = {"BECKON_HTTP_MAX_CONNECTIONS": str(limit)} if limit else {}
        server = context.server(f"connections-{phase}", env=env)
        server.start()
        port, limit = server.port, server.limit()
        key = await issue_key(port, "chat")
        device = await register(port, "chat", "u1")
        started, drops_before = now(), listen_drops()
        settle = scale["connections_settle"]
        held, kinds, refused_after, answered_after = await hold_connections(port, count, connect_timeout=settle,
                                                                           answer_timeout=settle)
        flood_seconds = now() - started
        # One more client while they are all held: served under the limit, refused at it.
        probe = await attempt(call(port, "GET", "/health", timeout=10))
        for _, writer in held:
            close_writer(writer)
        recovery, probe_id = await recover(port, key)
        acknowledged = {"u-recovery": {probe_id} if probe_id else set()}
        devices = {"u-recovery": await register(port, "chat", "u-recovery")}
        result = Result(f"3 connections {phase}", f"{count} conns at once, http.max-connections {limit}")
        result.answers.update(kinds)
        result.answers[f"extra client while held: {kind(probe)}"] += 1
        answered = sum(v for k, v in kinds.items() if k.endswith("(held)"))
        failed = {k: v for k, v in kinds.items() if not k.endswith("(held)") and k != REFUSED}
        if limit >= count:
            result.check(answered == count, f"{answered} of {count} connections answered within {settle} s under the "
                                            f"limit {limit}: {counted(kinds)}")
            result.check(isinstance(probe, Answer) and probe.status == 200, f"an extra client while held: {kind(probe)}")
        else:
            result.check(answered <= limit, f"{answered} answered, over the limit {limit}")
            result.check(answered >= limit * 0.9, f"only {answered} answered; the limit is {limit}")
            result.check(kinds[REFUSED] >= count - limit - 2,
                         f"{kinds[REFUSED]} closed at once, expected {count - limit}")
            result.check(not failed, f"connections neither answered nor refused within {settle} s: {failed}")
            # "At once": a refused connection waits for nothing but its turn in the accept
            # queue, as an admitted one does before its answer; so it may not take longer.
            quick = percentile(refused_after, .5) or 0
            result.check(quick <= (percentile(answered_after, .5) or 0) + 1.0,
                         f"refused connections closed {spread(refused_after)} after connecting, later than admitted "
                         f"ones were answered ({spread(answered_after)})")
        result.note(f"kernel listen-queue overflows meanwhile (backlog 256): {listen_drops() - drops_before}")
        result.note(f"after the TCP connect, admitted ones answered {spread(answered_after)}"
                    + (f"; refused ones closed {spread(refused_after)}" if refused_after else ""))
        result.note(f"phase {phase}: all {count} settled in {flood_seconds:.1f} s: {counted(kinds)}; "
                    f"recovery after closing them {seconds(recovery)}")
        result.recovery = seconds(recovery)
        result.check(recovery is not None, "no /health 200 and post 202 within 30 s after the connections went")
        result.lost = len(await lost_messages(port, acknowledged, devices))
        result.check(result.lost == 0, f"{result.lost} acknowledged messages missing")
        await server_after(result, server)
        server.stop()
        results.append(result)
    return results


if __name__ == "__main__":
    main(__doc__, [("3 connections", case_connections)])
