"""Helpers the Python scripts share: a free loopback port, JSON over HTTP, the user token an
app's backend signs (an HS256 JWT with `aud` = app id and `sub` = user id), and a minimal sync
client."""
import base64, hashlib, hmac, json, os, socket, time
import urllib.error, urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(base, method, path, body=None, token=None, timeout=10):
    """(status, parsed JSON body); HTTP errors are answers too."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def user_token(secret, app, user, lifetime=600):
    def b64(raw):
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = b64(json.dumps({"aud": app, "sub": user, "exp": int(time.time()) + lifetime}).encode())
    signature = hmac.new(secret.encode(), f"{header}.{claims}".encode(), hashlib.sha256).digest()
    return f"{header}.{claims}.{b64(signature)}"


class SyncSession:
    """The smallest WebSocket client that speaks docs/sync-protocol.md (v2): text frames, masked."""

    def __init__(self, port, credential, timeout=10):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((
            f"GET /v1/sync HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: beckon.v2\r\n"
            f"Authorization: Bearer {credential}\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            byte = self.sock.recv(1)
            if not byte:
                # The server closed mid-upgrade (a node killed): fail, not read nothing for ever.
                self.sock.close()
                raise ConnectionError("the server closed the connection during the upgrade")
            head += byte
        if not head.startswith(b"HTTP/1.1 101"):
            self.sock.close()
            raise ConnectionError(f"the sync upgrade was refused: {head.decode(errors='replace')}")

    def send(self, frame):
        payload = json.dumps(frame).encode()
        mask = os.urandom(4)
        length = len(payload)
        header = bytes([0x81]) + (bytes([0x80 | length]) if length < 126 else bytes([0x80 | 126]) + length.to_bytes(2, "big"))
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def receive(self):
        while True:
            opcode, payload = self.receive_frame()
            if opcode == 0x1:
                return json.loads(payload)
            if opcode == 0x8:
                self.closed_with = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else None
                raise ConnectionError(f"the server closed the sync session ({self.closed_with})")

    def receive_frame(self):
        """The next frame as (opcode, payload bytes): 0x1 text, 0x8 close (2-byte code first)."""
        first, second = self._exactly(2)
        length = second & 0x7F
        if length == 126:
            length = int.from_bytes(self._exactly(2), "big")
        elif length == 127:
            length = int.from_bytes(self._exactly(8), "big")
        return first & 0x0F, self._exactly(length)

    def close_code(self):
        """Reads until the server's close frame and returns its code (None if the socket ended)."""
        if hasattr(self, "closed_with"):
            return self.closed_with
        try:
            while True:
                opcode, payload = self.receive_frame()
                if opcode == 0x8:
                    return int.from_bytes(payload[:2], "big") if len(payload) >= 2 else None
        except (ConnectionError, OSError):
            return None

    def _exactly(self, count):
        data = b""
        while len(data) < count:
            chunk = self.sock.recv(count - len(data))
            if not chunk:
                raise ConnectionError("the server closed the sync session")
            data += chunk
        return data

    def close(self):
        self.sock.close()


# --- Benchmarks of several nodes (issue 13): bench-cluster.py and bench-delivery.py ---------------
# The same way scripts/multi-node.py starts them: a standalone `beckon apns-emulator` with a
# generated P-256 key, and nodes configured through BECKON_* environment variables.

def psql(url, sql):
    """One statement through psql; its output, unaligned and tuples only."""
    import subprocess
    return subprocess.run(["psql", url, "-Atq", "-v", "ON_ERROR_STOP=1", "-c", sql], check=True,
                          capture_output=True, text=True).stdout.strip()


def with_database(url, name):
    """`url` with its database replaced by `name`."""
    import urllib.parse
    return urllib.parse.urlunparse(urllib.parse.urlparse(url)._replace(path="/" + name))


def release_binary(binary=None):
    """`binary` as an absolute path; without one, `beckon` built in release (scratch path
    .build-bench, so a benchmark's build does not replace the debug one)."""
    import subprocess
    if binary is None:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        subprocess.run(["swift", "build", "-c", "release", "--product", "beckon", "--scratch-path", ".build-bench"],
                       cwd=root, check=True)
        binary = os.path.join(root, ".build-bench", "release", "beckon")
    return os.path.abspath(binary)


