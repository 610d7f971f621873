"""The model of a hostile case: the frames it sends (built from a seeded random source, so a case
is the same bytes every time), the answers docs/sync-protocol.md and RFC 6455 give it, how it is
run on a fresh connection (with a probe after it, where the session should still work), and how
its answer is judged. The input classes (framing, protocol, sessions) build their cases from it."""
import collections, json, random

from beckonlib.websocket import CLOSE_WAIT, ERROR_CODES, RawSession, encode, frame as ws_frame, mask_payload

PRELOADED = 5          # messages in every hostile user's mailbox before the run
QUEUED_FRAMES = 128    # docs/sync-protocol.md, Limits: client frames queued (beyond it: 4029)
MAX_READ_IDS = 1000    # docs/sync-protocol.md, Limits: ids in one `read`
CLIENT_TYPES = ("hello", "ack", "read", "ping", "bye")


class Frames:
    """A byte stream of client frames and how many frames it holds, built with a seeded random
    source (masking keys included), so a case is the same bytes every time."""

    def __init__(self, rng):
        self.rng, self.parts, self.count = rng, [], 0

    def add(self, opcode, payload=b"", **options):
        options.setdefault("key", self.rng.randbytes(4))
        self.parts.append(ws_frame(opcode, payload, **options))
        self.count += 1
        return self

    def text(self, value, **options):
        return self.add(0x1, value if isinstance(value, bytes) else encode(value), **options)

    def raw(self, data, frames=0):
        self.parts.append(data)
        self.count += frames
        return self

    def extend(self, other):
        self.parts.extend(other.parts)
        self.count += other.count
        return self

    def bytes(self):
        return b"".join(self.parts)


# --- Expected answers ----------------------------------------------------------------------------

class Answer:
    """What came back for one case, in words (the summary counts these)."""

    def __init__(self, conn, outcome, probe_id=None, half_closed=False):
        self.conn, self.outcome = conn, outcome
        errors = conn.errors()
        self.error = errors[-1].get("code") if errors else None
        self.errors = len(errors)
        self.close = conn.close_code if conn.close_at is not None else None
        self.probe = probe_id is not None and any(
            frame.get("type") == "pong" and frame.get("id") == probe_id for frame in conn.texts)
        if conn.close_at is not None:
            code = "none" if conn.close_code is None else conn.close_code
            self.text = f"close {code}" + (f" error={self.error}" if self.error else "")
            if conn.extra_closes:
                self.text += " then close " + ", ".join("none" if c is None else str(c) for c in conn.extra_closes)
            if self.probe and conn.close_code == 1000 and not self.error:
                self.text = "accepted"
        elif conn.reset:
            self.text = "reset"
        elif conn.eof_at is not None:
            self.text = "hung up" if not half_closed else "hung up after our half-close"
        else:
            self.text = "no answer"


class Expect:
    """A matcher of answers, with a description."""

    def __init__(self, description, test):
        self.description, self.test = description, test

    def __call__(self, answer):
        return self.test(answer)


def close(code, errors=None):
    """The server's close frame with `code`; for 4008, after an `error` frame with one of `errors`
    as its code, and it last; otherwise with no `error` frame."""
    if code == 4008:
        errors = set(errors or ERROR_CODES)
        description = f"close 4008 after error {'|'.join(sorted(errors))}"
        return Expect(description, lambda a: a.close == 4008 and a.error in errors and a.errors == 1
                      and a.conn.texts and a.conn.texts[-1].get("type") == "error")
    return Expect(f"close {code}", lambda a: a.close == code and a.errors == 0)


def protocol_error(*codes):
    return close(4008, set(codes))


ACCEPTED = Expect("accepted (the probe ping answered, bye closes with 1000)", lambda a: a.text == "accepted")
ANSWERED = Expect("the close answered with a close frame, then a hang-up",
                  lambda a: a.close is not None or a.conn.close_at is not None)
HUNG_UP = Expect("the server hangs up", lambda a: a.conn.eof_at is not None and a.error is None and a.close in (None,))


def echo(code):
    return Expect(f"close answered with {code}", lambda a: a.conn.close_at is not None and a.close == code)


