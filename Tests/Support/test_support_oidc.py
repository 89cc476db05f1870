"""Checks the test OpenID Connect provider (oidc_server.py) the way Hearth's tests will use it.

Why: when a Hearth sign-in test fails, it must be Hearth's fault, not the provider's set-up.
These tests drive the provider as an independent relying party would: discovery, JWKS, the
authorization code flow with PKCE (with `requests`, and once with headless chromium through
the login form), both client authentication methods, and the ID token's RS256 signature and
claims checked with PyJWT against the published keys.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import jwt
import pytest
import requests

from oidc_server import OIDCProvider, OIDCUser, subject_for

CLIENT_ID = "hearth-test"
CLIENT_SECRET = "Sup3rSecretForTests"  # letters and digits only: see client_secret_basic
ADA = OIDCUser("ada@example.com", "correct horse battery", "Ada Lovelace")
BOB = OIDCUser("bob@example.org", "hunter22", "Bob Stone", email_verified=False)
CHROMIUM_BINARY = os.environ.get("CHROMIUM_BINARY", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
TIMEOUT = 30


class CallbackServer:
    """The relying party's redirect URI: records each callback's query parameters, so a test
    driving a real browser can wait for the code the provider sent it."""

    def __init__(self):
        self.received: list[dict[str, str]] = []
        self._changed = threading.Condition()
        callback = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                query = {key: values[0] for key, values in parse_qs(urlsplit(self.path).query).items()}
                with callback._changed:
                    callback.received.append(query)
                    callback._changed.notify_all()
                body = b"<!doctype html><title>Signed in</title><p id=done>Signed in</p>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_port}/callback"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def wait_for_state(self, state: str, timeout: float = TIMEOUT) -> dict[str, str]:
        with self._changed:
            found = self._changed.wait_for(
                lambda: next((query for query in self.received if query.get("state") == state), None), timeout,
            )
        assert found, f"no callback with state {state!r} within {timeout}s; got {self.received}"
        return found

    def close(self):
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture(scope="module")
def callback():
    server = CallbackServer()
    yield server
    server.close()


@pytest.fixture(scope="module")
def provider(callback):
    with OIDCProvider(CLIENT_ID, CLIENT_SECRET, [callback.url, "http://127.0.0.1:9/other"], [ADA, BOB]) as started:
        yield started


@pytest.fixture(scope="module")
def discovery(provider):
    response = requests.get(provider.discovery_url, timeout=TIMEOUT)
    response.raise_for_status()
    return response.json()


def pkce_pair() -> tuple[str, str]:
    """A PKCE code verifier and its S256 challenge (RFC 7636)."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def authorization_url(discovery: dict, redirect_uri: str, state: str, nonce: str, challenge: str | None) -> str:
    params = {
        "client_id": CLIENT_ID, "redirect_uri": redirect_uri, "response_type": "code",
        "scope": "openid email profile", "state": state, "nonce": nonce,
    }
    if challenge is not None:
        params.update(code_challenge=challenge, code_challenge_method="S256")
    return discovery["authorization_endpoint"] + "?" + urlencode(params)


def sign_in(session: requests.Session, start_url: str, user: OIDCUser) -> requests.Response:
    """Follows the authorization request to the login form, submits it as ``user``, and
    returns the provider's last answer (not followed: a redirect to the client, or the form)."""
    response = session.get(start_url, allow_redirects=True, timeout=TIMEOUT)
    assert urlsplit(response.url).path == "/login/", response.url
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', response.text).group(1)
    next_url = parse_qs(urlsplit(response.url).query)["next"][0]
    posted = session.post(
        response.url,
        data={"username": user.email, "password": user.password, "next": next_url, "csrfmiddlewaretoken": csrf},
        allow_redirects=False, timeout=TIMEOUT,
    )
    if posted.status_code != 302:
        return posted
    return session.get(urljoin(response.url, posted.headers["Location"]), allow_redirects=False, timeout=TIMEOUT)


def redirect_query(response: requests.Response, redirect_uri: str) -> dict[str, str]:
    assert response.status_code == 302, response.text
    location = response.headers["Location"]
    assert location.startswith(redirect_uri + "?"), location
    return {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}


def exchange(discovery: dict, code: str, verifier: str | None, redirect_uri: str, basic: bool = False,
             secret: str = CLIENT_SECRET) -> requests.Response:
    data = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}
    if verifier is not None:
        data["code_verifier"] = verifier
    if basic:
        return requests.post(discovery["token_endpoint"], data=data, auth=(CLIENT_ID, secret), timeout=TIMEOUT)
    data.update(client_id=CLIENT_ID, client_secret=secret)
    return requests.post(discovery["token_endpoint"], data=data, timeout=TIMEOUT)


def verified_claims(discovery: dict, tokens: dict, nonce: str) -> dict:
    """The ID token's claims, once its signature (against the JWKS), issuer, audience, expiry,
    nonce and at_hash have been checked."""
    keys = jwt.PyJWKSet.from_dict(requests.get(discovery["jwks_uri"], timeout=TIMEOUT).json())
    kid = jwt.get_unverified_header(tokens["id_token"])["kid"]
    key = next(key for key in keys.keys if key.key_id == kid)
    claims = jwt.decode(
        tokens["id_token"], key.key, algorithms=["RS256"], audience=CLIENT_ID, issuer=discovery["issuer"],
        options={"require": ["iss", "sub", "aud", "exp", "iat"]},
    )
    assert claims["nonce"] == nonce
    digest = hashlib.sha256(tokens["access_token"].encode()).digest()
    assert claims["at_hash"] == base64.urlsafe_b64encode(digest[:16]).rstrip(b"=").decode()
    return claims


