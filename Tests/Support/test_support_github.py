"""Checks the GitHub Enterprise Server stand-in (github_server.py) against what GitHub documents,
driving it with `requests` as an OAuth app would: the web application flow with PKCE, the
token endpoint's answers and errors (HTTP 200 with an ``error``, in JSON, XML or form encoding),
the REST API's ``/user`` and ``/user/emails``, and the redirect URL rules.

Why: when a Hearth GitHub sign-in test fails, it must be Hearth's fault, not the stand-in's.
"""

from __future__ import annotations

import http.client
import re
import secrets
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import requests

from github_server import (
    READY_PREFIX, SESSION_COOKIE, GitHubEmail, GitHubServer, GitHubUser, redirect_uri_matches, s256,
)

CLIENT_ID = "Iv1.standin0001"
CLIENT_SECRET = "standin-secret-0123456789abcdef"
CALLBACK = "http://127.0.0.1:9/app/callback"
TIMEOUT = 30

OCTOCAT = GitHubUser(
    "octocat", "correct horse", 583231, "The Octocat",
    emails=(GitHubEmail("octo.work@example.com", verified=True),
            GitHubEmail("octocat@example.com", primary=True, verified=True),
            GitHubEmail("octo.old@example.com", verified=False)),
    public_email="octo.work@example.com")
NONAME = GitHubUser("noname", "pw-noname", 1001, None, emails=(GitHubEmail("noname@example.com", primary=True),))
UNVERIFIED = GitHubUser("unverified", "pw-unverified", 1002, "Una Verified",
                        emails=(GitHubEmail("una@example.com", primary=True, verified=False),))


def new_http() -> requests.Session:
    session = requests.Session()
    session.trust_env = False
    return session


def query_of(url: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query, keep_blank_values=True).items()}


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    return verifier, s256(verifier)


@pytest.fixture(scope="module")
def github():
    with GitHubServer(CLIENT_ID, CLIENT_SECRET, [CALLBACK], [OCTOCAT, NONAME, UNVERIFIED]) as server:
        yield server


def authorize_url(github: GitHubServer, **overrides: Optional[str]) -> str:
    params = {"client_id": CLIENT_ID, "redirect_uri": CALLBACK, "scope": "read:user user:email",
              "state": secrets.token_urlsafe(12)}
    for key, value in overrides.items():
        if value is None:
            params.pop(key, None)
        else:
            params[key] = value
    return f"{github.url}/login/oauth/authorize?{urlencode(params)}"


def form_token(page: str) -> str:
    return re.search(r'name="authenticity_token" value="([^"]+)"', page).group(1)


def sign_in(github: GitHubServer, url: str, user: GitHubUser, browser: Optional[requests.Session] = None,
            button: str = "1", password: Optional[str] = None) -> requests.Response:
    """Opens ``url`` and submits the page (unless GitHub redirects at once); returns the
    final redirect or page, not followed."""
    browser = browser or new_http()
    page = browser.get(url, allow_redirects=False, timeout=TIMEOUT)
    if page.status_code == 302:
        return page
    assert page.status_code == 200, page.text
    form = {"authenticity_token": form_token(page.text), "authorize": button}
    if 'name="password"' in page.text:
        form.update(login=user.login, password=user.password if password is None else password)
    return browser.post(f"{github.url}/login/oauth/authorize", data=form, allow_redirects=False, timeout=TIMEOUT)


def code_for(github: GitHubServer, user: GitHubUser, challenge: Optional[str] = None, state: str = "st8") -> str:
    extra = {"code_challenge": challenge, "code_challenge_method": "S256"} if challenge else {}
    done = sign_in(github, authorize_url(github, state=state, **extra), user)
    assert done.status_code == 302, done.text
    query = query_of(done.headers["Location"])
    assert query["state"] == state
    return query["code"]


