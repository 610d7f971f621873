#!/usr/bin/env python3
"""Overload and resource faults against `beckon serve` (SQLite, loopback): the server must refuse
what it cannot take (429, 503, a closed connection), recover by itself, never crash and never
lose a message it acknowledged.

    scripts/overload.py BECKON_BINARY [--scale small|full] [--only CASE,...] [--keep]

Cases (each on a fresh server; `--only` takes their numbers or names):
  1 descriptors  a low open-files limit (soft = hard = 512) and more connections than it allows,
                 requests kept coming on connections held from before; then the same with
                 http.max-connections set above that limit, so every descriptor is taken
  2 slowloris    request heads, second heads and bodies trickled one byte every 2 s, idle
                 connections; legitimate requests must be served meanwhile, every slow
                 connection closed within its timeout (http.request-head-seconds for a first
                 head, http.idle-seconds otherwise, http.body-seconds for a body, also after an
                 early 401), and SIGTERM with uploads still trickling
                 must end within shutdown.grace-seconds
  3 connections  N connections opened at once (small 1,000, full 10,000): under the default
                 http.max-connections all answered, then with it at N/2 the excess closed without
                 an answer and no later than the admitted ones are answered (both wait only in
                 the accept queue)
  4 storm        N devices with open sync sessions (small 300, full 10,000); SIGTERM, start again
                 on the same database; the devices come back with the SDK's backoff; every one
                 must resume (welcome, and the message posted meanwhile) within 3 × the downtime
                 + 10 s + N/500 s (what the backoff implies), none starved; SIGTERM must end
                 within shutdown.grace-seconds + 5 s; then how limits.sync-connects-per-minute
                 meets a device in a tight loop
  5 flood        one app posts far beyond limits.messages-per-second (200): 429 with Retry-After
                 and the error body; another app keeps its 202s (bulkhead); SIGKILL, restart, and
                 every 202 must be there
  6 storage      6a "locked": another process holds BEGIN EXCLUSIVE for longer than SQLite's busy
                 timeout while posts arrive; 6b "disk-full": the database on a small tmpfs, filled.
                 Expected: 503 (507 for the full disk) in the documented error form, never 500,
                 recovery without help, nothing acknowledged lost (checked after SIGKILL), and in
                 6a every message acknowledged for a never-connected device pushed

Prints one table row per case and the details under it; exits 1 if any check failed (the work
directory with every server's log is then kept, and printed). `--scale small` is CI's (under 2
minutes on 2 shared cores); `--scale full` is the long run (about 7 minutes). Case 6b mounts a
tmpfs, so it needs root (it is reported as skipped otherwise). Only loopback is used.
"""
import argparse, asyncio, base64, collections, json, os, re, resource, signal, sqlite3
import subprocess, sys, tempfile, threading, time

from beckonlib import cpu_seconds, free_port, user_token

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


def listen_drops():
    """TcpExt ListenOverflows of this machine (/proc/net/netstat): connections the kernel dropped
    because a listener's accept queue (its backlog) was full."""
    try:
        with open("/proc/net/netstat") as netstat:
            lines = [line.split() for line in netstat if line.startswith("TcpExt:")]
        return int(dict(zip(lines[0][1:], lines[1][1:]))["ListenOverflows"])
    except (OSError, KeyError, IndexError, ValueError):
        return 0


def percentile(values, fraction):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def seconds(value):
    return "-" if value is None else f"{value:.2f} s"


def spread(values):
    """p50/p90/p99/max of durations, for the report."""
    if not values:
        return "none"
    return (f"p50 {percentile(values, .5):.2f} s, p90 {percentile(values, .9):.2f} s, "
            f"p99 {percentile(values, .99):.2f} s, max {max(values):.2f} s")


def counted(counter):
    return ", ".join(f"{kind} ×{count}" for kind, count in counter.most_common()) or "none"


# --- The server ---------------------------------------------------------------------------------

