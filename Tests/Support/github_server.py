"""A GitHub Enterprise Server stand-in on loopback, for Hearth's "sign in with GitHub" tests.

GitHub cannot be reached from the test machines, so this serves the parts of GitHub that a
sign-in touches, as GitHub documents them (docs.github.com, "Authorizing OAuth apps",
"Troubleshooting authorization request errors", "Troubleshooting OAuth app access token
request errors", and the REST API's "Get the authenticated user" and "List email addresses for
the authenticated user"), at GitHub Enterprise Server's paths (the web at the root, the REST API
under ``/api/v3``), so a client configured with ``githubURL = server.url`` finds everything:

- ``GET /login/oauth/authorize``: ``client_id`` (an unknown one gets a 404 page), ``redirect_uri``
  (optional: the first registered callback URL when left out; otherwise it must match a
  registered callback URL as GitHub's "Redirect URLs" section says: same scheme, the same host or
  a subdomain of it, the same port (any port for a loopback callback), and the same path or a
  subdirectory of it; a mismatch is sent to the registered callback URL with
  ``error=redirect_uri_mismatch``), ``scope`` (space- or comma-separated), ``state``, ``login``
  (prefills the username), and PKCE: ``code_challenge`` (43 characters) with
  ``code_challenge_method=S256``; ``plain`` is refused, as GitHub supports only S256 (answered
  with ``error=invalid_request`` at the redirect URI, as RFC 7636 4.4.1 says: GitHub does not
  document its answer). Then a small page: username and password fields (absent when the browser
  is already signed in here), a "Sign in" (or "Authorize") button and a "Cancel" button. The
  form posts back to ``/login/oauth/authorize`` with an ``authenticity_token`` that names the
  request kept on the server (so its parameters cannot be altered in the form). Success redirects
  to ``redirect_uri?code=…&state=…``; Cancel redirects with ``error=access_denied``,
  ``error_description`` and ``error_uri`` (and ``state``); a wrong password shows the page again
  with "Incorrect username or password.". A browser that signed in here and already granted the
  client those scopes is sent back at once, as GitHub does for an app already authorized.
- ``POST /login/oauth/access_token``: ``client_id`` and ``client_secret`` (form fields, a JSON
  body, or HTTP Basic), ``code``, ``redirect_uri`` (optional; when given it must equal the one the
  code was issued for), ``code_verifier`` (required when the code was issued with a challenge).
  Answers ``access_token``, ``scope`` (comma-separated) and ``token_type: bearer``, as JSON with
  ``Accept: application/json``, XML with ``Accept: application/xml``, and form-encoded otherwise.
  Errors are answered with HTTP 200 as GitHub does: ``incorrect_client_credentials``,
  ``redirect_uri_mismatch``, ``bad_verification_code`` (unknown, expired after 10 minutes,
  already used, another client's, or a PKCE verifier that does not match: GitHub does not
  document its PKCE error, this one is the code error it does document), and
  ``unverified_user_email`` for a user whose primary email is not verified (GitHub refuses to
  issue those users a token; ``refuse_unverified_primary_email=False`` turns that off).
  Codes are single-use. Tokens look like GitHub's (``gho_`` and 36 letters and digits).
- ``GET /api/v3/user``: with ``Authorization: Bearer <token>`` (or ``token <token>``), the user:
  ``login``, ``id`` (an integer), ``node_id``, ``avatar_url``, ``html_url``, ``type``,
  ``site_admin``, ``name`` (or null), ``email`` (the public email, or null), ``created_at``...
  Without a token: 401 ``Requires authentication``; with an unknown or revoked one: 401
  ``{"message": "Bad credentials", ...}``. Like GitHub, a request without ``User-Agent`` is
  refused (403). Responses carry ``X-OAuth-Scopes`` and ``X-Accepted-OAuth-Scopes``.
- ``GET /api/v3/user/emails``: the user's addresses as ``{email, primary, verified, visibility}``
  (``visibility`` is ``public`` or ``private`` for the primary address, null for the others), for
  a token with the ``user:email`` or ``user`` scope; without it, 404 ``Not Found`` (GitHub hides
  what a token may not see). ``per_page`` (default 30, at most 100) and ``page`` paginate.

In a test (the server runs in threads of the test process)::

    with GitHubServer(client_id="Iv1.hearth", client_secret="s3cret",
                      callback_urls=["http://127.0.0.1:9000/__/auth/handler"],
                      users=[GitHubUser("octocat", "pw", 583231, "The Octocat",
                                        emails=[GitHubEmail("octo@example.com", primary=True)])]) as github:
        github.url                          # http://127.0.0.1:PORT (githubURL)
        github.issue_token("octocat")       # a token GitHub issued earlier (a PAT, say)
        github.token_requests               # what clients sent to the token endpoint

From the command line (for tests not written in Python)::

    .venv/bin/python Tests/Support/github_server.py --port 0 --client-id Iv1.hearth \\
        --client-secret s3cret --callback-url http://127.0.0.1:9000/__/auth/handler \\
        --user 'octocat:pw:583231:The Octocat:octo@example.com' \\
        --user 'hubot:pw2:2:Hubot:hubot@example.com!unverified'

prints ``GITHUB READY http://127.0.0.1:PORT`` once it accepts connections and serves until
SIGTERM, SIGINT, or (with ``--exit-with-stdin``) the end of its standard input.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import html
import ipaddress
import json
import secrets
import signal
import socketserver
import string
import sys
import threading
import time
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, Iterable, Optional
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit
from xml.sax.saxutils import escape as xml_escape

HOST = "127.0.0.1"
READY_PREFIX = "GITHUB READY "
API_PREFIX = "/api/v3"
CODE_LIFETIME = 600  # seconds: "The temporary code will expire after 10 minutes."
# Cookies are not isolated by port: a name no other server on 127.0.0.1 uses.
SESSION_COOKIE = "hearth_test_github_session"
DOCS = "https://docs.github.com"
ACCESS_DENIED_DESCRIPTION = "The user has denied your application access."
REDIRECT_MISMATCH_DESCRIPTION = "The redirect_uri MUST match the registered callback URL for this application."
AUTHORIZE_ERRORS_URI = "/apps/building-integrations/setting-up-and-registering-oauth-apps/troubleshooting-authorization-request-errors/"
TOKEN_ERRORS_URI = "/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/"
# What a scope implies, for the scope checks of the endpoints served here.
IMPLIED_SCOPES = {"user": {"read:user", "user:email", "user:follow"}}


@dataclass(frozen=True)
class GitHubEmail:
    """One of a user's addresses. At most one is ``primary``."""

    email: str
    primary: bool = False
    verified: bool = True


