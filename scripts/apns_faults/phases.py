"""The faults Apple is known for, one phase each and combined, as the APNs fault soak
(scripts/apns-fault-soak.py) injects them through the emulator's control API: random 500/503,
429 for a token, GOAWAY every N streams, TCP resets, streams never answered, slow answers,
wedged expired-token connections, the error budget and throttling after a rejection. A phase's
`start` and `tick` get the soak, whose `emu` is the emulator and `tokens` the devices' tokens."""


class Phase:
    """One fault kind: `faults` posted at the start, `start(soak)` run then, `tick(soak, t)` every
    0.25 s while messages are posted. With `probe`, the retry-exhaustion probe runs beside it: one
    token of its own is answered 503 for good (its rule added first, so it wins over the phase's
    faults, and kept while draining), and messages to it (one at the start, then one every 10 s)
    must each use every attempt and end `failed`. Its requests are told apart by their reason:
    no other fault of such a phase answers 503."""

    def __init__(self, name, description, faults=(), tick=None, start=None, probe=False, long_only=False):
        self.name, self.description = name, description
        self.faults, self.tick, self.start, self.probe, self.long_only = list(faults), tick, start, probe, long_only


def every(seconds, action):
    """A tick that runs `action(soak)` once per `seconds` of the phase."""
    state = {"next": seconds}

    def tick(soak, t):
        if t == 0:
            state["next"] = seconds
        if t >= state["next"]:
            state["next"] += seconds
            action(soak)
    return tick


def combine(*ticks):
    def tick(soak, t):
        for each in ticks:
            each(soak, t)
    return tick


def free_tokens(soak):
    """The tokens no token-scoped rule is waiting for (so renewing a fault never piles rules up)."""
    busy = {rule.get("deviceToken") for rule in soak.emu("GET", "/faults")["rules"]}
    return [token for token in soak.tokens if token not in busy]


def too_many_requests(soak):
    """429 TooManyRequests (token-scoped only) for a random third of the tokens, 1-6 answers each:
    up to 3 are absorbed by the client's retries, more push the send back to the outbox."""
    free = free_tokens(soak)
    for token in soak.rng.sample(free, min(len(free), max(1, len(soak.tokens) // 3))):
        soak.emu.fault({"type": "too-many-requests", "deviceToken": token, "count": soak.rng.randint(1, 6)})


def slow_tokens(soak):
    free = free_tokens(soak)
    for token in soak.rng.sample(free, min(len(free), 3)):
        soak.emu.fault({"type": "delay", "milliseconds": 2500, "deviceToken": token, "count": 2})


def new_connections(soak):
    """GOAWAY on the live connections: `goaway-after-streams` counts a connection's streams from
    its start, so connections already past N would never get it."""
    soak.emu("POST", "/connections/goaway", {"reason": "Shutdown"})


def never_respond(soak):
    soak.emu.fault({"type": "never-respond", "count": 10})


def expired_token(soak):
    soak.emu.fault({"type": "respond", "reason": "ExpiredProviderToken", "count": 1})


def phases():
    return [
        Phase("baseline", "no fault"),
        Phase("5xx", "random 500 (20 %) and 503 (20 %)",
              [{"type": "random-failures", "internalServerErrorRate": 0.2, "serviceUnavailableRate": 0.2}]),
        Phase("429", "429 TooManyRequests for a third of the tokens, 1-6 answers each, renewed every second",
              tick=every(1.0, too_many_requests), start=too_many_requests),
        Phase("goaway", "GOAWAY after every 7 streams of each connection", [{"type": "goaway-after-streams", "streams": 7}],
              start=new_connections),
        Phase("reset", "TCP reset on the 10th stream of each connection, and of every connection each 1.5 s",
              [{"type": "reset-after-streams", "streams": 9}],
              tick=every(1.5, lambda soak: soak.emu("POST", "/connections/reset", {}))),
        Phase("never-respond", "10 requests never answered, at the start and every 10 s",
              [{"type": "never-respond", "count": 10}], tick=every(10, never_respond), probe=True),
        Phase("slow", "every answer 300 ms late; 3 tokens 2.5 s late for 2 requests, renewed every second",
              [{"type": "response-delay", "milliseconds": 300}], tick=every(1.0, slow_tokens), start=slow_tokens),
        Phase("expired-token", "wedge-on-expired-token on; ExpiredProviderToken forced every 0.5 s; "
              "every live connection wedged each 1.5 s",
              [{"type": "wedge-on-expired-token", "enabled": True}],
              tick=combine(every(0.5, expired_token), every(1.5, lambda soak: soak.emu("POST", "/connections/wedge", {}))),
              start=lambda soak: soak.emu("POST", "/connections/wedge", {})),
        Phase("5xx+goaway+throttle", "random 5xx (15 % + 15 %), GOAWAY every 11 streams, throttle-on-reject",
              [{"type": "random-failures", "internalServerErrorRate": 0.15, "serviceUnavailableRate": 0.15},
               {"type": "goaway-after-streams", "streams": 11}, {"type": "throttle-on-reject", "enabled": True}],
              start=new_connections),
        # Answers pending when the connection resets: APNs processed those requests but the client
        # cannot know, so it sends them again (an attempt each). Pushes reach the device more than
        # once, and a push may use every attempt this way and end failed although delivered.
        Phase("reset+slow", "TCP reset on the 14th stream of each connection, every answer 200 ms late",
              [{"type": "reset-after-streams", "streams": 13}, {"type": "response-delay", "milliseconds": 200}]),
        Phase("error-budget+429", "GOAWAY after 3 rejected requests on a connection, 429 for a third of the tokens",
              [{"type": "error-budget", "errors": 3}], tick=every(1.0, too_many_requests), start=too_many_requests),
        Phase("never+5xx+goaway", "8 requests never answered, random 5xx (10 % + 10 %), GOAWAY every 9 streams",
              [{"type": "never-respond", "count": 8},
               {"type": "random-failures", "internalServerErrorRate": 0.1, "serviceUnavailableRate": 0.1},
               {"type": "goaway-after-streams", "streams": 9}], start=new_connections, long_only=True),
    ]
