"""The sample nginx configuration (docs/deploy/nginx.conf) really puts TLS in front of Hearth.

One module-scoped fixture starts ``hearth serve --demo`` with a files port, renders the
committed sample (only its ports and certificate paths replaced), and runs Debian's nginx on
it with a throwaway self-signed certificate for app.example.com and files.example.com. The
tests then talk HTTPS to nginx on 127.0.0.1, sending SNI and Host for those names and
verifying the certificate against the temporary one (no DNS involved).

Run: ``HEARTH_BINARY="$(swift build --show-bin-path)/hearth" .venv/bin/python -m pytest -q
Tests/Security/test_nginx.py``. Skipped only when nginx or openssl is not installed.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import browser_support
import harness
from harness import free_port, wait_for_port

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "docs" / "deploy" / "nginx.conf"
BUCKET = "hearth.appspot.com"


def _find(program: str) -> str | None:
    return shutil.which(program) or shutil.which(program, path="/usr/sbin:/usr/local/sbin:/sbin")


NGINX = _find("nginx")
OPENSSL = _find("openssl")
CURL = _find("curl")

pytestmark = pytest.mark.skipif(
    NGINX is None or OPENSSL is None,
    reason="needs nginx and openssl (apt-get install -y nginx-light openssl)",
)

# A 1x1 transparent PNG.
PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


@dataclass
class Stack:
    tls_port: int
    plain_port: int
    admin_token: str
    ca_file: Path
    context: ssl.SSLContext
    hearth_lines: list[str] = field(default_factory=list)
    nginx_log: Path | None = None

    @property
    def app(self) -> str:
        return f"app.example.com:{self.tls_port}"

    @property
    def files(self) -> str:
        return f"files.example.com:{self.tls_port}"

    def connection(self, authority: str, timeout: float = 10, source: str | None = None) -> "PinnedHTTPSConnection":
        host = authority.split(":")[0]
        return PinnedHTTPSConnection(host, self.tls_port, self.context, timeout=timeout, source=source)

    def request(self, authority: str, method: str, path: str, body: bytes | None = None,
                headers: dict | None = None, timeout: float = 10,
                source: str | None = None) -> tuple[int, http.client.HTTPMessage, bytes]:
        """One request on a fresh connection (from the local address ``source``, when given):
        (status, headers, body)."""
        connection = self.connection(authority, timeout, source)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, response.headers, response.read()
        finally:
            connection.close()

    def diagnostics(self) -> str:
        log = self.nginx_log.read_text(errors="replace") if self.nginx_log and self.nginx_log.exists() else ""
        return "hearth output:\n" + "".join(self.hearth_lines)[-4000:] + "\nnginx error log:\n" + log[-4000:]


class PinnedHTTPSConnection(http.client.HTTPSConnection):
    """HTTPS to ``host:port`` that dials 127.0.0.1 instead of resolving ``host``, while sending
    ``host`` as SNI and in the Host header (with the port) and verifying the certificate for it."""

    def __init__(self, host: str, port: int, context: ssl.SSLContext, timeout: float, source: str | None = None):
        super().__init__(host, port, timeout=timeout, context=context)
        self._pinned_context = context
        self._source = (source, 0) if source else None

    def connect(self):
        sock = socket.create_connection(("127.0.0.1", self.port), self.timeout, source_address=self._source)
        self.sock = self._pinned_context.wrap_socket(sock, server_hostname=self.host)


def render(sample: str, replacements: dict[str, str]) -> str:
    """The sample with only its sample values replaced; each must be there to begin with."""
    for old, new in replacements.items():
        assert old in sample, f"the sample no longer contains {old!r}: update this test's rendering"
        sample = sample.replace(old, new)
    return sample


def launch_hearth(data: Path, files_origin: str):
    """``hearth serve --demo`` with a files port behind ``files_origin``: (server, main port, files port)."""
    served = browser_support.launch_server(data, extra_args=(
        "--files-port", "0", "--files-origin", files_origin, "--sign-in-failures-per-address", "3"))
    main = re.search(r"Hearth is serving http://127\.0\.0\.1:(\d+)/", served.output())
    try:
        files = served.wait_for_output(re.compile(r"User files:\s+\S+ \(port (\d+)\)"), 10, "the files port")
    except AssertionError as error:
        browser_support.stop_server(served)
        pytest.fail(f"no files port in hearth's output: {error}")
    return served, int(main.group(1)), int(files.group(1))


def stop(process: subprocess.Popen):
    harness.stop_process(process, timeout=10)


@pytest.fixture(scope="module")
def stack():
    tmp = Path(tempfile.mkdtemp(prefix="hearth-nginx-"))
    processes: list[subprocess.Popen] = []
    servers = []
    try:
        cert, key = tmp / "fullchain.pem", tmp / "privkey.pem"
        subprocess.run(
            [OPENSSL, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
             "-keyout", str(key), "-out", str(cert), "-subj", "/CN=app.example.com",
             "-addext", "subjectAltName=DNS:app.example.com,DNS:files.example.com"],
            check=True, capture_output=True,
        )
        tls_port, plain_port = free_port(), free_port()
        while plain_port == tls_port:
            plain_port = free_port()

        data = tmp / "data"
        data.mkdir()
        hearth, main_port, files_port = launch_hearth(data, f"https://files.example.com:{tls_port}")
        servers.append(hearth)

        rendered = render(SAMPLE.read_text(), {
            "listen 443 ": f"listen {tls_port} ",
            "listen 80;": f"listen {plain_port};",
            "127.0.0.1:9000": f"127.0.0.1:{main_port}",
            "127.0.0.1:9001": f"127.0.0.1:{files_port}",
            "/etc/ssl/hearth/fullchain.pem": str(cert),
            "/etc/ssl/hearth/privkey.pem": str(key),
        })
        (tmp / "hearth.conf").write_text(rendered)
        nginx_log = tmp / "error.log"
        temp_paths = "\n".join(
            f"    {name}_temp_path {tmp / name};"
            for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        (tmp / "nginx.conf").write_text(f"""daemon off;
