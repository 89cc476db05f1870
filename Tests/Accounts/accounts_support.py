"""Helpers for the account-service tests in this folder: launching a real ``hearth serve``
with a settings file, calling Firebase Auth's REST API on it, checking Firebase's error shape,
and driving the test OpenID provider's login form with ``requests``.

The fixtures that use these are in conftest.py; test files import what they need from here.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import secrets
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit, urlunsplit

import requests

import harness
from harness import HearthDidNotStart, HearthProcess, Output, free_port  # noqa: F401  (free_port: re-exported)
from oidc_server import OIDCProvider, OIDCUser, subject_for  # noqa: F401  (Tests/Support; re-exported)

HERE = Path(__file__).resolve().parent
PROJECT = "hearth-accounts"
ADMIN_TOKEN = "accounts-admin-" + secrets.token_hex(12)
TIMEOUT = 30
STARTUP_SECONDS = 120

CLIENT_ID = "hearth-accounts-client"
CLIENT_SECRET = "AccountsClientSecret42"  # letters and digits only (see oidc_server.py)
OTHER_CLIENT_ID = "some-other-client"
PROVIDER_ID = "oidc.test"
OTHER_AUDIENCE_PROVIDER_ID = "oidc.other"  # same issuer as oidc.test, another client ID
# Where tests that fetch ID tokens themselves (postBody) have the provider send its codes; the
# redirect is captured, never followed, so nothing needs to listen there.
DIRECT_REDIRECT = "http://127.0.0.1:9/direct-callback"

SMTP_USERNAME = "hearth-mailer"
SMTP_PASSWORD = "smtp-Passw0rd"
MAIL_FROM = "Hearth Accounts Tests <noreply@accounts.hearth.test>"
APP_NAME = "Hearth Accounts Test"

# Rules that let a signed-in user read and write users/<own uid> (the default is closed).
OWN_DATA_RULES = {
    "rules": {
        "users": {
            "$uid": {
                ".read": "auth != null && auth.uid === $uid",
                ".write": "auth != null && auth.uid === $uid",
            }
        }
    }
}


def provider_user(tag: str, verified: bool = True) -> OIDCUser:
    """A provider account for one test: its email says which test it belongs to."""
    return OIDCUser(f"{tag}@idp.example.com", f"pw-{tag}-123", f"{tag.title()} Person", email_verified=verified)


# Every provider started by these tests has all of these accounts (one or two per test, so
# the tests do not share identities). `sub` is derived from the email.
PROVIDER_USERS = {
    tag: provider_user(tag, verified=not tag.startswith("unverified"))
    for tag in [
        "first", "unknownsession", "forged", "replayed", "otherpath", "denied", "reusedcode", "disabled", "direct", "wrongnonce",
        "badsig", "audience", "issuer", "linker", "linked-elsewhere", "unlinker", "byemail", "unverified-byemail",
        "noemailclash", "twice", "twice-other", "prehijacked",
    ]
}


def unique_email(tag: str) -> str:
    return f"{tag}-{secrets.token_hex(4)}@mail.example.com"


def new_http() -> requests.Session:
    """A `requests` session that ignores proxy settings (everything here is on loopback)."""
    session = requests.Session()
    session.trust_env = False
    return session


def wait_for_binary(path: Optional[str] = None, timeout: float = 120) -> str:
    """The binary's path once it exists (it may be being rebuilt for a moment)."""
    path = path or harness.hearth_binary()
    try:
        harness.wait_until(lambda: os.access(path, os.X_OK), timeout, f"a hearth binary at {path}", interval=0.5)
    except harness.WaitTimeout:
        raise RuntimeError(f"no hearth binary at {path} (set HEARTH_BINARY)") from None
    return path


# --- Hearth ---------------------------------------------------------------------------------


