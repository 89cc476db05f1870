"""Helpers of the generations suite (fixtures are in conftest.py): the two official Firebase JS
SDK generations (8.10.1, namespaced, plain scripts; 9.8.1, modular, ES modules) found in their
shared folders and served from there, the page server, and ``GenerationPage``, a test page in
chromium for one generation and one realtime transport.

The scenarios run JavaScript that uses only the adapter (``A.open(ns)`` gives an instance whose
operations are the same in both generations: adapter8.js, adapter9.js) and the helpers ``T``
(common.js), so each is written once and runs on both.
"""

from __future__ import annotations

import http.server as http_server
import json
import os
import secrets
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from realtime_support import Page, launch_hearth

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SDK_FILES = ("firebase-app.js", "firebase-auth.js", "firebase-database.js", "firebase-storage.js", "firebase-functions.js")
# The server's --project, and the SDKs' projectId (common.js): the emulator's code listing is at
# /emulator/v1/projects/hearth/oobCodes, ID tokens have aud "hearth", the bucket is hearth.appspot.com.
PROJECT = "hearth"
TIMEOUT = 30

# Anyone reads and writes `public`; each user reads and writes their own node; `members` is for
# anyone signed in; `premium` for a token with the custom claim premium: true.
DATABASE_RULES = {"rules": {
    "public": {".read": True, ".write": True},
    "users": {"$uid": {".read": "auth != null && auth.uid === $uid", ".write": "auth != null && auth.uid === $uid"}},
    "members": {".read": "auth != null", ".write": "auth != null"},
    "counters": {"$uid": {".read": "auth != null && auth.uid === $uid",
                          ".write": "auth != null && auth.uid === $uid", ".validate": "newData.isNumber()"}},
    "premium": {".read": "auth != null && auth.token.premium === true"},
}}

# Each user owns the files under users/<uid>/; anyone reads and writes public/.
STORAGE_RULES = """rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /users/{uid}/{path=**} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
    match /public/{path=**} {
      allow read, write;
    }
  }
}
"""


def _candidates(version: str, variable: str) -> list[Path]:
    places = [Path(os.environ[variable])] if os.environ.get(variable) else []
    return places + [REPO.parent / "shared" / f"firebase-js-sdk-{version}", Path(f"/work/shared/firebase-js-sdk-{version}")]


def _find(version: str, variable: str) -> Path | None:
    for candidate in _candidates(version, variable):
        if all((candidate / name).is_file() for name in SDK_FILES):
            return candidate
    return None


# The two generations: (id, version, folder or None, the variable that overrides the folder).
GENERATIONS = {
    "sdk8": ("8.10.1", _find("8.10.1", "FIREBASE_JS_SDK_8"), "FIREBASE_JS_SDK_8"),
    "sdk9": ("9.8.1", _find("9.8.1", "FIREBASE_JS_SDK"), "FIREBASE_JS_SDK"),
}


def skip_without_sdks():
    """Skips the module (one line saying where the SDKs were looked for) without both."""
    missing = [(version, variable) for version, folder, variable in GENERATIONS.values() if folder is None]
    if missing:
        said = "; ".join(f"{version} (set {variable}; looked in "
                         f"{', '.join(dict.fromkeys(str(c) for c in _candidates(version, variable)))})"
                         for version, variable in missing)
        pytest.skip(f"the official Firebase JS SDK browser builds were not found: {said}", allow_module_level=True)


def unique_email(tag: str) -> str:
    return f"{tag}-{secrets.token_hex(4)}@mail.example.com"


def http() -> requests.Session:
    session = requests.Session()
    session.trust_env = False  # everything is on loopback
    return session


class PageServer:
    """A loopback HTTP server for the test pages: /sdk8.html, /sdk9.html, /common.js and the
    adapters from this folder, /sdk8/<file> and /sdk9/<file> from the SDKs' shared folders
    (never copied)."""

    def __init__(self):
        files = {}
        for name, content_type in (("sdk8.html", "text/html; charset=utf-8"), ("sdk9.html", "text/html; charset=utf-8"),
                                   ("common.js", "text/javascript"), ("adapter8.js", "text/javascript"),
                                   ("adapter9.js", "text/javascript")):
            files[f"/{name}"] = (HERE / name, content_type, "no-store")
        for generation, (_, folder, _) in GENERATIONS.items():
            for name in SDK_FILES:
                files[f"/{generation}/{name}"] = (folder / name, "text/javascript", "max-age=3600")

        class Handler(http_server.BaseHTTPRequestHandler):
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

        self.httpd = http_server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()


@dataclass(frozen=True)
class Combination:
    """One generation over one transport: "sdk8-websocket", "sdk9-long-polling", …"""

    generation: str  # "sdk8" or "sdk9"
    transport: str  # "websocket" or "long-polling"

    @property
    def id(self) -> str:
        return f"{self.generation}-{self.transport}"

    @property
    def version(self) -> str:
        return GENERATIONS[self.generation][0]