pid {tmp / 'nginx.pid'};
error_log {nginx_log} info;
events {{}}
http {{
    access_log off;
{temp_paths}
    include {tmp / 'hearth.conf'};
}}
""")
        check = subprocess.run([NGINX, "-t", "-c", str(tmp / "nginx.conf"), "-p", str(tmp)],
                               capture_output=True, text=True)
        assert check.returncode == 0, f"nginx -t failed:\n{check.stderr}\n--- rendered config:\n{rendered}"
        nginx = subprocess.Popen([NGINX, "-c", str(tmp / "nginx.conf"), "-p", str(tmp)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        processes.append(nginx)
        if not (wait_for_port(tls_port, nginx) and wait_for_port(plain_port, nginx)):
            log = nginx_log.read_text(errors="replace") if nginx_log.exists() else ""
            pytest.fail(f"nginx did not start listening on {tls_port} and {plain_port}:\n{log}")

        context = ssl.create_default_context(cafile=str(cert))
        yield Stack(tls_port=tls_port, plain_port=plain_port, admin_token=hearth.admin_token, ca_file=cert,
                    context=context, hearth_lines=hearth.lines, nginx_log=nginx_log)
    finally:
        for process in reversed(processes):
            stop(process)
        for served in servers:
            browser_support.stop_server(served)
        shutil.rmtree(tmp, ignore_errors=True)


def quoted(name: str) -> str:
    return urllib.parse.quote(name, safe="")


def admin(stack: Stack) -> dict:
    return {"Authorization": f"Bearer {stack.admin_token}"}


def upload(stack: Stack, authority: str, name: str, body: bytes, content_type: str = "image/png"):
    return stack.request(authority, "POST", f"/v0/b/{BUCKET}/o?uploadType=media&name={quoted(name)}", body=body,
                         headers={**admin(stack), "Content-Type": content_type}, timeout=30)


def read_event(response: http.client.HTTPResponse) -> tuple[str, str]:
    """The next Server-Sent Event (name, data), blocking at most the socket's timeout."""
    name, data = "", []
    while True:
        line = response.readline()
        if not line:
            raise EOFError("the event stream ended")
        line = line.decode().rstrip("\r\n")
        if not line:
            if name or data:
                return name, "\n".join(data)
            continue
        if line.startswith("event:"):
            name = line[len("event:"):].strip()
        elif line.startswith("data:"):
            data.append(line[len("data:"):].strip())


def read_stream_event(response: http.client.HTTPResponse, stack: Stack) -> tuple[str, str]:
    try:
        return read_event(response)
    except TimeoutError:
        pytest.fail("no event arrived in time: the proxy buffers the event stream\n" + stack.diagnostics())


# (a)
def test_plain_http_redirects_to_https(stack):
    for host, path in (("app.example.com", "/"), ("files.example.com", "/v0/b/x/o/y?alt=media")):
        connection = http.client.HTTPConnection("127.0.0.1", stack.plain_port, timeout=10)
        try:
            connection.request("GET", path, headers={"Host": f"{host}:{stack.plain_port}"})
            response = connection.getresponse()
            response.read()
        finally:
            connection.close()
        assert response.status in (301, 308), stack.diagnostics()
        # The HTTPS site is on the default port in production: the plain port is dropped.
        assert response.headers["Location"] == f"https://{host}{path}"


