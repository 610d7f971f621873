"""WebSocket framing that breaks RFC 6455, one input class each: reserved opcodes and bits,
unmasked client frames, control frames too long or fragmented, fragments out of place, invalid
UTF-8, binary messages, messages over `sync.max-frame-bytes`, lengths that lie, close frames
of every shape, and random frames. Where docs/sync-protocol.md gives the answer (1009 over the
limit, 4008 after an `error` frame for a binary message) it is asserted; where it is silent the
case carries RFC 6455's answer, reported as a deviation."""
from beckonlib.websocket import CLOSE_WAIT, RawSession, close_payload, encode, frame as ws_frame
from sync_hostile.cases import (ACCEPTED, ANSWERED, CLIENT_TYPES, HUNG_UP, PRELOADED, Answer, Case, Expect, Frames,
                                any_of, close, echo, fragmented, padded_ping, pick, ping_text, protocol_error,
                                random_json, split, valid_prefix)


def c_opcode(rng, index, ctx):
    names = ["data 0x3", "data 0x7", "control 0xB", "control 0xF", "reserved data", "reserved control", "before hello"]
    name = pick(rng, index, names)
    opcode = {"data 0x3": 3, "data 0x7": 7, "control 0xB": 0xB, "control 0xF": 0xF}.get(name)
    if opcode is None:
        opcode = rng.choice([3, 4, 5, 6, 7] if name != "reserved control" else [0xB, 0xC, 0xD, 0xE, 0xF])
        if name == "before hello":
            opcode = rng.choice([3, 4, 5, 6, 7, 0xB, 0xC, 0xD, 0xE, 0xF])
    frames = Frames(rng).add(opcode, rng.randbytes(rng.randint(0, 125)), fin=opcode >= 8 or rng.random() < 0.7)
    return Case("opcode", index, name, frames, rfc=close(1002), hello=name != "before hello",
                prefix=valid_prefix(rng, ctx), note="reserved opcodes: the document is silent; RFC 6455 §5.2 fails the connection")


def c_rsv(rng, index, ctx):
    names = ["text ping", "websocket ping", "continuation", "first fragment", "pong"]
    name = pick(rng, index, names)
    rsv = rng.randint(1, 7)
    frames = Frames(rng)
    if name == "text ping":
        frames.text(ping_text(rng), rsv=rsv)
    elif name == "websocket ping":
        frames.add(0x9, rng.randbytes(rng.randint(0, 125)), rsv=rsv)
    elif name == "pong":
        frames.add(0xA, rng.randbytes(rng.randint(0, 125)), rsv=rsv)
    else:
        data = encode(ping_text(rng))
        parts = split(rng, data, 2)
        frames.add(0x1, parts[0], fin=False, rsv=rsv if name == "first fragment" else 0)
        frames.add(0x0, parts[1], rsv=rsv if name == "continuation" else 0)
    return Case("rsv", index, name, frames, rfc=close(1002), prefix=valid_prefix(rng, ctx),
                note="reserved bits without an extension: the document is silent; RFC 6455 §5.2 fails the connection")


def c_unmasked(rng, index, ctx):
    names = ["text ping", "hello", "websocket ping", "fragments", "binary"]
    name = pick(rng, index, names)
    frames = Frames(rng)
    hello = True
    doc = None
    if name == "text ping":
        frames.text(ping_text(rng), masked=False)
    elif name == "hello":
        hello = False
        frames.text({"type": "hello", "version": 2, "cursor": PRELOADED}, masked=False)
    elif name == "websocket ping":
        frames.add(0x9, rng.randbytes(rng.randint(0, 125)), masked=False)
    elif name == "fragments":
        for number, part in enumerate(split(rng, encode(ping_text(rng)), 3)):
            frames.add(0x1 if number == 0 else 0x0, part, fin=number == 2, masked=rng.random() < 0.5)
    else:
        frames.add(0x2, encode(ping_text(rng)), masked=False)
    return Case("unmasked", index, name, frames, doc=doc, rfc=close(1002), hello=hello, prefix=valid_prefix(rng, ctx) if hello else None,
                note="unmasked client frames: the document is silent; RFC 6455 §5.1 has the server close the connection (1002)")


