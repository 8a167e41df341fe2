"""Open the built documentation in headless Chromium and check that it renders.

The site (``docs/_build/html`` by default) is served on a local port by
``http.server``; Chromium is driven through the Chrome DevTools protocol over
a WebSocket, with the small client below (standard library only, so nothing
is downloaded). On the index, a guide, a reference page and a gallery page it
checks the title and the navigation sidebar, and that a code block is
highlighted (Pygments' spans are coloured by the theme's CSS), the reference
lists Variable's methods, or the gallery's pictures load; on the search page,
that a query finds results. Any console error, uncaught exception or failed load on any page is
a failure. A screenshot of each page is saved into the output folder.

Run: ``python tools/check_docs_browser.py [--site docs/_build/html]
[--out docs/_build/screenshots] [--browser chromium]``; exits 1 naming every
failed check, 2 when no browser is found.
"""

import argparse
import base64
import functools
import http.client
import http.server
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

# (screenshot name, path, the title must contain, checks); a check is (what, JS expression).
NAVIGATION = ("navigation sidebar", "document.querySelectorAll('.sidebar-tree a').length >= 10")
HIGHLIGHT = (
    "a highlighted code block",
    """(() => {
        const pre = document.querySelector('div.highlight pre');
        if (!pre) return false;
        const plain = getComputedStyle(pre).color;
        return [...pre.querySelectorAll('span')].some(s => getComputedStyle(s).color !== plain);
    })()""",
)
PAGES = [
    ("index", "index.html", "dbr", [NAVIGATION, HIGHLIGHT]),
    (
        "guide-trainer",
        "guides/trainer.html",
        "The Trainer and extensions",
        [NAVIGATION, HIGHLIGHT],
    ),
    (
        "reference-variable",
        "reference/variable.html",
        "Variables and functions",
        [
            NAVIGATION,
            ("the Variable class", "!!document.getElementById('dbr.core.Variable')"),
            ("its methods", "document.querySelectorAll('dl.py.method').length >= 10"),
        ],
    ),
]
PAGES.append(
    (
        "gallery-digits",
        "gallery/digits.html",
        "Digits CNN",
        [
            NAVIGATION,
            (
                "loaded PlotReport pictures",
                "(() => { const shots = [...document.querySelectorAll('article img')];"
                " return shots.length >= 2 && shots.every(i => i.complete && i.naturalWidth > 0);"
                " })()",
            ),
        ],
    )
)
SEARCH = ("search", "search.html?q=Variable", "Search")
# Sphinx's search retitles the page "Search Results" once every result is listed.
SEARCH_DONE = (
    "document.title.startsWith('Search') && document.querySelector('#search-results h2') &&"
    " document.querySelector('#search-results h2').innerText === 'Search Results' &&"
    " document.querySelectorAll('#search-results ul.search li').length"
)


