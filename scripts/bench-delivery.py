#!/usr/bin/env python3
"""Delivery benchmark (issue 5, point 6): N registered offline devices, messages posted for them,
and how fast the pushes reach the APNs emulator.

Starts a release `beckon serve` with one app and no Apple key (so its pushes go to the built-in
APNs emulator, whose control API reports what it received), registers N devices (one user each,
`wake` strategy), then posts one message per user, 1,000 recipients per POST, as fast as the
server takes them. It reports:

- pushes reaching the emulator per second, from the first post to the last push accepted;
- post-to-APNs-request latency p50/p99 over a sample of devices: the emulator's `acceptedAt` of
  the device's push minus the moment the POST that carried its message was sent;
- the nodes' memory (RSS): before registering, with N devices, at its peak during the burst and
  after it (every device then has a saved planner state), and the growth per device;
- with --reconnect K: K sampled devices then connect over the sync protocol as woken apps would
  (hello, the message, ack, bye), the others never do, and once every reconnect window
  (--window seconds) has passed, the wake figures of `GET /v1/delivery/report`: connected within
  the window or not, wake success rate, push-to-connection latency.

    scripts/bench-delivery.py [--devices 100000] [--sample 2000] [--rate R] [--reconnect K --window S] [BECKON_BINARY]

With --rate the messages are posted at R a second (POSTs of --batch recipients, evenly spaced)
instead of all at once, so the latency is the pipeline's own rather than a queue's.

Several nodes (issue 13): --nodes N --database-url URL starts N nodes on a fresh database of that
PostgreSQL server (created, then dropped) and a standalone `beckon apns-emulator` they all push to
(beckonlib.node.Deployment, as scripts/multi-node.py does); registrations and POSTs go round-robin over
the nodes, and every node sends pushes from the shared outbox. --standalone-emulator uses that
emulator with one SQLite node too (the same APNs path for a side-by-side figure). On PostgreSQL it
also prints the database's work per push (pg_stat_* deltas over the posting and sending).

With --webhook the app has a webhook (docs/webhooks.md) to a receiver on loopback
(scripts/webhook-receiver.py, a process of its own, checking every signature): the run then also
reports the events the receiver took (each message's `accepted` and `pushed`), how fast
(first to last event, beside the pushes' own rate in the same run: the ratio says whether the
webhook keeps up with the burst), how long after the last push the last event arrived, duplicates
and order. --receiver-down S makes the receiver answer 500 for its first S seconds: the events
wait in the store (the node's memory is reported as before) and arrive once it is back.
--webhook-backlog N sets `webhook.backlog`.

Between registering and posting it waits until the 1-minute load average is below --max-load
(0.8; 0: no wait), at most --patience seconds: registering loads the machine itself.

Without a binary it builds `beckon` in release (scratch path .build-bench). Loopback only.
"""
import argparse, http.client, json, os, random, subprocess, sys, tempfile, threading, time
from concurrent.futures import ThreadPoolExecutor

from beckonlib.httpjson import free_port, user_token as signed_user_token
from beckonlib.measure import cpu_delta, cpu_snapshot, rss_kib, wait_for_quiet
from beckonlib.node import Deployment, release_binary
from beckonlib.postgres import pg_counters, pg_work, postgres_pids, psql, with_database
from beckonlib.websocket import SyncSession

SECRET = "bench-delivery-secret-0123456789abcdef01"
ADMIN = "bench-delivery-admin-0123456789abcdef0123"
WEBHOOK_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"




class Client:
    """One keep-alive HTTP/1.1 connection per thread and port."""
    local = threading.local()
    # Bumped by `reconnect`: every thread opens a new connection for its next request.
    generation = 0

    def __init__(self, port):
        self.port = port

    @classmethod
    def reconnect(cls):
        """After a pause longer than the server's idle timeout (`http.idle-seconds`), which closes
        idle keep-alive connections: a request on one of those would fail."""
        cls.generation += 1

    def request(self, method, path, body=None, token=None):
        if getattr(self.local, "generation", None) != Client.generation:
            for stale in getattr(self.local, "connections", {}).values():
                stale.close()
            self.local.connections, self.local.generation = {}, Client.generation
        connection = self.local.connections.get(self.port)
        if connection is None:
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            self.local.connections[self.port] = connection
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = "Bearer " + token
        try:
            connection.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
            response = connection.getresponse()
            return response.status, json.loads(response.read() or b"null")
        except (http.client.HTTPException, OSError):
            self.local.connections.pop(self.port, None)
            raise




