#!/usr/bin/env python3
"""Fuzzes Beckon's HTTP API with schemathesis against openapi.yaml, every operation with the
credential its `security` names, and fails on any server error or any answer outside the document.

    scripts/fuzz-api.py BECKON_BINARY [--cases N] [--seed S] [--only OPERATION_ID] [--details] [--keep]

Starts `beckon serve` on a free loopback port with a fresh SQLite database in a temporary
directory (rate limits off: a 429 would stand in for the answer under test), issues an API key
with the admin token, registers a device for each of two users with user tokens it signs (HS256
JWTs, aud = app id, sub = user id), then runs schemathesis's phases: examples, coverage, fuzzing,
and stateful sequences that follow the document's `links` (register -> update -> delete, register
-> post -> fetch, post -> fetch, post -> end call -> end again, issue key -> revoke key). Checks:

  schemathesis's own  not_a_server_error, status_code_conformance, content_type_conformance,
                      response_schema_conformance, response_headers_conformance, ignored_auth
                      (a 2xx is retried without a credential and with a broken one: both 401);
  error_form          every 4xx/5xx is `{"error": {"code", "message"}}` and nothing else, as
                      application/json, with a documented code that agrees with the status
                      (401 unauthorized, 404 not_found, ...), a non-empty message, 400s about a
                      field naming it first (`recipients.users[1]: ...`), a Bearer
                      WWW-Authenticate on 401 and a Retry-After of whole seconds on 429;
  credential_accepted a credential the run holds as valid is never answered 401;
  known_ids_found     a device, message, call, key or app the run created and that still exists
                      is not 403/404 to a credential that reaches it (the device's own, the app's
                      key, a recipient's device);
  answers_match_requests  a 2xx names what was sent: the registered device id and the token's
                      user, the updated device, the recipients; a fetched message is one of the
                      fetching device's user;
  integral_numbers_accepted  a number like 45.0 is an integer for the document's JSON Schema,
                      so `type: integer` fields must not refuse it as "not an integer".

Credentials, per operation, from its `security`: adminToken for the admin routes, userToken for
POST /v1/devices (one of two users), apiKey for messages, call ends and the delivery report,
deviceCredential for the device routes, message fetches and /v1/sync; DELETE /v1/devices/{id}
takes the device's credential or the API key, half and half. Cases in which schemathesis tests a
missing or broken credential are left alone. Device credentials follow what the run does: a
device registered (or registered again) by a case is known with its new credential, a deleted one
forgotten; PUT/DELETE of a known device and GET of a known message go with that device's
credential or a recipient's (one time in eight another device's, for the 403/404 paths).

Some positive cases are pointed at what exists, so that the fuzzing gets past the checks of
ownership and configuration to the code behind them: in the examples, coverage and fuzzing
phases half of the path parameters become ids the run created (devices, messages, calls, keys,
the app); half of the device bodies get the app's bundle id and team id (configuration the
document cannot state); most message bodies with an Idempotency-Key header get the same key in
the body (they must agree); half of the device recipients become devices the run registered.

--cases N is the least number of requests to send in all: the phases run in rounds (the first
with all phases, the next with fuzzing and stateful only), each with a new seed, until N were
sent; schemathesis's --max-examples is N / 40, from 50 to 250 (--per-operation sets it), as the
stateful phase runs a few dozen sequences per round whatever the examples per operation. The
default, 1,200 (one round), is the CI run (30 to 50 s on two busy cores); the long run is

    scripts/fuzz-api.py BECKON_BINARY --cases 10000

The summary gives per operation the cases, those answered other than 401 (proof that the
operation was reached past authentication), the 2xx, the statuses and the credential kinds sent;
the stateful steps taken; the server log's levels; and the failures. Exits 0 only if no check
failed, the server stayed up, every documented operation had a non-401 answer, and every line of
the server's log is whole (an id with a newline must not start a line of its own). On failure
the temporary directory stays: server.log, requests.jsonl (every request and answer), JUnit
reports. --only OPERATION_ID (repeatable) fuzzes some operations only (without the stateful phase
unless --phases names it), --phases runs some phases only;
--details prints the commonest error answers per operation; --also-check adds a schemathesis check.

Requirements: Python >= 3.10 and schemathesis 4 (`python3 -m pip install 'schemathesis>=4.32,<5'`,
which brings hypothesis, requests and PyYAML; written against schemathesis 4.32.5).
"""
import argparse, collections, json, os, random, re, shutil, sys, tempfile, threading, time
import urllib.parse

from beckonlib.httpjson import free_port, request, user_token
from beckonlib.node import NO_RATE_LIMITS, Node

try:
    import schemathesis
    from schemathesis.core.parameters import ParameterLocation
    from schemathesis.generation import GenerationMode
    from schemathesis.generation.meta import TestPhase
except ImportError:
    sys.exit("fuzz-api: needs schemathesis 4: python3 -m pip install 'schemathesis>=4.32,<5'")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCUMENT = os.path.join(ROOT, "openapi.yaml")