def any_of(*expects):
    return Expect(" or ".join(e.description for e in expects), lambda a: any(e(a) for e in expects))


class Case:
    """One hostile session: optional `hello` (and a prefix of valid traffic once `welcome` came),
    then the hostile bytes, then, if the session is still open, a probe (`ping`, then `bye`).
    `doc` is the answer docs/sync-protocol.md gives (None: it is silent), `rfc` the one RFC 6455
    asks for where the document is silent."""

    def __init__(self, cls, index, name, frames, doc=None, rfc=None, hello=True, prefix=None, note="",
                 probe=True, half_close=False, stall=0.0, timeout=8.0, device="main", hello_frame=None,
                 quiet=0.05, run=None):
        self.cls, self.index, self.name = cls, index, name
        self.frames, self.doc, self.rfc, self.hello, self.prefix = frames, doc, rfc, hello, prefix
        self.note, self.probe, self.half_close, self.stall, self.timeout = note, probe, half_close, stall, timeout
        self.device, self.hello_frame, self.quiet, self.run = device, hello_frame, quiet, run

    @property
    def id(self):
        return f"{self.cls}:{self.index}"


# --- What the classes build with ----------------------------------------------------------------
# Each class takes (rng, index, context) and returns a Case. The subcases of a class come first in
# order (so every one runs in the short run), then at random.

def pick(rng, index, names):
    return names[index] if index < len(names) else rng.choice(names)


def ping_text(rng, pad=0):
    return {"type": "ping", "id": f"p{rng.getrandbits(40):x}", **({"pad": "x" * pad} if pad else {})}


def valid_prefix(rng, context, most=12):
    """Valid traffic after `welcome`: pings (JSON and WebSocket), stale acks, reads of unknown
    ids, unsolicited pongs, fragmented frames with control frames among the fragments."""
    most = min(most * 3, 40) if getattr(context, "long", False) else most  # well under the queued-frame limit
    frames = Frames(rng)
    for _ in range(rng.randint(0, most)):
        kind = rng.randrange(8)
        if kind == 0:
            frames.text(ping_text(rng))
        elif kind == 1:
            frames.text({"type": "ack", "upTo": rng.randint(0, PRELOADED)})
        elif kind == 2:
            frames.text({"type": "read", "ids": [random_uuid(rng) for _ in range(rng.randint(0, 3))]})
        elif kind == 3:
            frames.add(0x9, rng.randbytes(rng.randint(0, 125)))
        elif kind == 4:
            frames.add(0xA, rng.randbytes(rng.randint(0, 20)))
        elif kind == 5:
            fragmented(frames, rng, encode(ping_text(rng)), rng.randint(2, 6), controls=True)
        elif kind == 6:
            frames.text({**ping_text(rng), "extra": random_json(rng, 3)})
        else:
            frames.text({"type": "read", "ids": []})
    return frames


def random_uuid(rng):
    raw = rng.getrandbits(128).to_bytes(16, "big").hex()
    return f"{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:]}"


