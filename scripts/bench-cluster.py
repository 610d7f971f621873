#!/usr/bin/env python3
"""Benchmarks of several nodes (issue 13): one command runs `beckon bench server` on each
configuration back to back and prints one table.

Configurations (each on a fresh database, with a standalone `beckon apns-emulator`, started as
scripts/multi-node.py starts them, through beckonlib.node.Deployment):
- `sqlite`: one node on a SQLite file;
- `pg1`: one node on PostgreSQL;
- `pg3`: three nodes on one PostgreSQL database. `accept` spreads its posters round-robin over
  the three; `latency` opens device k's session on node k mod 3 and posts each message through
  another node than its recipient's, so what is measured is the cross-node path (the commit,
  the NOTIFY after it, the other node's mailbox read by cursor).

Modes: `accept` (durable messages/s), `latency` (post-to-frame p50/p99 at a fixed rate),
`delivery` (scripts/bench-delivery.py: N offline devices, one message each, pushes to the
emulator). Each mode runs on every configuration, configurations alternating, `--repeat` times.

    scripts/bench-cluster.py [--modes accept,latency] [--configs sqlite,pg1,pg3] [--repeat 2]
        [--database-url URL] [--accept-args "..."] [--latency-args "..."] [--delivery-args "..."]
        [--statements] [BECKON_BINARY]

PostgreSQL: --database-url (or BECKON_BENCH_POSTGRES_URL) names a server whose fsync is on;
without it the script starts its own with scripts/postgres.sh in BECKON_PG_DIR=$BECKON_BENCH_PG_DIR
(default /tmp/beckon-pg-bench-cluster; fsync on: never BECKON_PG_FAST for a benchmark) and leaves
it running for the next run (`BECKON_PG_DIR=... scripts/postgres.sh stop` removes it). Each
measurement creates and drops its own database. --statements loads pg_stat_statements into the
server this script started (one restart) and prints, per run, the statements by calls per message.

Before each measurement it waits until the 1-minute load average is below --max-load (0.8), for
at most --patience seconds in all (3600), and records the load it measured at. Beside each
PostgreSQL run it prints the database's work per message (pg_stat_database, pg_stat_user_tables,
pg_stat_wal deltas, taken after the nodes stopped) and the CPU seconds each process used.

Without a binary it builds `beckon` in release (scratch path .build-bench). Loopback only.
"""
import argparse, os, random, re, resource, shlex, subprocess, sys, tempfile, time

from beckonlib.measure import cpu_delta, cpu_snapshot, wait_for_quiet
from beckonlib.node import Deployment, release_binary
from beckonlib.postgres import pg_counters, pg_work, postgres_pids, psql, with_database

SECRET = "bench-cluster-secret-0123456789abcdef0123"
ADMIN = "bench-cluster-admin-0123456789abcdef01234"
CONFIGS = {"sqlite": 1, "pg1": 1, "pg3": 3}
HERE = os.path.dirname(os.path.abspath(__file__))
# A directory of its own: other sessions on the machine run their own throwaway servers.
OWN_PG_DIR = os.environ.get("BECKON_BENCH_PG_DIR", "/tmp/beckon-pg-bench-cluster")


def log(text):
    print(f"[bench-cluster] {text}", flush=True)


class Budget:
    """The load wait's patience, shared by every measurement."""

    def __init__(self, seconds, max_load):
        self.left, self.max_load = seconds, max_load

    def wait(self):
        started = time.time()
        load = wait_for_quiet(self.max_load, max(0, self.left), log)
        self.left -= time.time() - started
        return load


