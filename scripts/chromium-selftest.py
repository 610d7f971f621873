#!/usr/bin/env python3
"""Proves scripts/beckonlib/chromium.py against a page served here on 127.0.0.1, the way CI will
use it on Beckon's /status: bearer token on every request, DOM facts through --eval, a PNG of the asked
width, a non-200 status as a failure, console errors collected, other origins blocked, and no
Chromium process or profile left behind.

    scripts/chromium-selftest.py [DIR]     (needs the Debian package chromium; about 20 s)

Exits 1 with a message naming the first check that failed. The screenshots are kept in DIR if
given, else in a temporary directory removed on success (kept, and named, on failure).
"""
import http.server, json, os, secrets, shutil, struct, subprocess, sys, tempfile, threading, time, zlib

from beckonlib import chromium
from beckonlib.httpjson import free_port

HERE = os.path.dirname(os.path.abspath(__file__))

TOKEN = secrets.token_urlsafe(24)
BAR = (0xd9, 0x48, 0x0f)  # the chart's bar colour, looked for in the screenshot

STATUS_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Beckon status</title>
<style>body { font-family: sans-serif; margin: 0; } main { padding: 16px; min-height: 1600px; }
  td, th { border: 1px solid #ccc; padding: 4px 8px; } svg { display: block; }</style>
</head><body><main>
<h1>Beckon status</h1>
<svg id="chart" width="400" height="120" viewBox="0 0 400 120" role="img" aria-label="pushes per minute">
  <rect x="10" y="40" width="60" height="80" fill="#d9480f"/>
  <rect x="90" y="20" width="60" height="100" fill="#d9480f"/>
  <rect x="170" y="60" width="60" height="60" fill="#d9480f"/>
  <rect x="250" y="10" width="60" height="110" fill="#d9480f"/>
  <rect x="330" y="80" width="60" height="40" fill="#d9480f"/>
</svg>
<table id="apps"><thead><tr><th>app</th><th>devices</th></tr></thead><tbody>
  <tr><td>com.example.one</td><td>12</td></tr>
  <tr><td>com.example.two</td><td>7</td></tr>
  <tr><td>com.example.three</td><td>1</td></tr>
</tbody></table>
<script src="/app.js"></script>
</main></body></html>"""

# Served behind the token too: proves the header reaches sub-resources, not just the document.
# Adds rows late, so --wait-for is needed to see them.
APP_JS = """setTimeout(() => {
  const body = document.querySelector('#apps tbody');
  for (const [app, n] of [['com.example.four', 3], ['com.example.five', 9]]) {
    body.insertAdjacentHTML('beforeend', `<tr><td>${app}</td><td>${n}</td></tr>`);
  }
  document.querySelector('main').insertAdjacentHTML('beforeend', '<p id="ready">ready</p>');
}, 300);"""

# Logs an error, throws, and loads an image from another origin (another loopback port).
NOISY_PAGE = """<!doctype html><html><head><title>noisy</title></head><body>
<img src="http://localhost:{other}/pixel.png">
<script>console.error("selftest: deliberate console error");
setTimeout(() => {{ throw new Error("selftest: deliberate uncaught exception"); }}, 0);</script>
</body></html>"""

seen = []    # (port, path, authorized) for every request the servers answered


def serve(routes):
    """A loopback HTTP server in a thread: 401 without the bearer token, else routes[path]."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            authorized = self.headers.get("Authorization") == f"Bearer {TOKEN}"
            seen.append((self.server.server_port, self.path, authorized))
            if not authorized:
                self.reply(401, "text/html", "<!doctype html><title>401</title><p>unauthorized</p>",
                           {"WWW-Authenticate": "Bearer"})
            elif self.path in routes:
                self.reply(200, *routes[self.path])
            else:
                self.reply(404, "text/plain", "not found")

        def reply(self, status, kind, body, headers={}):
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", kind + "; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def png_facts(path, probe=None):
    """(width, height) of a PNG after checking every chunk's CRC and that the pixel data is
    complete; with probe=(x, y), also the RGB colour of that pixel."""
    with open(path, "rb") as file:
        data = file.read()
    check(data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} does not start with the PNG signature")
    chunks, at = [], 8
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        crc, = struct.unpack(">I", data[at + 8 + length:at + 12 + length])
        check(zlib.crc32(kind + body) == crc, f"{path}: bad CRC in a {kind!r} chunk")
        chunks.append((kind, body))
        at += 12 + length
    check(chunks[0][0] == b"IHDR" and chunks[-1][0] == b"IEND", f"{path}: IHDR or IEND missing")
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    check(depth == 8 and colour in (2, 6) and not interlace, f"{path}: unexpected PNG format")
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    stride = width * channels
    check(len(raw) == height * (1 + stride), f"{path}: pixel data is {len(raw)} bytes, not {height * (1 + stride)}")
    if probe is None:
        return width, height, None
    # Undo the PNG row filters down to the probed row; the rows above are needed for Up/Average/Paeth.
    previous = bytearray(stride)
    for y in range(probe[1] + 1):
        kind, row = raw[y * (1 + stride)], bytearray(raw[y * (1 + stride) + 1:(y + 1) * (1 + stride)])
        for i in range(stride):
            left = row[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                row[i] = (row[i] + left) & 255
            elif kind == 2:
                row[i] = (row[i] + up) & 255
            elif kind == 3:
                row[i] = (row[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                row[i] = (row[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        previous = row
    x = probe[0] * channels
    return width, height, tuple(previous[x:x + 3])


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def driver(*args):
    """Runs the CLI; (exit code, stdout, stderr)."""
    run = subprocess.run([sys.executable, os.path.join(HERE, "beckonlib", "chromium.py"), *args],
                         capture_output=True, text=True, timeout=120)
    return run.returncode, run.stdout, run.stderr


def leftovers():
    """Our Chromium processes still running, and profiles still on disk."""
    processes = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as file:
                if b"beckon-chromium-" in file.read():
                    processes.append(int(pid))
        except OSError:
            pass
    profiles = [name for name in os.listdir(tempfile.gettempdir()) if name.startswith("beckon-chromium-")]
    return processes, profiles


def main(workdir):
    before = leftovers()
    other = serve({"/pixel.png": ("image/png", "")})
    server = serve({"/status": ("text/html", STATUS_PAGE), "/app.js": ("text/javascript", APP_JS),
                    "/noisy": ("text/html", NOISY_PAGE.format(other=other.server_port))})
    base = f"http://127.0.0.1:{server.server_port}"
    bearer = f"Authorization: Bearer {TOKEN}"
    facts = """({
        rows: document.querySelectorAll('#apps tbody tr').length,
        svg: document.querySelector('svg#chart') instanceof SVGSVGElement,
        bars: document.querySelectorAll('#chart rect').length,
        title: document.title,
        bar: (r => [Math.round(r.x + r.width / 2), Math.round(r.y + r.height / 2)])(
            document.querySelector('#chart rect').getBoundingClientRect()),
        height: document.documentElement.scrollHeight,
    })"""

    # 1. The CLI, as CI runs it: token, wait, DOM facts, full-page screenshot, strict console.
    shot = os.path.join(workdir, "status.png")
    started = time.monotonic()
    code, out, err = driver(f"{base}/status", "--header", bearer, "--wait-for", "#ready", "--eval", facts,
                            "--screenshot", shot, "--width", "1024", "--full-page", "--fail-on-console-error")
    elapsed = time.monotonic() - started
    check(code == 0, f"the driver failed on the authorized page (exit {code}):\n{err}")
    value = json.loads(out)
    check(value["rows"] == 5, f"expected 5 table rows (3 served, 2 added by app.js), the DOM has {value['rows']}")
    check(value["svg"] is True and value["bars"] == 5, f"the SVG chart is missing or incomplete: {value}")
    check(value["title"] == "Beckon status", f"unexpected title {value['title']!r}")
    check(any(path == "/app.js" and ok for _, path, ok in seen), "app.js was not fetched with the bearer token")
    width, height, pixel = png_facts(shot, probe=value["bar"])
    check(width == 1024, f"the screenshot is {width}px wide, not 1024")
    check(height == value["height"] and height > 1600,
          f"the full-page screenshot is {height}px tall, the document {value['height']}px")
    check(max(abs(a - b) for a, b in zip(pixel, BAR)) <= 8,
          f"the screenshot shows {pixel} where the chart's first bar is, not the bar colour {BAR}")
    print(f"ok: authorized page: 5 rows, SVG chart, {width}x{height} PNG with the chart in it "
          f"({elapsed:.1f}s, CLI process included)")

    # 2. No token, and a wrong one: the 401 is reported and fails the run.
    for args in ([], ["--header", "Authorization: Bearer wrong"]):
        code, out, err = driver(f"{base}/status", *args, "--eval", "1", "--screenshot", os.path.join(workdir, "no.png"))
        check(code == 1 and "HTTP 401" in err and out == "",
              f"a 401 was not reported as a failure (exit {code}, stdout {out!r}):\n{err}")
        check(not os.path.exists(os.path.join(workdir, "no.png")), "a screenshot was taken of the 401 page")
    print("ok: 401 without the token and with a wrong one: exit 1, 'HTTP 401' printed")

    # 3. The library: console errors and exceptions collected, another origin blocked (the other
    #    server never hears from Chromium), and the strict mode raising.
    result = chromium.load(f"{base}/noisy", headers={"Authorization": f"Bearer {TOKEN}"},
                           expression="new Promise(r => setTimeout(() => r(document.title), 100))")
    check(result.value == "noisy", f"an awaited promise gave {result.value!r}")
    errors = "\n".join(result.console_errors)
    check("deliberate console error" in errors and "deliberate uncaught exception" in errors,
          f"console errors not collected: {result.console_errors}")
    check(any(f":{other.server_port}/pixel.png" in url for url in result.blocked), f"blocked: {result.blocked}")
    check(not any(port == other.server_port for port, _, _ in seen), "a request reached another origin")
    try:
        chromium.load(f"{base}/noisy", headers={"Authorization": f"Bearer {TOKEN}"}, fail_on_console_error=True)
        check(False, "fail_on_console_error did not fail on a page with console errors")
    except chromium.PageError as error:
        check(error.status == 200 and error.console_errors, f"PageError without the facts: {error}")
    print(f"ok: {len(result.console_errors)} console errors collected, 1 request to another origin blocked")

    # 4. A viewport-only screenshot has the viewport's size; a bad expression fails clearly.
    with chromium.Browser() as browser:
        page = browser.new_page(width=640, height=480, headers={"Authorization": f"Bearer {TOKEN}"})
        check(page.goto(f"{base}/status", wait_for="#ready") == 200, "second load failed")
        check(page.screenshot(os.path.join(workdir, "small.png")) == (640, 480), "screenshot size")
        check(png_facts(os.path.join(workdir, "small.png"))[:2] == (640, 480), "the PNG is not 640x480")
        try:
            page.evaluate("document.querySelector('#nope').textContent")
            check(False, "an expression that throws did not raise")
        except chromium.PageError as error:
            check("TypeError" in str(error), f"unexpected message: {error}")
    print("ok: 640x480 viewport screenshot; an exception in the expression raises PageError")

    # 5. Failures that must end cleanly: a selector that never appears, a refused connection.
    code, _, err = driver(f"{base}/status", "--header", bearer, "--wait-for", "#never", "--timeout", "2")
    check(code == 1 and "timed out" in err, f"--wait-for did not time out (exit {code}):\n{err}")
    code, _, err = driver(f"http://127.0.0.1:{free_port()}/status", "--timeout", "5")
    check(code == 1 and "ERR_CONNECTION_REFUSED" in err, f"a refused connection was not reported:\n{err}")
    print("ok: a selector timeout and a refused connection fail with exit 1")

    server.shutdown()
    other.shutdown()
    time.sleep(0.2)
    after = leftovers()
    check(after[0] == before[0] or set(after[0]) <= set(before[0]), f"Chromium processes left running: {after[0]}")
    check(set(after[1]) <= set(before[1]), f"Chromium profiles left in {tempfile.gettempdir()}: {after[1]}")
    print("ok: no Chromium process or profile left behind")
    print("chromium-selftest: all checks passed")


if __name__ == "__main__":
    keep = len(sys.argv) > 1
    workdir = sys.argv[1] if keep else tempfile.mkdtemp(prefix="chromium-selftest-")
    os.makedirs(workdir, exist_ok=True)
    try:
        main(workdir)
    except (AssertionError, chromium.ChromiumError) as failure:
        kind = "" if isinstance(failure, AssertionError) else f"the driver raised {type(failure).__name__}: "
        print(f"chromium-selftest: FAIL: {kind}{failure}\n(screenshots in {workdir})", file=sys.stderr)
        sys.exit(1)
    if keep:
        print(f"screenshots in {workdir}")
    else:
        shutil.rmtree(workdir)
