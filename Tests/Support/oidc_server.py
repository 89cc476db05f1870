"""A real OpenID Connect provider on loopback, for Hearth's "sign in with OpenID Connect" tests.

Why a real one: Hearth's relying-party code has to interoperate with providers it did not
write (discovery, the authorization code flow with PKCE, client authentication at the token
endpoint, RS256 ID tokens checked against a JWKS). A mock written next to the code under test
tends to share its misreadings of the spec; django-oidc-provider is an independent
implementation that runs offline, so the tests exercise the protocol as a third party speaks it.

The provider runs in a subprocess of its own (Django's settings are process-wide, so it cannot
share the test process). From the command line::

    .venv/bin/python Tests/Support/oidc_server.py --port 0 --client-id hearth --client-secret s3cret \\
        --redirect-uri http://127.0.0.1:9000/__/auth/oidc/callback \\
        --user 'ada@example.com:correct horse:Ada Lovelace' \\
        --user 'bob@example.com:hunter22:Bob Stone:unverified'

prints ``OIDC READY http://127.0.0.1:PORT/openid`` (the issuer) on stdout once
``/openid/.well-known/openid-configuration`` answers, and serves until SIGTERM or SIGINT
(with ``--exit-with-stdin``, also until its standard input closes, so that a provider whose
test runner died does not linger). The database, signing key, client and users are new at
every start and live in a temporary folder that is removed on exit.

From Python (pytest), without importing Django into the test process::

    with OIDCProvider(client_id="hearth", client_secret="s3cret",
                      redirect_uris=["http://127.0.0.1:9000/cb"],
                      users=[OIDCUser("ada@example.com", "pw", "Ada Lovelace")]) as provider:
        provider.issuer          # http://127.0.0.1:PORT/openid
        provider.discovery_url   # issuer + /.well-known/openid-configuration

What the provider does, and the library's quirks a client must cope with:

- Issuer ``http://127.0.0.1:PORT/openid``, fixed through ``SITE_URL`` (otherwise the library
  builds it from each request's Host header, so "localhost" and "127.0.0.1" would give two
  issuers). Endpoints: ``/openid/authorize``, ``/openid/token``, ``/openid/userinfo``,
  ``/openid/jwks``, ``/openid/end-session``; the login form is ``/login/`` (fields
  ``username``, which takes the email, and ``password``).
- One confidential client, response type ``code``, consent never asked. Scopes ``openid email
  profile`` give ``email``, ``email_verified`` and ``name`` (also ``given_name``,
  ``family_name``) both in the ID token and at userinfo. ``sub`` is an opaque string derived
  from the email, so it is the same across restarts.
- PKCE: the library accepts ``code_challenge`` (S256 or plain) but never requires it, and its
  discovery document does not advertise it. Here PKCE with S256 is required by default (an
  authorization request without it is answered with ``error=invalid_request`` at the
  redirect URI) and ``code_challenge_methods_supported`` is added to discovery;
  ``--no-require-pkce`` restores the library's behaviour.
- Token endpoint: ``client_secret_post`` and ``client_secret_basic``. For Basic the library
  neither URL-decodes the id and secret (RFC 6749 2.3.1 says to form-encode them first) nor
  copes with a ``:`` in the secret, so use secrets of plain letters and digits.
- The token endpoint accepts any registered ``redirect_uri``, not only the one the code was
  issued for; ``nonce`` is optional in the code flow and copied into the ID token when given
  (it is absent from ID tokens issued on refresh). ``aud`` is a string, ``token_type`` is
  lowercase ``bearer``. Discovery lists every response type the library knows, not just the
  client's ``code``, and ``HS256`` beside ``RS256`` as ID token algorithms, though every ID
  token here is RS256 (a relying party should accept RS256 only).
- Its session and CSRF cookies are named ``oidc_sessionid`` and ``oidc_csrftoken``: cookies
  are not isolated by port, so a Hearth on another port of 127.0.0.1 must not share their names.
- The HTTP server is wsgiref's (HTTP/1.0, one connection per request, a thread each).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import queue
import shutil
import signal
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
import types
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

HOST = "127.0.0.1"
ISSUER_PATH = "/openid"
READY_PREFIX = "OIDC READY "
SCOPES = ("openid", "email", "profile")

LOGIN_TEMPLATE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Sign in - test OpenID provider</title></head>
<body>
<h1>Test OpenID provider</h1>
{% if form.errors %}<p id="login-error">Wrong email or password.</p>{% endif %}
<form method="post" action="{% url 'login' %}">
  {% csrf_token %}
  <p><label>Email <input type="text" name="username" id="username" autofocus></label></p>
  <p><label>Password <input type="password" name="password" id="password"></label></p>
  <input type="hidden" name="next" value="{{ next }}">
  <p><button type="submit" id="sign-in">Sign in</button></p>
</form>
</body>
</html>
"""