@dataclass
class Hearth:
    """A running ``hearth serve`` and its Firebase Auth REST API."""

    url: str
    port: int
    process: subprocess.Popen
    data: Path
    folder: Path
    lines: list[str] = field(default_factory=list)
    http: requests.Session = field(default_factory=new_http)
    log: Optional[Output] = None

    @property
    def handler_url(self) -> str:
        """Where providers send people back to (Firebase's auth handler path)."""
        return f"{self.url}/__/auth/handler"

    def output(self) -> str:
        return "".join(self.lines)

    def wait_for_count(self, text: str, count: int, timeout: float, message: str = "") -> None:
        """Until ``text`` has appeared ``count`` times in the output (each new line wakes the wait)."""
        try:
            harness.wait_until(lambda: self.log.count(text) >= count, timeout, message or f"{count} × {text!r} in the output",
                               wake=self.log)
        except harness.WaitTimeout as error:
            raise AssertionError(f"{error}\n{self.output()}") from None

    # Raw calls.

    def post(self, method: str, body: dict, admin: bool = False) -> requests.Response:
        headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"} if admin else {}
        return self.http.post(
            f"{self.url}/identitytoolkit.googleapis.com/v1/accounts:{method}", params={"key": "x"}, json=body,
            headers=headers, timeout=TIMEOUT)

    def ok(self, method: str, body: dict, admin: bool = False) -> dict:
        response = self.post(method, body, admin=admin)
        assert response.status_code == 200, f"accounts:{method} -> {response.status_code} {response.text}"
        return response.json()

    def refused(self, method: str, body: dict, code: str, status: int = 400, admin: bool = False,
                detail: Optional[str] = None) -> dict:
        """Calls accounts:``method`` and checks that it is refused with Firebase's error shape
        and ``code``; returns the error object."""
        return assert_firebase_error(self.post(method, body, admin=admin), code, status, detail)

    def refresh(self, refresh_token: str) -> requests.Response:
        return self.http.post(
            f"{self.url}/securetoken.googleapis.com/v1/token", params={"key": "x"},
            data={"grant_type": "refresh_token", "refresh_token": refresh_token}, timeout=TIMEOUT)

    # Accounts.

    def sign_up(self, email: Optional[str] = None, password: Optional[str] = None) -> dict:
        body: dict[str, Any] = {"returnSecureToken": True}
        if email is not None:
            body.update(email=email, password=password)
        return self.ok("signUp", body)

    def sign_in_password(self, email: str, password: str) -> requests.Response:
        return self.post("signInWithPassword", {"email": email, "password": password, "returnSecureToken": True})

    def lookup(self, id_token: str) -> dict:
        users = self.ok("lookup", {"idToken": id_token})["users"]
        assert len(users) == 1
        return users[0]

    def admin_lookup(self, **identifiers) -> list[dict]:
        """Accounts matching ``localId=[...]``, ``email=[...]`` or ``federatedUserId=[...]``."""
        return self.ok("lookup", identifiers, admin=True).get("users", [])

    def account(self, uid: str) -> dict:
        found = self.admin_lookup(localId=[uid])
        assert len(found) == 1, found
        return found[0]

    def accounts_with_identity(self, provider_id: str, raw_id: str) -> list[dict]:
        return self.admin_lookup(federatedUserId=[{"providerId": provider_id, "rawId": raw_id}])

    def all_accounts(self) -> list[dict]:
        users: list[dict] = []
        token = None
        while True:
            params = {"maxResults": 1000}
            if token:
                params["nextPageToken"] = token
            response = self.http.get(
                f"{self.url}/identitytoolkit.googleapis.com/v1/projects/{PROJECT}/accounts:batchGet", params=params,
                headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=TIMEOUT)
            assert response.status_code == 200, response.text
            page = response.json()
            users += page.get("users", [])
            token = page.get("nextPageToken")
            if not token:
                return users

    def uids(self) -> set[str]:
        return {user["localId"] for user in self.all_accounts()}

    # Provider configurations (Firebase's v2 admin API).

    def set_provider_enabled(self, provider_id: str, enabled: bool) -> dict:
        response = self.http.patch(
            f"{self.url}/identitytoolkit.googleapis.com/v2/projects/{PROJECT}/oauthIdpConfigs/{provider_id}",
            params={"updateMask": "enabled"}, json={"enabled": enabled},
            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=TIMEOUT)
        assert response.status_code == 200, response.text
        assert response.json()["enabled"] is enabled
        return response.json()

    # Provider sign-in.

    def create_auth_uri(self, provider_id: str = PROVIDER_ID, continue_uri: Optional[str] = None) -> dict:
        return self.ok("createAuthUri", {"providerId": provider_id, "continueUri": continue_uri or self.handler_url})

    def sign_in_with_idp(self, request_uri: str, session_id: Optional[str], id_token: Optional[str] = None) -> requests.Response:
        body: dict[str, Any] = {"requestUri": request_uri, "returnSecureToken": True, "returnIdpCredential": True}
        if session_id is not None:
            body["sessionId"] = session_id
        if id_token is not None:
            body["idToken"] = id_token
        return self.post("signInWithIdp", body)

    def sign_in_with_id_token(self, provider_token: str, provider_id: str = PROVIDER_ID, nonce: Optional[str] = None,
                              id_token: Optional[str] = None) -> requests.Response:
        """signInWithIdp with ``postBody`` (an ID token the app got from the provider itself)."""
        post = {"id_token": provider_token, "providerId": provider_id}
        if nonce is not None:
            post["nonce"] = nonce
        body: dict[str, Any] = {
            "postBody": urlencode(post), "requestUri": "http://localhost", "returnSecureToken": True,
            "returnIdpCredential": True,
        }
        if id_token is not None:
            body["idToken"] = id_token
        return self.post("signInWithIdp", body)


