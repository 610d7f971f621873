#!/usr/bin/env python3
"""The operator's status page (`GET /status`) in a real headless Chromium, over real data: starts
`beckon serve` with two apps on the built-in APNs emulator (`chat` on the wake strategy, `mail` on
content), registers devices, posts to them in rounds while some come back over sync after the
push (at different speeds) and others stay away, makes Apple refuse a few tokens (410
Unregistered), keeps two sessions open, then loads the page with the admin token, checks what it
shows against what was done, and saves a full-page screenshot.

    scripts/status-page.py BECKON_BINARY [--screenshot PATH] [--rounds N]

The screenshot goes to artifacts/status-page.png (the README's is docs/status-page.png, made with
`--screenshot docs/status-page.png`). Needs the Debian package `chromium`. Loopback only.
"""
import argparse, base64, os, random, socket, sys, tempfile, time, urllib.error, urllib.request

from beckonlib import chromium
from beckonlib.httpjson import free_port, request, wait_until
from beckonlib.node import Node
from beckonlib.websocket import SyncSession

SECRET = "status-page-user-token-secret-0123456789ab"
ADMIN = "status-page-admin-token-0123456789abcdef012"
APPS = {"chat": ("com.example.chat", "wake"), "mail": ("com.example.mail", "content")}
DEVICES_PER_APP = 12
REFUSED = 3  # chat devices whose tokens Apple stops taking (410 Unregistered)
WINDOW = 3  # apps.<id>.delivery.reconnect-window-seconds: a wake not followed by a connection in 3 s is missed
LIVE = 2  # sessions left open when the page is loaded


def fail(message):
    sys.exit(f"status-page: FAIL: {message}")


def token(app, n):
    return f"{list(APPS).index(app) + 1:02x}{n:02x}" + "ab" * 30


def visit(port, device, ack=True, linger=0.0):
    """What a woken app does: connect, say hello, take what is waiting, acknowledge, leave."""
    session = SyncSession(port, device["credential"])
    try:
        session.send({"type": "hello", "version": 2, "cursor": 0})
        if session.receive().get("type") != "welcome":
            fail("no welcome")
        session.sock.settimeout(0.3)
        last = None
        try:
            while True:
                frame = session.receive()
                if frame.get("type") == "message":
                    last = frame["seq"]
        except (socket.timeout, TimeoutError):
            pass
        session.sock.settimeout(10)
        if ack and last is not None:
            session.send({"type": "ack", "upTo": last})
        time.sleep(linger)
        session.send({"type": "bye"})
    finally:
        session.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--screenshot", default="artifacts/status-page.png")
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    random.seed(7)
    work = tempfile.mkdtemp(prefix="beckon-status-page.")
    env = {"BECKON_LIMITS_REGISTRATIONS_PER_MINUTE": "0", "BECKON_LIMITS_SYNC_CONNECTS_PER_MINUTE": "0"}
    for app, (_, strategy) in APPS.items():
        prefix = f"BECKON_APPS_{app.upper()}_"
        env.update({prefix + "DELIVERY_STRATEGY": strategy, prefix + "DELIVERY_RECONNECT_WINDOW_SECONDS": str(WINDOW),
                    # Every round may wake every device: the page should show a curve, not iOS's budget.
                    prefix + "DELIVERY_BACKGROUND_PUSHES_PER_HOUR": "1000"})
    server = Node(args.binary, work, secret=SECRET, admin=ADMIN, apps=list(APPS), env=env, control=free_port(),
                  database=os.path.join(work, "beckon.sqlite"))
    base, port, emulator = server.base, server.port, server.emulator
    live = []
    try:
        try:
            server.start()
        except RuntimeError as error:
            fail(str(error))
        started = time.time()
        keys, devices = {}, {}
        for app in APPS:
            keys[app] = request(base, "POST", f"/v1/admin/apps/{app}/keys", {}, ADMIN)[1]["key"]
            for n in range(DEVICES_PER_APP + (LIVE if app == "chat" else 0)):
                user = f"{app[0]}{n}"
                credential = server.register(user, f"{user}-phone", app=app, token=token(app, n),
                                             capabilities={"backgroundModes": ["remote-notification"]})
                devices[(app, n)] = dict(credential=credential, user=user)
        # The last LIVE chat devices stay connected from here on.
        for n in range(DEVICES_PER_APP, DEVICES_PER_APP + LIVE):
            session = SyncSession(port, devices[("chat", n)]["credential"])
            session.send({"type": "hello", "version": 2, "cursor": 0})
            session.receive()
            live.append(session)

        posted = 0
        for round_number in range(args.rounds):
            for (app, n), device in devices.items():
                if app == "chat" and n >= DEVICES_PER_APP:
                    continue
                status, body = request(base, "POST", "/v1/messages", {
                    "recipients": {"users": [device["user"]]},
                    "payload": {"round": round_number}, "notification": {"title": "Round", "body": f"message {round_number}"},
                }, keys[app])
                if status != 202:
                    fail(f"post: {status} {body}")
                posted += 1
            if round_number == 0:
                # After the first push reached them, Apple refuses these tokens from now on.
                wait_until(lambda: all(emulator.received(token("chat", n)) for n in range(REFUSED)), 20)
                for n in range(REFUSED):
                    emulator.unregister(token("chat", n))
            time.sleep(0.5)
            # Some apps come back after the push, sooner or later; the others stay away. Later
            # rounds come back less often, so the curve moves.
            for (app, n), device in devices.items():
                if n >= DEVICES_PER_APP or (app == "chat" and n < REFUSED):
                    continue
                if random.random() < (0.9 if app == "chat" else 0.6) - 0.08 * round_number:
                    time.sleep(random.uniform(0.0, 0.25))
                    visit(port, device)
            time.sleep(1.0)
        time.sleep(WINDOW + 1.5)  # the last round's misses are decided
        elapsed = int(time.time() - started) + 2
        print(f"status-page: {posted} messages posted over {args.rounds} rounds in {elapsed} s; {LIVE} sessions open")

        # Without the token: 401, offering Basic so a browser prompts; with it as Basic: the page.
        try:
            urllib.request.urlopen(base + "/status", timeout=10)
            fail("the page answered without the admin token")
        except urllib.error.HTTPError as error:
            challenge = error.headers.get("WWW-Authenticate", "")
            if error.code != 401 or "Basic" not in challenge:
                fail(f"without a token: {error.code}, WWW-Authenticate {challenge!r}")
        basic = urllib.request.Request(base + "/status", headers={
            "Authorization": "Basic " + base64.b64encode(f"operator:{ADMIN}".encode()).decode()})
        with urllib.request.urlopen(basic, timeout=10) as answer:
            if answer.status != 200 or not answer.headers["Content-Type"].startswith("text/html"):
                fail(f"with Basic: {answer.status} {answer.headers['Content-Type']}")

        os.makedirs(os.path.dirname(os.path.abspath(args.screenshot)), exist_ok=True)
        result = chromium.load(
            f"{base}/status?sinceSeconds={elapsed}", headers={"Authorization": f"Bearer {ADMIN}"},
            expression=FACTS, screenshot=args.screenshot, width=1200, full_page=True, fail_on_console_error=True)
        facts = result.value
        print(f"status-page: Chromium loaded the page in {result.seconds:.1f} s; it shows {facts}")
        check(facts, registered=len(devices))
        print(f"status-page: PASS; screenshot {args.screenshot} ({result.screenshot_size[0]}×{result.screenshot_size[1]})")
    finally:
        for session in live:
            session.close()
        server.stop()


