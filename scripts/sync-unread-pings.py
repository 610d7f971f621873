#!/usr/bin/env python3
"""The memory of a server whose sync client sends WebSocket pings and never reads: the pongs must
not pile up in the server (docs/sync-protocol.md: the session stops reading while its answers
cannot be written). One `beckon serve` on loopback of its own, so that nothing else moves its
memory.

    scripts/sync-unread-pings.py BECKON_BINARY [--mib 16] [--limit-mib 16]

A session says hello, then sends `--mib` MiB of 125-byte pings (64 in the long run) and reads
nothing. The server's anonymous memory (RssAnon) may grow at most `--limit-mib` MiB over what it
was before. A client that never reads can also stall itself: once its receive buffer is full,
its kernel drops the server's segments, acknowledgements included, and its sending backs off
for many seconds. Such an attempt is cut after 10 s and tried again (3 attempts at most); if
less than half the pings went out, the run is inconclusive, reported and not failed. Exits 0
when the growth is within the limit, 1 otherwise. Loopback only.
"""
import argparse, os, shutil, socket, sys, tempfile, time

from beckonlib.node import NO_RATE_LIMITS, Node
from beckonlib.websocket import RawSession, encode, frame

SECRET = "sync-unread-pings-secret-0123456789abcdef0123"
ADMIN = "sync-unread-pings-admin-0123456789abcdef012345"


def log(text):
    print(f"sync-unread-pings: {text}", flush=True)


def send_unread_pings(server, credential, megabytes):
    """WebSocket pings from a client that never reads: how much the server's memory grows. The
    growth is the highest the server's anonymous memory reached over the baseline."""
    baseline = server.memory("RssAnon") or 0
    peak, best, stalls, started = baseline, 0, 0, time.monotonic()
    one = frame(0x9, b"m" * 125, key=b"wxyz")
    chunk = one * (262144 // len(one))
    target = megabytes * 1048576
    for _ in range(3):
        conn = RawSession(server.port, credential)
        if conn.pump(frame(0x1, encode({"type": "hello", "version": 2, "cursor": 0}), key=b"abcd"),
                     until=lambda c: any(f.get("type") == "welcome" for f in c.texts), timeout=10) != "until":
            raise RuntimeError(f"no welcome ({conn.close_code} {conn.errors()})")
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
            raise RuntimeError(f"the connection failed after {sent} bytes: {error}")
        time.sleep(1.0)
        peak = max(peak, server.memory("RssAnon") or 0)
        conn.close()
        best = max(best, sent)
        if sent >= target:
            break
    return {"sent": best, "frames": best // len(one), "baseline": baseline, "peak": peak,
            "seconds": time.monotonic() - started, "stalls": stalls, "conclusive": best >= target // 2}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--mib", type=int, default=16, help="MiB of unread pings (64 in the long run)")
    parser.add_argument("--limit-mib", type=int, default=16, help="growth of the server's anonymous memory allowed")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="beckon-sync-unread-pings.")
    server = Node(os.path.abspath(args.binary), work, secret=SECRET, admin=ADMIN, env=NO_RATE_LIMITS)
    failed = []
    try:
        server.start()
        memory = send_unread_pings(server, server.register("memory", "memory-phone"), args.mib)
        growth = (memory["peak"] - memory["baseline"]) / 1024
        log(f"{memory['sent'] / 1048576:.0f} MiB of pings ({memory['frames']} frames) unread in "
            f"{memory['seconds']:.1f} s: the server's anonymous memory grew {growth:.0f} MiB "
            f"({memory['baseline'] // 1024} -> {memory['peak'] // 1024} MiB)"
            + (f"; {memory['stalls']} attempts stalled in the client's kernel" if memory["stalls"] else ""))
        if not memory["conclusive"] and growth <= args.limit_mib:
            log("inconclusive (less than half the pings went out); not counted as a failure")
        elif growth > args.limit_mib:
            failed.append(f"a client that sends pings and never reads made the server grow {growth:.0f} MiB "
                          f"for {memory['sent'] / 1048576:.0f} MiB sent (allowed {args.limit_mib} MiB): the pongs "
                          f"are buffered without bound")
        if server.stop(40) is None or server.returncode != 0:
            failed.append(f"the server did not exit 0 on SIGTERM: {server.crashed()}")
    finally:
        server.kill()
    for line in failed:
        log(f"FAIL {line}")
    if failed:
        log(f"FAILED; logs in {work}")
        return 1
    log(f"passed: growth within {args.limit_mib} MiB")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