def random_json(rng, depth):
    kind = rng.randrange(7 if depth > 0 else 5)
    if kind == 0:
        return rng.randint(-2**63, 2**63 - 1)
    if kind == 1:
        return rng.random() * 10 ** rng.randint(-5, 20)
    if kind == 2:
        return "".join(rng.choice("abcé€😀\"\\/\n\t ") for _ in range(rng.randint(0, 12)))
    if kind == 3:
        return rng.choice([True, False, None])
    if kind == 4:
        return []
    if kind == 5:
        return [random_json(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    return {f"k{rng.randrange(100)}": random_json(rng, depth - 1) for _ in range(rng.randint(0, 3))}


def split(rng, data, pieces):
    """`data` cut into `pieces` parts (some possibly empty)."""
    cuts = sorted(rng.randint(0, len(data)) for _ in range(pieces - 1))
    bounds = [0] + cuts + [len(data)]
    return [data[bounds[i]:bounds[i + 1]] for i in range(pieces)]


def fragmented(frames, rng, data, pieces, opcode=0x1, controls=False):
    """A message in `pieces` fragments; with `controls`, pings and pongs among them (RFC 6455 §5.4)."""
    parts = split(rng, data, pieces)
    for number, part in enumerate(parts):
        frames.add(opcode if number == 0 else 0x0, part, fin=number == len(parts) - 1)
        if controls and number < len(parts) - 1 and rng.random() < 0.3:
            frames.add(rng.choice((0x9, 0xA)), rng.randbytes(rng.randint(0, 30)))
    return frames


def padded_ping(rng, size):
    """A ping frame's JSON text of exactly `size` bytes (whitespace inside the object)."""
    base = encode(ping_text(rng))
    assert size >= len(base)
    return base[:-1] + b" " * (size - len(base)) + b"}"


# --- Running a case ------------------------------------------------------------------------------

class Context:
    def __init__(self, server, args, worker, credentials):
        self.server, self.port = server, server.port
        self.max_frame, self.max_window, self.long = args.max_frame_bytes, args.max_window, args.frames >= 200000
        self.worker, self.credentials = worker, credentials
        self.probes = 0


def probe_frames(ctx, case, hello_done):
    ctx.probes += 1
    probe_id = f"probe-{ctx.worker}-{ctx.probes}"
    frames = Frames(random.Random(probe_id))
    if not hello_done:
        frames.text({"type": "hello", "version": 2, "cursor": PRELOADED})
    frames.text({"type": "ping", "id": probe_id}).text({"type": "bye"})
    return probe_id, frames


def run_case(ctx, case):
    """Runs one case on a fresh connection; returns (Answer, frames sent)."""
    if case.run:
        return case.run(ctx, case)
    conn = RawSession(ctx.port, ctx.credentials[case.device])
    sent = 0
    try:
        if conn.status != 101:
            raise RuntimeError(f"the upgrade was refused: {conn.status}")
        hello_done = False
        if case.hello:
            hello = case.hello_frame or {"type": "hello", "version": 2, "cursor": PRELOADED}
            first = Frames(random.Random(case.id)).text(hello)
            sent += first.count
            outcome = conn.pump(first.bytes(), until=lambda c: any(f.get("type") == "welcome" for f in c.texts), timeout=10)
            if outcome != "until":
                return Answer(conn, "no welcome"), sent
            hello_done = True
            if case.hello_frame and case.hello_frame.get("cursor") == 0:
                # Let the window's messages come before the case's frames (they are sent after welcome).
                window = min(case.hello_frame.get("window", 100), PRELOADED)
                conn.pump(b"", until=lambda c: sum(f.get("type") == "message" for f in c.texts) >= window, timeout=10)
        data = (case.prefix.bytes() if case.prefix else b"") + case.frames.bytes()
        sent += (case.prefix.count if case.prefix else 0) + case.frames.count
        if case.stall:
            conn.pump(data, quiet=case.stall, timeout=case.stall + 5)
            data = b""
            if conn.close_at is not None or conn.eof_at is not None:
                return Answer(conn, "ended during the pause"), sent
        reply = getattr(case, "reply_close", True)
        if case.half_close and not case.probe:
            outcome = conn.pump(data, half_close=True, timeout=case.timeout, reply_close=reply)
            return Answer(conn, outcome, half_closed=True), sent
        probe_id = None
        if case.probe and case.doc is not None and case.doc.description.startswith(("accepted", "welcome")):
            # Documented to be accepted: the probe follows at once.
            probe_id, probe = probe_frames(ctx, case, hello_done or _said_hello(case))
            sent += probe.count
            return Answer(conn, conn.pump(data + probe.bytes(), timeout=case.timeout, reply_close=reply), probe_id), sent
        # Otherwise the probe goes only if the server said nothing for a moment (a close would
        # have come at once).
        outcome = conn.pump(data, quiet=case.quiet if case.probe else None, timeout=case.timeout, reply_close=reply)
        if outcome == "quiet" and not conn.write_failed:
            probe_id, probe = probe_frames(ctx, case, hello_done or _said_hello(case))
            sent += probe.count
            outcome = conn.pump(probe.bytes(), quiet=0.5 if case.half_close else None, timeout=case.timeout,
                                reply_close=reply)
            if outcome == "quiet" and case.half_close:
                outcome = conn.pump(b"", half_close=True, timeout=CLOSE_WAIT + 3)
                return Answer(conn, outcome, probe_id, half_closed=True), sent
        return Answer(conn, outcome, probe_id), sent
    finally:
        conn.close()


def _said_hello(case):
    """Whether the case's own frames begin with a hello the server accepts (then the probe does not say it)."""
    first = case.frames.parts[0] if case.frames.parts else b""
    if len(first) < 2 or first[0] & 0x0F != 0x1:
        return False
    try:
        length = first[1] & 0x7F
        offset = 2 + (2 if length == 126 else 8 if length == 127 else 0)
        key = first[offset:offset + 4] if first[1] & 0x80 else None
        body = first[offset + 4:] if key else first[offset:]
        value = json.loads(mask_payload(body, key) if key else body)
        return value.get("type") == "hello" and value.get("version") == 2 and value.get("cursor") == PRELOADED
    except (ValueError, AttributeError, UnicodeDecodeError):
        return False


# --- Judging ------------------------------------------------------------------------------------

class Tally:
    def __init__(self):
        self.cases = 0
        self.frames = 0
        self.answers = collections.Counter()
        self.failures = []
        self.deviations = collections.Counter()
        self.silent = collections.Counter()
        self.kinds = collections.Counter()
        self.seconds = 0.0


def judge(case, answer, strict):
    """Problems of one case (empty: passed) and, separately, an RFC 6455 deviation or None."""
    problems = []
    conn = answer.conn
    if conn.violations:
        problems.append("malformed server frames: " + "; ".join(conn.violations[:3]))
    if answer.close == 1011 and not any(opcode == 0x8 for opcode, _ in parse_client_frames(case)):
        problems.append("closed with 1011 (internal error)")
    if answer.text == "no answer":
        problems.append("no answer within the time limit")
    if answer.close is not None and answer.close != 4008 and answer.errors:
        problems.append(f"an error frame before close {answer.close}")
    if answer.close == 4008 and (not conn.texts or conn.texts[-1].get("type") != "error"):
        problems.append("close 4008 without an error frame just before it")
    if conn.close_at is not None and conn.eof_at is None:
        problems.append(f"the server did not hang up within {CLOSE_WAIT + 2:g} s of its close frame")
    if case.cls in ("sessions",):
        if answer.text != "as documented":
            problems.append(answer.text)
        return problems, None
    if case.cls == "upgrade":
        if not getattr(answer, "upgrade_ok", False):
            problems.append(answer.text)
        return problems, None
    if case.doc is not None and not case.doc(answer):
        problems.append(f"documented: {case.doc.description}")
    deviation = None
    if case.rfc is not None and not case.rfc(answer):
        deviation = f"RFC 6455: {case.rfc.description}"
        if strict:
            problems.append(deviation)
    if case.cls == "noise":
        allowed = {1000, 1002, 1003, 1007, 1009, 4008, 4029}
        if answer.close is not None and answer.close not in allowed and not any(
                op == 0x8 for op, _ in parse_client_frames(case)):
            problems.append(f"close {answer.close} is no answer to bad input")
    return problems, deviation


def parse_client_frames(case):
    """(opcode, fin) of the frames a case sends, as far as they parse (for the noise class)."""
    data = case.frames.bytes()
    out, offset = [], 0
    while len(data) - offset >= 2:
        first, second = data[offset], data[offset + 1]
        length, position = second & 0x7F, offset + 2
        if length == 126:
            length, position = int.from_bytes(data[position:position + 2], "big"), position + 2
        elif length == 127:
            length, position = int.from_bytes(data[position:position + 8], "big"), position + 8
        if second & 0x80:
            position += 4
        out.append((first & 0x0F, bool(first & 0x80)))
        offset = position + length
    return out


def describe(case, answer, limit=160):
    data = case.frames.bytes()
    shown = data[:limit].hex()
    frames_in = [(f"{op:#x}", payload[:60]) for op, payload, _ in answer.conn.frames[-4:]]
    return (f"{case.id} {case.name!r}: answer {answer.text!r} ({answer.outcome}); sent {case.frames.count} frames, "
            f"{len(data)} bytes: {shown}{'…' if len(data) > limit else ''}; last frames in: {frames_in}")
