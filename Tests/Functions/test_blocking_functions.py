"""Blocking functions written with Firebase's Python SDK (identity_fn) run unchanged: Hearth asks
them before an account is made and before a sign-in, waits for them (7 seconds at most), applies
what they answer and refuses what they refuse; and account triggers reach webhooks as Firebase
Auth's CloudEvents."""

from __future__ import annotations

import base64
import json
import shutil
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from functions_support import ADMIN_TOKEN, WebhookReceiver, rest, secret, serve
from harness import HearthProcess, wait_until
from harness.ports import accepts

FIXTURE = Path(__file__).parent / "fixtures" / "blocking"
PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("blocking")
    functions = tmp_path / "functions"
    shutil.copytree(FIXTURE, functions)
    process = HearthProcess(["serve", "--port", "0", "--data", str(tmp_path / "data"), "--admin-token", ADMIN_TOKEN,
                             "--no-demo", "--functions", str(functions), "--functions-python", sys.executable]).start()
    try:
        listing = admin_get(process, "/.hearth/functions")["functions"]
        assert {(f["name"], f["kind"], f["trigger"]) for f in listing} == {
            ("beforecreate", "blocking", "beforeCreate"), ("beforesignin", "blocking", "beforeSignIn")}
        for entry in listing:
            wait_until(lambda: accepts(entry["process"]["port"]), 60, f"{entry['name']} listening", wake=process.output)
        yield process
    finally:
        process.stop()


