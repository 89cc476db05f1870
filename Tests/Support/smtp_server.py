"""An SMTP submission server on loopback that keeps what it receives, for Hearth's email tests
(password reset, email verification, sign-in links...).

Why a real one: Hearth sends mail through the operator's SMTP server, and the parts that break
in production are the protocol's: STARTTLS with certificate checking, AUTH PLAIN/LOGIN only
once encrypted, MIME bodies. aiosmtpd is an independent server implementation, configured here
as a submission server is: STARTTLS required before anything else, then AUTH required before
MAIL, with a freshly made self-signed certificate that the client must be told to trust (a
client that skips verification fails the handshake tests, as it should).

In a test (the server runs in a thread of the test process)::

    with SMTPTestServer(username="hearth", password="s3cret") as smtp:
        ...  # point Hearth at smtp.host, smtp.port; trust smtp.cert_path
        message = smtp.wait_for(lambda m: "ada@example.com" in m.rcpt_tos, timeout=10)
        message.subject, message.text, message.html

From the command line (for tests not written in Python)::

    .venv/bin/python Tests/Support/smtp_server.py --port 0 --username hearth --password s3cret

prints ``SMTP READY 127.0.0.1 PORT CERT_PATH`` once it accepts connections, then one
``SMTP MESSAGE {json}`` line per message received (the fields of ``ReceivedMessage.as_json``),
and serves until SIGTERM or SIGINT (with ``--exit-with-stdin``, also until its standard input
closes). ``--implicit-tls`` serves TLS from the first byte (port 465 style) instead of STARTTLS.
The certificate's folder is removed when the server stops.
"""

from __future__ import annotations

import argparse
import datetime
import email
import email.policy
import hmac
import ipaddress
import json
import logging
import shutil
import signal
import ssl
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Callable, Optional

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

HOST = "127.0.0.1"
READY_PREFIX = "SMTP READY "
MESSAGE_PREFIX = "SMTP MESSAGE "


