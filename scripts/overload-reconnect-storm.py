#!/usr/bin/env python3
"""A reconnect storm: N devices with open sync sessions (small 300, full 10,000); SIGTERM, a pause,
`beckon serve` started again on the same database; the devices come back with the client SDK's
backoff (0.5 s doubling to 60 s, equal jitter).

    scripts/overload-reconnect-storm.py BECKON_BINARY [--scale small|full] [--keep]

Every device must get 1001 at SIGTERM, then resume (welcome, and the message posted meanwhile)
within 3 × the downtime + 10 s + N/500 s (what the backoff implies), none starved and no 5xx;
the backend's posts right after the restart are answered; SIGTERM must end within
shutdown.grace-seconds + 5 s. Then limits.sync-connects-per-minute against one device in a tight
loop: refused with 429 in the error form, accepted again after Retry-After. One row; exits 1 if
a check failed. Loopback only.
"""
import asyncio, collections, os, resource

from beckonlib.asynchttp import Answer, Closed, Connection, Sync, SyncRefused, attempt, kind
from beckonlib.measure import cpu_seconds, listen_drops
from beckonlib.overload import Result, issue_key, main, message, now, register_many, server_after
from beckonlib.report import counted, percentile, seconds, spread


def sdk_backoff(attempt_number, rng):
    """The client SDK's reconnect delay (BeckonClient ReconnectBackoff): 0.5 s doubling to 60 s,
    equal jitter (half fixed, half random)."""
    cap = min(0.5 * 2 ** min(max(attempt_number - 1, 0), 30), 60.0)
    return cap / 2 + cap / 2 * rng.random()


class StormDevice:
    def __init__(self, device):
        self.device, self.cursor = device, 0
        self.welcomes, self.ids = 0, set()
        self.closed_at = self.welcome_at = self.resumed_at = None
        self.close_codes = collections.Counter()
        self.attempts = 0  # connection attempts after the restart's close
        self.attempt_at = None  # when the attempt that got the first welcome after it began
        self.welcome_wait = None
        self.steps = None  # that attempt's TCP connect, upgrade (101) and hello → welcome, seconds


class Storm:
    def count(self, outcome):
        """An attempt's outcome, prefixed while the server restarts (SIGTERM until the new process answers)."""
        self.outcomes[("restarting: " if self.phase == "restart" else "") + outcome] += 1

    def __init__(self, port, devices):
        import random
        self.port, self.rng = port, random.Random(1234)
        self.devices = [StormDevice(d) for d in devices]
        self.phase = "initial"  # then "restart" (SIGTERM sent), "up" (new process answers)
        self.finished = False
        self.outcomes = collections.Counter()  # of connection attempts after SIGTERM
        self.retry_after = collections.Counter()
        self.initial_welcomed = 0
        self.before_got = 0

    async def run_device(self, sd):
        attempt_number = 0
        while not self.finished:
            if self.phase != "initial":
                sd.attempts += 1
            sd.attempt_at = now()
            try:
                session = await Sync.open(self.port, sd.device.credential, timeout=20)
            except SyncRefused as refused:
                self.count(f"upgrade answered {kind(refused.answer)}")
                if refused.answer.status == 429:
                    self.retry_after[refused.answer.headers.get("retry-after")] += 1
            except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as error:
                if self.phase != "initial":
                    self.count(kind(error))
            else:
                welcomed = await self.session(sd, session)
                if welcomed:
                    attempt_number = 0
            if self.finished:
                return
            attempt_number += 1
            await asyncio.sleep(sdk_backoff(attempt_number, self.rng))

    async def session(self, sd, session):
        welcomed = False
        try:
            await session.send({"type": "hello", "version": 2, "role": "app", "cursor": sd.cursor, "window": 100})
            while True:
                frame = await session.receive()
                if frame.get("type") == "welcome":
                    welcomed = True
                    sd.welcomes += 1
                    if self.phase == "initial":
                        self.initial_welcomed += 1
                    else:
                        self.count("101, welcome")
                        if sd.closed_at is not None and sd.welcome_at is None:
                            sd.welcome_at = now()
                            sd.welcome_wait = sd.welcome_at - sd.attempt_at
                            sd.steps = (session.connect_seconds, session.upgrade_seconds,
                                        sd.welcome_wait - session.connect_seconds - session.upgrade_seconds)
                elif frame.get("type") == "message":
                    sd.ids.add(frame["id"])
                    sd.cursor = max(sd.cursor, frame["seq"])
                    await session.send({"type": "ack", "upTo": frame["seq"]})
                    phase = frame.get("payload", {}).get("phase")
                    if phase == "before":
                        self.before_got += 1
                    elif phase == "during" and sd.resumed_at is None:
                        sd.resumed_at = now()
        except Closed as closed:
            if self.phase != "initial" and sd.closed_at is None:
                sd.closed_at = now()  # the restart's close
            elif self.phase != "initial":
                self.count(f"101, then closed {closed.code}" + ("" if welcomed else " before welcome"))
            sd.close_codes[closed.code] += 1
            return welcomed
        except (OSError, asyncio.IncompleteReadError) as error:
            if sd.closed_at is None and self.phase != "initial":
                sd.closed_at = now()
            elif self.phase != "initial":
                self.count(f"101, then {kind(error)}")
            sd.close_codes["no close frame"] += 1
            return welcomed
        finally:
            session.close()  # also when the storm is over and the task cancelled