class Server:
    """One `beckon serve` on a SQLite file, apps `chat` and `mail` (built-in APNs emulator).
    `nofile` sets RLIMIT_NOFILE (soft = hard) for it; `env` adds BECKON_* settings."""

    def __init__(self, binary, work, name, env=None, nofile=None, database=None, port=None):
        self.binary, self.work, self.name, self.nofile = binary, work, name, nofile
        self.port = port or free_port()
        self.control = free_port()  # the built-in APNs emulator's control API: what devices received
        self.database = database or os.path.join(work, name + ".sqlite")
        self.log_path = os.path.join(work, name + ".log")
        self.env = dict(os.environ)
        self.env.update(BECKON_HTTP_PORT=str(self.port), BECKON_DATABASE_PATH=self.database,
                        BECKON_ADMIN_TOKEN=ADMIN, BECKON_APPS_IDS=",".join(APPS), BECKON_LOG_LEVEL="info",
                        BECKON_APNS_EMULATOR_CONTROL_PORT=str(self.control))
        for app in APPS:
            upper = app.upper()
            self.env.update({f"BECKON_APPS_{upper}_BUNDLE_ID": f"com.example.{app}",
                             f"BECKON_APPS_{upper}_TEAM_ID": "TEAM123456",
                             f"BECKON_APPS_{upper}_USER_TOKEN_SECRET": SECRET})
        self.env.update(env or {})
        self.process, self.bad_exits, self.stopping = None, [], False

    def start(self, timeout=60):
        nofile = self.nofile

        def limits():
            if nofile:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
        started = now()
        self.stopping = False
        self.process = subprocess.Popen([self.binary, "serve"], env=self.env, preexec_fn=limits,
                                        stdout=open(self.log_path, "ab"), stderr=subprocess.STDOUT)
        while now() - started < timeout:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name}: beckon serve exited at start ({self.process.returncode}); see {self.log_path}")
            if blocking_health(self.port):
                self.start_seconds = now() - started
                return self.start_seconds
            time.sleep(0.05)
        raise RuntimeError(f"{self.name}: beckon serve did not answer /health in {timeout} s; see {self.log_path}")

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    def alive(self):
        return self.process is not None and self.process.poll() is None

    def stop(self, timeout=30):
        """SIGTERM; seconds until it exited (SIGKILL after `timeout`, then None)."""
        if not self.alive():
            return 0.0
        started = now()
        self.stopping = True
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            self.bad_exits.append(f"did not exit within {timeout} s of SIGTERM")
            return None
        if self.process.returncode != 0:
            self.bad_exits.append(f"exited {self.process.returncode} after SIGTERM")
        return now() - started

    def kill(self):
        if self.alive():
            self.stopping = True
            self.process.kill()
            self.process.wait()

    def crashed(self):
        """What went wrong with an exit: one the server chose (a signal, an error) while we did
        not stop it, a failed or hung SIGTERM; None when nothing did."""
        if self.process is not None and self.process.poll() is not None and not self.stopping:
            code = self.process.returncode
            how = f"signal {-code} ({signal.Signals(-code).name})" if code < 0 else f"status {code}"
            return f"the server died by itself: {how}"
        return "; ".join(self.bad_exits) or None

    def log_tail(self, lines=4):
        with open(self.log_path, errors="replace") as log:
            return " / ".join(line.strip() for line in log.read().strip().splitlines()[-lines:] if line.strip())

    def limit(self):
        """http.max-connections as the server logged it."""
        with open(self.log_path, errors="replace") as log:
            found = re.findall(r"http\.max-connections=(\d+)", log.read())
        return int(found[-1]) if found else None

    def descriptors(self):
        try:
            return len(os.listdir(f"/proc/{self.process.pid}/fd"))
        except OSError:
            return None

    def log_problems(self):
        """Counts of the log's error-level lines by their message (request ids left out), and
        whether a fatal error or signal shows."""
        problems = collections.Counter()
        with open(self.log_path, errors="replace") as log:
            for line in log:
                if " error " in line or " critical " in line or "Fatal error" in line or "Illegal instruction" in line:
                    text = re.sub(r"^\S+ ", "", line.strip())
                    text = re.sub(r"hb\.request\.id=\S+ ", "", text)
                    text = re.sub(r"\b[0-9a-f]{8}-[0-9a-f-]{27}\b", "…", text)
                    problems[text[:200]] += 1
        return problems


