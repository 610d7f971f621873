#!/usr/bin/env python3
"""The per-message path (issue 14): one message per request, each to another offline device.

Starts a standalone `beckon apns-emulator` and one release `beckon serve` (SQLite, or a fresh
database of --database-url) with the app on the `content` strategy (so every message is an
alert, nothing is rationed), then runs `beckon bench server --mode pushes`: it registers
--devices devices with push tokens, none connected, and for each --connections value posts for
--seconds over that many keep-alive HTTP/1.1 connections, one message per request to the next
device, and reports messages accepted per second and the pushes the emulator accepted in the
same window (then waits until every accepted message is pushed). Before starting the server,
and again before each round (after the registration), it waits for a 1-minute load average
under --max-load.

    scripts/bench-pushes.py [--devices 50000] [--connections 16,64] [--seconds 10] [--repeat 3]
        [--database-url URL] [--max-load 0.8] [--env BECKON_KEY=VALUE ...] [BECKON_BINARY]

Without a binary it builds `beckon` in release (scratch path .build-bench). Loopback only.
"""
import argparse, os, random, subprocess, sys, tempfile

from beckonlib.measure import cpu_delta, cpu_snapshot, wait_for_quiet
from beckonlib.node import Deployment, release_binary
from beckonlib.postgres import postgres_pids, psql, with_database

SECRET = "bench-pushes-secret-0123456789abcdef01234"
ADMIN = "bench-pushes-admin-0123456789abcdef012345"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary", nargs="?")
    parser.add_argument("--devices", type=int, default=50_000)
    parser.add_argument("--connections", default="16,64", help="one round per value, comma-separated")
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--database-url", help="a PostgreSQL server (fsync on): a fresh database of it")
    parser.add_argument("--max-load", type=float, default=0.8)
    parser.add_argument("--patience", type=float, default=1800)
    parser.add_argument("--env", action="append", default=[], metavar="BECKON_KEY=VALUE",
                        help="a setting for the server (repeatable), e.g. BECKON_DATABASE_MMAP_MIB=0 for an A/B")
    args = parser.parse_args()
    binary = release_binary(args.binary)
    for run in range(1, args.repeat + 1):
        print(f"== run {run} of {args.repeat}", flush=True)
        measure(args, binary)


def measure(args, binary):
    work = tempfile.mkdtemp(prefix="beckon-bench-pushes.")
    database, url, deployment = None, None, None
    if args.database_url:
        database = f"beckon_pushes_{random.randrange(1 << 32):08x}"
        psql(args.database_url, f"CREATE DATABASE {database}")
        url = with_database(args.database_url, database)
    try:
        deployment = Deployment(binary, work, SECRET, ADMIN, database_url=url, sqlite_path=os.path.join(work, "beckon.sqlite"),
                                extra_env={"BECKON_APPS_CHAT_DELIVERY_STRATEGY": "content",
                                           **dict(setting.split("=", 1) for setting in args.env)})
        load = wait_for_quiet(args.max_load, args.patience, lambda text: print(text, flush=True))
        print(f"1 node on {'PostgreSQL' if url else 'SQLite'}, a standalone APNs emulator; load average {load:.2f}", flush=True)
        groups = {"node": [deployment.nodes[1].process.pid], "emulator": [deployment.emulator_process.pid]}
        if url:
            groups["postgres"] = postgres_pids(url)
        before = cpu_snapshot(groups)
        command = [binary, "bench", "server", "--mode", "pushes", "--url", deployment.base(1),
                   "--emulator-control", f"http://127.0.0.1:{deployment.control}", "--admin-token", ADMIN,
                   "--app", "chat", "--user-token-secret", SECRET, "--devices", str(args.devices),
                   "--seconds", str(args.seconds), "--max-load", str(args.max_load)] + sum((["--connections", c] for c in args.connections.split(",")), [])
        output = subprocess.run(command, capture_output=True, text=True)
        print(output.stdout, end="", flush=True)
        if url:
            groups["postgres"] = postgres_pids(url)
        cpu = cpu_delta(before, cpu_snapshot(groups))
        print("CPU seconds over registration and every round: "
              + ", ".join(f"{group} {seconds:.1f}" for group, seconds in sorted(cpu.items())), flush=True)
        if output.returncode != 0:
            print(output.stderr, file=sys.stderr)
            sys.exit(f"bench-pushes: beckon bench server failed ({output.returncode}); logs in {work}")
    finally:
        if deployment:
            deployment.stop()
        if database:
            psql(args.database_url, f"DROP DATABASE {database} WITH (FORCE)")


if __name__ == "__main__":
    main()