# The team id is the one of the document's pn-param example, so that example registers.
APP, BUNDLE, TEAM = "chat", "com.example.chat", "ABCDE12345"
SECRET = "fuzz-user-token-secret-0123456789abcdef"
ADMIN = "fuzz-admin-token-0123456789abcdef0123456789"
USERS = ("fuzz-ana", "fuzz-ben")
CHECKS = ["not_a_server_error", "status_code_conformance", "content_type_conformance",
          "response_schema_conformance", "response_headers_conformance", "error_form", "credential_accepted",
          "known_ids_found", "answers_match_requests", "integral_numbers_accepted", "ignored_auth",
          "stateful_links"]

# What each error code means, by HTTP status (openapi.yaml, components.schemas.Error).
CODES_BY_STATUS = {
    400: {"malformed_json", "unknown_field", "invalid_field", "bad_request"},
    401: {"unauthorized"},
    403: {"forbidden"},
    404: {"not_found"},
    405: {"method_not_allowed"},
    409: {"conflict", "idempotency_conflict", "device_owned_by_another_user"},
    413: {"too_large"},
    415: {"unsupported_media_type"},
    426: {"upgrade_required"},
    429: {"rate_limited"},
    500: {"internal"},
}


def log(text):
    print(f"fuzz-api: {text}", flush=True)