def blocking_health(port):
    import http.client
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        connection.request("GET", "/health")
        status = connection.getresponse().status
        connection.close()
        return status == 200
    except OSError:
        return False


# --- HTTP/1.1 over asyncio ----------------------------------------------------------------------

class Answer:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        try:
            return json.loads(self.body or b"null")
        except ValueError:
            return None

    def error_form(self):
        """The documented error body: {"error": {"code": "…", "message": "…"}} and nothing else."""
        body = self.json()
        return (isinstance(body, dict) and set(body) == {"error"} and isinstance(body["error"], dict)
                and isinstance(body["error"].get("code"), str) and isinstance(body["error"].get("message"), str))

    def code(self):
        body = self.json()
        return body["error"].get("code") if self.error_form() else None


async def read_answer(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    if status in (101, 204, 304) or 100 <= status < 200:
        body = b""
    elif "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        body = b""
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            body += await reader.readexactly(size + 2)
            body = body[:-2]
            if size == 0:
                break
    else:
        body = await reader.read()
    return Answer(status, headers, body)


def render(method, path, body=None, token=None, headers=()):
    data = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    if token:
        lines.append(f"Authorization: Bearer {token}")
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(data)}"]
    lines += list(headers)
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


async def connect(port, timeout=10):
    return await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), timeout)


def close_writer(writer):
    try:
        writer.close()
    except Exception:
        pass


class Connection:
    """A keep-alive HTTP connection, opened again after the server closes it."""

    def __init__(self, port):
        self.port, self.streams = port, None

    async def request(self, method, path, body=None, token=None, timeout=10, headers=()):
        if self.streams is None:
            self.streams = await connect(self.port, timeout)
        reader, writer = self.streams
        try:
            writer.write(render(method, path, body, token, headers))
            await writer.drain()
            answer = await asyncio.wait_for(read_answer(reader), timeout)
        except BaseException:
            self.close()
            raise
        if answer.headers.get("connection", "").lower() == "close":
            self.close()
        return answer

    def close(self):
        if self.streams:
            close_writer(self.streams[1])
            self.streams = None


async def call(port, method, path, body=None, token=None, timeout=10, headers=()):
    """One request on a new connection."""
    connection = Connection(port)
    try:
        return await connection.request(method, path, body, token, timeout, headers)
    finally:
        connection.close()


def kind(outcome):
    """An answer's status, or what happened instead of one, as the report counts it."""
    if isinstance(outcome, SyncRefused):
        outcome = outcome.answer
    if isinstance(outcome, Answer):
        code = outcome.code()
        return f"{outcome.status}" + (f" {code}" if code and outcome.status >= 400 else "")
    if isinstance(outcome, ConnectionRefusedError):
        return "connect refused"
    if isinstance(outcome, asyncio.IncompleteReadError) or isinstance(outcome, (ConnectionResetError, BrokenPipeError)):
        return "closed without an answer"
    if isinstance(outcome, asyncio.TimeoutError):
        return "no answer (timeout)"
    if isinstance(outcome, OSError):
        return f"socket error {outcome.strerror or outcome}"
    return type(outcome).__name__


async def attempt(coroutine):
    """The answer, or the exception that took its place."""
    try:
        return await coroutine
    except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, SyncRefused) as error:
        return error


async def healthy(port, timeout=3):
    outcome = await attempt(call(port, "GET", "/health", timeout=timeout))
    return isinstance(outcome, Answer) and outcome.status == 200


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


# --- The sync protocol over asyncio -------------------------------------------------------------

class SyncRefused(Exception):
    def __init__(self, answer):
        super().__init__(f"upgrade refused: {answer.status}")
        self.answer = answer


class Closed(Exception):
    def __init__(self, code):
        super().__init__(f"closed ({code})")
        self.code = code