def wait_until(predicate, seconds, step=0.05):
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    return predicate()


class Deployment:
    """A standalone APNs emulator and `nodes` `beckon serve` processes for one app (`chat`): on one
    PostgreSQL database (`database_url`) or, with one node, on a SQLite file (`sqlite_path`).
    `extra_env` adds or overrides BECKON_* settings. Logs go to `work`."""

    KEY_ID, TEAM = "BENCHKEY01", "TEAM123456"

    def __init__(self, binary, work, secret, admin, nodes=1, database_url=None, sqlite_path=None, extra_env=None):
        import subprocess
        assert database_url or (sqlite_path and nodes == 1), "several nodes need PostgreSQL"
        self.binary, self.work, self.nodes = binary, work, {}
        key = os.path.join(work, "key.p8")
        subprocess.run(f"openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out {key}",
                       shell=True, check=True)
        self.apns_port, self.control = free_port(), free_port()
        self.emulator = subprocess.Popen(
            [binary, "apns-emulator", "--listen", f"127.0.0.1:{self.apns_port}", "--control", f"127.0.0.1:{self.control}",
             "--auth-key", f"{self.KEY_ID}:{self.TEAM}:{key}", "--auto-register", "--state-dir", work],
            stdout=open(os.path.join(work, "emulator.log"), "wb"), stderr=subprocess.STDOUT)
        if not wait_until(lambda: self._control_ok(), 20):
            raise RuntimeError(f"the APNs emulator did not start (see {work}/emulator.log)")
        store = {"BECKON_DATABASE_URL": database_url} if database_url else {"BECKON_DATABASE_PATH": sqlite_path}
        self.env = dict(os.environ, **store,
                        BECKON_ADMIN_TOKEN=admin, BECKON_APPS_IDS="chat",
                        BECKON_APPS_CHAT_BUNDLE_ID="com.example.chat", BECKON_APPS_CHAT_TEAM_ID=self.TEAM,
                        BECKON_APPS_CHAT_USER_TOKEN_SECRET=secret, BECKON_APPS_CHAT_APNS_KEY_PATH=key,
                        BECKON_APPS_CHAT_APNS_KEY_ID=self.KEY_ID, BECKON_APPS_CHAT_APNS_HOST="127.0.0.1",
                        BECKON_APPS_CHAT_APNS_PORT=str(self.apns_port),
                        BECKON_APPS_CHAT_APNS_CA_FILE=os.path.join(work, "ca.pem"),
                        # A benchmark measures the server, not its rate limits.
                        BECKON_LIMITS_MESSAGES_PER_SECOND="0", BECKON_LIMITS_REGISTRATIONS_PER_MINUTE="0",
                        BECKON_LIMITS_SYNC_CONNECTS_PER_MINUTE="0", **(extra_env or {}))
        # Started one after the other: the first migrates the database, the others find it done.
        for n in range(1, nodes + 1):
            self.start(n)

    def start(self, n):
        import subprocess
        port = free_port()
        process = subprocess.Popen([self.binary, "serve"], env=dict(self.env, BECKON_HTTP_PORT=str(port)),
                                   stdout=open(os.path.join(self.work, f"node{n}.log"), "wb"), stderr=subprocess.STDOUT)
        self.nodes[n] = (process, port)
        if not wait_until(lambda: self.healthy(n) or process.poll() is not None, 60) or process.poll() is not None:
            raise RuntimeError(f"node {n} did not start (see {self.work}/node{n}.log)")

    def healthy(self, n):
        try:
            return request(self.base(n), "GET", "/health")[0] == 200
        except OSError:
            return False

    def _control_ok(self):
        try:
            return request(f"http://127.0.0.1:{self.control}", "GET", "/health")[0] == 200
        except OSError:
            return False

    def base(self, n):
        return f"http://127.0.0.1:{self.nodes[n][1]}"

    def port(self, n):
        return self.nodes[n][1]

    def pids(self):
        return [process.pid for process, _ in self.nodes.values()] + [self.emulator.pid]

    def stop(self):
        import subprocess
        for process, _ in self.nodes.values():
            if process.poll() is None:
                process.terminate()
        for process, _ in self.nodes.values():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.emulator.terminate()
        try:
            self.emulator.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.emulator.kill()
            self.emulator.wait()


