"""`beckon serve` on loopback, configured through BECKON_* environment variables as an operator
would: one node on a SQLite file (Node), or a standalone `beckon apns-emulator` with a generated
P-256 key and nodes on one database pointed at it (Deployment); and what a node's log says went
wrong."""
import os, resource, signal, sqlite3, subprocess, time

from beckonlib.emulator import Emulator
from beckonlib.httpjson import free_port, healthy, request, user_token, wait_until
from beckonlib.measure import descriptors, memory_kib

TEAM = "TEAM123456"
# A script that measures or fuzzes the server, not its rate limits, turns them off: a 429 would
# stand in for the answer under test.
NO_RATE_LIMITS = {"BECKON_LIMITS_MESSAGES_PER_SECOND": "0", "BECKON_LIMITS_REGISTRATIONS_PER_MINUTE": "0",
                  "BECKON_LIMITS_SYNC_CONNECTS_PER_MINUTE": "0"}
# What a crash leaves in the log (the runtime writes to the same stderr), whatever the level.
CRASH_MARKS = ("Fatal error", "fatal error", "Segmentation fault", "precondition", "Assertion failed",
               "Stack dump", "Illegal instruction", "💣")


def app_env(app, secret, team=TEAM, bundle=None):
    """The settings of one app: bundle id com.example.<app> unless `bundle`, the team, and the
    secret its backend signs user tokens with."""
    prefix = f"BECKON_APPS_{app.upper()}_"
    return {prefix + "BUNDLE_ID": bundle or f"com.example.{app}", prefix + "TEAM_ID": team,
            prefix + "USER_TOKEN_SECRET": secret}


def log_level(line):
    """The level of a log line (`<time> <level> [<label>] <message> <metadata>`), or ""."""
    words = line.split(" ", 3)
    return words[1] if len(words) > 1 else ""


def log_errors(path):
    """The lines of a node's log at error or critical level, and any that shows a crash."""
    problems = []
    with open(path, "rb") as handle:
        for raw in handle:
            line = raw.decode("utf-8", "replace").rstrip()
            if log_level(line) in ("error", "critical") or any(mark in line for mark in CRASH_MARKS):
                problems.append(line)
    return problems


def store_rows(path, sql, args=(), timeout=30):
    """Rows of a read-only query on a node's SQLite file, also while it runs (WAL: a reader does
    not block it)."""
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=timeout)
    try:
        return connection.execute(sql, args).fetchall()
    finally:
        connection.close()