class Sync:
    """A sync session (docs/sync-protocol.md, v2): masked text frames, pings answered."""

    def __init__(self, reader, writer):
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, port, credential, timeout=10):
        began = now()
        reader, writer = await connect(port, timeout)
        connected = now()
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write((f"GET /v1/sync HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: beckon.v2\r\n"
                      f"Authorization: Bearer {credential}\r\n\r\n").encode())
        try:
            await writer.drain()
            answer = await asyncio.wait_for(read_answer(reader), timeout)
        except BaseException:
            close_writer(writer)
            raise
        if answer.status != 101:
            close_writer(writer)
            raise SyncRefused(answer)
        session = cls(reader, writer)
        session.connect_seconds, session.upgrade_seconds = connected - began, now() - connected
        return session

    def _frame(self, opcode, payload):
        mask = os.urandom(4)
        length = len(payload)
        if length < 126:
            header = bytes([0x80 | opcode, 0x80 | length])
        elif length < 65536:
            header = bytes([0x80 | opcode, 0x80 | 126]) + length.to_bytes(2, "big")
        else:
            header = bytes([0x80 | opcode, 0x80 | 127]) + length.to_bytes(8, "big")
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.writer.write(header + mask + masked)

    async def send(self, frame):
        self._frame(0x1, json.dumps(frame).encode())
        await self.writer.drain()

    async def hello(self, cursor=0, window=100, timeout=10):
        await self.send({"type": "hello", "version": 2, "role": "app", "cursor": cursor, "window": window})
        frame = await self.receive(timeout)
        if frame.get("type") != "welcome":
            raise RuntimeError(f"expected welcome, got {frame}")
        return frame

    async def receive(self, timeout=None):
        """The next JSON frame; Closed with the server's code when it closes."""
        while True:
            first, second = await asyncio.wait_for(self.reader.readexactly(2), timeout)
            length = second & 0x7F
            if length == 126:
                length = int.from_bytes(await self.reader.readexactly(2), "big")
            elif length == 127:
                length = int.from_bytes(await self.reader.readexactly(8), "big")
            payload = await self.reader.readexactly(length)
            opcode = first & 0x0F
            if opcode == 0x1:
                return json.loads(payload)
            if opcode == 0x9:
                self._frame(0xA, payload)
            elif opcode == 0x8:
                code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else None
                try:
                    self._frame(0x8, payload[:2])
                except Exception:
                    pass
                self.close()
                raise Closed(code)

    async def bye(self):
        try:
            await self.send({"type": "bye"})
        except Exception:
            pass
        self.close()

    def close(self):
        close_writer(self.writer)


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


# --- Case 1: descriptor exhaustion --------------------------------------------------------------

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


REFUSED = "closed without an answer (refused)"


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
    # competes for descriptors. No crash (once SIGILL), no 500, recovery once they go.
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


# --- Case 2: slowloris --------------------------------------------------------------------------

class Slow:
    """One group of slow connections: what each sends at once, what it then trickles, and how
    long the server should let it live."""

    def __init__(self, label, name, prefix, trickle, interval, bound, count, reopen=False):
        self.label, self.name, self.prefix, self.trickle, self.interval = label, name, prefix, trickle, interval
        self.bound, self.count, self.reopen = bound, count, reopen
        self.lifetimes, self.open_at_end, self.responses = [], 0, collections.Counter()


async def slow_connection(port, group, end):
    while now() < end:
        try:
            reader, writer = await connect(port, 10)
        except (OSError, asyncio.TimeoutError):
            group.responses["connect failed"] += 1
            await asyncio.sleep(0.5)
            continue
        opened, sent = now(), 0
        prefix = group.prefix() if callable(group.prefix) else group.prefix
        writer.write(prefix)
        read = asyncio.ensure_future(reader.read(65536))
        closed = False
        while now() < end:
            if sent < len(group.trickle):
                try:
                    writer.write(group.trickle[sent:sent + 1])
                except Exception:
                    pass
                sent += 1
            done, _ = await asyncio.wait({read}, timeout=min(group.interval, max(0.01, end - now())))
            if read in done:
                data = read.exception() is None and read.result()
                if not data:
                    closed = True
                    break
                for status in re.findall(rb"HTTP/1\.1 (\d{3})", data):
                    group.responses[f"{status.decode()} answered"] += 1
                read = asyncio.ensure_future(reader.read(65536))
        read.cancel()
        close_writer(writer)
        if closed:
            group.lifetimes.append(now() - opened)
        else:
            group.open_at_end += 1
            group.lifetimes.append(now() - opened)
        if not group.reopen:
            return