# What the page shows, read from its DOM in the browser.
FACTS = """(() => {
  const tile = id => Number(document.querySelector('#' + id + ' .value').textContent);
  const apps = {};
  for (const row of document.querySelectorAll('tr.app-row')) {
    const cells = [...row.querySelectorAll('td')].map(td => td.textContent.trim());
    const app = row.dataset.app, section = document.getElementById('app-' + app);
    apps[app] = {
      devices: Number(cells[2]), withoutToken: Number(cells[3]), failed: Number(cells[8]), wakeSuccess: cells[9],
      series: [...new Set([...section.querySelectorAll('figure.wake-success polyline')].map(line => line.dataset.series))],
      points: section.querySelectorAll('figure.wake-success circle').length,
      latencyPoints: section.querySelectorAll('figure.wake-latency circle').length,
      failures: [...section.querySelectorAll('table.failures tr')].slice(1)
        .map(tr => [tr.querySelector('.reason').textContent, Number(tr.children[1].textContent)]),
    };
  }
  return {sessions: tile('sessions'), devices: tile('devices'), outbox: tile('outbox'), pushes: tile('pushes'), apps};
})()"""


def check(facts, registered):
    problems = []
    if facts["sessions"] != LIVE:
        problems.append(f"connected sessions {facts['sessions']}, expected {LIVE}")
    if facts["devices"] != registered:
        problems.append(f"devices {facts['devices']}, expected {registered}")
    if sorted(facts["apps"]) != sorted(APPS):
        problems.append(f"apps {sorted(facts['apps'])}, expected {sorted(APPS)}")
    for app, (_, strategy) in APPS.items():
        shown = facts["apps"].get(app, {})
        if strategy not in shown.get("series", []):
            problems.append(f"{app}: no {strategy} line in the chart (lines: {shown.get('series')})")
        if shown.get("points", 0) < 3 or shown.get("latencyPoints", 0) < 1:
            problems.append(f"{app}: {shown.get('points')} success points, {shown.get('latencyPoints')} latency points")
    chat = facts["apps"].get("chat", {})
    unregistered = dict(chat.get("failures", [])).get("Unregistered", 0)
    if unregistered < REFUSED:
        problems.append(f"chat: {unregistered} Unregistered failures listed, expected at least {REFUSED}: {chat.get('failures')}")
    if chat.get("withoutToken") != REFUSED:
        problems.append(f"chat: {chat.get('withoutToken')} devices without a token, expected the {REFUSED} Apple refused")
    if chat.get("failed", 0) < unregistered:
        problems.append(f"chat: {chat.get('failed')} failed in the table, fewer than the {unregistered} listed by reason")
    rate = chat.get("wakeSuccess", "–").rstrip(" %")
    if not rate.isdigit() or not 0 < int(rate) < 100:
        problems.append(f"chat: wake success {chat.get('wakeSuccess')!r}, expected between 0 and 100 % (some came back, some not)")
    if problems:
        fail("; ".join(problems))


if __name__ == "__main__":
    main()
