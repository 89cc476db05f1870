"""Checks the test SMTP server (smtp_server.py) with Python's smtplib, as a stand-in for
Hearth's mailer.

Why: Hearth's email tests will trust this server to behave like a real submission server: no
AUTH or MAIL before STARTTLS, no MAIL without AUTH, wrong passwords refused, a certificate a
client has to be told to trust, and messages parsed faithfully (encoded headers, text and
HTML parts). If one of those stopped holding, a Hearth bug could pass unseen.
"""

from __future__ import annotations

import base64
import json
import queue
import secrets
import smtplib
import ssl
import subprocess
import sys
import threading
import time
from email.message import EmailMessage
from pathlib import Path

import pytest

from smtp_server import MESSAGE_PREFIX, READY_PREFIX, SMTPTestServer

USERNAME = "hearth-mailer"
PASSWORD = "correct-smtp-password"
TIMEOUT = 10


@pytest.fixture(scope="module")
def smtp():
    with SMTPTestServer(USERNAME, PASSWORD) as server:
        yield server


def reset_email(subject: str) -> EmailMessage:
    """A message shaped like the password-reset mail Hearth will send: a display name and a
    subject outside ASCII, and text and HTML alternatives."""
    message = EmailMessage()
    message["From"] = "Hearth <noreply@hearth.test>"
    message["To"] = "Zoë Ångström <zoe@example.com>"
    message["Subject"] = subject
    message.set_content("Reset your password: https://hearth.test/reset?oobCode=abc\n")
    message.add_alternative('<p><a href="https://hearth.test/reset?oobCode=abc">Réinitialiser</a></p>\n', subtype="html")
    return message


def unique_subject() -> str:
    return f"Réinitialisez votre mot de passe {secrets.token_hex(4)}"


def test_starttls_login_and_send(smtp):
    subject = unique_subject()
    with smtplib.SMTP(smtp.host, smtp.port, timeout=TIMEOUT) as client:
        client.ehlo()
        assert not client.has_extn("auth"), "AUTH must not be offered before STARTTLS"
        client.starttls(context=smtp.client_ssl_context())
        client.ehlo()
        assert set(client.esmtp_features["auth"].upper().split()) >= {"PLAIN", "LOGIN"}
        client.login(USERNAME, PASSWORD)
        refused = client.send_message(reset_email(subject))
    assert refused == {}

    received = smtp.wait_for(lambda message: message.subject == subject, timeout=TIMEOUT)
    assert received.mail_from == "noreply@hearth.test"
    assert received.rcpt_tos == ["zoe@example.com"]
    assert (received.from_, received.to) == ("noreply@hearth.test", ["zoe@example.com"])
    assert str(received.message["To"]) == "Zoë Ångström <zoe@example.com>"
    assert received.text == "Reset your password: https://hearth.test/reset?oobCode=abc\n"
    assert 'href="https://hearth.test/reset?oobCode=abc">Réinitialiser</a>' in received.html
    assert received.authenticated_as == USERNAME


@pytest.mark.parametrize("mechanism", ["PLAIN", "LOGIN"])
def test_each_auth_mechanism_works(smtp, mechanism):
    subject = unique_subject()
    with smtplib.SMTP(smtp.host, smtp.port, timeout=TIMEOUT) as client:
        client.starttls(context=smtp.client_ssl_context())
        client.ehlo()
        client.user, client.password = USERNAME, PASSWORD
        code, _ = client.auth(mechanism, getattr(client, f"auth_{mechanism.lower()}"))
        assert code == 235
        client.send_message(reset_email(subject))
    assert smtp.wait_for(lambda message: message.subject == subject).authenticated_as == USERNAME