# (b)
def test_app_page_keeps_hearth_headers_and_adds_hsts(stack):
    status, headers, body = stack.request(stack.app, "GET", "/")
    assert status == 200, stack.diagnostics()
    assert b"<html" in body.lower()
    csp = headers["Content-Security-Policy"]
    assert csp and "frame-ancestors 'none'" in csp
    assert f"https://files.example.com:{stack.tls_port}" in csp
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["X-Frame-Options"] == "DENY"
    assert headers["Strict-Transport-Security"].startswith("max-age=")
    assert len(headers.get_all("Content-Security-Policy")) == 1


# (c)
def test_init_json_names_the_files_origin(stack):
    status, headers, body = stack.request(stack.app, "GET", "/__/firebase/init.json")
    assert status == 200, stack.diagnostics()
    assert json.loads(body)["storageOrigin"] == f"https://files.example.com:{stack.tls_port}"


# (d)
def test_event_stream_is_not_buffered(stack):
    token = stack.admin_token
    status, _, _ = stack.request(stack.app, "PUT", f"/s.json?auth={token}", body=b'"first"')
    assert status == 200
    stream = stack.connection(stack.app, timeout=10)
    try:
        stream.request("GET", f"/s.json?auth={token}", headers={"Accept": "text/event-stream"})
        try:
            response = stream.getresponse()
        except TimeoutError:
            pytest.fail("the stream's headers did not arrive in time: the proxy buffers the event stream")
        assert response.status == 200, stack.diagnostics()
        assert response.headers["Content-Type"].startswith("text/event-stream")
        name, data = read_stream_event(response, stack)
        assert name == "put" and json.loads(data) == {"path": "/", "data": "first"}

        # A change made through the proxy on another connection arrives within a few seconds
        # (a buffering proxy would hold the few bytes of this event back).
        stream.sock.settimeout(5)
        started = time.monotonic()
        status, _, _ = stack.request(stack.app, "PUT", f"/s.json?auth={token}", body=b'{"n": 2}')
        assert status == 200
        while True:
            name, data = read_stream_event(response, stack)
            if name == "put":
                break
            assert name == "keep-alive", (name, data)
        assert json.loads(data) == {"path": "/", "data": {"n": 2}}
        assert time.monotonic() - started < 5
    finally:
        stream.close()


# (e)
def test_upload_and_download_on_the_files_origin(stack):
    name = "nginxtest/full/post1/pixel.png"
    status, _, body = upload(stack, stack.files, name, PIXEL_PNG)
    assert status == 200, body
    assert json.loads(body)["name"] == name

    # Anyone may read a post's full image under the demo rules: no Authorization needed.
    status, headers, body = stack.request(stack.files, "GET", f"/v0/b/{BUCKET}/o/{quoted(name)}?alt=media")
    assert status == 200, body
    assert body == PIXEL_PNG
    assert headers["Content-Type"] == "image/png"
    assert headers["Content-Security-Policy"].startswith("sandbox; default-src 'none'")
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Strict-Transport-Security"].startswith("max-age=")

    # The app origin sends a browser's plain download over to the files origin.
    status, headers, _ = stack.request(stack.app, "GET", f"/v0/b/{BUCKET}/o/{quoted(name)}?alt=media")
    assert status == 307
    assert headers["Location"].startswith(f"https://files.example.com:{stack.tls_port}/"), headers["Location"]


# (e, resumable) Hearth builds the upload URL from Host and X-Forwarded-Proto.
def test_resumable_upload_url_is_https_on_the_files_origin(stack):
    name = "nginxtest/resumable.bin"
    content = os.urandom(1000)
    status, headers, body = stack.request(
        stack.files, "POST", f"/v0/b/{BUCKET}/o?uploadType=resumable&name={quoted(name)}", body=b"",
        headers={**admin(stack), "X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start",
                 "X-Goog-Upload-Header-Content-Type": "application/octet-stream"})
    assert status == 200, body
    url = urllib.parse.urlsplit(headers["X-Goog-Upload-URL"])
    assert (url.scheme, url.netloc) == ("https", stack.files), headers["X-Goog-Upload-URL"]
    status, headers, body = stack.request(
        stack.files, "POST", f"{url.path}?{url.query}", body=content,
        headers={**admin(stack), "X-Goog-Upload-Command": "upload, finalize", "X-Goog-Upload-Offset": "0"})
    assert status == 200, body
    assert headers["X-Goog-Upload-Status"] == "final"
    status, _, body = stack.request(stack.files, "GET", f"/v0/b/{BUCKET}/o/{quoted(name)}?alt=media", headers=admin(stack))
    assert status == 200 and body == content