async def case_slowloris(context):
    scale = context.scale
    head = scale["head_seconds"] or DEFAULT_HEAD_SECONDS
    idle = scale["idle_seconds"] or DEFAULT_IDLE_SECONDS
    body_seconds = scale["body_seconds"] or DEFAULT_BODY_SECONDS
    env = {}
    if scale["body_seconds"]:
        env["BECKON_HTTP_BODY_SECONDS"] = str(body_seconds)
    if scale["head_seconds"]:
        env["BECKON_HTTP_REQUEST_HEAD_SECONDS"] = str(head)
    if scale["idle_seconds"]:
        env["BECKON_HTTP_IDLE_SECONDS"] = str(idle)
    if scale["grace_seconds"]:
        env["BECKON_SHUTDOWN_GRACE_SECONDS"] = str(scale["grace_seconds"])
    server = context.server("slowloris", env=env)
    server.start()
    port = server.port
    key = await issue_key(port, "chat")
    device = await register(port, "chat", "u1")
    duration = max(head, idle) + scale["slow_extra"]
    n, small = scale["slow_attackers"], scale["slow_group"]
    slow_head = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow\r\nX-Pad: " + b"a" * 400 + b"\r\n"
    body = json.dumps(message(["u1"], pad="x" * 400)).encode()
    post_head = render("POST", "/v1/messages", None, key, (f"Content-Type: application/json", f"Content-Length: {len(body)}"))
    anon_head = render("POST", "/v1/messages", None, None, (f"Content-Type: application/json", f"Content-Length: {len(body)}"))
    groups = [
        Slow("head trickle", "first request head, 1 byte / 2 s (reopened when closed)", b"G", slow_head[1:], 2, head, n, reopen=True),
        Slow("silent", "connected, nothing sent", b"", b"", 1, head, small),
        Slow("2nd head trickle", "keep-alive, next request head 1 byte / 2 s", render("GET", "/health"), slow_head, 2, idle, small),
        Slow("slow body (key)", "POST body 1 byte / 2 s, valid API key", post_head, body, 2, body_seconds, small),
        Slow("slow body (no key)", "POST body 1 byte / 2 s, no credential", anon_head, body, 2, body_seconds, small),
    ]
    end = now() + duration
    tasks = []
    for group in groups:
        for i in range(group.count):
            tasks.append(asyncio.ensure_future(slow_connection(port, group, end)))
            if i % 100 == 99:
                await asyncio.sleep(0.05)
    # Sync sessions upgraded but never saying hello (informational: nothing documents a bound).
    hello_less, hello_less_closed = [], []
    for _ in range(5):
        outcome = await attempt(Sync.open(port, device.credential))
        if isinstance(outcome, Sync):
            hello_less.append((now(), outcome))

    # Legitimate traffic during the attack: a fresh connection every 0.25 s, alternately a
    # health check and a post.
    latencies, legit, acknowledged = [], collections.Counter(), {"u2": set()}
    legit_device = await register(port, "chat", "u2")
    turn = 0
    await asyncio.sleep(min(2, duration / 4))  # let the attack build up
    while now() < end - 0.5:
        started = now()
        if turn % 2:
            outcome = await attempt(call(port, "POST", "/v1/messages", message(["u2"], n=turn), key, timeout=10))
            if isinstance(outcome, Answer) and outcome.status == 202:
                acknowledged["u2"].add(outcome.json()["id"])
        else:
            outcome = await attempt(call(port, "GET", "/health", timeout=10))
        latencies.append(now() - started)
        legit[kind(outcome)] += 1
        turn += 1
        await asyncio.sleep(max(0, 0.25 - (now() - started)))
    await asyncio.gather(*tasks)
    for opened, session in hello_less:
        code = None
        try:
            await session.receive(timeout=0.01)
        except Closed as closed:
            code = closed.code
        except (asyncio.TimeoutError, asyncio.IncompleteReadError, OSError):
            pass
        if code is not None:
            hello_less_closed.append(code)
        session.close()

    result = Result("2 slowloris", f"{n} trickled heads + {4 * small} slow/idle others for {duration:.0f} s "
                                   f"(request-head {head} s, idle {idle} s)")
    result.answers.update({f"legit {k}": v for k, v in legit.items()})
    ok = sum(v for k, v in legit.items() if k in ("200", "202"))
    result.check(ok == sum(legit.values()) and ok > 0,
                 f"legitimate requests during the attack: {counted(legit)} (all must be 200/202)")
    result.note(f"legitimate requests during the attack: {counted(legit)}; latency {spread(latencies)}")
    for group in groups:
        longest = max(group.lifetimes) if group.lifetimes else None
        # A connection still open at the end counts only once it has lived past the bound.
        overdue = sum(1 for lifetime in group.lifetimes if lifetime > group.bound + SLACK)
        if len(group.lifetimes) > group.open_at_end:
            result.answers[f"{group.label}: closed by server"] += len(group.lifetimes) - group.open_at_end
        if overdue:
            result.answers[f"{group.label}: open past {group.bound} s"] += overdue
        result.note(f"{group.name}: {len(group.lifetimes)} connections, {group.open_at_end} open at the end of "
                    f"{duration:.0f} s ({overdue} past the bound {group.bound} s); lifetime {spread(group.lifetimes)}"
                    + (f"; answers {counted(group.responses)}" if group.responses else ""))
        result.check(overdue == 0 and longest is not None,
                     f"'{group.name}': {overdue} connections lived past {group.bound} s (+{SLACK:.0f} s), "
                     f"the longest {seconds(longest)} (cut off by the test, not the server); expected the server "
                     f"to close them within {group.bound} s")
    result.note(f"sync sessions upgraded and silent (no hello), informational: {len(hello_less)} opened, "
                f"{len(hello_less_closed)} closed by the server within {duration:.0f} s"
                + (f" (codes {sorted(set(hello_less_closed))})" if hello_less_closed else
                   " (nothing documents a deadline for hello; pings keep them)"))
    recovery, probe = await recover(port, key)
    result.recovery = seconds(recovery)
    if probe:
        acknowledged["u-recovery"] = {probe}
    devices = {"u2": legit_device, "u-recovery": await register(port, "chat", "u-recovery")}
    result.lost = len(await lost_messages(port, acknowledged, devices))
    result.check(result.lost == 0, f"{result.lost} acknowledged messages missing")
    await server_after(result, server)
    # SIGTERM while uploads trickle: shutdown.grace-seconds bounds the shutdown.
    grace = scale["grace_seconds"] or DEFAULT_GRACE_SECONDS
    uploads = Slow("upload at SIGTERM", "POST body 1 byte / 2 s at SIGTERM", post_head, body, 2, grace, 3)
    trickling = [asyncio.ensure_future(slow_connection(port, uploads, now() + grace + 15)) for _ in range(uploads.count)]
    await asyncio.sleep(1)
    stop = await asyncio.to_thread(server.stop, grace + 12)
    for task in trickling:
        task.cancel()
    await asyncio.gather(*trickling, return_exceptions=True)
    server.bad_exits.clear()  # judged here
    result.note(f"SIGTERM with {uploads.count} uploads trickling: " +
                (f"exited after {stop:.2f} s" if stop is not None else f"still running {grace + 12} s later (SIGKILLed)")
                + f" (shutdown.grace-seconds {grace})")
    result.check(stop is not None and stop <= grace + SLACK,
                 f"SIGTERM with uploads trickling: the server " + (f"took {stop:.1f} s to exit" if stop is not None else
                 f"had not exited {grace + 12} s later") + f"; shutdown.grace-seconds is {grace}")
    return [result]


