#!/usr/bin/env python3
"""Kills `beckon serve` with SIGKILL in the middle of a load of posts, restarts it on the same
database, and checks that every message that got a 2xx is still there for its device.

Design rule 9: a message accepted with 2xx survives a crash. Usage:
    scripts/crash-durability.py BECKON_BINARY [--seconds 2] [--writers 16]
Exits 0 when nothing acknowledged was lost (and prints the counts), 1 otherwise.
"""
import argparse, json, os, signal, subprocess, sys, tempfile, threading, time

from beckonlib import free_port, request, user_token as signed_user_token

SECRET = "crash-test-secret-0123456789abcdef0123"
ADMIN = "crash-test-admin-0123456789abcdef0123456"


def user_token(app, user):
    return signed_user_token(SECRET, app, user)








def start(binary, port, database, log):
    env = dict(os.environ,
               BECKON_HTTP_PORT=str(port), BECKON_DATABASE_PATH=database, BECKON_ADMIN_TOKEN=ADMIN,
               BECKON_APPS_IDS="chat", BECKON_APPS_CHAT_BUNDLE_ID="com.example.chat",
               BECKON_APPS_CHAT_TEAM_ID="TEAM123456", BECKON_APPS_CHAT_USER_TOKEN_SECRET=SECRET)
    process = subprocess.Popen([binary, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            if request(base, "GET", "/health", timeout=1)[0] == 200:
                return process, base
        except OSError:
            pass
        if process.poll() is not None:
            sys.exit(f"crash-durability: the server exited early (code {process.returncode})")
        time.sleep(0.05)
    process.kill()
    sys.exit("crash-durability: the server did not answer /health")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--writers", type=int, default=16)
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="beckon-crash.")
    database = os.path.join(work, "beckon.sqlite")
    log = open(os.path.join(work, "server.log"), "ab")
    port = free_port()
    server, base = start(args.binary, port, database, log)

    status, key = request(base, "POST", "/v1/admin/apps/chat/keys", {}, ADMIN)
    assert status == 201, (status, key)
    devices = {}
    for user in ("u1", "u2"):
        status, answer = request(base, "POST", "/v1/devices", {
            "deviceId": "device-" + user, "bundleId": "com.example.chat", "environment": "sandbox",
            "tokens": {"remote": os.urandom(32).hex()},
        }, user_token("chat", user))
        assert status == 201, (status, answer)
        devices[user] = answer["credential"]

    acknowledged = []  # (user, message id) of every 2xx
    lock = threading.Lock()
    stop = threading.Event()
    errors = {"refused": 0, "no answer": 0}

    def writer(number):
        sequence = 0
        while not stop.is_set():
            sequence += 1
            user = "u1" if sequence % 2 else "u2"
            body = {"recipients": {"users": [user]}, "kind": "message",
                    "payload": {"writer": number, "n": sequence}}
            try:
                status, answer = request(base, "POST", "/v1/messages", body, key["key"], timeout=5)
            except OSError:
                with lock:
                    errors["no answer"] += 1  # Killed mid-request: not acknowledged, may or may not exist.
                continue
            with lock:
                if 200 <= status < 300:
                    acknowledged.append((user, answer["id"]))
                else:
                    errors["refused"] += 1

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(args.writers)]
    for thread in threads:
        thread.start()
    time.sleep(args.seconds)
    server.send_signal(signal.SIGKILL)  # No shutdown, no flush: the crash.
    server.wait()
    stop.set()
    for thread in threads:
        thread.join()
    with lock:
        accepted = list(acknowledged)
    print(f"crash-durability: {len(accepted)} messages acknowledged before SIGKILL "
          f"({errors['no answer']} requests cut off, {errors['refused']} refused)")

    server, base = start(args.binary, port, database, log)
    missing = []
    try:
        for user, message_id in accepted:
            status, _ = request(base, "GET", "/v1/messages/" + message_id, token=devices[user])
            if status != 200:
                missing.append((user, message_id, status))
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=20)
    if not accepted:
        sys.exit("crash-durability: nothing was acknowledged; the test proved nothing")
    if missing:
        print(f"crash-durability: LOST {len(missing)} acknowledged messages, e.g. {missing[:5]}")
        sys.exit(1)
    print(f"crash-durability: all {len(accepted)} acknowledged messages are there after the restart")


if __name__ == "__main__":
    main()
