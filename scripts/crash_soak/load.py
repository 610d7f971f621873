"""The crash soak's load (scripts/crash-soak.py runs it): writers that post until answered,
the same idempotency key each time, as a backend does when a request is cut off, into a ledger
of what was acknowledged; and synced devices that connect, acknowledge late, leave with `bye`
or a drop and come back, through kills, removing duplicates by message id as
docs/sync-protocol.md tells a client to, so that what the application was shown can be judged."""
import http.client, threading, time

from beckonlib.httpjson import request
from beckonlib.websocket import SyncSession


class Ledger:
    """What the backend was told: every post answered 2xx, by idempotency key."""

    def __init__(self):
        self.lock = threading.Lock()
        self.posts = {}          # key -> dict(id, users, positions, status, first, answered, cut)
        self.refused = []        # (key, status, body): a 4xx other than 429 (none expected)
        self.unanswered = []     # keys given up on (none expected)
        self.in_flight = 0

    def acknowledged_for(self, user):
        with self.lock:
            return {p["id"]: p for p in self.posts.values() if user in p["users"]}


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.problems = []       # failures seen while running (protocol errors, conflicts)

    def problem(self, text):
        with self.lock:
            if len(self.problems) < 200:
                self.problems.append(text)


class Client:
    """The application side of one device: what it was shown, after removing duplicates by id."""

    def __init__(self, name, user, credential, stats):
        self.name, self.user, self.credential, self.stats = name, user, credential, stats
        self.acked = 0           # the cursor it resumes from: what it acknowledged
        self.seq_of = {}         # message id -> seq, each id once (the dedup)
        self.id_at = {}          # seq -> id
        self.keys = {}           # idempotency key (payload) -> set of ids shown for it
        self.raw = 0             # message frames received
        self.redeliveries = 0    # frames of an id it had already
        self.sessions = 0
        self.lock = threading.Lock()

    def take(self, frame, floor):
        """A `message` frame: dedup by id, consistency of seq and id. Returns its seq."""
        seq, mid = frame["seq"], frame["id"]
        with self.lock:
            self.raw += 1
            if seq <= floor:
                self.stats.problem(f"{self.name}: seq {seq} not after the session's previous {floor}")
            if self.id_at.get(seq, mid) != mid:
                self.stats.problem(f"{self.name}: seq {seq} was {self.id_at[seq]}, now {mid}")
            if mid in self.seq_of:
                self.redeliveries += 1
                if self.seq_of[mid] != seq:
                    self.stats.problem(f"{self.name}: message {mid} came as seq {self.seq_of[mid]} and as {seq}")
                return seq
            self.seq_of[mid], self.id_at[seq] = seq, mid  # handed to the application, once
            key = (frame.get("payload") or {}).get("key")
            self.keys.setdefault(key, set()).add(mid)
        return seq

    def read_session(self, port, until, want):
        """One session from `self.acked` that reads and acknowledges everything up to the user's
        last sequence (the load has stopped), then says `bye`; `until` bounds it. Returns True
        when every id of `want` was shown (in this session or before)."""
        try:
            session = SyncSession(port, self.credential, timeout=5)
        except (OSError, ConnectionError) as error:
            self.stats.problem(f"{self.name}: the final sync session was refused: {error}")
            return False
        last = None
        try:
            session.send({"type": "hello", "version": 2, "cursor": self.acked, "window": 100})
            floor = self.acked
            while time.time() < until:
                if last is not None and self.acked >= last and want <= set(self.seq_of):
                    return True
                frame = session.poll(min(0.5, max(0.01, until - time.time())))
                if frame is None:
                    continue
                kind = frame.get("type")
                if kind == "welcome":
                    last = frame["lastSequence"]
                elif kind == "message":
                    floor = self.take(frame, floor)
                    session.send({"type": "ack", "upTo": frame["seq"]})
                    self.acked = max(self.acked, frame["seq"])
                elif kind == "error":
                    self.stats.problem(f"{self.name}: protocol error {frame}")
            return want <= set(self.seq_of)
        except (OSError, ConnectionError) as error:
            self.stats.problem(f"{self.name}: the final sync session ended early: {error} "
                               f"(close code {getattr(error, 'code', None)})")
            return False
        finally:
            try:
                session.send({"type": "bye"})
            except OSError:
                pass
            session.close()


