"""Slow and greedy clients against a real `hearth serve` (security issue 29, item 4): a head
that trickles in, a stalled body and an idle keep-alive connection are closed after their
timeouts (set short here with --header-timeout, --body-timeout and --idle-timeout), while an
event stream and a WebSocket, which hold a connection open on purpose, are not; a client
behind the proxy on this machine gets its share of requests in flight
(--max-connections-per-address, counted by X-Forwarded-For) and the server as a whole no more
connections than --max-connections.

Every wait ends on the server closing the connection (a read returning the end), bounded by a
socket timeout that only a broken server reaches. The only timing checked is that the server
did not close too early, measured from a moment before its clock can have started.
"""

from __future__ import annotations

import json
import shutil
import socket
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

import pytest
from websockets.sync.client import connect as websocket_connect

import browser_support

HEADER_TIMEOUT = 1.0
BODY_TIMEOUT = 1.0
IDLE_TIMEOUT = 1.5
PER_ADDRESS = 3
TOO_LATE = 30.0  # a close this late means no timeout worked (far past the stalls of a busy machine)


@pytest.fixture(scope="module")
def slow_server():
    data = Path(tempfile.mkdtemp(prefix="hearth-connections-"))
    served = browser_support.launch_server(data, extra_args=(
        "--header-timeout", str(HEADER_TIMEOUT), "--body-timeout", str(BODY_TIMEOUT),
        "--idle-timeout", str(IDLE_TIMEOUT), "--max-connections-per-address", str(PER_ADDRESS)))
    yield served
    browser_support.stop_server(served)
    shutil.rmtree(data, ignore_errors=True)


def address(server) -> tuple[str, int]:
    parts = urllib.parse.urlsplit(server.url)
    return parts.hostname, parts.port


def open_socket(server) -> socket.socket:
    return socket.create_connection(address(server), timeout=TOO_LATE)


def read_until_closed(sock: socket.socket) -> tuple[bytes, bool]:
    """What arrived until the server closed the connection, and whether it did in time."""
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
        return received, True
    except ConnectionResetError:
        return received, True
    except TimeoutError:
        return received, False


def read_until(sock: socket.socket, marker: bytes) -> bytes:
    received = b""
    while marker not in received:
        chunk = sock.recv(65536)
        if not chunk:
            break
        received += chunk
    return received


def request(path: str, headers: dict | None = None, method: str = "GET", body: bytes = b"") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    if body:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def served_connection(server, headers: dict | None = None) -> socket.socket:
    """A kept-alive connection that has had one answer."""
    sock = open_socket(server)
    sock.sendall(request(f"/t.json?auth={server.admin_token}", headers))
    answer = read_until(sock, b"\r\n\r\nnull")
    assert answer.startswith(b"HTTP/1.1 200"), answer
    return sock