def test_wrong_password_is_refused(smtp):
    with smtplib.SMTP(smtp.host, smtp.port, timeout=TIMEOUT) as client:
        client.starttls(context=smtp.client_ssl_context())
        with pytest.raises(smtplib.SMTPAuthenticationError) as refused:
            client.login(USERNAME, "wrong password")
        assert refused.value.smtp_code == 535
        with pytest.raises(smtplib.SMTPSenderRefused) as unauthenticated:
            client.sendmail("noreply@hearth.test", ["zoe@example.com"], b"Subject: no\r\n\r\nno\r\n")
        assert unauthenticated.value.smtp_code == 530


def test_nothing_but_starttls_before_tls(smtp):
    plain = base64.b64encode(f"\0{USERNAME}\0{PASSWORD}".encode()).decode()
    with smtplib.SMTP(smtp.host, smtp.port, timeout=TIMEOUT) as client:
        client.ehlo()
        assert client.docmd("AUTH", f"PLAIN {plain}")[0] == 530
        assert client.docmd("MAIL", "FROM:<noreply@hearth.test>")[0] == 530
        assert client.noop()[0] == 250


def test_the_certificate_must_be_trusted(smtp):
    with smtplib.SMTP(smtp.host, smtp.port, timeout=TIMEOUT) as client:
        with pytest.raises(ssl.SSLCertVerificationError):
            client.starttls(context=ssl.create_default_context())

    strict = smtp.client_ssl_context()
    strict.verify_flags |= ssl.VERIFY_X509_STRICT  # Python 3.13's default; stricter TLS stacks
    with smtplib.SMTP("localhost", smtp.port, timeout=TIMEOUT) as client:
        client.starttls(context=strict)
        assert client.sock.getpeercert()["subject"] == ((("commonName", "localhost"),),)


def test_wait_for_times_out_with_what_arrived(smtp):
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="no matching message"):
        smtp.wait_for(lambda message: False, timeout=0.2)
    assert time.monotonic() - started < 5


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")  # see SMTPTestServer.start
def test_implicit_tls():
    subject = unique_subject()
    with SMTPTestServer(USERNAME, PASSWORD, implicit_tls=True) as server:
        with smtplib.SMTP_SSL(server.host, server.port, context=server.client_ssl_context(), timeout=TIMEOUT) as client:
            client.login(USERNAME, PASSWORD)
            client.send_message(reset_email(subject))
        assert server.wait_for(lambda message: message.subject == subject).rcpt_tos == ["zoe@example.com"]
        cert_path = server.cert_path
    assert not cert_path.exists(), "the certificate folder is removed on stop"


def test_command_line_server_reports_messages_as_json():
    script = Path(__file__).with_name("smtp_server.py")
    process = subprocess.Popen(
        [sys.executable, str(script), "--username", USERNAME, "--password", PASSWORD, "--exit-with-stdin"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    lines: "queue.Queue[str | None]" = queue.Queue()

    def read_stdout():
        for line in process.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read_stdout, daemon=True).start()

    def next_line(prefix: str) -> str:
        line = lines.get(timeout=30)
        assert line is not None and line.startswith(prefix), f"{line!r}; stderr: {process.stderr.read()}"
        return line[len(prefix):]

    try:
        host, port, cert_path = next_line(READY_PREFIX).split()
        subject = unique_subject()
        with smtplib.SMTP(host, int(port), timeout=TIMEOUT) as client:
            client.starttls(context=ssl.create_default_context(cafile=cert_path))
            client.login(USERNAME, PASSWORD)
            client.send_message(reset_email(subject))
        reported = json.loads(next_line(MESSAGE_PREFIX))
        assert (reported["subject"], reported["to"], reported["authenticated_as"]) == (subject, ["zoe@example.com"], USERNAME)
        assert reported["html"].startswith('<p><a href="https://hearth.test/reset?oobCode=abc">')

        process.stdin.close()  # --exit-with-stdin: the end of stdin stops the server
        assert process.wait(timeout=TIMEOUT) == 0
        assert not Path(cert_path).exists()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()
        process.stderr.close()