class World:
    """What the run knows about the server's state: the credentials it holds and the ids the
    cases created. Updated from every answer (`observe`), read before every request (`prepare`)."""

    def __init__(self, base, seed):
        self.base = base
        self.lock = threading.RLock()
        self.random = random.Random(seed)
        self.tokens = {user: user_token(SECRET, APP, user, lifetime=86400) for user in USERS}
        self.user_of_token = {token: user for user, token in self.tokens.items()}
        self.unusable_users = set()  # recipients no device could be registered for
        self.api_key = None
        self.devices = {}       # device id -> (user id, credential), as registered now
        self.every_device_credential = set()
        self.setup_devices = {}  # user -> the device id registered for it before the run
        self.messages = {}      # message id -> (recipient user ids, whether it may expire)
        self.calls = []         # ids of messages of kind call
        self.keys = []          # (app id, key id) of keys the cases created
        self.extra_registrations = 0

    # --- setup, outside schemathesis ---------------------------------------------------------

    def setup(self):
        status, key = request(self.base, "POST", f"/v1/admin/apps/{APP}/keys", {"name": "fuzz"}, ADMIN)
        if status != 201:
            raise RuntimeError(f"could not issue an API key: {status} {key}")
        self.api_key = key["key"]
        for user in USERS:
            self.setup_devices[user] = self.register(user, f"fuzz-setup-{user}-{os.urandom(6).hex()}")

    def register(self, user, device_id):
        token = self.tokens.get(user) or user_token(SECRET, APP, user, lifetime=86400)
        self.user_of_token[token] = user
        status, answer = request(self.base, "POST", "/v1/devices", {
            "deviceId": device_id, "bundleId": BUNDLE, "environment": "sandbox",
            "tokens": {"remote": os.urandom(32).hex()}}, token)
        if status != 201:
            raise RuntimeError(f"could not register {device_id!r} for {user!r}: {status} {answer}")
        self.remember_device(answer)
        return device_id

    def remember_device(self, registered):
        device = registered["device"]
        with self.lock:
            self.devices[device["deviceId"]] = (device["userId"], registered["credential"])
            self.every_device_credential.add(registered["credential"])

    def device_of(self, user):
        """A credential of a current device of `user`; the user's setup device, registered again
        if a case deleted it or moved it to another user."""
        with self.lock:
            mine = [credential for owner, credential in self.devices.values() if owner == user]
            if mine:
                return self.random.choice(mine)
            if user in self.unusable_users:
                return None
            setup = self.setup_devices.get(user)
            if setup is None:
                if self.extra_registrations >= 2000:
                    return None
                self.extra_registrations += 1
                setup = f"fuzz-fetcher-{os.urandom(6).hex()}"
            try:
                self.register(user, setup)
            except (RuntimeError, OSError, ValueError):
                self.unusable_users.add(user)
                return None
            self.setup_devices[user] = setup
            owner, credential = self.devices[setup]
            if owner != user:  # The store did not keep the user id as given (a defect the checks report).
                self.unusable_users.add(user)
                return None
            return credential

    # --- credentials, per operation -----------------------------------------------------------

    def credential_for(self, case):
        """(security scheme, token) for this case, from the operation's `security`."""
        requirements = case.operation.definition.raw.get("security") or []
        schemes = [name for requirement in requirements for name in requirement]
        if not schemes:
            return None
        with self.lock:
            scheme = self.random.choice(schemes)
        if scheme in ("adminToken", "adminBasic"):
            # The status page also takes the admin token as Basic's password; the bearer form
            # reaches it as well.
            return "adminToken", ADMIN
        if scheme == "apiKey":
            return scheme, self.api_key
        if scheme == "userToken":
            with self.lock:
                return scheme, self.tokens[self.random.choice(USERS)]
        if scheme == "deviceCredential":
            return scheme, self.device_of(USERS[0])
        raise AssertionError(f"no credential for the security scheme {scheme}")

    def kind_of(self, authorization):
        """Which of our credentials an Authorization header carries (None: not one of ours)."""
        if not authorization or not authorization.startswith("Bearer "):
            return None
        token = authorization[len("Bearer "):]
        if token == ADMIN:
            return "adminToken"
        if token == self.api_key:
            return "apiKey"
        if token in self.tokens.values():
            return "userToken"
        with self.lock:
            if token in self.every_device_credential:
                return "deviceCredential"
        return None

    # --- before each request ------------------------------------------------------------------

    def prepare(self, case):
        """Before a request: points some positive path parameters at ids the run created (in the
        coverage and fuzzing phases), makes some positive device bodies name the app's bundle and
        team, and gives a device credential that fits the device or message named. Returns the
        kind of our credential the case carries (None: not one of ours) and, when the request
        names something that exists and the credential reaches it, why it must not be 403/404."""
        label = case.operation.label
        phase = case.meta.phase.name if case.meta else None
        with self.lock:
            if isinstance(case.path_parameters, dict) and case.path_parameters and \
                    self.positive(case, ParameterLocation.PATH) and \
                    phase in (TestPhase.EXAMPLES, TestPhase.COVERAGE, TestPhase.FUZZING) and self.random.random() < 0.5:
                self.substitute(case.path_parameters)
            path = sent_path_parameters(case, case.as_transport_kwargs().get("url", ""))
            if label in ("POST /v1/devices", "PUT /v1/devices/{deviceId}") and isinstance(case.body, dict) and \
                    self.positive(case, ParameterLocation.BODY) and self.random.random() < 0.5:
                self.name_the_app(case.body)
            if label == "POST /v1/messages" and isinstance(case.body, dict) and case.headers and \
                    isinstance(case.headers.get("Idempotency-Key"), str) and "idempotencyKey" in case.body and \
                    self.positive(case, ParameterLocation.BODY) and self.random.random() < 0.75:
                # Both given, they must agree (a rule across header and body the document states in
                # words); two independent random keys only ever reach the 400 that says so.
                case.body["idempotencyKey"] = case.headers["Idempotency-Key"]
            recipients = case.body.get("recipients") if label == "POST /v1/messages" and isinstance(case.body, dict) else None
            if isinstance(recipients, dict) and isinstance(recipients.get("devices"), list) and recipients["devices"] and \
                    self.devices and self.positive(case, ParameterLocation.BODY) and self.random.random() < 0.5:
                # A device recipient must be a device of the app: name devices the run registered.
                recipients["devices"] = [self.random.choice(sorted(self.devices)) for _ in recipients["devices"]]
            if case.headers is None:
                case.headers = {}
            kind = self.kind_of(case.headers.get("Authorization"))
            if kind == "deviceCredential":
                credential = self.device_credential_for(path)
                if credential:
                    case.headers["Authorization"] = "Bearer " + credential
            if str(case.method).upper() != str(case.operation.method).upper():
                return kind, None  # A probe with a method the path does not serve.
            return kind, self.expectation(label, path, kind, case.headers.get("Authorization", "")[7:])

    @staticmethod
    def positive(case, location):
        component = case.meta.components.get(location) if case.meta else None
        return component is None or component.mode == GenerationMode.POSITIVE

    def substitute(self, path):
        """Known ids in place of generated ones, percent-encoded as schemathesis keeps path
        parameters once generated (a raw `#`, `?` or `/` would change the URL)."""
        choice = self.random.choice
        if "deviceId" in path and self.devices:
            path["deviceId"] = segment(choice(sorted(self.devices)))
        elif "messageId" in path and self.messages:
            path["messageId"] = segment(choice(sorted(self.messages)))
        elif "callId" in path and self.calls:
            path["callId"] = segment(choice(self.calls))
        elif "keyId" in path and self.keys:
            app, key = choice(self.keys)
            path["appId"], path["keyId"] = segment(app), segment(key)
        elif "appId" in path:
            path["appId"] = APP

    @staticmethod
    def name_the_app(body):
        """The bundle id and the team id are the app's configuration, which the document cannot
        state; random ones only ever reach the 400 that says so."""
        if "bundleId" in body:
            body["bundleId"] = BUNDLE
        parameters = body.get("pushParameters")
        if isinstance(parameters, dict) and isinstance(parameters.get("pn-param"), str) and "." in parameters["pn-param"]:
            services = parameters["pn-param"].rsplit(".", 1)[1]
            parameters["pn-param"] = f"{TEAM}.{BUNDLE}.{services}"

    def device_credential_for(self, path):
        """The credential of the device in the path, or of a recipient of the message in it (one
        time in eight another device's, for the 403 and 404 answers); else a setup device's."""
        other = self.random.random() < 0.125
        device_id = path.get("deviceId")
        if device_id in self.devices and not other:
            return self.devices[device_id][1]
        message_id = path.get("messageId")
        if message_id in self.messages and not other:
            recipients = self.messages[message_id][0]
            if recipients:
                return self.device_of(self.random.choice(recipients))
        return self.device_of(self.random.choice(USERS))

    def expectation(self, label, path, kind, token):
        """Why this request must find what it names, or None when it may be 403/404."""
        if kind is None:
            return None
        device_id = path.get("deviceId")
        if label in ("PUT /v1/devices/{deviceId}", "DELETE /v1/devices/{deviceId}") and device_id in self.devices:
            if kind == "deviceCredential" and self.devices[device_id][1] == token:
                return f"device {device_id!r} is registered and this is its credential"
            if kind == "apiKey":
                return f"device {device_id!r} is registered in the key's app"
        message_id = path.get("messageId")
        if label == "GET /v1/messages/{messageId}" and message_id in self.messages and kind == "deviceCredential":
            recipients, expires = self.messages[message_id]
            owner = next((user for user, credential in self.devices.values() if credential == token), None)
            if owner in recipients and not expires:
                return f"message {message_id} was posted for {owner!r} and this is a credential of their device"
        if label == "POST /v1/calls/{callId}/end" and path.get("callId") in self.calls:
            return f"call {path['callId']} was posted with this app's key"
        if label == "DELETE /v1/admin/apps/{appId}/keys/{keyId}" and (path.get("appId"), path.get("keyId")) in self.keys:
            return f"key {path['keyId']} of app {path['appId']} was issued and not revoked"
        if label == "POST /v1/admin/apps/{appId}/keys" and path.get("appId") == APP:
            return f"app {APP} is configured"
        return None

    # --- after each answer --------------------------------------------------------------------

    def observe(self, case, response):
        label, status = case.operation.label, response.status_code
        if str(case.method).upper() != str(case.operation.method).upper():
            return
        try:
            body = json.loads(response.content) if response.content else None
        except ValueError:
            return
        path = sent_path_parameters(case, response.request.url)
        with self.lock:
            if label == "POST /v1/devices" and status == 201 and isinstance(body, dict):
                self.remember_device(body)
            elif label == "DELETE /v1/devices/{deviceId}" and status == 204:
                self.devices.pop(path.get("deviceId"), None)
            elif label == "POST /v1/messages" and status in (200, 202) and isinstance(body, dict):
                users = [position["userId"] for position in body.get("positions", [])]
                sent = case.body if isinstance(case.body, dict) else {}
                expires = sent.get("ttlSeconds") is not None or sent.get("expiresAt") is not None
                if status == 202 or body["id"] not in self.messages:
                    self.messages[body["id"]] = (users, expires)
                if sent.get("kind") == "call" and body["id"] not in self.calls:
                    self.calls.append(body["id"])
            elif label == "POST /v1/admin/apps/{appId}/keys" and status == 201 and isinstance(body, dict):
                self.keys.append((body["appId"], body["id"]))
            elif label == "DELETE /v1/admin/apps/{appId}/keys/{keyId}" and status == 204:
                key = (path.get("appId"), path.get("keyId"))
                if key in self.keys:
                    self.keys.remove(key)