# --- Case 3: N connections at once --------------------------------------------------------------

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


# --- Case 4: reconnect storm --------------------------------------------------------------------

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

async def case_flood(context):
    scale = context.scale
    rate = 200
    server = context.server("flood", env={"BECKON_LIMITS_MESSAGES_PER_SECOND": str(rate)})
    server.start()
    port = server.port
    keys = {app: await issue_key(port, app) for app in APPS}
    devices = {"chat": await register(port, "chat", "flooded"), "mail": await register(port, "mail", "steady")}
    accepted = {"chat": set(), "mail": set()}
    answers = {"chat": collections.Counter(), "mail": collections.Counter()}
    bad_429 = []
    latencies = []
    duration = scale["flood_seconds"]
    end = now() + duration

    async def flood_writer(number):
        connection = Connection(port)
        n = 0
        while now() < end:
            n += 1
            outcome = await attempt(connection.request("POST", "/v1/messages", message(["flooded"], w=number, n=n), keys["chat"], timeout=30))
            answers["chat"][kind(outcome)] += 1
            if isinstance(outcome, Answer):
                if outcome.status == 202:
                    accepted["chat"].add(outcome.json()["id"])
                elif outcome.status == 429:
                    retry = outcome.headers.get("retry-after", "")
                    if not (retry.isdigit() and int(retry) >= 1 and outcome.error_form() and outcome.code() == "rate_limited"):
                        bad_429.append((retry, outcome.body[:100]))
        connection.close()

    # The other app posts from a process of its own, so the flood's client does not delay it.
    import multiprocessing
    results = multiprocessing.get_context("fork").Queue()
    steady = multiprocessing.get_context("fork").Process(
        target=steady_poster, args=(port, keys["mail"], "steady", duration, 20, results))
    steady.start()
    started = now()
    await asyncio.gather(*(flood_writer(i) for i in range(scale["flood_writers"])))
    elapsed = now() - started
    steady_answers, steady_ids, latencies = await asyncio.to_thread(results.get, True, 60)
    steady.join(10)
    answers["mail"].update(steady_answers)
    accepted["mail"].update(steady_ids)
    offered = sum(answers["chat"].values()) / elapsed
    # Durability: SIGKILL right after the flood, start again, read every accepted id back.
    server.kill()
    server.start()
    lost_ids = await lost_messages(port, {"flooded": accepted["chat"], "steady": accepted["mail"]},
                                   {"flooded": devices["chat"], "steady": devices["mail"]})
    result = Result("5 flood", f"app chat: {scale['flood_writers']} connections posting flat out for {duration} s "
                               f"(limit {rate}/s); app mail: 20/s alongside; SIGKILL + restart")
    result.answers.update({f"chat {k}": v for k, v in answers["chat"].items()})
    result.answers.update({f"mail {k}": v for k, v in answers["mail"].items()})
    result.lost = len(lost_ids)
    ceiling = rate * elapsed + rate  # the bucket (one second's worth) and its refill
    result.check(len(accepted["chat"]) <= ceiling * 1.05 + 5, f"chat got {len(accepted['chat'])} 202s in {elapsed:.1f} s, "
                                                          f"more than limits.messages-per-second {rate} allows (~{ceiling:.0f})")
    result.check(answers["chat"].get("429 rate_limited", 0) > 0, "the flood was never answered 429")
    result.check(not bad_429, f"{len(bad_429)} 429s without Retry-After ≥ 1 or the documented body, e.g. {bad_429[:2]}")
    others = {k: v for k, v in answers["chat"].items() if k not in ("202", "429 rate_limited")}
    result.check(not others, f"chat answers other than 202 and 429: {others}")
    result.check(set(answers["mail"]) == {"202"}, f"the other app's posts during the flood: {counted(answers['mail'])} (all must be 202)")
    result.check(len(accepted["mail"]) >= duration * 5, f"the other app got only {len(accepted['mail'])} posts through in "
                                                       f"{duration} s (it asked for 20/s)")
    result.check(result.lost == 0, f"{result.lost} acknowledged messages missing after SIGKILL and restart, e.g. {lost_ids[:3]}")
    result.recovery = f"restart {server.start_seconds:.2f} s"
    result.note(f"offered {offered:.0f} posts/s from chat for {elapsed:.1f} s: {len(accepted['chat'])} accepted "
                f"({len(accepted['chat']) / elapsed:.0f}/s), {answers['chat'].get('429 rate_limited', 0)} refused with 429")
    result.note(f"mail alongside (its own process, 20/s): {counted(answers['mail'])}; latency {spread(latencies)}")
    result.note(f"after SIGKILL and restart: {len(accepted['chat']) + len(accepted['mail']) - result.lost} of "
                f"{len(accepted['chat']) + len(accepted['mail'])} acknowledged messages read back by sync")
    await server_after(result, server)
    server.stop()
    return [result]