def admin_get(server, path):
    request = urllib.request.Request(f"{server.url}{path}", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def identity(server, method: str, body: dict, headers: dict | None = None, admin: bool = False):
    request = urllib.request.Request(
        f"{server.url}/identitytoolkit.googleapis.com/v1/accounts:{method}?key=any", data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **({"Authorization": f"Bearer {ADMIN_TOKEN}"} if admin else {}),
                 **(headers or {})}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def claims(id_token: str) -> dict:
    payload = id_token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def account(server, email: str):
    status, body = identity(server, "lookup", {"email": [email]}, admin=True)
    assert status == 200
    users = body.get("users", [])
    return users[0] if users else None


def test_a_sign_up_is_asked_about_twice_and_gets_what_the_functions_answer(server):
    status, body = identity(server, "signUp", {"email": "ada@example.com", "password": PASSWORD, "returnSecureToken": True},
                            headers={"User-Agent": "blocking-test/1.0", "X-Firebase-Locale": "fr"})
    assert status == 200, body
    token = claims(body["idToken"])
    # beforeCreate's custom claim is on the account; beforeSignIn's session claim on this session only.
    assert token["role"] == "member" and token["signedInVia"] == "hearth"
    assert body["displayName"] == "Set By Fn"
    stored = account(server, "ada@example.com")
    assert json.loads(stored["customAttributes"]) == {"role": "member"} and stored["displayName"] == "Set By Fn"
    seen = rest(server, "GET", f"/seen/created/{body['localId']}.json")[1]
    assert seen == {"email": "ada@example.com", "ip": "127.0.0.1", "agent": "blocking-test/1.0", "locale": "fr",
                    "new": True, "method": "password"}
    signins = list(rest(server, "GET", "/seen/signins.json")[1].values())
    # The sign-in after the creation sees the claims beforeCreate set.
    assert {"uid": body["localId"], "claims": {"role": "member"}, "new": False} in signins

    status, body = identity(server, "signInWithPassword", {"email": "ada@example.com", "password": PASSWORD,
                                                           "returnSecureToken": True})
    assert status == 200 and claims(body["idToken"])["signedInVia"] == "hearth"


def test_a_refusal_reaches_the_client_in_firebases_shape_and_makes_no_account(server):
    status, body = identity(server, "signUp", {"email": "eve@blocked.example", "password": PASSWORD})
    assert status == 400
    message = body["error"]["message"]
    assert message.startswith("BLOCKING_FUNCTION_ERROR_RESPONSE : HTTP Cloud Function returned an error:")
    assert json.loads(message.split("returned an error: ", 1)[1]) == {
        "error": {"message": "blocked domain", "status": "PERMISSION_DENIED"}}
    assert account(server, "eve@blocked.example") is None


def test_a_refused_sign_in_issues_no_session_and_a_disabling_answer_is_kept(server):
    for email in ("banned@example.com", "freeze@example.com"):
        # Admins' sign-ups are not asked about.
        assert identity(server, "signUp", {"email": email, "password": PASSWORD}, admin=True)[0] == 200
    status, body = identity(server, "signInWithPassword", {"email": "banned@example.com", "password": PASSWORD})
    assert status == 400 and "banned here" in body["error"]["message"]
    assert "idToken" not in body
    status, body = identity(server, "signInWithPassword", {"email": "freeze@example.com", "password": PASSWORD})
    assert status == 400 and body["error"]["message"] == "USER_DISABLED"
    assert account(server, "freeze@example.com")["disabled"] is True


def test_a_creation_the_function_disables_is_stored_disabled_and_signs_nobody_in(server):
    status, body = identity(server, "signUp", {"email": "off@example.com", "password": PASSWORD})
    assert status == 400 and body["error"]["message"] == "USER_DISABLED"
    assert account(server, "off@example.com")["disabled"] is True


def test_anonymous_and_custom_token_sign_ins_are_not_asked(server):
    status, body = identity(server, "signUp", {"returnSecureToken": True})
    assert status == 200 and "signedInVia" not in claims(body["idToken"])
    assert rest(server, "GET", f"/seen/created/{body['localId']}.json")[1] is None


def test_a_function_slower_than_the_limit_refuses_the_sign_up(server):
    started = time.monotonic()
    status, body = identity(server, "signUp", {"email": "slow@example.com", "password": PASSWORD})
    waited = time.monotonic() - started
    assert status == 400 and body["error"]["message"].startswith("BLOCKING_FUNCTION_ERROR_RESPONSE")
    assert "did not answer within 7 seconds" in body["error"]["message"]
    assert waited < 15, waited
    assert account(server, "slow@example.com") is None


# Account triggers: webhooks get google.firebase.auth.user.v1.created / deleted.

def test_account_triggers_reach_a_webhook_in_commit_order_with_firebases_event(tmp_path):
    secrets = [secret(7)]
    receiver = WebhookReceiver(secrets)
    trigger = lambda change: {"eventType": f"google.firebase.auth.user.v1.{change}"}
    hearth = serve(tmp_path, {
        "accountmade": {"url": receiver.url, "secrets": secrets, "eventTrigger": trigger("created")},
        "accountgone": {"url": receiver.url, "secrets": secrets, "eventTrigger": trigger("deleted")},
    })
    try:
        status, made = identity(hearth, "signUp", {"email": "grace@example.com", "password": PASSWORD,
                                                   "displayName": "Grace", "returnSecureToken": True})
        assert status == 200
        assert identity(hearth, "signUp", {"returnSecureToken": True})[0] == 200
        status, _ = identity(hearth, "delete", {"idToken": made["idToken"]})
        assert status == 200
        received = [event for _, event in receiver.wait_for_count(3)]
        # Each function gets its events in commit order; two functions' deliveries are not
        # ordered between them (nor are they at Firebase).
        created = [e for e in received if e["type"] == "google.firebase.auth.user.v1.created"]
        deleted = [e for e in received if e["type"] == "google.firebase.auth.user.v1.deleted"]
        assert (len(created), len(deleted)) == (2, 1), [e["type"] for e in received]
        events = created + deleted
        first = events[0]
        assert first["source"] == "//firebaseauth.googleapis.com/projects/hearth" or first["source"].startswith(
            "//firebaseauth.googleapis.com/projects/")
        assert first["subject"] == f"users/{made['localId']}"
        data = first["data"]
        assert data["uid"] == made["localId"] and data["email"] == "grace@example.com"
        assert data["displayName"] == "Grace" and data["emailVerified"] is False and data["disabled"] is False
        assert data["providerData"] == [{"uid": "grace@example.com", "email": "grace@example.com",
                                         "displayName": "Grace", "providerId": "password"}]
        assert data["metadata"]["createTime"].endswith("Z")
        assert "passwordHash" not in data and "passwordHash" not in json.dumps(events)
        assert events[1]["data"].get("email") is None
        assert events[2]["data"]["uid"] == made["localId"]
        assert len({e["id"] for e in events}) == 3
    finally:
        hearth.stop()
        receiver.stop()


def test_a_blocking_webhook_gets_firebases_request_signed_and_its_answer_is_applied(tmp_path):
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from standardwebhooks import Webhook

    secrets = [secret(11)]
    verifier = Webhook(secrets[0])
    asked: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            verifier.verify(body, {name.lower(): value for name, value in self.headers.items()})
            token = json.loads(body)["data"]["jwt"]
            header, payload, signature = token.split(".")
            event = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
            # Unsigned, as Firebase's emulator makes it: the request itself is signed instead.
            event["token_signature"] = signature
            asked.append(event)
            if event["user_record"].get("email", "").endswith("@blocked.example"):
                answer, status = {"error": {"message": "not here", "status": "PERMISSION_DENIED"}}, 403
            else:
                answer, status = {"userRecord": {"customClaims": {"via": "webhook"}, "emailVerified": True,
                                                 "updateMask": "customClaims,emailVerified"}}, 200
            encoded = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(encoded)))
            self.end_headers()
            self.wfile.write(encoded)

    endpoint = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=endpoint.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{endpoint.server_address[1]}/before-create"
    hearth = serve(tmp_path, {"gate": {"url": url, "secrets": secrets, "blockingTrigger": {
        "eventType": "providers/cloud.auth/eventTypes/user.beforeCreate"}}})
    try:
        status, body = identity(hearth, "signUp", {"email": "lin@example.com", "password": PASSWORD,
                                                   "returnSecureToken": True})
        assert status == 200, body
        assert claims(body["idToken"])["via"] == "webhook"
        stored = account(hearth, "lin@example.com")
        assert stored["emailVerified"] is True and json.loads(stored["customAttributes"]) == {"via": "webhook"}
        event = asked[0]
        assert event["event_type"] == "beforeCreate" and event["sign_in_method"] == "password"
        assert event["aud"] == url and event["sub"] == event["user_record"]["uid"]
        assert event["token_signature"] == ""
        status, body = identity(hearth, "signUp", {"email": "max@blocked.example", "password": PASSWORD})
        assert status == 400 and "not here" in body["error"]["message"]
        assert account(hearth, "max@blocked.example") is None
    finally:
        hearth.stop()
        endpoint.shutdown()