def token_of(index):
    return f"{index:064x}"


def percentile(values, fraction):
    values = sorted(values)
    return values[min(len(values) - 1, max(0, int(round(fraction * len(values) + 0.5)) - 1))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary", nargs="?")
    parser.add_argument("--devices", type=int, default=100_000)
    parser.add_argument("--sample", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--rate", type=float, default=0, help="messages a second; 0: as fast as possible")
    parser.add_argument("--batch", type=int, default=1000, help="recipients per POST")
    parser.add_argument("--reconnect", type=int, default=0, help="sampled devices that connect after their push")
    parser.add_argument("--window", type=int, help="the app's reconnect window, seconds (60 with --reconnect, else 3600)")
    parser.add_argument("--nodes", type=int, default=1, help="nodes (more than one needs --database-url)")
    parser.add_argument("--database-url", help="a PostgreSQL server: the nodes run on a fresh database of it")
    parser.add_argument("--standalone-emulator", action="store_true",
                        help="push to a separate `beckon apns-emulator` (implied by --nodes and --database-url)")
    parser.add_argument("--max-load", type=float, default=0.8, help="wait for a lower load average before posting; 0: no wait")
    parser.add_argument("--patience", type=float, default=3600, help="seconds to wait for the load at most")
    parser.add_argument("--webhook", action="store_true", help="the app has a webhook to a loopback receiver")
    parser.add_argument("--receiver-down", type=float, default=0, help="seconds the receiver answers 500 at first")
    parser.add_argument("--webhook-backlog", type=int, help="webhook.backlog (default Beckon's)")
    parser.add_argument("--statements", action="store_true",
                        help="PostgreSQL: statements by calls per push (needs pg_stat_statements preloaded)")
    args = parser.parse_args()
    # Without reconnects, a window longer than the run: a missed wake's escalation (a second
    # push, rule 4) must not be counted as the fan-out's.
    if args.window is None:
        args.window = 60 if args.reconnect else 3600
    if args.nodes < 1 or (args.nodes > 1 and not args.database_url):
        sys.exit("bench-delivery: several nodes need --database-url (one PostgreSQL database)")
    binary = release_binary(args.binary)

    work = tempfile.mkdtemp(prefix="beckon-bench-delivery.")
    database, database_url = None, None
    if args.database_url:
        database = f"beckon_delivery_{random.randrange(1 << 32):08x}"
        psql(args.database_url, f"CREATE DATABASE {database}")
        database_url = with_database(args.database_url, database)
        if args.statements:
            psql(database_url, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    deployment, server = None, None
    window = {"BECKON_APPS_CHAT_DELIVERY_RECONNECT_WINDOW_SECONDS": str(args.window)}
    receiver = None
    if args.webhook or args.receiver_down:
        receiver = start_receiver(work, args.receiver_down)
        window.update(BECKON_APPS_CHAT_WEBHOOK_URL=f"http://127.0.0.1:{receiver.port}/hooks",
                      BECKON_APPS_CHAT_WEBHOOK_SECRET=WEBHOOK_SECRET)
        if args.webhook_backlog:
            window["BECKON_APPS_CHAT_WEBHOOK_BACKLOG"] = str(args.webhook_backlog)
    try:
        if args.standalone_emulator or database_url:
            deployment = Deployment(binary, work, SECRET, ADMIN, nodes=args.nodes, database_url=database_url,
                                    sqlite_path=os.path.join(work, "beckon.sqlite"), extra_env=window)
            ports, control = [deployment.port(n) for n in sorted(deployment.nodes)], deployment.control
            print(f"{args.nodes} node(s) on {'PostgreSQL' if database_url else 'SQLite'}, a standalone APNs emulator")
        else:
            port, control = free_port(), free_port()
            env = dict(os.environ,
                       BECKON_HTTP_PORT=str(port), BECKON_DATABASE_PATH=os.path.join(work, "beckon.sqlite"),
                       BECKON_ADMIN_TOKEN=ADMIN, BECKON_APPS_IDS="chat", BECKON_APPS_CHAT_BUNDLE_ID="com.example.chat",
                       BECKON_APPS_CHAT_TEAM_ID="TEAM123456", BECKON_APPS_CHAT_USER_TOKEN_SECRET=SECRET,
                       BECKON_APNS_EMULATOR_CONTROL_PORT=str(control),
                       BECKON_LIMITS_REGISTRATIONS_PER_MINUTE="0", BECKON_LIMITS_MESSAGES_PER_SECOND="0", **window)
            server = subprocess.Popen([binary, "serve"], env=env, stdout=open(os.path.join(work, "server.log"), "wb"),
                                      stderr=subprocess.STDOUT)
            ports = [port]
        run(args, ports, control, deployment, server, database_url, receiver)
    finally:
        if receiver and receiver.poll() is None:
            receiver.terminate()
        if deployment:
            deployment.stop()
        if server:
            server.terminate()
            server.wait(timeout=60)
        if database:
            try:
                psql(args.database_url, f"DROP DATABASE {database} WITH (FORCE)")
            except subprocess.CalledProcessError:
                pass


def start_receiver(work, fail_seconds):
    port = free_port()
    receiver = subprocess.Popen(
        [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "webhook-receiver.py"),
         "--port", str(port), "--secret", WEBHOOK_SECRET, "--summary", os.path.join(work, "receiver.json"),
         "--fail-seconds", str(fail_seconds)])
    receiver.port, receiver.summary_path = port, os.path.join(work, "receiver.json")
    return receiver


def report_webhook(receiver, api, key, expected, last_push, push_rate, node_pids, rss_peak, receiver_down=0):
    """Waits until the webhook has nothing waiting and the receiver has the events (past the
    receiver's time down, and the retries' longest wait after it), then stops the receiver and
    prints what it took."""
    deadline, status, anon_peak = time.time() + receiver_down + 600, {}, 0
    while time.time() < deadline:
        rss_peak = max(rss_peak, rss_kib(node_pids))
        anon_peak = max(anon_peak, rss_kib(node_pids, "RssAnon"))
        _, status = api.request("GET", "/v1/webhook", token=key)
        if status.get("behind") == 0 and int(status.get("cursor", "0")) > 0 and time.time() - last_push > 1:
            break
        time.sleep(0.1)
    receiver.terminate()
    receiver.wait(timeout=30)
    with open(receiver.summary_path) as handle:
        summary = json.load(handle)
    span = (summary["last"] - summary["first"]) if summary["first"] else 0
    rate = summary["events"] / span if span > 0 else 0
    print(f"webhook: the receiver took {summary['events']} events ({summary['distinct']} distinct, "
          f"{summary['duplicates']} duplicates, {'in ascending order' if summary['ascending'] else 'OUT OF ORDER'}), "
          f"types {summary['types']}, requests by status {summary['statuses']}, bad signatures {summary['badSignatures']}")
    catching_up = " catching up on what waited while it answered 500" if summary["statuses"].get("500") else ""
    print(f"webhook: {rate:,.0f} events/s at the receiver{catching_up} (first to last event, {span:.2f} s); the pushes' "
          f"{push_rate:,.0f}/s × 2 events a message = {2 * push_rate:,.0f} events/s made: ratio {rate / (2 * push_rate) if push_rate else 0:.2f}; "
          f"last event {summary['last'] - last_push if summary['last'] else 0:+.2f} s after the last push; "
          f"status behind {status.get('behind')}, dropped {status.get('dropped')}; node RSS peak {rss_peak / 1024:.0f} MiB "
          f"(anonymous {anon_peak / 1024:.0f} MiB at most while the webhook caught up: SQLite's page caches, "
          f"up to `database.cache-mib` for each connection, are in it)")
    if summary["distinct"] < expected:
        sys.exit(f"bench-delivery: the receiver took {summary['distinct']} distinct events of {expected}")


def run(args, ports, control, deployment, server, database_url, receiver=None):
    apis, emulator = [Client(port) for port in ports], Client(control)
    api, port = apis[0], ports[0]
    for _ in range(400):
        try:
            if api.request("GET", "/health")[0] == 200:
                break
        except OSError:
            time.sleep(0.05)
    _, key = api.request("POST", "/v1/admin/apps/chat/keys", {}, ADMIN)
    key = key["key"]
    # Server memory (issue 14, point 7): the nodes' resident set before registering, after it,
    # at its peak during the burst (sampled every 50 ms) and once every push is out.
    node_pids = [node.process.pid for node in deployment.nodes.values()] if deployment else [server.pid]
    rss_start = rss_kib(node_pids)

    started = time.time()

    credentials = {}

    def register(index):
        status, answer = apis[index % len(apis)].request("POST", "/v1/devices", {
            "deviceId": f"d{index}", "bundleId": "com.example.chat", "environment": "sandbox",
            "tokens": {"remote": token_of(index)}, "capabilities": {"backgroundModes": ["remote-notification"]},
        }, signed_user_token(SECRET, "chat", f"u{index}", lifetime=3600))
        assert status == 201, answer
        credentials[index] = answer["credential"]

    with ThreadPoolExecutor(args.threads) as pool:
        list(pool.map(register, range(args.devices)))
    print(f"registered {args.devices} devices in {time.time() - started:.1f} s (none connected)"
          + (f", round-robin over {len(apis)} nodes" if len(apis) > 1 else ""), flush=True)
    registered = time.time()
    rss_registered = rss_kib(node_pids)
    if args.max_load > 0:
        waiting = time.time()
        load = wait_for_quiet(args.max_load, args.patience, lambda text: print(text, flush=True))
        print(f"waited {time.time() - waiting:.0f} s for the load; load average {load:.2f} at the first post", flush=True)
        Client.reconnect()
    if database_url:
        # An idle backend reports its counts within 10 s: the registrations' must not count here.
        time.sleep(max(0, registered + 11 - time.time()))
        groups = {"nodes": [node.process.pid for node in deployment.nodes.values()], "emulator": [deployment.emulator_process.pid],
                  "postgres": postgres_pids(database_url)}
        if args.statements:
            psql(database_url, "SELECT pg_stat_statements_reset()")
        counters_before = pg_counters(database_url)
    elif deployment:
        groups = {"nodes": [node.process.pid for node in deployment.nodes.values()], "emulator": [deployment.emulator_process.pid]}
    else:
        groups = {"node and its emulator": [server.pid]}
    cpu_before = cpu_snapshot(groups)

    posted_at = {}

    def post(batch):
        users = [f"u{index}" for index in batch]
        sent = time.time()
        # POSTs round-robin over the nodes (one connection per thread and node).
        status, answer = apis[batch[0] // args.batch % len(apis)].request("POST", "/v1/messages", {
            "recipients": {"users": users}, "kind": "message", "payload": {"n": batch[0]}}, key)
        assert status == 202, answer
        for index in batch:
            posted_at[index] = sent

    batches = [list(range(start, min(start + args.batch, args.devices))) for start in range(0, args.devices, args.batch)]
    first_post = time.time()
    if args.rate > 0:
        interval = args.batch / args.rate
        for number, batch in enumerate(batches):
            time.sleep(max(0, first_post + number * interval - time.time()))
            post(batch)
    else:
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(post, batches))
    posting = time.time() - first_post
    print(f"posted {args.devices} messages ({len(batches)} POSTs of up to {args.batch} recipients) in {posting:.2f} s")

    delivered, last_change, previous = 0, time.time(), -1
    rss_peak = rss_kib(node_pids)
    while delivered < args.devices and time.time() - last_change < 30:
        rss_peak = max(rss_peak, rss_kib(node_pids))
        _, counters = emulator.request("GET", "/counters")
        delivered = counters["byStatus"].get("200", 0)
        if delivered != previous:
            previous, last_change = delivered, time.time()
        time.sleep(0.05)
    if database_url:
        groups["postgres"] = postgres_pids(database_url)  # Connections opened meanwhile.
    cpu = cpu_delta(cpu_before, cpu_snapshot(groups))
    sample = range(0, args.devices, max(1, args.devices // args.sample))
    latencies, last_accepted = [], 0.0
    for index in sample:
        _, received = emulator.request("GET", f"/devices/{token_of(index)}/received")
        pushes = received.get("notifications", []) if isinstance(received, dict) else []
        if pushes:
            accepted = pushes[0]["acceptedAt"] / 1000
            latencies.append(accepted - posted_at[index])
    # The last push's time: when the counter stopped moving (polled every 50 ms).
    elapsed = last_change - first_post
    print(f"pushes accepted by the emulator: {delivered} of {args.devices} "
          f"in {elapsed:.2f} s from the first post: {delivered / elapsed:,.0f} pushes/s")
    if latencies:
        print(f"post-to-APNs-request latency over {len(latencies)} sampled devices: "
              f"p50 {percentile(latencies, 0.5) * 1000:.0f} ms, p99 {percentile(latencies, 0.99) * 1000:.0f} ms, "
              f"max {max(latencies) * 1000:.0f} ms")
    if delivered:
        print("CPU per push (µs), from the first post to the last push: "
              + ", ".join(f"{group} {seconds * 1e6 / delivered:.0f}" for group, seconds in sorted(cpu.items())))
    rss_end, anon_end = rss_kib(node_pids), rss_kib(node_pids, "RssAnon")
    print(f"node memory (RSS, MiB): {rss_start / 1024:.0f} before registering, {rss_registered / 1024:.0f} with "
          f"{args.devices} devices, peak {rss_peak / 1024:.0f} during the burst, {rss_end / 1024:.0f} after it "
          f"(each device with its planner state: {(rss_end - rss_start) * 1024 / args.devices:,.0f} bytes); "
          f"after it, {anon_end / 1024:.0f} MiB anonymous (the rest is file pages: the binary, its libraries, and the database if `database.mmap-mib` maps it)")
    if delivered < args.devices:
        sys.exit(f"bench-delivery: only {delivered} of {args.devices} pushes arrived")
    if receiver:
        report_webhook(receiver, api, key, 2 * args.devices, first_post + elapsed, delivered / elapsed, node_pids, rss_peak,
                       args.receiver_down)
    if args.reconnect:
        report_wakes(args, api, key, credentials, list(sample)[:args.reconnect], port)
    elif database_url:
        # Counted once the nodes stopped: their backends report as they exit.
        deployment.stop()
        time.sleep(1)
        for line in pg_work(counters_before, pg_counters(database_url), delivered, "push", "pushes"):
            print(line)
        if args.statements:
            print_statements(database_url, delivered, "push")


def print_statements(url, per, unit):
    print(f"statements per {unit} ({per}), by calls:")
    for line in psql(url, "SELECT calls, rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 140) FROM pg_stat_statements "
                          "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) "
                          "ORDER BY calls DESC LIMIT 25").splitlines():
        calls, rows, query = line.split("|", 2)
        print(f"  {int(calls) / per:8.3f} calls  {int(rows) / per:8.3f} rows  {query}")


def report_wakes(args, api, key, credentials, devices, port):
    """Woken apps connect (within their window, since they connect now), the rest never do;
    once every window is over, the report says what was measured (rule 10)."""
    started = time.time()

    def woken(index):
        session = SyncSession(port, credentials[index])
        session.send({"type": "hello", "version": 2, "cursor": 0})
        assert session.receive()["type"] == "welcome"
        message = session.receive()
        session.send({"type": "ack", "upTo": message["seq"]})
        session.send({"type": "bye"})
        session.close()

    with ThreadPoolExecutor(args.threads) as pool:
        list(pool.map(woken, devices))
    print(f"{len(devices)} devices connected as woken apps in {time.time() - started:.1f} s")
    # Every other device's window ends (its wake is missed) and the planner records it.
    deadline = time.time() + args.window + 120
    while True:
        _, report = api.request("GET", "/v1/delivery/report", token=key)
        wakes = [kind for kind in report["kinds"] if kind["category"] == "wake"]
        measured = sum(kind["connectedWithinWindow"] + kind["notConnectedWithinWindow"] for kind in wakes)
        if measured >= sum(kind["pushes"] for kind in wakes) or time.time() > deadline:
            break
        time.sleep(1)
    print(f"measured {measured} wakes {time.time() - started:.1f} s after the first connection")
    for kind in report["kinds"]:
        latency = kind.get("latencySeconds") or {}
        print(f"report: {kind['reason']}/{kind['strategy']} ({kind['category']}): {kind['pushes']} pushes, "
              f"connected within the window {kind['connectedWithinWindow']}, not {kind['notConnectedWithinWindow']}, "
              f"wake success rate {kind.get('wakeSuccessRate')}, latency p50 {latency.get('p50')} s p99 {latency.get('p99')} s")
    print(f"report: wake success rate over all wakes {report.get('wakeSuccessRate')}, escalations {report['escalations']}, "
          f"unreachable devices {report['unreachableDevices']}")


if __name__ == "__main__":
    main()
