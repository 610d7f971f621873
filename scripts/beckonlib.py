"""Helpers the Python scripts share: a free loopback port, JSON over HTTP, the user token an
app's backend signs (an HS256 JWT with `aud` = app id and `sub` = user id), and a minimal sync
client."""
import base64, hashlib, hmac, json, os, socket, time
import urllib.error, urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(base, method, path, body=None, token=None, timeout=10):
    """(status, parsed JSON body); HTTP errors are answers too."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def user_token(secret, app, user, lifetime=600):
    def b64(raw):
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = b64(json.dumps({"aud": app, "sub": user, "exp": int(time.time()) + lifetime}).encode())
    signature = hmac.new(secret.encode(), f"{header}.{claims}".encode(), hashlib.sha256).digest()
    return f"{header}.{claims}.{b64(signature)}"


class SyncSession:
    """The smallest WebSocket client that speaks docs/sync-protocol.md (v2): text frames, masked."""

    def __init__(self, port, credential):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((
            f"GET /v1/sync HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: beckon.v2\r\n"
            f"Authorization: Bearer {credential}\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(1)
        if not head.startswith(b"HTTP/1.1 101"):
            raise ConnectionError(f"the sync upgrade was refused: {head.decode(errors='replace')}")

    def send(self, frame):
        payload = json.dumps(frame).encode()
        mask = os.urandom(4)
        length = len(payload)
        header = bytes([0x81]) + (bytes([0x80 | length]) if length < 126 else bytes([0x80 | 126]) + length.to_bytes(2, "big"))
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def receive(self):
        while True:
            opcode, payload = self.receive_frame()
            if opcode == 0x1:
                return json.loads(payload)
            if opcode == 0x8:
                self.closed_with = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else None
                raise ConnectionError(f"the server closed the sync session ({self.closed_with})")

    def receive_frame(self):
        """The next frame as (opcode, payload bytes): 0x1 text, 0x8 close (2-byte code first)."""
        first, second = self._exactly(2)
        length = second & 0x7F
        if length == 126:
            length = int.from_bytes(self._exactly(2), "big")
        elif length == 127:
            length = int.from_bytes(self._exactly(8), "big")
        return first & 0x0F, self._exactly(length)

    def close_code(self):
        """Reads until the server's close frame and returns its code (None if the socket ended)."""
        if hasattr(self, "closed_with"):
            return self.closed_with
        try:
            while True:
                opcode, payload = self.receive_frame()
                if opcode == 0x8:
                    return int.from_bytes(payload[:2], "big") if len(payload) >= 2 else None
        except (ConnectionError, OSError):
            return None

    def _exactly(self, count):
        data = b""
        while len(data) < count:
            chunk = self.sock.recv(count - len(data))
            if not chunk:
                raise ConnectionError("the server closed the sync session")
            data += chunk
        return data

    def close(self):
        self.sock.close()
