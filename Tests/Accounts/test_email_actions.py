"""Emailed action codes through a real SMTP submission server (STARTTLS with a certificate
Hearth is told to trust, AUTH): password reset, email verification, sign-in by link, custom
Mustache templates, and a mail server that refuses Hearth's login.

Each message is read as it arrived at the SMTP server; the code is taken from the link in it,
as a person following the link would.
"""

from __future__ import annotations

import html
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest

from accounts_support import (
    APP_NAME, MAIL_FROM, SMTP_USERNAME, assert_firebase_error, action_link_in, free_port, launch_hearth, query_of,
    settings_for,
    stop_hearth, unique_email,
)

MAIL_TIMEOUT = 15
SENDER = MAIL_FROM.split("<")[1].rstrip(">")


def mail_to(smtp, address: str):
    """The first message to ``address`` (received already or within the timeout)."""
    return smtp.wait_for(lambda message: address in message.rcpt_tos, timeout=MAIL_TIMEOUT)


def messages_to(smtp, address: str) -> list:
    return [message for message in smtp.messages if address in message.rcpt_tos]


def read_link(hearth, message, mode: str) -> str:
    """The action link in ``message``: the same in its text and HTML bodies, to Hearth's
    action page on the public URL, for ``mode``."""
    base = f"{hearth.url}/__/auth/action"
    in_text = action_link_in(message.text, base)
    in_html = action_link_in(html.unescape(message.html), base)
    assert in_text == in_html
    assert in_text.startswith(f"{base}?mode={mode}&oobCode="), in_text
    return in_text


def check_envelope(message, address: str) -> None:
    assert message.rcpt_tos == [address] and message.to == [address]
    assert message.mail_from == SENDER and message.from_ == SENDER
    assert str(message.message["From"]) == MAIL_FROM
    assert message.authenticated_as == SMTP_USERNAME


def test_password_reset_by_email(hearth, smtp):
    email = unique_email("reset")
    old_password, new_password = "old-password-1", "new-password-2"
    account = hearth.sign_up(email, old_password)

    sent = hearth.ok("sendOobCode", {"requestType": "PASSWORD_RESET", "email": email})
    assert sent == {"kind": "identitytoolkit#GetOobConfirmationCodeResponse", "email": email}

    message = mail_to(smtp, email)
    check_envelope(message, email)
    assert message.subject == f"Reset your password for {APP_NAME}"
    assert email in message.text and APP_NAME in message.text
    link = read_link(hearth, message, "resetPassword")
    code = query_of(link)["oobCode"]

    # Looking at the code tells what it is for, and uses nothing up.
    for _ in range(2):
        assert hearth.ok("resetPassword", {"oobCode": code}) == {
            "kind": "identitytoolkit#ResetPasswordResponse", "requestType": "PASSWORD_RESET", "email": email}
    # Refusals that leave the code usable: the wrong use, a weak password.
    hearth.refused("update", {"oobCode": code}, "INVALID_OOB_CODE")
    hearth.refused("resetPassword", {"oobCode": code, "newPassword": "abc"}, "WEAK_PASSWORD")
    hearth.refused("resetPassword", {"oobCode": code + "x", "newPassword": new_password}, "INVALID_OOB_CODE")
    assert hearth.sign_in_password(email, old_password).status_code == 200

    reset = hearth.ok("resetPassword", {"oobCode": code, "newPassword": new_password})
    assert (reset["email"], reset["requestType"]) == (email, "PASSWORD_RESET")

    signed_in = hearth.sign_in_password(email, new_password)
    assert signed_in.status_code == 200, signed_in.text
    assert signed_in.json()["localId"] == account["localId"]
    assert_firebase_error(hearth.sign_in_password(email, old_password), "INVALID_LOGIN_CREDENTIALS")
    assert_firebase_error(hearth.refresh(account["refreshToken"]), "TOKEN_EXPIRED")

    # The code worked once.
    hearth.refused("resetPassword", {"oobCode": code, "newPassword": "third-password-3"}, "INVALID_OOB_CODE")
    hearth.refused("resetPassword", {"oobCode": code}, "INVALID_OOB_CODE")
    assert hearth.sign_in_password(email, new_password).status_code == 200
    assert len(messages_to(smtp, email)) == 1


def test_names_in_messages_are_escaped_for_html_only(hearth, smtp):
    email = unique_email("markup")
    account = hearth.sign_up(email, "password-1")
    name = "Zoë <b>Bold</b> & Co"
    hearth.ok("update", {"idToken": account["idToken"], "displayName": name})
    hearth.ok("sendOobCode", {"requestType": "PASSWORD_RESET", "email": email})
    message = mail_to(smtp, email)
    assert f"Hello {name}," in message.text
    assert "Zoë &lt;b&gt;Bold&lt;/b&gt; &amp; Co" in message.html and "<b>Bold</b>" not in message.html
    read_link(hearth, message, "resetPassword")


