"""The checks API fuzzing adds to schemathesis's own, and the hooks that feed them: each request
goes with the credential World chooses, each answer updates World and the tally.

    error_form                every 4xx/5xx is `{"error": {"code", "message"}}` and nothing else,
                              with a code that fits its status (CODES_BY_STATUS)
    credential_accepted       a credential the run holds as valid is never answered 401
    known_ids_found           what the run created and still exists is not 403/404 to a
                              credential that reaches it
    answers_match_requests    a 2xx names what was sent
    integral_numbers_accepted 45.0 is an integer for the document's JSON Schema
    stateful_links            never fails: which step of a stateful sequence followed which

`WORLD` is set by the run before the hooks are installed; `TALLY` counts per operation.
"""
import collections, json, re, threading

import schemathesis
from schemathesis.generation.meta import TestPhase

from api_fuzz.world import sent_path_parameters

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
