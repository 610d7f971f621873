#!/usr/bin/env python3
"""A webhook receiver on loopback for the benchmarks and soaks (docs/webhooks.md): takes Beckon's
POSTs, checks each signature (HMAC-SHA256, Standard Webhooks) and the timestamp's age, and keeps
every event's id, type and arrival time; answers 500 for the first --fail-seconds after its first
request (a receiver that is down for a while), then 204. On SIGTERM or SIGINT it writes a summary
as JSON to --summary:

- events (all received in 2xx-answered POSTs), distinct ids, duplicates, whether the ids came in
  ascending order, per type counts;
- the first and last arrival (epoch seconds), requests by status, bad signatures.

    scripts/webhook-receiver.py --port P --secret S --summary FILE [--fail-seconds N]

asyncio and raw HTTP/1.1 keep-alive, one process of its own: the bench client's threads do not
slow it. Loopback only.
"""
import argparse, asyncio, base64, hashlib, hmac, json, signal, time


def signing_key(secret):
    if secret.startswith("whsec_"):
        return base64.b64decode(secret[len("whsec_"):])
    return secret.encode()


class Receiver:
    def __init__(self, key, fail_seconds):
        self.key, self.fail_seconds = key, fail_seconds
        self.first_request = None
        self.ids, self.types, self.arrivals = [], {}, []
        self.statuses, self.bad_signatures = {}, 0

    def verify(self, headers, body):
        msg_id, timestamp = headers.get("webhook-id", ""), headers.get("webhook-timestamp", "0")
        if abs(time.time() - int(timestamp)) > 300:
            return False
        expected = base64.b64encode(hmac.new(self.key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()).decode()
        return any(hmac.compare_digest(expected, given[3:]) for given in headers.get("webhook-signature", "").split(" ")
                   if given.startswith("v1,"))

    def take(self, headers, body):
        now = time.time()
        if self.first_request is None:
            self.first_request = now
        if now - self.first_request < self.fail_seconds:
            return 500
        if not self.verify(headers, body):
            self.bad_signatures += 1
            return 401
        for event in json.loads(body)["events"]:
            self.ids.append(int(event["id"]))
            self.types[event["type"]] = self.types.get(event["type"], 0) + 1
            self.arrivals.append(now)
        return 204

    async def serve(self, reader, writer):
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                headers = {}
                while True:
                    header = await reader.readline()
                    if header in (b"\r\n", b"\n", b""):
                        break
                    name, _, value = header.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                status = self.take(headers, body)
                self.statuses[status] = self.statuses.get(status, 0) + 1
                writer.write(f"HTTP/1.1 {status} X\r\nContent-Length: 0\r\n\r\n".encode())
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            return
        finally:
            writer.close()

    def summary(self):
        distinct = set(self.ids)
        return {
            "events": len(self.ids), "distinct": len(distinct), "duplicates": len(self.ids) - len(distinct),
            "ascending": all(a < b for a, b in zip(self.ids, self.ids[1:])), "types": self.types,
            "first": self.arrivals[0] if self.arrivals else None, "last": self.arrivals[-1] if self.arrivals else None,
            "firstRequest": self.first_request, "statuses": {str(k): v for k, v in self.statuses.items()},
            "badSignatures": self.bad_signatures,
        }


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--secret", required=True)
    parser.add_argument("--summary", required=True)
    parser.add_argument("--fail-seconds", type=float, default=0)
    args = parser.parse_args()
    receiver = Receiver(signing_key(args.secret), args.fail_seconds)
    server = await asyncio.start_server(receiver.serve, "127.0.0.1", args.port)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    await stop.wait()
    # The summary first: closing the server cancels the connections' readers.
    with open(args.summary, "w") as handle:
        json.dump(receiver.summary(), handle)
    server.close()


if __name__ == "__main__":
    asyncio.run(main())
