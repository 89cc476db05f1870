"""Service accounts: `firebase_admin` with a key file `hearth admin service-account create` made,
against a Hearth that is NOT in emulator mode, as a server of a production app reaches it.

The set-up is what an operator's would be: Hearth behind nginx with TLS (the database client
takes only an https URL outside emulator mode), and Google's API host names leading to that
nginx (firebase_admin's auth module always calls https://identitytoolkit.googleapis.com). Here
a CONNECT proxy on loopback stands in for the DNS entry, and a certificate authority made for
the test stands in for a trusted one (REQUESTS_CA_BUNDLE).

The key file's `token_uri` is Hearth's token endpoint: google-auth signs an assertion with the
key and trades it there for an access token (RFC 7523), which Hearth takes as an admin
credential until it expires or the key is revoked. Forged, expired, misaddressed and revoked
assertions get no token (RFC 6749's `invalid_grant`), and `Bearer owner` is nobody here.
"""

from __future__ import annotations

import base64
import datetime
import json
import os
import select
import shutil
import socket
import socketserver
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest
import requests

from harness import HearthProcess, free_port, hearth_binary, remove_tree, wait_for_port, wait_until

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
OPENSSL = shutil.which("openssl")
pytestmark = pytest.mark.skipif(not (NGINX and OPENSSL), reason="needs nginx and openssl (apt-get install -y nginx-light openssl)")

PROJECT = "hearth-sa-test"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
GOOGLE_HOSTS = ["identitytoolkit.googleapis.com", "securetoken.googleapis.com", "www.googleapis.com", "oauth2.googleapis.com"]
CLOSED_RULES = {"rules": {".read": False, ".write": False}}


class ConnectProxy(socketserver.ThreadingTCPServer):
    """An HTTP CONNECT proxy that leads every tunnel to ``target`` (nginx's TLS port): the
    stand-in for DNS that sends Google's API host names to the operator's nginx."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, target: int):
        self.target = target
        self.tunnels: list[str] = []
        super().__init__(("127.0.0.1", 0), ConnectProxy.Handler)

    class Handler(socketserver.BaseRequestHandler):
        def handle(self):
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = self.request.recv(4096)
                if not chunk:
                    return
                head += chunk
            line = head.split(b"\r\n", 1)[0].decode("latin-1")
            method, authority, _ = line.split(" ", 2)
            if method != "CONNECT":
                self.request.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
                return
            self.server.tunnels.append(authority)
            upstream = socket.create_connection(("127.0.0.1", self.server.target))
            self.request.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            sockets = [self.request, upstream]
            try:
                while True:
                    readable, _, _ = select.select(sockets, [], [], 30)
                    if not readable:
                        return
                    for source in readable:
                        data = source.recv(65536)
                        if not data:
                            return
                        (upstream if source is self.request else self.request).sendall(data)
            finally:
                upstream.close()


class Stack:
    def __init__(self, folder: Path):
        self.folder = folder
        self.processes: list = []

    def hearth_cli(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([hearth_binary(), *args, "--data", str(self.data), "--project", PROJECT],
                              capture_output=True, text=True, timeout=120)

    def new_key(self, name: str) -> dict:
        out = self.folder / f"{name}-{uuid.uuid4().hex[:6]}.json"
        made = self.hearth_cli("admin", "service-account", "create", "--name", name, "--url", self.hearth.url, "--out", str(out))
        assert made.returncode == 0, made.stderr
        assert oct(out.stat().st_mode & 0o777) == "0o600", "a key file is readable by its owner only"
        return json.loads(out.read_text()) | {"path": str(out)}


def make_certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A certificate authority, and a certificate it signed for loopback and Google's API hosts."""
    ca_key, ca, key, request, cert = (folder / name for name in ("ca.key", "ca.pem", "tls.key", "tls.csr", "tls.pem"))
    run = lambda *args: subprocess.run([OPENSSL, *args], check=True, capture_output=True)  # noqa: E731
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-keyout", str(ca_key), "-out", str(ca),
        "-subj", "/CN=Hearth test CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(request), "-subj", "/CN=127.0.0.1")
    names = ",".join(["IP:127.0.0.1", "DNS:localhost", *(f"DNS:{host}" for host in GOOGLE_HOSTS)])
    extensions = folder / "san.ext"
    extensions.write_text(f"subjectAltName={names}\n")
    run("x509", "-req", "-in", str(request), "-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial", "-days", "1",
        "-out", str(cert), "-extfile", str(extensions))
    return ca, cert, key


