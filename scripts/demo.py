#!/usr/bin/env python3
"""The whole path on a fresh machine, with no Apple account: starts `beckon serve` with one app
and no Apple key (so it starts its built-in APNs emulator), registers a device, posts a message
while the device is offline, shows the push the emulator received, then connects the device over
the sync protocol as an app woken by that push would, and shows the measured wake.

    scripts/demo.py [BECKON_BINARY]        # default: builds and uses .build/debug/beckon

Exits 0 when the push arrived and the wake was measured, 1 otherwise. Loopback only.
"""
import base64, json, os, socket, subprocess, sys, tempfile, time

from beckonlib import free_port, request, user_token as signed_user_token

SECRET = "demo-user-token-secret-0123456789abcdef"
ADMIN = "demo-admin-token-0123456789abcdef01234567"
TOKEN = "5a" * 32  # The phone's APNs device token (any 32 bytes: the emulator registers it).








class SyncSession:
    """The smallest WebSocket client that speaks docs/sync-protocol.md: text frames, masked."""

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
            sys.exit(f"demo: the sync upgrade was refused: {head.decode(errors='replace')}")

    def send(self, frame):
        payload = json.dumps(frame).encode()
        mask = os.urandom(4)
        length = len(payload)
        header = bytes([0x81]) + (bytes([0x80 | length]) if length < 126 else bytes([0x80 | 126]) + length.to_bytes(2, "big"))
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def receive(self):
        while True:
            first, second = self._exactly(2)
            length = second & 0x7F
            if length == 126:
                length = int.from_bytes(self._exactly(2), "big")
            elif length == 127:
                length = int.from_bytes(self._exactly(8), "big")
            payload = self._exactly(length)
            if first & 0x0F == 0x1:
                return json.loads(payload)

    def _exactly(self, count):
        data = b""
        while len(data) < count:
            chunk = self.sock.recv(count - len(data))
            if not chunk:
                sys.exit("demo: the server closed the sync session")
            data += chunk
        return data


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else None
    if binary is None:
        subprocess.run(["swift", "build", "--product", "beckon"], check=True)
        binary = ".build/debug/beckon"
    work = tempfile.mkdtemp(prefix="beckon-demo.")
    port, control = free_port(), free_port()
    env = dict(os.environ,
               BECKON_HTTP_PORT=str(port), BECKON_DATABASE_PATH=os.path.join(work, "beckon.sqlite"),
               BECKON_ADMIN_TOKEN=ADMIN, BECKON_APPS_IDS="chat", BECKON_APPS_CHAT_BUNDLE_ID="com.example.chat",
               BECKON_APPS_CHAT_TEAM_ID="TEAM123456", BECKON_APPS_CHAT_USER_TOKEN_SECRET=SECRET,
               BECKON_APNS_EMULATOR_CONTROL_PORT=str(control))
    log_path = os.path.join(work, "server.log")
    server = subprocess.Popen([binary, "serve"], env=env, stdout=open(log_path, "wb"), stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                if request(base, "GET", "/health")[0] == 200:
                    break
            except OSError:
                time.sleep(0.05)
        else:
            sys.exit("demo: the server did not start")
        emulator_line = next(line for line in open(log_path) if "built-in APNs emulator" in line)
        print("1. beckon serve, no Apple key:", emulator_line.split(": ", 1)[1].strip())

        _, key = request(base, "POST", "/v1/admin/apps/chat/keys", {}, ADMIN)
        status, registered = request(base, "POST", "/v1/devices", {
            "deviceId": "alice-phone", "bundleId": "com.example.chat", "environment": "sandbox",
            "tokens": {"remote": TOKEN}, "capabilities": {"backgroundModes": ["remote-notification"]},
        }, signed_user_token(SECRET, "chat", "alice"))
        assert status == 201, registered
        print("2. alice's phone registered; it is offline (no sync session)")

        status, posted = request(base, "POST", "/v1/messages", {
            "recipients": {"users": ["alice"]}, "kind": "message", "payload": {"text": "lunch?"},
            "notification": {"title": "Bob", "body": "lunch?"}}, key["key"])
        assert status == 202, posted
        print(f"3. the backend posted message {posted['id']}")

        received = []
        for _ in range(100):
            status, answer = request(f"http://127.0.0.1:{control}", "GET", f"/devices/{TOKEN}/received")
            received = answer["notifications"] if status == 200 else []
            if received:
                break
            time.sleep(0.05)
        if not received:
            sys.exit("demo: the emulator received no push")
        push = received[0]
        print(f"4. the APNs emulator received a {push['pushType']} push, priority {push['priority']}: {push['payload']}")

        time.sleep(0.5)  # The app wakes a moment later and connects.
        session = SyncSession(port, registered["credential"])
        session.send({"type": "hello", "version": 2, "cursor": 0})
        welcome = session.receive()
        message = session.receive()
        session.send({"type": "ack", "upTo": message["seq"]})
        session.send({"type": "bye"})
        print(f"5. the woken app connected ({welcome['type']}), got seq {message['seq']} and acknowledged it")

        for _ in range(100):
            _, report = request(base, "GET", "/v1/delivery/report", token=key["key"])
            wakes = [kind for kind in report["kinds"] if kind["category"] == "wake" and kind["connectedWithinWindow"]]
            if wakes:
                break
            time.sleep(0.05)
        else:
            sys.exit(f"demo: no wake measured: {report}")
        kind = wakes[0]
        print(f"6. wake measured: {kind['reason']}/{kind['strategy']}, success rate {kind['wakeSuccessRate']}, "
              f"latency {kind['latencySeconds']['p50']:.3f} s (GET /v1/delivery/report)")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