async def post_to_all(port, key, users, answers, **payload):
    """Posts one message per 1,000 users, as a backend does: a post without an answer is sent
    again with the same Idempotency-Key. Returns {user: id}; counts answers in `answers`."""
    ids = {}
    connection = Connection(port)
    for i in range(0, len(users), 1000):
        batch = users[i:i + 1000]
        idempotency = f"overload-{os.urandom(8).hex()}"
        for _ in range(10):
            started = now()
            outcome = await attempt(connection.request("POST", "/v1/messages", message(batch, **payload), key, timeout=60,
                                                       headers=(f"Idempotency-Key: {idempotency}",)))
            answers[f"{kind(outcome)}"] += 1
            if isinstance(outcome, Answer) and outcome.status in (200, 202):
                break
            connection.close()
            await asyncio.sleep(1)
        else:
            raise RuntimeError(f"a post to {len(batch)} users failed 10 times: {kind(outcome)}")
        for user in batch:
            ids[user] = outcome.json()["id"]
    connection.close()
    return ids


async def case_storm(context):
    scale = context.scale
    count = scale["storm_devices"]
    server = context.server("storm")
    server.start()
    port = server.port
    key = await issue_key(port, "chat")
    users = [f"s{i:05d}" for i in range(count)]
    started = now()
    devices = await register_many(port, "chat", users)
    registered = now() - started
    storm = Storm(port, [devices[u] for u in users])
    tasks = []
    started = now()
    for i, sd in enumerate(storm.devices):
        tasks.append(asyncio.ensure_future(storm.run_device(sd)))
        if i % 200 == 199:
            await asyncio.sleep(0.1)
    while storm.initial_welcomed < count and now() - started < 120:
        await asyncio.sleep(0.1)
    connected = now() - started
    result = Result("4 storm", "")
    if not result.check(storm.initial_welcomed >= count, f"only {storm.initial_welcomed} of {count} devices got a first welcome"):
        storm.finished = True
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        server.kill()
        return [result]
    before_answers, during_answers = collections.Counter(), collections.Counter()
    before = await post_to_all(port, key, users, before_answers, phase="before")
    started = now()
    while storm.before_got < count and now() - started < 60:
        await asyncio.sleep(0.1)
    result.check(storm.before_got >= count, f"only {storm.before_got} of {count} devices got the message posted before the restart")

    # The restart: SIGTERM (sessions get 1001), exit, start on the same database and port.
    storm.phase = "restart"
    client_cpu = resource.getrusage(resource.RUSAGE_SELF)
    drops_before = listen_drops()
    sigterm = now()
    stop_seconds = await asyncio.to_thread(server.stop)
    result.check(stop_seconds is not None, "the server did not exit within 30 s of SIGTERM")
    exited = now()
    await asyncio.sleep(scale["storm_gap"])  # a deploy's pause between the old process and the new
    await asyncio.to_thread(server.start)
    up = now()
    storm.phase = "up"
    downtime = up - sigterm
    during = await post_to_all(port, key, users, during_answers, phase="during")
    posted = now()
    # The bound a device following the SDK's backoff can expect: its next attempt after the
    # server is back comes within twice the time it has waited so far (equal jitter, doubling),
    # so within 3 × the downtime; plus the time the server needs to take everyone back.
    bound = 3 * downtime + 10 + count / 500
    deadline = up + scale["storm_deadline"]
    while now() < deadline and any(sd.resumed_at is None for sd in storm.devices):
        await asyncio.sleep(0.1)
    storm.finished = True
    server_cpu = cpu_seconds(server.process.pid)
    client_after = resource.getrusage(resource.RUSAGE_SELF)
    client_used = (client_after.ru_utime + client_after.ru_stime) - (client_cpu.ru_utime + client_cpu.ru_stime)
    storm_wall = now() - up
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)

    codes = collections.Counter()
    for sd in storm.devices:
        codes.update({f"first close {c}": 1 for c in list(sd.close_codes)[:1]})
    resumed = [sd.resumed_at - sigterm for sd in storm.devices if sd.resumed_at]
    reconnect = [sd.welcome_at - up for sd in storm.devices if sd.welcome_at]
    after_close = [sd.resumed_at - sd.closed_at for sd in storm.devices if sd.resumed_at and sd.closed_at]
    attempts = [sd.attempts for sd in storm.devices]
    missing = [sd for sd in storm.devices if sd.resumed_at is None]
    not_closed_1001 = sum(1 for sd in storm.devices if 1001 not in sd.close_codes)
    lost = sum(1 for sd in storm.devices if before[sd.device.user] not in sd.ids or during[sd.device.user] not in sd.ids)
    result.lost = lost
    result.answers.update(storm.outcomes)
    result.answers.update({f"backend post after restart: {k}": v for k, v in during_answers.items() if v})
    result.check(set(k for k, v in during_answers.items() if v) <= {"202", "200"},
                 f"the backend's posts right after the restart: {counted(+during_answers)} (a post without an answer "
                 f"was sent again with its Idempotency-Key)")
    result.done = (f"{count} sessions; SIGTERM, {scale['storm_gap']} s down, start on the same DB; "
                   f"clients with the SDK's backoff (0.5 s ×2 to 60 s, equal jitter)")
    result.recovery = (f"all resumed {max(resumed):.1f} s after SIGTERM (bound {bound:.1f} s)" if not missing and resumed
                       else f"{len(missing)} never resumed")
    result.check(not missing, f"{len(missing)} of {count} devices did not resume within {scale['storm_deadline']} s "
                              f"of the restart (e.g. {[sd.device.user for sd in missing[:5]]})")
    if resumed:
        result.check(max(resumed) <= bound, f"slowest device resumed {max(resumed):.1f} s after SIGTERM, over the bound "
                                            f"{bound:.1f} s (3 × downtime {downtime:.1f} s + 10 s + N/500 s)")
    result.check(lost == 0, f"{lost} devices miss a message acknowledged to them")
    result.check(not_closed_1001 == 0, f"{not_closed_1001} sessions did not get 1001 at SIGTERM")
    result.check(stop_seconds is None or stop_seconds <= 10 + 5, f"SIGTERM took {seconds(stop_seconds)} (shutdown.grace-seconds 10)")
    result.check(not any(k.startswith("upgrade answered 5") for k in storm.outcomes), f"5xx during the storm: {counted(storm.outcomes)}")
    median = percentile(resumed, .5)
    result.figures = dict(registered=registered, connected=connected, downtime=downtime, stop=stop_seconds,
                          start=server.start_seconds, median=median, max=max(resumed) if resumed else None)
    result.note(f"set-up: {count} devices registered in {registered:.1f} s, all sessions welcomed in {connected:.1f} s")
    result.note(f"SIGTERM → exit {seconds(stop_seconds)} ({counted(codes)}; {not_closed_1001} without 1001), "
                f"exit → healthy {up - exited:.2f} s ({scale['storm_gap']} s of it deliberately down); downtime (SIGTERM → healthy) {downtime:.2f} s; "
                f"'during' messages posted {posted - up:.2f} s after healthy")
    steps = [sd.steps for sd in storm.devices if sd.steps]
    result.note(f"welcome after the server was back: {spread(reconnect)}; the successful attempt, from its start "
                f"to the welcome: {spread([sd.welcome_wait for sd in storm.devices if sd.welcome_wait is not None])}")
    result.note(f"  of which the TCP connect: {spread([c for c, _, _ in steps])}; connected → 101: "
                f"{spread([u for _, u, _ in steps])}; hello → welcome: {spread([w for _, _, w in steps])}")
    result.note(f"kernel listen-queue overflows during the storm (all of this machine; the listener's backlog is "
                f"Hummingbird's default 256): {listen_drops() - drops_before}")
    result.note(f"CPU from SIGTERM until every device resumed: new server process {seconds(server_cpu)}, this "
                f"client {client_used:.1f} s, over {storm_wall:.1f} s of wall time after the restart (2 cores, shared)")
    result.note(f"resumed (the 'during' message delivered) after SIGTERM: {spread(resumed)}; "
                f"max/median {max(resumed) / median:.2f}" if resumed and median else "no device resumed")
    result.note(f"resumed after the device's own close: {spread(after_close)}")
    result.note(f"connection attempts per device after SIGTERM: median {percentile(attempts, .5)}, max {max(attempts)}; "
                f"outcomes {counted(storm.outcomes)}"
                + (f"; 429 Retry-After values {dict(storm.retry_after)}" if storm.retry_after else ""))

    # limits.sync-connects-per-minute against one device: back-to-back sessions, as a buggy
    # app in a reconnect loop opens them; then the same device after Retry-After.
    probe = storm.devices[0].device
    accepted, refusal = 0, None
    loop_started = now()
    while now() - loop_started < 20:
        outcome = await attempt(Sync.open(port, probe.credential))
        if isinstance(outcome, Sync):
            accepted += 1
            outcome.close()
            continue
        refusal = outcome
        break
    later = None
    if isinstance(refusal, SyncRefused) and refusal.answer.status == 429:
        wait = int(refusal.answer.headers.get("retry-after", "1"))
        result.check(refusal.answer.error_form() and refusal.answer.code() == "rate_limited",
                     f"the 429 of a sync upgrade is not the documented error form: {refusal.answer.body[:120]!r}")
        await asyncio.sleep(wait)
        later = await attempt(Sync.open(port, probe.credential))
        result.check(isinstance(later, Sync), f"after Retry-After {wait} s the device was still refused: {kind(getattr(later, 'answer', later))}")
        if isinstance(later, Sync):
            later.close()
        result.note(f"limits.sync-connects-per-minute (60): one device in a tight loop had {accepted} sessions in "
                    f"{now() - loop_started - wait:.1f} s, then 429 rate_limited, Retry-After {wait} s; "
                    f"after waiting it was accepted again ({'yes' if isinstance(later, Sync) else 'NO'}). "
                    f"With the SDK's backoff a device makes about 7 attempts in its first minute; the storm saw "
                    f"{sum(v for k, v in storm.outcomes.items() if '429' in k)} 429s")
    else:
        result.check(False, f"a device opening sessions back to back was never refused with 429 "
                            f"({accepted} sessions, then {kind(getattr(refusal, 'answer', refusal))})")
    result.answers["tight-loop device: sessions before 429"] = accepted
    await server_after(result, server)
    server.stop()
    return [result]


# --- Case 5: a flood of posts from one app ------------------------------------------------------


if __name__ == "__main__":
    main(__doc__, [("4 storm", case_storm)])
