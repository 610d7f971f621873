"""What the overload cases (scripts/overload-*.py) share: their node (SQLite, apps `chat` and
`mail`, the built-in APNs emulator), the scales, the devices and posts they set up, how they read
back what was acknowledged, one row of results per case, and the run that prints the rows.

A case refuses what it cannot take (429, 503, a closed connection), recovers by itself, never
crashes and never loses a message it acknowledged; the row says what was done, the answers by
kind, the recovery time, what was lost and whether the server stayed up.
"""
import argparse, asyncio, collections, os, re, resource, sys, tempfile, time, traceback

from beckonlib.asynchttp import Answer, Connection, Sync, attempt, call, connect, close_writer, healthy, kind, read_answer, render
from beckonlib.httpjson import free_port, user_token
from beckonlib.node import Node
from beckonlib.report import counted

SECRET = "overload-user-token-secret-0123456789abcdef"
ADMIN = "overload-admin-token-0123456789abcdef0123456"
APPS = ("chat", "mail")
SLACK = 3.0  # seconds allowed past a timeout before it counts as not enforced (a loaded 2-core CI machine)

SCALES = {
    "small": dict(fd_flood=600, fd_misconfigured_flood=700, fd_busy_seconds=4, slow_attackers=200, slow_group=10,
                  head_seconds=4, idle_seconds=6, body_seconds=5, grace_seconds=3, slow_extra=6, connections=1000, connections_settle=30, storm_devices=300,
                  storm_gap=2, storm_deadline=90, flood_seconds=4, flood_writers=64, lock_seconds=11, lock_offline=600, disk_posts=40),
    "full": dict(fd_flood=1500, fd_misconfigured_flood=1500, fd_busy_seconds=10, slow_attackers=2000, slow_group=50,
                 head_seconds=None, idle_seconds=None, body_seconds=None, grace_seconds=None, slow_extra=8, connections=10000, connections_settle=90,
                 storm_devices=10000, storm_gap=5, storm_deadline=300, flood_seconds=20, flood_writers=128,
                 lock_seconds=16, lock_offline=2000, disk_posts=200),
}
# The server's defaults (README, Configuration), used when a scale does not set them.
DEFAULT_HEAD_SECONDS, DEFAULT_IDLE_SECONDS, DEFAULT_BODY_SECONDS, DEFAULT_GRACE_SECONDS = 10, 60, 30, 10
SQLITE_BUSY_SECONDS = 5  # SQLiteStore's busy timeout: a lock held longer makes a write fail


def now():
    return time.monotonic()


class OverloadNode(Node):
    """One `beckon serve` on a SQLite file, apps `chat` and `mail`, the built-in APNs emulator's
    control API open (what devices received), logging at info. `nofile` sets RLIMIT_NOFILE
    (soft = hard); `env` adds BECKON_* settings."""

    def __init__(self, binary, work, name, env=None, nofile=None, database=None, port=None):
        super().__init__(binary, work, name, secret=SECRET, admin=ADMIN, apps=APPS, control=free_port(), nofile=nofile,
                         database=database, port=port, env=dict({"BECKON_LOG_LEVEL": "info"}, **(env or {})))

    def limit(self):
        """http.max-connections as the server logged it."""
        found = re.findall(r"http\.max-connections=(\d+)", self.log_text())
        return int(found[-1]) if found else None

    def log_problems(self):
        """Counts of the log's error lines by their message (request ids left out)."""
        problems = collections.Counter()
        for line in self.log_errors():
            text = re.sub(r"^\S+ ", "", line.strip())
            text = re.sub(r"hb\.request\.id=\S+ ", "", text)
            text = re.sub(r"\b[0-9a-f]{8}-[0-9a-f-]{27}\b", "…", text)
            problems[text[:200]] += 1
        return problems


# --- Fixtures: API keys, devices, posts ---------------------------------------------------------

async def issue_key(port, app):
    answer = await call(port, "POST", f"/v1/admin/apps/{app}/keys", {}, ADMIN)
    assert answer.status == 201, (answer.status, answer.body)
    return answer.json()["key"]


class Device:
    def __init__(self, app, user, device_id, credential, token):
        self.app, self.user, self.device_id, self.credential, self.token = app, user, device_id, credential, token


async def register(port, app, user, device_id=None, connection=None):
    device_id = device_id or f"dev-{user}"
    token = os.urandom(32).hex()
    body = {"deviceId": device_id, "bundleId": f"com.example.{app}", "environment": "sandbox",
            "tokens": {"remote": token}}
    requester = connection.request if connection else (lambda *a, **k: call(port, *a, **k))
    answer = await requester("POST", "/v1/devices", body, user_token(SECRET, app, user))
    assert answer.status == 201, (answer.status, answer.body)
    return Device(app, user, device_id, answer.json()["credential"], token)


