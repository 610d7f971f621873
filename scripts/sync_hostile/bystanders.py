"""Well-behaved devices beside the hostile ones: each holds one session from start to end,
acknowledges every message, pings once a second and answers the server's pings; a poster sends
them one message every 0.1 s. What they must see: every posted message once, in order, at the
sequence the post was answered with, within 10 s, and no close."""
import json, os, threading, time

from beckonlib.websocket import RawSession, encode, frame as ws_frame

LATENCY_LIMIT = 10.0   # a bystander's message arriving later than this counts as affected


class Bystander(threading.Thread):
    """A well-behaved device: one session from start to end; acknowledges every message, pings
    once a second, answers the server's pings. Anything else is a problem."""

    def __init__(self, server, user, credential):
        super().__init__(daemon=True)
        self.server, self.user, self.credential = server, user, credential
        self.received = []         # (seq, id, time)
        self.problems = []
        self.pings = {}            # id -> sent at
        self.pong_latencies = []
        self.stop = threading.Event()
        self.final = None
        self.stop_mode = "bye"   # or "stay": kept open until the server shuts down
        self.frames_sent = 0
        self.ready = threading.Event()

    def run(self):
        try:
            self._run()
        except Exception as error:  # noqa: BLE001 - a bystander reports, never raises
            self.problems.append(f"bystander {self.user}: {type(error).__name__}: {error}")
        finally:
            self.ready.set()

    def _send(self, conn, frame):
        conn.pending = bytearray(ws_frame(0x1, encode(frame), key=os.urandom(4)))
        self.frames_sent += 1
        conn.sock.setblocking(True)
        conn.sock.sendall(bytes(conn.pending))
        conn.pending.clear()
        conn.sock.setblocking(False)

    def _run(self):
        conn = self.conn = RawSession(self.server.port, self.credential)
        if conn.status != 101:
            self.problems.append(f"bystander {self.user}: upgrade answered {conn.status}")
            return
        self._send(conn, {"type": "hello", "version": 2, "cursor": 0})
        seen, last_ping, number = 0, 0.0, 0
        while True:
            conn.pending = bytearray()
            conn.pump(b"", until=lambda c: len(c.texts) > seen or c.close_at is not None, timeout=0.2)
            for frame in conn.texts[seen:]:
                kind = frame.get("type")
                if kind == "welcome":
                    self.ready.set()
                elif kind == "message":
                    self.received.append((frame.get("seq"), frame.get("id"), time.monotonic()))
                    self._send(conn, {"type": "ack", "upTo": frame.get("seq")})
                elif kind == "pong":
                    sent_at = self.pings.pop(frame.get("id"), None)
                    if sent_at is None:
                        self.problems.append(f"bystander {self.user}: a pong for no ping: {frame}")
                    else:
                        self.pong_latencies.append(time.monotonic() - sent_at)
                else:
                    self.problems.append(f"bystander {self.user}: unexpected frame {json.dumps(frame)[:200]}")
            seen = len(conn.texts)
            if conn.violations:
                self.problems.append(f"bystander {self.user}: malformed server frames: {conn.violations[:3]}")
                conn.violations.clear()
            if conn.close_at is not None or conn.eof_at is not None:
                if not self.stop.is_set():
                    self.problems.append(f"bystander {self.user}: the session ended: close {conn.close_code} "
                                         f"{conn.close_reason!r}, reset={conn.reset}")
                self.final = conn.close_code
                return
            if self.stop.is_set() and self.stop_mode == "bye":
                self._send(conn, {"type": "bye"})
                conn.pump(b"", timeout=10)
                self.final = conn.close_code if conn.close_at is not None else "no close"
                return
            now = time.monotonic()
            if now - last_ping >= 1.0 and self.ready.is_set():
                number += 1
                ping_id = f"{self.user}-{number}"
                self.pings[ping_id] = now
                self._send(conn, {"type": "ping", "id": ping_id})
                last_ping = now


def run_poster(server, key, users, stop, posted, problems, interval):
    """Posts one message to every bystander user each `interval` seconds; records the answers."""
    number = 0
    while not stop.is_set():
        number += 1
        try:
            status, answer = server.post(key, users, {"n": number, "text": "from the poster"})
        except OSError as error:
            problems.append(f"poster: {error}")
            time.sleep(interval)
            continue
        if status != 202 or not isinstance(answer, dict) or "positions" not in answer:
            problems.append(f"poster: POST /v1/messages answered {status} {answer}")
        else:
            posted.append((answer["id"], {p["userId"]: p["sequence"] for p in answer["positions"]}, time.monotonic()))
        stop.wait(interval)


def judge_bystanders(bystanders, posted):
    """What went wrong for the bystanders, given `posted` [(message id, {user: sequence}, posted
    at)]: every posted message, in order, at its position, within LATENCY_LIMIT, pings answered;
    with their delivery latencies (sorted) and a line per bystander for the report."""
    latencies, report, problems = [], [], []
    for bystander in bystanders:
        expected = [(positions[bystander.user], message_id) for message_id, positions, _ in posted]
        got = [(seq, message_id) for seq, message_id, _ in bystander.received]
        if got != expected:
            missing = len(set(expected) - set(got))
            bystander.problems.append(f"bystander {bystander.user}: got {len(got)} messages, {len(expected)} posted; "
                                      f"{missing} missing; in order: {got == sorted(got)}; first difference at "
                                      f"{next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))}")
        posted_at = {message_id: at for message_id, _, at in posted}
        for _, message_id, at in bystander.received:
            if message_id in posted_at:
                latencies.append(at - posted_at[message_id])
        if bystander.pings:
            oldest = min(bystander.pings.values())
            if time.monotonic() - oldest > LATENCY_LIMIT:
                bystander.problems.append(f"bystander {bystander.user}: {len(bystander.pings)} pings unanswered")
        report.append(f"{bystander.user}: {len(bystander.received)} messages, "
                      f"{len(bystander.pong_latencies)} pongs (max {max(bystander.pong_latencies or [0]) * 1000:.0f} ms)")
    latencies.sort()
    slow = [x for x in latencies if x > LATENCY_LIMIT]
    if slow:
        problems.append(f"bystanders: {len(slow)} messages arrived more than {LATENCY_LIMIT:g} s after their post")
    for bystander in bystanders:
        problems.extend(bystander.problems)
    return problems, latencies, report