def assert_firebase_error(response: requests.Response, code: str, status: int = 400, detail: Optional[str] = None) -> dict:
    """Checks Firebase's error body: ``{"error": {"code": status, "message": "CODE" or
    "CODE : detail", "errors": [{"message": same, "domain": ..., "reason": ...}]}}``."""
    assert response.status_code == status, f"expected {status} {code}, got {response.status_code} {response.text}"
    assert response.headers.get("Content-Type", "").startswith("application/json"), response.headers
    body = response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert error["code"] == status, body
    message = error["message"]
    assert message == code or message.startswith(code + " : "), f"expected {code}, got {message!r}"
    if detail is not None:
        assert detail in message, f"expected {detail!r} in {message!r}"
    assert isinstance(error["errors"], list) and len(error["errors"]) >= 1, body
    assert error["errors"][0]["message"] == message, body
    return error


def write_settings(folder: Path, settings: dict) -> Path:
    path = folder / "settings.json"
    path.write_text(json.dumps(settings, indent=2))
    return path


def launch_hearth(settings: Optional[dict], port: Optional[int] = None, rules: Optional[dict] = None) -> Hearth:
    """Starts ``hearth serve`` (not emulator mode) on ``port`` with ``settings`` written to a
    settings file, and returns once it says where it serves."""
    binary = wait_for_binary()
    folder = Path(tempfile.mkdtemp(prefix="hearth-accounts-"))
    data = folder / "data"
    port = port or free_port()
    command = [
        binary, "serve", "--port", str(port), "--data", str(data), "--admin-token", ADMIN_TOKEN, "--no-demo",
        "--project", PROJECT, "--log-level", "info",
    ]
    if settings is not None:
        command += ["--settings", str(write_settings(folder, settings))]
    if rules is not None:
        rules_path = folder / "database.rules.json"
        rules_path.write_text(json.dumps(rules))
        command += ["--rules", str(rules_path)]
    lines: list[str] = []
    hearth = HearthProcess(command[1:], binary=binary, timeout=STARTUP_SECONDS, into=lines)
    try:
        hearth.start()
    except HearthDidNotStart as error:
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"hearth serve did not start: {error}") from None
    assert hearth.port == port, "".join(lines)
    return Hearth(url=f"http://127.0.0.1:{port}", port=port, process=hearth.process, data=data, folder=folder, lines=lines,
                  log=hearth.output)


def stop_hearth(hearth: Hearth) -> None:
    harness.stop_process(hearth.process, timeout=15)
    hearth.http.close()
    shutil.rmtree(hearth.folder, ignore_errors=True)


def settings_for(port: int, smtp=None, providers: Optional[list[dict]] = None, app_name: str = APP_NAME,
                 smtp_password: str = SMTP_PASSWORD, templates: Optional[str] = None,
                 trust_certificate: bool = True) -> dict:
    """A settings file's content for a Hearth on ``port``: its public URL, the SMTP test
    server (STARTTLS, AUTH, its certificate trusted unless ``trust_certificate`` is false) and
    ``providers``."""
    auth: dict[str, Any] = {"appName": app_name}
    if smtp is not None:
        auth["email"] = {
            "from": MAIL_FROM,
            "smtp": {
                "host": smtp.host, "port": smtp.port, "security": "starttls", "username": SMTP_USERNAME,
                "password": smtp_password,
            },
        }
        if trust_certificate:
            auth["email"]["smtp"]["trustedCertificates"] = str(smtp.cert_path)
        if templates is not None:
            auth["email"]["templates"] = templates
    if providers:
        auth["providers"] = providers
    return {"publicURL": f"http://127.0.0.1:{port}", "auth": auth}


def oidc_providers(issuer: str) -> list[dict]:
    """``oidc.test`` (the test provider's client) and ``oidc.other`` (same issuer, a client ID
    the provider never issues tokens for)."""
    return [
        {"id": PROVIDER_ID, "displayName": "Test OIDC", "issuer": issuer, "clientId": CLIENT_ID, "clientSecret": CLIENT_SECRET},
        {"id": OTHER_AUDIENCE_PROVIDER_ID, "displayName": "Other client", "issuer": issuer, "clientId": OTHER_CLIENT_ID,
         "clientSecret": "OtherSecret1"},
    ]


# --- the OpenID provider's side ---------------------------------------------------------------