class DevTools:
    """A Chrome DevTools protocol session over one WebSocket (RFC 6455, client side)."""

    def __init__(self, url, timeout=30):
        rest = url.removeprefix("ws://")
        hostport, _, path = rest.partition("/")
        host, _, port = hostport.partition(":")
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            f"GET /{path} HTTP/1.1\r\nHost: {hostport}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self.sock.sendall(request.encode())
        response = b""
        while b"\r\n\r\n" not in response:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("DevTools closed the connection during the handshake")
            response += chunk
        head, _, self.buffer = response.partition(b"\r\n\r\n")
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise ConnectionError(f"DevTools refused the WebSocket: {head[:200]!r}")
        self.next_id = 0
        self.events = []

    def _read(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(max(65536, n - len(self.buffer)))
            if not chunk:
                raise ConnectionError("DevTools closed the connection")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def _send_frame(self, opcode, payload):
        header = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 1 << 16:
            header += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack("!Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def _receive(self):
        """One whole text message (continuation frames joined; pings answered)."""
        parts = []
        while True:
            first, second = self._read(2)
            fin, opcode, n = first & 0x80, first & 0x0F, second & 0x7F
            if n == 126:
                (n,) = struct.unpack("!H", self._read(2))
            elif n == 127:
                (n,) = struct.unpack("!Q", self._read(8))
            mask = self._read(4) if second & 0x80 else None
            payload = self._read(n)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x9:
                self._send_frame(0xA, payload)
                continue
            if opcode == 0x8:
                raise ConnectionError("DevTools closed the WebSocket")
            if opcode in (0x0, 0x1, 0x2):
                parts.append(payload)
                if fin:
                    return json.loads(b"".join(parts))

    def call(self, method, **params):
        """Send a command and return its result; events met meanwhile are kept in ``events``."""
        self.next_id += 1
        message = json.dumps({"id": self.next_id, "method": method, "params": params})
        self._send_frame(0x1, message.encode())
        while True:
            reply = self._receive()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"DevTools {method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_event(self, method, timeout):
        """Wait for the event ``method`` (or the one already kept); False on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            for event in self.events:
                if event["method"] == method:
                    self.events.remove(event)
                    return True
            if time.monotonic() > deadline:
                return False
            self.sock.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                event = self._receive()
            except TimeoutError:
                return False
            finally:
                self.sock.settimeout(30)
            if "method" in event:
                self.events.append(event)

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            return f"error: {result['exceptionDetails'].get('text')}"
        return result["result"].get("value")


def find_browser(name):
    for candidate in [name] if name else BROWSERS:
        path = shutil.which(candidate)
        if path:
            return path
    return None


def serve(site):
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def start_browser(browser, profile):
    process = subprocess.Popen(
        [
            browser, "--headless=new", "--no-sandbox", "--disable-gpu",
            "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
            "--disable-extensions", "--remote-debugging-port=0",
            f"--user-data-dir={profile}", "about:blank",
        ],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    port_file = Path(profile) / "DevToolsActivePort"
    deadline = time.monotonic() + 60
    while not port_file.exists() or not port_file.read_text().strip():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"{browser} did not start its DevTools endpoint")
        time.sleep(0.1)
    port = int(port_file.read_text().split()[0])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", "/json/list")
    targets = json.loads(connection.getresponse().read())
    page = next(t for t in targets if t.get("type") == "page")
    return process, page["webSocketDebuggerUrl"]


def problems_in(events):
    """Console errors, uncaught exceptions and failed loads among DevTools events."""
    found = []
    for event in events:
        method, params = event["method"], event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            found.append(f"uncaught exception: {text}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
            found.append(f"console.{params['type']}: {args}")
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            entry = params["entry"]
            # Chromium asks every site for /favicon.ico on its own; the site links none.
            if entry.get("url", "").endswith("/favicon.ico"):
                continue
            where = entry.get("url", "")
            found.append(f"{entry['source']} error: {entry['text']} {where}".strip())
    return found


def visit(tools, base, name, path, title_part, checks, out, wait_for=None):
    failures = []
    tools.events.clear()
    tools.call("Page.navigate", url=f"{base}/{path}")
    if not tools.wait_event("Page.loadEventFired", 30):
        return [f"{path}: the page did not finish loading in 30 s"]
    if wait_for:
        deadline = time.monotonic() + 30
        while not tools.evaluate(wait_for) and time.monotonic() < deadline:
            time.sleep(0.2)
    time.sleep(0.3)  # let late scripts report their errors
    tools.wait_event("(none)", 0.2)  # collect events that arrived meanwhile
    title = tools.evaluate("document.title")
    if title_part not in str(title):
        failures.append(f"{path}: title {title!r} does not contain {title_part!r}")
    for what, expression in checks:
        value = tools.evaluate(expression)
        if value is not True and not (isinstance(value, int) and value > 0):
            failures.append(f"{path}: no {what} ({expression.split(chr(10))[0]} gave {value!r})")
    failures += [f"{path}: {problem}" for problem in problems_in(tools.events)]
    shot = tools.call("Page.captureScreenshot", format="png")
    target = out / f"{name}.png"
    target.write_bytes(base64.b64decode(shot["data"]))
    print(f"{'FAIL' if failures else 'ok  '} {path} -> {target}", flush=True)
    return failures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT / "docs" / "_build" / "html")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "_build" / "screenshots")
    parser.add_argument("--browser", default=None, help="browser command (chromium by default)")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        print(f"check_docs_browser: no built site at {args.site} (run nox -s docs first)")
        return 1
    browser = find_browser(args.browser)
    if browser is None:
        print(f"check_docs_browser: no browser found (looked for {args.browser or BROWSERS})")
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    server = serve(args.site)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    failures = []
    with tempfile.TemporaryDirectory() as profile:
        process, url = start_browser(browser, profile)
        try:
            tools = DevTools(url)
            for domain in ("Page", "Runtime", "Log"):
                tools.call(f"{domain}.enable")
            tools.call(
                "Emulation.setDeviceMetricsOverride",
                width=1280, height=900, deviceScaleFactor=1, mobile=False,
            )  # fmt: skip
            for name, path, title_part, checks in PAGES:
                failures += visit(tools, base, name, path, title_part, checks, args.out)
            name, path, title_part = SEARCH
            checks = [("search results for 'Variable'", SEARCH_DONE)]
            failures += visit(
                tools, base, name, path, title_part, checks, args.out, wait_for=SEARCH_DONE
            )
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
            server.shutdown()
    for failure in failures:
        print(f"check_docs_browser: {failure}")
    print(f"{len(PAGES) + 1 - len({f.split(':')[0] for f in failures})} passed, "
          f"{len({f.split(':')[0] for f in failures})} failed")  # fmt: skip
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