def test_verify_email_by_email(hearth, smtp):
    email = unique_email("verify")
    account = hearth.sign_up(email, "password-1")
    assert hearth.lookup(account["idToken"])["emailVerified"] is False

    sent = hearth.ok("sendOobCode", {"requestType": "VERIFY_EMAIL", "idToken": account["idToken"]})
    assert sent["email"] == email
    message = mail_to(smtp, email)
    check_envelope(message, email)
    assert message.subject == f"Verify your email for {APP_NAME}"
    code = query_of(read_link(hearth, message, "verifyEmail"))["oobCode"]

    assert hearth.ok("resetPassword", {"oobCode": code})["requestType"] == "VERIFY_EMAIL"
    # A verification code does not reset a password (and is not used up by trying).
    hearth.refused("resetPassword", {"oobCode": code, "newPassword": "hijacked-1"}, "INVALID_OOB_CODE")
    assert hearth.lookup(account["idToken"])["emailVerified"] is False

    applied = hearth.ok("update", {"oobCode": code})
    assert (applied["localId"], applied["email"], applied["emailVerified"]) == (account["localId"], email, True)
    assert hearth.lookup(account["idToken"])["emailVerified"] is True
    assert hearth.sign_in_password(email, "password-1").status_code == 200

    hearth.refused("update", {"oobCode": code}, "INVALID_OOB_CODE")


def test_email_sign_in_link(hearth, smtp):
    email = unique_email("link")
    continue_url = f"{hearth.url}/finish-sign-in?from=test"
    before = hearth.uids()

    # Without a continue URL there is nothing to send.
    hearth.refused("sendOobCode", {"requestType": "EMAIL_SIGNIN", "email": email}, "MISSING_CONTINUE_URI")

    sent = hearth.ok("sendOobCode", {"requestType": "EMAIL_SIGNIN", "email": email, "continueUrl": continue_url})
    assert sent["email"] == email
    message = mail_to(smtp, email)
    check_envelope(message, email)
    assert message.subject == f"Sign in to {APP_NAME}"
    link = read_link(hearth, message, "signIn")
    assert query_of(link)["continueUrl"] == continue_url
    code = query_of(link)["oobCode"]
    assert len(messages_to(smtp, email)) == 1, "the refused request sent nothing"

    # Another address: refused, nothing made, the code still good.
    hearth.refused("signInWithEmailLink", {"email": unique_email("someone-else"), "oobCode": code}, "INVALID_EMAIL")
    assert hearth.uids() == before
    assert hearth.admin_lookup(email=[email]) == []

    signed_in = hearth.ok("signInWithEmailLink", {"email": email, "oobCode": code})
    assert signed_in["isNewUser"] is True and signed_in["email"] == email
    uid = signed_in["localId"]
    assert uid not in before
    assert hearth.uids() == before | {uid}
    account = hearth.lookup(signed_in["idToken"])
    assert (account["email"], account["emailVerified"]) == (email, True)

    hearth.refused("signInWithEmailLink", {"email": email, "oobCode": code}, "INVALID_OOB_CODE")
    assert hearth.uids() == before | {uid}

    # A second link signs in to the same account.
    hearth.ok("sendOobCode", {"requestType": "EMAIL_SIGNIN", "email": email, "continueUrl": continue_url})
    second = smtp.wait_for(lambda m: email in m.rcpt_tos and m is not message, timeout=MAIL_TIMEOUT)
    again = hearth.ok("signInWithEmailLink", {"email": email, "oobCode": query_of(read_link(hearth, second, "signIn"))["oobCode"]})
    assert (again["localId"], again["isNewUser"]) == (uid, False)


def test_password_reset_for_an_unknown_address_sends_nothing(hearth, smtp):
    unknown = unique_email("nobody")
    before = hearth.uids()

    # Anyone asking gets the answer a real account gets (Firebase's email enumeration
    # protection); an admin is told the truth.
    answer = hearth.ok("sendOobCode", {"requestType": "PASSWORD_RESET", "email": unknown})
    assert answer == {"kind": "identitytoolkit#GetOobConfirmationCodeResponse", "email": unknown}
    hearth.refused("sendOobCode", {"requestType": "PASSWORD_RESET", "email": unknown}, "EMAIL_NOT_FOUND", admin=True)
    assert hearth.uids() == before

    # A message sent after those arrives; none went to the unknown address.
    known = unique_email("known")
    hearth.sign_up(known, "password-1")
    hearth.ok("sendOobCode", {"requestType": "PASSWORD_RESET", "email": known})
    mail_to(smtp, known)
    assert messages_to(smtp, unknown) == []


