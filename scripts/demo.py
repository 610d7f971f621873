#!/usr/bin/env python3
"""The whole path on a fresh machine, with no Apple account: starts `beckon serve` with one app
and no Apple key (so it starts its built-in APNs emulator), registers a device, posts a message
while the device is offline, shows the push the emulator received, then connects the device over
the sync protocol as an app woken by that push would, and shows the measured wake.

    scripts/demo.py [BECKON_BINARY]        # default: builds and uses .build/debug/beckon

Exits 0 when the push arrived and the wake was measured, 1 otherwise. Loopback only.
"""
import os, subprocess, sys, tempfile, time, urllib.request

from beckonlib.httpjson import free_port, request, wait_until
from beckonlib.node import Node
from beckonlib.websocket import SyncSession

SECRET = "demo-user-token-secret-0123456789abcdef"
ADMIN = "demo-admin-token-0123456789abcdef01234567"
TOKEN = "5a" * 32  # The phone's APNs device token (any 32 bytes: the emulator registers it).


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else None
    if binary is None:
        subprocess.run(["swift", "build", "--product", "beckon"], check=True)
        binary = ".build/debug/beckon"
    work = tempfile.mkdtemp(prefix="beckon-demo.")
    # No Apple key: the node starts its built-in emulator, whose control API shows the push. A
    # BECKON_DATABASE_URL in the environment puts the store on PostgreSQL instead (scripts/test.sh).
    server = Node(binary, work, secret=SECRET, admin=ADMIN, control=free_port(),
                  database=os.path.join(work, "beckon.sqlite"))
    log_path, base, port = server.log_path, server.base, server.port
    try:
        try:
            server.start(timeout=10)
        except RuntimeError:
            sys.exit("demo: the server did not start")
        emulator_line = next(line for line in open(log_path) if "built-in APNs emulator" in line)
        print("1. beckon serve, no Apple key:", emulator_line.split(": ", 1)[1].strip())

        _, key = request(base, "POST", "/v1/admin/apps/chat/keys", {}, ADMIN)
        registered = {"credential": server.register("alice", "alice-phone", token=TOKEN,
                                                    capabilities={"backgroundModes": ["remote-notification"]})}
        print("2. alice's phone registered; it is offline (no sync session)")

        status, posted = request(base, "POST", "/v1/messages", {
            "recipients": {"users": ["alice"]}, "kind": "message", "payload": {"text": "lunch?"},
            "notification": {"title": "Bob", "body": "lunch?"}}, key["key"])
        assert status == 202, posted
        print(f"3. the backend posted message {posted['id']}")

        received = wait_until(lambda: server.emulator.received(TOKEN), 5)
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
        server.stop()


if __name__ == "__main__":
    main()
