#!/usr/bin/env python3
"""Proves the XEP-0357 harness end to end without Beckon: a throwaway Prosody (scripts/prosody.sh)
with mod_cloud_notify publishes to a Python stub of the app server (scripts/beckonlib/xmpp.py).

  1. offline: bob enables push (node test-node-1, secret s3cret) and closes his stream; each
     message alice sends him gives one publish, with the secret in the publish-options;
  2. a message without a body gives a publish too, without last-message-body;
  3. error replies: the stub answers item-not-found (cancel); Prosody keeps pushing until the
     16th error (push_max_errors), then drops the registration: no more publishes; while no
     component is connected Prosody bounces the publishes with a `wait` error, which does not
     count, and the registration survives;
  4. smacks: carol's connection drops with stream management on, the session hibernates; two
     messages to it within a second give one publish;
  5. MAM: dave's phone enabled push and left, his desktop is online and gets the message; the
     phone's registration still gets a publish;
  6. with BECKON_PROSODY_PUSH_BODY=1 (a second Prosody), the summary carries the real body and
     the sender.

Prints the exact publish stanzas Prosody sent, stops everything, exits 1 with the reason on the
first failure. Takes about 10 s, most of it spent making sure that no publish comes. `-v` prints the XMPP traffic.

    scripts/xmpp-harness-selftest.py [-v]
"""
import os, re, sys, time

from beckonlib import xmpp
from beckonlib.httpjson import wait_until
from beckonlib.xmpp import Client, Component, NS_STANZAS

# A directory of our own, so that a Prosody someone else started is left alone.
os.environ.setdefault("BECKON_PROSODY_DIR", f"/tmp/beckon-prosody-selftest-{os.getpid()}")
VERBOSE = "-v" in sys.argv[1:]
LOG = (lambda direction, text: print(f"    {direction} {text}")) if VERBOSE else None
QUIET = 1.0  # how long we wait to conclude that no publish is coming


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def no_publish(component, what):
    try:
        publish = component.wait_publish(QUIET)
    except TimeoutError:
        return
    raise Failure(f"{what}, yet Prosody published:\n{publish.raw}")


def connect(facts, user, resource="harness"):
    return Client.connect_from(facts, user, "pw-" + user, resource=resource, log=LOG)


def send_and_wait(sender, component, to, body, what):
    """Alice sends; the publish that follows (ping: Prosody has handled the message by then)."""
    sender.send_message(to, body)
    sender.ping()
    try:
        return component.wait_publish(5)
    except TimeoutError as error:
        raise Failure(f"{what}: {error}") from None


def check_publish(publish, facts, node, secret):
    iq = publish.stanza
    check(iq.name == "iq" and iq.get("type") == "set", f"not an iq set: {publish.raw}")
    check(iq.get("to") == facts["BECKON_PROSODY_COMPONENT_JID"], f"to is {iq.get('to')!r}")
    check(iq.get("from") == facts["BECKON_PROSODY_HOST"], f"from is {iq.get('from')!r}")
    check(publish.node == node, f"published to node {publish.node!r}, not {node!r}")
    check(publish.options.get("FORM_TYPE") == "http://jabber.org/protocol/pubsub#publish-options",
          f"publish-options: {publish.options}")
    check(publish.options.get("secret") == secret, f"secret in publish-options: {publish.options}")
    check(publish.summary.get("FORM_TYPE") == "urn:xmpp:push:summary", f"summary form: {publish.summary}")
    check(publish.summary.get("message-count") == "1", f"message-count: {publish.summary}")