async def register_many(port, app, users, concurrency=32):
    devices, queue = {}, list(users)

    async def worker():
        connection = Connection(port)
        while queue:
            user = queue.pop()
            devices[user] = await register(port, app, user, connection=connection)
        connection.close()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return devices


def message(users, **payload):
    return {"recipients": {"users": list(users)}, "kind": "message", "payload": payload}


# --- What the store still has -------------------------------------------------------------------

async def collect_ids(port, credential, timeout=120):
    """Every message id of the device's user, read by a fresh sync session from cursor 0."""
    session = await Sync.open(port, credential)
    ids = set()
    try:
        welcome = await session.hello(cursor=0)
        last, started = welcome["lastSequence"], now()
        seq = 0
        while seq < last:
            if now() - started > timeout:
                raise RuntimeError(f"sync read stalled at {seq} of {last}")
            frame = await session.receive(timeout=30)
            if frame.get("type") == "message":
                ids.add(frame["id"])
                seq = frame["seq"]
                await session.send({"type": "ack", "upTo": seq})
    finally:
        await session.bye()
    return ids


async def each(items, work, concurrency=16):
    """work(connection_factory, item) for every item, `concurrency` at a time; the results in order."""
    results, queue = [None] * len(items), list(enumerate(items))

    async def worker():
        while queue:
            index, item = queue.pop()
            results[index] = await work(item)
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return results


async def pushes_missing(server, wanted, wait):
    """Of `wanted` ({message id: device}), the messages whose device's token has received no
    push naming them after `wait` seconds (the built-in APNs emulator's control API)."""
    deadline = now() + wait
    missing = dict(wanted)
    while True:
        async def received(item):
            message_id, device = item
            answer = await attempt(call(server.control, "GET", f"/devices/{device.token}/received"))
            return isinstance(answer, Answer) and answer.status == 200 and message_id.encode() in answer.body
        found = await each(list(missing.items()), received)
        missing = {i: d for (i, d), got in zip(list(missing.items()), found) if not got}
        if not missing or now() > deadline:
            return missing
        await asyncio.sleep(0.5)


async def missing_by_get(port, wanted):
    """Of `wanted` ({message id: device}), the ids GET /v1/messages/{id} does not find (200)."""
    async def fetch(item):
        message_id, device = item
        answer = await attempt(call(port, "GET", f"/v1/messages/{message_id}", token=device.credential))
        return isinstance(answer, Answer) and answer.status == 200
    found = await each(list(wanted.items()), fetch)
    return [i for (i, _), got in zip(wanted.items(), found) if not got]


async def lost_messages(port, expected, devices):
    """Acknowledged messages the store no longer has: `expected` maps a user to the ids posted
    to them and answered 2xx; `devices` maps the user to a device that reads them."""
    lost = []
    for user, ids in expected.items():
        if ids:
            have = await collect_ids(port, devices[user].credential)
            lost += [(user, i) for i in ids if i not in have]
    return lost


# --- Results ------------------------------------------------------------------------------------

class Result:
    def __init__(self, case, done):
        self.case, self.done = case, done
        self.answers = collections.Counter()
        self.recovery = "-"
        self.lost = None
        self.after = "-"
        self.failures, self.notes, self.figures = [], [], {}

    def check(self, condition, failure):
        if not condition:
            self.failures.append(failure)
        return condition

    def note(self, text):
        self.notes.append(text)


async def server_after(result, server, port=None):
    """Fills in whether the server is alive and healthy, and fails the case if it is not or if
    it crashed or logged a fatal error."""
    alive = server.alive()
    fine = alive and await healthy(port or server.port)
    result.after = ("alive, healthy" if fine else "alive, NOT healthy" if alive else "DEAD")
    result.check(fine, f"{server.name}: the server is not alive and healthy after the case")
    crash = server.crashed()
    result.check(crash is None, f"{server.name}: {crash}")
    problems = server.log_problems()
    fatal = [line for line in problems if "Fatal error" in line or "Illegal instruction" in line or " critical " in line]
    result.check(not fatal, f"{server.name}: fatal lines in its log: {fatal[:3]}")
    if problems:
        result.note(f"{server.name} log errors: " + "; ".join(f"{count}× {line}" for line, count in problems.most_common(4)))
    return fine


async def recover(port, key, user="u-recovery"):
    """Seconds until a fresh connection gets /health 200 and a post 202 (None: not in 30 s)."""
    started = now()
    while now() - started < 30:
        if await healthy(port, timeout=2):
            outcome = await attempt(call(port, "POST", "/v1/messages", message([user], probe="recovery"), key, timeout=5))
            if isinstance(outcome, Answer) and outcome.status == 202:
                return now() - started, outcome.json()["id"]
        await asyncio.sleep(0.1)
    return None, None


# --- Connections held at once --------------------------------------------------------------------