class _DropLoginDataNotice(logging.Filter):
    """aiosmtpd 1.4 logs a deprecation warning for its own internal use of
    ``Session.login_data`` on every successful AUTH; it says nothing about this server."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Session.login_data is deprecated" not in record.getMessage()


logging.getLogger("mail.log").addFilter(_DropLoginDataNotice())


@dataclass
class ReceivedMessage:
    """One message as the server got it: the envelope (``mail_from``, ``rcpt_tos``), the
    parsed headers (``from_``, ``to`` as bare addresses, ``subject`` decoded), the text and
    HTML bodies (``None`` when absent), the login that sent it, and the raw bytes."""

    mail_from: str
    rcpt_tos: list[str]
    from_: str
    to: list[str]
    subject: str
    text: Optional[str]
    html: Optional[str]
    authenticated_as: Optional[str]
    raw: bytes = field(repr=False)
    message: EmailMessage = field(repr=False)

    @classmethod
    def parse(cls, mail_from: str, rcpt_tos: list[str], raw: bytes, authenticated_as: Optional[str]) -> "ReceivedMessage":
        # Parsed with newlines as a person reads them (the wire has CRLF); ``raw`` stays as sent.
        message = email.message_from_bytes(raw.replace(b"\r\n", b"\n"), policy=email.policy.default)
        text_part = message.get_body(preferencelist=("plain",))
        html_part = message.get_body(preferencelist=("html",))
        return cls(
            mail_from=mail_from,
            rcpt_tos=list(rcpt_tos),
            from_=next((address.addr_spec for address in _addresses(message, "From")), ""),
            to=[address.addr_spec for address in _addresses(message, "To")],
            subject=str(message.get("Subject", "")),
            text=text_part.get_content() if text_part is not None else None,
            html=html_part.get_content() if html_part is not None else None,
            authenticated_as=authenticated_as,
            raw=raw,
            message=message,
        )

    def as_json(self) -> dict:
        return {
            "mail_from": self.mail_from, "rcpt_tos": self.rcpt_tos, "from": self.from_, "to": self.to,
            "subject": self.subject, "text": self.text, "html": self.html,
            "authenticated_as": self.authenticated_as, "raw": self.raw.decode("utf-8", "replace"),
        }


def _addresses(message: EmailMessage, header: str) -> list:
    """The addresses in every ``header`` of ``message`` (display names and encoded words
    already handled by the email package's address parser)."""
    return [address for value in message.get_all(header, []) for address in value.addresses]


class Mailbox:
    """The messages received so far, safe to share between the server's thread and the test's.

    ``wait_for`` blocks on a condition variable that every arrival notifies, so a test waits
    exactly as long as the message takes, and a message that arrived before the call counts.
    """

    def __init__(self):
        self._messages: list[ReceivedMessage] = []
        self._changed = threading.Condition()

    def add(self, message: ReceivedMessage) -> None:
        with self._changed:
            self._messages.append(message)
            self._changed.notify_all()

    @property
    def messages(self) -> list[ReceivedMessage]:
        """A copy of the list, in order of arrival."""
        with self._changed:
            return list(self._messages)

    def clear(self) -> None:
        with self._changed:
            self._messages.clear()

    def wait_for(self, predicate: Callable[[ReceivedMessage], bool] = lambda _: True,
                 timeout: float = 10) -> ReceivedMessage:
        """The first message (received already or within ``timeout`` seconds) for which
        ``predicate`` is true; raises ``TimeoutError`` listing what did arrive otherwise."""
        def first_match():
            return next((message for message in self._messages if predicate(message)), None)

        with self._changed:
            found = self._changed.wait_for(first_match, timeout)
            if found is None:
                seen = [(message.rcpt_tos, message.subject) for message in self._messages]
                raise TimeoutError(f"no matching message within {timeout}s; received: {seen}")
            return found


def make_test_certificates(folder: Path, common_name: str = "localhost") -> tuple[Path, Path, Path]:
    """Writes a private certificate authority (``ca.pem``) and a one-day server certificate
    it issued for localhost, 127.0.0.1 and ::1 (``cert.pem``, ``key.pem``). A client trusts the
    server by loading ``ca.pem`` as its CA file, as it would a company's mail server; BoringSSL
    (Hearth's TLS) does not take a self-signed end-entity certificate as its own anchor."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Hearth test mail CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(
            digital_signature=True, key_encipherment=False, content_commitment=False, data_encipherment=False,
            key_agreement=False, key_cert_sign=True, crl_sign=True, encipher_only=False, decipher_only=False,
        ), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    public_key = key.public_key()
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(ca_name)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([
            x509.DNSName("localhost"),
            x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
            x509.IPAddress(ipaddress.ip_address("::1")),
        ]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(
            digital_signature=True, key_encipherment=True, content_commitment=False, data_encipherment=False,
            key_agreement=False, key_cert_sign=False, crl_sign=False, encipher_only=False, decipher_only=False,
        ), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    ca_path, cert_path, key_path = folder / "ca.pem", folder / "cert.pem", folder / "key.pem"
    ca_path.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption(),
    ))
    key_path.chmod(0o600)
    return ca_path, cert_path, key_path


class _Handler:
    """aiosmtpd's message hook: parses each message into the mailbox."""

    def __init__(self, mailbox: Mailbox, on_message: Optional[Callable[[ReceivedMessage], None]]):
        self.mailbox = mailbox
        self.on_message = on_message

    async def handle_DATA(self, server, session, envelope):
        message = ReceivedMessage.parse(envelope.mail_from, envelope.rcpt_tos, envelope.content, session.auth_data)
        self.mailbox.add(message)
        if self.on_message is not None:
            self.on_message(message)
        return "250 2.0.0 Message accepted for delivery"


class _Controller(Controller):
    """aiosmtpd's threaded controller, able to listen on port 0: its start-up check connects
    to ``self.port``, so that is set to the port the OS actually chose, first."""

    def _trigger_server(self):
        self.port = self.server.sockets[0].getsockname()[1]
        super()._trigger_server()


class SMTPTestServer:
    """A loopback SMTP server that requires TLS and AUTH PLAIN/LOGIN with one account.

    ``port=0`` (the default) picks a free port; after ``start()``, ``port`` is the real one.
    By default the client must STARTTLS before anything but EHLO/NOOP/QUIT (530 otherwise),
    AUTH is neither advertised nor accepted before TLS, and MAIL needs AUTH (530). With
    ``implicit_tls=True`` the connection is TLS from the start instead. ``cert_path`` is the
    certificate to trust; ``client_ssl_context()`` is a context that trusts only it.
    """

    def __init__(self, username: str = "hearth", password: str = "smtp-password", *, host: str = HOST,
                 port: int = 0, implicit_tls: bool = False,
                 on_message: Optional[Callable[[ReceivedMessage], None]] = None):
        self.username = username
        self.password = password
        self.host = host
        self.port = port
        self.implicit_tls = implicit_tls
        self.mailbox = Mailbox()
        self._on_message = on_message
        self._folder: Optional[Path] = None
        self._controller: Optional[_Controller] = None
        self.cert_path: Optional[Path] = None

    def _authenticate(self, server, session, envelope, mechanism, auth_data) -> AuthResult:
        if mechanism not in ("PLAIN", "LOGIN") or not isinstance(auth_data, LoginPassword):
            return AuthResult(success=False, handled=False)
        ok = hmac.compare_digest(auth_data.login, self.username.encode()) and hmac.compare_digest(
            auth_data.password, self.password.encode())
        return AuthResult(success=ok, handled=False, auth_data=auth_data.login.decode() if ok else None)

    def start(self) -> "SMTPTestServer":
        self._folder = Path(tempfile.mkdtemp(prefix="hearth-smtp-"))
        try:
            # cert_path is what clients trust: the private CA that issued the server's certificate.
            self.cert_path, server_cert, key_path = make_test_certificates(self._folder)
            tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            tls.minimum_version = ssl.TLSVersion.TLSv1_2
            tls.load_cert_chain(server_cert, key_path)
            self._controller = _Controller(
                _Handler(self.mailbox, self._on_message),
                hostname=self.host,
                port=self.port,
                server_hostname="localhost",
                ident="Hearth test SMTP",
                ssl_context=tls if self.implicit_tls else None,
                tls_context=None if self.implicit_tls else tls,
                require_starttls=not self.implicit_tls,
                authenticator=self._authenticate,
                auth_required=True,
                # aiosmtpd only counts a STARTTLS-upgraded connection as encrypted; with implicit
                # TLS every byte already is, and requiring it would refuse every AUTH. (It then
                # warns "Requiring AUTH while not requiring TLS" at each connection: harmless.)
                auth_require_tls=not self.implicit_tls,
                enable_SMTPUTF8=True,
            )
            self._controller.start()
            self.port = self._controller.port
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop(no_assert=True)  # no_assert: also after a failed start
            self._controller = None
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

    def client_ssl_context(self) -> ssl.SSLContext:
        """A client context that verifies the server against this server's certificate only."""
        return ssl.create_default_context(cafile=str(self.cert_path))

    @property
    def messages(self) -> list[ReceivedMessage]:
        return self.mailbox.messages

    def wait_for(self, predicate: Callable[[ReceivedMessage], bool] = lambda _: True,
                 timeout: float = 10) -> ReceivedMessage:
        return self.mailbox.wait_for(predicate, timeout)

    def __enter__(self) -> "SMTPTestServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: Optional[list[str]] = None) -> None:
    parser = argparse.ArgumentParser(description="A test SMTP server on 127.0.0.1 (STARTTLS + AUTH required).")
    parser.add_argument("--port", type=int, default=0, help="0 (the default) picks a free port")
    parser.add_argument("--username", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--implicit-tls", action="store_true", help="TLS from the first byte instead of STARTTLS")
    parser.add_argument("--exit-with-stdin", action="store_true",
                        help="also stop when standard input reaches its end (the parent went away)")
    args = parser.parse_args(argv)

    print_lock = threading.Lock()

    def report(message: ReceivedMessage) -> None:
        with print_lock:
            print(MESSAGE_PREFIX + json.dumps(message.as_json()), flush=True)

    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    with SMTPTestServer(args.username, args.password, port=args.port, implicit_tls=args.implicit_tls,
                        on_message=report) as server:
        with print_lock:
            print(f"{READY_PREFIX}{server.host} {server.port} {server.cert_path}", flush=True)
        if args.exit_with_stdin:
            def watch_stdin():
                sys.stdin.buffer.read()  # returns at EOF, when the parent closes or dies
                stop.set()
            threading.Thread(target=watch_stdin, name="stdin-watch", daemon=True).start()
        stop.wait()


if __name__ == "__main__":
    main()
