#!/usr/bin/env python3
"""Kills `beckon serve` with SIGKILL in the middle of a load of posts, restarts it on the same
database, and checks that every message that got a 2xx is still there for its device.

Design rule 9: a message accepted with 2xx survives a crash. Usage:
    scripts/crash-durability.py BECKON_BINARY [--seconds 2] [--writers 16]
Exits 0 when nothing acknowledged was lost (and prints the counts), 1 otherwise.
"""
import argparse, os, sys, tempfile, threading, time

from beckonlib.httpjson import request
from beckonlib.node import Node

SECRET = "crash-test-secret-0123456789abcdef0123"
ADMIN = "crash-test-admin-0123456789abcdef0123456"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--writers", type=int, default=16)
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="beckon-crash.")
    # The default rate limits: a post refused with 429 is counted, not acknowledged.
    server = Node(args.binary, work, secret=SECRET, admin=ADMIN, database=os.path.join(work, "beckon.sqlite"))
    try:
        server.start(timeout=10)
    except RuntimeError as error:
        sys.exit(f"crash-durability: {error}")
    base = server.base
    key = server.issue_key()
    devices = {user: server.register(user, "device-" + user) for user in ("u1", "u2")}

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
                status, answer = request(base, "POST", "/v1/messages", body, key, timeout=5)
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
    server.kill()
    stop.set()
    for thread in threads:
        thread.join()
    with lock:
        accepted = list(acknowledged)
    print(f"crash-durability: {len(accepted)} messages acknowledged before SIGKILL "
          f"({errors['no answer']} requests cut off, {errors['refused']} refused)")

    try:
        server.start(timeout=10)
    except RuntimeError as error:
        sys.exit(f"crash-durability: {error}")
    missing = []
    try:
        for user, message_id in accepted:
            status, _ = request(base, "GET", "/v1/messages/" + message_id, token=devices[user])
            if status != 200:
                missing.append((user, message_id, status))
    finally:
        server.stop(timeout=20)
    if not accepted:
        sys.exit("crash-durability: nothing was acknowledged; the test proved nothing")
    if missing:
        print(f"crash-durability: LOST {len(missing)} acknowledged messages, e.g. {missing[:5]}")
        sys.exit(1)
    print(f"crash-durability: all {len(accepted)} acknowledged messages are there after the restart")


if __name__ == "__main__":
    main()
