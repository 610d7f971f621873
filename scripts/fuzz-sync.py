#!/usr/bin/env python3
"""Sync fuzzing (reliability issue, item 2): hostile WebSocket input on `GET /v1/sync` while
well-behaved sessions carry on, checked against docs/sync-protocol.md.

    scripts/fuzz-sync.py BECKON_BINARY [--frames N] [--seed S] [--strict-rfc] [--skip CLASS]

It starts `beckon serve` on loopback (a temporary SQLite database, one app, rate limits off),
keeps "bystander" sessions open that receive posted messages and acknowledge them, and meanwhile
runs hostile sessions, each one case of an input class (`--list` names them): frames built by
hand on a raw socket, so anything can be sent (bad opcodes, reserved bits, unmasked frames,
control frames that are too long or fragmented, fragments out of order, invalid UTF-8, binary
messages, lengths that lie, messages over `sync.max-frame-bytes`, malformed or mistyped JSON,
protocol frames out of order, floods past the queued-frame limit, ...). Cases are generated from
the seed: `--replay CLASS:INDEX` runs one again and prints what went each way.

Every case knows its answer. Where docs/sync-protocol.md states it (a close code, the `error`
frame before 4008 and its code), the answer is asserted. Where the document is silent, the case
carries what RFC 6455 requires instead; that is reported (`rfc 6455: n deviations`) and asserted
only with `--strict-rfc`. Whatever the class, these always hold: the answer comes (or the
session stays usable: a `ping` after the input is answered and `bye` closes with 1000), every
frame the server sends is well-formed, no session is closed with 1011, and the server hangs up
after its close frame.

Throughout, the bystanders must get every posted message once, in order, at the sequence the
post answered, within 10 s, with no close. At the end the server must be alive, answer
`GET /health`, have logged no error, close the last bystander with 1001 on SIGTERM and exit 0.
A short phase on a second server (ping interval 1 s) checks the documented ping timeout (close
1001). A first phase sends WebSocket pings (16 MiB; 64 MiB in the long run) on a session that
never reads: the server's anonymous memory may grow at most `--memory-limit-mib` (16 MiB).
`--skip memory`, `--skip ping` or `--skip CLASS` leave a part out.

The default run is the CI one (`--frames 100000`); `--frames 1000000` is the long run. Exits 0 if
every check passed, 1 otherwise, with a summary per input class.
"""
import argparse, base64, collections, json, os, random, select, shutil, signal, socket, subprocess, sys
import tempfile, threading, time

from beckonlib import free_port, request, user_token

SECRET = "fuzz-sync-secret-0123456789abcdef0123456789"
ADMIN = "fuzz-sync-admin-0123456789abcdef0123456789"
PRELOADED = 5          # messages in every hostile user's mailbox before the run
QUEUED_FRAMES = 128    # docs/sync-protocol.md, Limits: client frames queued (beyond it: 4029)
CLOSE_WAIT = 2.0       # docs/sync-protocol.md, Limits: wait for the client's answer to a close frame
MAX_READ_IDS = 1000    # docs/sync-protocol.md, Limits: ids in one `read`
LATENCY_LIMIT = 10.0   # a bystander's message arriving later than this counts as affected
CLIENT_TYPES = ("hello", "ack", "read", "ping", "bye")
SERVER_TYPES = {"welcome", "message", "readElsewhere", "callEnded", "pong", "error"}
ERROR_CODES = {"malformed_frame", "unknown_type", "invalid_field", "unexpected_frame", "unsupported_version",
               "ack_beyond_sent", "cursor_ahead"}


def log(*parts):
    print("fuzz-sync:", *parts, flush=True)


# --- WebSocket frames, as a client builds them (RFC 6455 §5.2), with every rule breakable ---------

