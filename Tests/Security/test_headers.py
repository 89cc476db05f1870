"""The headers of every kind of response of a real `hearth serve`, and the bad-input and
authorization cases of files and sessions, over plain HTTP."""

from __future__ import annotations

import http.client
import json
import urllib.parse

import pytest

from security_support import BUCKET, media_url, request, sign_up, upload

API_POLICY = "sandbox; default-src 'none'; frame-ancestors 'none'"
FILE_POLICY = "sandbox; default-src 'none'"
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc000000301010018dd8db40000000049454e44ae426082")


def kind_of(headers) -> str:
    policy = headers.get("Content-Security-Policy", "")
    if policy == API_POLICY:
        return "api"
    if policy == FILE_POLICY:
        return "file"
    if policy.startswith("default-src 'none'; script-src 'self'"):
        return "page"
    return f"unknown: {policy!r}"


def stream_head(base: str, path: str) -> http.client.HTTPResponse:
    parts = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    connection.request("GET", path, headers={"Accept": "text/event-stream"})
    return connection.getresponse()


@pytest.fixture(scope="module")
def alice(server):
    return sign_up(server, "alice-headers@example.com")


def test_every_kind_of_response_has_its_headers(server, alice):
    base = server.url
    admin = {"Authorization": f"Bearer {server.admin_token}"}
    uid, token = alice["localId"], alice["idToken"]
    photo = f"{uid}/full/p1/a.png"
    status, _, body = upload(base, token, photo, PNG, "image/png")
    assert status == 200, body
    quoted = urllib.parse.quote(photo, safe="")
    cases = {
        "page": [
            ("GET", "/", None, {}), ("GET", "/console/", None, {}), ("GET", "/app/main.js", None, {}),
            ("GET", "/app/app.css", None, {}), ("GET", "/lib/hearth.js", None, {}),
            ("GET", "/__/firebase/init.json", None, {}), ("GET", "/no/such/page", None, {}),
        ],
        "api": [
            ("GET", "/posts.json?limitToLast=1&orderByKey=true", None, {}), ("GET", "/.json", None, {}),
            ("PUT", "/x.json", b"{", admin), ("PUT", "/x.json", b"1", admin), ("GET", "/x.json?callback=f", None, {}),
            ("GET", "/.settings/rules.json", None, {}), ("GET", "/.settings/rules.json", None, admin),
            ("POST", "/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=x", b'{"email":"a@b.c","password":"x"}',
             {"Content-Type": "application/json"}),
            ("POST", "/securetoken.googleapis.com/v1/token", b"grant_type=refresh_token&refresh_token=bad",
             {"Content-Type": "application/x-www-form-urlencoded"}),
            ("GET", "/.well-known/jwks.json", None, {}), ("GET", "/.hearth/stats", None, admin), ("GET", "/.hearth/stats", None, {}),
            ("POST", "/.hearth/session/token", None, {}), ("OPTIONS", "/x.json", None, {"Origin": "https://elsewhere.example"}),
            ("DELETE", "/page", None, {}),
        ],
        "file": [
            ("GET", f"/v0/b/{BUCKET}/o/{quoted}", None, {}), ("GET", f"/v0/b/{BUCKET}/o/{quoted}?alt=media", None, {}),
            ("GET", f"/v0/b/{BUCKET}/o/{quoted}?alt=media", None, {"Range": "bytes=0-1"}),
            ("GET", f"/v0/b/{BUCKET}/o?prefix={uid}/", None, {}), ("GET", f"/v0/b/{BUCKET}/o/nothing?alt=media", None, {}),
            ("DELETE", f"/v0/b/{BUCKET}/o/{quoted}", None, {}),
        ],
    }
    for expected, requests in cases.items():
        for method, path, body, headers in requests:
            status, answer, _ = request(method, base + path, body, headers)
            label = f"{method} {path} → {status}"
            assert answer.get("X-Content-Type-Options") == "nosniff", label
            assert kind_of(answer) == expected, f"{label}: {answer.get('Content-Security-Policy')!r}"
            if expected != "file":
                assert answer.get("X-Frame-Options") == "DENY", label
            assert answer.get("Referrer-Policy") in ("no-referrer", "same-origin"), label
    stream = stream_head(base, "/posts.json?orderBy=%22%24key%22&limitToLast=1")
    assert stream.status == 200 and stream.getheader("Content-Type", "").startswith("text/event-stream")
    assert stream.getheader("X-Content-Type-Options") == "nosniff"
    assert kind_of({"Content-Security-Policy": stream.getheader("Content-Security-Policy")}) == "api"
    stream.close()