def exchange(github: GitHubServer, code: str, verifier: Optional[str] = None, accept: str = "application/json",
             **overrides: str) -> requests.Response:
    form = {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, "code": code, "redirect_uri": CALLBACK}
    if verifier is not None:
        form["code_verifier"] = verifier
    form.update(overrides)
    return new_http().post(f"{github.url}/login/oauth/access_token", data=form, headers={"Accept": accept}, timeout=TIMEOUT)


def api(github: GitHubServer, path: str, token: Optional[str], scheme: str = "Bearer", **headers) -> requests.Response:
    sent = {"Accept": "application/vnd.github+json", **headers}
    if token is not None:
        sent["Authorization"] = f"{scheme} {token}"
    return new_http().get(github.api_url + path, headers=sent, timeout=TIMEOUT)


def test_web_flow_with_pkce_gives_a_token_for_the_user_api(github):
    verifier, challenge = pkce()
    state = secrets.token_urlsafe(12)
    browser = new_http()
    url = authorize_url(github, state=state, code_challenge=challenge, code_challenge_method="S256")
    page = browser.get(url, allow_redirects=False, timeout=TIMEOUT)
    assert page.status_code == 200 and page.headers["Content-Type"].startswith("text/html")
    for needed in ('name="login"', 'name="password"', 'id="authorize"', 'id="cancel"', 'name="authenticity_token"'):
        assert needed in page.text

    done = browser.post(f"{github.url}/login/oauth/authorize", allow_redirects=False, timeout=TIMEOUT, data={
        "authenticity_token": form_token(page.text), "login": OCTOCAT.login, "password": OCTOCAT.password, "authorize": "1"})
    assert done.status_code == 302
    location = done.headers["Location"]
    assert location.startswith(CALLBACK + "?")
    back = query_of(location)
    assert set(back) == {"code", "state"} and back["state"] == state
    assert re.fullmatch(r"[0-9a-f]{20}", back["code"])

    answer = exchange(github, back["code"], verifier)
    assert answer.status_code == 200 and answer.headers["Content-Type"].startswith("application/json")
    tokens = answer.json()
    assert set(tokens) == {"access_token", "token_type", "scope"}
    assert tokens["token_type"] == "bearer" and tokens["scope"] == "read:user,user:email"
    assert re.fullmatch(r"gho_[A-Za-z0-9]{36}", tokens["access_token"])

    user = api(github, "/user", tokens["access_token"])
    assert user.status_code == 200, user.text
    profile = user.json()
    assert (profile["login"], profile["id"], profile["name"]) == ("octocat", 583231, "The Octocat")
    assert isinstance(profile["id"], int)
    assert profile["email"] == "octo.work@example.com"  # the public email, not the primary one
    assert profile["avatar_url"] == f"{github.url}/avatars/u/583231?v=4"
    assert profile["type"] == "User" and profile["html_url"] == f"{github.url}/octocat"
    assert user.headers["X-OAuth-Scopes"] == "read:user, user:email"

    emails = api(github, "/user/emails", tokens["access_token"])
    assert emails.status_code == 200, emails.text
    assert emails.json() == [
        {"email": "octocat@example.com", "primary": True, "verified": True, "visibility": "private"},
        {"email": "octo.work@example.com", "primary": False, "verified": True, "visibility": None},
        {"email": "octo.old@example.com", "primary": False, "verified": False, "visibility": None},
    ]
    assert "user:email" in emails.headers["X-Accepted-OAuth-Scopes"]

    # The browser is signed in and the app authorized for these scopes: straight back next time.
    again = browser.get(authorize_url(github, state="again"), allow_redirects=False, timeout=TIMEOUT)
    assert again.status_code == 302 and query_of(again.headers["Location"])["state"] == "again"
    assert SESSION_COOKIE in browser.cookies
    # More scopes than granted: the page again, this time without the password fields.
    more = browser.get(authorize_url(github, scope="read:user user:email repo"), allow_redirects=False, timeout=TIMEOUT)
    assert more.status_code == 200 and 'name="password"' not in more.text and 'id="authorize"' in more.text


