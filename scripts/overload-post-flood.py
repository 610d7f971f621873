#!/usr/bin/env python3
"""A flood of posts: one app posts far beyond limits.messages-per-second (200) while another
posts 20 a second from a process of its own.

    scripts/overload-post-flood.py BECKON_BINARY [--scale small|full] [--keep]

The flooding app gets 202 up to the limit and 429 with Retry-After and the error body beyond it,
nothing else; the other app keeps its 202s (the bulkhead); after a SIGKILL and a restart every
202 of both is read back by sync. Small scale (CI): 64 connections for 4 s; full: 128 for 20 s.
One row; exits 1 if a check failed. Loopback only.
"""
import asyncio, collections, json, time

from beckonlib.asynchttp import Answer, Connection, attempt, kind
from beckonlib.overload import APPS, Result, issue_key, lost_messages, main, message, now, register, server_after
from beckonlib.report import counted, spread


async def case_flood(context):
    scale = context.scale
    rate = 200
    server = context.server("flood", env={"BECKON_LIMITS_MESSAGES_PER_SECOND": str(rate)})
    server.start()
    port = server.port
    keys = {app: await issue_key(port, app) for app in APPS}
    devices = {"chat": await register(port, "chat", "flooded"), "mail": await register(port, "mail", "steady")}
    accepted = {"chat": set(), "mail": set()}
    answers = {"chat": collections.Counter(), "mail": collections.Counter()}
    bad_429 = []
    latencies = []
    duration = scale["flood_seconds"]
    end = now() + duration

    async def flood_writer(number):
        connection = Connection(port)
        n = 0
        while now() < end:
            n += 1
            outcome = await attempt(connection.request("POST", "/v1/messages", message(["flooded"], w=number, n=n), keys["chat"], timeout=30))
            answers["chat"][kind(outcome)] += 1
            if isinstance(outcome, Answer):
                if outcome.status == 202:
                    accepted["chat"].add(outcome.json()["id"])
                elif outcome.status == 429:
                    retry = outcome.headers.get("retry-after", "")
                    if not (retry.isdigit() and int(retry) >= 1 and outcome.error_form() and outcome.code() == "rate_limited"):
                        bad_429.append((retry, outcome.body[:100]))
        connection.close()

    # The other app posts from a process of its own, so the flood's client does not delay it.
    import multiprocessing
    results = multiprocessing.get_context("fork").Queue()
    steady = multiprocessing.get_context("fork").Process(
        target=steady_poster, args=(port, keys["mail"], "steady", duration, 20, results))
    steady.start()
    started = now()
    await asyncio.gather(*(flood_writer(i) for i in range(scale["flood_writers"])))
    elapsed = now() - started
    steady_answers, steady_ids, latencies = await asyncio.to_thread(results.get, True, 60)
    steady.join(10)
    answers["mail"].update(steady_answers)
    accepted["mail"].update(steady_ids)
    offered = sum(answers["chat"].values()) / elapsed
    # Durability: SIGKILL right after the flood, start again, read every accepted id back.
    server.kill()
    server.start()
    lost_ids = await lost_messages(port, {"flooded": accepted["chat"], "steady": accepted["mail"]},
                                   {"flooded": devices["chat"], "steady": devices["mail"]})
    result = Result("5 flood", f"app chat: {scale['flood_writers']} connections posting flat out for {duration} s "
                               f"(limit {rate}/s); app mail: 20/s alongside; SIGKILL + restart")
    result.answers.update({f"chat {k}": v for k, v in answers["chat"].items()})
    result.answers.update({f"mail {k}": v for k, v in answers["mail"].items()})
    result.lost = len(lost_ids)
    ceiling = rate * elapsed + rate  # the bucket (one second's worth) and its refill
    result.check(len(accepted["chat"]) <= ceiling * 1.05 + 5, f"chat got {len(accepted['chat'])} 202s in {elapsed:.1f} s, "
                                                          f"more than limits.messages-per-second {rate} allows (~{ceiling:.0f})")
    result.check(answers["chat"].get("429 rate_limited", 0) > 0, "the flood was never answered 429")
    result.check(not bad_429, f"{len(bad_429)} 429s without Retry-After ≥ 1 or the documented body, e.g. {bad_429[:2]}")
    others = {k: v for k, v in answers["chat"].items() if k not in ("202", "429 rate_limited")}
    result.check(not others, f"chat answers other than 202 and 429: {others}")
    result.check(set(answers["mail"]) == {"202"}, f"the other app's posts during the flood: {counted(answers['mail'])} (all must be 202)")
    result.check(len(accepted["mail"]) >= duration * 5, f"the other app got only {len(accepted['mail'])} posts through in "
                                                       f"{duration} s (it asked for 20/s)")
    result.check(result.lost == 0, f"{result.lost} acknowledged messages missing after SIGKILL and restart, e.g. {lost_ids[:3]}")
    result.recovery = f"restart {server.start_seconds:.2f} s"
    result.note(f"offered {offered:.0f} posts/s from chat for {elapsed:.1f} s: {len(accepted['chat'])} accepted "
                f"({len(accepted['chat']) / elapsed:.0f}/s), {answers['chat'].get('429 rate_limited', 0)} refused with 429")
    result.note(f"mail alongside (its own process, 20/s): {counted(answers['mail'])}; latency {spread(latencies)}")
    result.note(f"after SIGKILL and restart: {len(accepted['chat']) + len(accepted['mail']) - result.lost} of "
                f"{len(accepted['chat']) + len(accepted['mail'])} acknowledged messages read back by sync")
    await server_after(result, server)
    server.stop()
    return [result]


def steady_poster(port, key, user, duration, rate, results):
    """A child process: posts to `user` at `rate` a second for `duration` seconds with blocking
    HTTP; puts (answers by kind, accepted ids, latencies) on `results`."""
    import http.client
    answers, ids, latencies = collections.Counter(), [], []
    connection = None
    end = time.monotonic() + duration
    n = 0
    while time.monotonic() < end:
        n += 1
        started = time.monotonic()
        try:
            if connection is None:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            connection.request("POST", "/v1/messages", json.dumps(message([user], n=n)),
                               {"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
            response = connection.getresponse()
            body = response.read()
            label = str(response.status)
            if response.status == 202:
                ids.append(json.loads(body)["id"])
            elif body.startswith(b"{"):
                label += " " + str(json.loads(body).get("error", {}).get("code"))
            answers[label] += 1
        except (OSError, http.client.HTTPException) as error:
            answers[f"no answer ({type(error).__name__})"] += 1
            connection = None
        latencies.append(time.monotonic() - started)
        time.sleep(max(0, 1 / rate - (time.monotonic() - started)))
    results.put((answers, ids, latencies))


if __name__ == "__main__":
    main(__doc__, [("5 flood", case_flood)])