@dataclass(frozen=True)
class OIDCUser:
    """A test account: ``email`` is also the login name; ``name`` gives the ``name`` claim
    (split at the last space into ``given_name`` and ``family_name``)."""

    email: str
    password: str
    name: str
    email_verified: bool = True

    def to_arg(self) -> str:
        return f"{self.email}:{self.password}:{self.name}" + ("" if self.email_verified else ":unverified")

    @classmethod
    def from_arg(cls, text: str) -> "OIDCUser":
        """Parses ``EMAIL:PASSWORD:NAME[:unverified|:verified]`` (no ``:`` in the password)."""
        parts = text.split(":")
        verified = True
        if len(parts) >= 4 and parts[-1] in ("verified", "unverified"):
            verified = parts.pop() == "verified"
        if len(parts) < 3 or not parts[0] or not parts[1]:
            raise argparse.ArgumentTypeError(f"expected EMAIL:PASSWORD:NAME[:unverified], got {text!r}")
        return cls(parts[0], parts[1], ":".join(parts[2:]), verified)


def subject_for(email: str) -> str:
    """The ``sub`` claim: opaque like a real provider's, and stable across restarts so that a
    test can restart the provider and still sign in as the same person."""
    return hashlib.sha256(email.lower().encode()).hexdigest()[:24]


# --- the provider process ------------------------------------------------------------------

# Emails whose ``email_verified`` claim is false (Django's user model has no such field).
_UNVERIFIED_EMAILS: set[str] = set()


def userinfo(claims: dict, user) -> dict:
    """``OIDC_USERINFO`` hook: fills the standard claims from the Django user."""
    claims["name"] = user.get_full_name()
    claims["given_name"] = user.first_name
    claims["family_name"] = user.last_name
    claims["email"] = user.email
    claims["email_verified"] = user.email not in _UNVERIFIED_EMAILS
    return claims


def sub_generator(user) -> str:
    """``OIDC_IDTOKEN_SUB_GENERATOR`` hook."""
    return subject_for(user.email)


class _ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    """wsgiref's server, one thread per request (a browser opens several connections)."""

    daemon_threads = True
    allow_reuse_address = True

    def server_bind(self):
        # HTTPServer.server_bind calls socket.getfqdn(), a reverse DNS lookup that can stall
        # on a machine without a resolver; the name is not needed.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]
        self.setup_environ()


class _QuietHandler(WSGIRequestHandler):
    """Logs requests to stderr in one short line (the launcher keeps stderr as a log)."""

    def log_message(self, format, *args):
        sys.stderr.write("oidc %s\n" % (format % args))