def segment(value):
    """A path segment for `value`: every reserved character percent-encoded, and `.` and `..`
    too, which a client would otherwise resolve away."""
    return {".": "%2E", "..": "%2E%2E"}.get(value) or urllib.parse.quote(value, safe="")


def sent_path_parameters(case, url):
    """The path parameters as the server gets them, from the URL the request goes to (in stateful
    sequences schemathesis keeps some of them percent-encoded in the case, others not)."""
    template = case.operation.path.strip("/").split("/")
    sent = urllib.parse.urlsplit(url).path.strip("/").split("/")[-len(template):]
    if len(sent) != len(template):
        return {}
    return {part[1:-1]: urllib.parse.unquote(value, errors="surrogateescape")
            for part, value in zip(template, sent) if part.startswith("{") and part.endswith("}")}


class Tally:
    """Per operation: cases, cases answered other than 401, 2xx, statuses, credential kinds."""

    def __init__(self):
        self.lock = threading.Lock()
        self.cases = collections.Counter()
        self.reached = collections.Counter()
        self.succeeded = collections.Counter()
        self.statuses = collections.defaultdict(collections.Counter)
        self.kinds = collections.defaultdict(collections.Counter)
        self.phases = collections.defaultdict(collections.Counter)
        self.errors = collections.defaultdict(collections.Counter)  # label -> "status code: message"
        self.links = collections.defaultdict(collections.Counter)  # (from, status, to) -> statuses
        self.failures = collections.defaultdict(collections.Counter)  # check -> label -> failed cases
        self.journal = None  # a file: one JSON line per request, kept with the server's log

    def record(self, entry):
        if self.journal:
            with self.lock:
                self.journal.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def failed(self, check, label):
        with self.lock:
            self.failures[check][label] += 1

    def link(self, parent, parent_status, child, status):
        with self.lock:
            self.links[(parent, parent_status, child)][status] += 1

    def add(self, label, status, kind, body, phase):
        with self.lock:
            self.phases[label][phase] += 1
            if status >= 400:
                try:
                    error = json.loads(body)["error"]
                    text = f"{status} {error['code']}: {error['message']}"
                except (ValueError, KeyError, TypeError):
                    text = f"{status} {body[:80]!r}"
                # Numbers and quoted or fuzzed values vary; the shape of the message is what counts.
                self.errors[label][re.sub(r"\d+", "N", text)[:100]] += 1
            self.cases[label] += 1
            self.reached[label] += status != 401
            self.succeeded[label] += 200 <= status < 300
            self.statuses[label][status] += 1
            self.kinds[label][kind or "none/other"] += 1