class Churner(threading.Thread):
    """A synced device: connect, receive, ack (not always at once), leave with `bye` or a drop,
    stay away, come back; through kills it reconnects until the server answers again."""

    def __init__(self, client, port, rng, stop):
        super().__init__(daemon=True)
        self.client, self.port, self.rng, self.stop = client, port, rng, stop
        self.byes = self.drops = self.cut = 0

    def run(self):
        client, rng = self.client, self.rng
        while not self.stop.is_set():
            try:
                session = SyncSession(self.port, client.credential, timeout=2)
            except (OSError, ConnectionError, TimeoutError):
                self.stop.wait(rng.uniform(0.05, 0.3))  # the node is down (killed): try again
                continue
            client.sessions += 1
            pending = None  # highest seq received and not acknowledged yet
            try:
                session.send({"type": "hello", "version": 2, "cursor": client.acked,
                              "window": rng.choice([3, 10, 100])})
                floor = client.acked
                ends = time.time() + rng.uniform(0.3, 3.0)
                last_ack = time.time()
                while time.time() < ends and not self.stop.is_set():
                    frame = session.poll(0.1)
                    if frame is not None:
                        kind = frame.get("type")
                        if kind == "message":
                            floor = pending = client.take(frame, floor)
                        elif kind == "error":
                            client.stats.problem(f"{client.name}: protocol error {frame}")
                    # Acks: some at once, most a few at a time (so a drop often leaves some).
                    if pending is not None and (rng.random() < 0.25 or time.time() - last_ack > 0.5):
                        session.send({"type": "ack", "upTo": pending})
                        client.acked, pending, last_ack = max(client.acked, pending), None, time.time()
                how = rng.random()
                if how < 0.4:
                    if pending is not None:
                        session.send({"type": "ack", "upTo": pending})
                        client.acked = max(client.acked, pending)
                    session.send({"type": "bye"})
                    self.byes += 1
                else:
                    self.drops += 1  # a drop, maybe with messages unacknowledged: re-pushed (rule 5)
                session.close()
            except (OSError, ConnectionError) as error:
                session.close()
                code = getattr(error, "code", None)
                if code not in (None, 1001, 1006):
                    client.stats.problem(f"{client.name}: session closed with {code}")
                self.cut += 1  # the node died under it
                self.stop.wait(rng.uniform(0.05, 0.3))
                continue
            self.stop.wait(rng.uniform(0.3, 4.0))  # away: woken, re-pushed, escalated meanwhile


# --- Writers -----------------------------------------------------------------------------------

def post(base, key, body, ledger, give_up_at):
    """Posts until answered (the same idempotency key each time). Returns the record or None."""
    first, cut = time.time(), 0
    with ledger.lock:
        ledger.in_flight += 1
    try:
        while time.time() < give_up_at:
            try:
                status, answer = request(base, "POST", "/v1/messages", body, key, timeout=10)
            except (OSError, http.client.HTTPException, ValueError):
                cut += 1  # killed under it, or down: not acknowledged yet; try again
                time.sleep(0.05)
                continue
            if status in (429, 500, 502, 503):
                time.sleep(0.1)
                continue
            if status in (200, 202):
                return dict(id=answer["id"], users=body["recipients"]["users"], status=status, cut=cut,
                            first=first, answered=time.time(), duplicate=answer.get("duplicate", False),
                            positions={p["userId"]: p["sequence"] for p in answer["positions"]})
            with ledger.lock:
                ledger.refused.append((body["idempotencyKey"], status, answer))
            return None
        with ledger.lock:
            ledger.unanswered.append(body["idempotencyKey"])
        return None
    finally:
        with ledger.lock:
            ledger.in_flight -= 1


def writer(number, base, key, choose, pace, rng, ledger, stop, give_up_at):
    sequence = 0
    while not stop.is_set():
        sequence += 1
        name = f"w{number}-{sequence}"
        users = choose(rng)
        body = {"recipients": {"users": users}, "kind": "message", "payload": {"key": name},
                "notification": {"title": "crash soak", "body": name}, "idempotencyKey": name}
        record = post(base, key, body, ledger, give_up_at)
        if record:
            with ledger.lock:
                ledger.posts[name] = record
        stop.wait(rng.uniform(0, pace))