@dataclass(frozen=True)
class GitHubUser:
    """A GitHub account: ``login`` and ``password`` for the login form, the numeric ``id``,
    ``name`` (None: not set), its ``emails``, and ``public_email`` (the profile's public address,
    one of its verified emails, or None). ``avatar_url`` defaults to the server's
    ``/avatars/u/<id>?v=4``."""

    login: str
    password: str
    id: int
    name: Optional[str] = None
    emails: tuple[GitHubEmail, ...] = ()
    public_email: Optional[str] = None
    avatar_url: Optional[str] = None

    def __post_init__(self):
        object.__setattr__(self, "emails", tuple(self.emails))
        if sum(1 for entry in self.emails if entry.primary) > 1:
            raise ValueError(f"{self.login} has more than one primary email")
        if self.public_email is not None and not any(
            entry.email == self.public_email and entry.verified for entry in self.emails
        ):
            raise ValueError(f"{self.login}'s public email must be one of its verified emails")
        if not isinstance(self.id, int) or self.id <= 0:
            raise ValueError("a GitHub user ID is a positive integer")

    @property
    def primary_email(self) -> Optional[GitHubEmail]:
        return next((entry for entry in self.emails if entry.primary), None)

    def to_arg(self) -> str:
        """``LOGIN:PASSWORD:ID:NAME:EMAIL[!unverified][,EMAIL...]``: the first email is primary."""
        ordered = sorted(self.emails, key=lambda entry: not entry.primary)
        emails = ",".join(entry.email + ("" if entry.verified else "!unverified") for entry in ordered)
        return f"{self.login}:{self.password}:{self.id}:{self.name or ''}:{emails}"

    @classmethod
    def from_arg(cls, text: str) -> "GitHubUser":
        parts = text.split(":")
        if len(parts) != 5 or not parts[0] or not parts[1] or not parts[2].isdigit():
            raise argparse.ArgumentTypeError(f"expected LOGIN:PASSWORD:ID:NAME:EMAILS, got {text!r}")
        emails = []
        for index, item in enumerate(filter(None, parts[4].split(","))):
            address, _, flag = item.partition("!")
            emails.append(GitHubEmail(address, primary=index == 0, verified=flag != "unverified"))
        return cls(parts[0], parts[1], int(parts[2]), parts[3] or None, tuple(emails))