def test_discovery_and_jwks(provider, discovery):
    assert provider.issuer == f"{provider.base_url}/openid"
    assert discovery["issuer"] == provider.issuer
    for endpoint in ("authorization", "token", "userinfo"):
        assert discovery[f"{endpoint}_endpoint"] == f"{provider.issuer}/{endpoint.replace('ization', 'ize')}"
    assert discovery["jwks_uri"] == provider.issuer + "/jwks"
    assert discovery["code_challenge_methods_supported"] == ["S256"]
    assert {"client_secret_post", "client_secret_basic"} <= set(discovery["token_endpoint_auth_methods_supported"])
    jwks = requests.get(discovery["jwks_uri"], timeout=TIMEOUT).json()
    assert [(key["kty"], key["alg"], key["use"]) for key in jwks["keys"]] == [("RSA", "RS256", "sig")]


def test_code_flow_with_pkce_gives_a_signed_id_token(provider, discovery, callback):
    verifier, challenge = pkce_pair()
    state, nonce = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
    session = requests.Session()
    answer = sign_in(session, authorization_url(discovery, callback.url, state, nonce, challenge), ADA)
    query = redirect_query(answer, callback.url)
    assert query["state"] == state

    response = exchange(discovery, query["code"], verifier, callback.url)
    assert response.status_code == 200, response.text
    tokens = response.json()
    assert tokens["token_type"].lower() == "bearer"
    claims = verified_claims(discovery, tokens, nonce)
    assert claims["sub"] == subject_for(ADA.email)
    assert (claims["email"], claims["email_verified"], claims["name"]) == (ADA.email, True, ADA.name)

    userinfo = requests.get(
        discovery["userinfo_endpoint"], headers={"Authorization": f"Bearer {tokens['access_token']}"}, timeout=TIMEOUT,
    ).json()
    assert userinfo["sub"] == claims["sub"]
    assert (userinfo["email"], userinfo["email_verified"], userinfo["name"]) == (ADA.email, True, ADA.name)
    assert (userinfo["given_name"], userinfo["family_name"]) == ("Ada", "Lovelace")

    # A code works once.
    again = exchange(discovery, query["code"], verifier, callback.url)
    assert (again.status_code, again.json()["error"]) == (400, "invalid_grant")

    # The provider remembers the sign-in: a second request goes straight back to the client.
    state = secrets.token_urlsafe(16)
    answer = session.get(authorization_url(discovery, callback.url, state, nonce, pkce_pair()[1]),
                         allow_redirects=False, timeout=TIMEOUT)
    assert redirect_query(answer, callback.url)["state"] == state


def test_client_secret_basic_and_wrong_secrets(discovery, callback):
    def fresh_code():
        verifier, challenge = pkce_pair()
        answer = sign_in(requests.Session(), authorization_url(discovery, callback.url, "s", "n", challenge), ADA)
        return redirect_query(answer, callback.url)["code"], verifier

    code, verifier = fresh_code()
    wrong = exchange(discovery, code, verifier, callback.url, basic=True, secret="wrong")
    assert (wrong.status_code, wrong.json()["error"]) == (400, "invalid_client")
    right = exchange(discovery, code, verifier, callback.url, basic=True)
    assert right.status_code == 200, right.text
    assert verified_claims(discovery, right.json(), "n")["email"] == ADA.email

    code, verifier = fresh_code()
    wrong = exchange(discovery, code, verifier, callback.url, secret="wrong")
    assert (wrong.status_code, wrong.json()["error"]) == (400, "invalid_client")


def test_pkce_is_required_and_checked(discovery, callback):
    # Refused before any sign-in: the request itself is invalid.
    answer = requests.get(authorization_url(discovery, callback.url, "no-pkce", "n", None),
                          allow_redirects=False, timeout=TIMEOUT)
    assert redirect_query(answer, callback.url) == {
        "error": "invalid_request", "error_description": "The request is otherwise malformed", "state": "no-pkce",
    }

    verifier, challenge = pkce_pair()
    answer = sign_in(requests.Session(), authorization_url(discovery, callback.url, "pkce", "n", challenge), ADA)
    code = redirect_query(answer, callback.url)["code"]
    for wrong_verifier in (None, pkce_pair()[0]):
        refused = exchange(discovery, code, wrong_verifier, callback.url)
        assert (refused.status_code, refused.json()["error"]) == (400, "invalid_grant")
    assert exchange(discovery, code, verifier, callback.url).status_code == 200


def test_unverified_email_and_wrong_password(discovery, callback):
    verifier, challenge = pkce_pair()
    answer = sign_in(requests.Session(), authorization_url(discovery, callback.url, "s", "n", challenge), BOB)
    tokens = exchange(discovery, redirect_query(answer, callback.url)["code"], verifier, callback.url).json()
    claims = verified_claims(discovery, tokens, "n")
    assert (claims["email"], claims["email_verified"], claims["name"]) == (BOB.email, False, BOB.name)

    impostor = OIDCUser(ADA.email, "not the password", ADA.name)
    answer = sign_in(requests.Session(), authorization_url(discovery, callback.url, "s", "n", challenge), impostor)
    assert answer.status_code == 200 and 'id="login-error"' in answer.text


def test_headless_chromium_signs_in_through_the_form(provider, discovery, callback):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM_BINARY
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        verifier, challenge = pkce_pair()
        state, nonce = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
        driver.get(authorization_url(discovery, callback.url, state, nonce, challenge))
        driver.find_element(By.NAME, "username").send_keys(ADA.email)
        driver.find_element(By.NAME, "password").send_keys(ADA.password)
        driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        query = callback.wait_for_state(state)
    finally:
        driver.quit()
    tokens = exchange(discovery, query["code"], verifier, callback.url).json()
    assert verified_claims(discovery, tokens, nonce)["email"] == ADA.email
