"""The APNs emulator's control API (docs/apns.md, part B): what each device received, the faults
in force, the counters of what it was sent. The same API serves a standalone `beckon
apns-emulator --control` and the emulator `beckon serve` starts for an app with no Apple key
(`BECKON_APNS_EMULATOR_CONTROL_PORT`)."""
from beckonlib.httpjson import request


class Emulator:
    def __init__(self, port_or_base):
        self.base = port_or_base if isinstance(port_or_base, str) else f"http://127.0.0.1:{port_or_base}"

    def __call__(self, method, path, body=None):
        """The answer's body; an answer of 300 or more is an error (the control API does not refuse)."""
        status, answer = request(self.base, method, path, body, timeout=10)
        if status >= 300:
            raise RuntimeError(f"emulator {method} {path} {body}: {status} {answer}")
        return answer

    def healthy(self):
        try:
            return request(self.base, "GET", "/health")[0] == 200
        except OSError:
            return False

    def received(self, token):
        """The notifications the device accepted, oldest first (none before its first push: the
        emulator registers a token when the first push to it arrives)."""
        status, answer = request(self.base, "GET", f"/devices/{token}/received", timeout=10)
        if status == 404:
            return []
        if status != 200:
            raise RuntimeError(f"emulator GET /devices/…/received: {status} {answer}")
        return answer["notifications"]

    def received_ids(self, token):
        """The apns-ids of what the device accepted, lower case, once per copy."""
        return [n["apnsId"].lower() for n in self.received(token)]

    def fault(self, body):
        return self("POST", "/faults", body)

    def clear_faults(self):
        return self("DELETE", "/faults")

    def counters(self):
        return self("GET", "/counters")

    def unregister(self, token):
        """Apple refuses the token from now on (410 Unregistered)."""
        return self("POST", f"/devices/{token}/unregister")