def follow_to_client(provider: OIDCProvider, start_url: str, user: OIDCUser,
                     session: Optional[requests.Session] = None) -> str:
    """Follows an authorization URL through the provider (its login form when ``session`` is
    not signed in there yet) and returns the provider's redirect back to the client (the
    ``Location`` that is not on the provider), without following it."""
    session = session or new_http()
    url = start_url
    for _ in range(10):
        response = session.get(url, allow_redirects=False, timeout=TIMEOUT)
        if response.status_code in (301, 302, 303, 307):
            location = urljoin(url, response.headers["Location"])
            if not location.startswith(provider.base_url + "/"):
                return location
            url = location
            continue
        assert response.status_code == 200 and urlsplit(url).path == "/login/", (
            f"unexpected answer from the provider at {url}: {response.status_code}\n{response.text[:500]}")
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', response.text).group(1)
        next_url = parse_qs(urlsplit(url).query)["next"][0]
        posted = session.post(
            url, data={"username": user.email, "password": user.password, "next": next_url, "csrfmiddlewaretoken": csrf},
            allow_redirects=False, timeout=TIMEOUT)
        assert posted.status_code == 302, f"the provider did not accept {user.email}'s login: {posted.text[:500]}"
        url = urljoin(url, posted.headers["Location"])
    raise AssertionError(f"too many redirects from {start_url}")


def query_of(url: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query, keep_blank_values=True).items()}


def with_query(url: str, **changes: Optional[str]) -> str:
    """``url`` with query parameters replaced (``None`` removes one)."""
    parts = urlsplit(url)
    query = query_of(url)
    for key, value in changes.items():
        if value is None:
            query.pop(key, None)
        else:
            query[key] = value
    return urlunsplit(parts._replace(query=urlencode(query)))


@dataclass
class ProviderRedirect:
    """A sign-in started at Hearth and taken through the provider: what the app would give
    ``accounts:signInWithIdp``."""

    session_id: str
    auth_uri: str
    request_uri: str


def provider_redirect(hearth: Hearth, provider: OIDCProvider, user: OIDCUser, provider_id: str = PROVIDER_ID,
                      browser: Optional[requests.Session] = None) -> ProviderRedirect:
    started = hearth.create_auth_uri(provider_id)
    assert started["providerId"] == provider_id
    request_uri = follow_to_client(provider, started["authUri"], user, browser)
    assert request_uri.startswith(hearth.handler_url + "?"), request_uri
    return ProviderRedirect(started["sessionId"], started["authUri"], request_uri)


def oidc_sign_in(hearth: Hearth, provider: OIDCProvider, user: OIDCUser, id_token: Optional[str] = None) -> dict:
    """The whole sign-in (or link, with ``id_token``); returns signInWithIdp's answer."""
    redirect = provider_redirect(hearth, provider, user)
    response = hearth.sign_in_with_idp(redirect.request_uri, redirect.session_id, id_token=id_token)
    assert response.status_code == 200, response.text
    return response.json()


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def provider_id_token(provider: OIDCProvider, user: OIDCUser, nonce: Optional[str]) -> str:
    """An ID token straight from the provider (the code flow done by the test itself, as an
    app using the provider's own SDK would), for ``postBody``."""
    discovery = new_http().get(provider.discovery_url, timeout=TIMEOUT).json()
    verifier, challenge = pkce_pair()
    params = {
        "client_id": provider.client_id, "redirect_uri": DIRECT_REDIRECT, "response_type": "code",
        "scope": "openid email profile", "state": secrets.token_urlsafe(8), "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    if nonce is not None:
        params["nonce"] = nonce
    location = follow_to_client(provider, discovery["authorization_endpoint"] + "?" + urlencode(params), user)
    assert location.startswith(DIRECT_REDIRECT + "?"), location
    tokens = new_http().post(discovery["token_endpoint"], data={
        "grant_type": "authorization_code", "code": query_of(location)["code"], "redirect_uri": DIRECT_REDIRECT,
        "code_verifier": verifier, "client_id": provider.client_id, "client_secret": provider.client_secret,
    }, timeout=TIMEOUT)
    assert tokens.status_code == 200, tokens.text
    return tokens.json()["id_token"]


def jwt_claims(token: str) -> dict:
    """A JWT's payload, unverified (to read what Hearth or the provider put in it)."""
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def provider_infos(account: dict) -> dict[str, dict]:
    """An account's ``providerUserInfo`` by provider ID."""
    return {info["providerId"]: info for info in account.get("providerUserInfo", [])}


# --- mail ---------------------------------------------------------------------------------


def oob_code_from(link: str) -> str:
    return query_of(link)["oobCode"]


def action_link_in(text: str, base: str) -> str:
    """The first link to ``base`` (Hearth's action page) in ``text``."""
    match = re.search(re.escape(base) + r"\?[^\s\"'<>]+", text)
    assert match, f"no link to {base} in:\n{text}"
    return match.group(0)
