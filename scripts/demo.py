#!/usr/bin/env python3
"""The whole path on a fresh machine, with no Apple account: starts `beckon serve` with one app
and no Apple key (so it starts its built-in APNs emulator), registers a device, posts a message
while the device is offline, shows the push the emulator received, then connects the device over
the sync protocol as an app woken by that push would, and shows the measured wake.

    scripts/demo.py [BECKON_BINARY]        # default: builds and uses .build/debug/beckon

Exits 0 when the push arrived and the wake was measured, 1 otherwise. Loopback only.
"""
import json, os, subprocess, sys, tempfile, time, urllib.request

from beckonlib import SyncSession, free_port, request, user_token as signed_user_token

SECRET = "demo-user-token-secret-0123456789abcdef"
ADMIN = "demo-admin-token-0123456789abcdef01234567"
TOKEN = "5a" * 32  # The phone's APNs device token (any 32 bytes: the emulator registers it).


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
        # The operator's dashboard (deploy/grafana-dashboard.json) has a series for each panel now.
        import importlib.util
        spec = importlib.util.spec_from_file_location("check_dashboard", os.path.join(os.path.dirname(__file__), "check-dashboard.py"))
        check = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(check)
        with urllib.request.urlopen(base + "/metrics", timeout=10) as answer:
            absent = check.missing(answer.read().decode())
        if absent:
            sys.exit(f"demo: series the Grafana dashboard queries are not exported: {absent}")
        print(f"7. every series of deploy/grafana-dashboard.json is exported (GET /metrics)")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
