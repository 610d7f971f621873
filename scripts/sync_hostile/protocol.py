"""Sync protocol frames that docs/sync-protocol.md refuses, one input class each: JSON that is
malformed, mistyped, too deep or too big; frames out of order (before `hello`, a second `hello`,
acks beyond what was sent, frames after `bye`); and floods past the 128 queued frames. Each
case carries the documented answer: close 4008 after an `error` frame with the documented code,
4029 for a flood, or the session carrying on."""
from beckonlib.websocket import encode, frame as ws_frame
from sync_hostile.cases import (ACCEPTED, MAX_READ_IDS, PRELOADED, QUEUED_FRAMES, Case, Expect, Frames, any_of,
                                close, pick, ping_text, protocol_error, random_json, random_uuid, valid_prefix)


MALFORMED_JSON = [b"", b" ", b"{", b"}", b"{\"type\":\"ping\",}", b"{'type':'ping'}", b"{\"type\":\"ping\"} x",
                  b"{\"type\":\"ping\"}{}", b"{\"type\":\"ping\" /*c*/}", b"{\"type\":NaN}", b"{\"type\":\"ping\",\"id\":01}",
                  b"{\"type\":\"ping\",\"id\":\"a\x01b\"}", b"{\"type\":\"ping\",\"id\":1.}", b"{\"type\":\"ping\",\"id\":-}",
                  b"{\"type\":\"ping\",\"id\":\"\\x41\"}", b"{\"type\" \"ping\"}", b"{\"type\":\"ping\"", b"{type:\"ping\"}",
                  b"{\"type\":\"ping\",\"id\":tru}", b"{\"type\":\"ping\",\"id\":[1,2}", b"\x00", b"{\"type\":\"ping\",\"id\":Infinity}",
                  b"{\"type\":\"ping\",\"id\":\"\\u12\"}", b"{\"type\":\"ping\",\"id\":+1}", b"{\"type\":\"ping\",\"id\":.5}"]
NOT_OBJECTS = [b"[]", b"null", b"42", b"\"ping\"", b"true", b"[{\"type\":\"ping\"}]", b"-0", b"1e5"]


