"""What a signed-out client, or another user, can learn or make the server hold: the demo
app's own server (`hearth serve --demo`, its real rules and data), tried over every transport.

- A conditional write (REST `if-match`, the realtime protocol's `h` over WebSocket and over
  long-polling) is judged by the rules first: it never answers with the value, its ETag, or a
  `datastale` that a right or wrong guess would tell apart.
- Naming a database that does not exist (`?ns=`, the host name, `/.ws?ns=`, `/.lp?ns=`)
  creates nothing.
- A write the rules refuse by its path alone is answered before its body arrives.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import socket
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from websockets.sync.client import connect as ws_connect

import browser_support

UNKNOWN_DATABASE = "Firebase error. Please ensure that you spelled the name of your Firebase correctly"


@pytest.fixture(scope="module")
def demo():
    data = Path(tempfile.mkdtemp(prefix="hearth-outsiders-"))
    served = browser_support.launch_server(data)
    yield served
    browser_support.stop_server(served)
    shutil.rmtree(data, ignore_errors=True)


def call(server, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
    """(status, headers, body text) of a request; errors are answers too."""
    request = urllib.request.Request(server.url + path, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


def admin(server) -> dict:
    return {"Authorization": f"Bearer {server.admin_token}"}


def dump(server) -> str:
    status, _, text = call(server, "GET", "/.json?format=export", headers=admin(server))
    assert status == 200
    return text


def id_token(server, account: dict) -> str:
    body = json.dumps({"email": account["email"], "password": account["password"], "returnSecureToken": True}).encode()
    status, _, text = call(server, "POST", "/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=x", body,
                           {"Content-Type": "application/json"})
    assert status == 200, text
    return json.loads(text)["idToken"]


def block(server, blocker: str, blocked: str):
    """`blocker` blocks `blocked`, as the app writes it (both sides, one update)."""
    body = json.dumps({f"blocking/{blocker}/{blocked}": True, f"blocked/{blocked}/{blocker}": True}).encode()
    status, _, text = call(server, "PATCH", "/.json", body, admin(server))
    assert status == 200, text


def etag(server, path: str) -> str:
    _, headers, _ = call(server, "GET", f"/{path}.json", headers={**admin(server), "X-Firebase-ETag": "true"})
    return headers["ETag"]


def uid(server, account: dict) -> str:
    token = id_token(server, account)
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["user_id"]


# MARK: - Conditions after the rules


def test_a_signed_out_conditional_write_gets_permission_denied_and_no_data(demo):
    before = dump(demo)
    secret_words = [word for word in ("messages", "notifications", "user-chats", "blocking") if word in before]
    assert secret_words, "the demo should hold private data to protect"
    other = id_token(demo, demo.accounts[0])
    for who in ({}, {"Authorization": f"Bearer {other}"}):
        for method, path, body, headers in [
            ("PUT", "/.json", b"null", {"if-match": "x"}),
            ("PUT", "/.json", b"null", {"if-match": "null_etag"}),
            ("DELETE", "/.json", None, {"if-match": "x"}),
            ("POST", "/.json", b"null", {"if-match": "x", "X-HTTP-Method-Override": "PUT"}),
            ("POST", "/.json?x-http-method-override=DELETE", None, {"if-match": "x"}),
            ("PUT", "/messages.json", b"null", {"if-match": "x"}),
        ]:
            status, headers_back, text = call(demo, method, path, body, {**headers, **who})
            assert status == 401, (method, path, status, text[:200])
            assert json.loads(text) == {"error": "Permission denied"}
            assert "ETag" not in headers_back
    assert dump(demo) == before


def realtime_answer(socket, request_id: int, action: str, body: dict) -> dict:
    socket.send(json.dumps({"t": "d", "d": {"r": request_id, "a": action, "b": body}}))
    while True:
        message = json.loads(socket.recv(timeout=15))
        if message.get("t") == "d" and message["d"].get("r") == request_id:
            return message["d"]["b"]


def test_a_transaction_hash_is_no_oracle_over_websocket(demo):
    ann, ben = demo.accounts[0], demo.accounts[1]
    ann_uid, ben_uid = uid(demo, ann), uid(demo, ben)
    block(demo, ann_uid, ben_uid)
    right = etag(demo, f"blocking/{ann_uid}/{ben_uid}")
    outsider = id_token(demo, demo.accounts[2])
    port = urllib.parse.urlsplit(demo.url).port
    for credential in (None, outsider):
        with ws_connect(f"ws://127.0.0.1:{port}/.ws?v=5&ns=default", max_size=None) as socket:
            assert json.loads(socket.recv(timeout=15))["d"]["t"] == "h"
            if credential:
                assert realtime_answer(socket, 1, "auth", {"cred": credential})["s"] == "ok"
            # "Did Ann block Ben?" A right guess and a wrong one get the same answer.
            for index, guess in enumerate((right, "", "wrong-hash")):
                answer = realtime_answer(
                    socket, 10 + index, "p", {"p": f"/blocking/{ann_uid}/{ben_uid}", "d": True, "h": guess})
                assert answer["s"] == "permission_denied", (credential is not None, guess, answer)
                # And the same for a location that does not exist.
                answer = realtime_answer(
                    socket, 20 + index, "p", {"p": f"/blocking/{ann_uid}/nobody", "d": True, "h": guess})
                assert answer["s"] == "permission_denied"


def long_poll_messages(script: str) -> list:
    """The server's messages in a long-poll answer (`pRTLPCB(n, [...])`)."""
    messages = []
    for packet in re.findall(r"pRTLPCB\(\d+,(\[.*?\])\);", script, flags=re.S):
        messages.extend(json.loads(packet))
    return messages