def test_a_trickling_head_is_closed_at_the_header_timeout(slow_server):
    started = time.monotonic()
    sock = open_socket(slow_server)
    sock.sendall(b"GET /t.json HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    stop = threading.Event()

    def trickle():
        # A header line every 100 ms: progress the server must not count.
        for line in range(200):
            if stop.wait(0.1):
                return
            try:
                sock.sendall(f"X-Slow-{line}: 1\r\n".encode())
            except OSError:
                return

    threading.Thread(target=trickle, daemon=True).start()
    try:
        received, closed = read_until_closed(sock)
    finally:
        stop.set()
        sock.close()
    elapsed = time.monotonic() - started
    assert closed, "the server kept a trickling head open"
    assert received == b"", received
    assert elapsed >= HEADER_TIMEOUT, elapsed


def test_a_connection_that_sends_nothing_is_closed(slow_server):
    with open_socket(slow_server) as sock:
        received, closed = read_until_closed(sock)
    assert closed and received == b""


def test_a_stalled_body_is_closed_at_the_body_timeout(slow_server):
    with open_socket(slow_server) as sock:
        started = time.monotonic()
        sock.sendall(b"PUT /stalled.json?auth=" + slow_server.admin_token.encode()
                     + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n\"12345")
        received, closed = read_until_closed(sock)
    assert closed and b"200 OK" not in received
    assert time.monotonic() - started >= BODY_TIMEOUT


def test_an_idle_keep_alive_connection_is_closed_at_the_idle_timeout(slow_server):
    asked = time.monotonic()  # before the response ends, when the idle clock starts
    with served_connection(slow_server) as sock:
        _, closed = read_until_closed(sock)
    assert closed
    assert time.monotonic() - asked >= IDLE_TIMEOUT


def wait_out_the_idle_timeout(server):
    """A connection idling beside a long-lived one: once the server closed it, the idle
    timeout has passed for the other too."""
    with served_connection(server) as idler:
        _, closed = read_until_closed(idler)
    assert closed, "the idle connection beside it was not closed"


def test_an_event_stream_and_a_websocket_stay_open_past_the_idle_timeout(slow_server):
    token = slow_server.admin_token
    host, port = address(slow_server)
    with open_socket(slow_server) as stream, \
            websocket_connect(f"ws://{host}:{port}/.ws?v=5&ns=default", open_timeout=10) as realtime:
        stream.sendall(request(f"/feed.json?auth={token}", {"Accept": "text/event-stream"}))
        assert b"event: put" in read_until(stream, b"event: put")
        assert json.loads(realtime.recv(timeout=10))["d"]["t"] == "h"  # the handshake

        wait_out_the_idle_timeout(slow_server)

        # The stream still delivers: a change made now arrives on it.
        with served_connection(slow_server) as writer:
            writer.sendall(request(f"/feed.json?auth={token}", method="PUT", body=b'"still here"'))
            assert read_until(writer, b"\r\n\r\n").startswith(b"HTTP/1.1 200")
        assert b"still here" in read_until(stream, b"still here"), "the stream was cut off"
        # The socket still answers.
        realtime.send(json.dumps({"t": "d", "d": {"r": 1, "a": "s", "b": {"c": {}}}}))
        answer = json.loads(realtime.recv(timeout=10))
        assert answer["d"]["r"] == 1 and answer["d"]["b"]["s"] == "ok", answer


def test_each_client_behind_the_proxy_gets_its_share(slow_server):
    token = slow_server.admin_token
    # The proxy (this machine) is not capped: it holds more connections than one address may.
    proxy_connections = [served_connection(slow_server) for _ in range(PER_ADDRESS + 2)]
    streams = []
    try:
        for _ in range(PER_ADDRESS):
            stream = open_socket(slow_server)
            stream.sendall(request(f"/feed.json?auth={token}",
                                   {"Accept": "text/event-stream", "X-Forwarded-For": "203.0.113.5"}))
            assert read_until(stream, b"\r\n\r\n").startswith(b"HTTP/1.1 200")
            streams.append(stream)
        with open_socket(slow_server) as refused:
            refused.sendall(request(f"/t.json?auth={token}", {"X-Forwarded-For": "203.0.113.5"}))
            answer = read_until(refused, b"\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 429"), answer
        with open_socket(slow_server) as other:
            other.sendall(request(f"/t.json?auth={token}", {"X-Forwarded-For": "203.0.113.6"}))
            assert read_until(other, b"\r\n\r\n").startswith(b"HTTP/1.1 200")
    finally:
        for sock in proxy_connections + streams:
            sock.close()


def test_past_max_connections_the_server_answers_503():
    data = Path(tempfile.mkdtemp(prefix="hearth-connections-"))
    served = browser_support.launch_server(data, extra_args=("--max-connections", "16"))
    held = []
    try:
        # Sixteen connections that send nothing (some may already be held by the
        # demo's seeding client): the seventeenth at the latest is refused.
        held = [open_socket(served) for _ in range(16)]
        with open_socket(served) as refused:
            answer, closed = read_until_closed(refused)
        assert closed
        assert answer.startswith(b"HTTP/1.1 503 Service Unavailable"), answer
    finally:
        for sock in held:
            sock.close()
        browser_support.stop_server(served)
        shutil.rmtree(data, ignore_errors=True)