UNDOCUMENTED = "(methods a path does not serve)"
WORLD = None
TALLY = Tally()
SENT_WITH = {}  # case id -> (kind of our credential it was sent with, why it must not be 403/404)


def counted(check):
    """Counts the failing cases of one of our checks, per operation, for the summary."""
    def wrapper(ctx, response, case):
        try:
            return check(ctx, response, case)
        except AssertionError:
            documented = str(case.method).upper() == str(case.operation.method).upper()
            TALLY.failed(check.__name__, case.operation.label if documented else UNDOCUMENTED)
            raise
    wrapper.__name__, wrapper.__doc__ = check.__name__, check.__doc__
    return wrapper


def install_hooks():
    @schemathesis.auth(refresh_interval=None, retry_on=[])
    class Credentials:
        def get(self, case, context):
            return WORLD.credential_for(case)

        def set(self, case, data, context):
            if data and data[1]:
                if case.headers is None:
                    case.headers = {}
                case.headers["Authorization"] = "Bearer " + data[1]

    @schemathesis.hook
    def before_call(context, case, kwargs):
        SENT_WITH[case.id] = WORLD.prepare(case)

    @schemathesis.hook
    def after_call(context, case, response):
        WORLD.observe(case, response)
        documented = str(case.method).upper() == str(case.operation.method).upper()
        kind, why = SENT_WITH.get(case.id, (None, None))
        TALLY.record({"phase": case.meta.phase.name.value if case.meta else None, "case": case.id,
                      "request": f"{response.request.method} {response.request.url}", "credential": kind,
                      "path": sent_path_parameters(case, response.request.url),
                      "expected": why, "body": response.request.body.decode(errors="replace")[:500]
                      if isinstance(response.request.body, bytes) else response.request.body,
                      "status": response.status_code, "answer": response.content[:300].decode(errors="replace")})
        TALLY.add(case.operation.label if documented else UNDOCUMENTED, response.status_code, kind,
                  response.content, case.meta.phase.name.value if case.meta else "other")

    @schemathesis.check
    @counted
    def error_form(ctx, response, case):
        """Every error is in the documented form (openapi.yaml, `Error`); the drop-ins answer in
        their own protocol's (`x-error-form`), which the schema checks hold them to."""
        status = response.status_code
        if status < 400 or case.operation.definition.raw.get("x-error-form"):
            return None
        content_type = (response.headers.get("content-type") or [""])[0]
        if content_type.split(";")[0].strip().lower() != "application/json":
            raise AssertionError(f"a {status} answered with Content-Type {content_type!r}, not application/json")
        try:
            body = json.loads(response.content)
        except ValueError:
            raise AssertionError(f"a {status} whose body is not JSON: {response.content[:200]!r}")
        if not isinstance(body, dict) or set(body) != {"error"} or not isinstance(body["error"], dict) \
                or set(body["error"]) != {"code", "message"}:
            raise AssertionError(f'a {status} whose body is not {{"error": {{"code", "message"}}}}: {body!r}')
        code, message = body["error"]["code"], body["error"]["message"]
        if code not in CODES_BY_STATUS.get(status, set()):
            raise AssertionError(f"a {status} with the code {code!r}, which is not the code of a {status}")
        if not isinstance(message, str) or not message.strip():
            raise AssertionError(f"a {status} ({code}) without a message: {message!r}")
        if code in ("invalid_field", "unknown_field") and not re.match(r"\A.*?: \S", message, re.S):
            raise AssertionError(f"a 400 ({code}) whose message does not start with the field: {message!r}")
        if status == 401:
            challenge = (response.headers.get("www-authenticate") or [""])[0]
            # Several challenges may be offered (the status page also offers Basic, RFC 9110 §11.6.1).
            if not re.search(r"(^|,\s*)bearer\b", challenge.lower()):
                raise AssertionError(f"a 401 without a Bearer WWW-Authenticate challenge: {challenge!r}")
        if status == 429:
            retry = (response.headers.get("retry-after") or [""])[0]
            if not retry.isdigit() or int(retry) < 1:
                raise AssertionError(f"a 429 without a Retry-After of whole seconds: {retry!r}")
        return True

    @schemathesis.check
    @counted
    def credential_accepted(ctx, response, case):
        """A credential the run holds as valid for this operation is not answered 401."""
        kind = SENT_WITH.get(case.id, (None,))[0]
        if response.status_code == 401 and kind is not None:
            raise AssertionError(f"a valid {kind} was answered 401: {response.content[:200]!r}")
        return True

    @schemathesis.check
    def stateful_links(ctx, response, case):
        """Never fails: records which step of a stateful sequence followed which, for the summary."""
        if case.meta and case.meta.phase.name == TestPhase.STATEFUL:
            try:
                parent = ctx.internals.find_parent(case_id=case.id)
                answer = parent and ctx.internals.find_response(case_id=parent.id)
            except AttributeError:  # Internals of schemathesis 4.32; the summary can do without.
                parent = answer = None
            if parent is not None and answer is not None:
                TALLY.link(parent.operation.label, answer.status_code, case.operation.label, response.status_code)
        return True

    @schemathesis.check
    @counted
    def answers_match_requests(ctx, response, case):
        """A 2xx names what the request gave: the registered device id and the token's user, the
        updated device, a message's recipients; a fetched message is one of the device's user."""
        label, status = case.operation.label, response.status_code
        if not 200 <= status < 300 or str(case.method).upper() != str(case.operation.method).upper():
            return None
        try:
            body = json.loads(response.content)
        except ValueError:
            return None
        sent = case.body if isinstance(case.body, dict) else {}
        token = (case.headers or {}).get("Authorization", "")[len("Bearer "):]
        path = sent_path_parameters(case, response.request.url)
        if label == "POST /v1/devices":
            device = body["device"]
            if device["deviceId"] != sent.get("deviceId"):
                raise AssertionError(f"registered device {sent.get('deviceId')!r}, the answer says {device['deviceId']!r}")
            user = WORLD.user_of_token.get(token)
            if user is not None and device["userId"] != user:
                raise AssertionError(f"registered for user {user!r} (the token's sub), the answer says {device['userId']!r}")
        elif label == "PUT /v1/devices/{deviceId}" and body.get("deviceId") != path.get("deviceId"):
            raise AssertionError(f"updated device {path.get('deviceId')!r}, the answer says {body.get('deviceId')!r}")
        elif label == "POST /v1/messages":
            recipients = sent.get("recipients") if isinstance(sent.get("recipients"), dict) else {}
            if recipients.get("users") and not recipients.get("devices"):
                given, answered = set(recipients["users"]), {p["userId"] for p in body["positions"]}
                if given != answered:
                    raise AssertionError(f"posted for users {sorted(given)!r}, the answer has positions for {sorted(answered)!r}")
        elif label == "GET /v1/messages/{messageId}":
            with WORLD.lock:
                owner = next((user for user, credential in WORLD.devices.values() if credential == token), None)
                known = WORLD.messages.get(path.get("messageId"))
            if owner is not None and body.get("userId") != owner:
                raise AssertionError(f"a device of {owner!r} fetched a message of {body.get('userId')!r}")
            if known is not None and body.get("userId") not in known[0]:
                raise AssertionError(f"message {path.get('messageId')} was posted for {known[0]!r}, "
                                     f"yet a device of {body.get('userId')!r} fetched it")
        return True

    @schemathesis.check
    @counted
    def integral_numbers_accepted(ctx, response, case):
        """A JSON number with no fractional part, such as 45.0, is an integer for JSON Schema
        (2020-12, section 6.1.1: "integer" matches any number with a zero fractional part), which
        OpenAPI 3.1 uses: a field of `type: integer` must not refuse it as "not an integer"."""
        if response.status_code != 400:
            return None
        try:
            message = json.loads(response.content)["error"]["message"]
        except (ValueError, KeyError, TypeError):
            return None
        if not isinstance(message, str) or not message.endswith(": must be an integer, not a number"):
            return None
        value = case.body
        for key in message[:-len(": must be an integer, not a number")].split("."):
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, float) and value.is_integer():
            raise AssertionError(f"{message!r} for {value!r}, an integer by the document's JSON Schema")
        return True

    @schemathesis.check
    @counted
    def known_ids_found(ctx, response, case):
        """What the run created and still exists is found with a credential that reaches it."""
        why = SENT_WITH.get(case.id, (None, None))[1]
        if why and response.status_code in (403, 404):
            raise AssertionError(f"{why}, yet the answer is {response.status_code}: {response.content[:200]!r}")
        return True


