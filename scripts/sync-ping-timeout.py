#!/usr/bin/env python3
"""The sync ping timeout (docs/sync-protocol.md, "Liveness"): a client that does not answer the
server's WebSocket pings is closed with 1001 "ping timeout" within two ping intervals, one that
answers stays. One `beckon serve` on loopback of its own, with sync.ping-interval-seconds 1.

    scripts/sync-ping-timeout.py BECKON_BINARY

The sessions, at once: silent after hello, sending JSON pings only (they are not an answer),
with a partial frame pending, silent before hello (each must be closed 1001 within 3.5 s), and
one that answers the pings (it must still work after 3.5 s and close with 1000 on bye). Then the
server must be alive and healthy, have logged no error, and exit 0 on SIGTERM. Exits 0 when every
check holds, 1 otherwise. Loopback only.
"""
import os, shutil, sys, tempfile, threading, time

from beckonlib.node import NO_RATE_LIMITS, Node
from beckonlib.websocket import RawSession, encode, frame

SECRET = "sync-ping-timeout-secret-0123456789abcdef0123"
ADMIN = "sync-ping-timeout-admin-0123456789abcdef012345"


def run(binary, work, results):
    """Each case on its own session at once; `results` gets (name, passed, what happened, frames)."""
    try:
        server = Node(binary, work, "ping-server", secret=SECRET, admin=ADMIN,
                      env=dict(NO_RATE_LIMITS, BECKON_SYNC_PING_INTERVAL_SECONDS="1"))
        server.start()
    except Exception as error:  # noqa: BLE001
        results.append(("start", False, f"the server did not start: {error}", 0))
        return
    try:
        cases = [("silent after hello", False, False), ("json pings only", False, True), ("partial frame pending", False, False),
                 ("answers the pings", True, False), ("silent before hello", False, False)]
        credentials = {name: server.register(f"pinger-{n}", f"pinger-{n}") for n, (name, _, _) in enumerate(cases)}
        threads = []

        def one(name, answers, json_pings):
            conn = RawSession(server.port, credentials[name])
            frames = 0
            try:
                if name != "silent before hello":
                    frames += 1
                    conn.pump(frame(0x1, encode({"type": "hello", "version": 2, "cursor": 0}), key=b"abcd"),
                              until=lambda c: any(f.get("type") == "welcome" for f in c.texts), timeout=10)
                if name == "partial frame pending":
                    frames += 1
                    conn.pump(frame(0x1, b'{"type":"ping"}', key=b"abcd")[:8], timeout=0.1)
                started = time.monotonic()
                if answers:
                    conn.pump(b"", timeout=3.5, answer_pings=True)
                    probe = frame(0x1, encode({"type": "ping", "id": "alive"}), key=b"abcd") + \
                        frame(0x1, encode({"type": "bye"}), key=b"abcd")
                    frames += 2
                    conn.pump(probe, timeout=5)
                    ok = conn.close_code == 1000 and any(f.get("id") == "alive" for f in conn.texts)
                    results.append((name, ok, f"after 3.5 s answering pings: close {conn.close_code}", frames))
                    return
                deadline = started + 6
                while time.monotonic() < deadline and conn.close_at is None and conn.eof_at is None:
                    if json_pings:
                        frames += 1
                        conn.pump(frame(0x1, encode({"type": "ping", "id": "j"}), key=b"abcd"), timeout=0.3,
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
        problems = [line[:300] for line in server.log_errors()]
        alive = server.process.poll() is None and server.healthy()
        results.append(("server", alive and not problems,
                        "alive and healthy" if alive else "NOT alive", 0))
        for line in problems[:5]:
            results.append(("log", False, line, 0))
    finally:
        code = server.returncode if server.stop(40) is not None else None
        results.append(("exit", code == 0, f"exit code {code} on SIGTERM", 0))


# --- Main ----------------------------------------------------------------------------------------


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    work = tempfile.mkdtemp(prefix="beckon-sync-ping-timeout.")
    started = time.monotonic()
    results = []
    run(os.path.abspath(sys.argv[1]), work, results)
    for name, ok, text, _ in results:
        print(f"  {'ok ' if ok else 'BAD'} {name}: {text}")
    failed = [name for name, ok, _, _ in results if not ok]
    if failed:
        print(f"sync-ping-timeout: FAILED {len(failed)} of {len(results)} checks ({', '.join(failed)}); logs in {work}")
        return 1
    print(f"sync-ping-timeout: passed: {len(results)} checks in {time.monotonic() - started:.1f} s")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