# --- servers of their own ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def templated_hearth(smtp):
    folder = Path(tempfile.mkdtemp(prefix="hearth-templates-"))
    (folder / "password-reset.subject.mustache").write_text("Reset {{{appName}}} now")
    port = free_port()
    server = launch_hearth(settings_for(port, smtp=smtp, app_name="Test App", templates=str(folder)), port=port)
    yield server
    stop_hearth(server)
    shutil.rmtree(folder, ignore_errors=True)


def test_custom_templates_and_app_name(templated_hearth, smtp):
    email = unique_email("template")
    templated_hearth.sign_up(email, "password-1")
    templated_hearth.ok("sendOobCode", {"requestType": "PASSWORD_RESET", "email": email})
    message = mail_to(smtp, email)
    assert message.subject == "Reset Test App now"
    # The parts the folder does not replace keep the built-in text, with the app's name.
    assert "Test App" in message.text and "Test App" in message.html
    code = query_of(read_link(templated_hearth, message, "resetPassword"))["oobCode"]
    assert templated_hearth.ok("resetPassword", {"oobCode": code})["email"] == email

    # Other kinds keep the built-in subject, with the configured app name.
    account = templated_hearth.sign_in_password(email, "password-1").json()
    templated_hearth.ok("sendOobCode", {"requestType": "VERIFY_EMAIL", "idToken": account["idToken"]})
    verify = smtp.wait_for(lambda m: email in m.rcpt_tos and m.subject != "Reset Test App now", timeout=MAIL_TIMEOUT)
    assert verify.subject == "Verify your email for Test App"


FAILING_MAIL_SETTINGS = {
    "wrong SMTP password": {"smtp_password": "not-the-smtp-password"},
    # The mail server's self-signed certificate is not among those trusted: STARTTLS must fail
    # rather than go on unverified.
    "untrusted certificate": {"trust_certificate": False},
}


@pytest.fixture(scope="module", params=list(FAILING_MAIL_SETTINGS))
def failing_mail_hearth(request, smtp):
    port = free_port()
    server = launch_hearth(settings_for(port, smtp=smtp, **FAILING_MAIL_SETTINGS[request.param]), port=port)
    yield server
    stop_hearth(server)


def action_codes_for(hearth, email: str) -> list[tuple]:
    """The action codes Hearth keeps for ``email`` (read from its accounts database; codes are
    kept only as digests, so nothing here could be used)."""
    database = hearth.data / "auth" / "accounts.sqlite"
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
        return connection.execute("SELECT kind, email FROM action_code WHERE email = ?", (email,)).fetchall()


def test_a_mail_server_that_cannot_be_used_fails_the_request(failing_mail_hearth, hearth, smtp):
    """An app's request is answered at once, the same whether or not the address has an
    account (so neither the answer nor its timing tells), and the email goes in the
    background: its failure is logged. An admin's request waits for the mail server and is
    refused with 503 EMAIL_SEND_FAILED."""
    server = failing_mail_hearth
    email = unique_email("smtpfail")
    account = server.sign_up(email, "password-1")
    stored_before = server.account(account["localId"])

    for body in ({"requestType": "PASSWORD_RESET", "email": email},
                 {"requestType": "VERIFY_EMAIL", "idToken": account["idToken"]},
                 {"requestType": "EMAIL_SIGNIN", "email": email, "continueUrl": server.url + "/done"}):
        assert server.ok("sendOobCode", body)["email"] == email
    server.wait_for_count("an email was not sent", 3, MAIL_TIMEOUT, "three failed emails logged")
    error = server.refused("sendOobCode", {"requestType": "PASSWORD_RESET", "email": email}, "EMAIL_SEND_FAILED", status=503,
                           admin=True)
    assert error["code"] == 503

    # The account is as it was.
    assert server.account(account["localId"]) == stored_before
    assert server.sign_in_password(email, "password-1").status_code == 200
    # Hearth stores each code before it tries to send it, and keeps it when sending fails
    # (only its digest: nobody holds the code, and it expires).
    assert sorted(kind for kind, _ in action_codes_for(server, email)) == ["EMAIL_SIGNIN", "PASSWORD_RESET", "PASSWORD_RESET", "VERIFY_EMAIL"]

    # Nothing reached the mail server: a message sent afterwards (by the well-configured
    # server) arrives, and none went to this address.
    known = unique_email("after-smtpfail")
    hearth.sign_up(known, "password-1")
    hearth.ok("sendOobCode", {"requestType": "PASSWORD_RESET", "email": known})
    mail_to(smtp, known)
    assert messages_to(smtp, email) == []
