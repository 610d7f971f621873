#!/usr/bin/env python3
"""Crash soak (reliability issue, item 4): `beckon serve` on SQLite, with a standalone APNs
emulator, killed with SIGKILL at random moments under mixed load, restarted each time on the
same database, emulator and key; then a quiet drain and the checks of design rule 9.

The load, from threads:
- writers post messages (`POST /v1/messages`, each with an idempotency key, retried with the same
  key until answered, as a backend does when a request is cut off) to users whose devices sync,
  to users whose devices stay offline, and to pairs of both;
- one synced device per "online" user runs a sync client that connects, receives, acknowledges
  (sometimes late), ends with `bye` or drops the socket, stays away (so it is woken, re-pushed,
  escalated) and comes back; it resumes from its last ack and removes duplicates by message id,
  as docs/sync-protocol.md tells a client to;
- "offline alert" devices (no background mode: an alert for every message) and "offline wake"
  devices (woken once, then unreachable: rule 4's escalation alert, a planner deadline, then an
  alert per message) never connect until the end;
- "silent" devices hold two messages received and not acknowledged when the node is first
  killed, and never come back (until the end): rule 5 says they are pushed again;
- the emulator answers every push late (`response-delay`), so pushes are in flight at a kill, and
  the reconnect window and re-push delay are short, so planner deadlines fall due around kills.

Checks, after the last restart and a drain that waits for the outbox and the deadlines:
1. every message answered 2xx reaches its device: over sync for online devices, and from the
   mailbox when each offline device finally connects (0 lost);
2. after removing duplicates by id, no device's application sees a message twice (one id per
   posted message, the same seq for an id each time it is sent, the seq the post was answered
   with) — raw redeliveries are counted, not failed;
3. every push the planner decided (each `push_outbox` row) is in the emulator's log of its
   device, by apns-id; and, worked out from the docs, every offline device's emulator log names
   each of its messages in an alert (`alert`; `unreachable-alert` after the wake). A message
   whose planning event was lost with the process (the known gap of design.md, rule 9's table)
   is reported apart, and only when a kill explains it; an unexplained one fails. The silent
   devices' unacknowledged messages are named in a push sent after the first kill (rule 5).

    scripts/crash-soak.py BECKON_BINARY [--kills 3] [--seed S] [--uptime 3:8] [--silent 2]

CI runs the default (3 kills, about 30 s); the long run is `--kills 20` (about 2 minutes). A
failure prints the seed: `--seed S` repeats the same schedule and choices (timing still varies).

Exits 0 when every check holds, 1 otherwise (the work directory with the logs is kept then).
Loopback only.
"""
import argparse, json, os, random, shutil, sys, tempfile, threading, time

from beckonlib.httpjson import request, user_token, wait_until
from beckonlib.node import Deployment, log_errors, store_rows
from beckonlib.websocket import SyncSession
from crash_soak.load import Churner, Client, Ledger, Stats, post, writer

SECRET = "crash-soak-secret-0123456789abcdef01234"
ADMIN = "crash-soak-admin-0123456789abcdef0123456"
RECONNECT_WINDOW = 2      # seconds: a wake not answered by a connection escalates after this
REPUSH_DELAY = 1          # seconds: first re-push after a drop with unacknowledged messages
REPUSH_LIMIT = 2          # re-pushes per drop (1 s, then 2 s later): the drain waits for them
WAKES_PER_HOUR = 600      # background pushes per device and hour: wakes and re-pushes keep flowing
DEADLINE_LEASE = 3        # seconds: a deadline claimed by the killed process fires again after this
EMULATOR_DELAY_MS = 40    # every APNs answer waits this long: pushes are in flight at a kill


def log(text):
    print(f"crash-soak: {text}", flush=True)


# --- The checks' sources -------------------------------------------------------------------------

def received(emulator, token):
    """What the emulated device received: [(apns-id, push type, reason, ids, accepted ms)]."""
    out = []
    for n in emulator.received(token):
        beckon = (n.get("payload") or {}).get("beckon") or {}
        out.append((n["apnsId"].lower(), n["pushType"], beckon.get("reason"), beckon.get("ids") or [], n["acceptedAt"]))
    return out


