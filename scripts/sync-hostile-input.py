#!/usr/bin/env python3
"""Hostile WebSocket input on `GET /v1/sync` while well-behaved sessions carry on, checked against
docs/sync-protocol.md (the input classes are in scripts/sync_hostile/).

    scripts/sync-hostile-input.py BECKON_BINARY [--frames N] [--seed S] [--strict-rfc] [--skip CLASS]

It starts `beckon serve` on loopback (a temporary SQLite database, one app, rate limits off),
keeps "bystander" sessions open that receive posted messages and acknowledge them, and meanwhile
runs hostile sessions, each one case of an input class (`--list` names them): frames built by
hand on a raw socket, so anything can be sent (bad opcodes, reserved bits, unmasked frames,
control frames that are too long or fragmented, fragments out of order, invalid UTF-8, binary
messages, lengths that lie, messages over `sync.max-frame-bytes`, malformed or mistyped JSON,
protocol frames out of order, floods past the queued-frame limit, ...). Cases are generated from
the seed: `--replay CLASS:INDEX` runs one again and prints what went each way.

Every case knows its answer. Where docs/sync-protocol.md states it (a close code, the `error`
frame before 4008 and its code), the answer is asserted. Where the document is silent, the case
carries what RFC 6455 requires instead; that is reported (`rfc 6455: n deviations`) and asserted
only with `--strict-rfc`. Whatever the class, these always hold: the answer comes (or the
session stays usable: a `ping` after the input is answered and `bye` closes with 1000), every
frame the server sends is well-formed, no session is closed with 1011, and the server hangs up
after its close frame.

Throughout, the bystanders must get every posted message once, in order, at the sequence the
post answered, within 10 s, with no close. At the end the server must be alive, answer
`GET /health`, have logged no error, close the last bystander with 1001 on SIGTERM and exit 0.
The ping timeout and the memory of a client that never reads are checked on servers of their
own, beside this run: scripts/sync-ping-timeout.py and scripts/sync-unread-pings.py.

The default run is the CI one (`--frames 100000`); `--frames 1000000` is the long run. Exits 0 if
every check passed, 1 otherwise, with a summary per input class.
"""
import argparse, collections, os, random, shutil, sys, tempfile, threading, time

from beckonlib.node import NO_RATE_LIMITS, Node
from sync_hostile import CLASSES, count_subcases, schedule
from sync_hostile.bystanders import Bystander, judge_bystanders, run_poster
from sync_hostile.cases import PRELOADED, Case, Context, Frames, Tally, describe, judge, run_case

SECRET = "sync-hostile-secret-0123456789abcdef0123456789"
ADMIN = "sync-hostile-admin-0123456789abcdef0123456789"


def log(*parts):
    print("sync-hostile-input:", *parts, flush=True)


def hostile_worker(ctx, queue, tallies, lock, strict, stop, progress, running, died):
    while not stop.is_set():
        item = queue()
        if item is None:
            return
        cls, index = item
        with lock:
            running[ctx.worker] = f"{cls}:{index}"
        make, _ = CLASSES[cls]
        rng = random.Random(f"{ctx.seed}:{cls}:{index}")
        started = time.monotonic()
        case = None
        try:
            case = make(rng, index, ctx)
            answer, sent = run_case(ctx, case)
            problems, deviation = judge(case, answer, strict)
        except Exception as error:  # noqa: BLE001 - a case that cannot run is a failure, reported
            problems, deviation = [f"the case failed to run: {type(error).__name__}: {error}"], None
            if ctx.server.process.poll() is not None:
                problems.append(f"the server exited (code {ctx.server.process.returncode}) during this case")
            sent = case.frames.count if case else 0
            answer = None
            if case is None:
                case = Case(cls, index, "(not generated)", Frames(rng))
        with lock:
            tally = tallies[cls]
            tally.cases += 1
            tally.frames += sent
            tally.seconds += time.monotonic() - started
            key = answer.text if answer else "error"
            if answer and cls == "close" and answer.conn.close_at is not None:
                hung = answer.conn.hung_up_after()
                key += ", hung up " + ("never" if hung is None else "at once" if hung < 0.5 else f"after {hung:.0f} s")
            tally.answers[f"{case.name}: {key}" if cls not in ("noise",) else key] += 1
            if deviation:
                tally.deviations[f"{case.name}: {key} ({deviation})"] += 1
            if case.doc is None and cls not in ("noise", "sessions", "upgrade"):
                tally.silent[case.note] += 1
            if problems:
                for problem in problems:
                    tally.kinds[f"{case.name}: {problem[:110]}" if cls != "noise" else problem[:110]] += 1
                detail = describe(case, answer) if answer else f"{case.id} {case.name!r}"
                tally.failures.append(f"{detail}\n      problems: {'; '.join(problems)}")
            if ctx.server.process.poll() is not None and not died:
                died.extend(sorted(set(running.values())))
            running.pop(ctx.worker, None)
            progress(sent)



