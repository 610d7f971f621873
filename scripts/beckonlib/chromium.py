#!/usr/bin/env python3
"""Loads one page in headless Chromium over the DevTools protocol: checks the main document's
HTTP status, evaluates a JavaScript expression in it, saves a PNG screenshot, and collects the
page's console errors and uncaught exceptions.

    scripts/beckonlib/chromium.py URL [--header 'Authorization: Bearer X'] [--eval 'JS expression']
        [--screenshot out.png] [--width 1280] [--height 800] [--full-page]
        [--wait-for 'CSS selector'] [--timeout 30] [--expect-status 200]
        [--fail-on-console-error]

Prints the expression's value as JSON on stdout (nothing without --eval) and everything else on
stderr; exits 1 on any failure (status, timeout, exception in the expression, console errors with
--fail-on-console-error), 2 on bad usage.

As a library (see load() and Browser): from another script in scripts/,

    from beckonlib import chromium
    result = chromium.load(url, headers={"Authorization": "Bearer " + token},
                           expression="document.querySelectorAll('tr').length",
                           screenshot="status.png", full_page=True)

Needs only the Debian package `chromium` and the standard library: the protocol runs over
--remote-debugging-pipe (fds 3 and 4, NUL-terminated JSON), so there is no port to race for and
no WebSocket client to install. Chromium's binary is $CHROMIUM, else the first of chromium,
chromium-browser, google-chrome on PATH.

The page may only reach its own origin: every request to another origin is failed before it leaves
the browser (and listed in Result.blocked), so the bearer header, which Chromium adds to every
request, goes nowhere else. Chromium's own background lookups are answered "not found" without
DNS (see _resolver_rules): pointed at a loopback URL, a run sends nothing off the machine.
"""
import argparse, base64, dataclasses, fcntl, ipaddress, json, os, select, shutil, signal, socket, sys, tempfile, time
import urllib.parse

LAUNCH_TIMEOUT = 20
MAX_SCREENSHOT_HEIGHT = 16384  # Chromium's largest compositor texture; taller captures come back blank
FLAGS = [
    "--headless=new",
    "--remote-debugging-pipe",
    # Containers: /dev/shm is often 64 MB (Docker's default) and Chromium crashes filling it; there is
    # no GPU, and the software fallback only adds log noise.
    "--disable-dev-shm-usage",
    "--disable-gpu",
    # Nothing should talk to the network but the page itself: no updates, sync, metrics, crash uploads.
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--disable-breakpad",
    "--disable-crash-reporter",
    "--no-pings",
    "--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication,"
    "CertificateTransparencyComponentUpdater,InterestFeedContentSuggestions",
    "--disable-field-trial-config",
    "--metrics-recording-only",
    "--no-first-run",
    "--no-default-browser-check",
    "--password-store=basic",
    # Screenshots that look the same on every machine: no scrollbars, sRGB, no sound.
    "--hide-scrollbars",
    "--force-color-profile=srgb",
    "--mute-audio",
]


class ChromiumError(Exception):
    """Chromium could not be started, died, timed out, or the protocol answered an error."""


class ChromiumTimeout(ChromiumError):
    pass


class PageError(ChromiumError):
    """The page loaded but is wrong: unexpected HTTP status, an exception in the evaluated
    expression, or console errors when they were asked to fail the run."""

    def __init__(self, message, status=None, console_errors=()):
        super().__init__(message)
        self.status = status
        self.console_errors = list(console_errors)


@dataclasses.dataclass
class Result:
    url: str
    status: int                 # HTTP status of the main document (after redirects)
    value: object = None        # the expression's value, as JSON would carry it
    screenshot: str = None      # path of the PNG, if one was asked for
    screenshot_size: tuple = None   # (width, height) in pixels
    console_errors: list = dataclasses.field(default_factory=list)
    blocked: list = dataclasses.field(default_factory=list)    # requests to other origins, failed
    seconds: float = 0.0        # Chromium start (or page open) to the end of the last step


def find_binary():
    if os.environ.get("CHROMIUM"):
        if not shutil.which(os.environ["CHROMIUM"]):
            raise ChromiumError(f"$CHROMIUM is {os.environ['CHROMIUM']!r}, which is not an executable")
        return shutil.which(os.environ["CHROMIUM"])
    for name in ["chromium", "chromium-browser", "google-chrome"]:
        if shutil.which(name):
            return shutil.which(name)
    raise ChromiumError("no Chromium found: install the Debian package `chromium` or set $CHROMIUM")