def offline(facts, push, alice):
    jid = facts["BECKON_PROSODY_COMPONENT_JID"]
    bob = connect(facts, "bob", "phone")
    bob.enable_push(jid, "test-node-1", secret="s3cret")
    bob.close()

    first = send_and_wait(alice, push, "bob@localhost", "Hello Bob, first", "first message to offline bob")
    check_publish(first, facts, "test-node-1", "s3cret")
    # Defaults: a placeholder instead of the body, no sender.
    check(first.summary.get("last-message-body") == "New Message!", f"last-message-body: {first.summary}")
    check("Hello Bob" not in first.raw, "the body is in the publish although push_notification_with_body is off")
    check(not first.summary.get("last-message-sender"), f"last-message-sender: {first.summary}")
    print("1. offline: the publish for alice's first message to bob (default configuration):")
    print(first.raw)

    second = send_and_wait(alice, push, "bob@localhost", "Hello Bob, second", "second message to offline bob")
    check_publish(second, facts, "test-node-1", "s3cret")
    check(second.stanza.get("id") != first.stanza.get("id"), "both publishes have the same id")
    print("   second message: a second publish, same shape, new id", second.stanza.get("id"))

    # A chat state alone: Prosody routes it to offline handling, mod_cloud_notify pushes it as
    # "unimportant" (no last-message-body), although mod_offline does not store it.
    alice.send(f"<message type='chat' to='bob@localhost' id='cs1'>"
               "<composing xmlns='http://jabber.org/protocol/chatstates'/></message>")
    alice.ping()
    bodiless = push.wait_publish(5)
    check_publish(bodiless, facts, "test-node-1", "s3cret")
    check(not bodiless.summary.get("last-message-body"), f"a bodiless message: {bodiless.summary}")
    print("2. a message without a body (chat state): a publish without last-message-body")


def error_replies(facts, push, alice):
    push.error = f"<error type='cancel'><item-not-found xmlns='{NS_STANZAS}'/></error>"
    limit = int(os.environ.get("BECKON_PROSODY_PUSH_MAX_ERRORS", "16"))  # push_max_errors
    for errors in range(1, limit + 1):
        send_and_wait(alice, push, "bob@localhost", f"message {errors} while the app server fails",
                      f"Prosody stopped publishing after {errors - 1} error replies, not {limit}")
    def disabled():
        with open(os.path.join(facts["BECKON_PROSODY_DIR"], "prosody.log"), errors="replace") as log:
            return "Disabling push notifications for identifier 'push.localhost<test-node-1'" in log.read()
    # Prosody logs it just after it handles the last error reply, which on a loaded machine can
    # be a moment after the reply was sent.
    check(wait_until(disabled, 5), f"Prosody did not log that it disabled the registration after {limit} errors")
    alice.send_message("bob@localhost", "one more while the app server fails")
    alice.ping()
    no_publish(push, f"after {limit} error replies")
    push.error = None
    # Was the registration removed for good? Enabling again brings the publishes back.
    bob = connect(facts, "bob", "phone")
    bob.enable_push(facts["BECKON_PROSODY_COMPONENT_JID"], "test-node-1", secret="s3cret")
    bob.close()
    again = send_and_wait(alice, push, "bob@localhost", "after re-enabling", "after re-enabling")
    check_publish(again, facts, "test-node-1", "s3cret")
    print(f"3. error replies (cancel/item-not-found): {limit} publishes answered with the error, "
          "then Prosody disabled the registration (no publish for the next message); "
          "enabling again brings the publishes back")


def component_down(facts, push, alice):
    """Beckon restarting: while no component is connected Prosody bounces each publish itself
    with a `wait` error, which does not count towards push_max_errors."""
    push.close()
    for n in range(20):
        alice.send_message("bob@localhost", f"message {n + 1} while the app server is down")
    alice.ping()
    with open(os.path.join(facts["BECKON_PROSODY_DIR"], "prosody.log"), errors="replace") as log:
        bounced = re.findall(r"Got error <(wait:[^>]*)> for identifier 'push.localhost<test-node-1': "
                             "NOT increasing error count", log.read())
    check(len(bounced) == 20, f"{len(bounced)} of 20 publishes bounced with a wait error while the component was down")
    push = Component.connect_from(facts, log=LOG)
    publish = send_and_wait(alice, push, "bob@localhost", "back again", "after the component reconnected")
    check_publish(publish, facts, "test-node-1", "s3cret")
    no_publish(push, "the bounced publishes are not sent again")
    print(f"   component down: Prosody bounced 20 publishes itself ({bounced[0]}: not counted "
          "as errors, not sent again later); after reconnecting, the next message publishes")
    return push


