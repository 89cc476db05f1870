"""The sample nginx configuration's limits (docs/deploy/nginx.conf, security issue 29 item 4):
per-client limit_req and limit_conn zones answer 429 past their bursts, while the realtime
transports the sample must keep working still do: a WebSocket (`/.ws`) and long-polling
(`/.lp`) through the proxy.

Runs the same stack as test_nginx.py (its fixture: hearth serve --demo behind Debian's nginx
with a throwaway certificate). Each test speaks from a loopback address of its own, so one
test's spent allowance does not limit another's.
"""

from __future__ import annotations

import http.client
import json
import re
import socket
from concurrent.futures import ThreadPoolExecutor

import pytest
from websockets.sync.client import connect as websocket_connect

from test_nginx import NGINX, OPENSSL, PinnedHTTPSConnection, stack  # noqa: F401 (the fixture)

pytestmark = pytest.mark.skipif(
    NGINX is None or OPENSSL is None,
    reason="needs nginx and openssl (apt-get install -y nginx-light openssl)",
)


def test_a_websocket_works_through_the_proxy(stack):
    sock = socket.create_connection(("127.0.0.1", stack.tls_port), timeout=10)
    with websocket_connect(f"wss://{stack.app}/.ws?v=5&ns=default", sock=sock, ssl=stack.context,
                           server_hostname="app.example.com", open_timeout=10) as realtime:
        assert json.loads(realtime.recv(timeout=10))["d"]["t"] == "h"  # the handshake
        realtime.send(json.dumps({"t": "d", "d": {"r": 1, "a": "s", "b": {"c": {}}}}))
        answer = json.loads(realtime.recv(timeout=10))
        assert answer["d"]["r"] == 1 and answer["d"]["b"]["s"] == "ok", answer


def test_long_polling_works_through_the_proxy(stack):
    status, _, body = stack.request(stack.app, "GET", "/.lp?start=t&ser=1&cb=5&v=5&ns=default", source="127.0.0.6")
    assert status == 200, stack.diagnostics()
    assert re.search(rb"pLPCommand\('start','\w+','\w+'\)", body), body


def test_past_the_request_burst_a_client_gets_429(stack):
    # One kept-alive connection, requests as fast as they go: the burst (200) passes, then the
    # rate (20 a second) lets only a few more through.
    connection = stack.connection(stack.app, source="127.0.0.4")
    statuses = []
    try:
        for _ in range(260):
            connection.request("GET", "/__/firebase/init.json")
            response = connection.getresponse()
            response.read()
            statuses.append(response.status)
    finally:
        connection.close()
    assert statuses[:150] == [200] * 150, statuses[:150]
    assert 429 in statuses, stack.diagnostics()
    # Another client is not held back by this one's spending.
    status, _, _ = stack.request(stack.app, "GET", "/__/firebase/init.json", source="127.0.0.5")
    assert status == 200


def test_past_the_connection_cap_a_client_gets_429(stack):
    token = stack.admin_token
    limit = 128

    def open_stream(_):
        connection = PinnedHTTPSConnection("app.example.com", stack.tls_port, stack.context, timeout=20,
                                           source="127.0.0.7")
        connection.request("GET", f"/limits.json?auth={token}", headers={"Accept": "text/event-stream"})
        response = connection.getresponse()
        return connection, response

    # The streams stay open: each holds one of the client's connections at nginx.
    with ThreadPoolExecutor(max_workers=16) as pool:
        opened = list(pool.map(open_stream, range(limit)))
    try:
        assert all(response.status == 200 for _, response in opened), [r.status for _, r in opened]
        connection, response = open_stream(None)
        try:
            assert response.status == 429, stack.diagnostics()
        finally:
            connection.close()
        # Another client is served.
        status, _, _ = stack.request(stack.app, "GET", "/__/firebase/init.json", source="127.0.0.8")
        assert status == 200
    finally:
        for connection, _ in opened:
            connection.close()