class Node:
    """One `beckon serve` for `apps` (each with bundle id com.example.<app>, team `team` and the
    user-token secret `secret`), with the admin token `admin`, on a SQLite file in `work` unless
    `env` names another store. `env` adds or overrides settings; `control` (a port) opens the
    built-in APNs emulator's control API; `nofile` sets its RLIMIT_NOFILE (soft = hard). Every
    start appends to one log, `work/<name>.log` unless `log_path`, and keeps the port."""

    def __init__(self, binary, work, name="server", *, secret, admin=None, apps=("chat",), team=TEAM, env=None,
                 database=None, port=None, control=None, nofile=None, log_path=None):
        self.binary, self.work, self.name, self.nofile = binary, work, name, nofile
        self.secret, self.admin = secret, admin
        self.port = port or free_port()
        self.control = control
        self.database = database or os.path.join(work, name + ".sqlite")
        self.log_path = log_path or os.path.join(work, name + ".log")
        self.env = dict(os.environ, BECKON_HTTP_PORT=str(self.port), BECKON_DATABASE_PATH=self.database,
                        BECKON_APPS_IDS=",".join(apps))
        if admin:
            self.env["BECKON_ADMIN_TOKEN"] = admin
        if control:
            self.env["BECKON_APNS_EMULATOR_CONTROL_PORT"] = str(control)
        for app in apps:
            self.env.update(app_env(app, secret, team))
        self.env.update(env or {})
        self.process, self.bad_exits, self.stopping, self.start_seconds = None, [], False, None

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    @property
    def emulator(self):
        """The built-in emulator's control API (with `control` only)."""
        return Emulator(self.control)

    def start(self, timeout=60, attempts=1, wait=True):
        """Starts the process and, with `wait`, waits until `GET /health` answers 200; returns the
        seconds that took. A process that exits at once is started again up to `attempts` times
        (after a SIGKILL its port may not be free yet). Raises RuntimeError if it never answers."""
        nofile = self.nofile

        def limits():
            if nofile:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
        began = time.monotonic()
        self.stopping = False
        for attempt in range(attempts):
            with open(self.log_path, "ab") as log:  # the child keeps its own descriptor
                self.process = subprocess.Popen([self.binary, "serve"], env=self.env, preexec_fn=limits if nofile else None,
                                                stdout=log, stderr=subprocess.STDOUT)
            if not wait:
                return None
            if wait_until(lambda: self.process.poll() is not None or healthy(self.base, timeout=2), timeout, 0.05) \
                    and self.process.poll() is None:
                self.start_seconds = time.monotonic() - began
                return self.start_seconds
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
                raise RuntimeError(f"{self.name}: beckon serve did not answer /health within {timeout} s; see {self.log_path}")
            if attempt + 1 < attempts:
                time.sleep(0.2)
        raise RuntimeError(f"{self.name}: beckon serve exited at start (code {self.process.returncode}); see {self.log_path}")

    def alive(self):
        return self.process is not None and self.process.poll() is None

    def healthy(self, timeout=5):
        return healthy(self.base, timeout)

    @property
    def returncode(self):
        return None if self.process is None else self.process.poll()

    def stop(self, timeout=30):
        """SIGTERM; the seconds until the process exited, or None if it was still running after
        `timeout` and had to be killed. A failed or hung stop is recorded in `bad_exits`."""
        if not self.alive():
            return 0.0
        started = time.monotonic()
        self.stopping = True
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            self.bad_exits.append(f"did not exit within {timeout} s of SIGTERM")
            return None
        if self.process.returncode != 0:
            self.bad_exits.append(f"exited {self.process.returncode} after SIGTERM")
        return time.monotonic() - started

    def kill(self):
        """SIGKILL: no shutdown, no flush; the crash."""
        if self.alive():
            self.stopping = True
            self.process.kill()
            self.process.wait()

    def crashed(self):
        """What went wrong with an exit: one the server chose (a signal, an error) while it was
        not being stopped, a failed or hung SIGTERM; None when nothing did."""
        if self.process is not None and self.process.poll() is not None and not self.stopping:
            code = self.process.returncode
            how = f"signal {-code} ({signal.Signals(-code).name})" if code < 0 else f"status {code}"
            return f"the server died by itself: {how}"
        return "; ".join(self.bad_exits) or None

    def memory(self, field="VmRSS"):
        return memory_kib(self.process.pid, field) if self.process else None

    def descriptors(self):
        return descriptors(self.process.pid) if self.process else None

    def log_text(self):
        with open(self.log_path, errors="replace") as log:
            return log.read()

    def log_tail(self, lines=4):
        return " / ".join(line.strip() for line in self.log_text().strip().splitlines()[-lines:] if line.strip())

    def log_errors(self):
        return log_errors(self.log_path)

    # The API as an app's backend and its devices use it.

    def issue_key(self, app="chat"):
        status, answer = request(self.base, "POST", f"/v1/admin/apps/{app}/keys", {}, self.admin)
        assert status == 201, (status, answer)
        return answer["key"]

    def register(self, user, device, app="chat", token=None, **fields):
        """Registers a device of `user` (a user token signed for it); returns its credential."""
        status, answer = request(self.base, "POST", "/v1/devices", {
            "deviceId": device, "bundleId": f"com.example.{app}", "environment": "sandbox",
            "tokens": {"remote": token or os.urandom(32).hex()}, **fields}, user_token(self.secret, app, user))
        assert status == 201, (status, answer)
        return answer["credential"]

    def post(self, key, users, payload, timeout=10, **fields):
        """(status, answer) of `POST /v1/messages` of kind `message` to `users`."""
        return request(self.base, "POST", "/v1/messages", {"recipients": {"users": users}, "kind": "message",
                                                           "payload": payload, **fields}, key, timeout=timeout)