class Browser:
    """One headless Chromium with a throwaway profile; a context manager that always kills it
    (its whole process group) and removes the profile, whatever happened."""

    def __init__(self, binary=None, extra_flags=(), launch_timeout=LAUNCH_TIMEOUT,
                 hosts=("127.0.0.1", "localhost")):
        """hosts: the only hosts Chromium can connect to (see _resolver_rules)."""
        self.binary = binary or find_binary()
        self.hosts = [host for host in hosts if host]
        self.extra_flags = list(extra_flags)
        self.launch_timeout = launch_timeout
        self.pid = None
        self.profile = None
        self._next_id = 0
        self._buffer = bytearray()
        self._scanned = 0  # bytes of _buffer known to hold no NUL: screenshots come in many reads
        self._replies = {}
        self._handlers = {}  # sessionId -> callable(method, params), for pages
        self.started = None

    # -- process --------------------------------------------------------------------------------

    def start(self):
        self.started = time.monotonic()
        self.profile = tempfile.mkdtemp(prefix="beckon-chromium-")
        # Our ends and Chromium's ends of the two pipes. Chromium's ends are moved to fds >= 10
        # first so that placing them at 3 and 4 in the child can never overwrite one another.
        to_chromium_read, self._write_fd = os.pipe()
        self._read_fd, from_chromium_write = os.pipe()
        child_in = fcntl.fcntl(to_chromium_read, fcntl.F_DUPFD_CLOEXEC, 10)
        child_out = fcntl.fcntl(from_chromium_write, fcntl.F_DUPFD_CLOEXEC, 10)
        for fd in (to_chromium_read, from_chromium_write):
            os.close(fd)
        resolver = ", ".join(_resolver_rules(self.hosts))
        flags = FLAGS + [f"--user-data-dir={self.profile}", f"--host-resolver-rules={resolver}"] + self.extra_flags
        if os.geteuid() == 0:
            flags.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox
        # HOME and XDG dirs point into the profile too: Chromium otherwise creates ~/.pki/nssdb
        # and ~/.config/chromium/Crash Reports on the machine it runs on.
        env = dict(os.environ, HOME=self.profile, XDG_CONFIG_HOME=self.profile,
                   XDG_CACHE_HOME=self.profile)
        self.log_path = os.path.join(self.profile, "chromium.log")
        try:
            # posix_spawn rather than subprocess: subprocess cannot put arbitrary fds at 3 and 4.
            # setsid makes Chromium a process group leader so that its renderer, GPU and
            # crashpad children are killed with it.
            self.pid = os.posix_spawn(self.binary, [self.binary, *flags, "about:blank"], env,
                file_actions=[
                    (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                    (os.POSIX_SPAWN_OPEN, 1, self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600),
                    (os.POSIX_SPAWN_DUP2, 1, 2),
                    (os.POSIX_SPAWN_DUP2, child_in, 3),
                    (os.POSIX_SPAWN_DUP2, child_out, 4),
                ], setsid=True)
        finally:
            os.close(child_in)
            os.close(child_out)
        # The first answer proves the pipe works; the timeout catches a Chromium that hangs.
        try:
            self.version = self.call("Browser.getVersion", timeout=self.launch_timeout,
                                     what="Chromium to start")["product"]
        except ChromiumTimeout as error:
            raise ChromiumTimeout(f"{error}; its log ends:\n{self.log_tail()}") from None
        return self

    def close(self):
        if self.pid is not None:
            try:
                self.send("Browser.close")  # a clean exit flushes nothing we need, but is quieter
            except OSError:
                pass
            if not self._wait_exit(3):
                self._kill_group(signal.SIGTERM)
                if not self._wait_exit(3):
                    self._kill_group(signal.SIGKILL)
                    self._wait_exit(5)
            # Children (renderers, crashpad) can outlive the browser process by a moment.
            self._kill_group(signal.SIGKILL)
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
            self.pid = None
        for fd in ("_read_fd", "_write_fd"):
            if getattr(self, fd, None) is not None:
                os.close(getattr(self, fd))
                setattr(self, fd, None)
        if self.profile:
            shutil.rmtree(self.profile, ignore_errors=True)
            self.profile = None

    def _kill_group(self, sig):
        try:
            os.killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def _wait_exit(self, seconds):
        """True once the browser process has exited. It is left a zombie (WNOWAIT) so that its
        pid, which names its process group, cannot be reused before close() kills the group."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                if os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT):
                    return True
            except ChildProcessError:
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)

    def log_tail(self, lines=15):
        """The end of Chromium's stderr, without the D-Bus complaints it makes in every container
        and the Debian wrapper's own (harmless) shell error when /dev/shm is mounted twice."""
        try:
            with open(self.log_path, errors="replace") as file:
                kept = [line for line in file if "dbus" not in line and "unexpected operator" not in line]
            return "".join(kept[-lines:]) or "(nothing)"
        except (OSError, AttributeError):
            return "(no log)"

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc):
        self.close()

    # -- protocol -------------------------------------------------------------------------------

    def send(self, method, params=None, session=None):
        """Sends a command without waiting for its answer; returns its id."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._write_fd, data):]
        return self._next_id

    def call(self, method, params=None, session=None, timeout=30, what=None):
        """Sends a command and returns its result; raises ChromiumError on an error answer."""
        ident = self.send(method, params, session)
        deadline = time.monotonic() + timeout
        while ident not in self._replies:
            self._pump(deadline, what or method)
        reply = self._replies.pop(ident)
        if "error" in reply:
            raise ChromiumError(f"{method}: {reply['error'].get('message')} {reply['error'].get('data', '')}".strip())
        return reply.get("result", {})

    def _pump(self, deadline, what):
        """Reads at least one message (waiting until the deadline) and dispatches it."""
        while True:
            end = self._buffer.find(b"\0", self._scanned)
            if end >= 0:
                message = json.loads(self._buffer[:end])
                del self._buffer[:end + 1]
                self._scanned = 0
                break
            self._scanned = len(self._buffer)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ChromiumTimeout(f"timed out waiting for {what}")
            if not select.select([self._read_fd], [], [], remaining)[0]:
                continue
            chunk = os.read(self._read_fd, 1 << 20)
            if not chunk:
                self._wait_exit(2)
                raise ChromiumError(f"Chromium exited while waiting for {what}; its log ends:\n{self.log_tail()}")
            self._buffer += chunk
        if "id" in message:
            self._replies[message["id"]] = message
            return
        session, method, params = message.get("sessionId"), message["method"], message.get("params", {})
        handler = self._handlers.get(session)
        if handler:
            handler(method, params)

    def idle(self, seconds):
        """Dispatches whatever arrives during the next few moments."""
        try:
            self.wait_until(lambda: False, time.monotonic() + seconds, "nothing")
        except ChromiumTimeout:
            pass

    def wait_until(self, predicate, deadline, what):
        """Reads and dispatches messages until predicate() is true."""
        while not predicate():
            self._pump(deadline, what)

    def new_page(self, width=1280, height=800, headers=None, timeout=30):
        return Page(self, width, height, headers, timeout)


class Page:
    """One tab. Everything it hears (document status, console errors, requests) is recorded by
    _on_event as the messages arrive, whatever command we happen to be waiting on."""

    def __init__(self, browser, width, height, headers, timeout):
        self.browser, self.width, self.height, self.timeout = browser, width, height, timeout
        self.origin = None
        self.console_errors = []
        self.blocked = []
        self._statuses = {}     # loaderId -> HTTP status of the document it loaded
        self._loaded = set()    # loaderIds whose document fired its load event
        target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        browser._handlers[self.session] = self._on_event
        for domain in ("Page", "Network", "Runtime", "Log"):
            self.call(f"{domain}.enable")
        # Lifecycle events name their navigation (loaderId), unlike Page.loadEventFired, so a late
        # load event of the initial about:blank cannot pass for the page's.
        self.call("Page.setLifecycleEventsEnabled", {"enabled": True})
        if headers:
            self.call("Network.setExtraHTTPHeaders", {"headers": dict(headers)})
        self.call("Fetch.enable", {"patterns": [{"urlPattern": "*", "requestStage": "Request"}]})
        self.set_viewport(width, height)

    def call(self, method, params=None, timeout=None, what=None):
        return self.browser.call(method, params, self.session, self.timeout if timeout is None else timeout, what)

    def set_viewport(self, width, height):
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def _on_event(self, method, params):
        if method == "Fetch.requestPaused":
            # Replies are sent without waiting: we are inside the read loop here.
            url = params["request"]["url"]
            if self.origin is None or _origin(url) == self.origin:
                self.browser.send("Fetch.continueRequest", {"requestId": params["requestId"]}, self.session)
            else:
                self.blocked.append(url)
                self.browser.send("Fetch.failRequest", {"requestId": params["requestId"],
                                                        "errorReason": "BlockedByClient"}, self.session)
        elif method == "Network.responseReceived" and params.get("type") == "Document":
            self._statuses[params["loaderId"]] = params["response"]["status"]
        elif method == "Page.lifecycleEvent" and params["name"] == "load":
            self._loaded.add(params["loaderId"])
        elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            text = " ".join(str(arg.get("value", arg.get("description", arg.get("type"))))
                            for arg in params.get("args", []))
            self.console_errors.append(f"console.{params['type']}: {text}")
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            description = details.get("exception", {}).get("description") or details.get("text")
            self.console_errors.append(f"uncaught exception: {description} "
                                       f"({details.get('url', '')}:{details.get('lineNumber', 0) + 1})")
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            # e.g. "Failed to load resource: the server responded with a status of 404" for a script.
            # Not for the favicon Chromium fetches on its own: a page that has none is not broken.
            entry = params["entry"]
            if urllib.parse.urlsplit(entry.get("url", "")).path == "/favicon.ico":
                return
            self.console_errors.append(f"{entry['source']}: {entry['text']} {entry.get('url', '')}".strip())

    def goto(self, url, wait_for=None, deadline=None):
        """Navigates, waits for the load event (and the selector), returns the document's status."""
        deadline = deadline or time.monotonic() + self.timeout
        self.origin = _origin(url)
        navigation = self.call("Page.navigate", {"url": url}, max(0, deadline - time.monotonic()),
                               f"the response of {url}")
        loader = navigation.get("loaderId")
        if navigation.get("errorText"):
            # Chromium also says net::ERR_HTTP_RESPONSE_CODE_FAILURE for an HTTP error with an
            # empty body; then there is a status to report. Without one it is a network error.
            self.browser.wait_until(lambda: loader in self._statuses or loader in self._loaded,
                                    deadline, f"the error page of {url}")
            if loader not in self._statuses:
                blocked = f" (blocked: {', '.join(self.blocked)})" if self.blocked else ""
                raise PageError(f"navigation to {url} failed: {navigation['errorText']}{blocked}")
        self.browser.wait_until(lambda: loader in self._loaded, deadline, f"the load event of {url}")
        status = self._statuses.get(loader)
        if status is None:
            raise PageError(f"no HTTP response for the main document of {url}")
        if wait_for:
            self.wait_for(wait_for, deadline)
        return status

    def wait_for(self, selector, deadline):
        check = f"document.querySelector({json.dumps(selector)}) !== null"
        while not self.evaluate(check):
            if time.monotonic() > deadline:
                raise PageError(f"timed out waiting for an element matching {selector!r}")
            # Poll rather than sleep: requests the page makes meanwhile wait for our Fetch answers.
            self.browser.idle(0.1)

    def evaluate(self, expression):
        """The expression's value (promises awaited) as JSON would carry it; raises PageError on
        an exception. Values JSON cannot carry (DOM nodes, functions) come back as None."""
        answer = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True, "userGesture": True})
        if "exceptionDetails" in answer:
            details = answer["exceptionDetails"]
            raise PageError("the expression threw: " + (details.get("exception", {}).get("description")
                                                       or details.get("text", "?")))
        return answer["result"].get("value")

    def screenshot(self, path, full_page=False):
        """Saves a PNG of the viewport, or of the whole document; returns (width, height)."""
        width, height = self.width, self.height
        if full_page:
            # The document's height at the viewport's width, then a viewport that tall: unlike
            # captureBeyondViewport, this lays out fixed and 100vh elements the way the page expects.
            measured = self.evaluate("Math.ceil(Math.max(document.documentElement.scrollHeight, "
                                     "document.body ? document.body.scrollHeight : 0))")
            height = max(height, min(int(measured or 0), MAX_SCREENSHOT_HEIGHT))
            if measured and measured > MAX_SCREENSHOT_HEIGHT:
                print(f"chromium: page is {measured}px tall; screenshot cut at {height}px", file=sys.stderr)
            self.set_viewport(width, height)
        try:
            data = self.call("Page.captureScreenshot", {"format": "png", "fromSurface": True})["data"]
        finally:
            if full_page:
                self.set_viewport(self.width, self.height)
        with open(path, "wb") as file:
            file.write(base64.b64decode(data))
        return width, height