@dataclass
class _Grant:
    """An authorization code: who, for which client, where it was sent, and its PKCE challenge."""

    login: str
    client_id: str
    redirect_uri: str
    scopes: tuple[str, ...]
    challenge: Optional[str]
    expires: float
    used: bool = False


@dataclass
class _PendingAuthorization:
    """An authorization request waiting for the form (under its ``authenticity_token``)."""

    client_id: str
    redirect_uri: str
    scopes: tuple[str, ...]
    state: Optional[str]
    challenge: Optional[str]
    login_hint: str
    expires: float


@dataclass
class RecordedRequest:
    """A request the server received (``form`` holds the parsed body's fields)."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    form: dict[str, str] = field(default_factory=dict)


def _random_token(alphabet: str, length: int) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


def s256(verifier: str) -> str:
    """RFC 7636's S256 code challenge of ``verifier``."""
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode()


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def redirect_uri_matches(callback: str, redirect: str) -> bool:
    """GitHub's rule ("Redirect URLs"): the redirect URL's host (excluding sub-domains) and port
    must exactly match the callback URL's, and its path must reference a subdirectory of the
    callback URL's path; a loopback callback allows any port."""
    want, got = urlsplit(callback), urlsplit(redirect)
    if got.scheme != want.scheme or not got.hostname or got.fragment or got.username or got.password:
        return False
    want_host, got_host = want.hostname.lower(), got.hostname.lower()
    if got_host != want_host and not got_host.endswith("." + want_host):
        return False
    if not (_is_loopback(want_host) and got_host == want_host) and got.port != want.port:
        return False
    base = want.path or "/"
    path = got.path or "/"
    return path == base or path.startswith(base.rstrip("/") + "/")


def with_parameters(url: str, parameters: list[tuple[str, str]]) -> str:
    """``url`` with ``parameters`` added to its query (GitHub keeps the redirect URI's own)."""
    parts = urlsplit(url)
    query = parts.query + ("&" if parts.query else "") + urlencode(parameters)
    return urlunsplit(parts._replace(query=query))


def _scopes(text: Optional[str]) -> tuple[str, ...]:
    found: list[str] = []
    for scope in (text or "").replace(",", " ").split():
        if scope not in found:
            found.append(scope)
    return tuple(found)


def _has_scope(granted: Iterable[str], wanted: str) -> bool:
    granted = set(granted)
    return wanted in granted or any(wanted in IMPLIED_SCOPES.get(scope, ()) for scope in granted)


PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>{title} - GitHub Enterprise (test)</title></head>
<body>
<h1>{title}</h1>
<p id="client">{client} wants to access your account ({scopes}).</p>
{error}
<form method="post" action="/login/oauth/authorize">
  <input type="hidden" name="authenticity_token" value="{token}">
{fields}
  <p><button type="submit" name="authorize" value="1" id="authorize">{submit}</button>
     <button type="submit" name="authorize" value="0" id="cancel">Cancel</button></p>
