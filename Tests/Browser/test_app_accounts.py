"""The web app's account journeys against real parts: "Continue with <provider>" through a real
OpenID Connect provider (django-oidc-provider on loopback, its own login form), "Forgot
password?" and "Verify your email" with the links taken from messages a real SMTP server
(aiosmtpd, STARTTLS and AUTH) received, and an anonymous visitor who keeps their uid and posts
when they create an account."""
import json
import re
import tempfile
import uuid
from pathlib import Path

import pytest
import requests
from selenium.webdriver.common.by import By

from browser_support import launch_server, stop_server, wait_for, wait_until
from harness import free_port
from oidc_server import OIDCProvider, OIDCUser  # Tests/Support (on the path by Tests/pytest.ini)
from smtp_server import SMTPTestServer

ADA = OIDCUser("ada.provider@example.com", "ada-password", "Ada Provider")
LINKED = OIDCUser("linked.provider@example.com", "linked-password", "Lin Ked")


@pytest.fixture(scope="module")
def smtp():
    with SMTPTestServer("hearth-mail", "mail-secret") as server:
        yield server


@pytest.fixture(scope="module")
def accounts(smtp):
    """A demo server whose settings name the OIDC provider and the SMTP server."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with OIDCProvider("hearth-web", "web-secret", [f"{base}/__/auth/handler"], [ADA, LINKED]) as provider:
        folder = Path(tempfile.mkdtemp(prefix="hearth-accounts-"))
        settings = folder / "settings.json"
        settings.write_text(json.dumps({
            "publicURL": base,
            "auth": {
                "appName": "Hearth Test",
                "email": {
                    "from": "Hearth Test <noreply@example.com>",
                    "smtp": {"host": "127.0.0.1", "port": smtp.port, "security": "starttls", "username": "hearth-mail",
                             "password": "mail-secret", "trustedCertificates": str(smtp.cert_path)},
                },
                "providers": [{"id": "oidc.test", "displayName": "Test SSO", "issuer": provider.issuer,
                               "clientId": "hearth-web", "clientSecret": "web-secret"}],
            },
        }))
        served = launch_server(folder / "data", port=port, extra_args=("--settings", str(settings)))
        try:
            yield served
        finally:
            stop_server(served)


def rest(server, method: str, body: dict, admin: bool = False) -> dict:
    headers = {"Authorization": f"Bearer {server.admin_token}"} if admin else {}
    response = requests.post(f"{server.url}/identitytoolkit.googleapis.com/v1/accounts:{method}?key=x", json=body,
                             headers=headers, timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


def lookup(server, email: str) -> dict:
    users = rest(server, "lookup", {"email": [email]}, admin=True).get("users", [])
    assert users, f"no account for {email}"
    return users[0]


def link_in(message) -> str:
    match = re.search(r"https?://\S+/__/auth/action\?\S+", message.text)
    assert match, message.text
    return match.group(0)


def log_in_at_provider(driver, user: OIDCUser):
    """Fills the provider's own login form (on its origin) once the app sent the browser there."""
    wait_until(driver, lambda d: "/login/" in d.current_url, 20, "the provider's login page")
    driver.find_element(By.NAME, "username").send_keys(user.email)
    driver.find_element(By.NAME, "password").send_keys(user.password)
    driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()


def current_user(driver) -> dict | None:
    return driver.execute_script(
        "const u = window.hearth?.auth.currentUser; return u && { uid: u.uid, email: u.email, name: u.displayName,"
        " anonymous: u.isAnonymous, verified: u.emailVerified };")


def signed_in(driver, predicate=lambda user: True, timeout: float = 20) -> dict:
    user = {}

    def check(d):
        nonlocal user
        user = current_user(d)
        return user if user and predicate(user) else None

    wait_until(driver, check, timeout, "the page to be signed in")
    return user