def c_control(rng, index, ctx):
    names = ["ping 126 bytes", "long ping 16-bit", "long pong", "long close", "ping over the limit", "fragmented ping",
             "fragmented pong", "fragmented close", "ping 125 bytes echoed", "unsolicited pong", "ping before hello",
             "controls between fragments"]
    name = pick(rng, index, names)
    limit = ctx.max_frame
    frames = Frames(rng)
    note = "control frames over 125 bytes or fragmented: the document is silent; RFC 6455 §5.5 fails the connection"
    doc, rfc, hello = None, close(1002), True
    if name == "ping 126 bytes":
        frames.add(0x9, rng.randbytes(126))
    elif name == "long ping 16-bit":
        frames.add(0x9, rng.randbytes(rng.randint(127, min(limit, 4000))))
    elif name == "long pong":
        frames.add(0xA, rng.randbytes(rng.randint(126, min(limit, 4000))))
    elif name == "long close":
        frames.add(0x8, close_payload(1000, b"r" * rng.randint(124, 1000)))
    elif name == "ping over the limit":
        size = limit + rng.randint(1, 1000)
        frames.add(0x9, rng.randbytes(size))
        rfc = any_of(close(1002), close(1009))
        note = "a control frame over sync.max-frame-bytes: the document's 1009 is for messages; RFC 6455 makes it a protocol error"
    elif name in ("fragmented ping", "fragmented pong", "fragmented close"):
        opcode = {"fragmented ping": 0x9, "fragmented pong": 0xA, "fragmented close": 0x8}[name]
        frames.add(opcode, rng.randbytes(rng.randint(0, 50)) if opcode != 0x8 else close_payload(1000), fin=False)
    elif name == "ping 125 bytes echoed":
        payload = rng.randbytes(rng.randint(0, 125))
        frames.add(0x9, payload)
        rfc = Expect("accepted, the pong carrying the ping's payload", lambda a, p=payload: a.text == "accepted" and any(
            op == 0xA and data == p for op, data, _ in a.conn.frames))
        note = "WebSocket pings: the document is silent; RFC 6455 §5.5.3 answers with the same payload"
    elif name == "unsolicited pong":
        frames.add(0xA, rng.randbytes(rng.randint(0, 125)))
        rfc = ACCEPTED
        note = "an unsolicited pong is a heartbeat (RFC 6455 §5.5.3): no answer"
    elif name == "ping before hello":
        hello = False
        payload = rng.randbytes(rng.randint(0, 125))
        frames.add(0x9, payload)
        rfc = Expect("accepted, the pong first", lambda a, p=payload: a.text == "accepted" and any(
            op == 0xA and data == p for op, data, _ in a.conn.frames))
        note = "a WebSocket ping before hello: the document's 'ping included' is the JSON ping; RFC 6455 answers it"
    else:
        fragmented(frames, rng, encode(ping_text(rng)), rng.randint(3, 12), controls=True)
        doc, rfc = ACCEPTED, ACCEPTED
        note = "control frames between fragments are allowed (RFC 6455 §5.4)"
    return Case("control", index, name, frames, doc=doc, rfc=rfc, hello=hello,
                prefix=valid_prefix(rng, ctx) if hello else None, note=note)