def mask_payload(payload, key):
    count = len(payload)
    if not count:
        return b""
    stream = (key * (count // 4 + 1))[:count]
    return (int.from_bytes(payload, "little") ^ int.from_bytes(stream, "little")).to_bytes(count, "little")


def ws_frame(opcode, payload=b"", fin=True, rsv=0, masked=True, key=b"\x00\x00\x00\x00", length=None, form=None):
    """One frame. `length` claims another payload length than the payload's (a lie); `form`
    forces the length encoding: 7, 16 or 64 bits (the minimal one by default)."""
    claimed = len(payload) if length is None else length
    shortest = 7 if claimed < 126 else 16 if claimed < 65536 else 64
    form = shortest if form is None else max(form, shortest)
    first = (0x80 if fin else 0) | (rsv & 7) << 4 | (opcode & 0x0F)
    mask_bit = 0x80 if masked else 0
    if form == 7:
        header = bytes([first, mask_bit | claimed])
    elif form == 16:
        header = bytes([first, mask_bit | 126]) + claimed.to_bytes(2, "big")
    else:
        header = bytes([first, mask_bit | 127]) + claimed.to_bytes(8, "big")
    if not masked:
        return header + payload
    return header + key + mask_payload(payload, key)


class Frames:
    """A byte stream of client frames and how many frames it holds, built with a seeded random
    source (masking keys included), so a case is the same bytes every time."""

    def __init__(self, rng):
        self.rng, self.parts, self.count = rng, [], 0

    def add(self, opcode, payload=b"", **options):
        options.setdefault("key", self.rng.randbytes(4))
        self.parts.append(ws_frame(opcode, payload, **options))
        self.count += 1
        return self

    def text(self, value, **options):
        return self.add(0x1, value if isinstance(value, bytes) else encode(value), **options)

    def raw(self, data, frames=0):
        self.parts.append(data)
        self.count += frames
        return self

    def extend(self, other):
        self.parts.extend(other.parts)
        self.count += other.count
        return self

    def bytes(self):
        return b"".join(self.parts)


def encode(value):
    return json.dumps(value, separators=(",", ":")).encode()


def close_payload(code, reason=b""):
    return (b"" if code is None else code.to_bytes(2, "big")) + reason


# --- A raw client connection ---------------------------------------------------------------------

class ServerFrameError(Exception):
    pass


class Conn:
    """One connection to `/v1/sync`: the upgrade, then a select loop that writes what it is given
    while it reads and checks every server frame (unmasked, no reserved bits, known opcode, text
    that is one JSON object of a known type, control frames of at most 125 bytes)."""

    def __init__(self, port, credential, protocol="beckon.v2", headers=None, upgrade=True, timeout=10):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        lines = [f"GET /v1/sync HTTP/1.1", f"Host: 127.0.0.1:{port}"]
        if upgrade:
            lines += ["Upgrade: websocket", "Connection: Upgrade",
                      "Sec-WebSocket-Key: " + base64.b64encode(os.urandom(16)).decode(), "Sec-WebSocket-Version: 13"]
        if protocol:
            lines.append("Sec-WebSocket-Protocol: " + protocol)
        if credential:
            lines.append("Authorization: Bearer " + credential)
        for name, value in (headers or {}).items():
            lines = [line for line in lines if not line.lower().startswith(name.lower() + ":")]
            if value is not None:
                lines.append(f"{name}: {value}")
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                break
            head += chunk
        head, _, rest = head.partition(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        self.status = int(status_line.split()[1]) if len(status_line.split()) > 1 else 0
        self.headers = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            self.headers[name.strip().lower()] = value.strip()
        self.body = rest
        self.buffer = bytearray(rest if self.status == 101 else b"")
        self.frames = []        # (opcode, payload, time) of every server frame
        self.texts = []         # parsed text frames
        self.close_code = self.close_reason = self.close_at = None
        self.eof_at = None
        self.reset = False
        self.write_failed = False
        self.violations = []    # malformed server frames
        self.extra_closes = []  # codes of close frames after the first (there should be none)
        self.pings = 0
        self.started = time.monotonic()
        if self.status == 101:
            self.sock.setblocking(False)

    # Reading ---------------------------------------------------------------------------------

    def _parse(self):
        """Takes the complete frames out of the buffer."""
        out = []
        view = self.buffer
        offset = 0
        while len(view) - offset >= 2:
            first, second = view[offset], view[offset + 1]
            length = second & 0x7F
            position = offset + 2
            if length == 126:
                if len(view) - position < 2:
                    break
                length = int.from_bytes(view[position:position + 2], "big")
                position += 2
            elif length == 127:
                if len(view) - position < 8:
                    break
                length = int.from_bytes(view[position:position + 8], "big")
                position += 8
            if second & 0x80:
                self.violations.append("a masked server frame")
                position += 4
            if len(view) - position < length:
                break
            payload = bytes(view[position:position + length])
            offset = position + length
            opcode = first & 0x0F
            if first & 0x70:
                self.violations.append(f"reserved bits set in a server frame (first byte {first:#04x})")
            if not first & 0x80:
                self.violations.append("a fragmented server frame")
            if opcode >= 8 and length > 125:
                self.violations.append(f"a server control frame of {length} bytes")
            if opcode not in (0x1, 0x8, 0x9, 0xA):
                self.violations.append(f"server opcode {opcode:#x}")
            out.append((opcode, payload))
        if offset:
            del self.buffer[:offset]
        return out

    def _received(self, opcode, payload, answer_pings):
        now = time.monotonic()
        self.frames.append((opcode, payload, now))
        if self.close_at is not None:
            self.violations.append(f"a frame (opcode {opcode:#x}) after the server's close frame")
            if opcode == 0x8:
                self.extra_closes.append(int.from_bytes(payload[:2], "big") if len(payload) >= 2 else None)
            return
        if opcode == 0x1:
            try:
                value = json.loads(payload.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                self.violations.append(f"a server text frame that is not JSON: {payload[:80]!r}")
                return
            if not isinstance(value, dict) or value.get("type") not in SERVER_TYPES:
                self.violations.append(f"a server frame of no known type: {payload[:80]!r}")
                return
            if value["type"] == "error" and value.get("code") not in ERROR_CODES:
                self.violations.append(f"an error frame with an undocumented code: {payload[:120]!r}")
            self.texts.append(value)
        elif opcode == 0x8:
            self.close_at = now
            if len(payload) == 1:
                self.violations.append("a server close frame of 1 byte")
            self.close_code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else None
            self.close_reason = payload[2:]
            try:
                self.close_reason.decode("utf-8")
            except UnicodeDecodeError:
                self.violations.append("a close reason that is not UTF-8")
        elif opcode == 0x9:
            self.pings += 1
            if answer_pings and self.close_at is None:
                self.pending += ws_frame(0xA, payload, key=os.urandom(4))

    def pump(self, data=b"", until=None, timeout=5.0, quiet=None, answer_pings=True, reply_close=True,
             half_close=False, eof_wait=CLOSE_WAIT + 2.0, through_close=False):
        """Writes `data` while reading. Returns when `until(self)` holds ("until"), when the server's
        close frame came (then answered unless `reply_close`, and the hang-up awaited, at most
        `eof_wait`): "close"; when the connection ended: "eof" or "reset"; after `quiet` seconds
        without a byte from the server: "quiet"; or after `timeout`: "timeout". With `half_close`
        the write side is shut once `data` is out."""
        self.pending = bytearray(data)
        deadline = time.monotonic() + timeout
        last_input = time.monotonic()
        shut = False
        while True:
            if until is not None and until(self):
                return "until"
            if self.eof_at is not None:
                return "reset" if self.reset else "eof"
            if self.close_at is not None and not through_close:
                return self._after_close(reply_close, eof_wait)
            now = time.monotonic()
            if now >= deadline:
                return "timeout"
            if quiet is not None and not self.pending and now - last_input >= quiet:
                return "quiet"
            if half_close and not self.pending and not shut and not self.write_failed:
                try:
                    self.sock.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                shut = True
            wait = deadline - now
            if quiet is not None and not self.pending:
                wait = min(wait, quiet - (now - last_input))
            writers = [self.sock] if self.pending and not self.write_failed else []
            readable, writable, _ = select.select([self.sock], writers, [], max(wait, 0))
            if readable:
                last_input = time.monotonic()
                self._read(answer_pings)
            if writable and self.pending and not self.write_failed:
                try:
                    sent = self.sock.send(self.pending[:262144])
                    del self.pending[:sent]
                except BlockingIOError:
                    pass
                except OSError:
                    self.write_failed = True
                    self.pending.clear()

    def _read(self, answer_pings):
        try:
            chunk = self.sock.recv(262144)
        except BlockingIOError:
            return
        except ConnectionResetError:
            self.reset = True
            self.eof_at = time.monotonic()
            return
        except OSError:
            self.eof_at = time.monotonic()
            return
        if not chunk:
            self.eof_at = time.monotonic()
            return
        self.buffer += chunk
        for opcode, payload in self._parse():
            self._received(opcode, payload, answer_pings)

    def _after_close(self, reply_close, eof_wait):
        """The server's close frame came: answer it (echoing its code, RFC 6455 §5.5.1) and wait
        for the server to hang up."""
        if reply_close and not self.write_failed:
            answer = ws_frame(0x8, close_payload(self.close_code), key=os.urandom(4))
            self.sock.setblocking(True)
            try:
                self.sock.sendall(answer)
            except OSError:
                pass
            self.sock.setblocking(False)
        end = time.monotonic() + eof_wait
        while self.eof_at is None and time.monotonic() < end:
            readable, _, _ = select.select([self.sock], [], [], max(end - time.monotonic(), 0))
            if readable:
                self._read(False)
        return "close"

    def errors(self):
        return [frame for frame in self.texts if frame.get("type") == "error"]

    def hung_up_after(self):
        """Seconds from the server's close frame to the end of the connection (None if it did not end)."""
        if self.close_at is None or self.eof_at is None:
            return None
        return self.eof_at - self.close_at

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


# --- The server ----------------------------------------------------------------------------------

class Server:
    """`beckon serve` on loopback with a fresh SQLite database, one app (`chat`), rate limits off."""

    def __init__(self, binary, work, name, extra_env=None):
        self.work, self.name = work, name
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = os.path.join(work, f"{name}.log")
        env = dict(os.environ, BECKON_HTTP_PORT=str(self.port), BECKON_DATABASE_PATH=os.path.join(work, f"{name}.sqlite"),
                   BECKON_ADMIN_TOKEN=ADMIN, BECKON_APPS_IDS="chat", BECKON_APPS_CHAT_BUNDLE_ID="com.example.chat",
                   BECKON_APPS_CHAT_TEAM_ID="TEAM123456", BECKON_APPS_CHAT_USER_TOKEN_SECRET=SECRET,
                   BECKON_LIMITS_MESSAGES_PER_SECOND="0", BECKON_LIMITS_REGISTRATIONS_PER_MINUTE="0",
                   BECKON_LIMITS_SYNC_CONNECTS_PER_MINUTE="0", **(extra_env or {}))
        self.process = subprocess.Popen([binary, "serve"], env=env, stdout=open(self.log_path, "wb"),
                                        stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{name}: beckon serve exited at start (code {self.process.returncode}); see {self.log_path}")
            if self.healthy():
                break
            time.sleep(0.05)
        else:
            self.process.kill()
            raise RuntimeError(f"{name}: beckon serve did not answer /health; see {self.log_path}")
        status, key = request(self.base, "POST", "/v1/admin/apps/chat/keys", {}, ADMIN)
        assert status == 201, (status, key)
        self.api_key = key["key"]

    def healthy(self):
        try:
            return request(self.base, "GET", "/health", timeout=5)[0] == 200
        except OSError:
            return False

    def register(self, user, device):
        status, answer = request(self.base, "POST", "/v1/devices", {
            "deviceId": device, "bundleId": "com.example.chat", "environment": "sandbox",
            "tokens": {"remote": os.urandom(32).hex()}}, user_token(SECRET, "chat", user))
        assert status == 201, (status, answer)
        return answer["credential"]

    def post(self, users, payload):
        return request(self.base, "POST", "/v1/messages", {"recipients": {"users": users}, "kind": "message",
                                                           "payload": payload}, self.api_key)

    def memory(self, field="VmRSS"):
        try:
            with open(f"/proc/{self.process.pid}/status") as status:
                for line in status:
                    if line.startswith(field + ":"):
                        return int(line.split()[1])
        except OSError:
            pass
        return None

    def log_problems(self):
        """Lines of the log at error or critical level, and anything that looks like a crash."""
        problems = []
        with open(self.log_path, "rb") as handle:
            for raw in handle:
                line = raw.decode("utf-8", "replace").rstrip()
                words = line.split(" ", 3)
                level = words[1] if len(words) > 1 else ""
                if level in ("error", "critical") or any(mark in line for mark in (
                        "Fatal error", "fatal error", "Segmentation fault", "precondition", "Assertion failed",
                        "Stack dump", "Illegal instruction", "💣")):
                    problems.append(line[:300])
        return problems

    def stop(self, timeout=40):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                return None
        return self.process.returncode


# --- Expected answers ----------------------------------------------------------------------------

class Answer:
    """What came back for one case, in words (the summary counts these)."""

    def __init__(self, conn, outcome, probe_id=None, half_closed=False):
        self.conn, self.outcome = conn, outcome
        errors = conn.errors()
        self.error = errors[-1].get("code") if errors else None
        self.errors = len(errors)
        self.close = conn.close_code if conn.close_at is not None else None
        self.probe = probe_id is not None and any(
            frame.get("type") == "pong" and frame.get("id") == probe_id for frame in conn.texts)
        if conn.close_at is not None:
            code = "none" if conn.close_code is None else conn.close_code
            self.text = f"close {code}" + (f" error={self.error}" if self.error else "")
            if conn.extra_closes:
                self.text += " then close " + ", ".join("none" if c is None else str(c) for c in conn.extra_closes)
            if self.probe and conn.close_code == 1000 and not self.error:
                self.text = "accepted"
        elif conn.reset:
            self.text = "reset"
        elif conn.eof_at is not None:
            self.text = "hung up" if not half_closed else "hung up after our half-close"
        else:
            self.text = "no answer"


class Expect:
    """A matcher of answers, with a description."""

    def __init__(self, description, test):
        self.description, self.test = description, test

    def __call__(self, answer):
        return self.test(answer)


def close(code, errors=None):
    """The server's close frame with `code`; for 4008, after an `error` frame with one of `errors`
    as its code, and it last; otherwise with no `error` frame."""
    if code == 4008:
        errors = set(errors or ERROR_CODES)
        description = f"close 4008 after error {'|'.join(sorted(errors))}"
        return Expect(description, lambda a: a.close == 4008 and a.error in errors and a.errors == 1
                      and a.conn.texts and a.conn.texts[-1].get("type") == "error")
    return Expect(f"close {code}", lambda a: a.close == code and a.errors == 0)


def protocol_error(*codes):
    return close(4008, set(codes))


ACCEPTED = Expect("accepted (the probe ping answered, bye closes with 1000)", lambda a: a.text == "accepted")
ANSWERED = Expect("the close answered with a close frame, then a hang-up",
                  lambda a: a.close is not None or a.conn.close_at is not None)
HUNG_UP = Expect("the server hangs up", lambda a: a.conn.eof_at is not None and a.error is None and a.close in (None,))


def echo(code):
    return Expect(f"close answered with {code}", lambda a: a.conn.close_at is not None and a.close == code)


def any_of(*expects):
    return Expect(" or ".join(e.description for e in expects), lambda a: any(e(a) for e in expects))


class Case:
    """One hostile session: optional `hello` (and a prefix of valid traffic once `welcome` came),
    then the hostile bytes, then, if the session is still open, a probe (`ping`, then `bye`).
    `doc` is the answer docs/sync-protocol.md gives (None: it is silent), `rfc` the one RFC 6455
    asks for where the document is silent."""

    def __init__(self, cls, index, name, frames, doc=None, rfc=None, hello=True, prefix=None, note="",
                 probe=True, half_close=False, stall=0.0, timeout=8.0, device="main", hello_frame=None,
                 quiet=0.05, run=None):
        self.cls, self.index, self.name = cls, index, name
        self.frames, self.doc, self.rfc, self.hello, self.prefix = frames, doc, rfc, hello, prefix
        self.note, self.probe, self.half_close, self.stall, self.timeout = note, probe, half_close, stall, timeout
        self.device, self.hello_frame, self.quiet, self.run = device, hello_frame, quiet, run

    @property
    def id(self):
        return f"{self.cls}:{self.index}"


# --- Input classes -------------------------------------------------------------------------------
# Each takes (rng, index, context) and returns a Case. The subcases of a class come first in
# order (so every one runs in the short run), then at random.

def pick(rng, index, names):
    return names[index] if index < len(names) else rng.choice(names)


def ping_text(rng, pad=0):
    return {"type": "ping", "id": f"p{rng.getrandbits(40):x}", **({"pad": "x" * pad} if pad else {})}


def valid_prefix(rng, context, most=12):
    """Valid traffic after `welcome`: pings (JSON and WebSocket), stale acks, reads of unknown
    ids, unsolicited pongs, fragmented frames with control frames among the fragments."""
    most = min(most * 3, 40) if getattr(context, "long", False) else most  # well under the queued-frame limit
    frames = Frames(rng)
    for _ in range(rng.randint(0, most)):
        kind = rng.randrange(8)
        if kind == 0:
            frames.text(ping_text(rng))
        elif kind == 1:
            frames.text({"type": "ack", "upTo": rng.randint(0, PRELOADED)})
        elif kind == 2:
            frames.text({"type": "read", "ids": [random_uuid(rng) for _ in range(rng.randint(0, 3))]})
        elif kind == 3:
            frames.add(0x9, rng.randbytes(rng.randint(0, 125)))
        elif kind == 4:
            frames.add(0xA, rng.randbytes(rng.randint(0, 20)))
        elif kind == 5:
            fragmented(frames, rng, encode(ping_text(rng)), rng.randint(2, 6), controls=True)
        elif kind == 6:
            frames.text({**ping_text(rng), "extra": random_json(rng, 3)})
        else:
            frames.text({"type": "read", "ids": []})
    return frames


def random_uuid(rng):
    raw = rng.getrandbits(128).to_bytes(16, "big").hex()
    return f"{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:]}"


def random_json(rng, depth):
    kind = rng.randrange(7 if depth > 0 else 5)
    if kind == 0:
        return rng.randint(-2**63, 2**63 - 1)
    if kind == 1:
        return rng.random() * 10 ** rng.randint(-5, 20)
    if kind == 2:
        return "".join(rng.choice("abcé€😀\"\\/\n\t ") for _ in range(rng.randint(0, 12)))
    if kind == 3:
        return rng.choice([True, False, None])
    if kind == 4:
        return []
    if kind == 5:
        return [random_json(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    return {f"k{rng.randrange(100)}": random_json(rng, depth - 1) for _ in range(rng.randint(0, 3))}


def split(rng, data, pieces):
    """`data` cut into `pieces` parts (some possibly empty)."""
    cuts = sorted(rng.randint(0, len(data)) for _ in range(pieces - 1))
    bounds = [0] + cuts + [len(data)]
    return [data[bounds[i]:bounds[i + 1]] for i in range(pieces)]


def fragmented(frames, rng, data, pieces, opcode=0x1, controls=False):
    """A message in `pieces` fragments; with `controls`, pings and pongs among them (RFC 6455 §5.4)."""
    parts = split(rng, data, pieces)
    for number, part in enumerate(parts):
        frames.add(opcode if number == 0 else 0x0, part, fin=number == len(parts) - 1)
        if controls and number < len(parts) - 1 and rng.random() < 0.3:
            frames.add(rng.choice((0x9, 0xA)), rng.randbytes(rng.randint(0, 30)))
    return frames


def padded_ping(rng, size):
    """A ping frame's JSON text of exactly `size` bytes (whitespace inside the object)."""
    base = encode(ping_text(rng))
    assert size >= len(base)
    return base[:-1] + b" " * (size - len(base)) + b"}"


def c_opcode(rng, index, ctx):
    names = ["data 0x3", "data 0x7", "control 0xB", "control 0xF", "reserved data", "reserved control", "before hello"]
    name = pick(rng, index, names)
    opcode = {"data 0x3": 3, "data 0x7": 7, "control 0xB": 0xB, "control 0xF": 0xF}.get(name)
    if opcode is None:
        opcode = rng.choice([3, 4, 5, 6, 7] if name != "reserved control" else [0xB, 0xC, 0xD, 0xE, 0xF])
        if name == "before hello":
            opcode = rng.choice([3, 4, 5, 6, 7, 0xB, 0xC, 0xD, 0xE, 0xF])
    frames = Frames(rng).add(opcode, rng.randbytes(rng.randint(0, 125)), fin=opcode >= 8 or rng.random() < 0.7)
    return Case("opcode", index, name, frames, rfc=close(1002), hello=name != "before hello",
                prefix=valid_prefix(rng, ctx), note="reserved opcodes: the document is silent; RFC 6455 §5.2 fails the connection")


def c_rsv(rng, index, ctx):
    names = ["text ping", "websocket ping", "continuation", "first fragment", "pong"]
    name = pick(rng, index, names)
    rsv = rng.randint(1, 7)
    frames = Frames(rng)
    if name == "text ping":
        frames.text(ping_text(rng), rsv=rsv)
    elif name == "websocket ping":
        frames.add(0x9, rng.randbytes(rng.randint(0, 125)), rsv=rsv)
    elif name == "pong":
        frames.add(0xA, rng.randbytes(rng.randint(0, 125)), rsv=rsv)
    else:
        data = encode(ping_text(rng))
        parts = split(rng, data, 2)
        frames.add(0x1, parts[0], fin=False, rsv=rsv if name == "first fragment" else 0)
        frames.add(0x0, parts[1], rsv=rsv if name == "continuation" else 0)
    return Case("rsv", index, name, frames, rfc=close(1002), prefix=valid_prefix(rng, ctx),
                note="reserved bits without an extension: the document is silent; RFC 6455 §5.2 fails the connection")


def c_unmasked(rng, index, ctx):
    names = ["text ping", "hello", "websocket ping", "fragments", "binary"]
    name = pick(rng, index, names)
    frames = Frames(rng)
    hello = True
    doc = None
    if name == "text ping":
        frames.text(ping_text(rng), masked=False)
    elif name == "hello":
        hello = False
        frames.text({"type": "hello", "version": 2, "cursor": PRELOADED}, masked=False)
    elif name == "websocket ping":
        frames.add(0x9, rng.randbytes(rng.randint(0, 125)), masked=False)
    elif name == "fragments":
        for number, part in enumerate(split(rng, encode(ping_text(rng)), 3)):
            frames.add(0x1 if number == 0 else 0x0, part, fin=number == 2, masked=rng.random() < 0.5)
    else:
        frames.add(0x2, encode(ping_text(rng)), masked=False)
    return Case("unmasked", index, name, frames, doc=doc, rfc=close(1002), hello=hello, prefix=valid_prefix(rng, ctx) if hello else None,
                note="unmasked client frames: the document is silent; RFC 6455 §5.1 has the server close the connection (1002)")


def c_control(rng, index, ctx):
    names = ["ping 126 bytes", "long ping 16-bit", "long pong", "long close", "ping over the limit", "fragmented ping",
             "fragmented pong", "fragmented close", "ping 125 bytes echoed", "unsolicited pong", "ping before hello",
             "controls between fragments"]
    name = pick(rng, index, names)
    limit = ctx.max_frame
    frames = Frames(rng)
    note = "control frames over 125 bytes or fragmented: the document is silent; RFC 6455 §5.5 fails the connection"
    doc, rfc, hello = None, close(1002), True
    if name == "ping 126 bytes":
        frames.add(0x9, rng.randbytes(126))
    elif name == "long ping 16-bit":
        frames.add(0x9, rng.randbytes(rng.randint(127, min(limit, 4000))))
    elif name == "long pong":
        frames.add(0xA, rng.randbytes(rng.randint(126, min(limit, 4000))))
    elif name == "long close":
        frames.add(0x8, close_payload(1000, b"r" * rng.randint(124, 1000)))
    elif name == "ping over the limit":
        size = limit + rng.randint(1, 1000)
        frames.add(0x9, rng.randbytes(size))
        rfc = any_of(close(1002), close(1009))
        note = "a control frame over sync.max-frame-bytes: the document's 1009 is for messages; RFC 6455 makes it a protocol error"
    elif name in ("fragmented ping", "fragmented pong", "fragmented close"):
        opcode = {"fragmented ping": 0x9, "fragmented pong": 0xA, "fragmented close": 0x8}[name]
        frames.add(opcode, rng.randbytes(rng.randint(0, 50)) if opcode != 0x8 else close_payload(1000), fin=False)
    elif name == "ping 125 bytes echoed":
        payload = rng.randbytes(rng.randint(0, 125))
        frames.add(0x9, payload)
        rfc = Expect("accepted, the pong carrying the ping's payload", lambda a, p=payload: a.text == "accepted" and any(
            op == 0xA and data == p for op, data, _ in a.conn.frames))
        note = "WebSocket pings: the document is silent; RFC 6455 §5.5.3 answers with the same payload"
    elif name == "unsolicited pong":
        frames.add(0xA, rng.randbytes(rng.randint(0, 125)))
        rfc = ACCEPTED
        note = "an unsolicited pong is a heartbeat (RFC 6455 §5.5.3): no answer"
    elif name == "ping before hello":
        hello = False
        payload = rng.randbytes(rng.randint(0, 125))
        frames.add(0x9, payload)
        rfc = Expect("accepted, the pong first", lambda a, p=payload: a.text == "accepted" and any(
            op == 0xA and data == p for op, data, _ in a.conn.frames))
        note = "a WebSocket ping before hello: the document's 'ping included' is the JSON ping; RFC 6455 answers it"
    else:
        fragmented(frames, rng, encode(ping_text(rng)), rng.randint(3, 12), controls=True)
        doc, rfc = ACCEPTED, ACCEPTED
        note = "control frames between fragments are allowed (RFC 6455 §5.4)"
    return Case("control", index, name, frames, doc=doc, rfc=rfc, hello=hello,
                prefix=valid_prefix(rng, ctx) if hello else None, note=note)


def c_fragments(rng, index, ctx):
    names = ["continuation first", "continuation after a whole message", "text inside a message", "binary inside a message",
             "valid fragments", "fragmented binary", "exactly the limit in fragments", "one byte over the limit in fragments",
             "far over the limit in fragments", "fragment storm", "empty fragments", "continuation before hello",
             "unfinished message then half-close"]
    name = pick(rng, index, names)
    limit = ctx.max_frame
    frames = Frames(rng)
    hello, doc, rfc, half_close, probe = True, None, None, False, True
    note = "fragmentation: the document is silent; RFC 6455 §5.4 fails the connection on a fragment out of place"
    if name in ("continuation first", "continuation before hello"):
        frames.add(0x0, encode(ping_text(rng)), fin=rng.random() < 0.5)
        rfc, hello = close(1002), name == "continuation first"
    elif name == "continuation after a whole message":
        frames.text(ping_text(rng)).add(0x0, b"{}")
        rfc = close(1002)
    elif name in ("text inside a message", "binary inside a message"):
        parts = split(rng, encode(ping_text(rng)), 2)
        frames.add(0x1, parts[0], fin=False).add(0x1 if name.startswith("text") else 0x2, parts[1])
        rfc = close(1002)
    elif name == "valid fragments":
        fragmented(frames, rng, encode(ping_text(rng, pad=rng.randint(0, 3000))), rng.randint(2, 40), controls=True)
        doc = rfc = ACCEPTED
        note = "a text message is whatever its fragments make"
    elif name == "fragmented binary":
        fragmented(frames, rng, encode(ping_text(rng)), rng.randint(2, 6), opcode=0x2)
        doc = protocol_error("malformed_frame")
        note = "a binary message is a protocol error; the document lists malformed_frame among the codes without pairing"
    elif name == "exactly the limit in fragments":
        fragmented(frames, rng, padded_ping(rng, limit), rng.randint(2, 20))
        doc = ACCEPTED
        note = "sync.max-frame-bytes is the largest message a client may send"
    elif name in ("one byte over the limit in fragments", "far over the limit in fragments"):
        size = limit + 1 if name.startswith("one") else limit + rng.randint(2, 4 * limit)
        pieces = max(2, size // rng.randint(1000, min(limit, 60000)) + 1)
        data = padded_ping(rng, size)
        parts = split(rng, data, pieces)
        # No fragment on its own over the limit.
        parts = [piece for part in parts for piece in (part[i:i + limit] for i in range(0, max(len(part), 1), limit))]
        for number, part in enumerate(parts):
            frames.add(0x1 if number == 0 else 0x0, part, fin=number == len(parts) - 1)
        doc = close(1009)
        note = "a message over sync.max-frame-bytes, assembled from fragments"
    elif name == "fragment storm":
        data = padded_ping(rng, rng.randint(60, 1500 if ctx.long else 400))
        for number, byte in enumerate(data):
            frames.add(0x1 if number == 0 else 0x0, data[number:number + 1], fin=number == len(data) - 1)
        doc = rfc = ACCEPTED
        note = "a message of one-byte fragments"
    elif name == "empty fragments":
        data = encode(ping_text(rng))
        frames.add(0x1, data, fin=False)
        for _ in range(rng.randint(10, 2000 if ctx.long else 300)):
            frames.add(0x0, b"", fin=False)
        frames.add(0x0, b"", fin=True)
        doc = rfc = ACCEPTED
        note = "a message ended by many empty continuation frames"
    else:
        frames.add(0x1, encode(ping_text(rng))[:5], fin=False)
        half_close, probe = True, False
        doc = HUNG_UP
        note = "the device's connection ends: the server hangs up (recorded as dropped)"
    return Case("fragments", index, name, frames, doc=doc, rfc=rfc, hello=hello, note=note, half_close=half_close,
                probe=probe, prefix=valid_prefix(rng, ctx) if hello else None)


INVALID_UTF8 = [b"\xff", b"\xfe", b"\xc0\x80", b"\xc1\xbf", b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xf4\x90\x80\x80",
                b"\xe2\x82", b"\x80", b"\xf8\x88\x80\x80\x80", b"\xf0\x9f\x98", b"\xce"]


def c_utf8(rng, index, ctx):
    names = ["in an ignored field", "in the ping id", "outside strings", "in the type", "valid character split over fragments",
             "invalid across fragments", "at the end", "in a close reason"]
    name = pick(rng, index, names)
    bad = rng.choice(INVALID_UTF8)
    frames = Frames(rng)
    rfc = close(1007)
    doc = None
    note = "invalid UTF-8 in a text message: the document is silent; RFC 6455 §8.1 fails the connection with 1007"
    if name == "in an ignored field":
        frames.text(b'{"type":"ping","id":"u","x":"a' + bad + b'b"}')
    elif name == "in the ping id":
        frames.text(b'{"type":"ping","id":"' + bad + b'"}')
    elif name == "outside strings":
        frames.text(b'{"type":"ping",' + bad + b'}')
    elif name == "in the type":
        frames.text(b'{"type":"pi' + bad + b'ng"}')
    elif name == "valid character split over fragments":
        text = b'{"type":"ping","id":"' + "é€😀".encode() + b'"}'
        cut = text.index(b"\xe2") + 1
        frames.add(0x1, text[:cut], fin=False).add(0x0, text[cut:])
        rfc = doc = ACCEPTED
        note = "UTF-8 is checked on the message, not on each fragment"
    elif name == "invalid across fragments":
        text = b'{"type":"ping","id":"' + bad + b'"}'
        cut = text.index(bad) + 1
        frames.add(0x1, text[:cut], fin=False).add(0x0, text[cut:])
    elif name == "at the end":
        frames.text(encode(ping_text(rng)) + bad)
    else:
        frames.add(0x8, close_payload(1000, b"bye" + bad))
        note = "a close reason that is not UTF-8: the document is silent; RFC 6455 §8.1 fails the connection with 1007"
    return Case("utf8", index, name, frames, doc=doc, rfc=rfc, prefix=valid_prefix(rng, ctx), note=note)


def c_binary(rng, index, ctx):
    names = ["a JSON frame", "random bytes", "empty", "at the limit", "before hello", "after traffic"]
    name = pick(rng, index, names)
    frames = Frames(rng)
    hello = name != "before hello"
    payload = {"a JSON frame": encode(ping_text(rng)), "random bytes": rng.randbytes(rng.randint(1, 3000)), "empty": b"",
               "at the limit": rng.randbytes(ctx.max_frame)}.get(name, encode({"type": "hello", "version": 2, "cursor": 0}))
    frames.add(0x2, payload)
    doc = protocol_error("malformed_frame") if hello else protocol_error("malformed_frame", "unexpected_frame")
    return Case("binary", index, name, frames, doc=doc, hello=hello,
                prefix=valid_prefix(rng, ctx, 40 if name == "after traffic" else 12) if hello else None,
                note="a binary message is a protocol error (4008 after error); before hello it is also a frame before hello")


def c_oversize(rng, index, ctx):
    limit = ctx.max_frame
    names = ["one byte over", "over, 64-bit length", "header only", "2^32", "2^63 (top bit set)", "2^64 - 1",
             "binary over", "continuation over", "exactly the limit", "non-minimal 16-bit length", "non-minimal 64-bit length",
             "over before hello"]
    name = pick(rng, index, names)
    frames = Frames(rng)
    doc, rfc, hello = close(1009), None, name != "over before hello"
    note = "a message over sync.max-frame-bytes: close 1009"
    if name in ("one byte over", "over before hello"):
        frames.text(padded_ping(rng, limit + 1))
    elif name == "over, 64-bit length":
        frames.text(padded_ping(rng, limit + rng.randint(2, limit)), form=64)
    elif name == "header only":
        frames.add(0x1, b"", length=limit + rng.randint(1, 10 * limit))
    elif name in ("2^32", "2^63 (top bit set)", "2^64 - 1"):
        claimed = {"2^32": 2**32, "2^63 (top bit set)": 2**63, "2^64 - 1": 2**64 - 1}[name]
        frames.add(rng.choice((0x1, 0x2, 0x0)), rng.randbytes(rng.randint(0, 100)), length=claimed, form=64)
        note = "a length far over sync.max-frame-bytes (RFC 6455 also forbids the 64-bit length's top bit)"
    elif name == "binary over":
        frames.add(0x2, rng.randbytes(limit + rng.randint(1, 100)))
        note = "a binary message over the limit: the size is known first"
    elif name == "continuation over":
        frames.add(0x1, b'{"type":', fin=False).add(0x0, rng.randbytes(limit + 1))
    elif name == "exactly the limit":
        frames.text(padded_ping(rng, limit))
        doc = ACCEPTED
        note = "sync.max-frame-bytes is the largest message a client may send"
    else:
        form = 16 if "16" in name else 64
        frames.text(ping_text(rng), form=form)
        doc, rfc = None, ACCEPTED
        note = "a length not in its shortest form: RFC 6455 binds the sender; the document is silent"
    return Case("oversize", index, name, frames, doc=doc, rfc=rfc, hello=hello, note=note,
                prefix=valid_prefix(rng, ctx) if hello else None)


def c_length(rng, index, ctx):
    names = ["claims more, then half-close", "half a header", "no mask key", "16-bit length cut", "64-bit length cut",
             "claims more, a pause, then half-close", "claims more, after hello and traffic"]
    name = pick(rng, index, names)
    frames = Frames(rng)
    data = encode(ping_text(rng))
    stall = 0.3 if "pause" in name else 0.0
    if name.startswith("claims more"):
        frames.add(0x1, data, length=len(data) + rng.randint(1, 5000))
    elif name == "half a header":
        frames.raw(ws_frame(0x1, data)[:1], 1)
    elif name == "no mask key":
        frames.raw(ws_frame(0x1, data, key=b"abcd")[:2 + rng.randint(0, 3)], 1)
    elif name == "16-bit length cut":
        frames.raw(ws_frame(0x1, data, form=16)[:2 + rng.randint(0, 1)], 1)
    else:
        frames.raw(ws_frame(0x1, data, form=64)[:2 + rng.randint(0, 7)], 1)
    return Case("length", index, name, frames, doc=HUNG_UP, hello=name != "half a header" or rng.random() < 0.5,
                prefix=valid_prefix(rng, ctx) if "traffic" in name else None, probe=False, half_close=True, stall=stall,
                note="a frame cut short, then the connection ends: the server hangs up (the session is dropped)")


MALFORMED_JSON = [b"", b" ", b"{", b"}", b"{\"type\":\"ping\",}", b"{'type':'ping'}", b"{\"type\":\"ping\"} x",
                  b"{\"type\":\"ping\"}{}", b"{\"type\":\"ping\" /*c*/}", b"{\"type\":NaN}", b"{\"type\":\"ping\",\"id\":01}",
                  b"{\"type\":\"ping\",\"id\":\"a\x01b\"}", b"{\"type\":\"ping\",\"id\":1.}", b"{\"type\":\"ping\",\"id\":-}",
                  b"{\"type\":\"ping\",\"id\":\"\\x41\"}", b"{\"type\" \"ping\"}", b"{\"type\":\"ping\"", b"{type:\"ping\"}",
                  b"{\"type\":\"ping\",\"id\":tru}", b"{\"type\":\"ping\",\"id\":[1,2}", b"\x00", b"{\"type\":\"ping\",\"id\":Infinity}",
                  b"{\"type\":\"ping\",\"id\":\"\\u12\"}", b"{\"type\":\"ping\",\"id\":+1}", b"{\"type\":\"ping\",\"id\":.5}"]
NOT_OBJECTS = [b"[]", b"null", b"42", b"\"ping\"", b"true", b"[{\"type\":\"ping\"}]", b"-0", b"1e5"]


def c_json(rng, index, ctx):
    names = ["malformed", "truncated", "not an object", "type missing", "type not a string", "unknown type",
             "hello without version", "hello without cursor", "ack without upTo", "read without ids", "mistyped version",
             "mistyped cursor", "mistyped window", "mistyped role", "mistyped upTo", "mistyped ids", "ids not strings",
             "null upTo", "huge exponent", "integer over 64 bits", "fractional upTo", "deep nesting", "very deep nesting",
             "nesting under the depth limit", "unknown fields", "null ping id", "big ping id", "too many read ids",
             "long read id", "duplicate keys", "lone surrogate escape", "byte order mark", "window over the maximum",
             "huge version", "negative cursor", "zero window", "empty read", "id of any JSON"]
    name = pick(rng, index, names)
    frames = Frames(rng)
    hello = True
    doc, rfc, note = None, None, ""
    mistyped = [rng.choice(["2", "x", ""]), True, False, [], {}, [2], {"v": 2}, 2.5]
    if name == "malformed":
        frames.text(rng.choice(MALFORMED_JSON))
        doc = protocol_error("malformed_frame")
        note = "a message that is not a JSON object"
    elif name == "truncated":
        text = encode({**ping_text(rng), "extra": random_json(rng, 3)})
        frames.text(text[:rng.randint(0, len(text) - 1)])
        doc = protocol_error("malformed_frame")
    elif name == "not an object":
        frames.text(rng.choice(NOT_OBJECTS))
        doc = protocol_error("malformed_frame")
    elif name == "type missing":
        frames.text(rng.choice([{}, {"upTo": 1}, {"Type": "ping"}, {"id": 1}]))
        doc = protocol_error("malformed_frame", "invalid_field")
        note = "a frame without `type`: malformed_frame or invalid_field (the document pairs neither)"
    elif name == "type not a string":
        frames.text({"type": rng.choice([1, True, None, ["ping"], {"ping": 1}, 2.5])})
        doc = protocol_error("malformed_frame", "invalid_field")
        note = "a `type` that is not a string: malformed_frame or invalid_field (the document pairs neither)"
    elif name == "unknown type":
        frames.text({"type": rng.choice(["Ping", "PING", " ping", "ping ", "pong", "welcome", "error", "helo", "",
                                         "hello\u0000", "x" * rng.randint(1, 5000), "message", "ACK"])})
        doc = protocol_error("unknown_type")
    elif name in ("hello without version", "hello without cursor"):
        hello = False
        frame = {"type": "hello", "version": 2, "cursor": 0}
        del frame["version" if "version" in name else "cursor"]
        frames.text(frame)
        doc = protocol_error("invalid_field")
    elif name == "ack without upTo":
        frames.text({"type": "ack", "up_to": 1})
        doc = protocol_error("invalid_field")
    elif name == "read without ids":
        frames.text({"type": "read", "id": [random_uuid(rng)]})
        doc = protocol_error("invalid_field")
    elif name.startswith("mistyped") and name != "mistyped upTo" and name != "mistyped ids":
        hello = False
        field = name.split()[1]
        frame = {"type": "hello", "version": 2, "cursor": 0}
        frame[field] = rng.choice(mistyped if field != "role" else mistyped[1:] + ["admin", "APP", "", "extension "])
        frames.text(frame)
        doc = protocol_error("invalid_field")
    elif name == "mistyped upTo":
        frames.text({"type": "ack", "upTo": rng.choice(mistyped)})
        doc = protocol_error("invalid_field")
    elif name == "mistyped ids":
        frames.text({"type": "read", "ids": rng.choice(["abc", 1, True, {"id": "x"}])})
        doc = protocol_error("invalid_field")
    elif name == "ids not strings":
        frames.text({"type": "read", "ids": [random_uuid(rng), rng.choice([1, None, [], {}, True])]})
        doc = protocol_error("invalid_field")
    elif name == "null upTo":
        frames.text({"type": "ack", "upTo": None})
        doc = protocol_error("invalid_field")
        note = "null for a required field: missing or mistyped, invalid_field either way"
    elif name == "huge exponent":
        frames.text(b'{"type":"ack","upTo":1e' + str(rng.randint(309, 100000)).encode() + b"}")
        doc = protocol_error("malformed_frame", "invalid_field")
        note = "a number out of range: the document does not say whether it is malformed JSON or a mistyped field"
    elif name == "integer over 64 bits":
        frames.text(b'{"type":"ack","upTo":' + str(rng.randint(2**63, 2**200)).encode() + b"}")
        doc = protocol_error("invalid_field", "malformed_frame")
        note = "an integer beyond 64 bits: a mistyped field or malformed JSON (the document does not give integers a width)"
    elif name == "fractional upTo":
        frames.text(b'{"type":"ack","upTo":' + rng.choice([b"1.5", b"0.1", b"-2.25"]) + b"}")
        doc = protocol_error("invalid_field")
    elif name in ("deep nesting", "very deep nesting"):
        depth = rng.randint(65, 1000) if name == "deep nesting" else rng.randint(20000, ctx.max_frame // 2 - 40)
        frames.text(b'{"type":"ping","id":' + b"[" * depth + b"]" * depth + b"}")
        note = "nesting depth: the document is silent (the server refuses more than 64 levels as malformed_frame)"
    elif name == "nesting under the depth limit":
        depth = rng.randint(1, 50)
        frames.text(b'{"type":"ping","id":"n","x":' + b"[" * depth + b"]" * depth + b"}")
        doc = ACCEPTED
        note = "unknown fields are ignored"
    elif name == "unknown fields":
        frame = rng.choice([ping_text(rng), {"type": "ack", "upTo": rng.randint(0, PRELOADED)}, {"type": "read", "ids": []}])
        frames.text({**{f"x{n}": random_json(rng, 4) for n in range(rng.randint(1, 8))}, **frame})
        doc = ACCEPTED
        note = "unknown fields are ignored"
    elif name == "null ping id":
        frames.text({"type": "ping", "id": None})
        note = "a null ping id: the document does not say whether the pong carries null or no id"
    elif name == "big ping id":
        size = rng.randint(1000, ctx.max_frame - 40)
        frames.text({"type": "ping", "id": "b" * size})
        doc = Expect("accepted, the pong echoing the id", lambda a, s=size: a.text == "accepted" and any(
            f.get("type") == "pong" and f.get("id") == "b" * s for f in a.conn.texts))
        note = "the server answers pong with the same id"
    elif name == "too many read ids":
        frames.text({"type": "read", "ids": [random_uuid(rng) for _ in range(MAX_READ_IDS + rng.randint(1, 300))]})
        note = "more than 1000 ids in read: the document states the limit, not the answer (the server: invalid_field)"
    elif name == "long read id":
        frames.text({"type": "read", "ids": ["i" * rng.randint(129, 5000)]})
        note = "a read id longer than any message id: the document is silent"
    elif name == "duplicate keys":
        frames.text(b'{"type":"bye","type":"ping","id":"dup"}')
        note = "repeated member names: the document is silent (RFC 8259 §4 leaves it open)"
    elif name == "lone surrogate escape":
        frames.text(b'{"type":"ping","id":"\\ud800"}')
        note = "a lone surrogate escape: the document is silent"
    elif name == "byte order mark":
        frames.text(b"\xef\xbb\xbf" + encode(ping_text(rng)))
        note = "a leading byte order mark: the document is silent (RFC 8259 §8.1 lets a parser ignore it)"
    elif name == "window over the maximum":
        hello = False
        window = rng.choice([ctx.max_window + 1, 10**6, 2**63 - 1])
        frames.text({"type": "hello", "version": 2, "cursor": PRELOADED, "window": window})
        doc = Expect(f"welcome.window capped at {ctx.max_window}", lambda a: a.text == "accepted" and any(
            f.get("type") == "welcome" and f.get("window") == ctx.max_window for f in a.conn.texts))
        note = "a bigger hello.window is capped; welcome.window tells"
    elif name == "huge version":
        hello = False
        frames.text({"type": "hello", "version": rng.choice([2**63 - 1, -(2**63), 0, 1, 3]), "cursor": 0})
        doc = protocol_error("unsupported_version")
    elif name == "negative cursor":
        hello = False
        frames.text({"type": "hello", "version": 2, "cursor": rng.choice([-1, -(2**63)])})
        note = "a negative cursor: the document is silent (the server: invalid_field)"
    elif name == "zero window":
        hello = False
        frames.text({"type": "hello", "version": 2, "cursor": 0, "window": rng.choice([0, -1, -(2**63)])})
        note = "a window below 1: the document is silent (the server: invalid_field)"
    elif name == "empty read":
        frames.text({"type": "read", "ids": []})
        doc = ACCEPTED
    else:
        value = random_json(rng, 5)
        frames.text({"type": "ping", "id": value})
        doc = Expect("accepted, the pong echoing the id", lambda a, v=value: a.text == "accepted" and any(
            f.get("type") == "pong" and same_json(f.get("id"), v) for f in a.conn.texts))
        note = "the server answers pong with the same id"
    return Case("json", index, name, frames, doc=doc, rfc=rfc, hello=hello, note=note,
                prefix=valid_prefix(rng, ctx) if hello else None)


def same_json(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and abs(a - b) <= 1e-9 * max(1, abs(a), abs(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    return a == b and type(a) is type(b)


def c_order(rng, index, ctx):
    names = ["ack before hello", "read before hello", "ping before hello", "bye before hello", "second hello",
             "second hello, other version", "ack beyond sent", "ack of a message not sent yet", "ack far in the future",
             "stale ack", "negative ack", "ack of the last sent", "cursor ahead", "cursor at the maximum",
             "frames after bye", "binary after bye", "websocket ping after bye", "read of unknown ids",
             "frames right after hello", "hello then garbage before welcome is read"]
    name = pick(rng, index, names)
    frames = Frames(rng)
    hello, doc, rfc, note, hello_frame, probe = True, None, None, "", None, True
    if name.endswith("before hello") and name != "hello then garbage before welcome is read":
        hello = False
        frame = {"ack before hello": {"type": "ack", "upTo": rng.randint(0, PRELOADED)},
                 "read before hello": {"type": "read", "ids": [random_uuid(rng)]},
                 "ping before hello": ping_text(rng), "bye before hello": {"type": "bye"}}[name]
        frames.text(frame)
        doc = protocol_error("unexpected_frame")
        note = "every frame before welcome must be hello, ping included"
    elif name.startswith("second hello"):
        version = 2 if name == "second hello" else rng.choice([1, 3])
        frames.text({"type": "hello", "version": version, "cursor": rng.randint(0, PRELOADED),
                     "role": rng.choice(["app", "extension"])})
        doc = protocol_error("unexpected_frame") if version == 2 else protocol_error("unexpected_frame", "unsupported_version")
    elif name == "ack beyond sent":
        frames.text({"type": "ack", "upTo": PRELOADED + rng.randint(1, 100)})
        doc = protocol_error("ack_beyond_sent")
    elif name == "ack of a message not sent yet":
        window = rng.randint(1, PRELOADED - 1)
        hello_frame = {"type": "hello", "version": 2, "cursor": 0, "window": window}
        frames.text({"type": "ack", "upTo": rng.randint(window + 1, PRELOADED)})
        doc = protocol_error("ack_beyond_sent")
        note = "the mailbox holds it, but the window kept it back: acks above what was sent are a protocol error"
    elif name == "ack far in the future":
        frames.text({"type": "ack", "upTo": rng.choice([2**63 - 1, 2**40, 10**15])})
        doc = protocol_error("ack_beyond_sent")
    elif name == "stale ack":
        frames.text({"type": "ack", "upTo": rng.randint(0, PRELOADED)})
        doc = ACCEPTED
        note = "an ack never moves the cursor backwards"
    elif name == "negative ack":
        frames.text({"type": "ack", "upTo": rng.choice([-1, -(2**63), -5])})
        note = "a negative ack: the document is silent (the server ignores it, as any ack below the cursor)"
    elif name == "ack of the last sent":
        window = rng.randint(1, PRELOADED)
        hello_frame = {"type": "hello", "version": 2, "cursor": 0, "window": window}
        frames.text({"type": "ack", "upTo": window})
        doc = ACCEPTED
    elif name in ("cursor ahead", "cursor at the maximum"):
        hello = False
        cursor = PRELOADED + rng.randint(1, 1000) if name == "cursor ahead" else 2**63 - 1
        frames.text({"type": "hello", "version": 2, "cursor": cursor})
        doc = protocol_error("cursor_ahead")
    elif name in ("frames after bye", "binary after bye", "websocket ping after bye"):
        frames.text({"type": "bye"})
        for _ in range(rng.randint(1, 20)):
            if name == "frames after bye":
                frames.text(rng.choice([{"type": "hello", "version": 2, "cursor": 0}, {"type": "zzz"}, b"not json",
                                        {"type": "ack", "upTo": 10**9}, ping_text(rng)]))
            elif name == "binary after bye":
                frames.add(0x2, rng.randbytes(rng.randint(0, 100)))
            else:
                frames.add(0x9, rng.randbytes(rng.randint(0, 125)))
        doc = close(1000)
        probe = False
        note = "after bye the server closes with 1000; what follows is not read"
    elif name == "read of unknown ids":
        frames.text({"type": "read", "ids": [random_uuid(rng) for _ in range(rng.randint(1, MAX_READ_IDS))]})
        note = "read of ids that are no message of the user: the document is silent (the server ignores them)"
    elif name == "frames right after hello":
        hello = False
        frames.text({"type": "hello", "version": 2, "cursor": PRELOADED}).extend(valid_prefix(rng, ctx, 20))
        note = ("frames sent after hello before welcome arrived: 'every frame before welcome must be hello' "
                "could forbid them; the server reads them after hello")
    else:
        hello = False
        frames.text({"type": "hello", "version": 2, "cursor": PRELOADED}).text({"type": rng.choice(["zzz", "welcome"])})
        doc = protocol_error("unknown_type")
    return Case("order", index, name, frames, doc=doc, rfc=rfc, hello=hello, note=note, hello_frame=hello_frame,
                probe=probe, prefix=valid_prefix(rng, ctx) if hello and not hello_frame else None)


def c_flood(rng, index, ctx):
    names = ["reads of unknown ids", "big reads", "big reads under the limit", "stale acks", "json pings", "empty reads",
             "before hello", "websocket pings", "mixed"]
    name = pick(rng, index, names)
    count = rng.randint(2000, 10000 if ctx.long else 5000)
    frames = Frames(rng)
    hello = name != "before hello"
    if name == "big reads":
        # Far past the limit: with a few hundred over it, a fast server could keep its queue under
        # the limit (a CI run on 2026-11-25 processed 231 as they came).
        count = rng.randint(QUEUED_FRAMES * 6, QUEUED_FRAMES * 10)
    elif name == "big reads under the limit":
        count = QUEUED_FRAMES - 8
    one = {"reads of unknown ids": lambda: {"type": "read", "ids": [random_uuid(rng) for _ in range(rng.randint(1, 5))]},
           "big reads": lambda: {"type": "read", "ids": [random_uuid(rng) for _ in range(rng.randint(200, 400))]},
           "big reads under the limit": lambda: {"type": "read", "ids": [random_uuid(rng) for _ in range(rng.randint(200, 400))]},
           "stale acks": lambda: {"type": "ack", "upTo": rng.randint(0, PRELOADED)},
           "json pings": lambda: ping_text(rng), "empty reads": lambda: {"type": "read", "ids": []},
           "before hello": lambda: rng.choice([ping_text(rng), {"type": "ack", "upTo": 0}])}.get(name)
    if name == "websocket pings":
        for _ in range(count):
            frames.add(0x9, rng.randbytes(rng.randint(0, 16)))
    elif name == "mixed":
        for _ in range(count):
            kind = rng.randrange(4)
            if kind == 0:
                frames.add(0x9, b"")
            elif kind == 1:
                frames.text({"type": "ack", "upTo": 0})
            elif kind == 2:
                frames.text({"type": "read", "ids": [random_uuid(rng)]})
            else:
                frames.text(ping_text(rng))
    else:
        # The same few frames over and over (with their masks): building each one would cost more
        # time than the server takes to read it.
        samples = [ws_frame(0x1, encode(one()), key=rng.randbytes(4)) for _ in range(min(count, 64))]
        frames.raw(b"".join(samples[n % len(samples)] for n in range(count)), count)
    if name == "before hello":
        doc = protocol_error("unexpected_frame")
        note = "a flood before hello: its first frame is already a protocol error"
    elif name == "websocket pings":
        doc, note = None, "WebSocket pings are answered as they come; not frames queued for the session"
    elif name == "big reads":
        doc = close(4029)
        note = (f"{count} reads of hundreds of ids each, sent at once: far more than {QUEUED_FRAMES} wait to be "
                "processed (each is a write to the store), close 4029")
    elif name == "big reads under the limit":
        doc = ACCEPTED
        note = f"{count} frames, the probe's 2 included fewer than {QUEUED_FRAMES}: never 4029"
    else:
        doc = any_of(close(4029), ACCEPTED)
        note = f"close 4029 if more than {QUEUED_FRAMES} frames wait, else all answered (the server may keep up)"
    rfc = ACCEPTED if name == "websocket pings" else None
    return Case("flood", index, name, frames, doc=doc, rfc=rfc, hello=hello, note=note, timeout=60.0)


def c_close(rng, index, ctx):
    names = ["valid code", "valid code with reason", "empty close", "one byte", "invalid code", "reserved 1005",
             "reserved 1006", "reserved 1015", "code 0", "code 5000", "before hello", "no answer to the server's close",
             "no answer after a protocol error", "no answer after an oversized frame", "two violations at once",
             "a violation after the server's close"]
    name = pick(rng, index, names)
    frames = Frames(rng)
    hello, doc, rfc, note = name != "before hello", ANSWERED, None, "the server answers the close frame and hangs up"
    probe, reply, timeout = False, True, 8.0
    if name in ("valid code", "valid code with reason", "before hello"):
        code = rng.choice([1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999])
        reason = "".join(rng.choice("abc é€") for _ in range(rng.randint(0, 40))).encode()[:123] if "reason" in name else b""
        frames.add(0x8, close_payload(code, reason))
        rfc = echo(code)
        note += "; RFC 6455 §5.5.1 echoes the code"
    elif name == "empty close":
        frames.add(0x8, b"")
        rfc = any_of(echo(None), echo(1000))
    elif name == "one byte":
        frames.add(0x8, bytes([rng.randrange(256)]))
        rfc = close(1002)
        note += "; a 1-byte close body is a protocol error in RFC 6455 §5.5.1"
    elif name in ("invalid code", "reserved 1005", "reserved 1006", "reserved 1015", "code 0", "code 5000"):
        code = {"reserved 1005": 1005, "reserved 1006": 1006, "reserved 1015": 1015, "code 0": 0, "code 5000": 5000}.get(
            name, rng.choice([999, 1004, 1016, 1100, 2000, 2999, 65535]))
        frames.add(0x8, close_payload(code))
        rfc = close(1002)
        note += "; RFC 6455 §7.4 defines no such code (1005, 1006, 1015 must never be sent), so 1002"
    elif name == "no answer to the server's close":
        frames.text({"type": "bye"})
        doc = Expect(f"close 1000, the hang-up within {CLOSE_WAIT:g} s (+1 s)", lambda a: a.close == 1000 and a.conn.hung_up_after() is not None
                     and a.conn.hung_up_after() <= CLOSE_WAIT + 1.0)
        reply = False
        note = "the server waits at most 2 s for the client's answer to its close frame"
    elif name == "no answer after an oversized frame":
        frames.add(0x1, b"", length=ctx.max_frame + rng.randint(1, 1000))
        doc = Expect(f"close 1009, the hang-up within {CLOSE_WAIT:g} s (+1 s)", lambda a: a.close == 1009 and
                     a.conn.hung_up_after() is not None and a.conn.hung_up_after() <= CLOSE_WAIT + 1.0)
        reply = False
        note = ("the server waits at most 2 s for the client's answer to its close frame (after a frame over the "
                "limit it does not wait at all)")
    elif name == "two violations at once":
        frames.add(rng.choice([3, 4, 0xB]), b"x")
        frames.add(rng.choice([0x9, 0xA]), rng.randbytes(rng.randint(126, 1000)))
        doc, rfc = None, close(1002)
        note = "one close frame, whatever follows the first violation (RFC 6455 §5.5.1)"
    elif name == "a violation after the server's close":
        frames.add(rng.choice([3, 4, 0xB, 0x2]), b"x")
        after = Frames(rng).add(rng.choice([0x9, 0xA]), rng.randbytes(rng.randint(126, 1000)))
        case = Case("close", index, name, frames, rfc=ANSWERED, note="one close frame, whatever the client sends before "
                    "it answers the server's (RFC 6455 §5.5.1)", run=run_after_close_case)
        case.after = after
        return case
    else:
        frames.add(rng.choice([3, 4, 0xB]), b"x")
        doc = Expect(f"a close frame, the hang-up within {CLOSE_WAIT:g} s (+1 s)", lambda a: a.conn.close_at is not None and
                     a.conn.hung_up_after() is not None and a.conn.hung_up_after() <= CLOSE_WAIT + 1.0)
        rfc = close(1002)
        reply = False
        note = "the server waits at most 2 s for the client's answer to its close frame"
    case = Case("close", index, name, frames, doc=doc, rfc=rfc, hello=hello, note=note, probe=probe, timeout=timeout,
                prefix=valid_prefix(rng, ctx) if hello else None)
    case.reply_close = reply
    return case


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


def c_noise(rng, index, ctx):
    """Random frame sequences: every field of a frame chosen at random, lengths that lie, random
    bytes between frames. No single answer is documented for these; the invariants hold."""
    frames = Frames(rng)
    limit = ctx.max_frame
    for _ in range(rng.randint(1, 60 if ctx.long else 24)):
        roll = rng.random()
        if roll < 0.08:
            frames.raw(rng.randbytes(rng.randint(1, 40)), 1)
            continue
        opcode = rng.choice([0x0, 0x1, 0x1, 0x1, 0x2, 0x8, 0x9, 0x9, 0xA, rng.randrange(16)])
        kind = rng.randrange(7)
        if kind == 0:
            payload = encode(ping_text(rng))
        elif kind == 1:
            payload = encode({"type": rng.choice(CLIENT_TYPES + ("zzz",)), rng.choice(["upTo", "ids", "id", "cursor"]):
                              random_json(rng, 2)})
        elif kind == 2:
            payload = rng.randbytes(rng.randint(0, 200))
        elif kind == 3:
            payload = b""
        elif kind == 4:
            payload = encode(random_json(rng, 4))
        elif kind == 5:
            payload = rng.randbytes(rng.choice([125, 126, 127, limit - 1, limit, limit + 1]))
        else:
            payload = close_payload(rng.choice([1000, 1005, 0, 4000]), b"r")
        length = None
        if rng.random() < 0.05:
            length = max(0, len(payload) + rng.randint(-10, 10))
        frames.add(opcode, payload, fin=rng.random() < 0.8, rsv=rng.choice([0] * 12 + [1, 2, 4, 7]),
                   masked=rng.random() < 0.95, length=length, form=rng.choice([None] * 10 + [16, 64]))
    return Case("noise", index, "random frames", frames, doc=None, rfc=None, prefix=valid_prefix(rng, ctx),
                half_close=True, note="random frames: the invariants only")


CLASSES = collections.OrderedDict([
    ("opcode", (c_opcode, 2)), ("rsv", (c_rsv, 2)), ("unmasked", (c_unmasked, 2)), ("control", (c_control, 3)),
    ("fragments", (c_fragments, 4)), ("utf8", (c_utf8, 2)), ("binary", (c_binary, 2)), ("oversize", (c_oversize, 3)),
    ("length", (c_length, 1)), ("json", (c_json, 6)), ("order", (c_order, 5)), ("flood", (c_flood, 1)),
    ("close", (c_close, 2)), ("sessions", (c_sessions, 1)), ("upgrade", (c_upgrade, 1)), ("noise", (c_noise, 8)),
])


def count_subcases(max_frame=65536, max_window=100):
    """How many named subcases each class has: its first indexes name them all in order."""
    ctx = type("Context", (), {"max_frame": max_frame, "max_window": max_window, "long": False})()
    counts = {}
    for cls, (make, _) in CLASSES.items():
        seen = []
        for index in range(100):
            name = make(random.Random(index), index, ctx).name
            if name in seen:
                break
            seen.append(name)
        counts[cls] = (len(seen), seen)
    return counts


# --- Running a case ------------------------------------------------------------------------------

class Context:
    def __init__(self, server, args, worker, credentials):
        self.server, self.port = server, server.port
        self.max_frame, self.max_window, self.long = args.max_frame_bytes, args.max_window, args.frames >= 200000
        self.worker, self.credentials = worker, credentials
        self.probes = 0


def probe_frames(ctx, case, hello_done):
    ctx.probes += 1
    probe_id = f"probe-{ctx.worker}-{ctx.probes}"
    frames = Frames(random.Random(probe_id))
    if not hello_done:
        frames.text({"type": "hello", "version": 2, "cursor": PRELOADED})
    frames.text({"type": "ping", "id": probe_id}).text({"type": "bye"})
    return probe_id, frames


def run_case(ctx, case):
    """Runs one case on a fresh connection; returns (Answer, frames sent)."""
    if case.run:
        return case.run(ctx, case)
    conn = Conn(ctx.port, ctx.credentials[case.device])
    sent = 0
    try:
        if conn.status != 101:
            raise RuntimeError(f"the upgrade was refused: {conn.status}")
        hello_done = False
        if case.hello:
            hello = case.hello_frame or {"type": "hello", "version": 2, "cursor": PRELOADED}
            first = Frames(random.Random(case.id)).text(hello)
            sent += first.count
            outcome = conn.pump(first.bytes(), until=lambda c: any(f.get("type") == "welcome" for f in c.texts), timeout=10)
            if outcome != "until":
                return Answer(conn, "no welcome"), sent
            hello_done = True
            if case.hello_frame and case.hello_frame.get("cursor") == 0:
                # Let the window's messages come before the case's frames (they are sent after welcome).
                window = min(case.hello_frame.get("window", 100), PRELOADED)
                conn.pump(b"", until=lambda c: sum(f.get("type") == "message" for f in c.texts) >= window, timeout=10)
        data = (case.prefix.bytes() if case.prefix else b"") + case.frames.bytes()
        sent += (case.prefix.count if case.prefix else 0) + case.frames.count
        if case.stall:
            conn.pump(data, quiet=case.stall, timeout=case.stall + 5)
            data = b""
            if conn.close_at is not None or conn.eof_at is not None:
                return Answer(conn, "ended during the pause"), sent
        reply = getattr(case, "reply_close", True)
        if case.half_close and not case.probe:
            outcome = conn.pump(data, half_close=True, timeout=case.timeout, reply_close=reply)
            return Answer(conn, outcome, half_closed=True), sent
        probe_id = None
        if case.probe and case.doc is not None and case.doc.description.startswith(("accepted", "welcome")):
            # Documented to be accepted: the probe follows at once.
            probe_id, probe = probe_frames(ctx, case, hello_done or _said_hello(case))
            sent += probe.count
            return Answer(conn, conn.pump(data + probe.bytes(), timeout=case.timeout, reply_close=reply), probe_id), sent
        # Otherwise the probe goes only if the server said nothing for a moment (a close would
        # have come at once).
        outcome = conn.pump(data, quiet=case.quiet if case.probe else None, timeout=case.timeout, reply_close=reply)
        if outcome == "quiet" and not conn.write_failed:
            probe_id, probe = probe_frames(ctx, case, hello_done or _said_hello(case))
            sent += probe.count
            outcome = conn.pump(probe.bytes(), quiet=0.5 if case.half_close else None, timeout=case.timeout,
                                reply_close=reply)
            if outcome == "quiet" and case.half_close:
                outcome = conn.pump(b"", half_close=True, timeout=CLOSE_WAIT + 3)
                return Answer(conn, outcome, probe_id, half_closed=True), sent
        return Answer(conn, outcome, probe_id), sent
    finally:
        conn.close()


def _said_hello(case):
    """Whether the case's own frames begin with a hello the server accepts (then the probe does not say it)."""
    first = case.frames.parts[0] if case.frames.parts else b""
    if len(first) < 2 or first[0] & 0x0F != 0x1:
        return False
    try:
        length = first[1] & 0x7F
        offset = 2 + (2 if length == 126 else 8 if length == 127 else 0)
        key = first[offset:offset + 4] if first[1] & 0x80 else None
        body = first[offset + 4:] if key else first[offset:]
        value = json.loads(mask_payload(body, key) if key else body)
        return value.get("type") == "hello" and value.get("version") == 2 and value.get("cursor") == PRELOADED
    except (ValueError, AttributeError, UnicodeDecodeError):
        return False


def run_after_close_case(ctx, case):
    """The server closes; before answering, the client sends one more bad frame (it has not read
    the close frame yet): the server must not send a second close frame."""
    conn = Conn(ctx.port, ctx.credentials["main"])
    sent = 1 + case.frames.count + case.after.count
    try:
        conn.pump(ws_frame(0x1, encode({"type": "hello", "version": 2, "cursor": PRELOADED}), key=b"abcd"),
                  until=lambda c: any(f.get("type") == "welcome" for f in c.texts), timeout=10)
        conn.pump(case.frames.bytes(), until=lambda c: c.close_at is not None, timeout=8)
        if conn.close_at is None:
            return Answer(conn, "no close"), sent
        # Read on as a client that has not seen it yet, until the server hangs up.
        conn.pump(case.after.bytes(), timeout=CLOSE_WAIT + 2, reply_close=False, through_close=True)
        return Answer(conn, "after close"), sent
    finally:
        conn.close()


def run_storm_case(ctx, case):
    """Many sessions of one device say hello at once: exactly one app session is left, working;
    every other one is closed with 4001 (replaced) or, an extension, 4002 (preempted, refused)."""
    rng = random.Random(f"{ctx.seed}:{case.id}")
    count = rng.randint(8, 40 if ctx.long else 20)
    roles = ["app"] * count if case.name == "storm of app sessions" else [rng.choice(["app", "extension"]) for _ in range(count)]
    roles[rng.randrange(count)] = "app"
    conns = [Conn(ctx.port, ctx.credentials["roles"]) for _ in range(count)]
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
    first = Conn(ctx.port, credential)
    second = None
    sent = 0
    try:
        sent += 1
        if first.pump(ws_frame(0x1, encode({"type": "hello", "version": 2, "cursor": PRELOADED, "role": first_role}), key=b"abcd"),
                      until=lambda c: any(f.get("type") == "welcome" for f in c.texts), timeout=10) != "until":
            return Answer(first, "no welcome"), sent
        second = Conn(ctx.port, credential)
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
    conn = Conn(ctx.port, options.get("credential", credential), protocol=options.get("protocol", "beckon.v2"),
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


# --- Bystanders ----------------------------------------------------------------------------------

class Bystander(threading.Thread):
    """A well-behaved device: one session from start to end; acknowledges every message, pings
    once a second, answers the server's pings. Anything else is a problem."""

    def __init__(self, server, user, credential):
        super().__init__(daemon=True)
        self.server, self.user, self.credential = server, user, credential
        self.received = []         # (seq, id, time)
        self.problems = []
        self.pings = {}            # id -> sent at
        self.pong_latencies = []
        self.stop = threading.Event()
        self.final = None
        self.stop_mode = "bye"   # or "stay": kept open until the server shuts down
        self.frames_sent = 0
        self.ready = threading.Event()

    def run(self):
        try:
            self._run()
        except Exception as error:  # noqa: BLE001 - a bystander reports, never raises
            self.problems.append(f"bystander {self.user}: {type(error).__name__}: {error}")
        finally:
            self.ready.set()

    def _send(self, conn, frame):
        conn.pending = bytearray(ws_frame(0x1, encode(frame), key=os.urandom(4)))
        self.frames_sent += 1
        conn.sock.setblocking(True)
        conn.sock.sendall(bytes(conn.pending))
        conn.pending.clear()
        conn.sock.setblocking(False)

    def _run(self):
        conn = self.conn = Conn(self.server.port, self.credential)
        if conn.status != 101:
            self.problems.append(f"bystander {self.user}: upgrade answered {conn.status}")
            return
        self._send(conn, {"type": "hello", "version": 2, "cursor": 0})
        seen, last_ping, number = 0, 0.0, 0
        while True:
            conn.pending = bytearray()
            conn.pump(b"", until=lambda c: len(c.texts) > seen or c.close_at is not None, timeout=0.2)
            for frame in conn.texts[seen:]:
                kind = frame.get("type")
                if kind == "welcome":
                    self.ready.set()
                elif kind == "message":
                    self.received.append((frame.get("seq"), frame.get("id"), time.monotonic()))
                    self._send(conn, {"type": "ack", "upTo": frame.get("seq")})
                elif kind == "pong":
                    sent_at = self.pings.pop(frame.get("id"), None)
                    if sent_at is None:
                        self.problems.append(f"bystander {self.user}: a pong for no ping: {frame}")
                    else:
                        self.pong_latencies.append(time.monotonic() - sent_at)
                else:
                    self.problems.append(f"bystander {self.user}: unexpected frame {json.dumps(frame)[:200]}")
            seen = len(conn.texts)
            if conn.violations:
                self.problems.append(f"bystander {self.user}: malformed server frames: {conn.violations[:3]}")
                conn.violations.clear()
            if conn.close_at is not None or conn.eof_at is not None:
                if not self.stop.is_set():
                    self.problems.append(f"bystander {self.user}: the session ended: close {conn.close_code} "
                                         f"{conn.close_reason!r}, reset={conn.reset}")
                self.final = conn.close_code
                return
            if self.stop.is_set() and self.stop_mode == "bye":
                self._send(conn, {"type": "bye"})
                conn.pump(b"", timeout=10)
                self.final = conn.close_code if conn.close_at is not None else "no close"
                return
            now = time.monotonic()
            if now - last_ping >= 1.0 and self.ready.is_set():
                number += 1
                ping_id = f"{self.user}-{number}"
                self.pings[ping_id] = now
                self._send(conn, {"type": "ping", "id": ping_id})
                last_ping = now


def run_poster(server, users, stop, posted, problems, interval):
    """Posts one message to every bystander user each `interval` seconds; records the answers."""
    number = 0
    while not stop.is_set():
        number += 1
        try:
            status, answer = server.post(users, {"n": number, "text": "from the poster"})
        except OSError as error:
            problems.append(f"poster: {error}")
            time.sleep(interval)
            continue
        if status != 202 or not isinstance(answer, dict) or "positions" not in answer:
            problems.append(f"poster: POST /v1/messages answered {status} {answer}")
        else:
            posted.append((answer["id"], {p["userId"]: p["sequence"] for p in answer["positions"]}, time.monotonic()))
        stop.wait(interval)


# --- Phases --------------------------------------------------------------------------------------

class Tally:
    def __init__(self):
        self.cases = 0
        self.frames = 0
        self.answers = collections.Counter()
        self.failures = []
        self.deviations = collections.Counter()
        self.silent = collections.Counter()
        self.kinds = collections.Counter()
        self.seconds = 0.0


def judge(case, answer, strict):
    """Problems of one case (empty: passed) and, separately, an RFC 6455 deviation or None."""
    problems = []
    conn = answer.conn
    if conn.violations:
        problems.append("malformed server frames: " + "; ".join(conn.violations[:3]))
    if answer.close == 1011 and not any(opcode == 0x8 for opcode, _ in parse_client_frames(case)):
        problems.append("closed with 1011 (internal error)")
    if answer.text == "no answer":
        problems.append("no answer within the time limit")
    if answer.close is not None and answer.close != 4008 and answer.errors:
        problems.append(f"an error frame before close {answer.close}")
    if answer.close == 4008 and (not conn.texts or conn.texts[-1].get("type") != "error"):
        problems.append("close 4008 without an error frame just before it")
    if conn.close_at is not None and conn.eof_at is None:
        problems.append(f"the server did not hang up within {CLOSE_WAIT + 2:g} s of its close frame")
    if case.cls in ("sessions",):
        if answer.text != "as documented":
            problems.append(answer.text)
        return problems, None
    if case.cls == "upgrade":
        if not getattr(answer, "upgrade_ok", False):
            problems.append(answer.text)
        return problems, None
    if case.doc is not None and not case.doc(answer):
        problems.append(f"documented: {case.doc.description}")
    deviation = None
    if case.rfc is not None and not case.rfc(answer):
        deviation = f"RFC 6455: {case.rfc.description}"
        if strict:
            problems.append(deviation)
    if case.cls == "noise":
        allowed = {1000, 1002, 1003, 1007, 1009, 4008, 4029}
        if answer.close is not None and answer.close not in allowed and not any(
                op == 0x8 for op, _ in parse_client_frames(case)):
            problems.append(f"close {answer.close} is no answer to bad input")
    return problems, deviation


def parse_client_frames(case):
    """(opcode, fin) of the frames a case sends, as far as they parse (for the noise class)."""
    data = case.frames.bytes()
    out, offset = [], 0
    while len(data) - offset >= 2:
        first, second = data[offset], data[offset + 1]
        length, position = second & 0x7F, offset + 2
        if length == 126:
            length, position = int.from_bytes(data[position:position + 2], "big"), position + 2
        elif length == 127:
            length, position = int.from_bytes(data[position:position + 8], "big"), position + 8
        if second & 0x80:
            position += 4
        out.append((first & 0x0F, bool(first & 0x80)))
        offset = position + length
    return out


def describe(case, answer, limit=160):
    data = case.frames.bytes()
    shown = data[:limit].hex()
    frames_in = [(f"{op:#x}", payload[:60]) for op, payload, _ in answer.conn.frames[-4:]]
    return (f"{case.id} {case.name!r}: answer {answer.text!r} ({answer.outcome}); sent {case.frames.count} frames, "
            f"{len(data)} bytes: {shown}{'…' if len(data) > limit else ''}; last frames in: {frames_in}")


def hostile_worker(ctx, queue, tallies, lock, strict, stop, progress, running, died):
    while not stop.is_set():
        item = queue()
        if item is None:
            return
        cls, index = item
        with lock:
            running[ctx.worker] = f"{cls}:{index}"
        make, _ = CLASSES[cls]
        rng = random.Random(f"{ctx.seed}:{cls}:{index}")
        started = time.monotonic()
        case = None
        try:
            case = make(rng, index, ctx)
            answer, sent = run_case(ctx, case)
            problems, deviation = judge(case, answer, strict)
        except Exception as error:  # noqa: BLE001 - a case that cannot run is a failure, reported
            problems, deviation = [f"the case failed to run: {type(error).__name__}: {error}"], None
            if ctx.server.process.poll() is not None:
                problems.append(f"the server exited (code {ctx.server.process.returncode}) during this case")
            sent = case.frames.count if case else 0
            answer = None
            if case is None:
                case = Case(cls, index, "(not generated)", Frames(rng))
        with lock:
            tally = tallies[cls]
            tally.cases += 1
            tally.frames += sent
            tally.seconds += time.monotonic() - started
            key = answer.text if answer else "error"
            if answer and cls == "close" and answer.conn.close_at is not None:
                hung = answer.conn.hung_up_after()
                key += ", hung up " + ("never" if hung is None else "at once" if hung < 0.5 else f"after {hung:.0f} s")
            tally.answers[f"{case.name}: {key}" if cls not in ("noise",) else key] += 1
            if deviation:
                tally.deviations[f"{case.name}: {key} ({deviation})"] += 1
            if case.doc is None and cls not in ("noise", "sessions", "upgrade"):
                tally.silent[case.note] += 1
            if problems:
                for problem in problems:
                    tally.kinds[f"{case.name}: {problem[:110]}" if cls != "noise" else problem[:110]] += 1
                detail = describe(case, answer) if answer else f"{case.id} {case.name!r}"
                tally.failures.append(f"{detail}\n      problems: {'; '.join(problems)}")
            if ctx.server.process.poll() is not None and not died:
                died.extend(sorted(set(running.values())))
            running.pop(ctx.worker, None)
            progress(sent)


def run_memory_phase(server, credential, megabytes):
    """WebSocket pings from a client that never reads: how much the server's memory grows.

    A client that never reads can also stall itself: once its receive buffer is full its kernel
    drops the server's segments, acknowledgements included, and its sending backs off for many
    seconds. Such an attempt is cut after 10 s and tried again (3 attempts at most); the growth
    is the highest the server's anonymous memory reached over the baseline."""
    baseline = server.memory("RssAnon") or 0
    peak, best, stalls, started = baseline, 0, 0, time.monotonic()
    one = ws_frame(0x9, b"m" * 125, key=b"wxyz")
    chunk = one * (262144 // len(one))
    target = megabytes * 1048576
    for _ in range(3):
        conn = Conn(server.port, credential)
        if conn.pump(ws_frame(0x1, encode({"type": "hello", "version": 2, "cursor": 0}), key=b"abcd"),
                     until=lambda c: any(f.get("type") == "welcome" for f in c.texts), timeout=10) != "until":
            raise RuntimeError(f"memory phase: no welcome ({conn.close_code} {conn.errors()})")
        # From now on nothing is read.
        sent = 0
        conn.sock.setblocking(True)
        conn.sock.settimeout(10)
        try:
            while sent < target:
                conn.sock.sendall(chunk)
                sent += len(chunk)
                peak = max(peak, server.memory("RssAnon") or 0)
        except socket.timeout:
            stalls += 1
        except OSError as error:
            raise RuntimeError(f"memory phase: the connection failed after {sent} bytes: {error}")
        time.sleep(1.0)
        peak = max(peak, server.memory("RssAnon") or 0)
        conn.close()
        best = max(best, sent)
        if sent >= target:
            break
    return {"sent": best, "frames": best // len(one), "baseline": baseline, "peak": peak,
            "seconds": time.monotonic() - started, "stalls": stalls, "conclusive": best >= target // 2}


def run_ping_phase(binary, work, results):
    """A second server with a 1 s ping interval: clients that never answer pings get close 1001
    ("ping timeout") within two intervals; one that answers stays."""
    try:
        server = Server(binary, work, "ping-server", {"BECKON_SYNC_PING_INTERVAL_SECONDS": "1"})
    except Exception as error:  # noqa: BLE001
        results.append(("start", False, f"the second server did not start: {error}", 0))
        return
    try:
        cases = [("silent after hello", False, False), ("json pings only", False, True), ("partial frame pending", False, False),
                 ("answers the pings", True, False), ("silent before hello", False, False)]
        credentials = {name: server.register(f"pinger-{n}", f"pinger-{n}") for n, (name, _, _) in enumerate(cases)}
        threads = []

        def one(name, answers, json_pings):
            conn = Conn(server.port, credentials[name])
            frames = 0
            try:
                if name != "silent before hello":
                    frames += 1
                    conn.pump(ws_frame(0x1, encode({"type": "hello", "version": 2, "cursor": 0}), key=b"abcd"),
                              until=lambda c: any(f.get("type") == "welcome" for f in c.texts), timeout=10)
                if name == "partial frame pending":
                    frames += 1
                    conn.pump(ws_frame(0x1, b'{"type":"ping"}', key=b"abcd")[:8], timeout=0.1)
                started = time.monotonic()
                if answers:
                    conn.pump(b"", timeout=3.5, answer_pings=True)
                    probe = ws_frame(0x1, encode({"type": "ping", "id": "alive"}), key=b"abcd") + \
                        ws_frame(0x1, encode({"type": "bye"}), key=b"abcd")
                    frames += 2
                    conn.pump(probe, timeout=5)
                    ok = conn.close_code == 1000 and any(f.get("id") == "alive" for f in conn.texts)
                    results.append((name, ok, f"after 3.5 s answering pings: close {conn.close_code}", frames))
                    return
                deadline = started + 6
                while time.monotonic() < deadline and conn.close_at is None and conn.eof_at is None:
                    if json_pings:
                        frames += 1
                        conn.pump(ws_frame(0x1, encode({"type": "ping", "id": "j"}), key=b"abcd"), timeout=0.3,
                                  answer_pings=False, reply_close=True)
                    else:
                        conn.pump(b"", timeout=0.3, answer_pings=False, reply_close=True)
                took = (conn.close_at or time.monotonic()) - started
                ok = conn.close_code == 1001 and conn.close_reason == b"ping timeout" and took <= 3.5
                results.append((name, ok, f"close {conn.close_code} {conn.close_reason!r} after {took:.1f} s "
                                          f"({conn.pings} server pings)", frames))
            finally:
                conn.close()

        for name, answers, json_pings in cases:
            thread = threading.Thread(target=one, args=(name, answers, json_pings), daemon=True)
            thread.start()
            threads.append(thread)
        for thread in threads:
            thread.join(30)
        problems = server.log_problems()
        alive = server.process.poll() is None and server.healthy()
        results.append(("server", alive and not problems,
                        "alive and healthy" if alive else "NOT alive", 0))
        for line in problems[:5]:
            results.append(("log", False, line, 0))
    finally:
        code = server.stop()
        results.append(("exit", code == 0, f"exit code {code} on SIGTERM", 0))


# --- Main ----------------------------------------------------------------------------------------

def schedule(args, seed):
    """The order of cases: first every subcase of every class once, then classes drawn by weight
    until the frame budget is spent. Deterministic for a seed."""
    rng = random.Random(f"{seed}:schedule")
    classes = [c for c in CLASSES if (not args.only or c in args.only) and c not in args.skip]
    first = []
    subcases = count_subcases(args.max_frame_bytes, args.max_window)
    for cls in classes:
        for index in range(subcases[cls][0]):
            first.append((cls, index))
    rng.shuffle(first)
    weights = [CLASSES[c][1] for c in classes]
    counters = {cls: subcases[cls][0] for cls in classes}

    def more():
        cls = rng.choices(classes, weights)[0]
        index = counters[cls]
        counters[cls] += 1
        return cls, index
    return first, more


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary", nargs="?")
    parser.add_argument("--frames", type=int, default=100000, help="hostile frames to send at least (default 100000; long run: 1000000)")
    parser.add_argument("--seed", type=int, default=None, help="the seed of every case (default: from the clock, printed)")
    parser.add_argument("--workers", type=int, default=2, help="hostile sessions at a time")
    parser.add_argument("--bystanders", type=int, default=3)
    parser.add_argument("--max-frame-bytes", type=int, default=65536, help="sync.max-frame-bytes of the server under test")
    parser.add_argument("--max-window", type=int, default=100, help="sync.max-window of the server under test")
    parser.add_argument("--memory-mib", type=int, default=None, help="MiB of unread pings in the memory phase (0: skip)")
    parser.add_argument("--memory-limit-mib", type=int, default=16,
                        help="growth of the server's anonymous memory allowed in the memory phase")
    parser.add_argument("--strict-rfc", action="store_true", help="also fail where RFC 6455 and the server differ (the document silent)")
    parser.add_argument("--only", action="append", default=[], help="run only this class (repeatable)")
    parser.add_argument("--skip", action="append", default=[], help="skip this class or phase: memory, ping (repeatable)")
    parser.add_argument("--replay", help="CLASS:INDEX: run that one case and print it")
    parser.add_argument("--list", action="store_true", help="list the classes and their subcases")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()

    if args.list:
        for cls, (count, names) in count_subcases(args.max_frame_bytes, args.max_window).items():
            print(f"{cls} (weight {CLASSES[cls][1]}, {count} subcases): {', '.join(names)}")
        return 0
    if not args.binary:
        parser.error("BECKON_BINARY is required")
    binary = os.path.abspath(args.binary)
    seed = args.seed if args.seed is not None else int(time.time() * 1000) % 1000000007
    long_run = args.frames >= 200000
    memory_mib = args.memory_mib if args.memory_mib is not None else (64 if long_run else 16)
    log(f"seed {seed}; at least {args.frames} hostile frames; {args.workers} hostile sessions at a time, "
        f"{args.bystanders} bystanders (replay a case with --seed {seed} --replay CLASS:INDEX)")

    work = tempfile.mkdtemp(prefix="beckon-fuzz-sync.")
    log(f"work directory {work} (the server's log: server.log)")
    started = time.monotonic()
    failed = []
    server = Server(binary, work, "server", {"BECKON_SYNC_MAX_FRAME_BYTES": str(args.max_frame_bytes),
                                             "BECKON_SYNC_MAX_WINDOW": str(args.max_window)})
    memory_samples = []
    sampling = threading.Event()

    def sample():
        while not sampling.is_set():
            value = server.memory()
            if value:
                memory_samples.append(value)
            sampling.wait(0.5)
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        # Devices: bystanders, and per hostile worker a main device and one for the role cases.
        bystander_users = [f"bystander-{n}" for n in range(args.bystanders)]
        credentials = {user: server.register(user, f"{user}-phone") for user in bystander_users}
        workers = []
        for w in range(args.workers):
            user = f"hostile-{w}"
            creds = {"main": server.register(user, f"{user}-main"), "roles": server.register(user, f"{user}-roles")}
            revoked = server.register(user, f"{user}-revoked")
            server.register(user, f"{user}-revoked")  # registering again revokes the first credential
            creds["revoked"] = revoked
            workers.append(creds)
        for n in range(PRELOADED):
            status, _ = server.post([f"hostile-{w}" for w in range(args.workers)], {"preloaded": n})
            assert status == 202, status
        ping_credential = server.register("memory", "memory-phone")

        if args.replay:
            cls, _, index = args.replay.partition(":")
            ctx = Context(server, args, 0, workers[0])
            ctx.seed = seed
            case = CLASSES[cls][0](random.Random(f"{seed}:{cls}:{index}"), int(index), ctx)
            answer, sent = run_case(ctx, case)
            problems, deviation = judge(case, answer, args.strict_rfc)
            print(describe(case, answer, limit=2000))
            print(f"  expected (document): {case.doc.description if case.doc else 'silent'}; "
                  f"RFC 6455: {case.rfc.description if case.rfc else '-'}; note: {case.note}")
            print(f"  frames in: {[(hex(op), p[:200]) for op, p, _ in answer.conn.frames]}")
            print(f"  problems: {problems or 'none'}; deviation: {deviation or 'none'}")
            return 1 if problems else 0

        # Bystanders and the poster, for the whole run.
        stop = threading.Event()
        bystanders = [Bystander(server, user, credentials[user]) for user in bystander_users]
        for bystander in bystanders:
            bystander.stop = stop
            bystander.start()
        for bystander in bystanders:
            bystander.ready.wait(15)
        posted, poster_problems = [], []
        poster_stop = threading.Event()
        poster = threading.Thread(target=run_poster, args=(server, bystander_users, poster_stop, posted, poster_problems, 0.1),
                                  daemon=True)
        poster.start()

        # Phase 1: memory of a server whose client never reads.
        memory = None
        if memory_mib and "memory" not in args.skip:
            memory = run_memory_phase(server, ping_credential, memory_mib)
            growth = (memory["peak"] - memory["baseline"]) / 1024
            log(f"memory: {memory['sent'] / 1048576:.0f} MiB of pings ({memory['frames']} frames) unread in "
                f"{memory['seconds']:.1f} s: the server's anonymous memory grew {growth:.0f} MiB "
                f"({memory['baseline'] // 1024} -> {memory['peak'] // 1024} MiB)"
                + (f"; {memory['stalls']} attempts stalled in the client's kernel" if memory["stalls"] else ""))
            if not memory["conclusive"] and growth <= args.memory_limit_mib:
                log("memory: inconclusive (less than half the pings went out); not counted as a failure")
            elif growth > args.memory_limit_mib:
                failed.append(f"memory: a client that sends pings and never reads made the server grow {growth:.0f} MiB "
                              f"for {memory['sent'] / 1048576:.0f} MiB sent (allowed {args.memory_limit_mib} MiB): the pongs "
                              f"are buffered without bound")

        # Phase 2 (in the background): the ping timeout on a second server.
        ping_results = []
        ping_thread = None
        if "ping" not in args.skip and not args.only:
            ping_thread = threading.Thread(target=run_ping_phase, args=(binary, work, ping_results), daemon=True)
            ping_thread.start()

        # Phase 3: the hostile cases.
        tallies = collections.defaultdict(Tally)
        lock = threading.Lock()
        first, more = schedule(args, seed)
        total = {"frames": 0, "cases": 0}
        issued = iter(first)
        queue_lock = threading.Lock()
        last_report = [time.monotonic()]

        def next_case():
            with queue_lock:
                if server.process.poll() is not None:
                    return None
                item = next(issued, None)
                if item is not None:
                    return item
                if total["frames"] >= args.frames:
                    return None
                return more()

        def progress(sent):
            total["frames"] += sent
            total["cases"] += 1
            if time.monotonic() - last_report[0] > 15:
                last_report[0] = time.monotonic()
                log(f"... {total['cases']} cases, {total['frames']} frames, {time.monotonic() - started:.0f} s, "
                    f"server RSS {server.memory() // 1024 if server.memory() else '?'} MiB")

        threads = []
        running, died = {}, []
        phase_started = time.monotonic()
        for w in range(args.workers):
            ctx = Context(server, args, w, workers[w])
            ctx.seed = seed
            thread = threading.Thread(target=hostile_worker, args=(ctx, next_case, tallies, lock, args.strict_rfc,
                                                                    threading.Event(), progress, running, died), daemon=True)
            thread.start()
            threads.append(thread)
        for thread in threads:
            thread.join()
        hostile_seconds = time.monotonic() - phase_started
        if ping_thread:
            ping_thread.join(60)

        # The bystanders: every posted message, in order, at its position.
        poster_stop.set()
        poster.join(15)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(len(b.received) < len(posted) for b in bystanders):
            time.sleep(0.1)
        latencies = []
        bystander_report = []
        for bystander in bystanders:
            expected = [(positions[bystander.user], message_id) for message_id, positions, _ in posted]
            got = [(seq, message_id) for seq, message_id, _ in bystander.received]
            if got != expected:
                missing = len(set(expected) - set(got))
                bystander.problems.append(f"bystander {bystander.user}: got {len(got)} messages, {len(expected)} posted; "
                                          f"{missing} missing; in order: {got == sorted(got)}; first difference at "
                                          f"{next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))}")
            posted_at = {message_id: at for message_id, _, at in posted}
            for _, message_id, at in bystander.received:
                if message_id in posted_at:
                    latencies.append(at - posted_at[message_id])
            if bystander.pings:
                oldest = min(bystander.pings.values())
                if time.monotonic() - oldest > LATENCY_LIMIT:
                    bystander.problems.append(f"bystander {bystander.user}: {len(bystander.pings)} pings unanswered")
            bystander_report.append(f"{bystander.user}: {len(bystander.received)} messages, "
                                    f"{len(bystander.pong_latencies)} pongs (max {max(bystander.pong_latencies or [0]) * 1000:.0f} ms)")
        latencies.sort()
        slow = [x for x in latencies if x > LATENCY_LIMIT]
        if slow:
            failed.append(f"bystanders: {len(slow)} messages arrived more than {LATENCY_LIMIT:g} s after their post")
        for bystander in bystanders:
            failed.extend(bystander.problems)
        failed.extend(poster_problems)

        # The last bystander stays for the shutdown; the others say bye.
        if bystanders:
            bystanders[-1].stop_mode = "stay"
        stop.set()
        for bystander in bystanders[:-1]:
            bystander.join(20)
            if bystander.final != 1000:
                failed.append(f"bystander {bystander.user}: bye answered with {bystander.final}, documented 1000")

        # The server after all that.
        alive = server.process.poll() is None
        healthy = alive and server.healthy()
        rss_final = server.memory()
        if not alive:
            failed.append(f"the server is not running any more (exit code {server.process.returncode}); the cases "
                          f"running when it was found dead: {', '.join(died) or '?'} (replay with --seed {seed} --replay ...)")
            with open(server.log_path, "rb") as handle:
                tail = handle.read()[-3000:].decode("utf-8", "replace")
            print("the end of the server's log:\n" + tail)
        elif not healthy:
            failed.append("the server does not answer GET /health with 200")
        problems = server.log_problems()
        if problems:
            failed.append(f"the server logged {len(problems)} errors, e.g.: " + " | ".join(problems[:3]))
        last = bystanders[-1] if bystanders else None
        code = server.stop()
        if last is not None:
            last.join(20)
            if last.final != 1001:
                failed.append(f"bystander {last.user}: SIGTERM closed it with {last.final}, documented 1001")
        if code != 0:
            failed.append(f"the server exited with {code} on SIGTERM, expected 0")
        sampling.set()

        # The summary.
        elapsed = time.monotonic() - started
        print()
        print(f"{'class':<10} {'cases':>7} {'frames':>9} {'failed':>7} {'RFC dev.':>8}  answers (most common first)")
        total_frames = total_failed = 0
        for cls in CLASSES:
            if cls not in tallies:
                continue
            tally = tallies[cls]
            total_frames += tally.frames
            total_failed += len(tally.failures)
            answers = collections.Counter()
            for key, count in tally.answers.items():
                answers[key.split(": ", 1)[-1] if cls != "noise" else key] += count
            shown = ", ".join(f"{k} ×{v}" for k, v in answers.most_common(6))
            print(f"{cls:<10} {tally.cases:>7} {tally.frames:>9} {len(tally.failures):>7} {sum(tally.deviations.values()):>8}  {shown}")
        print(f"{'total':<10} {sum(t.cases for t in tallies.values()):>7} {total_frames:>9} {total_failed:>7}")
        print()
        print("answers by subcase:")
        for cls in CLASSES:
            if cls in tallies and cls != "noise":
                tally = tallies[cls]
                for key, count in sorted(tally.answers.items()):
                    print(f"  {cls}/{key} ×{count}")
        deviations = [(cls, key, count) for cls in CLASSES if cls in tallies for key, count in tallies[cls].deviations.items()]
        if deviations:
            print()
            print("where docs/sync-protocol.md is silent and the server differs from RFC 6455"
                  + (" (failures with --strict-rfc):" if args.strict_rfc else " (reported, not failed; --strict-rfc fails them):"))
            for cls, key, count in deviations:
                print(f"  {cls}/{key} ×{count}")
        silent = collections.Counter()
        for tally in tallies.values():
            silent.update(tally.silent)
        if silent:
            print()
            print("the document is silent here (the answers above are the server's own choice):")
            for note in sorted(silent):
                print(f"  - {note}")
        print()
        if ping_results:
            print("ping timeout (second server, sync.ping-interval-seconds 1):")
            for name, ok, text, _ in ping_results:
                print(f"  {'ok ' if ok else 'BAD'} {name}: {text}")
                if not ok:
                    failed.append(f"ping timeout: {name}: {text}")
        print(f"bystanders: {len(posted)} messages posted to each of {len(bystanders)}; " + "; ".join(bystander_report))
        if latencies:
            print(f"  delivery latency: median {latencies[len(latencies) // 2] * 1000:.0f} ms, "
                  f"p99 {latencies[int(len(latencies) * 0.99)] * 1000:.0f} ms, max {latencies[-1] * 1000:.0f} ms")
        peak = max(memory_samples) if memory_samples else None
        print(f"server: alive {alive}, /health {'200' if healthy else 'failed'}, RSS peak "
              f"{peak // 1024 if peak else '?'} MiB, at the end {rss_final // 1024 if rss_final else '?'} MiB, "
              f"log errors {len(problems)}, exit code {code}")
        print(f"duration: {elapsed:.1f} s (hostile phase {hostile_seconds:.1f} s, "
              f"{total_frames / max(hostile_seconds, 0.001):,.0f} frames/s); seed {seed}; work directory {work}")
        for cls in CLASSES:
            if cls in tallies and tallies[cls].failures:
                failed.append(f"{cls}: {len(tallies[cls].failures)} cases failed")
                for line in tallies[cls].failures[:5]:
                    print(f"FAILED {line}")
        kinds = [(cls, kind, count) for cls in CLASSES if cls in tallies for kind, count in tallies[cls].kinds.items()]
        if kinds:
            print()
            print("failed checks by kind:")
            for cls, kind, count in sorted(kinds, key=lambda k: -k[2]):
                print(f"  {cls}/{kind} ×{count}")
        if total_frames < args.frames and not args.only:
            failed.append(f"only {total_frames} hostile frames were sent, {args.frames} asked")
        if failed:
            print()
            for line in failed:
                print(f"FAIL {line}")
            print(f"fuzz-sync: FAILED ({len(failed)} problems); seed {seed}")
            return 1
        print(f"fuzz-sync: passed: {sum(t.cases for t in tallies.values())} cases, {total_frames} hostile frames, seed {seed}")
        return 0
    finally:
        sampling.set()
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait()
        if not args.keep and not failed:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