def steady_poster(port, key, user, duration, rate, results):
    """A child process: posts to `user` at `rate` a second for `duration` seconds with blocking
    HTTP; puts (answers by kind, accepted ids, latencies) on `results`."""
    import http.client
    answers, ids, latencies = collections.Counter(), [], []
    connection = None
    end = time.monotonic() + duration
    n = 0
    while time.monotonic() < end:
        n += 1
        started = time.monotonic()
        try:
            if connection is None:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            connection.request("POST", "/v1/messages", json.dumps(message([user], n=n)),
                               {"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
            response = connection.getresponse()
            body = response.read()
            label = str(response.status)
            if response.status == 202:
                ids.append(json.loads(body)["id"])
            elif body.startswith(b"{"):
                label += " " + str(json.loads(body).get("error", {}).get("code"))
            answers[label] += 1
        except (OSError, http.client.HTTPException) as error:
            answers[f"no answer ({type(error).__name__})"] += 1
            connection = None
        latencies.append(time.monotonic() - started)
        time.sleep(max(0, 1 / rate - (time.monotonic() - started)))
    results.put((answers, ids, latencies))


# --- Case 6: database locked, disk full ---------------------------------------------------------

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

CASES = [("1", "descriptors", case_descriptors), ("2", "slowloris", case_slowloris),
         ("3", "connections", case_connections), ("4", "storm", case_storm), ("5", "flood", case_flood),
         ("6", "locked", case_locked), ("6", "disk-full", case_disk_full)]


class Context:
    def __init__(self, binary, work, scale):
        self.binary, self.work, self.scale = binary, work, scale
        self.servers = []

    def server(self, name, **options):
        server = Server(self.binary, self.work, name, **options)
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


async def run(args):
    scale = SCALES[args.scale]
    wanted = set(filter(None, (args.only or "").split(",")))
    unknown = wanted - {n for n, _, _ in CASES} - {name for _, name, _ in CASES} - {"storage"}
    if unknown:
        sys.exit(f"overload: unknown case(s) {sorted(unknown)}; cases: " + ", ".join(f"{n} {name}" for n, name, _ in CASES))
    work = tempfile.mkdtemp(prefix="beckon-overload.")
    context = Context(os.path.abspath(args.binary), work, scale)
    results, began = [], now()
    print(f"overload: scale {args.scale}, work directory {work}", flush=True)
    for number, name, case in CASES:
        if wanted and number not in wanted and name not in wanted and not (name in ("locked", "disk-full") and "storage" in wanted):
            continue
        started = now()
        print(f"overload: case {number} {name} …", flush=True)
        try:
            produced = await case(context)
        except Exception as error:
            import traceback
            broken = Result(f"{number} {name}", "did not complete")
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
            print(f"overload: {result.case}: {verdict} in {now() - started:.1f} s", flush=True)
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
    print(f"\noverload: {len(results)} rows in {now() - began:.0f} s; "
          + (f"FAILED: {', '.join(failed)}" if failed else "all passed")
          + (f"; logs in {work}" if keep else ""))
    if not keep:
        import shutil
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--scale", choices=sorted(SCALES), default="small")
    parser.add_argument("--only", help="comma-separated case numbers or names: " +
                        ", ".join(f"{n} {name}" for n, name, _ in CASES) + " (6 or storage: both of 6)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs) even when all passed")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the clients' sockets
    code = asyncio.run(run(args))
    sys.exit(code)


if __name__ == "__main__":
    main()