def postgres_url(args):
    url = args.database_url or os.environ.get("BECKON_BENCH_POSTGRES_URL")
    own = url is None
    if own:
        env = {k: v for k, v in os.environ.items() if k != "BECKON_PG_FAST"}
        env["BECKON_PG_DIR"] = OWN_PG_DIR
        url = subprocess.run([os.path.join(HERE, "postgres.sh"), "start"], env=env, check=True,
                             capture_output=True, text=True).stdout.strip().splitlines()[-1]
    settings = {name: psql(url, f"SHOW {name}") for name in ("fsync", "synchronous_commit", "full_page_writes", "server_version")}
    log(f"PostgreSQL {settings['server_version']} at {url} ({'started by this script in ' + OWN_PG_DIR if own else 'given'}): "
        f"fsync={settings['fsync']} synchronous_commit={settings['synchronous_commit']} full_page_writes={settings['full_page_writes']}")
    if settings["fsync"] != "on" or settings["synchronous_commit"] != "on":
        sys.exit("bench-cluster: this PostgreSQL does not flush its commits (fsync or synchronous_commit off): "
                 "a benchmark needs them on (scripts/postgres.sh without BECKON_PG_FAST)")
    # pg_stat_statements costs a little on every statement: loaded for --statements only.
    loaded = "pg_stat_statements" in psql(url, "SHOW shared_preload_libraries")
    if args.statements != loaded:
        if not own:
            if args.statements:
                sys.exit("bench-cluster: --statements needs pg_stat_statements in shared_preload_libraries")
            log("note: pg_stat_statements is loaded in this server (a small cost on every statement)")
            return url
        psql(url, "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'" if args.statements
             else "ALTER SYSTEM RESET shared_preload_libraries")
        pg_ctl = sorted(os.path.join(d, "bin", "pg_ctl") for d in
                        (os.path.join("/usr/lib/postgresql", v) for v in os.listdir("/usr/lib/postgresql")))[-1]
        # Its log as scripts/postgres.sh keeps it; the server must not inherit a pipe of ours.
        command = [pg_ctl, "-D", os.path.join(OWN_PG_DIR, "data"), "-l", os.path.join(OWN_PG_DIR, "server.log"),
                   "-m", "fast", "-w", "restart"]
        if os.getuid() == 0:
            command = ["runuser", "-u", "postgres", "--"] + command
        subprocess.run(command, check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        log(f"pg_stat_statements {'loaded' if args.statements else 'unloaded'} (the server restarted)")
    return url


def number(pattern, text, cast=float):
    found = re.search(pattern, text)
    return cast(found.group(1).replace(",", "")) if found else None


def measure_server(args, binary, mode, config, run, base_url, budget):
    nodes = CONFIGS[config]
    work = tempfile.mkdtemp(prefix=f"beckon-bench-cluster.{config}-{mode}.")
    database, url = None, None
    if config != "sqlite":
        database = f"beckon_bench_{random.randrange(1 << 32):08x}"
        psql(base_url, f"CREATE DATABASE {database}")
        url = with_database(base_url, database)
        if args.statements:
            psql(url, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    deployment = None
    try:
        deployment = Deployment(binary, work, SECRET, ADMIN, nodes=nodes, database_url=url,
                                sqlite_path=os.path.join(work, "beckon.sqlite"))
        started = time.time()
        load = budget.wait()
        # An idle backend reports its counts within 10 s: the nodes' start must not count here.
        time.sleep(max(0, started + 11 - time.time()))
        log(f"run {run}, {mode}, {config}: {nodes} node(s), load average {load:.2f}")
        groups = {"nodes": [deployment.nodes[n].process.pid for n in deployment.nodes], "emulator": [deployment.emulator_process.pid]}
        if url:
            groups["postgres"] = postgres_pids(url)
            if args.statements:
                psql(url, "SELECT pg_stat_statements_reset()")
            before = pg_counters(url)
        extra = shlex.split(args.accept_args if mode == "accept" else args.latency_args)
        command = [binary, "bench", "server", "--mode", mode, "--admin-token", ADMIN, "--app", "chat",
                   "--user-token-secret", SECRET] + sum((["--url", deployment.base(n)] for n in sorted(deployment.nodes)), []) + extra
        cpu_before, client_before = cpu_snapshot(groups), resource.getrusage(resource.RUSAGE_CHILDREN)
        output = subprocess.run(command, capture_output=True, text=True)
        client_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if url:
            groups["postgres"] = postgres_pids(url)  # Connections opened during the run.
        cpu = cpu_delta(cpu_before, cpu_snapshot(groups))
        cpu["client"] = (client_after.ru_utime + client_after.ru_stime) - (client_before.ru_utime + client_before.ru_stime)
        print(output.stdout, end="", flush=True)
        if output.returncode != 0:
            print(output.stderr, file=sys.stderr)
            raise RuntimeError(f"beckon bench server failed ({output.returncode})")
        deployment.stop()
        deployment = None
        text = output.stdout
        result = {"run": run, "mode": mode, "config": config, "load": load}
        if mode == "accept":
            result["rate"] = number(r"throughput: ([\d.]+) durable", text)
            result["messages"] = number(r"accepted \(2xx\): (\d+)", text, int)
            result["p50"] = number(r"POST latency p50: ([\d.]+)", text)
            result["p99"] = number(r"POST latency p50: [\d.]+ ms, p99: ([\d.]+)", text)
        else:
            result["messages"] = number(r"accepted \(2xx\): (\d+)", text, int)
            result["frames"] = number(r"frames received: (\d+)", text, int)
            result["achieved"] = number(r"achieved rate: ([\d.]+)", text)
            result["p50"] = number(r"post-to-frame latency p50: ([\d.]+)", text)
            result["p99"] = number(r"post-to-frame latency p50: [\d.]+ ms, p99: ([\d.]+)", text)
            result["p999"] = number(r"post-to-frame latency p50: [\d.]+ ms, p99: [\d.]+ ms, p999: ([\d.]+)", text)
        per = result["messages"] or 0
        if per:
            result["cpu"] = {group: seconds * 1e6 / per for group, seconds in cpu.items()}
            log("CPU per message (µs): " + ", ".join(f"{group} {value:.0f}" for group, value in sorted(result["cpu"].items())))
        if url:
            time.sleep(1)  # The nodes' backends report their counts as they exit.
            after = pg_counters(url)
            for line in pg_work(before, after, per, "message"):
                log(line)
            result["commits"] = (after["commits"] - before["commits"]) / per if per else None
            result["rows"] = sum(after[k] - before[k] for k in ("inserted", "updated", "deleted")) / per if per else None
            result["wal_syncs"] = (after["wal_syncs"] - before["wal_syncs"]) / per if per else None
            if args.statements:
                log(f"statements per message ({per} messages), by calls:")
                for line in psql(url, "SELECT calls, rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 140) "
                                      "FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database "
                                      "WHERE datname = current_database()) ORDER BY calls DESC LIMIT 25").splitlines():
                    calls, rows, query = line.split("|", 2)
                    log(f"  {int(calls) / per:8.3f} calls  {int(rows) / per:8.3f} rows  {query}")
        return result
    finally:
        if deployment:
            deployment.stop()
        if database:
            try:
                psql(base_url, f"DROP DATABASE {database} WITH (FORCE)")
            except subprocess.CalledProcessError:
                pass


def measure_delivery(args, binary, config, run, base_url, budget):
    """bench-delivery.py does its own waiting (after registering, before posting)."""
    nodes = CONFIGS[config]
    command = [sys.executable, os.path.join(HERE, "bench-delivery.py"), "--standalone-emulator", "--nodes", str(nodes),
               "--max-load", str(budget.max_load), "--patience", str(max(0, int(budget.left)))]
    if config != "sqlite":
        command += ["--database-url", base_url] + (["--statements"] if args.statements else [])
    command += shlex.split(args.delivery_args) + [binary]
    log(f"run {run}, delivery, {config}: {' '.join(command[1:])}")
    started = time.time()
    output = subprocess.run(command, capture_output=True, text=True)
    print(output.stdout, end="", flush=True)
    if output.returncode != 0:
        print(output.stderr, file=sys.stderr)
        raise RuntimeError(f"bench-delivery.py failed ({output.returncode})")
    text = output.stdout
    waited = number(r"waited ([\d.]+) s for the load", text) or 0
    budget.left -= waited
    return {"run": run, "mode": "delivery", "config": config, "load": number(r"load average ([\d.]+) at the first post", text),
            "devices": number(r"pushes accepted by the emulator: \d+ of (\d+)", text, int),
            "rate": number(r"([\d,]+) pushes/s", text), "p50": number(r"latency over \d+ sampled devices: p50 (\d+) ms", text),
            "p99": number(r"latency over \d+ sampled devices: p50 \d+ ms, p99 (\d+) ms", text),
            **work_of(text, "push"),
            "cpu": {group: float(value) for group, value in
                    re.findall(r"(nodes|postgres|emulator|node and its emulator) (\d+)", text.split("CPU per push", 1)[-1].split("\n")[0])},
            "elapsed": time.time() - started}


def work_of(text, unit):
    """commits, rows written and WAL fsyncs per unit, from a `pg_work` line in `text`."""
    found = re.search(rf"database work per {unit} \(.*?\): ([\d.]+) commits.*?rows ([\d.]+) inserted, ([\d.]+) updated, "
                      r"([\d.]+) deleted.*?([\d.]+) fsyncs", text)
    if not found:
        return {}
    values = [float(v) for v in found.groups()]
    return {"commits": values[0], "rows": sum(values[1:4]), "wal_syncs": values[4]}


def fmt(value, digits=0, comma=True):
    if value is None:
        return "-"
    return f"{value:,.{digits}f}" if comma else f"{value:.{digits}f}"


def table(results, max_load):
    print()
    print("| mode | configuration | run | load | figure | p50 / p99 (p999) | PostgreSQL per message or push: commits / rows written / WAL fsyncs | CPU µs per message or push: nodes / PostgreSQL / emulator / client |")
    print("|---|---|---|---|---|---|---|---|")
    names = {"sqlite": "1 node, SQLite", "pg1": "1 node, PostgreSQL", "pg3": "3 nodes, PostgreSQL"}
    for r in results:
        if "failed" in r:
            print(f"| {r['mode']} | {names[r['config']]} | {r['run']} | - | failed: {r['failed'][:80]} | - | - | - |")
            continue
        flag = "" if (r["load"] or 0) < max_load else " (over the limit)"
        load = f"{r['load']:.2f}{flag}" if r["load"] is not None else "-"
        work = "-" if r.get("commits") is None else \
            f"{r['commits']:.2f} / {fmt(r.get('rows'), 2)} / {fmt(r.get('wal_syncs'), 3)}"
        cpu = r.get("cpu") or {}
        cpu_text = " / ".join(fmt(cpu.get(g)) for g in ("nodes", "postgres", "emulator", "client")) if cpu else "-"
        if "node and its emulator" in cpu:
            cpu_text = f"{fmt(cpu['node and its emulator'])} (node with its built-in emulator)"
        if r["mode"] == "accept":
            figure = f"{fmt(r['rate'])} messages/s ({fmt(r['messages'])})"
            lat = f"POST {fmt(r['p50'], 1)} / {fmt(r['p99'], 1)} ms"
        elif r["mode"] == "latency":
            figure = f"{fmt(r['frames'])} of {fmt(r['messages'])} frames at {fmt(r['achieved'])}/s"
            lat = f"{fmt(r['p50'], 2)} / {fmt(r['p99'], 2)} ({fmt(r['p999'], 2)}) ms"
        else:
            figure = f"{fmt(r['rate'])} pushes/s ({fmt(r['devices'])} devices)"
            lat = f"{fmt(r['p50'])} / {fmt(r['p99'])} ms"
        print(f"| {r['mode']} | {names[r['config']]} | {r['run']} | {load} | {figure} | {lat} | {work} | {cpu_text} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary", nargs="?")
    parser.add_argument("--modes", default="accept,latency", help="accept, latency, delivery (comma-separated)")
    parser.add_argument("--configs", default="sqlite,pg1,pg3", help="sqlite, pg1, pg3 (comma-separated)")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--database-url", help="a PostgreSQL server (fsync on); default: start one")
    parser.add_argument("--accept-args", default="", help="extra `beckon bench server` arguments for accept")
    parser.add_argument("--latency-args", default="", help="extra `beckon bench server` arguments for latency")
    parser.add_argument("--delivery-args", default="--devices 100000", help="extra bench-delivery.py arguments")
    parser.add_argument("--max-load", type=float, default=0.8)
    parser.add_argument("--patience", type=float, default=3600, help="seconds of waiting for the load, in all")
    parser.add_argument("--statements", action="store_true", help="count statements with pg_stat_statements")
    args = parser.parse_args()
    modes, configs = args.modes.split(","), args.configs.split(",")
    if any(m not in ("accept", "latency", "delivery") for m in modes) or any(c not in CONFIGS for c in configs):
        sys.exit("bench-cluster: --modes from accept,latency,delivery; --configs from sqlite,pg1,pg3")
    binary = release_binary(args.binary)
    base_url = postgres_url(args) if any(c != "sqlite" for c in configs) else None
    log(f"binary {binary}; machine: {os.cpu_count()} cores; modes {modes}, configurations {configs}, {args.repeat} run(s) each")
    budget = Budget(args.patience, args.max_load)
    results = []
    try:
        for run in range(1, args.repeat + 1):
            for mode in modes:
                for config in configs:
                    # One failed measurement (a shared machine) costs its row, not the others.
                    try:
                        if mode == "delivery":
                            results.append(measure_delivery(args, binary, config, run, base_url, budget))
                        else:
                            results.append(measure_server(args, binary, mode, config, run, base_url, budget))
                    except (RuntimeError, subprocess.CalledProcessError) as error:
                        log(f"run {run}, {mode}, {config} failed: {error}")
                        results.append({"run": run, "mode": mode, "config": config, "load": None, "failed": str(error)})
    finally:
        table(results, args.max_load)


if __name__ == "__main__":
    main()