def test_continue_with_a_provider_signs_in_through_its_login_page(accounts, browser):
    browser.get(f"{accounts.url}/#/signin")
    wait_for(browser, "[data-testid='provider-oidc.test']").click()
    # The provider's own login form, on its own origin.
    log_in_at_provider(browser, ADA)
    user = signed_in(browser, lambda u: u["email"] == ADA.email)
    assert user["name"] == "Ada Provider" and user["verified"] and not user["anonymous"]
    assert browser.current_url.startswith(f"{accounts.url}/#/")
    stored = lookup(accounts, ADA.email)
    assert stored["localId"] == user["uid"] and stored["emailVerified"] is True
    assert [entry["providerId"] for entry in stored["providerUserInfo"]] == ["oidc.test"]

    # The account page lists the provider as a way to sign in.
    browser.get(f"{accounts.url}/#/account")
    wait_for(browser, "[data-testid='method-oidc.test']")
    browser.execute_script("return window.hearth.auth.signOut()")


def test_a_returned_sign_in_cannot_be_replayed(accounts, browser):
    """The handler page's work, done twice: the second time the session is gone (single use)."""
    browser.get(f"{accounts.url}/__/auth/handler?code=forged&state=forged")
    error = wait_for(browser, "[data-testid='auth-error']")
    assert "started in another tab or has expired" in error.text
    assert current_user(browser) is None


def test_forgot_password_emails_a_link_that_sets_a_new_one(accounts, smtp, browser):
    email = f"forgetful-{uuid.uuid4().hex[:8]}@example.com"
    rest(accounts, "signUp", {"email": email, "password": "old-password", "returnSecureToken": True})
    browser.get(f"{accounts.url}/#/signin")
    wait_for(browser, "[data-testid='to-forgot']").click()
    wait_for(browser, "[data-testid='forgot-email']").send_keys(email)
    browser.find_element(By.CSS_SELECTOR, "[data-testid='forgot-submit']").click()
    wait_for(browser, "[data-testid='forgot-sent']")

    message = smtp.wait_for(lambda m: email in m.rcpt_tos, timeout=20)
    assert message.subject == "Reset your password for Hearth Test"
    assert message.authenticated_as == "hearth-mail"
    link = link_in(message)
    assert link.startswith(f"{accounts.url}/__/auth/action?mode=resetPassword&oobCode=")
    assert link in (message.html or "").replace("&amp;", "&")

    browser.get(link)
    wait_for(browser, "[data-testid='new-password']").send_keys("brand-new-password")
    browser.find_element(By.CSS_SELECTOR, "[data-testid='reset-submit']").click()
    wait_for(browser, "[data-testid='auth-done']")

    # The old password is gone, the new one works, and the link works once.
    old = requests.post(f"{accounts.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=x",
                        json={"email": email, "password": "old-password"}, timeout=10)
    assert old.status_code == 400 and old.json()["error"]["message"] == "INVALID_LOGIN_CREDENTIALS"
    rest(accounts, "signInWithPassword", {"email": email, "password": "brand-new-password"})
    browser.get(link)
    assert "used already" in wait_for(browser, "[data-testid='auth-error']").text


def test_verify_your_email_from_the_account_page(accounts, smtp, browser):
    email = f"verify-{uuid.uuid4().hex[:8]}@example.com"
    browser.get(f"{accounts.url}/#/signup")
    wait_for(browser, "[data-testid='signup-name']").send_keys("Vera Fied")
    browser.find_element(By.CSS_SELECTOR, "[data-testid='signup-email']").send_keys(email)
    browser.find_element(By.CSS_SELECTOR, "[data-testid='signup-password']").send_keys("vera-password")
    browser.find_element(By.CSS_SELECTOR, "[data-testid='signup-submit']").click()
    signed_in(browser, lambda u: u["email"] == email)
    browser.get(f"{accounts.url}/#/account")
    wait_for(browser, "[data-testid='verify-email']")
    browser.find_element(By.CSS_SELECTOR, "[data-testid='send-verification']").click()
    message = smtp.wait_for(lambda m: email in m.rcpt_tos, timeout=20)
    assert message.subject == "Verify your email for Hearth Test"
    browser.get(link_in(message))
    wait_for(browser, "[data-testid='auth-done']")
    assert lookup(accounts, email)["emailVerified"] is True
    # Back in the app, the token says so and the notice is gone.
    browser.get(f"{accounts.url}/#/account")
    signed_in(browser, lambda u: u["verified"])
    wait_for(browser, "[data-testid='method-password']")
    assert not browser.find_elements(By.CSS_SELECTOR, "[data-testid='verify-email']")
    browser.execute_script("return window.hearth.auth.signOut()")


