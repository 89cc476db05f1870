"""Helpers of the realtime suite (fixtures are in conftest.py): finding the official Firebase
JS SDK and the hearth binary, running `hearth serve --emulator`, the page server for the SDK,
and ``Page``, the test page in chromium that the tests drive.

Every test module starts with ``skip_without_sdk()``: without the SDK's browser builds the
module is skipped with one line that says where they were looked for.
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests

import harness
from harness import HearthDidNotStart, HearthProcess

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SDK_FILES = ("firebase-app.js", "firebase-database.js", "firebase-auth.js")
SDK_CANDIDATES = [
    Path(os.environ["FIREBASE_JS_SDK"]) if os.environ.get("FIREBASE_JS_SDK") else None,
    REPO.parent / "shared" / "firebase-js-sdk-9.8.1",
    Path("/work/shared/firebase-js-sdk-9.8.1"),
]
STARTUP_SECONDS = 60


def find_sdk() -> Path | None:
    """The folder with the SDK's browser builds: $FIREBASE_JS_SDK, ../shared beside the
    checkout, or /work/shared."""
    for candidate in SDK_CANDIDATES:
        if candidate and all((candidate / name).is_file() for name in SDK_FILES):
            return candidate
    return None


SDK = find_sdk()


def skip_without_sdk():
    if SDK is None:
        places = ", ".join(dict.fromkeys(str(candidate) for candidate in SDK_CANDIDATES if candidate))
        pytest.skip(f"the official Firebase JS SDK 9.8.1 browser builds were not found "
                    f"(set FIREBASE_JS_SDK; looked in {places})", allow_module_level=True)


def hearth_binary() -> str:
    try:
        return harness.hearth_binary()
    except RuntimeError as error:
        pytest.fail(str(error))


def new_namespace(prefix: str = "rt") -> str:
    """A database name of its own (Hearth's names: a-z, 0-9 and -, at most 63)."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


OPEN_RULES = {"rules": {".read": True, ".write": True}}


@dataclass
class Hearth:
    """A `hearth serve --emulator` process. ``url`` is http://127.0.0.1:PORT; REST calls go
    with `Authorization: Bearer owner` (the emulator's admin credential)."""

    data: Path
    rules_file: Path
    extra_args: list[str] = field(default_factory=list)  # more `hearth serve` options (e.g. --web-root)
    port: int = 0
    process: subprocess.Popen | None = None
    lines: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, port: int | None = None):
        """Starts the server (port 0 the first time: any free port; then the same port, with the
        same data folder). A port still held by the last process is retried for a while."""
        wanted = self.port if port is None else port
        deadline = time.monotonic() + 20
        while True:
            lines: list[str] = []
            hearth = HearthProcess(
                ["serve", "--port", str(wanted), "--data", str(self.data), "--emulator", "--rules", str(self.rules_file),
                 "--log-level", os.environ.get("HEARTH_LOG_LEVEL", "warning"), *self.extra_args],
                # Each line goes to this start's lines and to the server's whole history.
                binary=hearth_binary(), timeout=STARTUP_SECONDS, into=(lines, self.lines))
            try:
                hearth.start()
                self.process, self.port = hearth.process, hearth.port
                return self
            except HearthDidNotStart:
                pass
            output = "".join(lines)
            if wanted and "in use" in output.lower() and time.monotonic() < deadline:
                # The last process's port is not free yet: start again once it is.
                harness.wait_until(lambda: harness.port_is_free(wanted), max(0.1, deadline - time.monotonic()),
                                   f"port {wanted} to be free", ignoring=(OSError,))
                continue
            pytest.fail(f"hearth serve did not start on port {wanted}:\n{output}")

    def stop(self):
        if self.process is None:
            return
        harness.stop_process(self.process, timeout=15)
        self.process = None

    def output(self, last: int = 60) -> str:
        return "".join(self.lines[-last:])

    # REST, as the admin (Bearer owner)

    def rest(self, method: str, path: str, ns: str, body=None, **params) -> requests.Response:
        path = path.strip("/")
        url = f"{self.url}/{path}.json" if path else f"{self.url}/.json"
        return requests.request(method, url, params={"ns": ns, **params}, timeout=30,
                                data=None if body is None else json.dumps(body),
                                headers={"Authorization": "Bearer owner"})

    def get(self, path: str, ns: str):
        response = self.rest("GET", path, ns)
        assert response.status_code == 200, f"REST GET /{path} in {ns}: {response.status_code} {response.text}"
        return response.json()

    def put(self, path: str, ns: str, value):
        response = self.rest("PUT", path, ns, value)
        assert response.status_code == 200, f"REST PUT /{path} in {ns}: {response.status_code} {response.text}"

    def serves_long_polling(self) -> bool:
        """Whether /.lp exists at all (a 404 means long-polling is not implemented). The SDK needs
        it for a browser whose WebSocket failed once, which includes every browser after an
        outage: it then starts with long-polling until a WebSocket has worked again."""
        response = requests.get(f"{self.url}/.lp", params={"start": "t", "ser": "1", "cb": "1", "v": "5", "ns": "lp-probe"},
                                timeout=30)
        return response.status_code != 404

    def deploy_rules(self, ns: str, rules: dict):
        response = requests.put(f"{self.url}/.settings/rules.json", params={"ns": ns}, data=json.dumps(rules),
                                headers={"Authorization": "Bearer owner"}, timeout=30)
        assert response.status_code == 200, f"rules deploy to {ns}: {response.status_code} {response.text}"