def hibernation(facts, push, alice):
    carol = connect(facts, "carol", "phone")
    carol.enable_stream_management()
    carol.enable_push(facts["BECKON_PROSODY_COMPONENT_JID"], "test-node-2", secret="smacks")
    carol.send_presence()  # available: messages to the bare JID are routed to this session
    carol.ping()
    carol.ack(sync=True)  # a stanza unacknowledged when the connection drops is pushed at once
    carol.drop()
    time.sleep(0.3)  # Prosody notices the closed connection and hibernates the session
    started = time.monotonic()
    alice.send_message("carol@localhost", "Hello hibernating Carol, 1")
    alice.send_message("carol@localhost", "Hello hibernating Carol, 2")
    alice.ping()
    publish = push.wait_publish(5)
    delay = time.monotonic() - started
    check_publish(publish, facts, "test-node-2", "smacks")
    check(publish.summary.get("last-message-body") == "New Message!", f"hibernation push: {publish.summary}")
    no_publish(push, "two messages to a hibernating session within a second gave one publish")
    print(f"4. smacks: two messages to carol's hibernating session gave one publish, after "
          f"{delay:.1f} s (mod_cloud_notify collects queued stanzas for 1 s)")


def other_device(facts, push, alice):
    phone = connect(facts, "dave", "phone")
    phone.enable_push(facts["BECKON_PROSODY_COMPONENT_JID"], "test-node-3", secret="mam")
    phone.close()
    desktop = connect(facts, "dave", "desktop")
    desktop.send_presence()
    desktop.ping()
    publish = send_and_wait(alice, push, "dave@localhost", "Hello Dave", "message to dave (desktop online, phone gone)")
    check_publish(publish, facts, "test-node-3", "mam")
    desktop.wait_for(lambda s: s.name == "message" and s.el.findtext("{jabber:client}body") == "Hello Dave")
    desktop.close()
    print("5. MAM: dave's desktop got the message and his phone's registration a publish")


def with_body():
    facts = xmpp.prosody_start(BECKON_PROSODY_PUSH_BODY="1")
    for user in ("alice", "bob"):
        xmpp.prosody_adduser(user, "pw-" + user)
    with Component.connect_from(facts, log=LOG) as push:
        bob = connect(facts, "bob", "phone")
        bob.enable_push(facts["BECKON_PROSODY_COMPONENT_JID"], "test-node-1", secret="s3cret")
        bob.close()
        alice = connect(facts, "alice")
        publish = send_and_wait(alice, push, "bob@localhost", "Hello Bob <&> with body", "message with the body")
        alice.close()
    check_publish(publish, facts, "test-node-1", "s3cret")
    check(publish.summary.get("last-message-body") == "Hello Bob <&> with body", f"body: {publish.summary}")
    check(publish.summary.get("last-message-sender") == alice.jid, f"sender: {publish.summary}")
    print("6. BECKON_PROSODY_PUSH_BODY=1: the body and the sender's full JID are in the summary:")
    print(publish.raw)


def main():
    started = time.monotonic()
    try:
        facts = xmpp.prosody_start()
        print(f"Prosody up in {time.monotonic() - started:.1f} s: c2s {facts['BECKON_PROSODY_C2S_PORT']}, "
              f"component {facts['BECKON_PROSODY_COMPONENT_JID']} on {facts['BECKON_PROSODY_COMPONENT_PORT']}")
        for user in ("alice", "bob", "carol", "dave"):
            xmpp.prosody_adduser(user, "pw-" + user)
        push = Component.connect_from(facts, log=LOG)
        try:
            alice = connect(facts, "alice")
            alice.send_presence()
            offline(facts, push, alice)
            error_replies(facts, push, alice)
            push = component_down(facts, push, alice)
            hibernation(facts, push, alice)
            other_device(facts, push, alice)
            alice.close()
            check(push.failure is None, f"the component's stream failed: {push.failure}")
        finally:
            push.close()
        xmpp.prosody_stop()
        with_body()
    except (Failure, xmpp.XmppError, TimeoutError, OSError, RuntimeError) as error:
        log = os.path.join(os.environ["BECKON_PROSODY_DIR"], "prosody.log")
        print(f"FAIL: {error}", file=sys.stderr)
        if os.path.exists(log):
            with open(log, errors="replace") as f:
                tail = f.readlines()[-30:]
            print(f"--- the last lines of {log}:\n" + "".join(tail), file=sys.stderr)
        return 1
    finally:
        xmpp.prosody_stop()
    print(f"OK: the XMPP push harness works ({time.monotonic() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