def test_an_anonymous_visitor_keeps_their_uid_and_posts_when_signing_up(accounts, browser):
    browser.get(f"{accounts.url}/#/signin")
    wait_for(browser, "[data-testid='browse-anonymously']").click()
    anonymous = signed_in(browser, lambda u: u["anonymous"])
    # A comment made through the app's own action, before signing up.
    made = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        (async () => {
          const { addComment } = await import('/app/actions.js');
          const hearth = window.hearth;
          const first = await hearth.db.ref('posts').orderByKey().limitToFirst(1).get();
          const postId = Object.keys(first.val())[0];
          await addComment(hearth, postId, 'Made before signing up');
          return postId;
        })().then((postId) => done({ postId }), (error) => done({ error: error.message }));""")
    assert "error" not in made, made

    email = f"kept-{uuid.uuid4().hex[:8]}@example.com"
    browser.get(f"{accounts.url}/#/account")
    wait_for(browser, "[data-testid='keep-name']").send_keys("Kim Kept")
    browser.find_element(By.CSS_SELECTOR, "[data-testid='keep-email']").send_keys(email)
    browser.find_element(By.CSS_SELECTOR, "[data-testid='keep-password']").send_keys("kept-password")
    browser.find_element(By.CSS_SELECTOR, "[data-testid='keep-submit']").click()
    user = signed_in(browser, lambda u: not u["anonymous"] and u["email"] == email)
    assert user["uid"] == anonymous["uid"] and user["name"] == "Kim Kept"
    stored = lookup(accounts, email)
    assert stored["localId"] == anonymous["uid"]
    comments = requests.get(f"{accounts.url}/comments/{made['postId']}.json", params={"auth": accounts.admin_token},
                            timeout=10).json()
    mine = [c for c in comments.values() if c.get("text") == "Made before signing up"]
    assert len(mine) == 1 and mine[0]["author"]["uid"] == anonymous["uid"]
    # And the password signs in to that same account.
    assert rest(accounts, "signInWithPassword", {"email": email, "password": "kept-password"})["localId"] == anonymous["uid"]
    browser.execute_script("return window.hearth.auth.signOut()")


def test_an_anonymous_visitor_connects_a_provider_and_keeps_their_uid(accounts, browser):
    browser.get(f"{accounts.url}/#/signin")
    wait_for(browser, "[data-testid='browse-anonymously']").click()
    anonymous = signed_in(browser, lambda u: u["anonymous"])
    browser.get(f"{accounts.url}/#/account")
    wait_for(browser, "[data-testid='keep-what-you-made'] [data-testid='provider-oidc.test']").click()
    log_in_at_provider(browser, LINKED)
    user = signed_in(browser, lambda u: u["email"] == LINKED.email)
    assert user["uid"] == anonymous["uid"] and not user["anonymous"]
    assert lookup(accounts, LINKED.email)["localId"] == anonymous["uid"]
    browser.execute_script("return window.hearth.auth.signOut()")


# MARK: - The console's Users page

def test_console_searches_users_and_disables_resets_and_revokes(accounts, smtp, browser, screenshot):
    from test_console import open_console, row_action, wait_through_redraws

    marker = uuid.uuid4().hex[:8]
    emails = [f"console-{marker}-{i}@example.com" for i in range(3)]
    sessions = [rest(accounts, "signUp", {"email": email, "password": "console-pass", "returnSecureToken": True}) for email in emails]
    open_console(browser, accounts, "users")
    search = wait_for(browser, "[data-testid=users-search]")
    search.send_keys(marker)

    def listed(d):
        return sorted(cell.text for cell in d.find_elements(By.CSS_SELECTOR, "[data-testid=user-email]"))

    wait_through_redraws(browser, lambda d: listed(d) == emails, "the search does not list exactly the matching users")

    def row(email):
        return next(r for r in browser.find_elements(By.CSS_SELECTOR, "tr[data-testid=user-row]")
                    if r.find_element(By.CSS_SELECTOR, "[data-testid=user-email]").text == email)

    # Disable the first (the confirmation says their sessions end): the badge shows, the
    # server refuses their sign-in and refresh, and their ID token at once.
    database_read = requests.get(f"{accounts.url}/people.json?shallow=true&auth={sessions[0]['idToken']}", timeout=10)
    assert database_read.status_code == 200, database_read.text
    row_action(row(emails[0]), "user-toggle-disabled")
    assert "open sessions end now" in wait_for(browser, "dialog[open]").text
    wait_for(browser, "dialog [data-testid=confirm-ok]").click()
    wait_through_redraws(browser, lambda d: row(emails[0]).find_elements(By.CSS_SELECTOR, "[data-testid=user-disabled]"), "no badge")
    refused = requests.post(f"{accounts.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=x",
                            json={"email": emails[0], "password": "console-pass"}, timeout=10)
    assert refused.json()["error"]["message"] == "USER_DISABLED"
    database_read = requests.get(f"{accounts.url}/people.json?shallow=true&auth={sessions[0]['idToken']}", timeout=10)
    assert database_read.status_code == 401 and "disabled" in database_read.json()["error"], database_read.text

    # The filter shows only disabled users (of this search), then only enabled ones.
    Select = __import__("selenium.webdriver.support.ui", fromlist=["Select"]).Select
    Select(browser.find_element(By.CSS_SELECTOR, "[data-testid=users-filter]")).select_by_value("disabled")
    wait_through_redraws(browser, lambda d: listed(d) == emails[:1], "the disabled filter")
    Select(browser.find_element(By.CSS_SELECTOR, "[data-testid=users-filter]")).select_by_value("enabled")
    wait_through_redraws(browser, lambda d: listed(d) == emails[1:], "the enabled filter")
    screenshot(browser, "console-users-search")

    # A reset email for the second goes through the mail server, with a working link.
    row_action(row(emails[1]), "user-reset")
    message = smtp.wait_for(lambda m: emails[1] in m.rcpt_tos, timeout=20)
    assert "/__/auth/action?mode=resetPassword&oobCode=" in message.text

    # Revoking the third's sessions ends its refresh token.
    row_action(row(emails[2]), "user-revoke")
    wait_for(browser, "dialog [data-testid=confirm-ok]").click()
    # Its own toast (an earlier action's may still be showing).
    wait_through_redraws(browser, lambda d: any("Ended every session" in toast.text
                                                for toast in d.find_elements(By.CSS_SELECTOR, ".toast-success")),
                         "the sessions were not revoked")
    refreshed = requests.post(f"{accounts.url}/securetoken.googleapis.com/v1/token?key=x",
                              data={"grant_type": "refresh_token", "refresh_token": sessions[2]["refreshToken"]}, timeout=10)
    assert refreshed.status_code == 400 and refreshed.json()["error"]["message"] == "TOKEN_EXPIRED"


def test_console_adds_turns_off_and_removes_a_provider(accounts, browser):
    from test_console import open_console, wait_through_redraws

    open_console(browser, accounts, "users")
    wait_through_redraws(browser, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid=provider-row][data-id="oidc.test"]'),
                         "the provider from the settings file is not listed")
    name = f"second{uuid.uuid4().hex[:6]}"
    browser.find_element(By.CSS_SELECTOR, "[data-testid=provider-name]").send_keys(name)
    browser.find_element(By.CSS_SELECTOR, "[data-testid=provider-display]").send_keys("Second SSO")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=provider-issuer]").send_keys("https://sso.example.com")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=provider-client]").send_keys("client-2")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=provider-secret]").send_keys("secret-2")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=provider-add]").click()
    css = f'[data-testid=provider-row][data-id="oidc.{name}"]'
    wait_through_redraws(browser, lambda d: d.find_elements(By.CSS_SELECTOR, css), "the new provider is not listed")
    offered = requests.get(f"{accounts.url}/__/auth/providers", timeout=10).json()["providers"]
    assert {"providerId": f"oidc.{name}", "displayName": "Second SSO"} in offered

    browser.find_element(By.CSS_SELECTOR, f"{css} [data-testid=provider-toggle]").click()
    wait_through_redraws(browser, lambda d: "Off" in d.find_element(By.CSS_SELECTOR, css).text, "not shown as off")
    offered = requests.get(f"{accounts.url}/__/auth/providers", timeout=10).json()["providers"]
    assert f"oidc.{name}" not in [entry["providerId"] for entry in offered]

    browser.find_element(By.CSS_SELECTOR, f"{css} [data-testid=provider-delete]").click()
    wait_for(browser, "dialog [data-testid=confirm-ok]").click()
    wait_through_redraws(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, css), "the provider was not removed")