def c_json(rng, index, ctx):
    names = ["malformed", "truncated", "not an object", "type missing", "type not a string", "unknown type",
             "hello without version", "hello without cursor", "ack without upTo", "read without ids", "mistyped version",
             "mistyped cursor", "mistyped window", "mistyped role", "mistyped upTo", "mistyped ids", "ids not strings",
             "null upTo", "huge exponent", "integer over 64 bits", "fractional upTo", "deep nesting", "very deep nesting",
             "nesting under the depth limit", "unknown fields", "null ping id", "big ping id", "too many read ids",
             "long read id", "duplicate keys", "lone surrogate escape", "byte order mark", "window over the maximum",
             "huge version", "negative cursor", "zero window", "empty read", "id of any JSON"]
    name = pick(rng, index, names)
    frames = Frames(rng)
    hello = True
    doc, rfc, note = None, None, ""
    mistyped = [rng.choice(["2", "x", ""]), True, False, [], {}, [2], {"v": 2}, 2.5]
    if name == "malformed":
        frames.text(rng.choice(MALFORMED_JSON))
        doc = protocol_error("malformed_frame")
        note = "a message that is not a JSON object"
    elif name == "truncated":
        text = encode({**ping_text(rng), "extra": random_json(rng, 3)})
        frames.text(text[:rng.randint(0, len(text) - 1)])
        doc = protocol_error("malformed_frame")
    elif name == "not an object":
        frames.text(rng.choice(NOT_OBJECTS))
        doc = protocol_error("malformed_frame")
    elif name == "type missing":
        frames.text(rng.choice([{}, {"upTo": 1}, {"Type": "ping"}, {"id": 1}]))
        doc = protocol_error("malformed_frame", "invalid_field")
        note = "a frame without `type`: malformed_frame or invalid_field (the document pairs neither)"
    elif name == "type not a string":
        frames.text({"type": rng.choice([1, True, None, ["ping"], {"ping": 1}, 2.5])})
        doc = protocol_error("malformed_frame", "invalid_field")
        note = "a `type` that is not a string: malformed_frame or invalid_field (the document pairs neither)"
    elif name == "unknown type":
        frames.text({"type": rng.choice(["Ping", "PING", " ping", "ping ", "pong", "welcome", "error", "helo", "",
                                         "hello\u0000", "x" * rng.randint(1, 5000), "message", "ACK"])})
        doc = protocol_error("unknown_type")
    elif name in ("hello without version", "hello without cursor"):
        hello = False
        frame = {"type": "hello", "version": 2, "cursor": 0}
        del frame["version" if "version" in name else "cursor"]
        frames.text(frame)
        doc = protocol_error("invalid_field")
    elif name == "ack without upTo":
        frames.text({"type": "ack", "up_to": 1})
        doc = protocol_error("invalid_field")
    elif name == "read without ids":
        frames.text({"type": "read", "id": [random_uuid(rng)]})
        doc = protocol_error("invalid_field")
    elif name.startswith("mistyped") and name != "mistyped upTo" and name != "mistyped ids":
        hello = False
        field = name.split()[1]
        frame = {"type": "hello", "version": 2, "cursor": 0}
        frame[field] = rng.choice(mistyped if field != "role" else mistyped[1:] + ["admin", "APP", "", "extension "])
        frames.text(frame)
        doc = protocol_error("invalid_field")
    elif name == "mistyped upTo":
        frames.text({"type": "ack", "upTo": rng.choice(mistyped)})
        doc = protocol_error("invalid_field")
    elif name == "mistyped ids":
        frames.text({"type": "read", "ids": rng.choice(["abc", 1, True, {"id": "x"}])})
        doc = protocol_error("invalid_field")
    elif name == "ids not strings":
        frames.text({"type": "read", "ids": [random_uuid(rng), rng.choice([1, None, [], {}, True])]})
        doc = protocol_error("invalid_field")
    elif name == "null upTo":
        frames.text({"type": "ack", "upTo": None})
        doc = protocol_error("invalid_field")
        note = "null for a required field: missing or mistyped, invalid_field either way"
    elif name == "huge exponent":
        frames.text(b'{"type":"ack","upTo":1e' + str(rng.randint(309, 100000)).encode() + b"}")
        doc = protocol_error("malformed_frame", "invalid_field")
        note = "a number out of range: the document does not say whether it is malformed JSON or a mistyped field"
    elif name == "integer over 64 bits":
        frames.text(b'{"type":"ack","upTo":' + str(rng.randint(2**63, 2**200)).encode() + b"}")
        doc = protocol_error("invalid_field", "malformed_frame")
        note = "an integer beyond 64 bits: a mistyped field or malformed JSON (the document does not give integers a width)"
    elif name == "fractional upTo":
        frames.text(b'{"type":"ack","upTo":' + rng.choice([b"1.5", b"0.1", b"-2.25"]) + b"}")
        doc = protocol_error("invalid_field")
    elif name in ("deep nesting", "very deep nesting"):
        depth = rng.randint(65, 1000) if name == "deep nesting" else rng.randint(20000, ctx.max_frame // 2 - 40)
        frames.text(b'{"type":"ping","id":' + b"[" * depth + b"]" * depth + b"}")
        note = "nesting depth: the document is silent (the server refuses more than 64 levels as malformed_frame)"
    elif name == "nesting under the depth limit":
        depth = rng.randint(1, 50)
        frames.text(b'{"type":"ping","id":"n","x":' + b"[" * depth + b"]" * depth + b"}")
        doc = ACCEPTED
        note = "unknown fields are ignored"
    elif name == "unknown fields":
        frame = rng.choice([ping_text(rng), {"type": "ack", "upTo": rng.randint(0, PRELOADED)}, {"type": "read", "ids": []}])
        frames.text({**{f"x{n}": random_json(rng, 4) for n in range(rng.randint(1, 8))}, **frame})
        doc = ACCEPTED
        note = "unknown fields are ignored"
    elif name == "null ping id":
        frames.text({"type": "ping", "id": None})
        note = "a null ping id: the document does not say whether the pong carries null or no id"
    elif name == "big ping id":
        size = rng.randint(1000, ctx.max_frame - 40)
        frames.text({"type": "ping", "id": "b" * size})
        doc = Expect("accepted, the pong echoing the id", lambda a, s=size: a.text == "accepted" and any(
            f.get("type") == "pong" and f.get("id") == "b" * s for f in a.conn.texts))
        note = "the server answers pong with the same id"
    elif name == "too many read ids":
        frames.text({"type": "read", "ids": [random_uuid(rng) for _ in range(MAX_READ_IDS + rng.randint(1, 300))]})
        note = "more than 1000 ids in read: the document states the limit, not the answer (the server: invalid_field)"
    elif name == "long read id":
        frames.text({"type": "read", "ids": ["i" * rng.randint(129, 5000)]})
        note = "a read id longer than any message id: the document is silent"
    elif name == "duplicate keys":
        frames.text(b'{"type":"bye","type":"ping","id":"dup"}')
        note = "repeated member names: the document is silent (RFC 8259 §4 leaves it open)"
    elif name == "lone surrogate escape":
        frames.text(b'{"type":"ping","id":"\\ud800"}')
        note = "a lone surrogate escape: the document is silent"
    elif name == "byte order mark":
        frames.text(b"\xef\xbb\xbf" + encode(ping_text(rng)))
        note = "a leading byte order mark: the document is silent (RFC 8259 §8.1 lets a parser ignore it)"
    elif name == "window over the maximum":
        hello = False
        window = rng.choice([ctx.max_window + 1, 10**6, 2**63 - 1])
        frames.text({"type": "hello", "version": 2, "cursor": PRELOADED, "window": window})
        doc = Expect(f"welcome.window capped at {ctx.max_window}", lambda a: a.text == "accepted" and any(
            f.get("type") == "welcome" and f.get("window") == ctx.max_window for f in a.conn.texts))
        note = "a bigger hello.window is capped; welcome.window tells"
    elif name == "huge version":
        hello = False
        frames.text({"type": "hello", "version": rng.choice([2**63 - 1, -(2**63), 0, 1, 3]), "cursor": 0})
        doc = protocol_error("unsupported_version")
    elif name == "negative cursor":
        hello = False
        frames.text({"type": "hello", "version": 2, "cursor": rng.choice([-1, -(2**63)])})
        note = "a negative cursor: the document is silent (the server: invalid_field)"
    elif name == "zero window":
        hello = False
        frames.text({"type": "hello", "version": 2, "cursor": 0, "window": rng.choice([0, -1, -(2**63)])})
        note = "a window below 1: the document is silent (the server: invalid_field)"
    elif name == "empty read":
        frames.text({"type": "read", "ids": []})
        doc = ACCEPTED
    else:
        value = random_json(rng, 5)
        frames.text({"type": "ping", "id": value})
        doc = Expect("accepted, the pong echoing the id", lambda a, v=value: a.text == "accepted" and any(
            f.get("type") == "pong" and same_json(f.get("id"), v) for f in a.conn.texts))
        note = "the server answers pong with the same id"
    return Case("json", index, name, frames, doc=doc, rfc=rfc, hello=hello, note=note,
                prefix=valid_prefix(rng, ctx) if hello else None)


def same_json(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and abs(a - b) <= 1e-9 * max(1, abs(a), abs(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    return a == b and type(a) is type(b)


def c_order(rng, index, ctx):
    names = ["ack before hello", "read before hello", "ping before hello", "bye before hello", "second hello",
             "second hello, other version", "ack beyond sent", "ack of a message not sent yet", "ack far in the future",
             "stale ack", "negative ack", "ack of the last sent", "cursor ahead", "cursor at the maximum",
             "frames after bye", "binary after bye", "websocket ping after bye", "read of unknown ids",
             "frames right after hello", "hello then garbage before welcome is read"]
    name = pick(rng, index, names)
    frames = Frames(rng)
    hello, doc, rfc, note, hello_frame, probe = True, None, None, "", None, True
    if name.endswith("before hello") and name != "hello then garbage before welcome is read":
        hello = False
        frame = {"ack before hello": {"type": "ack", "upTo": rng.randint(0, PRELOADED)},
                 "read before hello": {"type": "read", "ids": [random_uuid(rng)]},
                 "ping before hello": ping_text(rng), "bye before hello": {"type": "bye"}}[name]
        frames.text(frame)
        doc = protocol_error("unexpected_frame")
        note = "every frame before welcome must be hello, ping included"
    elif name.startswith("second hello"):
        version = 2 if name == "second hello" else rng.choice([1, 3])
        frames.text({"type": "hello", "version": version, "cursor": rng.randint(0, PRELOADED),
                     "role": rng.choice(["app", "extension"])})
        doc = protocol_error("unexpected_frame") if version == 2 else protocol_error("unexpected_frame", "unsupported_version")
    elif name == "ack beyond sent":
        frames.text({"type": "ack", "upTo": PRELOADED + rng.randint(1, 100)})
        doc = protocol_error("ack_beyond_sent")
    elif name == "ack of a message not sent yet":
        window = rng.randint(1, PRELOADED - 1)
        hello_frame = {"type": "hello", "version": 2, "cursor": 0, "window": window}
        frames.text({"type": "ack", "upTo": rng.randint(window + 1, PRELOADED)})
        doc = protocol_error("ack_beyond_sent")
        note = "the mailbox holds it, but the window kept it back: acks above what was sent are a protocol error"
    elif name == "ack far in the future":
        frames.text({"type": "ack", "upTo": rng.choice([2**63 - 1, 2**40, 10**15])})
        doc = protocol_error("ack_beyond_sent")
    elif name == "stale ack":
        frames.text({"type": "ack", "upTo": rng.randint(0, PRELOADED)})
        doc = ACCEPTED
        note = "an ack never moves the cursor backwards"
    elif name == "negative ack":
        frames.text({"type": "ack", "upTo": rng.choice([-1, -(2**63), -5])})
        note = "a negative ack: the document is silent (the server ignores it, as any ack below the cursor)"
    elif name == "ack of the last sent":
        window = rng.randint(1, PRELOADED)
        hello_frame = {"type": "hello", "version": 2, "cursor": 0, "window": window}
        frames.text({"type": "ack", "upTo": window})
        doc = ACCEPTED
    elif name in ("cursor ahead", "cursor at the maximum"):
        hello = False
        cursor = PRELOADED + rng.randint(1, 1000) if name == "cursor ahead" else 2**63 - 1
        frames.text({"type": "hello", "version": 2, "cursor": cursor})
        doc = protocol_error("cursor_ahead")
    elif name in ("frames after bye", "binary after bye", "websocket ping after bye"):
        frames.text({"type": "bye"})
        for _ in range(rng.randint(1, 20)):
            if name == "frames after bye":
                frames.text(rng.choice([{"type": "hello", "version": 2, "cursor": 0}, {"type": "zzz"}, b"not json",
                                        {"type": "ack", "upTo": 10**9}, ping_text(rng)]))
            elif name == "binary after bye":
                frames.add(0x2, rng.randbytes(rng.randint(0, 100)))
            else:
                frames.add(0x9, rng.randbytes(rng.randint(0, 125)))
        doc = close(1000)
        probe = False
        note = "after bye the server closes with 1000; what follows is not read"
    elif name == "read of unknown ids":
        frames.text({"type": "read", "ids": [random_uuid(rng) for _ in range(rng.randint(1, MAX_READ_IDS))]})
        note = "read of ids that are no message of the user: the document is silent (the server ignores them)"
    elif name == "frames right after hello":
        hello = False
        frames.text({"type": "hello", "version": 2, "cursor": PRELOADED}).extend(valid_prefix(rng, ctx, 20))
        note = ("frames sent after hello before welcome arrived: 'every frame before welcome must be hello' "
                "could forbid them; the server reads them after hello")
    else:
        hello = False
        frames.text({"type": "hello", "version": 2, "cursor": PRELOADED}).text({"type": rng.choice(["zzz", "welcome"])})
        doc = protocol_error("unknown_type")
    return Case("order", index, name, frames, doc=doc, rfc=rfc, hello=hello, note=note, hello_frame=hello_frame,
                probe=probe, prefix=valid_prefix(rng, ctx) if hello and not hello_frame else None)


def c_flood(rng, index, ctx):
    names = ["reads of unknown ids", "big reads", "big reads under the limit", "stale acks", "json pings", "empty reads",
             "before hello", "websocket pings", "mixed"]
    name = pick(rng, index, names)
    count = rng.randint(2000, 10000 if ctx.long else 5000)
    frames = Frames(rng)
    hello = name != "before hello"
    if name == "big reads":
        # Far past the limit: with only a few hundred over it, a fast server can take them as they
        # come and keep its queue under the limit.
        count = rng.randint(QUEUED_FRAMES * 6, QUEUED_FRAMES * 10)
    elif name == "big reads under the limit":
        count = QUEUED_FRAMES - 8
    one = {"reads of unknown ids": lambda: {"type": "read", "ids": [random_uuid(rng) for _ in range(rng.randint(1, 5))]},
           "big reads": lambda: {"type": "read", "ids": [random_uuid(rng) for _ in range(rng.randint(200, 400))]},
           "big reads under the limit": lambda: {"type": "read", "ids": [random_uuid(rng) for _ in range(rng.randint(200, 400))]},
           "stale acks": lambda: {"type": "ack", "upTo": rng.randint(0, PRELOADED)},
           "json pings": lambda: ping_text(rng), "empty reads": lambda: {"type": "read", "ids": []},
           "before hello": lambda: rng.choice([ping_text(rng), {"type": "ack", "upTo": 0}])}.get(name)
    if name == "websocket pings":
        for _ in range(count):
            frames.add(0x9, rng.randbytes(rng.randint(0, 16)))
    elif name == "mixed":
        for _ in range(count):
            kind = rng.randrange(4)
            if kind == 0:
                frames.add(0x9, b"")
            elif kind == 1:
                frames.text({"type": "ack", "upTo": 0})
            elif kind == 2:
                frames.text({"type": "read", "ids": [random_uuid(rng)]})
            else:
                frames.text(ping_text(rng))
    else:
        # The same few frames over and over (with their masks): building each one would cost more
        # time than the server takes to read it.
        samples = [ws_frame(0x1, encode(one()), key=rng.randbytes(4)) for _ in range(min(count, 64))]
        frames.raw(b"".join(samples[n % len(samples)] for n in range(count)), count)
    if name == "before hello":
        doc = protocol_error("unexpected_frame")
        note = "a flood before hello: its first frame is already a protocol error"
    elif name == "websocket pings":
        doc, note = None, "WebSocket pings are answered as they come; not frames queued for the session"
    elif name == "big reads":
        doc = close(4029)
        note = (f"{count} reads of hundreds of ids each, sent at once: far more than {QUEUED_FRAMES} wait to be "
                "processed (each is a write to the store), close 4029")
    elif name == "big reads under the limit":
        doc = ACCEPTED
        note = f"{count} frames, the probe's 2 included fewer than {QUEUED_FRAMES}: never 4029"
    else:
        doc = any_of(close(4029), ACCEPTED)
        note = f"close 4029 if more than {QUEUED_FRAMES} frames wait, else all answered (the server may keep up)"
    rfc = ACCEPTED if name == "websocket pings" else None
    return Case("flood", index, name, frames, doc=doc, rfc=rfc, hello=hello, note=note, timeout=60.0)
