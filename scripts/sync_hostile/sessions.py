"""Sessions of one device and the upgrade itself: one session per device and role (a newer app
session replaces the older with 4001, an app preempts an extension with 4002, an extension is
refused while the app is live), storms of sessions of one device, and upgrades with a wrong,
missing or revoked credential (401), without an upgrade (426), or with other subprotocols."""
import collections, json, random, time

from beckonlib.websocket import RawSession, encode, frame as ws_frame
from sync_hostile.cases import PRELOADED, Answer, Case, Frames, pick, probe_frames


def c_sessions(rng, index, ctx):
    names = ["app replaces app", "extension refused while the app is live", "app preempts extension",
             "extension replaces extension", "storm of app sessions", "storm of app and extension sessions"]
    name = pick(rng, index, names)
    return Case("sessions", index, name, Frames(rng), device="roles", run=run_sessions_case,
                note="one session per device and role (docs/sync-protocol.md)")


def c_upgrade(rng, index, ctx):
    names = ["wrong credential", "no credential", "no upgrade", "no subprotocol", "other subprotocols", "only another subprotocol",
             "revoked credential", "credential of another app's shape"]
    name = pick(rng, index, names)
    return Case("upgrade", index, name, Frames(rng), run=run_upgrade_case, hello=False,
                note="connecting: 401 before the upgrade, 426 without one, the subprotocol echoed when offered")


def run_storm_case(ctx, case):
    """Many sessions of one device say hello at once: exactly one app session is left, working;
    every other one is closed with 4001 (replaced) or, an extension, 4002 (preempted, refused)."""
    rng = random.Random(f"{ctx.seed}:{case.id}")
    count = rng.randint(8, 40 if ctx.long else 20)
    roles = ["app"] * count if case.name == "storm of app sessions" else [rng.choice(["app", "extension"]) for _ in range(count)]
    roles[rng.randrange(count)] = "app"
    conns = [RawSession(ctx.port, ctx.credentials["roles"]) for _ in range(count)]
    sent = 0
    try:
        for conn, role in zip(conns, roles):
            conn.sock.setblocking(True)
            conn.sock.sendall(ws_frame(0x1, encode({"type": "hello", "version": 2, "cursor": PRELOADED, "role": role}),
                                       key=rng.randbytes(4)))
            conn.sock.setblocking(False)
            sent += 1
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            for conn in conns:
                if conn.close_at is None and conn.eof_at is None:
                    conn.pump(b"", timeout=0.01)
            settled = all(c.close_at is not None or any(f.get("type") == "welcome" for f in c.texts) for c in conns)
            if settled and sum(c.close_at is None for c in conns) <= 1:
                break
        # Closes may still be on their way to sessions that got welcome: a moment more.
        end = time.monotonic() + 0.5
        while time.monotonic() < end:
            for conn in conns:
                if conn.close_at is None and conn.eof_at is None:
                    conn.pump(b"", timeout=0.01)
        problems = []
        alive = [(c, r) for c, r in zip(conns, roles) if c.close_at is None and c.eof_at is None]
        codes = collections.Counter((r, c.close_code) for c, r in zip(conns, roles) if c.close_at is not None)
        for (role, code), number in codes.items():
            if code not in ((4001,) if role == "app" else (4001, 4002)) :
                problems.append(f"{number} {role} sessions closed with {code}")
        for conn in conns:
            if conn.errors():
                problems.append(f"an error frame: {conn.errors()[0]}")
                break
        if len(alive) != 1 or alive[0][1] != "app":
            problems.append(f"{len(alive)} sessions left ({[r for _, r in alive]}), documented: the last app session")
        else:
            probe_id, probe = probe_frames(ctx, case, True)
            sent += probe.count
            alive[0][0].pump(probe.bytes(), timeout=8)
            if Answer(alive[0][0], "probe", probe_id).text != "accepted":
                problems.append("the app session left does not work")
        result = Answer(conns[0], "storm")
        summary = ", ".join(f"{r} {c}×{n}" for (r, c), n in sorted(codes.items()))
        result.text = "as documented" if not problems else "; ".join(problems) + f" ({summary})"
        return result, sent
    finally:
        for conn in conns:
            conn.close()