def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary", nargs="?")
    parser.add_argument("--frames", type=int, default=100000, help="hostile frames to send at least (default 100000; long run: 1000000)")
    parser.add_argument("--seed", type=int, default=None, help="the seed of every case (default: from the clock, printed)")
    parser.add_argument("--workers", type=int, default=2, help="hostile sessions at a time")
    parser.add_argument("--bystanders", type=int, default=3)
    parser.add_argument("--max-frame-bytes", type=int, default=65536, help="sync.max-frame-bytes of the server under test")
    parser.add_argument("--max-window", type=int, default=100, help="sync.max-window of the server under test")
    parser.add_argument("--strict-rfc", action="store_true", help="also fail where RFC 6455 and the server differ (the document silent)")
    parser.add_argument("--only", action="append", default=[], help="run only this class (repeatable)")
    parser.add_argument("--skip", action="append", default=[], help="skip this class (repeatable)")
    parser.add_argument("--replay", help="CLASS:INDEX: run that one case and print it")
    parser.add_argument("--list", action="store_true", help="list the classes and their subcases")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()

    if args.list:
        for cls, (count, names) in count_subcases(args.max_frame_bytes, args.max_window).items():
            print(f"{cls} (weight {CLASSES[cls][1]}, {count} subcases): {', '.join(names)}")
        return 0
    if not args.binary:
        parser.error("BECKON_BINARY is required")
    binary = os.path.abspath(args.binary)
    seed = args.seed if args.seed is not None else int(time.time() * 1000) % 1000000007
    log(f"seed {seed}; at least {args.frames} hostile frames; {args.workers} hostile sessions at a time, "
        f"{args.bystanders} bystanders (replay a case with --seed {seed} --replay CLASS:INDEX)")

    work = tempfile.mkdtemp(prefix="beckon-sync-hostile.")
    log(f"work directory {work} (the server's log: server.log)")
    started = time.monotonic()
    failed = []
    server = Node(binary, work, secret=SECRET, admin=ADMIN, env=dict(
        NO_RATE_LIMITS, BECKON_SYNC_MAX_FRAME_BYTES=str(args.max_frame_bytes), BECKON_SYNC_MAX_WINDOW=str(args.max_window)))
    server.start()
    api_key = server.issue_key()
    memory_samples = []
    sampling = threading.Event()

    def sample():
        while not sampling.is_set():
            value = server.memory()
            if value:
                memory_samples.append(value)
            sampling.wait(0.5)
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        # Devices: bystanders, and per hostile worker a main device and one for the role cases.
        bystander_users = [f"bystander-{n}" for n in range(args.bystanders)]
        credentials = {user: server.register(user, f"{user}-phone") for user in bystander_users}
        workers = []
        for w in range(args.workers):
            user = f"hostile-{w}"
            creds = {"main": server.register(user, f"{user}-main"), "roles": server.register(user, f"{user}-roles")}
            revoked = server.register(user, f"{user}-revoked")
            server.register(user, f"{user}-revoked")  # registering again revokes the first credential
            creds["revoked"] = revoked
            workers.append(creds)
        for n in range(PRELOADED):
            status, _ = server.post(api_key, [f"hostile-{w}" for w in range(args.workers)], {"preloaded": n})
            assert status == 202, status

        if args.replay:
            cls, _, index = args.replay.partition(":")
            ctx = Context(server, args, 0, workers[0])
            ctx.seed = seed
            case = CLASSES[cls][0](random.Random(f"{seed}:{cls}:{index}"), int(index), ctx)
            answer, sent = run_case(ctx, case)
            problems, deviation = judge(case, answer, args.strict_rfc)
            print(describe(case, answer, limit=2000))
            print(f"  expected (document): {case.doc.description if case.doc else 'silent'}; "
                  f"RFC 6455: {case.rfc.description if case.rfc else '-'}; note: {case.note}")
            print(f"  frames in: {[(hex(op), p[:200]) for op, p, _ in answer.conn.frames]}")
            print(f"  problems: {problems or 'none'}; deviation: {deviation or 'none'}")
            return 1 if problems else 0

        # Bystanders and the poster, for the whole run.
        stop = threading.Event()
        bystanders = [Bystander(server, user, credentials[user]) for user in bystander_users]
        for bystander in bystanders:
            bystander.stop = stop
            bystander.start()
        for bystander in bystanders:
            bystander.ready.wait(15)
        posted, poster_problems = [], []
        poster_stop = threading.Event()
        poster = threading.Thread(target=run_poster, args=(server, api_key, bystander_users, poster_stop, posted, poster_problems, 0.1),
                                  daemon=True)
        poster.start()

        # The hostile cases.
        tallies = collections.defaultdict(Tally)
        lock = threading.Lock()
        first, more = schedule(args, seed)
        total = {"frames": 0, "cases": 0}
        issued = iter(first)
        queue_lock = threading.Lock()
        last_report = [time.monotonic()]

        def next_case():
            with queue_lock:
                if server.process.poll() is not None:
                    return None
                item = next(issued, None)
                if item is not None:
                    return item
                if total["frames"] >= args.frames:
                    return None
                return more()

        def progress(sent):
            total["frames"] += sent
            total["cases"] += 1
            if time.monotonic() - last_report[0] > 15:
                last_report[0] = time.monotonic()
                log(f"... {total['cases']} cases, {total['frames']} frames, {time.monotonic() - started:.0f} s, "
                    f"server RSS {server.memory() // 1024 if server.memory() else '?'} MiB")

        threads = []
        running, died = {}, []
        phase_started = time.monotonic()
        for w in range(args.workers):
            ctx = Context(server, args, w, workers[w])
            ctx.seed = seed
            thread = threading.Thread(target=hostile_worker, args=(ctx, next_case, tallies, lock, args.strict_rfc,
                                                                    threading.Event(), progress, running, died), daemon=True)
            thread.start()
            threads.append(thread)
        for thread in threads:
            thread.join()
        hostile_seconds = time.monotonic() - phase_started

        # The bystanders: every posted message, in order, at its position.
        poster_stop.set()
        poster.join(15)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(len(b.received) < len(posted) for b in bystanders):
            time.sleep(0.1)
        problems, latencies, bystander_report = judge_bystanders(bystanders, posted)
        failed.extend(problems)
        failed.extend(poster_problems)

        # The last bystander stays for the shutdown; the others say bye.
        if bystanders:
            bystanders[-1].stop_mode = "stay"
        stop.set()
        for bystander in bystanders[:-1]:
            bystander.join(20)
            if bystander.final != 1000:
                failed.append(f"bystander {bystander.user}: bye answered with {bystander.final}, documented 1000")

        # The server after all that.
        alive = server.process.poll() is None
        healthy = alive and server.healthy()
        rss_final = server.memory()
        if not alive:
            failed.append(f"the server is not running any more (exit code {server.process.returncode}); the cases "
                          f"running when it was found dead: {', '.join(died) or '?'} (replay with --seed {seed} --replay ...)")
            with open(server.log_path, "rb") as handle:
                tail = handle.read()[-3000:].decode("utf-8", "replace")
            print("the end of the server's log:\n" + tail)
        elif not healthy:
            failed.append("the server does not answer GET /health with 200")
        problems = [line[:300] for line in server.log_errors()]
        if problems:
            failed.append(f"the server logged {len(problems)} errors, e.g.: " + " | ".join(problems[:3]))
        last = bystanders[-1] if bystanders else None
        code = server.returncode if server.stop(40) is not None else None
        if last is not None:
            last.join(20)
            if last.final != 1001:
                failed.append(f"bystander {last.user}: SIGTERM closed it with {last.final}, documented 1001")
        if code != 0:
            failed.append(f"the server exited with {code} on SIGTERM, expected 0")
        sampling.set()

        # The summary.
        elapsed = time.monotonic() - started
        print()
        print(f"{'class':<10} {'cases':>7} {'frames':>9} {'failed':>7} {'RFC dev.':>8}  answers (most common first)")
        total_frames = total_failed = 0
        for cls in CLASSES:
            if cls not in tallies:
                continue
            tally = tallies[cls]
            total_frames += tally.frames
            total_failed += len(tally.failures)
            answers = collections.Counter()
            for key, count in tally.answers.items():
                answers[key.split(": ", 1)[-1] if cls != "noise" else key] += count
            shown = ", ".join(f"{k} ×{v}" for k, v in answers.most_common(6))
            print(f"{cls:<10} {tally.cases:>7} {tally.frames:>9} {len(tally.failures):>7} {sum(tally.deviations.values()):>8}  {shown}")
        print(f"{'total':<10} {sum(t.cases for t in tallies.values()):>7} {total_frames:>9} {total_failed:>7}")
        print()
        print("answers by subcase:")
        for cls in CLASSES:
            if cls in tallies and cls != "noise":
                tally = tallies[cls]
                for key, count in sorted(tally.answers.items()):
                    print(f"  {cls}/{key} ×{count}")
        deviations = [(cls, key, count) for cls in CLASSES if cls in tallies for key, count in tallies[cls].deviations.items()]
        if deviations:
            print()
            print("where docs/sync-protocol.md is silent and the server differs from RFC 6455"
                  + (" (failures with --strict-rfc):" if args.strict_rfc else " (reported, not failed; --strict-rfc fails them):"))
            for cls, key, count in deviations:
                print(f"  {cls}/{key} ×{count}")
        silent = collections.Counter()
        for tally in tallies.values():
            silent.update(tally.silent)
        if silent:
            print()
            print("the document is silent here (the answers above are the server's own choice):")
            for note in sorted(silent):
                print(f"  - {note}")
        print()
        print(f"bystanders: {len(posted)} messages posted to each of {len(bystanders)}; " + "; ".join(bystander_report))
        if latencies:
            print(f"  delivery latency: median {latencies[len(latencies) // 2] * 1000:.0f} ms, "
                  f"p99 {latencies[int(len(latencies) * 0.99)] * 1000:.0f} ms, max {latencies[-1] * 1000:.0f} ms")
        peak = max(memory_samples) if memory_samples else None
        print(f"server: alive {alive}, /health {'200' if healthy else 'failed'}, RSS peak "
              f"{peak // 1024 if peak else '?'} MiB, at the end {rss_final // 1024 if rss_final else '?'} MiB, "
              f"log errors {len(problems)}, exit code {code}")
        print(f"duration: {elapsed:.1f} s (hostile phase {hostile_seconds:.1f} s, "
              f"{total_frames / max(hostile_seconds, 0.001):,.0f} frames/s); seed {seed}; work directory {work}")
        for cls in CLASSES:
            if cls in tallies and tallies[cls].failures:
                failed.append(f"{cls}: {len(tallies[cls].failures)} cases failed")
                for line in tallies[cls].failures[:5]:
                    print(f"FAILED {line}")
        kinds = [(cls, kind, count) for cls in CLASSES if cls in tallies for kind, count in tallies[cls].kinds.items()]
        if kinds:
            print()
            print("failed checks by kind:")
            for cls, kind, count in sorted(kinds, key=lambda k: -k[2]):
                print(f"  {cls}/{kind} ×{count}")
        if total_frames < args.frames and not args.only:
            failed.append(f"only {total_frames} hostile frames were sent, {args.frames} asked")
        if failed:
            print()
            for line in failed:
                print(f"FAIL {line}")
            print(f"sync-hostile-input: FAILED ({len(failed)} problems); seed {seed}")
            return 1
        print(f"sync-hostile-input: passed: {sum(t.cases for t in tallies.values())} cases, {total_frames} hostile frames, seed {seed}")
        return 0
    finally:
        sampling.set()
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait()
        if not args.keep and not failed:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