# (f)
def test_files_origin_serves_no_app_and_no_database(stack):
    for path in ("/", "/x.json", f"/x.json?auth={stack.admin_token}", "/__/firebase/init.json", "/console"):
        status, headers, _ = stack.request(stack.files, "GET", path)
        assert status == 404, path
        assert headers["Strict-Transport-Security"].startswith("max-age=")  # `always`: on errors too


# (g)
def test_session_cookie_is_secure_through_the_proxy(stack):
    status, _, body = stack.request(
        stack.app, "POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=x",
        body=b'{"returnSecureToken":true}', headers={"Content-Type": "application/json"})
    assert status == 200, body
    refresh_token = json.loads(body)["refreshToken"]
    session = json.dumps({"refreshToken": refresh_token}).encode()

    status, headers, body = stack.request(
        stack.app, "POST", "/.hearth/session", body=session,
        headers={"Content-Type": "application/json", "Origin": f"https://app.example.com:{stack.tls_port}"})
    assert status == 200, body
    cookie = headers["Set-Cookie"]
    # The name carries the port the browser used: nginx passed Host with its port.
    assert cookie.startswith(f"hearth_session_{stack.tls_port}="), cookie
    attributes = [part.strip() for part in cookie.split(";")]
    assert "Secure" in attributes and "HttpOnly" in attributes and "SameSite=Strict" in attributes, cookie

    # nginx passes Origin unchanged: a page on another origin is still refused.
    status, _, _ = stack.request(
        stack.app, "POST", "/.hearth/session", body=session,
        headers={"Content-Type": "application/json", "Origin": "https://evil.example.com"})
    assert status == 403


# (h)
def test_large_uploads_pass_the_proxy(stack):
    content = os.urandom(10 * 1024 * 1024)
    for authority, name in ((stack.files, "nginxtest/big-files.bin"), (stack.app, "nginxtest/big-app.bin")):
        status, _, body = upload(stack, authority, name, content, "application/octet-stream")
        assert status == 200, (authority, status, body[:300])
        assert int(json.loads(body)["size"]) == len(content)


# Browsers speak HTTP/2 to nginx: Host (from :authority) and the session cookie still work.
@pytest.mark.skipif(CURL is None, reason="needs curl for HTTP/2")
def test_http2_session_request(stack):
    status, _, body = stack.request(
        stack.app, "POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=x",
        body=b'{"returnSecureToken":true}', headers={"Content-Type": "application/json"})
    refresh_token = json.loads(body)["refreshToken"]
    result = subprocess.run(
        [CURL, "-sS", "--http2", "--max-time", "10", "-D", "-", "-o", "/dev/null",
         "--cacert", str(stack.ca_file), "--resolve", f"app.example.com:{stack.tls_port}:127.0.0.1",
         "-H", "Content-Type: application/json", "-H", f"Origin: https://app.example.com:{stack.tls_port}",
         "--data", json.dumps({"refreshToken": refresh_token}),
         f"https://app.example.com:{stack.tls_port}/.hearth/session"],
        capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    head = result.stdout.lower()
    assert head.startswith("http/2 200"), result.stdout
    assert f"set-cookie: hearth_session_{stack.tls_port}=" in head and "; secure" in head, result.stdout


# Sign-in attempts are counted per browser, which nginx names in X-Forwarded-For: one client's
# failures must not lock out everyone behind the proxy (two loopback addresses stand for two
# people here).
def test_sign_in_limits_count_each_client_behind_the_proxy(stack):
    def sign_in(email: str, password: str, source: str):
        return stack.request(
            stack.app, "POST", "/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=x",
            body=json.dumps({"email": email, "password": password, "returnSecureToken": True}).encode(),
            headers={"Content-Type": "application/json"}, source=source)

    status, _, body = stack.request(
        stack.app, "POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=x",
        body=json.dumps({"email": "dana@example.com", "password": "correct-horse-7", "returnSecureToken": True}).encode(),
        headers={"Content-Type": "application/json"})
    assert status == 200, body
    for attempt in range(3):
        status, _, body = sign_in(f"nobody{attempt}@example.com", "guess", source="127.0.0.2")
        assert status == 400, body
    status, _, body = sign_in("dana@example.com", "correct-horse-7", source="127.0.0.2")
    assert b"TOO_MANY_ATTEMPTS_TRY_LATER" in body, body
    status, _, body = sign_in("dana@example.com", "correct-horse-7", source="127.0.0.3")
    assert status == 200, body