def start_server(binary, work):
    server = Node(binary, work, secret=SECRET, admin=ADMIN, apps=(APP,), team=TEAM,
                  database=os.path.join(work, "beckon.sqlite"), env=dict(
                      NO_RATE_LIMITS, BECKON_HTTP_HOST="127.0.0.1",
                      # The drop-ins serve the app: gorush with its API key, Matrix for one app id.
                      BECKON_APPS_CHAT_GORUSH="key", BECKON_APPS_CHAT_MATRIX_APP_IDS="org.example.chat.ios",
                      # XEP-0357 registrations are served; the component's XMPP server is a closed
                      # port (it retries in the background; no publish is fuzzed here).
                      BECKON_XMPP_HOST="127.0.0.1", BECKON_XMPP_PORT=str(free_port()), BECKON_XMPP_APP=APP,
                      BECKON_XMPP_COMPONENT_JID="push.localhost", BECKON_XMPP_COMPONENT_SECRET="fuzz-component-secret-0123"))
    try:
        server.start()
    except RuntimeError:
        sys.exit(f"fuzz-api: the server did not start (see {work}/server.log)")
    return server


def run_schemathesis(base, seed, per_operation, phases, report, extra, checks):
    from schemathesis.cli import schemathesis as cli
    config = os.path.join(os.path.dirname(report), "schemathesis.toml")
    with open(config, "w") as file:
        # Schemathesis's state between runs (failures to replay) stays with this run, not in the tree.
        file.write(f'[cache]\ndirectory = "{os.path.join(os.path.dirname(report), "schemathesis-cache")}"\n\n')
        # Without this, the fuzzing phase draws path parameters from ids seen in earlier answers
        # only, and Hypothesis runs out of new cases for DELETE /v1/devices/{id} after a handful;
        # World.substitute puts known ids in half of the cases instead.
        file.write("[phases.fuzzing.extra-data-sources]\nresponses = false\n")
        # Operations whose only input is a free string in the path (or nothing): a negative case
        # can only break the credential, so in the fuzzing phase nine in ten would be a 401. The
        # coverage phase still sends each of them without a credential and with a broken one.
        file.write('\n[[operations]]\ninclude-operation-id-regex = "^(getMessage|sync|revokeAPIKey|deleteDevice)$"\n'
                   '[operations.phases.fuzzing.generation]\nmode = "positive"\n')
    arguments = ["--config-file", config, "run", DOCUMENT, "--url", base, "--checks", ",".join(checks), "--phases", phases,
                 "--max-examples", str(per_operation), "--seed", str(seed),
                 # One request at a time: World's bookkeeping (which credential is current, what
                 # exists) is exact only if no other request changes the server meanwhile.
                 "--workers", "1",
                 "--generation-database", "none", "--request-timeout", "10", "--continue-on-failure",
                 "--suppress-health-check", "all", "--no-color", "--output-sanitize", "false",
                 "--report", "junit", "--report-junit-path", report] + extra
    try:
        cli.main(args=arguments, standalone_mode=False)
        return 0
    except SystemExit as exit:
        return exit.code or 0