def wait_for_quiet(max_load, patience, log=print):
    """Waits until the 1-minute load average is below `max_load` (other work on the machine
    would skew a measurement), at most `patience` seconds. Returns the load measured at."""
    started, said = time.time(), False
    while True:
        load = os.getloadavg()[0]
        if load < max_load:
            return load
        if time.time() - started > patience:
            log(f"load average still {load:.2f} after {patience:.0f} s; measuring anyway (noted)")
            return load
        if not said:
            log(f"waiting for the 1-minute load average to fall below {max_load} (now {load:.2f})")
            said = True
        time.sleep(5)


def pg_counters(url):
    """What the database did so far (cumulative): its transactions and rows from
    pg_stat_database, rows by table from pg_stat_user_tables, and the cluster's WAL from
    pg_stat_wal (the bench cluster serves nothing else). Take it after the nodes stopped:
    a backend reports its counts when it goes idle for a while or exits."""
    counters = {}
    database = psql(url, "SELECT xact_commit, xact_rollback, tup_inserted, tup_updated, tup_deleted "
                         "FROM pg_stat_database WHERE datname = current_database()").split("|")
    for name, value in zip(("commits", "rollbacks", "inserted", "updated", "deleted"), database):
        counters[name] = int(value)
    wal = psql(url, "SELECT wal_records, wal_bytes, wal_sync FROM pg_stat_wal").split("|")
    for name, value in zip(("wal_records", "wal_bytes", "wal_syncs"), wal):
        counters[name] = int(value)
    for line in psql(url, "SELECT relname, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables").splitlines():
        table, inserted, updated, deleted = line.split("|")
        counters[f"table:{table}"] = (int(inserted), int(updated), int(deleted))
    return counters


def pg_work(before, after, per, unit, units=None):
    """Lines saying what the database did between two `pg_counters`, per `per` units."""
    if not per:
        return []
    def delta(name):
        return after.get(name, 0) - before.get(name, 0)
    lines = [f"database work per {unit} ({per} {units or unit + 's'}): "
             f"{delta('commits') / per:.2f} commits (read-only ones too), {delta('rollbacks') / per:.3f} rollbacks, "
             f"rows {delta('inserted') / per:.2f} inserted, {delta('updated') / per:.2f} updated, "
             f"{delta('deleted') / per:.2f} deleted; WAL {delta('wal_records') / per:.1f} records, "
             f"{delta('wal_bytes') / per:,.0f} bytes, {delta('wal_syncs') / per:.3f} fsyncs"]
    tables = []
    for key in sorted(k for k in after if k.startswith("table:")):
        was = before.get(key, (0, 0, 0))
        changes = [a - b for a, b in zip(after[key], was)]
        if any(changes):
            tables.append(f"{key[6:]} +{changes[0] / per:.2f}/~{changes[1] / per:.2f}/-{changes[2] / per:.2f}")
    if tables:
        lines.append(f"rows by table per {unit} (inserted/updated/deleted): " + ", ".join(tables))
    return lines


def rss_kib(pids, field="VmRSS"):
    """Resident memory of these processes together, KiB (Linux /proc); missing ones count 0.
    `RssAnon` leaves out file pages (SQLite's memory-mapped database among them)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as status:
                total += next(int(line.split()[1]) for line in status if line.startswith(field + ":"))
        except (OSError, StopIteration, ValueError):
            pass
    return total


# CPU time by process group, from /proc (Linux): where a benchmark's time goes.

def cpu_seconds(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def _parent(pid):
    with open(f"/proc/{pid}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[1])


def postgres_pids(url):
    """The PostgreSQL server's processes: the postmaster (the checkpointer's parent) and its children."""
    try:
        postmaster = _parent(int(psql(url, "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'")))
    except (OSError, ValueError):
        return []
    children = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if _parent(int(entry)) == postmaster:
                    children.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return [postmaster] + children


def cpu_snapshot(groups):
    """{(group, pid): CPU seconds} for {group: [pid]}."""
    return {(group, pid): cpu_seconds(pid) for group, pids in groups.items() for pid in pids}


def cpu_delta(before, after):
    """CPU seconds by group between two snapshots; processes born in between count from zero
    (a process that ended in between is missed)."""
    used = {}
    for (group, pid), value in after.items():
        if value is not None:
            used[group] = used.get(group, 0) + value - (before.get((group, pid)) or 0)
    return used
