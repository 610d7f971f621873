"""What the APNs fault soak reads back and judges: the node's outbox (each push's apns-id, state,
reason and attempts), joined per phase to what the emulator accepted; whether memory plateaus;
and the table of the phases."""
import collections

from beckonlib.node import store_rows

PLATEAU_FRACTION, PLATEAU_SLACK_KIB = 0.10, 8 * 1024


def log(text):
    print(text, flush=True)


def plateau(samples, cycles):
    """(passed, description). With several cycles of the phases, the last cycle's VmRSS peak must
    be within 10 % + 8 MiB of the cycle before's (the same faults again); with one, the last
    third's peak within as much of the middle third's."""
    if cycles >= 2:
        earlier = [s for s in samples if s[3] == cycles - 2]
        last = [s for s in samples if s[3] == cycles - 1]
        names = (f"cycle {cycles - 1}", f"cycle {cycles}")
    else:
        third = len(samples) // 3
        earlier, last = samples[third:2 * third], samples[2 * third:]
        names = ("the middle third", "the last third")
    if len(earlier) < 3 or len(last) < 3:
        return True, "too few samples to judge"
    result = {}
    for index, name in ((1, "VmRSS"), (2, "RssAnon")):
        peak_earlier, peak_last = max(s[index] for s in earlier), max(s[index] for s in last)
        result[name] = (peak_earlier, peak_last, peak_last <= peak_earlier * (1 + PLATEAU_FRACTION) + PLATEAU_SLACK_KIB)
    first = samples[0]
    text = (f"VmRSS {first[1] / 1024:.0f} MiB at the start, peak {result['VmRSS'][0] / 1024:.0f} MiB in {names[0]}, "
            f"{result['VmRSS'][1] / 1024:.0f} MiB in {names[1]} (limit "
            f"{(result['VmRSS'][0] * (1 + PLATEAU_FRACTION) + PLATEAU_SLACK_KIB) / 1024:.0f}); RssAnon "
            f"{first[2] / 1024:.0f} -> {result['RssAnon'][0] / 1024:.0f} -> {result['RssAnon'][1] / 1024:.0f} MiB")
    return result["VmRSS"][2], text


def outbox(path):
    """Every push the server decided, from its outbox table (read-only; the server keeps running):
    {apns-id: (device id, state, status, reason, attempts, created_at seconds)}."""
    rows = store_rows(path, "SELECT id, device_id, state, status, apns_reason, attempts, created_at FROM push_outbox")
    return {row[0].lower(): (row[1], row[2], row[3], row[4], row[5], row[6] / 1000) for row in rows}


def per_push(rows, pushes, accepted):
    """Adds to each phase's row what its pushes' own records say: how many ended failed and why,
    how many of those the emulator had accepted all the same (its answer was lost with the
    connection), how many it accepted twice, and the most outbox attempts one push took."""
    for row in rows:
        start, end = row["window"]
        mine = [(pid, push) for pid, push in pushes.items() if start <= push[5] < end
                and (push[0] == "phone-doomed") == bool(row.get("probe"))]
        failed = [(pid, push) for pid, push in mine if push[1] == "failed"]
        row["outbox_pushes"] = len(mine)
        row["failed_reasons"] = dict(collections.Counter(f"{push[2]} {push[3]}" for _, push in failed))
        row["failed_but_accepted"] = sum(1 for pid, _ in failed if accepted.get(pid))
        row["accepted_twice"] = sum(accepted.get(pid, 0) - 1 for pid, _ in mine if accepted.get(pid, 0) > 1)
        row["max_outbox_attempts"] = max((push[4] for _, push in mine), default=0)
        row["most_copies"] = max((accepted.get(pid, 0) for pid, _ in mine), default=0)


def aggregate(rows):
    """The rows of several cycles summed per phase (factor recomputed, drain time the longest)."""
    merged = {}
    for row in rows:
        into = merged.get(row["phase"])
        if into is None:
            merged[row["phase"]] = dict(row, answers=dict(row["answers"]), reasons=dict(row["reasons"]),
                                        failed_reasons=dict(row["failed_reasons"]))
            continue
        for field, value in row.items():
            if field == "cycle":
                continue
            if field in ("drain_seconds", "most_copies", "max_outbox_attempts"):
                into[field] = max(into[field], value)
            elif field in ("answers", "reasons", "failed_reasons"):
                for code, count in value.items():
                    into[field][code] = into[field].get(code, 0) + count
            elif isinstance(value, int) and not isinstance(value, bool) and into.get(field) is not None:
                into[field] += value
    for row in merged.values():
        row["factor"] = round(row["requests"] / row["pushes"], 3) if row["pushes"] else None
    return list(merged.values())


def print_table(rows):
    columns = [("phase", 20), ("pushes", 7), ("requests", 8), ("factor", 6), ("sent", 6), ("failed", 6), ("acc.f", 5),
               ("dup", 5),
               ("non-200", 7), ("no ans.", 7), ("goaway", 6), ("reset", 5), ("conns", 5), ("c.retry", 7),
               ("d.retry", 7), ("drain s", 7)]
    log(" ".join(f"{name:>{width}}" if i else f"{name:<{width}}" for i, (name, width) in enumerate(columns)))
    for row in rows:
        non200 = sum(v for k, v in row["answers"].items() if k != "200")
        values = [row["phase"], row["pushes"], row["requests"], f"{row['factor']:.2f}" if row["factor"] else "-",
                  row["sent"], row["failed"], row.get("failed_but_accepted"), row.get("accepted_twice"), non200, row["unanswered"], row["goaways"],
                  row["resets"], row["connections"], row["client_retries"], row["dispatcher_retries"], row["drain_seconds"]]
        values = ["-" if v is None else v for v in values]
        log(" ".join(f"{str(v):>{w}}" if i else f"{str(v):<{w}}" for i, (v, (_, w)) in enumerate(zip(values, columns))))