def test_token_endpoint_answers_in_the_format_asked_for(github):
    default = exchange(github, code_for(github, OCTOCAT), accept="*/*")
    assert default.headers["Content-Type"].startswith("application/x-www-form-urlencoded")
    fields = parse_qs(default.text)
    assert fields["token_type"] == ["bearer"] and fields["access_token"][0].startswith("gho_")
    assert fields["scope"] == ["read:user,user:email"]

    xml = exchange(github, code_for(github, OCTOCAT), accept="application/xml")
    assert xml.headers["Content-Type"].startswith("application/xml")
    assert re.fullmatch(r"<OAuth>(<(access_token|token_type|scope)>[^<]*</\2>){3}</OAuth>", xml.text), xml.text

    error = exchange(github, "0" * 20, accept="*/*")
    assert error.status_code == 200 and parse_qs(error.text)["error"] == ["bad_verification_code"]


def test_codes_are_single_use_expire_and_belong_to_their_pkce_verifier(github):
    verifier, challenge = pkce()
    code = code_for(github, OCTOCAT, challenge)

    wrong = exchange(github, code, secrets.token_urlsafe(48))
    assert wrong.status_code == 200 and wrong.json()["error"] == "bad_verification_code"
    missing = exchange(github, code)
    assert missing.status_code == 200 and missing.json()["error"] == "bad_verification_code"

    first = exchange(github, code, verifier)
    assert "access_token" in first.json(), first.text
    used = exchange(github, code, verifier)
    assert used.status_code == 200
    assert used.json() == {
        "error": "bad_verification_code", "error_description": "The code passed is incorrect or expired.",
        "error_uri": "/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#bad-verification-code",
    }
    assert exchange(github, "not-a-code").json()["error"] == "bad_verification_code"

    # Without PKCE (GitHub does not require it) no verifier is asked for.
    assert "access_token" in exchange(github, code_for(github, OCTOCAT)).json()

    # An expired code: the server's clock is moved past the code's lifetime (no waiting).
    now = [time.monotonic()]
    with GitHubServer(CLIENT_ID, CLIENT_SECRET, [CALLBACK], [OCTOCAT], code_lifetime=0.2, clock=lambda: now[0]) as short:
        stale = code_for(short, OCTOCAT)
        now[0] += 0.5
        assert exchange(short, stale).json()["error"] == "bad_verification_code"


def test_client_credentials_and_redirect_uri_are_checked_at_the_token_endpoint(github):
    code = code_for(github, OCTOCAT)
    bad_secret = exchange(github, code, client_secret="nope")
    assert bad_secret.status_code == 200 and bad_secret.json()["error"] == "incorrect_client_credentials"
    assert exchange(github, code, client_id="Iv1.other").json()["error"] == "incorrect_client_credentials"
    moved = exchange(github, code, redirect_uri=CALLBACK + "/elsewhere")
    assert moved.status_code == 200 and moved.json()["error"] == "redirect_uri_mismatch"

    # The refusals above did not use the code up; HTTP Basic client authentication works too.
    basic = new_http().post(f"{github.url}/login/oauth/access_token", data={"code": code, "redirect_uri": CALLBACK},
                        auth=(CLIENT_ID, CLIENT_SECRET), headers={"Accept": "application/json"}, timeout=TIMEOUT)
    assert "access_token" in basic.json(), basic.text