def error_lines(path):
    """The node's error-level log lines, by message (its restarts' too): informative."""
    counts = {}
    for line in log_errors(path):
        parts = line.split(" ", 3)
        if len(parts) == 4 and parts[1] in ("error", "critical"):
            text = parts[3].split("] ", 1)[-1].strip()
            counts[text] = counts.get(text, 0) + 1
    return counts


class Soak:
    def __init__(self, options, seed, work):
        self.options, self.seed, self.work = options, seed, work
        self.rng = random.Random(seed)
        self.database = os.path.join(work, "beckon.sqlite")
        self.stats, self.ledger = Stats(), Ledger()
        self.devices = {}   # user -> (device id, token, credential, kind)
        self.kills = []     # dict(at, down, start) per kill
        self.failures, self.lines = [], []
        self.stop_load, self.stop_churn = threading.Event(), threading.Event()
        self.threads, self.churners, self.held = [], [], []
        self.deployment = Deployment(options.binary, work, SECRET, ADMIN, sqlite_path=self.database, extra_env={
            "BECKON_APPS_CHAT_DELIVERY_RECONNECT_WINDOW_SECONDS": str(RECONNECT_WINDOW),
            "BECKON_APPS_CHAT_DELIVERY_REPUSH_INITIAL_DELAY_SECONDS": str(REPUSH_DELAY),
            "BECKON_APPS_CHAT_DELIVERY_REPUSH_LIMIT": str(REPUSH_LIMIT),
            "BECKON_APPS_CHAT_DELIVERY_BACKGROUND_PUSHES_PER_HOUR": str(WAKES_PER_HOUR),
            "BECKON_DELIVERY_DEADLINE_LEASE_SECONDS": str(DEADLINE_LEASE),
        })
        self.emulator = self.deployment.emulator
        self.port, self.base = self.deployment.port(1), self.deployment.base(1)

    def say(self, text):
        self.lines.append(text)
        log(text)

    def fail(self, text):
        self.failures.append(text)

    def rows(self, sql, args=()):
        return store_rows(self.database, sql, args, timeout=10)

    def users(self, kind):
        return [user for user, device in self.devices.items() if device[3] == kind]

    # --- Set-up ------------------------------------------------------------------------------------

    def set_up(self):
        o = self.options
        self.emulator.fault({"type": "response-delay", "milliseconds": EMULATOR_DELAY_MS})
        status, answer = request(self.base, "POST", "/v1/admin/apps/chat/keys", {}, ADMIN)
        assert status == 201, (status, answer)
        self.key = answer["key"]
        for kind, prefix, count in (("online", "online", o.online), ("offline-alert", "alerted", o.offline_alert),
                                    ("offline-wake", "woken", o.offline_wake), ("silent", "silent", o.silent)):
            for i in range(count):
                self.register(f"{prefix}{i}", kind)
        self.clients = {user: Client(user, user, device[2], self.stats) for user, device in self.devices.items()}

    def register(self, user, kind):
        token = self.rng.getrandbits(256).to_bytes(32, "big").hex()
        # No background mode: the app cannot be woken, so every message is alerted (design.md,
        # "Fallbacks by capability": a generic alert). With it: `wake`, then rule 4's escalation.
        modes = [] if kind == "offline-alert" else ["remote-notification"]
        status, body = request(self.base, "POST", "/v1/devices", {
            "deviceId": f"{user}-phone", "bundleId": "com.example.chat", "environment": "sandbox",
            "tokens": {"remote": token}, "capabilities": {"backgroundModes": modes},
        }, user_token(SECRET, "chat", user))
        assert status == 201, (status, body)
        self.devices[user] = (f"{user}-phone", token, body["credential"], kind)

    def hold_silent(self):
        """Silent devices: connected, two messages received and not acknowledged, when the node is
        first killed; they never come back (until the final read). Nothing else is posted to them,
        so only the drop itself can make the server push them again (rule 5)."""
        for user in self.users("silent"):
            session = SyncSession(self.port, self.devices[user][2], timeout=5)
            session.send({"type": "hello", "version": 2, "cursor": 0})
            assert session.poll(5)["type"] == "welcome"
            self.held.append((user, session))
        time.sleep(0.5)  # their `connected` planned and saved before the messages come
        for user, session in self.held:
            for n in range(2):
                name = f"{user}-{n}"
                record = post(self.base, self.key, {
                    "recipients": {"users": [user]}, "kind": "message", "payload": {"key": name},
                    "notification": {"title": "crash soak", "body": name}, "idempotencyKey": name,
                }, self.ledger, time.time() + 30)
                assert record, name
                self.ledger.posts[name] = record
            floor = 0
            while len(self.clients[user].seq_of) < 2:
                frame = session.poll(5)
                assert frame, f"{user} got no message live"
                if frame.get("type") == "message":
                    floor = self.clients[user].take(frame, floor)

    def start_load(self, give_up_at):
        o, seed = self.options, self.seed
        online, alerted, woken = self.users("online"), self.users("offline-alert"), self.users("offline-wake")

        def choose(r):
            x = r.random()
            if x < 0.55 or not alerted:
                return [r.choice(online)] if online else [r.choice(alerted)]
            if x < 0.8 or not online:
                return [r.choice(alerted)]
            return [r.choice(online), r.choice(alerted)]  # one message, two mailboxes

        if online or alerted:
            for n in range(o.writers):
                self.threads.append(threading.Thread(target=writer, daemon=True, args=(
                    n, self.base, self.key, choose, o.pace, random.Random(seed * 100 + n), self.ledger,
                    self.stop_load, give_up_at)))
        if woken:
            # A woken device's wake covers what comes in its reconnect window, at most 20 ids
            # (maximumIDsPerPush): about one message a second per device keeps well under it.
            self.threads.append(threading.Thread(target=writer, daemon=True, args=(
                o.writers, self.base, self.key, lambda r: [r.choice(woken)], 1.8 / len(woken),
                random.Random(seed * 100 + 99), self.ledger, self.stop_load, give_up_at)))
        for user in online:
            self.churners.append(Churner(self.clients[user], self.port, random.Random(f"{seed}-{user}"), self.stop_churn))
        for thread in self.threads + self.churners:
            thread.start()

    # --- Kills -------------------------------------------------------------------------------------

    def kill_and_restart(self, number):
        now_ms = int(time.time() * 1000)
        due = self.rows("SELECT count(*) FROM delivery_state WHERE next_deadline <= ?", (now_ms + 1000,))[0][0]
        unsent = self.rows("SELECT count(*) FROM push_outbox WHERE state = 'pending'")[0][0]
        with self.ledger.lock:
            posting = self.ledger.in_flight
        self.deployment.kill(1)
        killed_at = time.time()
        for _, session in self.held:
            session.close()
        self.held = []
        down = self.rng.uniform(0, 0.5)  # down a moment: posts and sessions fail meanwhile
        time.sleep(down)
        restarted = time.time()
        self.deployment.start(1)
        self.kills.append(dict(at=killed_at, down=down, start=time.time() - restarted))
        log(f"kill {number}: SIGKILL with {posting} posts in flight, {unsent} pushes unsent, {due} planner deadlines "
            f"due within 1 s; down {down:.2f} s, answering /health {time.time() - restarted:.2f} s after the restart")

    # --- Drain -------------------------------------------------------------------------------------

    def drain(self):
        self.stop_load.set()
        for thread in self.threads:
            thread.join(60)
        self.stop_churn.set()
        for churner in self.churners:
            churner.join(30)
        # A barrier: planning is FIFO, so once a message posted now has its alert decided, every
        # event before it has been planned (an empty queue says less: a batch may be in hand).
        alerted = self.users("offline-alert")
        if alerted:
            record = post(self.base, self.key, {
                "recipients": {"users": [alerted[0]]}, "kind": "message", "payload": {"key": "barrier"},
                "notification": {"title": "crash soak", "body": "barrier"}, "idempotencyKey": "barrier",
            }, self.ledger, time.time() + 30)
            assert record, "the barrier post was not answered"
            with self.ledger.lock:
                self.ledger.posts["barrier"] = record
            if not wait_until(lambda: self.rows("SELECT count(*) FROM push_outbox WHERE instr(CAST(payload AS TEXT), ?)",
                                                (record["id"],))[0][0], 30, 0.05):
                self.say("note: the barrier message's push was not decided within 30 s")
        # Online devices come back once more, read and acknowledge everything, and say bye.
        for user in self.users("online"):
            if not self.clients[user].read_session(self.port, time.time() + 30, set(self.ledger.acknowledged_for(user))):
                self.say(f"note: {user} did not get every acknowledged message within 30 s")
        # Then the planners' deadlines (wake windows, re-pushes) and the outbox come to rest: no
        # deadline left and nothing pending (the offline devices are unreachable by now, the
        # online ones left with nothing unacknowledged).
        def quiet():
            deadlines = self.rows("SELECT count(*) FROM delivery_state WHERE next_deadline IS NOT NULL")[0][0]
            pending = self.rows("SELECT count(*) FROM push_outbox WHERE state = 'pending'")[0][0]
            return deadlines == 0 and pending == 0
        if not wait_until(quiet, 60, 0.2):
            left = self.rows("SELECT device_id, next_deadline FROM delivery_state WHERE next_deadline IS NOT NULL")
            self.say(f"note: not at rest after 60 s; planner deadlines left: {left[:5]}")

    # --- Checks ------------------------------------------------------------------------------------

    def check_pushes(self, posts):
        """Check 3: every decided push reached the emulator; every offline message is alerted
        as the docs say; a silent device's unacknowledged messages are pushed again."""
        outbox = self.rows("SELECT id, device_id, state, reason, payload, created_at, apns_reason FROM push_outbox")
        got = {device: received(self.emulator, token) for device, token, _, _ in self.devices.values()}
        at_emulator = {device: [n[0] for n in pushes] for device, pushes in got.items()}
        missing, failed = [], []
        for push_id, device, state, reason, _, created_at, apns_reason in outbox:
            if state == "failed":
                failed.append((push_id, device, reason, apns_reason))
            elif push_id.lower() not in at_emulator.get(device, []):
                missing.append((push_id, device, state, reason, created_at))
        twice = sum(len(ids) - len(set(ids)) for ids in at_emulator.values())
        in_outbox = {row[0].lower() for row in outbox}
        stray = sum(1 for ids in at_emulator.values() for i in ids if i not in in_outbox)
        reasons = {}
        for row in outbox:
            reasons[row[3]] = reasons.get(row[3], 0) + 1
        self.say(f"pushes decided (outbox rows): {len(outbox)}, received at the emulator: {len(outbox) - len(missing) - len(failed)}; "
                 f"missing {len(missing)}, failed {len(failed)}; received twice (at least once): {twice}; "
                 f"not from the outbox: {stray}")
        self.say("pushes by reason: " + (", ".join(f"{r} {n}" for r, n in sorted(reasons.items())) or "none"))
        if missing or failed:
            self.fail(f"decided pushes not received at the emulator: {missing[:3]}; failed: {failed[:3]}")
        if stray:
            self.fail(f"{stray} pushes at the emulator that no outbox row decided")

        # Every message to an offline device named in an alert, worked out from the docs.
        decided = {}  # (device, message id) -> earliest decision (ms) of a push naming it
        for _, device, _, _, payload, created_at, _ in outbox:
            for mid in (json.loads(payload).get("beckon") or {}).get("ids") or []:
                decided[(device, mid)] = min(created_at, decided.get((device, mid), created_at))
        # Planning is FIFO: a message posted after m's answer whose push was decided before a kill
        # proves m's event was planned before that kill too.
        witnesses = [(p["first"], decided[(self.devices[u][0], p["id"])] / 1000)
                     for p in posts.values() for u in p["users"]
                     if self.devices[u][3] == "offline-alert" and (self.devices[u][0], p["id"]) in decided]
        kill_times = [k["at"] for k in self.kills]
        expected = found = 0
        wrong, gap, unexplained = [], [], []
        for user in self.users("offline-alert") + self.users("offline-wake"):
            device, _, _, kind = self.devices[user]
            want = "alert" if kind == "offline-alert" else "unreachable-alert"
            alerted = set()
            for _, push_type, reason, ids, _ in got[device]:
                if push_type == "alert" and reason == want:
                    alerted.update(ids)
            mine = self.ledger.acknowledged_for(user)
            if kind == "offline-wake" and mine and not any(n[2] == "wake" for n in got[device]):
                wrong.append((user, "never woken"))
            for mid, p in mine.items():
                expected += 1
                if mid in alerted:
                    found += 1
                elif (device, mid) in decided:
                    wrong.append((user, mid, f"pushed, but in no alert with reason {want}"))
                else:
                    # Never decided: the known gap if its planning event was queued in memory when
                    # the process died (design.md, rule 9's table). A replayed post was stored by
                    # an attempt a kill cut off; a new one, before its answer.
                    if p["duplicate"]:
                        explained = any(t > p["first"] for t in kill_times)
                    else:
                        kill = next((t for t in kill_times if t > p["answered"]), None)
                        explained = kill is not None and not any(
                            start > p["answered"] and when < kill for start, when in witnesses)
                    if explained:
                        kill = next(i for i, t in enumerate(kill_times) if t > p["first"])
                        gap.append((user, mid, kill_times[kill] - p["answered"], kill))
                    else:
                        unexplained.append((user, mid))
        self.say(f"offline messages owed an alert (docs): expected {expected}, found {found}; never decided: "
                 f"{len(gap)} explained by a kill (the known gap of design.md rule 9), {len(unexplained)} unexplained; "
                 f"decided but not alerted: {len(wrong)}")
        if gap:
            per_kill = [sum(1 for g in gap if g[3] == k) for k in range(len(kill_times))]
            before = [g[2] for g in gap if g[2] >= 0]
            self.say(f"the gap: {len(before)} answered before their kill (at most {max(before, default=0) * 1000:.0f} ms "
                     f"before it), {len(gap) - len(before)} stored by an attempt the kill cut off and answered after the "
                     f"restart as the idempotent replay; {sum(1 for n in per_kill if n)} of {len(kill_times)} kills lost "
                     f"some, at most {max(per_kill)} each")
        if wrong:
            self.fail(f"offline devices not alerted as the docs say: {wrong[:3]}")
        if unexplained:
            self.fail(f"{len(unexplained)} offline messages never pushed, and no kill explains it: {unexplained[:3]}")

        # Rule 5 across a crash: what the silent devices held unacknowledged is pushed again.
        expected = found = 0
        missed = []
        if self.kills:
            first = self.kills[0]["at"]
            def pushed_after(user):
                return {mid for _, _, _, ids, accepted in received(self.emulator, self.devices[user][1])
                        if accepted / 1000 >= first for mid in ids}
            def all_pushed():
                return all(set(self.ledger.acknowledged_for(u)) <= pushed_after(u) for u in self.users("silent"))
            # Due REPUSH_DELAY after the restart; a few seconds more for the planner's tick.
            wait_until(all_pushed, first + self.kills[0]["down"] + REPUSH_DELAY + 10 - time.time(), 0.2)
            for user in self.users("silent"):
                after = pushed_after(user)
                for mid in self.ledger.acknowledged_for(user):
                    expected += 1
                    if mid in after:
                        found += 1
                    else:
                        missed.append((user, mid))
            self.say(f"unacknowledged on a device connected at the first kill, pushed again after it (rule 5): "
                     f"expected {expected}, found {found}")
        if missed:
            self.fail(f"{len(missed)} messages unacknowledged on a device connected when the node was killed were "
                      f"never pushed again (rule 5, sync-protocol.md \"Closing\"), e.g. {missed[:2]}")

    def check_deliveries(self, posts):
        """Checks 1 and 2: every acknowledged message reached its device, once after dedup."""
        for user in self.users("offline-alert") + self.users("offline-wake") + self.users("silent"):
            self.clients[user].read_session(self.port, time.time() + 30, set(self.ledger.acknowledged_for(user)))
        lost, twice, moved = [], [], []
        for user, client in self.clients.items():
            for mid, p in self.ledger.acknowledged_for(user).items():
                if mid not in client.seq_of:
                    lost.append((user, mid, p["status"]))
                elif client.seq_of[mid] != p["positions"].get(user):
                    moved.append((user, mid, client.seq_of[mid], p["positions"].get(user)))
            for name, ids in client.keys.items():
                if len(ids) > 1:
                    twice.append((user, name, sorted(ids)))
        owed = sum(len(p["users"]) for p in posts.values())
        raw = sum(c.raw for c in self.clients.values())
        self.say(f"posts acknowledged: {len(posts)} ({owed} deliveries owed; {sum(1 for p in posts.values() if p['cut'])} "
                 f"after a cut-off attempt, {sum(1 for p in posts.values() if p['duplicate'])} answered as the idempotent "
                 f"replay); refused {len(self.ledger.refused)}, never answered {len(self.ledger.unanswered)}")
        self.say(f"lost: {len(lost)}; seen twice after dedup by id: {len(twice)}; at another seq than answered: "
                 f"{len(moved)}; message frames {raw}, redeliveries removed by id "
                 f"{sum(c.redeliveries for c in self.clients.values())}")
        if not posts:
            self.fail("nothing was acknowledged: the soak proved nothing")
        if lost:
            self.fail(f"{len(lost)} acknowledged messages lost, e.g. {lost[:3]}")
        if twice or moved:
            self.fail(f"messages seen twice after dedup: {twice[:3]}; delivered at another seq: {moved[:3]}")
        if self.ledger.refused or self.ledger.unanswered:
            self.fail(f"posts refused {self.ledger.refused[:3]} or never answered {self.ledger.unanswered[:3]}")
        if self.stats.problems:
            self.fail(f"{len(self.stats.problems)} protocol problems, e.g. {self.stats.problems[:5]}")


    # --- The whole run -----------------------------------------------------------------------------

    def run(self, low, high, started):
        o = self.options
        self.set_up()
        self.hold_silent()
        self.start_load(give_up_at=time.time() + 120 + o.kills * (high + 10))
        for number in range(1, o.kills + 1):
            time.sleep(self.rng.uniform(low, high))
            self.kill_and_restart(number)
        time.sleep(self.rng.uniform(low, high) / 2)  # load after the last restart too
        loaded = time.time() - started
        drain_started = time.time()
        self.drain()
        drained = time.time() - drain_started
        with self.ledger.lock:
            posts = dict(self.ledger.posts)
        self.check_pushes(posts)
        self.check_deliveries(posts)
        churners = self.churners
        self.say(f"sync sessions: {sum(c.client.sessions for c in churners)} ({sum(c.byes for c in churners)} ended "
                 f"with bye, {sum(c.drops for c in churners)} dropped, {sum(c.cut for c in churners)} cut by a kill)")
        starts = sorted(k["start"] for k in self.kills)
        self.say(f"kills: {len(self.kills)}; restart to /health median {starts[len(starts) // 2] if starts else 0:.2f} s, "
                 f"max {max(starts, default=0):.2f} s; load {loaded:.0f} s, drain {drained:.1f} s, "
                 f"total {time.time() - started:.0f} s")
        errors = error_lines(os.path.join(self.work, "node1.log"))
        if errors:
            self.say("node errors logged (informative): " + "; ".join(f"{n}x {t}" for t, n in sorted(errors.items())))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--kills", type=int, default=3)
    parser.add_argument("--seed", type=int, default=None, help="picks the schedule and the choices (timing still varies)")
    parser.add_argument("--uptime", default="3:8", help="seconds of load between kills, MIN:MAX (random)")
    parser.add_argument("--writers", type=int, default=3)
    parser.add_argument("--pace", type=float, default=0.04, help="most seconds a writer waits between posts")
    parser.add_argument("--online", type=int, default=6, help="users with a device that syncs")
    parser.add_argument("--offline-alert", type=int, default=3, help="users whose device is alerted, never connects")
    parser.add_argument("--offline-wake", type=int, default=3, help="users whose device is woken, never connects")
    parser.add_argument("--silent", type=int, default=2,
                        help="users whose device holds unacknowledged messages when the node is first killed and "
                             "never comes back (rule 5: pushed again); 0 leaves that check out")
    parser.add_argument("--keep", action="store_true", help="keep the work directory even when all passes")
    options = parser.parse_args()
    options.binary = os.path.abspath(options.binary)
    seed = options.seed if options.seed is not None else random.randrange(1 << 31)
    low, high = (float(x) for x in options.uptime.split(":"))
    if not 0 < low <= high:
        sys.exit("crash-soak: --uptime MIN:MAX with 0 < MIN <= MAX")
    started = time.time()
    work = tempfile.mkdtemp(prefix="beckon-crash-soak.")
    log(f"seed {seed}, {options.kills} kills, {low:g}-{high:g} s of load between them; work in {work}")
    soak = Soak(options, seed, work)
    try:
        soak.run(low, high, started)
    except RuntimeError as error:  # the node did not come back: a crash on restart
        soak.fail(str(error))
    finally:
        soak.stop_load.set()
        soak.stop_churn.set()
        soak.deployment.stop()
    if soak.failures:
        for failure in soak.failures:
            log("FAIL " + failure)
        log(f"seed {seed}; logs in {work}")
        sys.exit(1)
    log(f"all checks passed (seed {seed})")
    if not options.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