def test_the_files_origin_answers_only_files_with_their_headers(files_server):
    files = files_server.files_url
    admin = {"Authorization": f"Bearer {files_server.admin_token}"}
    status, _, body = upload(files, files_server.admin_token, "x/full/p/a.png", PNG, "image/png")
    assert status == 200, body
    status, headers, _ = request("GET", media_url(files, "x/full/p/a.png"))
    assert status == 200 and kind_of(headers) == "file"
    for method, path in [("GET", "/"), ("GET", "/console/"), ("GET", "/x.json"), ("PUT", "/x.json"),
                         ("POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp"), ("POST", "/.hearth/session/token"),
                         ("GET", "/.hearth/stats"), ("GET", "/__/firebase/init.json")]:
        status, headers, _ = request(method, files + path, b"{}" if method != "GET" else None, admin)
        assert status == 404, f"{method} {path} on the files origin: {status}"
        assert headers.get("X-Content-Type-Options") == "nosniff"
    status, _, body = request("GET", f"{files_server.url}/x.json?auth={files_server.admin_token}")
    assert status == 200 and body == b"null", "a write reached the database through the files origin"
    status, _, body = request("GET", files_server.url + "/__/firebase/init.json")
    assert json.loads(body)["storageOrigin"] == files


def test_files_cannot_be_planted_or_made_inline_by_another_user(server, alice):
    mallory = sign_up(server, "mallory-headers@example.com")
    target = f"{alice['localId']}/full/p1/evil.svg"
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
    # Not in someone else's folder, not as a page, not too large; nothing is stored.
    for name, body, content_type in [
        (target, svg, "image/svg+xml"),
        (f"{mallory['localId']}/full/p1/page.html", b"<script>alert(1)</script>", "text/html"),
        (f"{mallory['localId']}/thumb/p1/big.png", b"\0" * (1024 * 1024 + 1), "image/png"),
        (f"{mallory['localId']}/elsewhere/a.png", PNG, "image/png"),
    ]:
        status, _, answer = upload(server.url, mallory["idToken"], name, body, content_type)
        assert status == 403, f"{name}: {status} {answer[:200]!r}"
        assert json.loads(answer)["error"]["code"] == 403
        assert request("GET", media_url(server.url, name), headers={"Authorization": f"Bearer {server.admin_token}"})[0] == 404
    # Her own SVG with metadata asking to be inline is still an attachment.
    own = f"{mallory['localId']}/full/p1/cat.svg"
    assert upload(server.url, mallory["idToken"], own, svg, "image/svg+xml")[0] == 200
    status, _, answer = request(
        "PATCH", f"{server.url}/v0/b/{BUCKET}/o/{urllib.parse.quote(own, safe='')}",
        json.dumps({"contentDisposition": "inline", "contentType": "image/svg+xml"}).encode(),
        {"Authorization": f"Firebase {mallory['idToken']}", "Content-Type": "application/json"})
    assert status == 200, answer
    status, headers, _ = request("GET", media_url(server.url, own))
    assert status == 200 and headers["Content-Disposition"].startswith("attachment")
    # A malformed type is refused at upload, and one the store lets through is never passed on.
    weird = f"{mallory['localId']}/full/p1/odd.png"
    status, _, answer = upload(server.url, mallory["idToken"], weird, PNG, "image/png, text/html")
    assert status == 400 and json.loads(answer)["error"]["message"].startswith("Invalid content type")
    assert upload(server.url, mallory["idToken"], weird, PNG, "image/png@html")[0] == 200
    status, headers, _ = request("GET", media_url(server.url, weird))
    assert headers["Content-Type"] == "application/octet-stream"
    assert headers["Content-Disposition"].startswith("attachment")


def test_session_endpoints_refuse_bad_input_and_other_origins(server):
    account = sign_up(server, "session-headers@example.com")
    port = server.url.rsplit(":", 1)[1]
    cookie = {"Cookie": f"hearth_session_{port}={account['refreshToken']}"}
    for method, path, body, headers, status, message in [
        ("POST", "/.hearth/session", b"not json", {}, 400, "INVALID_ARGUMENT"),
        ("POST", "/.hearth/session", b'{"refreshToken":"forged"}', {}, 400, "INVALID_REFRESH_TOKEN"),
        ("POST", "/.hearth/session/token", None, {}, 400, "MISSING_REFRESH_TOKEN"),
        ("POST", "/.hearth/session/token", None, {**cookie, "Origin": "https://evil.example"}, 403, "CROSS_ORIGIN_REQUEST"),
        ("DELETE", "/.hearth/session", None, {**cookie, "Origin": "https://evil.example"}, 403, "CROSS_ORIGIN_REQUEST"),
        ("GET", "/.hearth/session", None, cookie, 405, "METHOD_NOT_ALLOWED"),
    ]:
        got, answer, text = request(method, server.url + path, body, {"Content-Type": "application/json", **headers})
        assert got == status, f"{method} {path}: {got} {text!r}"
        assert json.loads(text)["error"]["message"].startswith(message)
        assert "Access-Control-Allow-Origin" not in answer
        assert "Set-Cookie" not in answer or "Max-Age=0" in answer["Set-Cookie"]
    # The forged and cross-origin calls ended nothing: the session still works.
    status, answer, text = request("POST", server.url + "/.hearth/session/token", None, cookie)
    assert status == 200, text
    assert "HttpOnly" in answer["Set-Cookie"] and "SameSite=Strict" in answer["Set-Cookie"]