def test_cancel_wrong_password_unknown_client_and_bad_pkce_at_the_authorization_endpoint(github):
    cancelled = sign_in(github, authorize_url(github, state="xyz"), OCTOCAT, button="0")
    assert cancelled.status_code == 302
    assert cancelled.headers["Location"].startswith(CALLBACK + "?")
    assert query_of(cancelled.headers["Location"]) == {
        "error": "access_denied", "error_description": "The user has denied your application access.",
        "error_uri": "/apps/building-integrations/setting-up-and-registering-oauth-apps/"
                     "troubleshooting-authorization-request-errors/#access-denied",
        "state": "xyz",
    }

    wrong = sign_in(github, authorize_url(github), OCTOCAT, password="wrong")
    assert wrong.status_code == 200 and "Incorrect username or password." in wrong.text
    assert "Location" not in wrong.headers

    # A form token is single-use.
    browser = new_http()
    page = browser.get(authorize_url(github), timeout=TIMEOUT)
    form = {"authenticity_token": form_token(page.text), "login": OCTOCAT.login, "password": OCTOCAT.password,
            "authorize": "1"}
    assert browser.post(f"{github.url}/login/oauth/authorize", data=form, allow_redirects=False, timeout=TIMEOUT).status_code == 302
    assert browser.post(f"{github.url}/login/oauth/authorize", data=form, allow_redirects=False, timeout=TIMEOUT).status_code == 422

    unknown = new_http().get(authorize_url(github, client_id="Iv1.unknown"), allow_redirects=False, timeout=TIMEOUT)
    assert unknown.status_code == 404

    _, challenge = pkce()
    for extra in ({"code_challenge": challenge, "code_challenge_method": "plain"},
                  {"code_challenge": "short", "code_challenge_method": "S256"},
                  {"code_challenge_method": "S256"}):
        refused = new_http().get(authorize_url(github, state="p", **extra), allow_redirects=False, timeout=TIMEOUT)
        assert refused.status_code == 302
        assert query_of(refused.headers["Location"])["error"] == "invalid_request"
        assert query_of(refused.headers["Location"])["state"] == "p"


def test_redirect_uri_rules_are_githubs():
    # The examples of GitHub's "Redirect URLs" section.
    callback = "http://example.com/path"
    for good in ("http://example.com/path", "http://example.com/path/subdir/other", "http://oauth.example.com/path",
                 "http://oauth.example.com/path/subdir/other"):
        assert redirect_uri_matches(callback, good), good
    for bad in ("http://example.com/bar", "http://example.com/", "http://example.com:8080/path",
                "http://oauth.example.com:8080/path", "http://example.org", "http://example.com/pathology",
                "https://example.com/path"):
        assert not redirect_uri_matches(callback, bad), bad
    # Loopback callbacks: any port.
    assert redirect_uri_matches("http://127.0.0.1/path", "http://127.0.0.1:1234/path")
    assert not redirect_uri_matches("http://127.0.0.1/path", "http://127.0.0.2:1234/path")


def test_mismatched_redirect_uri_goes_to_the_registered_callback_with_an_error(github):
    answer = new_http().get(authorize_url(github, redirect_uri="http://127.0.0.1:9/other", state="s1"),
                        allow_redirects=False, timeout=TIMEOUT)
    assert answer.status_code == 302
    location = answer.headers["Location"]
    assert location.startswith(CALLBACK + "?")
    assert query_of(location)["error"] == "redirect_uri_mismatch" and query_of(location)["state"] == "s1"
    # Left out, the registered callback is used.
    done = sign_in(github, authorize_url(github, redirect_uri=None), OCTOCAT)
    assert done.headers["Location"].startswith(CALLBACK + "?code=")


def test_user_api_refuses_missing_bad_and_revoked_tokens(github):
    token = github.issue_token("octocat")
    assert api(github, "/user", token).status_code == 200
    assert api(github, "/user", token, scheme="token").json()["login"] == "octocat"

    missing = api(github, "/user", None)
    assert missing.status_code == 401 and missing.json()["message"] == "Requires authentication"
    for bad in ("gho_" + "x" * 36, ""):
        refused = api(github, "/user", bad)
        assert refused.status_code == 401 and refused.json()["message"] == "Bad credentials"
        assert refused.headers["Content-Type"].startswith("application/json")
    assert api(github, "/user/emails", "gho_nope").status_code == 401

    # GitHub refuses API requests without a User-Agent (urllib3 would add one: http.client does not).
    connection = http.client.HTTPConnection(urlsplit(github.url).hostname, urlsplit(github.url).port, timeout=TIMEOUT)
    try:
        connection.request("GET", "/api/v3/user", headers={"Authorization": f"Bearer {token}"})
        no_agent = connection.getresponse()
        assert no_agent.status == 403 and b"User-Agent" in no_agent.read()
    finally:
        connection.close()

    github.revoke(token)
    assert api(github, "/user", token).json()["message"] == "Bad credentials"