REFUSED = "closed without an answer (refused)"


async def hold_connections(port, count, connect_timeout, answer_timeout):
    """Opens `count` connections at once, each asking GET /health. Returns (held connections
    that were answered, outcome kinds, seconds from TCP connect to the close of refused ones,
    seconds from TCP connect to the answer of the others)."""
    held, kinds, refused_after, answered_after = [], collections.Counter(), [], []

    async def one():
        try:
            reader, writer = await connect(port, connect_timeout)
        except (OSError, asyncio.TimeoutError) as error:
            kinds["no TCP connect (SYN backlog full)" if isinstance(error, asyncio.TimeoutError) else kind(error)] += 1
            return
        connected = now()
        writer.write(render("GET", "/health"))
        try:
            answer = await asyncio.wait_for(read_answer(reader), answer_timeout)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as error:
            if isinstance(error, asyncio.TimeoutError):
                kinds["connected, no answer (waiting in the accept queue)"] += 1
                held.append((reader, writer))
                return
            kinds[REFUSED] += 1
            refused_after.append(now() - connected)
            close_writer(writer)
            return
        answered_after.append(now() - connected)
        kinds[f"{answer.status} (held)"] += 1
        held.append((reader, writer))
    await asyncio.gather(*(one() for _ in range(count)))
    return held, kinds, refused_after, answered_after


# --- The run ------------------------------------------------------------------------------------

class Context:
    def __init__(self, binary, work, scale):
        self.binary, self.work, self.scale = binary, work, scale
        self.servers = []

    def server(self, name, **options):
        server = OverloadNode(self.binary, self.work, name, **options)
        self.servers.append(server)
        return server


def table(results):
    columns = ("case", "what was done", "answers seen", "recovery", "lost", "server after", "result")
    rows = []
    for r in results:
        verdict = "skipped" if getattr(r, "skipped", False) else ("PASS" if not r.failures else f"FAIL ({len(r.failures)})")
        rows.append((r.case, r.done, counted(r.answers), r.recovery, "-" if r.lost is None else str(r.lost), r.after, verdict))
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "/") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


async def run(title, cases, args):
    """Runs `cases` ([(row name, coroutine function of a Context)]), each on servers of its own,
    and prints their rows; 1 if any check failed."""
    scale = SCALES[args.scale]
    work = tempfile.mkdtemp(prefix=f"beckon-{title}.")
    context = Context(os.path.abspath(args.binary), work, scale)
    results, began = [], now()
    print(f"{title}: scale {args.scale}, work directory {work}", flush=True)
    for name, case in cases:
        started = now()
        print(f"{title}: {name} …", flush=True)
        try:
            produced = await case(context)
        except Exception as error:
            broken = Result(name, "did not complete")
            # Most often because a server died under the case: say so first.
            for server in context.servers:
                crash = server.crashed()
                if crash:
                    broken.after = "DEAD"
                    broken.failures.append(f"{server.name}: {crash}; its log ends: {server.log_tail()!r}")
            broken.failures.append(f"the case raised {type(error).__name__}: {error}")
            broken.notes.append(traceback.format_exc().strip().splitlines()[-3])
            produced = [broken]
        finally:
            for server in context.servers:
                if server.alive():
                    server.kill()
            context.servers.clear()
        for result in produced:
            result.figures["seconds"] = now() - started
            results.append(result)
            verdict = "PASS" if not result.failures else "FAIL"
            print(f"{title}: {result.case}: {verdict} in {now() - started:.1f} s", flush=True)
    print()
    print(table(results))
    print()
    for result in results:
        print(f"{result.case}:")
        for note in result.notes:
            print(f"  - {note}")
        for failure in result.failures:
            print(f"  FAILED: {failure}")
    failed = [r.case for r in results if r.failures]
    keep = args.keep or failed
    print(f"\n{title}: {len(results)} rows in {now() - began:.0f} s; "
          + (f"FAILED: {', '.join(failed)}" if failed else "all passed")
          + (f"; logs in {work}" if keep else ""))
    if not keep:
        import shutil
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


def main(doc, cases):
    """The command line of an overload case: `scripts/overload-<case>.py BECKON_BINARY [--scale
    small|full] [--only NAME] [--keep]`; `cases` as for `run`."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--scale", choices=sorted(SCALES), default="small",
                        help="small: CI's (2 shared cores); full: the long run")
    if len(cases) > 1:
        parser.add_argument("--only", choices=[name.split()[-1] for name, _ in cases], help="run this part only")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs) even when all passed")
    args = parser.parse_args()
    if getattr(args, "only", None):
        cases = [(name, case) for name, case in cases if name.split()[-1] == args.only]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the clients' sockets
    title = os.path.splitext(os.path.basename(sys.argv[0]))[0]
    sys.exit(asyncio.run(run(title, cases, args)))
