"""Helpers and fixtures of the security suite (conftest.py makes the fixtures available; test
files import the helpers from here).

It shares the browser suite's helpers (``Tests/Browser/browser_support.py``, as
``browser_support``) and adds:

- ``files_server`` (module): a demo server that also serves files on an origin of its own
  (``--files-port 0``); ``files_server.files_url`` is that origin.
- ``hostile_site`` (session): a plain HTTP server on another port, standing in for another
  site: ``hostile_site.url``; ``hostile_site.pages[path] = (content_type, body)`` publishes a
  page (served with no security headers at all).
- ``downloads``: ``downloads(driver)`` makes the browser save downloads to a fresh folder and
  returns it.
- ``signed_in(driver, server, account)``: opens the app and signs ``account`` in through the
  web client; returns the uid.
- ``upload(server, token, name, body, content_type)``: a simple upload over REST.
- ``watch_policy_violations(driver)``: from the next page load on, the page records its CSP
  violations in ``window.__violations`` (read them with ``policy_violations(driver)``).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import browser_support  # Tests/Browser's helpers (on the path by Tests/pytest.ini)
import harness

BUCKET = "hearth.appspot.com"


@pytest.fixture(scope="module")
def files_server():
    data = Path(tempfile.mkdtemp(prefix="hearth-security-"))
    served = browser_support.launch_server(data, extra_args=("--files-port", "0"))
    try:
        line = served.wait_for_output("User files:", 10, "the files origin").string
    except AssertionError as error:
        pytest.fail(f"no files origin in hearth's output: {error}")
    served.files_url = line.split("User files:", 1)[1].split(",")[0].strip()
    yield served
    browser_support.stop_server(served)
    shutil.rmtree(data, ignore_errors=True)


@dataclass
class HostileSite:
    url: str
    pages: dict[str, tuple[str, bytes]] = field(default_factory=dict)


@pytest.fixture(scope="session")
def hostile_site():
    pages: dict[str, tuple[str, bytes]] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the standard library's name)
            path = urllib.parse.urlsplit(self.path).path
            if path not in pages:
                self.send_error(404)
                return
            content_type, body = pages[path]
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield HostileSite(url=f"http://127.0.0.1:{httpd.server_address[1]}", pages=pages)
    httpd.shutdown()


@pytest.fixture
def downloads(tmp_path):
    def enable(driver) -> Path:
        folder = tmp_path / f"downloads-{id(driver)}"
        folder.mkdir(exist_ok=True)
        driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(folder)})
        return folder

    return enable


def wait_for_download(folder: Path, size: int, timeout: float = 15) -> Path:
    """The download in ``folder`` once it holds ``size`` bytes (chromium renames its
    ``.crdownload`` file when done)."""
    def downloaded():
        return next((path for path in folder.iterdir()
                     if not path.name.endswith(".crdownload") and path.stat().st_size == size), None)

    try:
        return harness.wait_until(downloaded, timeout, f"{size} bytes downloaded to {folder}", ignoring=(FileNotFoundError,))
    except harness.WaitTimeout:
        raise AssertionError(f"nothing of {size} bytes was downloaded to {folder}: {[p.name for p in folder.iterdir()]}") from None


def request(method: str, url: str, body: bytes | None = None, headers: dict | None = None):
    """(status, headers, body) of one HTTP request; errors are answers too, redirects are not followed."""
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with opener.open(req, timeout=30) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def sign_up(server, email: str, password: str = "correct horse 1") -> dict:
    status, _, body = request(
        "POST", f"{server.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=x",
        json.dumps({"email": email, "password": password, "returnSecureToken": True}).encode(),
        {"Content-Type": "application/json"})
    assert status == 200, body
    return json.loads(body)


def upload(base_url: str, token: str | None, name: str, body: bytes, content_type: str):
    headers = {"Content-Type": content_type}
    if token:
        headers["Authorization"] = f"Firebase {token}"
    quoted = urllib.parse.quote(name, safe="")
    return request("POST", f"{base_url}/v0/b/{BUCKET}/o?uploadType=media&name={quoted}", body, headers)


def media_url(base_url: str, name: str, token: str | None = None) -> str:
    url = f"{base_url}/v0/b/{BUCKET}/o/{urllib.parse.quote(name, safe='')}?alt=media"
    return url + (f"&token={token}" if token else "")


def signed_in(driver, server, account: dict) -> str:
    """Opens the app and signs ``account`` in with the web client; the uid."""
    driver.get(server.url + "/")
    browser_support.wait_until(driver, lambda d: d.execute_script("return Boolean(window.hearth)"), message="the app did not start")
    return driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "window.hearth.auth.signIn(arguments[0], arguments[1]).then((user) => done(user.uid), (error) => done('error: ' + error.message));",
        account["email"], account["password"])


_WATCH_VIOLATIONS = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', (event) => {
  window.__violations.push({ directive: event.effectiveDirective, blocked: event.blockedURI, sample: event.sample });
});
"""


def watch_policy_violations(driver):
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _WATCH_VIOLATIONS})


def policy_violations(driver) -> list[dict]:
    return driver.execute_script("return window.__violations || []")