def run_sessions_case(ctx, case):
    """Two sessions of one device (`roles`): the first's close code and the second still usable."""
    if case.name.startswith("storm"):
        return run_storm_case(ctx, case)
    first_role, second_role, first_code, second_refused = {
        "app replaces app": ("app", "app", 4001, False),
        "extension refused while the app is live": ("app", "extension", None, True),
        "app preempts extension": ("extension", "app", 4002, False),
        "extension replaces extension": ("extension", "extension", 4001, False),
    }[case.name]
    credential = ctx.credentials["roles"]
    first = RawSession(ctx.port, credential)
    second = None
    sent = 0
    try:
        sent += 1
        if first.pump(ws_frame(0x1, encode({"type": "hello", "version": 2, "cursor": PRELOADED, "role": first_role}), key=b"abcd"),
                      until=lambda c: any(f.get("type") == "welcome" for f in c.texts), timeout=10) != "until":
            return Answer(first, "no welcome"), sent
        second = RawSession(ctx.port, credential)
        sent += 1
        second.pump(ws_frame(0x1, encode({"type": "hello", "version": 2, "cursor": PRELOADED, "role": second_role}), key=b"abcd"),
                    until=lambda c: c.close_at is not None or any(f.get("type") == "welcome" for f in c.texts), timeout=10)
        problems = []
        if second_refused:
            second.pump(b"", timeout=5)
            if second.close_code != 4002 or second.errors():
                problems.append(f"the extension got {second.close_code} (document: 4002, no error frame)")
            probe_id, probe = probe_frames(ctx, case, True)
            sent += probe.count
            first.pump(probe.bytes(), timeout=8)
            answer = Answer(first, "probe", probe_id)
            if answer.text != "accepted":
                problems.append(f"the live app session was disturbed: {answer.text}")
        else:
            first.pump(b"", timeout=5)
            if first.close_code != first_code or first.errors():
                problems.append(f"the first {first_role} session got {first.close_code} (document: {first_code}, no error frame)")
            probe_id, probe = probe_frames(ctx, case, True)
            sent += probe.count
            second.pump(probe.bytes(), timeout=8)
            answer = Answer(second, "probe", probe_id)
            if answer.text != "accepted":
                problems.append(f"the new {second_role} session: {answer.text}")
        result = Answer(first, "sessions")
        result.text = "as documented" if not problems else "; ".join(problems)
        return result, sent
    finally:
        first.close()
        if second:
            second.close()


def run_upgrade_case(ctx, case):
    credential = ctx.credentials["main"]
    headers, options, expect = {}, {}, None
    if case.name == "wrong credential":
        options["credential"] = "bkd_" + "x" * 40
        expect = (401, None)
    elif case.name == "no credential":
        options["credential"] = None
        expect = (401, None)
    elif case.name == "no upgrade":
        options["upgrade"] = False
        expect = (426, None)
    elif case.name == "no subprotocol":
        options["protocol"] = None
        expect = (101, None)
    elif case.name == "other subprotocols":
        options["protocol"] = "chat, beckon.v2, beckon.v3"
        expect = (101, "beckon.v2")
    elif case.name == "only another subprotocol":
        options["protocol"] = "beckon.v1"
        expect = (101, None)
    elif case.name == "revoked credential":
        options["credential"] = ctx.credentials["revoked"]
        expect = (401, None)
    else:
        options["credential"] = "Bearer bk_" + "y" * 40
        expect = (401, None)
    conn = RawSession(ctx.port, options.get("credential", credential), protocol=options.get("protocol", "beckon.v2"),
                upgrade=options.get("upgrade", True), headers=headers)
    try:
        status, protocol = conn.status, conn.headers.get("sec-websocket-protocol")
        text = f"{status}" + (f" protocol={protocol}" if protocol else "")
        problems = []
        if status != expect[0]:
            problems.append(f"status {status}, documented {expect[0]}")
        if status == 101 and protocol != expect[1]:
            problems.append(f"subprotocol {protocol!r}, expected {expect[1]!r}")
        if status in (401, 426):
            try:
                body = json.loads(conn.body.split(b"\r\n\r\n")[-1] or b"{}")
                if "error" not in body and "code" not in json.dumps(body):
                    problems.append(f"no error body: {conn.body[:100]!r}")
            except ValueError:
                pass
        if status == 101:
            probe_id, probe = probe_frames(ctx, case, False)
            conn.pump(probe.bytes(), timeout=8)
            if Answer(conn, "probe", probe_id).text != "accepted":
                problems.append("the session did not work after the upgrade")
        answer = Answer(conn, "upgrade")
        answer.text = text if not problems else text + ": " + "; ".join(problems)
        answer.upgrade_ok = not problems
        return answer, (1 if status == 101 else 0)
    finally:
        conn.close()