def _configure_django(data_dir: Path, site_url: str, require_pkce: bool) -> None:
    """Configures Django in code: no settings file to keep next to the tests."""
    import secrets

    import django
    from django.conf import settings

    this_module = __name__
    settings.configure(
        DEBUG=False,
        SECRET_KEY=secrets.token_urlsafe(40),
        ALLOWED_HOSTS=[HOST, "localhost", "[::1]"],
        INSTALLED_APPS=[
            "django.contrib.auth",
            "django.contrib.contenttypes",
            "django.contrib.sessions",
            "oidc_provider",
        ],
        MIDDLEWARE=[
            "django.contrib.sessions.middleware.SessionMiddleware",
            "django.middleware.csrf.CsrfViewMiddleware",
            "django.contrib.auth.middleware.AuthenticationMiddleware",
        ],
        ROOT_URLCONF="hearth_test_oidc_urls",
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(data_dir / "oidc.sqlite3")}},
        DEFAULT_AUTO_FIELD="django.db.models.AutoField",
        USE_TZ=True,
        TEMPLATES=[{
            "BACKEND": "django.template.backends.django.DjangoTemplates",
            "OPTIONS": {
                "context_processors": ["django.template.context_processors.request"],
                "loaders": [
                    ("django.template.loaders.locmem.Loader", {"hearth/login.html": LOGIN_TEMPLATE}),
                    "django.template.loaders.app_directories.Loader",
                ],
            },
        }],
        # Test-only accounts with throwaway passwords: a fast hasher keeps start-up and each
        # sign-in cheap on a two-core machine (the default PBKDF2 takes about a second each).
        PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
        LOGIN_URL="/login/",
        SESSION_COOKIE_NAME="oidc_sessionid",
        CSRF_COOKIE_NAME="oidc_csrftoken",
        SITE_URL=site_url,
        OIDC_IDTOKEN_INCLUDE_CLAIMS=True,
        OIDC_USERINFO=f"{this_module}.userinfo",
        OIDC_IDTOKEN_SUB_GENERATOR=f"{this_module}.sub_generator",
        LOGGING={
            "version": 1,
            "disable_existing_loggers": False,
            "handlers": {"stderr": {"class": "logging.StreamHandler", "stream": "ext://sys.stderr"}},
            # The library explains refusals (wrong redirect URI, bad secret...) only at DEBUG.
            "loggers": {
                "oidc_provider": {"handlers": ["stderr"], "level": "DEBUG"},
                "django.request": {"handlers": ["stderr"], "level": "WARNING"},
            },
        },
    )
    django.setup()
    sys.modules["hearth_test_oidc_urls"] = _build_urlconf(require_pkce)


def _build_urlconf(require_pkce: bool) -> types.ModuleType:
    """The URLs: the library's under /openid/ (its authorize and discovery views replaced by
    subclasses that require and advertise PKCE), and the login form at /login/."""
    from django.contrib.auth import views as auth_views
    from django.urls import include, path, re_path
    from oidc_provider import urls as oidc_urls
    from oidc_provider import views as oidc_views
    from oidc_provider.lib.endpoints.authorize import AuthorizeEndpoint
    from oidc_provider.lib.errors import AuthorizeError

    class PkceAuthorizeEndpoint(AuthorizeEndpoint):
        def validate_params(self):
            super().validate_params()
            if self.grant_type == "authorization_code" and (
                not self.params["code_challenge"] or self.params["code_challenge_method"] != "S256"
            ):
                raise AuthorizeError(self.params["redirect_uri"], "invalid_request", self.grant_type)

    class PkceAuthorizeView(oidc_views.AuthorizeView):
        authorize_endpoint_class = PkceAuthorizeEndpoint

    class ProviderInfoView(oidc_views.ProviderInfoView):
        def _build_response_dict(self, request):
            info = super()._build_response_dict(request)
            info["code_challenge_methods_supported"] = ["S256"] if require_pkce else ["S256", "plain"]
            info["scopes_supported"] = list(SCOPES)
            info["grant_types_supported"] = ["authorization_code", "refresh_token"]
            info["claims_supported"] = [
                "sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "at_hash",
                "name", "given_name", "family_name", "email", "email_verified",
            ]
            return info

    replaced = {"provider-info": re_path(r"^\.well-known/openid-configuration/?$", ProviderInfoView.as_view(), name="provider-info")}
    if require_pkce:
        replaced["authorize"] = re_path(r"^authorize/?$", PkceAuthorizeView.as_view(), name="authorize")
    patterns = [replaced.get(pattern.name, pattern) for pattern in oidc_urls.urlpatterns]

    module = types.ModuleType("hearth_test_oidc_urls")
    module.urlpatterns = [
        path("login/", auth_views.LoginView.as_view(template_name="hearth/login.html"), name="login"),
        path(ISSUER_PATH.strip("/") + "/", include((patterns, "oidc_provider"), namespace="oidc_provider")),
    ]
    return module


