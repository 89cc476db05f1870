"""A Web Push service on loopback, for testing Hearth's push sender against the real protocol.

Browsers' push services (Mozilla's autopush, Google's FCM, Apple's) cannot be reached from the
test machines, so this one plays their part, as the RFCs define it, and plays the browser too
(it holds each subscription's private key, so it can read what it was sent):

- ``POST /subscribe``: a new subscription, as a browser's ``pushManager.subscribe()`` makes it.
  The body may be JSON ``{"applicationServerKey": "<base64url P-256 public key>"}`` (the VAPID
  key the subscription is restricted to, RFC 8292 §3.2); an empty body makes an unrestricted one.
  Each subscription gets its own P-256 key pair and 16-byte authentication secret (RFC 8291 §2).
  Answers 201 with ``PushSubscription.toJSON()``'s shape: ``{"endpoint":
  "http://127.0.0.1:<port>/push/<id>", "expirationTime": null, "keys": {"p256dh", "auth"}}``.
- ``POST /push/<id>``: a push message (RFC 8030 §5). In this order:
  404 for an unknown subscription, 410 for one deleted;
  401 without ``Authorization: vapid t=<JWT>, k=<key>`` (RFC 8292 §3), 403 when the token is not
  an ES256 JWT signed by ``k``, its ``aud`` is not the endpoint's origin, ``exp`` is past or more
  than 24 hours ahead, ``sub`` is missing, or ``k`` is not the subscription's
  ``applicationServerKey``;
  413 for a body over 4,096 bytes;
  400 without a ``TTL`` of digits (RFC 8030 §5.2), for an ``Urgency`` other than very-low, low,
  normal or high, a ``Topic`` that is not 1-32 base64url characters, a ``Content-Encoding`` other
  than ``aes128gcm``, or a body that does not decrypt (RFC 8291, with ``http_ece``).
  Otherwise 201 with a ``Location`` (the message's URL), and the message is kept.
- ``DELETE /subscriptions/<id>``: the browser unsubscribed (204); its endpoint answers 410 after.
- ``GET /messages/<id>``: the messages the subscription received, oldest first, as JSON:
  ``[{"payload": "<base64url of the decrypted bytes>", "ttl": 60, "urgency": "high",
  "topic": null, "vapid": {"aud": ..., "sub": ..., "exp": ...}}]``.
- ``POST /subscriptions/<id>/answers``: the next pushes to the subscription get these answers
  instead (a list of ``{"status": 503, "headers": {"Retry-After": "7"}, "delay": 0}``, used in
  order; ``delay`` is seconds to wait before answering), for testing how a sender takes a
  failing, throttling, redirecting or slow push service. The request is not checked or kept.

Run::

    .venv/bin/python Tests/Support/push_service.py [--port 0]

It prints ``listening <port>`` once it accepts connections, and serves until SIGTERM, SIGINT or
the end of its standard input (so it does not outlive a test process that dies).
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import secrets
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import http_ece
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

MAX_BODY = 4096
MAX_TOKEN_LIFETIME = 24 * 3600
URGENCIES = {"very-low", "low", "normal", "high"}
TOPIC = re.compile(r"^[A-Za-z0-9_-]{1,32}$")


def b64url_encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    if not re.fullmatch(r"[A-Za-z0-9_-]*", text):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Subscription:
    def __init__(self, application_server_key: bytes | None):
        self.id = secrets.token_urlsafe(12)
        self.private_key = ec.generate_private_key(ec.SECP256R1())
        self.public_key = self.private_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        self.auth = secrets.token_bytes(16)
        self.application_server_key = application_server_key
        self.deleted = False
        self.messages: list[dict] = []
        self.answers: list[dict] = []


class PushService(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int):
        super().__init__(("127.0.0.1", port), Handler)
        self.lock = threading.Lock()
        self.subscriptions: dict[str, Subscription] = {}

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class Refusal(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: PushService

    def log_message(self, format, *args):  # quiet: the test reads stdout for its own line
        pass

    def handle(self):
        try:
            super().handle()
        except ConnectionError:
            pass  # the client gave up (a sender's timeout): nothing to answer to

    # Answers.

    def answer(self, status: int, body: object = None, headers: dict[str, str] | None = None):
        data = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if body is not None and not isinstance(body, bytes):
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        if length > 1 << 20:
            # Not worth reading; the connection cannot be used again without reading it.
            self.close_connection = True
            raise Refusal(413, "far too large")
        return self.rfile.read(length) if length else b""

    def subscription(self, id: str) -> Subscription | None:
        with self.server.lock:
            return self.server.subscriptions.get(id)

    # Routes.

    def do_POST(self):
        try:
            if self.path == "/subscribe":
                return self.subscribe()
            if match := re.fullmatch(r"/push/([A-Za-z0-9_-]+)", self.path):
                return self.push(match.group(1))
            if match := re.fullmatch(r"/subscriptions/([A-Za-z0-9_-]+)/answers", self.path):
                return self.script(match.group(1))
            self.read_body()
            self.answer(404, {"error": "no such resource"})
        except Refusal as refusal:
            self.answer(refusal.status, {"error": refusal.message})

    def do_DELETE(self):
        match = re.fullmatch(r"/subscriptions/([A-Za-z0-9_-]+)", self.path)
        subscription = match and self.subscription(match.group(1))
        if not subscription:
            return self.answer(404, {"error": "no such subscription"})
        with self.server.lock:
            subscription.deleted = True
        self.answer(204)

    def do_GET(self):
        match = re.fullmatch(r"/messages/([A-Za-z0-9_-]+)", self.path)
        subscription = match and self.subscription(match.group(1))
        if not subscription:
            return self.answer(404, {"error": "no such subscription"})
        with self.server.lock:
            messages = list(subscription.messages)
        self.answer(200, messages)

    def subscribe(self):
        body = self.read_body()
        key = None
        if body.strip():
            try:
                options = json.loads(body)
                if options.get("applicationServerKey") is not None:
                    key = b64url_decode(options["applicationServerKey"])
                    ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), key)
            except (ValueError, AttributeError, TypeError) as error:
                raise Refusal(400, f"bad applicationServerKey: {error}")
        subscription = Subscription(key)
        with self.server.lock:
            self.server.subscriptions[subscription.id] = subscription
        self.answer(201, {
            "endpoint": f"{self.server.origin}/push/{subscription.id}",
            "expirationTime": None,
            "keys": {"p256dh": b64url_encode(subscription.public_key), "auth": b64url_encode(subscription.auth)},
        })

    def script(self, id: str):
        answers = json.loads(self.read_body() or b"[]")
        subscription = self.subscription(id)
        if not subscription:
            raise Refusal(404, "no such subscription")
        with self.server.lock:
            subscription.answers.extend(answers)
        self.answer(204)

    def push(self, id: str):
        body = self.read_body()
        subscription = self.subscription(id)
        if not subscription:
            raise Refusal(404, "no such subscription")
        with self.server.lock:
            scripted = subscription.answers.pop(0) if subscription.answers else None
        if scripted:
            time.sleep(scripted.get("delay", 0))
            return self.answer(scripted["status"], {"error": "scripted"}, scripted.get("headers"))
        if subscription.deleted:
            raise Refusal(410, "the subscription has expired or been removed")

        claims = self.check_vapid(subscription)
        if len(body) > MAX_BODY:
            raise Refusal(413, f"a push message body is at most {MAX_BODY} bytes, not {len(body)}")
        ttl = self.headers.get("TTL")
        if ttl is None or not re.fullmatch(r"[0-9]+", ttl.strip()):
            raise Refusal(400, "a TTL header of seconds is required")
        urgency = self.headers.get("Urgency", "normal").strip()
        if urgency not in URGENCIES:
            raise Refusal(400, f"bad Urgency {urgency!r}")
        topic = self.headers.get("Topic")
        if topic is not None and not TOPIC.fullmatch(topic.strip()):
            raise Refusal(400, f"bad Topic {topic!r}")
        if (self.headers.get("Content-Encoding") or "").strip().lower() != "aes128gcm":
            raise Refusal(400, "the body must be aes128gcm-encoded")
        try:
            payload = http_ece.decrypt(
                body, private_key=subscription.private_key, auth_secret=subscription.auth, version="aes128gcm")
        except Exception as error:  # http_ece raises several kinds; any is a body it cannot read
            raise Refusal(400, f"the body does not decrypt: {type(error).__name__}: {error}")

        message_id = secrets.token_urlsafe(12)
        with self.server.lock:
            subscription.messages.append({
                "id": message_id,
                "payload": b64url_encode(payload),
                "ttl": int(ttl.strip()),
                "urgency": urgency,
                "topic": topic.strip() if topic is not None else None,
                "vapid": claims,
            })
        self.answer(201, headers={"Location": f"{self.server.origin}/message/{message_id}"}, body=b"")

    def check_vapid(self, subscription: Subscription) -> dict:
        """RFC 8292 §3 and §4.2: the claims of a valid token, or a Refusal."""
        header = self.headers.get("Authorization")
        if not header:
            raise Refusal(401, "VAPID authorization is required")
        match = re.fullmatch(r"vapid\s+(.*)", header.strip(), re.IGNORECASE)
        if not match:
            raise Refusal(401, "the Authorization scheme must be vapid")
        parameters = {}
        for part in match.group(1).split(","):
            name, _, value = part.strip().partition("=")
            parameters[name.strip().lower()] = value.strip()
        token, key_text = parameters.get("t"), parameters.get("k")
        if not token or not key_text:
            raise Refusal(401, "vapid needs t= and k=")
        try:
            key = b64url_decode(key_text)
            public_key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), key)
        except ValueError:
            raise Refusal(403, "k= is not a P-256 public key")
        if subscription.application_server_key is not None and key != subscription.application_server_key:
            raise Refusal(403, "k= is not the applicationServerKey the subscription was made with")

        try:
            header_part, claims_part, signature_part = token.split(".")
            jose = json.loads(b64url_decode(header_part))
            claims = json.loads(b64url_decode(claims_part))
            signature = b64url_decode(signature_part)
        except ValueError:
            raise Refusal(403, "t= is not a JWT")
        if jose.get("alg") != "ES256" or len(signature) != 64:
            raise Refusal(403, "the token must be signed with ES256")
        r, s = int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")
        try:
            public_key.verify(
                encode_dss_signature(r, s), f"{header_part}.{claims_part}".encode("ascii"), ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            raise Refusal(403, "the token's signature does not verify with k=")
        if not isinstance(claims, dict):
            raise Refusal(403, "the token's claims are not an object")
        if claims.get("aud") != self.server.origin:
            raise Refusal(403, f"aud must be {self.server.origin}, not {claims.get('aud')!r}")
        exp = claims.get("exp")
        now = time.time()
        if not isinstance(exp, (int, float)) or isinstance(exp, bool):
            raise Refusal(403, "exp must be a number")
        if exp <= now:
            raise Refusal(403, "the token has expired")
        if exp > now + MAX_TOKEN_LIFETIME:
            raise Refusal(403, "exp must be at most 24 hours ahead")
        if not isinstance(claims.get("sub"), str) or not claims["sub"]:
            raise Refusal(403, "sub (the sender's contact) is required")
        return {"aud": claims["aud"], "sub": claims["sub"], "exp": exp}


def main():
    # A parent may start us with signals blocked (Swift's Foundation.Process passes on its
    # thread's mask): unblock them, so SIGTERM and SIGINT stop the service.
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    arguments = parser.parse_args()
    service = PushService(arguments.port)

    def stop_at_end_of_input():
        sys.stdin.read()
        service.shutdown()

    threading.Thread(target=stop_at_end_of_input, daemon=True).start()
    print(f"listening {service.server_address[1]}", flush=True)
    try:
        service.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        service.server_close()


if __name__ == "__main__":
    main()