def c_fragments(rng, index, ctx):
    names = ["continuation first", "continuation after a whole message", "text inside a message", "binary inside a message",
             "valid fragments", "fragmented binary", "exactly the limit in fragments", "one byte over the limit in fragments",
             "far over the limit in fragments", "fragment storm", "empty fragments", "continuation before hello",
             "unfinished message then half-close"]
    name = pick(rng, index, names)
    limit = ctx.max_frame
    frames = Frames(rng)
    hello, doc, rfc, half_close, probe = True, None, None, False, True
    note = "fragmentation: the document is silent; RFC 6455 §5.4 fails the connection on a fragment out of place"
    if name in ("continuation first", "continuation before hello"):
        frames.add(0x0, encode(ping_text(rng)), fin=rng.random() < 0.5)
        rfc, hello = close(1002), name == "continuation first"
    elif name == "continuation after a whole message":
        frames.text(ping_text(rng)).add(0x0, b"{}")
        rfc = close(1002)
    elif name in ("text inside a message", "binary inside a message"):
        parts = split(rng, encode(ping_text(rng)), 2)
        frames.add(0x1, parts[0], fin=False).add(0x1 if name.startswith("text") else 0x2, parts[1])
        rfc = close(1002)
    elif name == "valid fragments":
        fragmented(frames, rng, encode(ping_text(rng, pad=rng.randint(0, 3000))), rng.randint(2, 40), controls=True)
        doc = rfc = ACCEPTED
        note = "a text message is whatever its fragments make"
    elif name == "fragmented binary":
        fragmented(frames, rng, encode(ping_text(rng)), rng.randint(2, 6), opcode=0x2)
        doc = protocol_error("malformed_frame")
        note = "a binary message is a protocol error; the document lists malformed_frame among the codes without pairing"
    elif name == "exactly the limit in fragments":
        fragmented(frames, rng, padded_ping(rng, limit), rng.randint(2, 20))
        doc = ACCEPTED
        note = "sync.max-frame-bytes is the largest message a client may send"
    elif name in ("one byte over the limit in fragments", "far over the limit in fragments"):
        size = limit + 1 if name.startswith("one") else limit + rng.randint(2, 4 * limit)
        pieces = max(2, size // rng.randint(1000, min(limit, 60000)) + 1)
        data = padded_ping(rng, size)
        parts = split(rng, data, pieces)
        # No fragment on its own over the limit.
        parts = [piece for part in parts for piece in (part[i:i + limit] for i in range(0, max(len(part), 1), limit))]
        for number, part in enumerate(parts):
            frames.add(0x1 if number == 0 else 0x0, part, fin=number == len(parts) - 1)
        doc = close(1009)
        note = "a message over sync.max-frame-bytes, assembled from fragments"
    elif name == "fragment storm":
        data = padded_ping(rng, rng.randint(60, 1500 if ctx.long else 400))
        for number, byte in enumerate(data):
            frames.add(0x1 if number == 0 else 0x0, data[number:number + 1], fin=number == len(data) - 1)
        doc = rfc = ACCEPTED
        note = "a message of one-byte fragments"
    elif name == "empty fragments":
        data = encode(ping_text(rng))
        frames.add(0x1, data, fin=False)
        for _ in range(rng.randint(10, 2000 if ctx.long else 300)):
            frames.add(0x0, b"", fin=False)
        frames.add(0x0, b"", fin=True)
        doc = rfc = ACCEPTED
        note = "a message ended by many empty continuation frames"
    else:
        frames.add(0x1, encode(ping_text(rng))[:5], fin=False)
        half_close, probe = True, False
        doc = HUNG_UP
        note = "the device's connection ends: the server hangs up (recorded as dropped)"
    return Case("fragments", index, name, frames, doc=doc, rfc=rfc, hello=hello, note=note, half_close=half_close,
                probe=probe, prefix=valid_prefix(rng, ctx) if hello else None)


INVALID_UTF8 = [b"\xff", b"\xfe", b"\xc0\x80", b"\xc1\xbf", b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xf4\x90\x80\x80",
                b"\xe2\x82", b"\x80", b"\xf8\x88\x80\x80\x80", b"\xf0\x9f\x98", b"\xce"]


def c_utf8(rng, index, ctx):
    names = ["in an ignored field", "in the ping id", "outside strings", "in the type", "valid character split over fragments",
             "invalid across fragments", "at the end", "in a close reason"]
    name = pick(rng, index, names)
    bad = rng.choice(INVALID_UTF8)
    frames = Frames(rng)
    rfc = close(1007)
    doc = None
    note = "invalid UTF-8 in a text message: the document is silent; RFC 6455 §8.1 fails the connection with 1007"
    if name == "in an ignored field":
        frames.text(b'{"type":"ping","id":"u","x":"a' + bad + b'b"}')
    elif name == "in the ping id":
        frames.text(b'{"type":"ping","id":"' + bad + b'"}')
    elif name == "outside strings":
        frames.text(b'{"type":"ping",' + bad + b'}')
    elif name == "in the type":
        frames.text(b'{"type":"pi' + bad + b'ng"}')
    elif name == "valid character split over fragments":
        text = b'{"type":"ping","id":"' + "é€😀".encode() + b'"}'
        cut = text.index(b"\xe2") + 1
        frames.add(0x1, text[:cut], fin=False).add(0x0, text[cut:])
        rfc = doc = ACCEPTED
        note = "UTF-8 is checked on the message, not on each fragment"
    elif name == "invalid across fragments":
        text = b'{"type":"ping","id":"' + bad + b'"}'
        cut = text.index(bad) + 1
        frames.add(0x1, text[:cut], fin=False).add(0x0, text[cut:])
    elif name == "at the end":
        frames.text(encode(ping_text(rng)) + bad)
    else:
        frames.add(0x8, close_payload(1000, b"bye" + bad))
        note = "a close reason that is not UTF-8: the document is silent; RFC 6455 §8.1 fails the connection with 1007"
    return Case("utf8", index, name, frames, doc=doc, rfc=rfc, prefix=valid_prefix(rng, ctx), note=note)


def c_binary(rng, index, ctx):
    names = ["a JSON frame", "random bytes", "empty", "at the limit", "before hello", "after traffic"]
    name = pick(rng, index, names)
    frames = Frames(rng)
    hello = name != "before hello"
    payload = {"a JSON frame": encode(ping_text(rng)), "random bytes": rng.randbytes(rng.randint(1, 3000)), "empty": b"",
               "at the limit": rng.randbytes(ctx.max_frame)}.get(name, encode({"type": "hello", "version": 2, "cursor": 0}))
    frames.add(0x2, payload)
    doc = protocol_error("malformed_frame") if hello else protocol_error("malformed_frame", "unexpected_frame")
    return Case("binary", index, name, frames, doc=doc, hello=hello,
                prefix=valid_prefix(rng, ctx, 40 if name == "after traffic" else 12) if hello else None,
                note="a binary message is a protocol error (4008 after error); before hello it is also a frame before hello")


def c_oversize(rng, index, ctx):
    limit = ctx.max_frame
    names = ["one byte over", "over, 64-bit length", "header only", "2^32", "2^63 (top bit set)", "2^64 - 1",
             "binary over", "continuation over", "exactly the limit", "non-minimal 16-bit length", "non-minimal 64-bit length",
             "over before hello"]
    name = pick(rng, index, names)
    frames = Frames(rng)
    doc, rfc, hello = close(1009), None, name != "over before hello"
    note = "a message over sync.max-frame-bytes: close 1009"
    if name in ("one byte over", "over before hello"):
        frames.text(padded_ping(rng, limit + 1))
    elif name == "over, 64-bit length":
        frames.text(padded_ping(rng, limit + rng.randint(2, limit)), form=64)
    elif name == "header only":
        frames.add(0x1, b"", length=limit + rng.randint(1, 10 * limit))
    elif name in ("2^32", "2^63 (top bit set)", "2^64 - 1"):
        claimed = {"2^32": 2**32, "2^63 (top bit set)": 2**63, "2^64 - 1": 2**64 - 1}[name]
        frames.add(rng.choice((0x1, 0x2, 0x0)), rng.randbytes(rng.randint(0, 100)), length=claimed, form=64)
        note = "a length far over sync.max-frame-bytes (RFC 6455 also forbids the 64-bit length's top bit)"
    elif name == "binary over":
        frames.add(0x2, rng.randbytes(limit + rng.randint(1, 100)))
        note = "a binary message over the limit: the size is known first"
    elif name == "continuation over":
        frames.add(0x1, b'{"type":', fin=False).add(0x0, rng.randbytes(limit + 1))
    elif name == "exactly the limit":
        frames.text(padded_ping(rng, limit))
        doc = ACCEPTED
        note = "sync.max-frame-bytes is the largest message a client may send"
    else:
        form = 16 if "16" in name else 64
        frames.text(ping_text(rng), form=form)
        doc, rfc = None, ACCEPTED
        note = "a length not in its shortest form: RFC 6455 binds the sender; the document is silent"
    return Case("oversize", index, name, frames, doc=doc, rfc=rfc, hello=hello, note=note,
                prefix=valid_prefix(rng, ctx) if hello else None)


def c_length(rng, index, ctx):
    names = ["claims more, then half-close", "half a header", "no mask key", "16-bit length cut", "64-bit length cut",
             "claims more, a pause, then half-close", "claims more, after hello and traffic"]
    name = pick(rng, index, names)
    frames = Frames(rng)
    data = encode(ping_text(rng))
    stall = 0.3 if "pause" in name else 0.0
    if name.startswith("claims more"):
        frames.add(0x1, data, length=len(data) + rng.randint(1, 5000))
    elif name == "half a header":
        frames.raw(ws_frame(0x1, data)[:1], 1)
    elif name == "no mask key":
        frames.raw(ws_frame(0x1, data, key=b"abcd")[:2 + rng.randint(0, 3)], 1)
    elif name == "16-bit length cut":
        frames.raw(ws_frame(0x1, data, form=16)[:2 + rng.randint(0, 1)], 1)
    else:
        frames.raw(ws_frame(0x1, data, form=64)[:2 + rng.randint(0, 7)], 1)
    return Case("length", index, name, frames, doc=HUNG_UP, hello=name != "half a header" or rng.random() < 0.5,
                prefix=valid_prefix(rng, ctx) if "traffic" in name else None, probe=False, half_close=True, stall=stall,
                note="a frame cut short, then the connection ends: the server hangs up (the session is dropped)")


def c_close(rng, index, ctx):
    names = ["valid code", "valid code with reason", "empty close", "one byte", "invalid code", "reserved 1005",
             "reserved 1006", "reserved 1015", "code 0", "code 5000", "before hello", "no answer to the server's close",
             "no answer after a protocol error", "no answer after an oversized frame", "two violations at once",
             "a violation after the server's close"]
    name = pick(rng, index, names)
    frames = Frames(rng)
    hello, doc, rfc, note = name != "before hello", ANSWERED, None, "the server answers the close frame and hangs up"
    probe, reply, timeout = False, True, 8.0
    if name in ("valid code", "valid code with reason", "before hello"):
        code = rng.choice([1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999])
        reason = "".join(rng.choice("abc é€") for _ in range(rng.randint(0, 40))).encode()[:123] if "reason" in name else b""
        frames.add(0x8, close_payload(code, reason))
        rfc = echo(code)
        note += "; RFC 6455 §5.5.1 echoes the code"
    elif name == "empty close":
        frames.add(0x8, b"")
        rfc = any_of(echo(None), echo(1000))
    elif name == "one byte":
        frames.add(0x8, bytes([rng.randrange(256)]))
        rfc = close(1002)
        note += "; a 1-byte close body is a protocol error in RFC 6455 §5.5.1"
    elif name in ("invalid code", "reserved 1005", "reserved 1006", "reserved 1015", "code 0", "code 5000"):
        code = {"reserved 1005": 1005, "reserved 1006": 1006, "reserved 1015": 1015, "code 0": 0, "code 5000": 5000}.get(
            name, rng.choice([999, 1004, 1016, 1100, 2000, 2999, 65535]))
        frames.add(0x8, close_payload(code))
        rfc = close(1002)
        note += "; RFC 6455 §7.4 defines no such code (1005, 1006, 1015 must never be sent), so 1002"
    elif name == "no answer to the server's close":
        frames.text({"type": "bye"})
        doc = Expect(f"close 1000, the hang-up within {CLOSE_WAIT:g} s (+1 s)", lambda a: a.close == 1000 and a.conn.hung_up_after() is not None
                     and a.conn.hung_up_after() <= CLOSE_WAIT + 1.0)
        reply = False
        note = "the server waits at most 2 s for the client's answer to its close frame"
    elif name == "no answer after an oversized frame":
        frames.add(0x1, b"", length=ctx.max_frame + rng.randint(1, 1000))
        doc = Expect(f"close 1009, the hang-up within {CLOSE_WAIT:g} s (+1 s)", lambda a: a.close == 1009 and
                     a.conn.hung_up_after() is not None and a.conn.hung_up_after() <= CLOSE_WAIT + 1.0)
        reply = False
        note = ("the server waits at most 2 s for the client's answer to its close frame (after a frame over the "
                "limit it does not wait at all)")
    elif name == "two violations at once":
        frames.add(rng.choice([3, 4, 0xB]), b"x")
        frames.add(rng.choice([0x9, 0xA]), rng.randbytes(rng.randint(126, 1000)))
        doc, rfc = None, close(1002)
        note = "one close frame, whatever follows the first violation (RFC 6455 §5.5.1)"
    elif name == "a violation after the server's close":
        frames.add(rng.choice([3, 4, 0xB, 0x2]), b"x")
        after = Frames(rng).add(rng.choice([0x9, 0xA]), rng.randbytes(rng.randint(126, 1000)))
        case = Case("close", index, name, frames, rfc=ANSWERED, note="one close frame, whatever the client sends before "
                    "it answers the server's (RFC 6455 §5.5.1)", run=run_after_close_case)
        case.after = after
        return case
    else:
        frames.add(rng.choice([3, 4, 0xB]), b"x")
        doc = Expect(f"a close frame, the hang-up within {CLOSE_WAIT:g} s (+1 s)", lambda a: a.conn.close_at is not None and
                     a.conn.hung_up_after() is not None and a.conn.hung_up_after() <= CLOSE_WAIT + 1.0)
        rfc = close(1002)
        reply = False
        note = "the server waits at most 2 s for the client's answer to its close frame"
    case = Case("close", index, name, frames, doc=doc, rfc=rfc, hello=hello, note=note, probe=probe, timeout=timeout,
                prefix=valid_prefix(rng, ctx) if hello else None)
    case.reply_close = reply
    return case


def c_noise(rng, index, ctx):
    """Random frame sequences: every field of a frame chosen at random, lengths that lie, random
    bytes between frames. No single answer is documented for these; the invariants hold."""
    frames = Frames(rng)
    limit = ctx.max_frame
    for _ in range(rng.randint(1, 60 if ctx.long else 24)):
        roll = rng.random()
        if roll < 0.08:
            frames.raw(rng.randbytes(rng.randint(1, 40)), 1)
            continue
        opcode = rng.choice([0x0, 0x1, 0x1, 0x1, 0x2, 0x8, 0x9, 0x9, 0xA, rng.randrange(16)])
        kind = rng.randrange(7)
        if kind == 0:
            payload = encode(ping_text(rng))
        elif kind == 1:
            payload = encode({"type": rng.choice(CLIENT_TYPES + ("zzz",)), rng.choice(["upTo", "ids", "id", "cursor"]):
                              random_json(rng, 2)})
        elif kind == 2:
            payload = rng.randbytes(rng.randint(0, 200))
        elif kind == 3:
            payload = b""
        elif kind == 4:
            payload = encode(random_json(rng, 4))
        elif kind == 5:
            payload = rng.randbytes(rng.choice([125, 126, 127, limit - 1, limit, limit + 1]))
        else:
            payload = close_payload(rng.choice([1000, 1005, 0, 4000]), b"r")
        length = None
        if rng.random() < 0.05:
            length = max(0, len(payload) + rng.randint(-10, 10))
        frames.add(opcode, payload, fin=rng.random() < 0.8, rsv=rng.choice([0] * 12 + [1, 2, 4, 7]),
                   masked=rng.random() < 0.95, length=length, form=rng.choice([None] * 10 + [16, 64]))
    return Case("noise", index, "random frames", frames, doc=None, rfc=None, prefix=valid_prefix(rng, ctx),
                half_close=True, note="random frames: the invariants only")


def run_after_close_case(ctx, case):
    """The server closes; before answering, the client sends one more bad frame (it has not read
    the close frame yet): the server must not send a second close frame."""
    conn = RawSession(ctx.port, ctx.credentials["main"])
    sent = 1 + case.frames.count + case.after.count
    try:
        conn.pump(ws_frame(0x1, encode({"type": "hello", "version": 2, "cursor": PRELOADED}), key=b"abcd"),
                  until=lambda c: any(f.get("type") == "welcome" for f in c.texts), timeout=10)
        conn.pump(case.frames.bytes(), until=lambda c: c.close_at is not None, timeout=8)
        if conn.close_at is None:
            return Answer(conn, "no close"), sent
        # Read on as a client that has not seen it yet, until the server hangs up.
        conn.pump(case.after.bytes(), timeout=CLOSE_WAIT + 2, reply_close=False, through_close=True)
        return Answer(conn, "after close"), sent
    finally:
        conn.close()
