"""What an API fuzzing run knows about the server's state: the credentials it holds and the ids
its cases created, updated from every answer (`observe`) and read before every request
(`prepare`), which gives each operation the credential its `security` names and steers half of
the cases to what exists, so that they get past the checks of ownership to the code behind."""
import json, os, random, threading, urllib.parse

from beckonlib.httpjson import request, user_token
from schemathesis.core.parameters import ParameterLocation
from schemathesis.generation import GenerationMode
from schemathesis.generation.meta import TestPhase

# The team id is the one of the document's pn-param example, so that example registers.
APP, BUNDLE, TEAM = "chat", "com.example.chat", "ABCDE12345"
SECRET = "fuzz-user-token-secret-0123456789abcdef"
ADMIN = "fuzz-admin-token-0123456789abcdef0123456789"
USERS = ("fuzz-ana", "fuzz-ben")


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
