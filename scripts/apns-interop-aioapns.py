#!/usr/bin/env python3
"""Points the third-party APNs client aioapns at the Beckon APNs emulator; run by apns-interop.sh.

aioapns is used as a provider would use it, but for two things a user pointing it at a test server
must change: the host and port (class attributes of its protocol class; aioapns has no option for
them) and the CA it trusts (its documented `ssl_context` argument). Certificate verification stays
on. aioapns offers no ALPN protocol; the emulator speaks HTTP/2 to such clients (apns.md A.1).

Usage: apns-interop-aioapns.py --port P --ca CA --key K --bad-key K2 --key-id ID --team-id T
           --topic BUNDLE --ok TOKEN --wrong-env TOKEN --gone TOKEN --gone-at MS
Prints one line per check; exits 1 if any failed.
"""

import argparse
import asyncio
import ssl
import sys

from aioapns import APNs, NotificationRequest, PushType
from aioapns.connection import APNsDevelopmentClientProtocol


def pool_for_emulator(client: APNs, port: int) -> None:
    """The only change to aioapns: connect to the emulator instead of Apple."""

    class EmulatorProtocol(APNsDevelopmentClientProtocol):
        APNS_SERVER = "127.0.0.1"  # Sent as `host` and checked against the certificate's IP SAN.
        APNS_PORT = port

    client.pool.protocol_class = EmulatorProtocol


async def ignore_error(request, result) -> None:
    pass


async def main() -> int:
    parser = argparse.ArgumentParser()
    for name in ("port", "ca", "key", "bad-key", "key-id", "team-id", "topic", "ok", "wrong-env", "gone", "gone-at"):
        parser.add_argument("--" + name, required=True)
    args = parser.parse_args()

    failures = 0

    def check(what: str, ok: bool, detail: str) -> None:
        nonlocal failures
        print(("ok   " if ok else "FAIL ") + "aioapns: " + what + " -- " + detail)
        if not ok:
            failures += 1

    def client(key_path: str) -> APNs:
        context = ssl.create_default_context(cafile=args.ca)  # Verification on, hostname checked.
        with open(key_path) as handle:
            key = handle.read()
        apns = APNs(
            key=key, key_id=args.key_id, team_id=args.team_id, topic=args.topic,
            use_sandbox=True, ssl_context=context, max_connection_attempts=1,
            err_func=ignore_error,  # The checks print errors; aioapns would log them again.
        )
        pool_for_emulator(apns, int(args.port))
        return apns

    def alert(token: str, text: str) -> NotificationRequest:
        return NotificationRequest(
            device_token=token, message={"aps": {"alert": text}}, push_type=PushType.ALERT,
        )

    good = client(args.key)
    request = alert(args.ok, "hello from aioapns")
    result = await good.send_notification(request)
    check("200 with apns-id", result.status == "200" and result.notification_id == request.notification_id,
          f"status={result.status} apns-id={result.notification_id}")

    result = await good.send_notification(alert(args.wrong_env, "wrong environment"))
    check("400 BadDeviceToken (production token on the sandbox emulator)",
          result.status == "400" and result.description == "BadDeviceToken",
          f"status={result.status} reason={result.description}")

    result = await good.send_notification(alert(args.gone, "to an uninstalled app"))
    check("410 Unregistered with the unregistration timestamp",
          result.status == "410" and result.description == "Unregistered" and str(result.timestamp) == args.gone_at,
          f"status={result.status} reason={result.description} timestamp={result.timestamp} expected={args.gone_at}")

    bad = client(args.bad_key)
    result = await bad.send_notification(alert(args.ok, "signed with the wrong key"))
    check("403 InvalidProviderToken (JWT signed by an unknown key)",
          result.status == "403" and result.description == "InvalidProviderToken",
          f"status={result.status} reason={result.description}")

    good.pool.close()
    bad.pool.close()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
