#!/usr/bin/env python3
"""Beckon as an XEP-0357 app server behind a real Prosody (seed 004), end to end: a throwaway
Prosody 0.12 with mod_cloud_notify (scripts/prosody.sh), `beckon serve` connected to it as an
external component (XEP-0114) with the built-in APNs emulator, and two XMPP clients.

  1. the app registers its APNs token with Beckon (POST /v1/xmpp/registrations) and gets the
     component's jid, a node and a secret;
  2. bob's client enables push with them on Prosody and goes offline;
  3. alice sends bob a message: Prosody publishes to Beckon, and the emulator receives a push for
     bob's token, with nothing of the message in it (wake-only, the `filtering` strategy as Monal);
  4. a second message gives a second push (Prosody publishes per message; Beckon re-pushes);
  5. a registration with a wrong secret gets no push (Beckon answers the publish `forbidden`);
  6. once Apple refuses the token (410), Beckon answers publishes `item-not-found`, and after
     Prosody's limit of such errors it drops the registration by itself.

    scripts/xmpp-push.py BECKON_BINARY [-v]

Needs Debian's prosody and prosody-modules. Loopback only. Exits 1 with the reason on a failure.
"""
import json, os, sys, tempfile, time

from beckonlib import xmpp
from beckonlib.httpjson import free_port, request, wait_until
from beckonlib.node import Node, store_rows
from beckonlib.xmpp import Client

os.environ.setdefault("BECKON_PROSODY_DIR", f"/tmp/beckon-prosody-push-{os.getpid()}")
TOKEN = "7c" * 32
OTHER = "8d" * 32
VERBOSE = "-v" in sys.argv[2:]
LOG = (lambda direction, text: print(f"    {direction} {text}")) if VERBOSE else None