def release_binary(binary=None):
    """`binary` as an absolute path; without one, `beckon` built in release (scratch path
    .build-bench, so a benchmark's build does not replace the debug one)."""
    if binary is None:
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        subprocess.run(["swift", "build", "-c", "release", "--product", "beckon", "--scratch-path", ".build-bench"],
                       cwd=root, check=True)
        binary = os.path.join(root, ".build-bench", "release", "beckon")
    return os.path.abspath(binary)


class Deployment:
    """A standalone APNs emulator and `nodes` nodes of one app (`chat`): on one PostgreSQL
    database (`database_url`) or, with one node, on a SQLite file (`sqlite_path`). `extra_env`
    adds or overrides BECKON_* settings; rate limits are off unless `rate_limits`. Logs go to
    `work`: emulator.log, node<n>.log."""

    TEAM = TEAM

    def __init__(self, binary, work, secret, admin, nodes=1, database_url=None, sqlite_path=None, extra_env=None,
                 key_id="BENCHKEY01", rate_limits=False):
        assert database_url or (sqlite_path and nodes == 1), "several nodes need PostgreSQL"
        self.binary, self.work, self.secret, self.admin, self.nodes = binary, work, secret, admin, {}
        self.sqlite_path = sqlite_path
        key = os.path.join(work, "key.p8")
        subprocess.run(f"openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out {key}",
                       shell=True, check=True)
        self.apns_port, self.control = free_port(), free_port()
        self.emulator = Emulator(self.control)
        with open(os.path.join(work, "emulator.log"), "wb") as log:
            self.emulator_process = subprocess.Popen(
                [binary, "apns-emulator", "--listen", f"127.0.0.1:{self.apns_port}", "--control", f"127.0.0.1:{self.control}",
                 "--auth-key", f"{key_id}:{TEAM}:{key}", "--auto-register", "--state-dir", work],
                stdout=log, stderr=subprocess.STDOUT)
        if not wait_until(self.emulator.healthy, 20):
            raise RuntimeError(f"the APNs emulator did not start (see {work}/emulator.log)")
        self.env = dict({"BECKON_DATABASE_URL": database_url} if database_url else {},
                        BECKON_APPS_CHAT_APNS_KEY_PATH=key, BECKON_APPS_CHAT_APNS_KEY_ID=key_id,
                        BECKON_APPS_CHAT_APNS_HOST="127.0.0.1", BECKON_APPS_CHAT_APNS_PORT=str(self.apns_port),
                        BECKON_APPS_CHAT_APNS_CA_FILE=os.path.join(work, "ca.pem"),
                        **({} if rate_limits else NO_RATE_LIMITS), **(extra_env or {}))
        # Started one after the other: the first migrates the database, the others find it done.
        for n in range(1, nodes + 1):
            self.start(n)

    def start(self, n, log=None):
        """Starts node `n`, again on its port if it ran before (its log appended to, or `log` in
        `work` instead). Raises RuntimeError if it does not come up."""
        node = self.nodes.get(n)
        if node is None:
            node = self.nodes[n] = Node(self.binary, self.work, f"node{n}", secret=self.secret, admin=self.admin,
                                        env=self.env, database=self.sqlite_path)
        if log:
            node.log_path = os.path.join(self.work, log)
        node.start(attempts=5)

    def healthy(self, n):
        return self.nodes[n].healthy()

    def base(self, n):
        return self.nodes[n].base

    def port(self, n):
        return self.nodes[n].port

    def alive(self):
        """The numbers of the nodes running."""
        return [n for n, node in self.nodes.items() if node.alive()]

    def kill(self, n):
        self.nodes[n].kill()

    def pids(self):
        return [node.process.pid for node in self.nodes.values()] + [self.emulator_process.pid]

    def stop(self):
        for node in self.nodes.values():
            if node.alive():
                node.process.terminate()
        for node in self.nodes.values():
            try:
                node.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                node.process.kill()
                node.process.wait()
        self.emulator_process.terminate()
        try:
            self.emulator_process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.emulator_process.kill()
            self.emulator_process.wait()