def launch_hearth(folder: Path, rules: dict = OPEN_RULES, extra_args: list[str] = ()) -> Hearth:
    folder.mkdir(parents=True, exist_ok=True)
    rules_file = folder / "rules.json"
    rules_file.write_text(json.dumps(rules))
    return Hearth(data=folder / "data", rules_file=rules_file, extra_args=list(extra_args)).start(0)


class PageServer:
    """A loopback HTTP server for the test page: /realtime.html and /harness.js from this folder,
    /sdk/<file> from the SDK folder (the import map sends the SDK's own imports of gstatic's
    firebase-app.js there). ``extra`` adds other suites' files: {"/url-path": file} (JavaScript
    modules, served uncached)."""

    def __init__(self, extra: dict[str, Path] | None = None):
        files = {"/realtime.html": (HERE / "realtime.html", "text/html; charset=utf-8", "no-store"),
                 "/harness.js": (HERE / "harness.js", "text/javascript", "no-store")}
        for name in SDK_FILES:
            files[f"/sdk/{name}"] = (SDK / name, "text/javascript", "max-age=3600")
        for url_path, file in (extra or {}).items():
            files[url_path] = (Path(file), "text/javascript", "no-store")

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (the standard library's name)
                entry = files.get(self.path.split("?")[0])
                if entry is None:
                    self.send_error(404)
                    return
                path, content_type, cache = entry
                body = path.read_bytes()
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", cache)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()


class PageError(AssertionError):
    """A function run in the page threw (or its promise rejected)."""


# Runs arguments[0] (the source of a function, usually async) with the other arguments; the
# outcome comes back as {ok: value} or {error, code, stack}.
_CALL = """
const done = arguments[arguments.length - 1];
const args = Array.prototype.slice.call(arguments, 1, arguments.length - 1);
let fn;
try { fn = (0, eval)('(' + arguments[0] + ')'); }
catch (error) { done({ error: 'the test function does not compile: ' + error.message, code: null, stack: '' }); return; }
Promise.resolve().then(() => fn(...args)).then(
  (value) => done({ ok: value === undefined ? null : value }),
  (error) => done({ error: String((error && error.message) || error), code: (error && error.code) || null,
                    stack: String((error && error.stack) || '') }));
"""


class Page:
    """The test page (realtime.html) in one chromium tab, loaded for one transport mode and one
    hearth port. ``call(source, *args)`` runs a JS function in it and returns its (JSON) value."""

    def __init__(self, driver, page_url: str, hearth: Hearth, transport: str):
        self.driver, self.page_url, self.hearth, self.transport = driver, page_url, hearth, transport

    def url(self, port: int | None = None) -> str:
        return f"{self.page_url}/realtime.html?transport={self.transport}&port={port or self.hearth.port}"

    def load(self, port: int | None = None):
        self.driver.get(self.url(port))
        errors: list = []

        def loaded():
            if self.driver.execute_script("return window.harnessReady === true"):
                return True
            errors[:] = self.driver.execute_script("return window.harnessErrors || []")
            if errors:
                raise AssertionError(f"the test page did not load the SDK: {errors}")
            return False

        try:
            harness.wait_until(loaded, 20, "the test page to load the SDK", interval=0.02)
        except harness.WaitTimeout:
            raise AssertionError(f"the test page did not load the SDK: {errors}") from None
        return self

    def call(self, source: str, *args):
        result = self.driver.execute_async_script(_CALL, source, *args)
        if result is None or "error" in result:
            result = result or {"error": "no result", "code": None, "stack": ""}
            code = f" [{result['code']}]" if result.get("code") else ""
            raise PageError(f"in the page: {result['error']}{code}\n{result.get('stack', '')}")
        return result["ok"]

    def open_tab(self) -> str:
        """Opens another tab on the same test page (same mode and server); the driver switches to
        it. Returns its window handle."""
        self.driver.switch_to.new_window("tab")
        self.load()
        return self.driver.current_window_handle

    def network(self) -> list[tuple[str, str]]:
        """The realtime requests the browser made since the last call: ("ws", url) for each
        WebSocket opened, ("lp", url) for each long-polling request (any frame of the page)."""
        seen = []
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            method, params = message.get("method"), message.get("params", {})
            if method == "Network.webSocketCreated":
                seen.append(("ws", params.get("url", "")))
            elif method == "Network.requestWillBeSent" and "/.lp" in params.get("request", {}).get("url", ""):
                seen.append(("lp", params["request"]["url"]))
        return seen

    def diagnostics(self) -> str:
        """The page's uncaught errors and the end of the SDK's log, for a failed test's report."""
        try:
            errors = self.driver.execute_script("return window.harnessErrors || []")
            log = self.driver.execute_script("return window.T ? window.T.sdkLog.slice(-150) : []")
        except Exception as error:  # the page may be gone
            return f"(no page diagnostics: {error})"
        return "page errors: " + json.dumps(errors) + "\nSDK log (last 150 lines):\n" + "\n".join(log)


def new_chromium():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM_BINARY", "/usr/bin/chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1024,768", "--disable-background-timer-throttling",
                     "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    options.add_experimental_option("perfLoggingPrefs", {"enableNetwork": True, "enablePage": False})
    driver = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
    driver.set_script_timeout(120)
    return driver