def fail(message):
    raise SystemExit(f"xmpp-push: FAIL: {message}")


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    binary = sys.argv[1]
    started = time.monotonic()
    facts = xmpp.prosody_start(BECKON_PROSODY_PUSH_MAX_ERRORS="3")
    server = None
    work = tempfile.mkdtemp(prefix="beckon-xmpp-push.")
    try:
        for user in ("alice", "bob", "carol"):
            xmpp.prosody_adduser(user, "pw-" + user)
        server = Node(binary, work, secret="xmpp-push-user-token-secret-0123456789", control=free_port(),
                      database=os.path.join(work, "beckon.sqlite"), env={
                          # Monal's model: a high-priority alert its extension may suppress (seed 004).
                          "BECKON_APPS_CHAT_DELIVERY_STRATEGY": "filtering",
                          "BECKON_XMPP_HOST": "127.0.0.1", "BECKON_XMPP_PORT": facts["BECKON_PROSODY_COMPONENT_PORT"],
                          "BECKON_XMPP_COMPONENT_JID": facts["BECKON_PROSODY_COMPONENT_JID"],
                          "BECKON_XMPP_COMPONENT_SECRET": facts["BECKON_PROSODY_COMPONENT_SECRET"],
                          "BECKON_XMPP_APP": "chat", "BECKON_XMPP_OPEN_REGISTRATION": "true",
                          # Beckon's answers to refused publishes are logged at debug: the checks read them.
                          "BECKON_LOG_LEVEL": os.environ.get("BECKON_LOG_LEVEL", "debug")})
        server.start(wait=False)
        log, base, emulator = server.log_path, server.base, server.emulator
        if not wait_until(lambda: "connected to the XMPP server as a component" in open(log).read(), 60):
            fail(f"beckon did not connect to Prosody as a component (see {log})")
        # The component may connect before the HTTP listener is up (they start side by side).
        if not wait_until(server.healthy, 60):
            fail(f"beckon's HTTP listener did not come up (see {log})")
        print("1. beckon serve is connected to Prosody as", facts["BECKON_PROSODY_COMPONENT_JID"])

        status, registration = request(base, "POST", "/v1/xmpp/registrations", {"token": TOKEN, "environment": "sandbox"})
        if status != 201:
            fail(f"registration: {status} {registration}")
        print(f"2. the app registered its token: jid {registration['jid']}, node {registration['node']}")

        bob = Client.connect_from(facts, "bob", "pw-bob", log=LOG)
        bob.enable_push(registration["jid"], registration["node"], registration["secret"])
        bob.close()
        alice = Client.connect_from(facts, "alice", "pw-alice", log=LOG)
        alice.send_message(f"bob@{facts['BECKON_PROSODY_HOST']}", "a secret plan for lunch")
        pushes = wait_for_pushes(emulator, TOKEN, 1)
        push = pushes[0]
        text = json.dumps(push["payload"])
        if push["pushType"] != "alert" or "secret plan" in text or "badge" in push["payload"]["aps"]:
            fail(f"expected a wake-only alert with no badge (Monal counts its own), got {push['pushType']}: {text}")
        print(f"3. bob was offline; alice's message became an {push['pushType']} push, priority {push['priority']}, "
              f"nothing of the message in it: {text}")

        alice.send_message(f"bob@{facts['BECKON_PROSODY_HOST']}", "are you there?")
        wait_for_pushes(emulator, TOKEN, 2)
        print("4. a second message, a second push")

        carol = Client.connect_from(facts, "carol", "pw-carol", log=LOG)
        status, other = request(base, "POST", "/v1/xmpp/registrations", {"token": OTHER, "environment": "sandbox"})
        carol.enable_push(other["jid"], other["node"], "not-the-secret")
        carol.close()
        alice.send_message(f"carol@{facts['BECKON_PROSODY_HOST']}", "hello carol")
        time.sleep(2)
        if emulator.received(OTHER):
            fail("a publish with a wrong secret was pushed")
        if "an XEP-0357 publish with a wrong secret" not in open(log).read():
            fail("Beckon did not refuse the publish with the wrong secret (its log says nothing of it)")
        print("5. a registration with a wrong secret: the publish was refused (forbidden), no push")

        # Apple refuses bob's token from now on: the next push gets 410 and Beckon drops it; the
        # publishes after that are answered item-not-found until Prosody disables the registration
        # (3 errors with BECKON_PROSODY_PUSH_MAX_ERRORS=3).
        emulator.unregister(TOKEN)
        alice.send_message(f"bob@{facts['BECKON_PROSODY_HOST']}", "third")
        if not wait_until(lambda: device_token_gone(base, registration["node"], work), 20):
            fail("the token Apple refused was not dropped")
        prosody_log = os.path.join(facts["BECKON_PROSODY_DIR"], "prosody.log")
        for n in range(6):
            alice.send_message(f"bob@{facts['BECKON_PROSODY_HOST']}", f"after 410 #{n}")
            time.sleep(0.3)
        if not wait_until(lambda: "Disabling push notifications" in open(prosody_log).read(), 10):
            fail("Prosody did not disable the registration after Beckon's item-not-found answers")
        if "an XEP-0357 publish for a node with no device or no usable token" not in open(log).read():
            fail("Beckon's log does not show the item-not-found answers that made Prosody disable the registration")
        print("6. after Apple's 410 Beckon answered item-not-found, and Prosody disabled bob's registration")
        alice.close()
        print(f"xmpp-push: PASS in {time.monotonic() - started:.1f} s")
    finally:
        if server is not None:
            server.stop()
        xmpp.prosody_stop()


def wait_for_pushes(emulator, token, count):
    if not wait_until(lambda: len(emulator.received(token)) >= count, 20):
        fail(f"{count} pushes expected at the emulator for the token, got {len(emulator.received(token))}")
    return emulator.received(token)


def device_token_gone(base, node, work):
    # The store is SQLite in `work`: the device's token column is what rule 8 clears.
    rows = store_rows(os.path.join(work, "beckon.sqlite"), "SELECT push_token IS NULL FROM device WHERE id = ?", (node,))
    return rows[:1] == [(1,)]


if __name__ == "__main__":
    main()
