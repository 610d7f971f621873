"""The hostile input `scripts/sync-hostile-input.py` sends to sync sessions, by what it checks:

    framing     WebSocket framing that breaks RFC 6455 (opcodes, reserved bits, masking, control
                frames, fragments, UTF-8, binary, sizes, lying lengths, close frames, noise)
    protocol    sync protocol frames docs/sync-protocol.md refuses (JSON, order, floods)
    sessions    sessions of one device and role, and the upgrade
    bystanders  the well-behaved sessions beside them, which must not notice
    cases       the model all of them share: frames, expected answers, running and judging a case

CLASSES names each input class with its builder and weight (how often it is drawn once every
subcase has run); `schedule` orders the cases of a run.
"""
import collections, random

from sync_hostile import framing, protocol, sessions

CLASSES = collections.OrderedDict([
    ("opcode", (framing.c_opcode, 2)), ("rsv", (framing.c_rsv, 2)), ("unmasked", (framing.c_unmasked, 2)),
    ("control", (framing.c_control, 3)), ("fragments", (framing.c_fragments, 4)), ("utf8", (framing.c_utf8, 2)),
    ("binary", (framing.c_binary, 2)), ("oversize", (framing.c_oversize, 3)), ("length", (framing.c_length, 1)),
    ("json", (protocol.c_json, 6)), ("order", (protocol.c_order, 5)), ("flood", (protocol.c_flood, 1)),
    ("close", (framing.c_close, 2)), ("sessions", (sessions.c_sessions, 1)), ("upgrade", (sessions.c_upgrade, 1)),
    ("noise", (framing.c_noise, 8)),
])


def count_subcases(max_frame=65536, max_window=100):
    """How many named subcases each class has: its first indexes name them all in order."""
    ctx = type("Context", (), {"max_frame": max_frame, "max_window": max_window, "long": False})()
    counts = {}
    for cls, (make, _) in CLASSES.items():
        seen = []
        for index in range(100):
            name = make(random.Random(index), index, ctx).name
            if name in seen:
                break
            seen.append(name)
        counts[cls] = (len(seen), seen)
    return counts


def schedule(args, seed):
    """The order of cases: first every subcase of every class once, then classes drawn by weight
    until the frame budget is spent. Deterministic for a seed."""
    rng = random.Random(f"{seed}:schedule")
    classes = [c for c in CLASSES if (not args.only or c in args.only) and c not in args.skip]
    first = []
    subcases = count_subcases(args.max_frame_bytes, args.max_window)
    for cls in classes:
        for index in range(subcases[cls][0]):
            first.append((cls, index))
    rng.shuffle(first)
    weights = [CLASSES[c][1] for c in classes]
    counters = {cls: subcases[cls][0] for cls in classes}

    def more():
        cls = rng.choices(classes, weights)[0]
        index = counters[cls]
        counters[cls] += 1
        return cls, index
    return first, more