def _resolver_rules(hosts):
    """Chromium's host resolver rules that make it never send a DNS query.

    Despite the flags in FLAGS, Chromium still looks up update.googleapis.com, clients2.google.com
    and accounts.google.com when it starts, and after a page fails to resolve its "DNS probe" asks
    8.8.8.8 about google.com. So every name is "not found" without asking anyone, except the
    page's own host: an IP address or localhost passes as it is (neither needs DNS), and a name is
    looked up here, once, and handed to Chromium as an address."""
    rules = []
    for host in hosts:
        literal = host == "localhost" or host.endswith(".localhost")
        try:
            ipaddress.ip_address(host.strip("[]"))
            literal = True
        except ValueError:
            pass
        if literal:
            rules.append(f"EXCLUDE {host}")
            continue
        try:
            address = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)[0][4][0]
        except socket.gaierror as error:
            raise ChromiumError(f"cannot resolve {host}: {error}")
        rules.append(f"MAP {host} {address if ':' not in address else '[' + address + ']'}")
    return rules + ["MAP * ~NOTFOUND"]


def _origin(url):
    parts = urllib.parse.urlsplit(url)
    return (parts.scheme, parts.hostname, parts.port)


def load(url, headers=None, expression=None, screenshot=None, width=1280, height=800,
         full_page=False, wait_for=None, timeout=30, expect_status=200,
         fail_on_console_error=False, binary=None):
    """Starts Chromium, loads url, and returns a Result; always stops Chromium.

    Raises PageError (with .status and .console_errors) when the main document's status is not
    expect_status, the expression throws, or fail_on_console_error and the page logged errors;
    ChromiumError when Chromium fails, or a step (load and wait_for together, the expression, the
    screenshot) takes longer than timeout seconds; Chromium's start has its own LAUNCH_TIMEOUT."""
    with Browser(binary, hosts=[urllib.parse.urlsplit(url).hostname]) as browser:
        page = browser.new_page(width, height, headers, timeout)
        deadline = time.monotonic() + timeout
        status = page.goto(url, deadline=deadline)
        if status != expect_status:
            raise PageError(f"{url} answered HTTP {status}, expected {expect_status}",
                            status, page.console_errors)
        if wait_for:
            page.wait_for(wait_for, deadline)
        result = Result(url, status, console_errors=page.console_errors, blocked=page.blocked)
        if expression is not None:
            result.value = page.evaluate(expression)
        if screenshot:
            result.screenshot = screenshot
            result.screenshot_size = page.screenshot(screenshot, full_page)
        # Errors logged by the expression or late scripts arrive asynchronously: a last short read.
        browser.idle(0.05)
        result.seconds = time.monotonic() - browser.started
        if fail_on_console_error and page.console_errors:
            raise PageError(f"{url} logged {len(page.console_errors)} console error(s)",
                            status, page.console_errors)
        return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url")
    parser.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'",
                        help="an HTTP header for every request of the page (repeatable)")
    parser.add_argument("--eval", dest="expression", metavar="JS",
                        help="a JavaScript expression evaluated after load; its value is printed as JSON")
    parser.add_argument("--screenshot", metavar="PNG")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=800, help="viewport height (default 800)")
    parser.add_argument("--full-page", action="store_true", help="screenshot the whole document")
    parser.add_argument("--wait-for", metavar="SELECTOR", help="after load, wait for an element matching it")
    parser.add_argument("--timeout", type=float, default=30,
                        help="seconds for the load and --wait-for, and again for --eval (default 30)")
    parser.add_argument("--expect-status", type=int, default=200)
    parser.add_argument("--fail-on-console-error", action="store_true")
    args = parser.parse_args(argv)
    headers = {}
    for header in args.header:
        name, sep, value = header.partition(":")
        if not sep or not name.strip():
            parser.error(f"--header wants 'Name: value', not {header!r}")
        headers[name.strip()] = value.strip()

    # SIGTERM (a CI job's timeout) must still run the cleanup in Browser.close.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        result = load(args.url, headers, args.expression, args.screenshot, args.width, args.height,
                      args.full_page, args.wait_for, args.timeout, args.expect_status,
                      args.fail_on_console_error)
    except PageError as error:
        for line in error.console_errors:
            print(f"chromium: {line}", file=sys.stderr)
        print(f"chromium: FAIL: {error}", file=sys.stderr)
        return 1
    except ChromiumError as error:
        print(f"chromium: FAIL: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    print(f"chromium: {args.url} -> HTTP {result.status}", file=sys.stderr)
    for line in result.console_errors:
        print(f"chromium: {line}", file=sys.stderr)
    for url in result.blocked:
        print(f"chromium: blocked a request to another origin: {url}", file=sys.stderr)
    if result.screenshot:
        print(f"chromium: screenshot {result.screenshot} ({result.screenshot_size[0]}x{result.screenshot_size[1]})",
              file=sys.stderr)
    print(f"chromium: done in {result.seconds:.2f}s", file=sys.stderr)
    if args.expression is not None:
        print(json.dumps(result.value))
    return 0


if __name__ == "__main__":
    sys.exit(main())