@pytest.fixture(scope="module")
def stack():
    folder = Path(tempfile.mkdtemp(prefix="hearth-service-accounts-"))
    stack = Stack(folder)
    proxy = None
    try:
        stack.data = folder / "data"
        rules = folder / "rules.json"
        rules.write_text(json.dumps(CLOSED_RULES))
        stack.hearth = HearthProcess(["serve", "--port", "0", "--data", stack.data, "--project", PROJECT,
                                      "--rules", rules, "--no-demo", "--log-level", "warning"]).start()
        stack.processes.append(stack.hearth)
        stack.ca, cert, key = make_certificates(folder)
        stack.tls_port = free_port()
        (folder / "nginx.conf").write_text(f"""daemon off;
pid {folder / 'nginx.pid'};
error_log {folder / 'error.log'} info;
events {{}}
http {{
    access_log off;
    client_body_temp_path {folder / 'client_body'};
    proxy_temp_path {folder / 'proxy'};
    fastcgi_temp_path {folder / 'fastcgi'};
    uwsgi_temp_path {folder / 'uwsgi'};
    scgi_temp_path {folder / 'scgi'};
    server {{
        listen 127.0.0.1:{stack.tls_port} ssl;
        ssl_certificate {cert};
        ssl_certificate_key {key};
        client_max_body_size 64m;
        location / {{
            proxy_pass http://127.0.0.1:{stack.hearth.port};
            proxy_http_version 1.1;
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto https;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_read_timeout 120s;
        }}
    }}
}}
""")
        nginx = subprocess.Popen([NGINX, "-c", str(folder / "nginx.conf"), "-p", str(folder)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        stack.processes.append(nginx)
        assert wait_for_port(stack.tls_port, nginx), (folder / "error.log").read_text(errors="replace")
        proxy = ConnectProxy(stack.tls_port)
        threading.Thread(target=proxy.serve_forever, daemon=True).start()
        stack.proxy = proxy
        stack.database_url = f"https://127.0.0.1:{stack.tls_port}"
        yield stack
    finally:
        if proxy:
            proxy.shutdown()
            proxy.server_close()
        for process in reversed(stack.processes):
            process.stop() if isinstance(process, HearthProcess) else (process.terminate(), process.wait(10))
        remove_tree(folder)


@pytest.fixture
def google_network(stack, monkeypatch):
    """What a server of the app sees on a network whose DNS sends Google's API hosts to Hearth's
    nginx and that trusts its certificate: the proxy for googleapis.com, loopback direct."""
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{stack.proxy.server_address[1]}")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(stack.ca))
    for variable in ("FIREBASE_AUTH_EMULATOR_HOST", "FIREBASE_DATABASE_EMULATOR_HOST", "STORAGE_EMULATOR_HOST"):
        monkeypatch.delenv(variable, raising=False)
    return stack


@pytest.fixture
def admin_app(google_network):
    import firebase_admin
    from firebase_admin import credentials

    key = google_network.new_key("app-server")
    app = firebase_admin.initialize_app(
        credentials.Certificate(key["path"]),
        {"databaseURL": google_network.database_url, "projectId": PROJECT}, name=f"sa-{uuid.uuid4().hex[:8]}")
    app.key = key
    yield app
    firebase_admin.delete_app(app)


def assertion(key: dict, **overrides) -> str:
    """A JWT-bearer assertion as google-auth signs one with `key`, with `overrides` in its claims
    (None removes a claim) and `kid`/`signer` in its header and signature."""
    from google.auth import crypt, jwt

    now = int(time.time())
    claims = {"iss": key["client_email"], "sub": key["client_email"], "aud": key["token_uri"],
              "scope": "https://www.googleapis.com/auth/cloud-platform", "iat": now, "exp": now + 3600}
    signer_key = overrides.pop("signer", key)
    kid = overrides.pop("kid", key["private_key_id"])
    for name, value in overrides.items():
        if value is None:
            claims.pop(name, None)
        else:
            claims[name] = value
    signer = crypt.RSASigner.from_service_account_info({**signer_key, "private_key_id": kid})
    return jwt.encode(signer, claims).decode()


def exchange(stack, token: str) -> requests.Response:
    return requests.post(f"{stack.hearth.url}/oauth2/token", data={"grant_type": JWT_BEARER, "assertion": token}, timeout=30)


# --- what an app's server does with it ------------------------------------------------------------


def test_the_database_takes_a_service_accounts_token_as_an_admin(admin_app, google_network):
    from firebase_admin import db

    root = db.reference(f"service-accounts/{uuid.uuid4().hex[:8]}", app=admin_app)
    root.set({"count": 1, "owner": "ops"})
    root.child("count").transaction(lambda value: (value or 0) + 1)
    root.update({"extra": True})
    assert root.get() == {"count": 2, "owner": "ops", "extra": True}
    assert root.order_by_key().limit_to_first(1).get() == {"count": 2}
    # The rules are closed: nobody else reads it.
    assert requests.get(f"{google_network.hearth.url}/{root.path}.json", timeout=10).status_code == 401
    root.delete()
    assert root.get() is None


def test_auth_admin_calls_reach_hearth_as_googles_identity_toolkit(admin_app, google_network):
    from firebase_admin import auth

    email = f"sa-user-{uuid.uuid4().hex[:8]}@example.com"
    user = auth.create_user(email=email, password="service-password-1", display_name="Made By SA", app=admin_app)
    assert auth.get_user_by_email(email, app=admin_app).uid == user.uid
    auth.set_custom_user_claims(user.uid, {"role": "editor"}, app=admin_app)
    assert auth.get_user(user.uid, app=admin_app).custom_claims == {"role": "editor"}
    listed = {exported.uid: exported for exported in auth.list_users(app=admin_app).iterate_all()}
    assert listed[user.uid].password_hash and listed[user.uid].password_salt
    auth.update_user(user.uid, disabled=True, app=admin_app)
    assert auth.get_user(user.uid, app=admin_app).disabled is True
    # The requests went to identitytoolkit.googleapis.com, through the stand-in for DNS.
    assert any(tunnel.startswith("identitytoolkit.googleapis.com") for tunnel in google_network.proxy.tunnels)

    # A custom token signed with the service account's own key signs its user in.
    token = auth.create_custom_token("sa-custom-user", {"tier": "gold"}, app=admin_app).decode()
    signed_in = requests.post(f"{google_network.hearth.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithCustomToken",
                              params={"key": "any"}, json={"token": token, "returnSecureToken": True}, timeout=10)
    assert signed_in.status_code == 200, signed_in.text
    assert signed_in.json()["localId"] == "sa-custom-user"
    # Its ID token verifies against the keys Hearth serves where Google serves its own (X.509).
    id_token = signed_in.json()["idToken"]
    claims = auth.verify_id_token(id_token, app=admin_app, check_revoked=True)
    assert (claims["uid"], claims["tier"]) == ("sa-custom-user", "gold")
    cookie = auth.create_session_cookie(id_token, expires_in=datetime.timedelta(minutes=10), app=admin_app)
    assert auth.verify_session_cookie(cookie, app=admin_app)["uid"] == "sa-custom-user"
    with pytest.raises(auth.InvalidIdTokenError):
        auth.verify_id_token(id_token[:-4] + ("AAAA" if not id_token.endswith("AAAA") else "BBBB"), app=admin_app)
    auth.delete_user(user.uid, app=admin_app)
    with pytest.raises(auth.UserNotFoundError):
        auth.get_user(user.uid, app=admin_app)


def test_storage_takes_a_service_accounts_token_as_an_admin(admin_app, google_network, monkeypatch):
    """firebase_admin.storage (google-cloud-storage) with STORAGE_EMULATOR_HOST keeps the app's
    credentials: the service account's access token, through the operator's TLS proxy."""
    from firebase_admin import storage

    monkeypatch.setenv("STORAGE_EMULATOR_HOST", google_network.database_url)
    bucket = storage.bucket(f"{PROJECT}.appspot.com", app=admin_app)
    folder = f"sa-files-{uuid.uuid4().hex[:8]}"
    blob = bucket.blob(f"{folder}/hello.txt")
    blob.upload_from_string(b"hello from a service account", content_type="text/plain")
    bucket.blob(f"{folder}/second.txt").upload_from_string(b"second")
    assert bucket.blob(f"{folder}/hello.txt").download_as_bytes() == b"hello from a service account"
    assert sorted(listed.name for listed in bucket.list_blobs(prefix=f"{folder}/")) == [f"{folder}/hello.txt", f"{folder}/second.txt"]
    # Without the credential the same API answers 401, before telling whether the object exists.
    anonymous = requests.get(f"{google_network.hearth.url}/storage/v1/b/{PROJECT}.appspot.com/o/{folder}%2Fhello.txt", timeout=10)
    assert anonymous.status_code == 401
    bucket.delete_blobs(list(bucket.list_blobs(prefix=f"{folder}/")))
    assert list(bucket.list_blobs(prefix=f"{folder}/")) == []


# --- refusals -------------------------------------------------------------------------------------


def test_the_emulators_owner_and_strangers_are_nobody_here(stack):
    url = f"{stack.hearth.url}/service-accounts/probe.json"
    assert requests.get(url, headers={"Authorization": "Bearer owner"}, timeout=10).status_code == 401
    assert requests.get(url, headers={"Authorization": "Bearer hearth-sa.forged.token.value"}, timeout=10).status_code == 401
    lookup = requests.post(f"{stack.hearth.url}/identitytoolkit.googleapis.com/v1/projects/{PROJECT}/accounts:lookup",
                           headers={"Authorization": "Bearer owner"}, json={"email": ["nobody@example.com"]}, timeout=10)
    assert lookup.status_code in (401, 403) and lookup.json()["error"]["message"] == "INSUFFICIENT_PERMISSION"


def test_bad_assertions_get_no_token(stack):
    key, other = stack.new_key("assertion-checks"), stack.new_key("another-account")
    assert exchange(stack, assertion(key)).status_code == 200
    cases = {
        "signed by another key under this key's ID": assertion(key, signer=other),
        "an unknown key": assertion(key, kid="0" * 32),
        "expired": assertion(key, iat=int(time.time()) - 7200, exp=int(time.time()) - 3600),
        "too long-lived": assertion(key, exp=int(time.time()) + 7200),
        "issued in the future": assertion(key, iat=int(time.time()) + 600, exp=int(time.time()) + 1200),
        "issued by another account": assertion(key, iss=other["client_email"], sub=None),
        "addressed elsewhere": assertion(key, aud="https://elsewhere.example.com/token"),
    }
    for case, token in cases.items():
        refused = exchange(stack, token)
        assert refused.status_code == 400, (case, refused.text)
        assert refused.json()["error"] == "invalid_grant", (case, refused.text)
    for case, body, error in [
        ("no grant type", {"assertion": assertion(key)}, "invalid_request"),
        ("another grant", {"grant_type": "client_credentials"}, "unsupported_grant_type"),
        ("no assertion", {"grant_type": JWT_BEARER}, "invalid_request"),
        ("not a JWT", {"grant_type": JWT_BEARER, "assertion": "not-a-jwt"}, "invalid_grant"),
    ]:
        refused = requests.post(f"{stack.hearth.url}/oauth2/token", data=body, timeout=10)
        assert (refused.status_code, refused.json()["error"]) == (400, error), (case, refused.text)
    # Acting for someone else (domain-wide delegation) is not a thing here.
    delegated = exchange(stack, assertion(key, sub="someone@example.com"))
    assert delegated.json()["error"] == "unauthorized_client"


def test_a_revoked_key_gets_no_token_and_its_tokens_stop(stack):
    key = stack.new_key("to-be-revoked")
    granted = exchange(stack, assertion(key))
    assert granted.status_code == 200, granted.text
    body = granted.json()
    assert body["token_type"] == "Bearer" and body["expires_in"] == 3600
    token = body["access_token"]
    url = f"{stack.hearth.url}/service-accounts/revocation.json"
    headers = {"Authorization": f"Bearer {token}"}
    assert requests.put(url, json="written", headers=headers, timeout=10).status_code == 200

    listed = stack.hearth_cli("admin", "service-account", "list")
    assert key["private_key_id"] in listed.stdout and "revoked" not in listed.stdout.split(key["private_key_id"])[1].split("\n")[0]
    revoked = stack.hearth_cli("admin", "service-account", "revoke", key["private_key_id"])
    assert revoked.returncode == 0, revoked.stderr
    assert exchange(stack, assertion(key)).json()["error"] == "invalid_grant"
    # Tokens already given stop within the server's recheck interval (seconds).
    wait_until(lambda: requests.get(url, headers=headers, timeout=10).status_code == 401, timeout=30,
               message="the revoked key's access token to be refused")
    # Revoking again finds nothing to revoke.
    assert stack.hearth_cli("admin", "service-account", "revoke", key["private_key_id"]).returncode != 0
    # A name that is not an account name makes no key.
    bad = stack.hearth_cli("admin", "service-account", "create", "--name", "Bad Name", "--out", str(stack.folder / "bad.json"))
    assert bad.returncode != 0 and not (stack.folder / "bad.json").exists()
