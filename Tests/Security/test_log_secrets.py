"""No credential reaches the request log (the console's Logs page, GET /.hearth/requests) or
the access log (`hearth serve --access-log`), whatever transport carried it (security issue
29, item 7): REST and event streams with ``auth=``, a storage download with ``token=``, a
WebSocket with an App Check token in its URL and an ``auth`` request on it, long-polling with
an ``auth`` request in its URL (``d0=``, ``d1=``: base64 segments of the client's frames), the
``Authorization`` and ``Cookie`` headers, and request bodies (a token refresh).
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import socket
import tempfile
import urllib.parse
from pathlib import Path

import pytest
from websockets.sync.client import connect as websocket_connect

from security_support import browser_support, request, sign_up


@pytest.fixture(scope="module")
def logged_server():
    data = Path(tempfile.mkdtemp(prefix="hearth-logs-"))
    served = browser_support.launch_server(data, extra_args=("--access-log",))
    yield served
    browser_support.stop_server(served)
    shutil.rmtree(data, ignore_errors=True)


def web_safe_base64(text: str) -> str:
    """As the SDKs encode long-polling segments: web-safe base64 with '.' padding."""
    return base64.b64encode(text.encode()).decode().replace("+", "-").replace("/", "_").replace("=", ".")


def stream_head(server, path: str) -> bytes:
    parts = urllib.parse.urlsplit(server.url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".encode())
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
        return received


def test_no_transport_leaves_a_credential_in_the_logs(logged_server):
    server = logged_server
    account = sign_up(server, "logged@example.com")
    id_token, refresh_token = account["idToken"], account["refreshToken"]
    download_token = "download-token-0f3a9c"
    app_check = "app-check-token-5be1d2"
    cookie = "session-cookie-value-77a1"

    # REST with auth=, and with the token in Authorization and a cookie.
    request("GET", f"{server.url}/secrets.json?auth={id_token}")
    request("GET", f"{server.url}/secrets.json",
            headers={"Authorization": f"Bearer {id_token}", "Cookie": f"hearth_session={cookie}"})
    # A Server-Sent Events stream with auth=.
    assert stream_head(server, f"/posts.json?auth={id_token}").startswith(b"HTTP/1.1 ")
    # A storage download with token=.
    request("GET", f"{server.url}/v0/b/hearth.appspot.com/o/logged%2Fa.png?alt=media&token={download_token}")
    # A token refresh: the refresh token is in the body.
    request("POST", f"{server.url}/securetoken.googleapis.com/v1/token?key=x",
            f"grant_type=refresh_token&refresh_token={refresh_token}".encode(),
            {"Content-Type": "application/x-www-form-urlencoded"})

    # A WebSocket with an App Check token in its URL, and an auth request on it.
    host = urllib.parse.urlsplit(server.url).netloc
    with websocket_connect(f"ws://{host}/.ws?v=5&ns=default&ac={app_check}", open_timeout=10) as ws:
        assert json.loads(ws.recv(timeout=10))["d"]["t"] == "h"
        ws.send(json.dumps({"t": "d", "d": {"r": 1, "a": "auth", "b": {"cred": id_token}}}))
        answer = json.loads(ws.recv(timeout=10))
        assert answer["d"]["b"]["s"] == "ok", answer

    # Long-polling: the auth request rides in the URL, in two segments.
    status, _, body = request("GET", f"{server.url}/.lp?start=t&ser=1&cb=3&v=5&ns=default")
    match = re.search(r"pLPCommand\('start','(\w+)','(\w+)'\)", body.decode())
    assert status == 200 and match, body
    transport_id, password = match.groups()
    frame = web_safe_base64(json.dumps({"t": "d", "d": {"r": 1, "a": "auth", "b": {"cred": id_token}}}))
    half = len(frame) // 2
    status, _, body = request(
        "GET", f"{server.url}/.lp?id={transport_id}&pw={password}&ser=2&ns=default"
               f"&seg0=0&ts0=2&d0={frame[:half]}&seg1=1&ts1=2&d1={frame[half:]}")
    assert status == 200 and b'"s":"ok"' in body, body

    status, _, listed = request("GET", f"{server.url}/.hearth/requests?limit=1000",
                                headers={"Authorization": f"Bearer {server.admin_token}"})
    assert status == 200
    request_log = listed.decode()
    # The access log lines are written as the responses go out: wait for the last one.
    try:
        server.wait_for_output("/.hearth/requests", 10, "the access log line of the last request")
    except AssertionError:
        pass  # what was logged is checked below
    access_log = server.output()
    assert "/.lp" in access_log and "/secrets.json" in access_log, access_log[-3000:]

    secrets = {
        "the ID token": id_token, "its signature": id_token.rsplit(".", 1)[-1], "the refresh token": refresh_token,
        "the download token": download_token, "the App Check token": app_check, "the cookie": cookie,
        "the long-polling password": password, "the first segment": frame[:half], "the second segment": frame[half:],
    }
    for name, secret in secrets.items():
        assert secret not in request_log, f"{name} is in the request log"
        assert secret not in access_log, f"{name} is in the access log"
    for hidden in ("auth=***", "token=***", "d0=***", "d1=***", "pw=***"):
        assert hidden in request_log, f"{hidden} is not in the request log"
        assert hidden in access_log, f"{hidden} is not in the access log"