def test_a_transaction_hash_is_no_oracle_over_long_polling(demo):
    ann, ben = demo.accounts[0], demo.accounts[1]
    ann_uid, ben_uid = uid(demo, ann), uid(demo, ben)
    block(demo, ann_uid, ben_uid)
    right = etag(demo, f"blocking/{ann_uid}/{ben_uid}")
    _, _, script = call(demo, "GET", "/.lp?start=t&ser=1&cb=1&v=5")
    session_id, password = re.search(r"pLPCommand\('start','([A-Za-z0-9]+)','([A-Za-z0-9]+)'\)", script).groups()
    answers = {}
    serial = 2
    for segment, guess in enumerate((right, "wrong-hash")):
        message = json.dumps({"t": "d", "d": {"r": segment + 1, "a": "p",
                                              "b": {"p": f"/blocking/{ann_uid}/{ben_uid}", "d": True, "h": guess}}})
        data = base64.urlsafe_b64encode(message.encode()).decode().replace("=", ".")
        _, _, answer = call(demo, "GET", f"/.lp?id={session_id}&pw={password}&ser={serial}&seg0={segment}&ts0=1&d0={data}")
        serial += 1
        for received in long_poll_messages(answer):
            if received.get("t") == "d" and "r" in received["d"]:
                answers[received["d"]["r"]] = received["d"]["b"]["s"]
    assert answers == {1: "permission_denied", 2: "permission_denied"}


# MARK: - Databases nobody created


def test_naming_a_database_creates_nothing(demo):
    port = urllib.parse.urlsplit(demo.url).port
    status, _, text = call(demo, "GET", "/.json?ns=made-up-one")
    assert status == 404 and json.loads(text)["error"] == UNKNOWN_DATABASE
    status, _, text = call(demo, "PUT", "/x.json?ns=made-up-two", b"1")
    assert status == 404
    # Signed in is not enough: only an admin creates one.
    user = {"Authorization": f"Bearer {id_token(demo, demo.accounts[0])}"}
    status, _, text = call(demo, "PUT", "/x.json?ns=made-up-six", b"1", user)
    assert status == 404 and json.loads(text)["error"] == UNKNOWN_DATABASE
    status, _, _ = call(demo, "GET", "/.json", headers={"Host": f"made-up-three.localhost:{port}"})
    assert status == 404
    with ws_connect(f"ws://127.0.0.1:{port}/.ws?v=5&ns=made-up-four", max_size=None) as socket:
        shutdown = json.loads(socket.recv(timeout=15))
        assert shutdown == {"t": "c", "d": {"t": "s", "d": UNKNOWN_DATABASE}}
    _, _, script = call(demo, "GET", "/.lp?start=t&ser=1&cb=1&v=5&ns=made-up-five")
    assert "pLPCommand('start'" not in script
    databases = sorted(path.name for path in (demo.data / "databases").iterdir())
    assert not [name for name in databases if name.startswith("made-up")], databases
    # An admin still creates one by using it.
    status, _, _ = call(demo, "PUT", "/x.json?ns=made-by-admin", b"1", admin(demo))
    assert status == 200
    assert (demo.data / "databases" / "made-by-admin").is_dir()


# MARK: - Bodies


def test_a_write_the_path_refuses_is_answered_before_its_body(demo):
    port = urllib.parse.urlsplit(demo.url).port
    for request_line in ("PUT /.json", "PUT /people.json", "PUT /people/someone-else.json", "PUT /messages/a_b.json"):
        with socket.create_connection(("127.0.0.1", port), timeout=15) as connection:
            # 200 MB promised; not a byte of it sent.
            connection.sendall(f"{request_line} HTTP/1.1\r\nHost: x\r\nContent-Length: 209715200\r\n\r\n".encode())
            started = time.monotonic()
            answer = connection.recv(4096).decode(errors="replace")
            assert answer.startswith("HTTP/1.1 401"), (request_line, answer[:200])
            assert time.monotonic() - started < 10