</form>
</body>
</html>
"""

LOGIN_FIELDS = """  <p><label>Username or email address <input type="text" name="login" id="login_field" value="{login}" autofocus></label></p>
  <p><label>Password <input type="password" name="password" id="password"></label></p>"""


class GitHubServer:
    """The stand-in; a context manager. ``url`` is what Hearth's ``githubURL`` names.

    ``callback_urls``: the OAuth app's registered callback URL (GitHub Apps may have up to ten;
    each is matched as GitHub matches one). ``users``: the accounts. ``port`` 0 picks a free one.
    ``clock``: the time codes and pending sign-ins expire by (``time.monotonic``; a test that
    checks expiry gives a clock of its own and moves it on instead of waiting).
    """

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        callback_urls: Iterable[str],
        users: Iterable[GitHubUser] = (),
        *,
        port: int = 0,
        code_lifetime: float = CODE_LIFETIME,
        refuse_unverified_primary_email: bool = True,
        clock=time.monotonic,
    ):
        self.client_id = client_id
        self.client_secret = client_secret
        self.callback_urls = list(callback_urls)
        if not self.callback_urls:
            raise ValueError("an OAuth app has a callback URL")
        self.users: dict[str, GitHubUser] = {}
        for user in users:
            self.add_user(user)
        self.port = port
        self.code_lifetime = code_lifetime
        self.clock = clock
        self.refuse_unverified_primary_email = refuse_unverified_primary_email
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._codes: dict[str, _Grant] = {}
        self._tokens: dict[str, tuple[str, tuple[str, ...]]] = {}  # token -> (login, scopes)
        self._token_apps: dict[str, Optional[str]] = {}  # token -> the OAuth app (client ID) it was issued to
        self._pending: dict[str, _PendingAuthorization] = {}
        self._sessions: dict[str, str] = {}  # session cookie -> login
        self._granted: dict[tuple[str, str], set[str]] = {}  # (login, client_id) -> scopes
        self._server: Optional[HTTPServer] = None
        self._thread: Optional[threading.Thread] = None

    # --- set-up and inspection -----------------------------------------------------------

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (GitHub Enterprise Server's address; the API is at ``/api/v3``)."""
        assert self._server is not None, "the server is not started"
        return f"http://{HOST}:{self._server.server_port}"

    @property
    def api_url(self) -> str:
        return self.url + API_PREFIX

    def add_user(self, user: GitHubUser) -> None:
        if any(known.id == user.id and known.login != user.login for known in self.users.values()):
            raise ValueError(f"user ID {user.id} is taken")
        self.users[user.login] = user

    def avatar_url(self, user: GitHubUser) -> str:
        return user.avatar_url or f"{self.url}/avatars/u/{user.id}?v=4"

    def issue_token(self, login: str, scopes: Iterable[str] = ("read:user", "user:email"),
                    client_id: Optional[str] = "this app") -> str:
        """A token for ``login`` made without the web flow: one GitHub issued earlier to this
        OAuth app (the default), to another app (``client_id``), or a personal access token
        (classic, ``client_id=None``) with ``scopes``."""
        if login not in self.users:
            raise KeyError(login)
        token = ("gho_" if client_id else "ghp_") + _random_token(string.ascii_letters + string.digits, 36)
        with self._lock:
            self._tokens[token] = (login, tuple(scopes))
            self._token_apps[token] = self.client_id if client_id == "this app" else client_id
        return token

    def check_token(self, client_id: str, client_secret: str, token: str) -> Optional[dict[str, Any]]:
        """``POST /applications/{client_id}/token``: the token's record when the app's
        credentials are right and the token was issued to that app; None otherwise (404)."""
        if not (hmac.compare_digest(client_id.encode(), self.client_id.encode())
                and hmac.compare_digest(client_secret.encode(), self.client_secret.encode())):
            return None
        with self._lock:
            found = self._tokens.get(token)
            app = self._token_apps.get(token)
        if found is None or app != client_id:
            return None
        user = self.users.get(found[0])
        return {"token": token, "scopes": list(found[1]), "app": {"client_id": client_id, "name": "Hearth"},
                "user": self.user_json(user) if user else None}

    def revoke(self, token: str) -> None:
        """Revokes a token (the user removed the app's authorization)."""
        with self._lock:
            self._tokens.pop(token, None)

    def token_owner(self, token: str) -> Optional[str]:
        with self._lock:
            found = self._tokens.get(token)
        return found[0] if found else None

    def requests_to(self, path: str) -> list[RecordedRequest]:
        with self._lock:
            return [request for request in self.requests if request.path == path]

    @property
    def token_requests(self) -> list[RecordedRequest]:
        """What clients sent to ``POST /login/oauth/access_token``."""
        return self.requests_to("/login/oauth/access_token")

    # --- lifecycle ---------------------------------------------------------------------------

    def start(self) -> "GitHubServer":
        self._server = _ThreadingHTTPServer((HOST, self.port), _handler_for(self))
        self._thread = threading.Thread(target=self._server.serve_forever, name="github-stand-in", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> "GitHubServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # --- the authorization endpoint ----------------------------------------------------------

    def _authorization_request(self, query: dict[str, str], session_login: Optional[str]):
        """Checks an authorization request. Returns ("page", status, html), ("redirect", url),
        or ("pending", _PendingAuthorization) for the form."""
        client_id = query.get("client_id", "")
        if not client_id or not hmac.compare_digest(client_id, self.client_id):
            return ("page", 404, "<!doctype html><title>Not Found</title><h1>404</h1><p>This is not the web page you are looking for.</p>")
        state = query.get("state")
        redirect_uri = query.get("redirect_uri") or self.callback_urls[0]
        if not any(redirect_uri_matches(callback, redirect_uri) for callback in self.callback_urls):
            return ("redirect", self._error_redirect(self.callback_urls[0], "redirect_uri_mismatch",
                                                     REDIRECT_MISMATCH_DESCRIPTION, "redirect-uri-mismatch", state))
        challenge = query.get("code_challenge")
        method = query.get("code_challenge_method")
        if challenge is not None or method is not None:
            valid = (method == "S256" and challenge is not None and len(challenge) == 43
                     and all(c in string.ascii_letters + string.digits + "-_" for c in challenge))
            if not valid:
                description = ("code_challenge_method must be S256" if method != "S256"
                               else "code_challenge must be a 43 character S256 challenge")
                return ("redirect", self._error_redirect(redirect_uri, "invalid_request", description, None, state))
        scopes = _scopes(query.get("scope"))
        pending = _PendingAuthorization(
            client_id=client_id, redirect_uri=redirect_uri, scopes=scopes, state=state, challenge=challenge,
            login_hint=query.get("login", ""), expires=self.clock() + 3600)
        if session_login is not None:
            with self._lock:
                granted = self._granted.get((session_login, client_id), set())
            if set(scopes) <= granted:  # already authorized: GitHub sends the user straight back
                return ("redirect", self._code_redirect(pending, session_login))
        return ("pending", pending)

    def _error_redirect(self, url: str, error: str, description: str, anchor: Optional[str], state: Optional[str]) -> str:
        parameters = [("error", error), ("error_description", description)]
        if anchor:
            parameters.append(("error_uri", AUTHORIZE_ERRORS_URI + "#" + anchor))
        if state is not None:
            parameters.append(("state", state))
        return with_parameters(url, parameters)

    def _code_redirect(self, pending: _PendingAuthorization, login: str) -> str:
        code = secrets.token_hex(10)  # GitHub's codes are 20 hex digits
        with self._lock:
            self._codes[code] = _Grant(
                login=login, client_id=pending.client_id, redirect_uri=pending.redirect_uri, scopes=pending.scopes,
                challenge=pending.challenge, expires=self.clock() + self.code_lifetime)
            self._granted.setdefault((login, pending.client_id), set()).update(pending.scopes)
        parameters = [("code", code)]
        if pending.state is not None:
            parameters.append(("state", pending.state))
        return with_parameters(pending.redirect_uri, parameters)

    def _form_page(self, pending: _PendingAuthorization, session_login: Optional[str], error: str = "") -> str:
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._pending[token] = pending
        fields = "" if session_login else LOGIN_FIELDS.format(login=html.escape(pending.login_hint, quote=True))
        return PAGE.format(
            title="Authorize application" if session_login else "Sign in to GitHub",
            client=html.escape(pending.client_id), scopes=html.escape(", ".join(pending.scopes) or "public data"),
            error=f'<p id="login-error">{html.escape(error)}</p>' if error else "",
            token=html.escape(token, quote=True), fields=fields,
            submit="Authorize" if session_login else "Sign in")

    def _submit_form(self, form: dict[str, str], session_login: Optional[str]):
        """The login/authorize form posted: ("redirect", url, new_session_login) or ("page", status, html, None)."""
        with self._lock:
            pending = self._pending.pop(form.get("authenticity_token", ""), None)
        if pending is None or pending.expires < self.clock():
            return ("page", 422, "<!doctype html><title>Unprocessable</title><p>Your browser did something unexpected.</p>", None)
        if form.get("authorize") != "1":
            return ("redirect", self._error_redirect(pending.redirect_uri, "access_denied", ACCESS_DENIED_DESCRIPTION,
                                                     "access-denied", pending.state), None)
        login = session_login
        if login is None:
            wanted = form.get("login", "")
            user = self.users.get(wanted) or next(
                (known for known in self.users.values() if any(entry.email.lower() == wanted.lower() for entry in known.emails)),
                None)
            if user is None or not hmac.compare_digest(user.password.encode(), form.get("password", "").encode()):
                pending.login_hint = wanted
                return ("page", 200, self._form_page(pending, None, "Incorrect username or password."), None)
            login = user.login
        return ("redirect", self._code_redirect(pending, login), login)

    # --- the token endpoint ------------------------------------------------------------------

    def _exchange(self, form: dict[str, str], basic: Optional[tuple[str, str]]) -> dict[str, str]:
        client_id = form.get("client_id") or (basic[0] if basic else "")
        client_secret = form.get("client_secret") or (basic[1] if basic else "")
        if not (hmac.compare_digest(client_id.encode(), self.client_id.encode())
                and hmac.compare_digest(client_secret.encode(), self.client_secret.encode())):
            return self._token_error("incorrect_client_credentials", "The client_id and/or client_secret passed are incorrect.",
                                     "incorrect-client-credentials")
        bad_code = self._token_error("bad_verification_code", "The code passed is incorrect or expired.", "bad-verification-code")
        with self._lock:
            grant = self._codes.get(form.get("code", ""))
            if grant is None or grant.used or grant.expires < self.clock() or grant.client_id != client_id:
                return bad_code
            redirect_uri = form.get("redirect_uri")
            if redirect_uri and redirect_uri != grant.redirect_uri:
                return {
                    "error": "redirect_uri_mismatch", "error_description": REDIRECT_MISMATCH_DESCRIPTION,
                    "error_uri": "/apps/managing-oauth-apps/troubleshooting-authorization-request-errors/#redirect-uri-mismatch2",
                }
            if grant.challenge is not None:
                verifier = form.get("code_verifier", "")
                if not verifier or not hmac.compare_digest(s256(verifier), grant.challenge):
                    return bad_code
            grant.used = True  # single use, whatever happens next
            user = self.users[grant.login]
        primary = user.primary_email
        if self.refuse_unverified_primary_email and (primary is None or not primary.verified):
            return self._token_error("unverified_user_email", "The user must have a verified primary email.",
                                     "unverified_user_email")
        token = self.issue_token(grant.login, grant.scopes)
        return {"access_token": token, "token_type": "bearer", "scope": ",".join(grant.scopes)}

    @staticmethod
    def _token_error(error: str, description: str, anchor: str) -> dict[str, str]:
        return {"error": error, "error_description": description, "error_uri": TOKEN_ERRORS_URI + "#" + anchor}

    # --- the REST API ------------------------------------------------------------------------

    def _api_user(self, token: str) -> tuple[Optional[GitHubUser], tuple[str, ...]]:
        with self._lock:
            found = self._tokens.get(token)
        if found is None:
            return None, ()
        return self.users.get(found[0]), found[1]

    def user_json(self, user: GitHubUser) -> dict[str, Any]:
        """``GET /user`` for ``user``, with GitHub's fields (the public profile's)."""
        api = self.api_url
        return {
            "login": user.login,
            "id": user.id,
            "node_id": base64.b64encode(f"04:User{user.id}".encode()).decode(),
            "avatar_url": self.avatar_url(user),
            "gravatar_id": "",
            "url": f"{api}/users/{user.login}",
            "html_url": f"{self.url}/{user.login}",
            "followers_url": f"{api}/users/{user.login}/followers",
            "repos_url": f"{api}/users/{user.login}/repos",
            "type": "User",
            "site_admin": False,
            "name": user.name,
            "company": None,
            "blog": "",
            "location": None,
            "email": user.public_email,
            "hireable": None,
            "bio": None,
            "public_repos": 0,
            "public_gists": 0,
            "followers": 0,
            "following": 0,
            "created_at": "2011-01-25T18:44:36Z",
            "updated_at": "2024-01-22T12:00:00Z",
        }

    @staticmethod
    def emails_json(user: GitHubUser) -> list[dict[str, Any]]:
        """``GET /user/emails`` for ``user``: the primary address first."""
        ordered = sorted(user.emails, key=lambda entry: not entry.primary)
        return [{
            "email": entry.email,
            "primary": entry.primary,
            "verified": entry.verified,
            "visibility": ("public" if user.public_email == entry.email else "private") if entry.primary else None,
        } for entry in ordered]


class _ThreadingHTTPServer(socketserver.ThreadingMixIn, HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def server_bind(self):
        # HTTPServer.server_bind calls socket.getfqdn(), a reverse lookup that can stall here.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]


def _handler_for(github: GitHubServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as clients with connection pools expect
        server_version = "GitHub.com"
        sys_version = ""

        def log_message(self, format, *args):
            pass

        # --- plumbing ---

        def _read_body(self) -> bytes:
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length > 0 else b""

        def _record(self, form: Optional[dict[str, str]] = None) -> tuple[str, dict[str, str]]:
            parts = urlsplit(self.path)
            query = {key: values[0] for key, values in parse_qs(parts.query, keep_blank_values=True).items()}
            with github._lock:
                github.requests.append(RecordedRequest(
                    self.command, parts.path, query, {key.lower(): value for key, value in self.headers.items()},
                    dict(form or {})))
            return parts.path, query

        def _send(self, status: int, body: bytes, content_type: str, headers: Iterable[tuple[str, str]] = ()) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _html(self, status: int, page: str, headers: Iterable[tuple[str, str]] = ()) -> None:
            self._send(status, page.encode(), "text/html; charset=utf-8", headers)

        def _json(self, status: int, value: Any, headers: Iterable[tuple[str, str]] = ()) -> None:
            self._send(status, json.dumps(value).encode(), "application/json; charset=utf-8", headers)

        def _redirect(self, location: str, headers: Iterable[tuple[str, str]] = ()) -> None:
            self._send(302, b"", "text/html; charset=utf-8", [("Location", location), *headers])

        def _session_login(self) -> Optional[str]:
            cookie = SimpleCookie(self.headers.get("Cookie", ""))
            morsel = cookie.get(SESSION_COOKIE)
            if morsel is None:
                return None
            with github._lock:
                login = github._sessions.get(morsel.value)
            return login if login in github.users else None

        def _form(self, body: bytes) -> dict[str, str]:
            content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if content_type == "application/json":
                try:
                    parsed = json.loads(body or b"{}")
                except ValueError:
                    return {}
                return {str(k): str(v) for k, v in parsed.items()} if isinstance(parsed, dict) else {}
            return {key: values[0] for key, values in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}

        # --- methods ---

        def do_GET(self):
            path, query = self._record()
            if path == "/login/oauth/authorize":
                self._authorize_get(query)
            elif path == API_PREFIX + "/user":
                self._api(lambda user, scopes: (200, github.user_json(user)), accepted="")
            elif path == API_PREFIX + "/user/emails":
                self._api(self._emails(query), accepted="user, user:email")
            elif path == API_PREFIX or path == API_PREFIX + "/":
                self._json(200, {"current_user_url": github.api_url + "/user"})
            else:
                self._not_found(path)

        def do_HEAD(self):
            self.do_GET()

        def do_POST(self):
            body = self._read_body()
            form = self._form(body)
            path, query = self._record(form)
            if path == "/login/oauth/authorize":
                self._authorize_post(form)
            elif path == "/login/oauth/access_token":
                self._access_token({**query, **form})
            elif path.startswith(API_PREFIX + "/applications/") and path.endswith("/token"):
                self._check_token(path[len(API_PREFIX + "/applications/"):-len("/token")], form)
            else:
                self._not_found(path)

        def _check_token(self, client_id: str, form: dict[str, str]) -> None:
            """GitHub's "check a token": Basic auth with the app's client ID and secret."""
            authorization = self.headers.get("Authorization", "")
            user, password = "", ""
            if authorization.lower().startswith("basic "):
                try:
                    user, _, password = base64.b64decode(authorization[6:].strip()).decode().partition(":")
                except (ValueError, UnicodeDecodeError):
                    pass
            found = github.check_token(client_id, password, form.get("access_token", "")) if user == client_id else None
            if found is None:
                self._json(404, {"message": "Not Found", "documentation_url": DOCS + "/rest/apps/oauth-applications#check-a-token",
                                 "status": "404"})
            else:
                self._json(200, found)

        def _not_found(self, path: str) -> None:
            if path.startswith(API_PREFIX):
                self._json(404, {"message": "Not Found", "documentation_url": DOCS + "/rest", "status": "404"})
            else:
                self._html(404, "<!doctype html><title>Not Found</title><h1>404</h1>")

        # --- the web flow ---

        def _authorize_get(self, query: dict[str, str]) -> None:
            session_login = self._session_login()
            outcome = github._authorization_request(query, session_login)
            if outcome[0] == "page":
                self._html(outcome[1], outcome[2])
            elif outcome[0] == "redirect":
                self._redirect(outcome[1])
            else:
                self._html(200, github._form_page(outcome[1], session_login))

        def _authorize_post(self, form: dict[str, str]) -> None:
            session_login = self._session_login()
            outcome = github._submit_form(form, session_login)
            if outcome[0] == "page":
                self._html(outcome[1], outcome[2])
                return
            headers = []
            if outcome[2] is not None and outcome[2] != session_login:
                session = secrets.token_urlsafe(24)
                with github._lock:
                    github._sessions[session] = outcome[2]
                headers.append(("Set-Cookie", f"{SESSION_COOKIE}={session}; Path=/; HttpOnly; SameSite=Lax"))
            self._redirect(outcome[1], headers)

        def _access_token(self, form: dict[str, str]) -> None:
            basic = None
            authorization = self.headers.get("Authorization", "")
            if authorization.lower().startswith("basic "):
                try:
                    user, _, password = base64.b64decode(authorization[6:].strip()).decode().partition(":")
                    basic = (user, password)
                except (ValueError, UnicodeDecodeError):
                    basic = None
            answer = github._exchange(form, basic)
            accept = (self.headers.get("Accept") or "").lower()
            if "application/json" in accept:
                self._json(200, answer)
            elif "application/xml" in accept:
                inner = "".join(f"<{key}>{xml_escape(value)}</{key}>" for key, value in answer.items())
                self._send(200, f"<OAuth>{inner}</OAuth>".encode(), "application/xml; charset=utf-8")
            else:
                self._send(200, urlencode(list(answer.items())).encode(), "application/x-www-form-urlencoded; charset=utf-8")

        # --- the API ---

        def _emails(self, query: dict[str, str]):
            def answer(user: GitHubUser, scopes: tuple[str, ...]):
                if not _has_scope(scopes, "user:email"):
                    return 404, {"message": "Not Found",
                                 "documentation_url": DOCS + "/rest/users/emails#list-email-addresses-for-the-authenticated-user",
                                 "status": "404"}
                try:
                    per_page = max(1, min(100, int(query.get("per_page", "30"))))
                    page = max(1, int(query.get("page", "1")))
                except ValueError:
                    per_page, page = 30, 1
                entries = github.emails_json(user)
                return 200, entries[(page - 1) * per_page: page * per_page]
            return answer

        def _api(self, answer, accepted: str) -> None:
            if not self.headers.get("User-Agent"):
                self._send(403, (b"Request forbidden by administrative rules. "
                                 b"Please make sure your request has a User-Agent header "
                                 b"(https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required). "
                                 b"Check https://developer.github.com for other possible causes.\n"),
                           "text/plain; charset=utf-8")
                return
            authorization = self.headers.get("Authorization", "")
            scheme, _, token = authorization.strip().partition(" ")
            if not authorization:
                self._json(401, {"message": "Requires authentication",
                                 "documentation_url": DOCS + "/rest/users/users#get-the-authenticated-user", "status": "401"})
                return
            user, scopes = (github._api_user(token.strip()) if scheme.lower() in ("bearer", "token") else (None, ()))
            if user is None:
                self._json(401, {"message": "Bad credentials", "documentation_url": DOCS + "/rest", "status": "401"})
                return
            status, value = answer(user, scopes)
            self._json(status, value, [
                ("X-OAuth-Scopes", ", ".join(scopes)), ("X-Accepted-OAuth-Scopes", accepted),
                ("X-GitHub-Media-Type", "github.v3; format=json"),
            ])

    return Handler


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="A GitHub Enterprise Server stand-in on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0, help="0 (the default) picks a free port")
    parser.add_argument("--client-id", required=True)
    parser.add_argument("--client-secret", required=True)
    parser.add_argument("--callback-url", action="append", required=True, help="repeat for several")
    parser.add_argument("--user", action="append", type=GitHubUser.from_arg, default=[],
                        metavar="LOGIN:PASSWORD:ID:NAME:EMAIL[!unverified][,EMAIL...]",
                        help="the first email is the primary one; repeat for several users")
    parser.add_argument("--allow-unverified-primary-email", action="store_true",
                        help="issue tokens to users whose primary email is not verified (GitHub refuses)")
    parser.add_argument("--exit-with-stdin", action="store_true",
                        help="also stop when standard input reaches its end (the parent went away)")
    return parser.parse_args(argv)


def main(argv: Optional[list[str]] = None) -> None:
    args = parse_args(argv)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    with GitHubServer(args.client_id, args.client_secret, args.callback_url, args.user, port=args.port,
                      refuse_unverified_primary_email=not args.allow_unverified_primary_email) as github:
        print(READY_PREFIX + github.url, flush=True)
        if args.exit_with_stdin:
            def watch_stdin():
                sys.stdin.buffer.read()
                stop.set()
            threading.Thread(target=watch_stdin, name="stdin-watch", daemon=True).start()
        stop.wait()


if __name__ == "__main__":
    main()