def test_emails_need_the_user_email_scope(github):
    narrow = github.issue_token("octocat", scopes=("read:user",))
    hidden = api(github, "/user/emails", narrow)
    assert hidden.status_code == 404 and hidden.json()["message"] == "Not Found"
    assert api(github, "/user", narrow).status_code == 200
    broad = github.issue_token("octocat", scopes=("user",))
    assert api(github, "/user/emails", broad).status_code == 200
    paged = api(github, "/user/emails?per_page=1&page=2", broad)
    assert [entry["email"] for entry in paged.json()] == ["octo.work@example.com"]


def test_users_without_name_public_email_or_verified_primary(github):
    token = github.issue_token("noname")
    profile = api(github, "/user", token).json()
    assert profile["name"] is None and profile["email"] is None and profile["login"] == "noname"

    # GitHub issues no token to a user whose primary email is unverified...
    code = code_for(github, UNVERIFIED)
    refused = exchange(github, code)
    assert refused.status_code == 200 and refused.json()["error"] == "unverified_user_email"
    assert exchange(github, code).json()["error"] == "bad_verification_code"  # and the code is spent
    # ...but a token issued earlier still works, and shows the unverified primary address.
    earlier = github.issue_token("unverified")
    assert api(github, "/user/emails", earlier).json() == [
        {"email": "una@example.com", "primary": True, "verified": False, "visibility": "private"}]

    with GitHubServer(CLIENT_ID, CLIENT_SECRET, [CALLBACK], [UNVERIFIED], refuse_unverified_primary_email=False) as lenient:
        assert "access_token" in exchange(lenient, code_for(lenient, UNVERIFIED)).json()


def test_requests_are_recorded(github):
    verifier, challenge = pkce()
    before = len(github.token_requests)
    exchange(github, code_for(github, OCTOCAT, challenge), verifier)
    sent = github.token_requests[before:]
    assert len(sent) == 1
    assert sent[0].form["code_verifier"] == verifier and sent[0].headers["accept"] == "application/json"


def test_user_configuration_is_checked():
    with pytest.raises(ValueError):
        GitHubUser("two", "pw", 5, emails=(GitHubEmail("a@x.com", primary=True), GitHubEmail("b@x.com", primary=True)))
    with pytest.raises(ValueError):
        GitHubUser("pub", "pw", 6, emails=(GitHubEmail("a@x.com", primary=True, verified=False),), public_email="a@x.com")
    assert GitHubUser.from_arg(OCTOCAT.to_arg()).primary_email == OCTOCAT.primary_email


def test_command_line_serves_until_terminated():
    command = [sys.executable, str(Path(__file__).with_name("github_server.py")), "--port", "0", "--client-id", CLIENT_ID,
               "--client-secret", CLIENT_SECRET, "--callback-url", CALLBACK, "--user", OCTOCAT.to_arg(), "--exit-with-stdin"]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        assert line.startswith(READY_PREFIX), line
        url = line[len(READY_PREFIX):].strip()
        page = new_http().get(f"{url}/login/oauth/authorize?" + urlencode({"client_id": CLIENT_ID}), timeout=TIMEOUT)
        assert page.status_code == 200 and 'name="password"' in page.text
    finally:
        process.stdin.close()  # --exit-with-stdin: the end of stdin stops it
        assert process.wait(timeout=15) == 0
        process.stdout.close()
