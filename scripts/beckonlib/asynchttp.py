"""HTTP/1.1 and sync sessions (docs/sync-protocol.md, v2) over asyncio, for the many
connections at once an overload needs: an answer is read whole (Content-Length or chunked), a
failure is an outcome to count (`attempt`, `kind`), not an error."""
import asyncio, base64, json, os, time

from beckonlib import websocket


def now():
    return time.monotonic()


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


# --- The sync protocol ----------------------------------------------------------------------------

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
                      f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: {websocket.PROTOCOL}\r\n"
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
        self.writer.write(websocket.frame(opcode, payload, key=os.urandom(4)))

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