def _populate(client_id: str, client_secret: str, redirect_uris: list[str], users: list[OIDCUser]) -> None:
    """Creates the tables, the RS256 signing key, the client and the users."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from oidc_provider.models import Client, ResponseType, RSAKey

    call_command("migrate", verbosity=0, interactive=False)
    call_command("creatersakey", stdout=sys.stderr)
    if not RSAKey.objects.exists():  # the command reports its own failures without raising
        raise RuntimeError("creatersakey made no signing key")

    client = Client.objects.create(
        name="Hearth tests",
        client_type="confidential",
        client_id=client_id,
        client_secret=client_secret,
        jwt_alg="RS256",
        require_consent=False,
        reuse_consent=False,
        _redirect_uris="\n".join(redirect_uris),
        _scope=" ".join(SCOPES),
    )
    client.response_types.add(ResponseType.objects.get(value="code"))

    User = get_user_model()
    for user in users:
        given, _, family = user.name.rpartition(" ")
        if not given:
            given, family = family, ""
        User.objects.create_user(
            username=user.email, email=user.email, password=user.password, first_name=given, last_name=family,
        )
        if not user.email_verified:
            _UNVERIFIED_EMAILS.add(user.email)


def serve(args: argparse.Namespace) -> None:
    """Runs the provider until SIGTERM, SIGINT or (with ``--exit-with-stdin``) stdin's end."""
    # Bind first: with --port 0 the port, and so the issuer, is known only once bound.
    server = _ThreadingWSGIServer((HOST, args.port), _QuietHandler)
    site_url = f"http://{HOST}:{server.server_port}"
    issuer = site_url + ISSUER_PATH
    data_dir = Path(tempfile.mkdtemp(prefix="hearth-oidc-"))
    stop = threading.Event()
    serving: Optional[threading.Thread] = None
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    try:
        _configure_django(data_dir, site_url, args.require_pkce)
        _populate(args.client_id, args.client_secret, args.redirect_uri, args.user)

        from django.core.wsgi import get_wsgi_application

        server.set_app(get_wsgi_application())
        serving = threading.Thread(target=server.serve_forever, name="oidc-http", daemon=True)
        serving.start()

        with urllib.request.urlopen(issuer + "/.well-known/openid-configuration", timeout=30) as response:
            served_issuer = json.load(response)["issuer"]
        if served_issuer != issuer:
            raise RuntimeError(f"discovery says issuer {served_issuer!r}, expected {issuer!r}")
        print(READY_PREFIX + issuer, flush=True)

        if args.exit_with_stdin:
            def watch_stdin():
                sys.stdin.buffer.read()  # returns at EOF, when the parent closes or dies
                stop.set()
            threading.Thread(target=watch_stdin, name="stdin-watch", daemon=True).start()
        stop.wait()
    finally:
        if serving is not None:  # shutdown() would wait forever for a loop that never ran
            server.shutdown()
        server.server_close()
        shutil.rmtree(data_dir, ignore_errors=True)


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="A test OpenID Connect provider on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0, help="0 (the default) picks a free port")
    parser.add_argument("--client-id", required=True)
    parser.add_argument("--client-secret", required=True)
    parser.add_argument("--redirect-uri", action="append", required=True, help="repeat for several")
    parser.add_argument("--user", action="append", type=OIDCUser.from_arg, default=[],
                        metavar="EMAIL:PASSWORD:NAME[:unverified]", help="repeat for several")
    parser.add_argument("--require-pkce", action=argparse.BooleanOptionalAction, default=True,
                        help="refuse authorization requests without an S256 code_challenge (default: yes)")
    parser.add_argument("--exit-with-stdin", action="store_true",
                        help="also stop when standard input reaches its end (the parent went away)")
    return parser.parse_args(argv)


