"""WebSocket (RFC 6455) on `GET /v1/sync` (docs/sync-protocol.md, v2): frames as a client builds
them, with every rule breakable; `SyncSession`, a client as an app holds one; and `RawSession`,
which writes whatever it is given while it reads and checks every frame the server sends."""
import base64, json, os, select, socket, time

PROTOCOL = "beckon.v2"
# docs/sync-protocol.md: the frames a server sends, the codes of its `error` frame, and how long
# it waits for the client's answer to its close frame.
SERVER_TYPES = {"welcome", "message", "readElsewhere", "callEnded", "pong", "error"}
ERROR_CODES = {"malformed_frame", "unknown_type", "invalid_field", "unexpected_frame", "unsupported_version",
               "ack_beyond_sent", "cursor_ahead"}
CLOSE_WAIT = 2.0


# --- Frames, as a client builds them (RFC 6455 §5.2) -----------------------------------------------

def mask_payload(payload, key):
    count = len(payload)
    if not count:
        return b""
    stream = (key * (count // 4 + 1))[:count]
    return (int.from_bytes(payload, "little") ^ int.from_bytes(stream, "little")).to_bytes(count, "little")


def frame(opcode, payload=b"", fin=True, rsv=0, masked=True, key=b"\x00\x00\x00\x00", length=None, form=None):
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


def encode(value):
    """JSON as compact as a client sends it."""
    return json.dumps(value, separators=(",", ":")).encode()


def text(value, key=None):
    """A masked text frame of a JSON value."""
    return frame(0x1, encode(value), key=key or os.urandom(4))


def close_payload(code, reason=b""):
    return (b"" if code is None else code.to_bytes(2, "big")) + reason


def parse_frame(buffer):
    """The first complete frame of `buffer` (unmasked, as a server sends it) as (opcode, payload,
    bytes it took), or None while it is incomplete."""
    if len(buffer) < 2:
        return None
    length, at = buffer[1] & 0x7F, 2
    if length == 126:
        if len(buffer) < 4:
            return None
        length, at = int.from_bytes(buffer[2:4], "big"), 4
    elif length == 127:
        if len(buffer) < 10:
            return None
        length, at = int.from_bytes(buffer[2:10], "big"), 10
    if len(buffer) < at + length:
        return None
    return buffer[0] & 0x0F, bytes(buffer[at:at + length]), at + length


# --- A sync session as an app holds one ------------------------------------------------------------

class SyncSession:
    """A sync session with a read buffer, so a wait that times out never splits a frame. It answers
    the server's pings. The upgrade fails with ConnectionError (refused, or the server gone while
    it waits: a node killed); so does `receive` when the server closes (`.code` holds the close
    code, also kept as `closed_with`)."""

    def __init__(self, port, credential, timeout=10):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buffer = b""
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((
            f"GET /v1/sync HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: {PROTOCOL}\r\n"
            f"Authorization: Bearer {credential}\r\n\r\n").encode())
        deadline = time.monotonic() + timeout
        try:
            while b"\r\n\r\n" not in self.buffer:
                self._fill(deadline)
        except OSError:
            self.sock.close()
            raise
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        if not head.startswith(b"HTTP/1.1 101"):
            self.sock.close()
            raise ConnectionError("the sync upgrade was refused: " + head.split(b"\r\n")[0].decode(errors="replace"))

    def _fill(self, deadline):
        """More bytes into the buffer; TimeoutError if none come by `deadline` (None: no limit)."""
        if deadline is not None and not select.select([self.sock], [], [], max(deadline - time.monotonic(), 0))[0]:
            raise TimeoutError("nothing from the server in time")
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        self.buffer += chunk

    def send(self, value, opcode=0x1):
        """A JSON frame, or with another opcode, `value` as the payload bytes."""
        payload = encode(value) if opcode == 0x1 else value
        self.sock.sendall(frame(opcode, payload, key=os.urandom(4)))

    def receive_frame(self, timeout=None):
        """The next frame as (opcode, payload): 0x1 text, 0x8 close (2-byte code first), pings too.
        `timeout` seconds at most (None: the socket's timeout); TimeoutError after it."""
        if timeout is None:
            timeout = self.sock.gettimeout()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            parsed = parse_frame(self.buffer)
            if parsed:
                opcode, payload, taken = parsed
                self.buffer = self.buffer[taken:]
                return opcode, payload
            self._fill(deadline)

    def receive(self, timeout=None):
        """The next JSON frame. TimeoutError after `timeout` (None: the socket's timeout)."""
        if timeout is None:
            timeout = self.sock.gettimeout()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            opcode, payload = self.receive_frame(None if deadline is None else max(deadline - time.monotonic(), 0.0))
            if opcode == 0x1:
                return json.loads(payload)
            if opcode == 0x8:
                self.closed_with = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else None
                error = ConnectionError(f"the server closed the sync session ({self.closed_with})")
                error.code = self.closed_with
                raise error
            if opcode == 0x9:
                self.send(payload, opcode=0xA)

    def poll(self, timeout):
        """The next JSON frame, or None if none came within `timeout` seconds."""
        try:
            return self.receive(timeout)
        except TimeoutError:
            return None

    def close_code(self):
        """Reads until the server's close frame and returns its code (None if the socket ended)."""
        if hasattr(self, "closed_with"):
            return self.closed_with
        try:
            while True:
                opcode, payload = self.receive_frame()
                if opcode == 0x8:
                    return int.from_bytes(payload[:2], "big") if len(payload) >= 2 else None
        except OSError:
            return None

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


# --- A raw session that may break any rule ---------------------------------------------------------

class RawSession:
    """One connection to `/v1/sync`: the upgrade, then a select loop that writes what it is given
    while it reads and checks every server frame (unmasked, no reserved bits, known opcode, text
    that is one JSON object of a known type, control frames of at most 125 bytes)."""

    def __init__(self, port, credential, protocol=PROTOCOL, headers=None, upgrade=True, timeout=10):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        lines = ["GET /v1/sync HTTP/1.1", f"Host: 127.0.0.1:{port}"]
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
                self.pending += frame(0xA, payload, key=os.urandom(4))

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
            answer = frame(0x8, close_payload(self.close_code), key=os.urandom(4))
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