COMBINATIONS = [Combination(generation, transport) for generation in GENERATIONS for transport in ("websocket", "long-polling")]


class GenerationPage(Page):
    """sdk8.html or sdk9.html in the session's chromium, for one transport and one server;
    ``run(params, body, *args)`` runs ``async (params) => { body }`` in it."""

    def __init__(self, driver, page_url: str, hearth, combination: Combination):
        super().__init__(driver, page_url, hearth, combination.transport)
        self.combination = combination

    @property
    def generation(self) -> str:
        return self.combination.generation

    def url(self, port: int | None = None) -> str:
        return (f"{self.page_url}/{self.combination.generation}.html?transport={self.transport}"
                f"&port={port or self.hearth.port}&project={PROJECT}")

    def run(self, params: str, body: str, *args):
        return self.call(f"async ({params}) => {{\n{body}\n}}", *args)

    def account_requests(self) -> list[str]:
        """The page's requests to the account APIs (Identity Toolkit v1 or v3, securetoken)
        since the last call, one line each: method, path, the body's field names, the status
        (from chromium's performance log), for a failed test's report."""
        requests_seen, statuses = {}, {}
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            params = message.get("params", {})
            if message.get("method") == "Network.requestWillBeSent":
                request = params.get("request", {})
                url = request.get("url", "")
                if "identitytoolkit" in url or "securetoken" in url:
                    fields = ""
                    try:
                        fields = ",".join(sorted(json.loads(request.get("postData") or "{}")))
                    except (ValueError, TypeError):
                        fields = "(not JSON)"
                    path = url.split("?")[0].split(str(self.hearth.port), 1)[-1]
                    requests_seen[params["requestId"]] = f"{request.get('method')} {path} {{{fields}}}"
            elif message.get("method") == "Network.responseReceived":
                statuses[params.get("requestId")] = params.get("response", {}).get("status")
        return [f"{line} -> {statuses.get(request_id, 'no answer')}" for request_id, line in requests_seen.items()
                if not line.startswith("OPTIONS")]  # (the browser's preflights)

    def diagnostics(self) -> str:
        try:
            requests_made = "\n".join(self.account_requests())
        except Exception as error:  # the page may be gone
            requests_made = f"(none read: {error})"
        return super().diagnostics() + "\naccount API requests:\n" + requests_made


def oob_codes(hearth) -> list[dict]:
    """The emulator's listing of emailed codes (`GET /emulator/v1/projects/<project>/oobCodes`,
    as apps test against Firebase's emulator), oldest first."""
    response = http().get(f"{hearth.url}/emulator/v1/projects/{PROJECT}/oobCodes", timeout=TIMEOUT)
    assert response.status_code == 200, f"the emulator's code listing: {response.status_code} {response.text}"
    return response.json()["oobCodes"]


def newest_code(hearth, email: str, request_type: str) -> dict:
    """The newest listed code of ``request_type`` for ``email``: {email, oobCode, oobLink, requestType}
    (for a change of address, either address: the listing has the current one and `newEmail`)."""
    listed = oob_codes(hearth)
    matching = [entry for entry in listed if entry.get("requestType") == request_type
                and email in (entry.get("email"), entry.get("newEmail"))]
    assert matching, f"no {request_type} code listed for {email}: {listed}"
    entry = matching[-1]
    assert {"email", "oobCode", "oobLink", "requestType"} <= set(entry), entry
    assert query_of(entry["oobLink"]).get("oobCode") == entry["oobCode"], entry
    return entry


def query_of(url: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}


def start_hearth(prefix: str, extra_args: list[str] = ()):
    """A `hearth serve --emulator` with this suite's rules, in a new folder: (server, folder)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    storage_rules = folder / "storage.rules"
    storage_rules.write_text(STORAGE_RULES)
    server = launch_hearth(folder, rules=DATABASE_RULES,
                           extra_args=["--project", PROJECT, "--storage-rules", str(storage_rules), *extra_args])
    return server, folder


def open_page(request, chromium, page_server, server, combination):
    """The generation's page, loaded fresh; afterwards the tab goes to about:blank (closing
    every connection the test opened). A failed test reports the page's errors, the SDK's
    database log and the server's output."""
    test_page = GenerationPage(chromium, page_server.url, server, combination).load()
    test_page.account_requests()  # forget the requests of the tests before
    yield test_page
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        print(test_page.diagnostics())
        print("hearth output (last lines):\n" + server.output())
    chromium.get("about:blank")


def python_for_functions() -> str:
    """The interpreter for the functions' processes (firebase-functions and functions-framework):
    HEARTH_FUNCTIONS_PYTHON, else the one running the tests (as Tests/Functions does)."""
    if os.environ.get("HEARTH_FUNCTIONS_PYTHON"):
        return os.environ["HEARTH_FUNCTIONS_PYTHON"]
    for module in ("firebase_functions", "functions_framework"):
        pytest.importorskip(module, reason=f"{module} is needed to run the Python functions (or set HEARTH_FUNCTIONS_PYTHON)")
    return sys.executable