def main():
    global WORLD
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--cases", type=int, default=1200, help="least number of requests in all (default 1200)")
    parser.add_argument("--per-operation", type=int, default=None,
                        help="schemathesis's --max-examples in each round (default: cases / 40, from 50 to 250)")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--max-rounds", type=int, default=100)
    parser.add_argument("--only", action="append", default=[], metavar="OPERATION_ID",
                        help="fuzz only this operation (repeatable; to reproduce a failure)")
    parser.add_argument("--also-check", action="append", default=[], metavar="CHECK",
                        help="another schemathesis check to run (repeatable), e.g. use_after_free")
    parser.add_argument("--phases", help="schemathesis phases of every round (default: all in the first, then "
                                             "fuzzing,stateful)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the temporary directory (database, server log, requests.jsonl) even when all passed")
    parser.add_argument("--details", action="store_true", help="also print the commonest error answers per operation")
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    # Each round runs the stateful phase anew (a few dozen sequences, however large
    # --max-examples is), so a long run is better several rounds than one deep one.
    per_operation = args.per_operation or min(250, max(50, args.cases // 40))
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    started = time.time()

    work = tempfile.mkdtemp(prefix="beckon-fuzz.")
    server = start_server(binary, work)
    base = server.base
    log(f"beckon serve on {base}, database and log in {work}; seed {seed}")
    WORLD = World(base, seed)
    TALLY.journal = open(os.path.join(work, "requests.jsonl"), "w")
    try:
        WORLD.setup()
        install_hooks()
        codes, rounds = [], 0
        while sum(TALLY.cases.values()) < args.cases and rounds < args.max_rounds:
            phases = args.phases or ("examples,coverage,fuzzing,stateful" if rounds == 0 else "fuzzing,stateful")
            if args.only and not args.phases:
                # The links of a few operations may lead nowhere among them; --phases stateful asks.
                phases = phases.replace(",stateful", "")
            log(f"round {rounds + 1}: {phases}, seed {seed + rounds}, {sum(TALLY.cases.values())} cases so far")
            codes.append(run_schemathesis(base, seed + rounds, per_operation, phases,
                                          os.path.join(work, f"junit-{rounds + 1}.xml"),
                                          [option for name in args.only for option in ("--include-operation-id", name)],
                                          CHECKS + args.also_check))
            rounds += 1
            if not server.alive():
                break
    finally:
        alive = server.alive()
        server.stop()
    elapsed = time.time() - started

    operations = sorted(TALLY.cases, key=lambda label: (label.split(" ", 1)[1], label))
    width = max(len(label) for label in operations) if operations else 10
    print()
    print(f"{'operation':<{width}}  {'cases':>6}  {'non-401':>7}  {'2xx':>5}  statuses; credentials sent")
    for label in operations:
        statuses = " ".join(f"{s}:{n}" for s, n in sorted(TALLY.statuses[label].items()))
        kinds = " ".join(f"{k}:{n}" for k, n in sorted(TALLY.kinds[label].items()))
        print(f"{label:<{width}}  {TALLY.cases[label]:>6}  {TALLY.reached[label]:>7}  {TALLY.succeeded[label]:>5}  "
              f"{statuses}; {kinds}")
    total = sum(TALLY.cases.values())
    print(f"{'total':<{width}}  {total:>6}  {sum(TALLY.reached.values()):>7}  {sum(TALLY.succeeded.values()):>5}")
    print()
    if args.details:
        for label in operations:
            print(f"{label}: " + " ".join(f"{p}:{n}" for p, n in sorted(TALLY.phases[label].items())))
            for text, count in TALLY.errors[label].most_common(12):
                print(f"    {count:>6}  {text}")
    if TALLY.links:
        print("stateful sequences, step after step (answers of the second step):")
        for (parent, parent_status, child), statuses in sorted(TALLY.links.items()):
            answers = " ".join(f"{s}:{n}" for s, n in sorted(statuses.items()))
            print(f"    {parent} {parent_status} -> {child}: {answers}")

    levels, notable, broken = server_log(work)
    print("server log: " + ", ".join(f"{n} {level}" for level, n in sorted(levels.items()))
          + (f", {len(broken)} line(s) broken by a request's data" if broken else ""))
    for line in notable:
        print("    " + line)
    reported = junit_failures(work)
    if reported:
        print("failures schemathesis reported (the first of each kind per operation and round; details above):")
        for (label, failure), found in sorted(reported.items()):
            counted = TALLY.failures.get(failure.rsplit("`", 2)[1] if failure.count("`") >= 2 else "", {}).get(label)
            print(f"    {label}: {failure} (in {found} round(s)" + (f"; {counted} failing cases)" if counted else ")"))
    problems = []
    failed_rounds = [n + 1 for n, code in enumerate(codes) if code != 0]
    if failed_rounds:
        problems.append(f"schemathesis reported failures in round(s) {failed_rounds} (details above; "
                        f"JUnit reports in {work})")
    if broken:
        problems.append(f"{len(broken)} line(s) of the server log do not start with a time: a request's data "
                        f"with a newline was written as it came, e.g. {broken[0]}")
    if not alive:
        problems.append(f"the server exited during the run (code {server.returncode}; see {work}/server.log)")
    unreached = [label for label in operations if TALLY.reached[label] == 0 and label != UNDOCUMENTED]
    documented = document_operations()
    if not args.only:
        unreached += sorted(documented - set(operations))
    if unreached:
        problems.append("never answered other than 401 (or never tested): " + ", ".join(unreached))
    log(f"{total} cases in {rounds} round(s), {elapsed:.0f} s, seed {seed}")
    if problems:
        for problem in problems:
            log("FAILED: " + problem)
        sys.exit(1)
    if args.keep:
        log(f"kept {work} (server.log, requests.jsonl: every request and answer)")
    else:
        shutil.rmtree(work, ignore_errors=True)
    log("no check failed; every operation was reached")


def junit_failures(work):
    """{(operation, "- STxxx what failed"): rounds it was reported in}, from the JUnit reports."""
    import xml.etree.ElementTree as ElementTree
    found = collections.Counter()
    for name in sorted(os.listdir(work)):
        if name.startswith("junit-") and name.endswith(".xml"):
            for testcase in ElementTree.parse(os.path.join(work, name)).getroot().iter("testcase"):
                kinds = set()
                for problem in list(testcase.iter("failure")) + list(testcase.iter("error")):
                    lines = [line.strip() for line in (problem.text or "").splitlines()]
                    kinds.update(line for line in lines if line.startswith("- "))
                    if not any(line.startswith("- ") for line in lines):
                        kinds.add("- " + next((line for line in lines if line), problem.get("message") or "error"))
                for kind in kinds:
                    found[(testcase.get("name"), kind)] += 1
    return found


def server_log(work):
    """Lines of the server's log by level; the first few distinct ones at warning or above; and
    the lines that do not start with a time, which a request's data broke off another line (a
    newline in an id written as it came lets a client forge log lines)."""
    levels, notable, seen, broken = collections.Counter(), [], set(), []
    with open(os.path.join(work, "server.log"), errors="replace") as file:
        previous = ""
        for line in file:
            parts = line.split(" ", 3)
            if len(parts) < 4 or not re.match(r"\d{4}-\d\d-\d\dT", parts[0]):
                broken.append(f"{previous.rstrip()[:150]!r} then {line.rstrip()[:150]!r}")
                continue
            previous = line
            levels[parts[1]] += 1
            if parts[1] in ("warning", "error", "critical"):
                shape = re.sub(r"\S*=\S*|\d+", "…", parts[3])[:120]
                if shape not in seen and len(notable) < 8:
                    seen.add(shape)
                    notable.append(line.rstrip()[:300])
    return levels, notable, broken


def document_operations():
    """`METHOD /path` of every operation in openapi.yaml."""
    import yaml
    with open(DOCUMENT) as file:
        document = yaml.safe_load(file)
    return {f"{method.upper()} {path}" for path, item in document["paths"].items() for method in item
            if method in ("get", "put", "post", "delete", "patch", "head", "options")}


if __name__ == "__main__":
    main()
