"""JSON over HTTP to a node or the emulator's control API, a free loopback port, and the user
token an app's backend signs (an HS256 JWT with `aud` = app id and `sub` = user id)."""
import base64, hashlib, hmac, json, socket, time
import urllib.error, urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(base, method, path, body=None, token=None, timeout=10):
    """(status, parsed JSON body); HTTP errors are answers too."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def healthy(base, timeout=5):
    """Whether `GET /health` answers 200 (a refused connection is a no)."""
    try:
        return request(base, "GET", "/health", timeout=timeout)[0] == 200
    except (OSError, ValueError):
        return False


def user_token(secret, app, user, lifetime=600):
    def b64(raw):
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = b64(json.dumps({"aud": app, "sub": user, "exp": int(time.time()) + lifetime}).encode())
    signature = hmac.new(secret.encode(), f"{header}.{claims}".encode(), hashlib.sha256).digest()
    return f"{header}.{claims}.{b64(signature)}"


def wait_until(predicate, seconds, step=0.05):
    """The first true value of `predicate()` within `seconds`, else its last value."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    return predicate()