# --- the launcher, for tests -----------------------------------------------------------------


class OIDCProvider:
    """Starts ``oidc_server.py`` as a subprocess and stops it; a context manager.

    ``start()`` returns once the provider printed its READY line (so discovery answers), or
    raises with the provider's log if it exited or did not get there within
    ``startup_timeout`` seconds. The provider's stderr (request log and the library's debug
    messages, which say why a request was refused) goes to ``log_path``; ``log()`` reads it.
    """

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        redirect_uris: Iterable[str],
        users: Iterable[OIDCUser] = (),
        *,
        port: int = 0,
        require_pkce: bool = True,
        python: str = sys.executable,
        startup_timeout: float = 60,
    ):
        self.client_id = client_id
        self.client_secret = client_secret
        self.redirect_uris = list(redirect_uris)
        self.users = list(users)
        self.port = port
        self.require_pkce = require_pkce
        self.python = python
        self.startup_timeout = startup_timeout
        self.issuer: Optional[str] = None
        self.process: Optional[subprocess.Popen] = None
        self._log_dir: Optional[str] = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``: the login form is at ``base_url + "/login/"``."""
        return self.issuer[: -len(ISSUER_PATH)]

    @property
    def discovery_url(self) -> str:
        return self.issuer + "/.well-known/openid-configuration"

    @property
    def log_path(self) -> Path:
        return Path(self._log_dir) / "oidc-provider.log"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self._log_dir else ""

    def command(self) -> list[str]:
        command = [
            self.python, str(Path(__file__).resolve()), "--port", str(self.port),
            "--client-id", self.client_id, "--client-secret", self.client_secret, "--exit-with-stdin",
        ]
        for uri in self.redirect_uris:
            command += ["--redirect-uri", uri]
        for user in self.users:
            command += ["--user", user.to_arg()]
        if not self.require_pkce:
            command.append("--no-require-pkce")
        return command

    def start(self) -> "OIDCProvider":
        self._log_dir = tempfile.mkdtemp(prefix="hearth-oidc-log-")
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                self.command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True, bufsize=1,
            )
        lines: "queue.Queue[Optional[str]]" = queue.Queue()

        def read_stdout():
            for line in self.process.stdout:
                lines.put(line)
            lines.put(None)  # the process closed its stdout: it is exiting

        threading.Thread(target=read_stdout, name="oidc-stdout", daemon=True).start()
        deadline = time.monotonic() + self.startup_timeout
        try:
            while self.issuer is None:
                try:
                    line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    raise RuntimeError(f"the OIDC provider was not ready within {self.startup_timeout}s:\n{self.log()}")
                if line is None:
                    raise RuntimeError(f"the OIDC provider exited ({self.process.wait()}):\n{self.log()}")
                if line.startswith(READY_PREFIX):
                    self.issuer = line[len(READY_PREFIX):].strip()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stops the provider (SIGTERM, then SIGKILL after 10 s) and removes its log folder."""
        if self.process is not None:
            if self.process.poll() is None:
                self.process.terminate()
                try:
                    self.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
            for stream in (self.process.stdin, self.process.stdout):
                stream.close()
            self.process = None
        if self._log_dir is not None:
            shutil.rmtree(self._log_dir, ignore_errors=True)
            self._log_dir = None

    def __enter__(self) -> "OIDCProvider":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


if __name__ == "__main__":
    serve(parse_args())
