"""Account flows through the official Firebase JS SDK 9.8.1 auth module (firebase-auth.js) in
headless chromium, against `hearth serve --emulator`: emailed action codes (password reset,
email verification, sign-in by link, verify-before-update-email), sign-in methods, anonymous
upgrades that keep the uid, provider data, unlinking, password changes, and sign-in with an
OpenID Connect ID token the app got from a real provider (django-oidc-provider, see
Tests/Support/oidc_server.py), each through the SDK's own functions.

Codes are read the way apps test against Firebase's emulator: `GET /emulator/v1/projects/
<project>/oobCodes` (`{"oobCodes": [{email, oobCode, oobLink, requestType}]}`), newest last.
The project is the server's (`--project`); harness.js gives the SDK the same ID ("hearth").

Expectations are Firebase's (production, or its emulator where production cannot be seen
from outside); where Hearth differs the test fails and says what Firebase does.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import tempfile
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import pytest
import requests

from harness import remove_tree
from realtime_support import launch_hearth, skip_without_sdk

skip_without_sdk()

from oidc_server import OIDCProvider, OIDCUser, subject_for  # noqa: E402  (Tests/Support; after the skip)

# The SDK's projectId in harness.js; the server gets the same one, so the emulator's code
# listing is at /emulator/v1/projects/hearth/oobCodes and ID tokens have aud "hearth".
PROJECT = "hearth"
PROVIDER_ID = "oidc.test"
CLIENT_ID = "hearth-sdk-auth-flows"
CLIENT_SECRET = "SdkAuthFlowsSecret42"  # letters and digits only (see oidc_server.py)
# Where the provider sends its codes: the redirect is read, never followed.
DIRECT_REDIRECT = "http://127.0.0.1:9/sdk-auth-flows-callback"
TIMEOUT = 30
# What Firebase answers a wrong password with: INVALID_PASSWORD, or INVALID_LOGIN_CREDENTIALS
# with email enumeration protection (SDK 9.8.1 has no mapping for it and lower-cases it);
# an address that has no password at all may also say EMAIL_NOT_FOUND.
REFUSED_PASSWORD = {"auth/wrong-password", "auth/invalid-login-credentials"}
REFUSED_SIGN_IN = REFUSED_PASSWORD | {"auth/user-not-found"}


def idp_user(tag: str) -> OIDCUser:
    return OIDCUser(f"{tag}@idp.example.com", f"pw-{tag}-123", f"{tag.title()} Person")


# The provider's people, one or two per test so that tests do not share identities.
IDP_USERS = {tag: idp_user(tag) for tag in [
    "nonce", "wrongnonce", "anonlink", "unlinkpw", "unlinkidp",
]}


def unique_email(tag: str) -> str:
    return f"{tag}-{secrets.token_hex(4)}@mail.example.com"


def hashed_nonce(raw: str) -> str:
    """What an app gives the provider: the SHA-256 of the raw nonce, hex (Firebase's guides)."""
    return hashlib.sha256(raw.encode()).hexdigest()


def http() -> requests.Session:
    session = requests.Session()
    session.trust_env = False  # everything is on loopback
    return session


# --- fixtures -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hearth():
    """A `hearth serve --emulator` for this file alone (its own accounts, codes and providers),
    set up as a Firebase project made before September 2023, without email enumeration
    protection: these tests read an account's sign-in methods (fetchSignInMethodsForEmail) and
    the taken-address errors, which protection hides (Tests/Generations covers both settings)."""
    folder = Path(tempfile.mkdtemp(prefix="hearth-sdk-auth-"))
    settings = folder / "settings.json"
    settings.write_text(json.dumps({"auth": {"emailEnumerationProtection": False}}))
    server = launch_hearth(folder, extra_args=["--project", PROJECT, "--settings", str(settings)])
    yield server
    server.stop()
    remove_tree(folder)


@pytest.fixture
def transport():
    """Accounts do not depend on the realtime transport: one mode is enough."""
    return "websocket"


@pytest.fixture(scope="module")
def provider(hearth):
    """The OpenID provider, configured in Hearth as `oidc.test` through the v2 admin API."""
    with OIDCProvider(CLIENT_ID, CLIENT_SECRET, [DIRECT_REDIRECT], IDP_USERS.values()) as started:
        response = http().post(
            f"{hearth.url}/identitytoolkit.googleapis.com/v2/projects/{PROJECT}/oauthIdpConfigs",
            params={"oauthIdpConfigId": PROVIDER_ID}, headers={"Authorization": "Bearer owner"}, timeout=TIMEOUT,
            json={"clientId": CLIENT_ID, "clientSecret": CLIENT_SECRET, "issuer": started.issuer, "enabled": True,
                  "displayName": "Test OIDC"})
        assert response.status_code == 200, f"creating {PROVIDER_ID}: {response.status_code} {response.text}"
        yield started


# --- helpers --------------------------------------------------------------------------------

# Put at the top of every page function: `profile(user)` is what the SDK's User says.
JS_HELPERS = """
  const profile = (user) => user && ({
    uid: user.uid, email: user.email, emailVerified: user.emailVerified, isAnonymous: user.isAnonymous,
    providers: user.providerData.map((p) => ({ providerId: p.providerId, uid: p.uid, email: p.email })),
  });
  const providerIds = (user) => user.providerData.map((p) => p.providerId).sort();
  // 'resolved', or the error's code: for outcomes compared all at once.
  const settle = async (promise) => { try { await promise; return 'resolved'; } catch (e) { return e.code || String(e); } };
"""


def run(page, params: str, body: str, *args):
    """Runs `async (params) => { body }` in the page (with JS_HELPERS) and returns its value."""
    return page.call(f"async ({params}) => {{ {JS_HELPERS}\n{body}\n}}", *args)


def oob_codes(hearth) -> list[dict]:
    response = http().get(f"{hearth.url}/emulator/v1/projects/{PROJECT}/oobCodes", timeout=TIMEOUT)
    assert response.status_code == 200, f"the emulator's code listing: {response.status_code} {response.text}"
    body = response.json()
    assert list(body) == ["oobCodes"], body
    return body["oobCodes"]


def query_of(url: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}


def newest_code(hearth, email: str, request_type: str) -> dict:
    """The newest listed code of `request_type` for `email` (for a change of address, either
    address: Firebase's emulator lists the current one with `newEmail`)."""
    listed = oob_codes(hearth)
    matching = [entry for entry in listed if entry.get("requestType") == request_type
                and email in (entry.get("email"), entry.get("newEmail"))]
    assert matching, f"no {request_type} code listed for {email}: {listed}"
    entry = matching[-1]
    assert {"email", "oobCode", "oobLink", "requestType"} <= set(entry), entry
    assert query_of(entry["oobLink"]).get("oobCode") == entry["oobCode"], entry
    return entry


def provider_id_token(provider: OIDCProvider, user: OIDCUser, nonce: str | None) -> str:
    """An ID token straight from the provider, as an app using the provider's own SDK gets
    one: the authorization code flow with PKCE through its login form, then the token
    endpoint (a fresh browser session each time, so the login form is always shown)."""
    session = http()
    discovery = session.get(provider.discovery_url, timeout=TIMEOUT).json()
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    params = {"client_id": CLIENT_ID, "redirect_uri": DIRECT_REDIRECT, "response_type": "code",
              "scope": "openid email profile", "state": secrets.token_urlsafe(8),
              "code_challenge": challenge, "code_challenge_method": "S256"}
    if nonce is not None:
        params["nonce"] = nonce
    form = session.get(discovery["authorization_endpoint"] + "?" + urlencode(params), timeout=TIMEOUT)
    assert urlsplit(form.url).path == "/login/", form.url
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text).group(1)
    posted = session.post(form.url, allow_redirects=False, timeout=TIMEOUT, data={
        "username": user.email, "password": user.password, "csrfmiddlewaretoken": csrf,
        "next": parse_qs(urlsplit(form.url).query)["next"][0]})
    assert posted.status_code == 302, f"the provider refused {user.email}'s login: {posted.text[:300]}"
    answer = session.get(urljoin(form.url, posted.headers["Location"]), allow_redirects=False, timeout=TIMEOUT)
    location = answer.headers.get("Location", "")
    assert answer.status_code == 302 and location.startswith(DIRECT_REDIRECT + "?"), (answer.status_code, location)
    tokens = session.post(discovery["token_endpoint"], timeout=TIMEOUT, data={
        "grant_type": "authorization_code", "code": query_of(location)["code"], "redirect_uri": DIRECT_REDIRECT,
        "code_verifier": verifier, "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET})
    assert tokens.status_code == 200, tokens.text
    return tokens.json()["id_token"]


def token_claims(token: str) -> dict:
    """A JWT's payload, unverified."""
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


# --- emailed action codes -------------------------------------------------------------------


def test_password_reset_with_the_sdk(page, hearth, ns):
    email = unique_email("reset")
    uid = run(page, "ns, email", """
      T.store.a = T.open(ns, { auth: true });
      const { user } = await fb.createUserWithEmailAndPassword(T.store.a.auth, email, 'old-password-1');
      await fb.sendPasswordResetEmail(T.store.a.auth, email);
      return user.uid;
    """, ns, email)
    entry = newest_code(hearth, email, "PASSWORD_RESET")
    assert query_of(entry["oobLink"])["mode"] == "resetPassword", entry

    outcome = run(page, "ns, email, code", """
      const auth = T.store.a.auth;
      const verified = await fb.verifyPasswordResetCode(auth, code);
      const info = await fb.checkActionCode(auth, code);
      await fb.confirmPasswordReset(auth, code, 'new-password-2');
      const reusedConfirm = await T.rejection(fb.confirmPasswordReset(auth, code, 'third-password-3'), 'a used reset code');
      const reusedVerify = await T.rejection(fb.verifyPasswordResetCode(auth, code), 'checking a used reset code');
      const b = T.open(ns, { auth: true });
      const oldPassword = await T.rejection(fb.signInWithEmailAndPassword(b.auth, email, 'old-password-1'), 'the old password');
      const { user } = await fb.signInWithEmailAndPassword(b.auth, email, 'new-password-2');
      return { verified, operation: info.operation, data: info.data, reusedConfirm, reusedVerify, oldPassword,
               user: profile(user) };
    """, ns, email, entry["oobCode"])
    assert outcome["verified"] == email
    assert outcome["operation"] == "PASSWORD_RESET"
    assert (outcome["data"]["email"], outcome["data"]["previousEmail"]) == (email, None)
    assert outcome["reusedConfirm"]["code"] == "auth/invalid-action-code", outcome["reusedConfirm"]
    assert outcome["reusedVerify"]["code"] == "auth/invalid-action-code", outcome["reusedVerify"]
    assert outcome["oldPassword"]["code"] in REFUSED_PASSWORD, outcome["oldPassword"]
    assert outcome["user"]["uid"] == uid
    # The reset came through the inbox: Firebase marks the address verified.
    assert outcome["user"]["emailVerified"] is True
    # A used code leaves the emulator's listing, as in Firebase's emulator.
    assert entry["oobCode"] not in [listed["oobCode"] for listed in oob_codes(hearth)]


def test_email_verification_with_the_sdk(page, hearth, ns):
    email = unique_email("verify")
    before = run(page, "ns, email", """
      T.store.a = T.open(ns, { auth: true });
      const { user } = await fb.createUserWithEmailAndPassword(T.store.a.auth, email, 'verify-password-1');
      const unverified = profile(user);
      await fb.sendEmailVerification(user);
      return unverified;
    """, ns, email)
    assert before["emailVerified"] is False
    entry = newest_code(hearth, email, "VERIFY_EMAIL")
    assert query_of(entry["oobLink"])["mode"] == "verifyEmail", entry

    outcome = run(page, "code", """
      const auth = T.store.a.auth;
      const info = await fb.checkActionCode(auth, code);
      await fb.applyActionCode(auth, code);
      const stale = auth.currentUser.emailVerified;  // the SDK does not know until it reloads
      await fb.reload(auth.currentUser);
      const token = await fb.getIdTokenResult(auth.currentUser, true);
      const reused = await T.rejection(fb.applyActionCode(auth, code), 'a used verification code');
      return { operation: info.operation, data: info.data, stale, user: profile(auth.currentUser),
               claim: token.claims.email_verified, reused };
    """, entry["oobCode"])
    assert outcome["operation"] == "VERIFY_EMAIL"
    assert outcome["data"]["email"] == email
    assert outcome["stale"] is False
    assert (outcome["user"]["uid"], outcome["user"]["emailVerified"]) == (before["uid"], True)
    assert outcome["claim"] is True, "a refreshed ID token should say email_verified: true"
    assert outcome["reused"]["code"] == "auth/invalid-action-code", outcome["reused"]


def send_sign_in_link(page, hearth, ns, email: str) -> tuple[str, str]:
    """sendSignInLinkToEmail from a fresh instance (T.store.a); returns (continue URL, link)."""
    continue_url = run(page, "ns, email", """
      T.store.a = T.open(ns, { auth: true });
      const url = `${location.origin}/finish-sign-in?cart=42`;
      await fb.sendSignInLinkToEmail(T.store.a.auth, email, { url, handleCodeInApp: true });
      return url;
    """, ns, email)
    entry = newest_code(hearth, email, "EMAIL_SIGNIN")
    return continue_url, entry["oobLink"]


def test_sign_in_with_an_email_link(page, hearth, ns):
    email = unique_email("link")
    continue_url, link = send_sign_in_link(page, hearth, ns, email)
    assert query_of(link)["mode"] == "signIn"
    assert query_of(link)["continueUrl"] == continue_url

    outcome = run(page, "ns, email, link", """
      const auth = T.store.a.auth;
      const isLink = fb.isSignInWithEmailLink(auth, link);
      const parsed = fb.parseActionCodeURL(link);
      const notLink = fb.isSignInWithEmailLink(auth, link.replace('mode=signIn', 'mode=resetPassword'));
      const info = await fb.checkActionCode(auth, parsed.code);
      // Another address cannot use the link, and trying does not use it up.
      const wrongEmail = await T.rejection(fb.signInWithEmailLink(auth, 'someone-else@mail.example.com', link), 'another address');
      const first = await fb.signInWithEmailLink(auth, email, link);
      const firstInfo = fb.getAdditionalUserInfo(first);
      const reused = await T.rejection(fb.signInWithEmailLink(T.open(ns, { auth: true }).auth, email, link), 'a used link');
      return { isLink, notLink, operation: parsed.operation, continueUrl: parsed.continueUrl,
               checked: { operation: info.operation, email: info.data.email }, wrongEmail,
               user: profile(first.user), isNewUser: firstInfo.isNewUser, operationType: first.operationType, reused };
    """, ns, email, link)
    assert (outcome["isLink"], outcome["notLink"]) == (True, False)
    assert (outcome["operation"], outcome["continueUrl"]) == ("EMAIL_SIGNIN", continue_url)
    # Firebase does not tell a sign-in code's address: whoever has the link must know it.
    assert outcome["checked"] == {"operation": "EMAIL_SIGNIN", "email": None}
    assert outcome["wrongEmail"]["code"] == "auth/invalid-email", outcome["wrongEmail"]
    assert outcome["user"]["email"] == email
    assert outcome["user"]["emailVerified"] is True
    assert outcome["user"]["isAnonymous"] is False
    assert (outcome["isNewUser"], outcome["operationType"]) == (True, "signIn")
    assert outcome["reused"]["code"] == "auth/invalid-action-code", outcome["reused"]

    # A second link signs in to the same account.
    _, second = send_sign_in_link(page, hearth, ns, email)
    again = run(page, "email, link", """
      const cred = await fb.signInWithEmailLink(T.store.a.auth, email, link);
      return { uid: cred.user.uid, isNewUser: fb.getAdditionalUserInfo(cred).isNewUser };
    """, email, second)
    assert again == {"uid": outcome["user"]["uid"], "isNewUser": False}


def test_an_email_link_account_has_the_password_provider_and_the_email_link_method(page, hearth, ns):
    """Firebase keeps an email-link account under the `password` provider (its providerData
    lists it, with the address as its uid) and fetchSignInMethodsForEmail answers
    ['emailLink'] for it, ['emailLink', 'password'] once it also has a password (Firebase's
    emulator models this: state.ts adds the `password` provider for `emailLinkSignin`, and
    createAuthUri lists `emailLink` for it)."""
    email = unique_email("linkview")
    _, link = send_sign_in_link(page, hearth, ns, email)
    outcome = run(page, "ns, email, link", """
      const { user } = await fb.signInWithEmailLink(T.store.a.auth, email, link);
      const linkOnly = profile(user);
      const methods = await fb.fetchSignInMethodsForEmail(T.store.a.auth, email);
      await fb.updatePassword(user, 'link-then-password-1');
      const b = T.open(ns, { auth: true });
      const withPassword = await fb.signInWithEmailAndPassword(b.auth, email, 'link-then-password-1');
      const methodsAfter = await fb.fetchSignInMethodsForEmail(T.store.a.auth, email);
      return { providers: linkOnly.providers, isAnonymous: linkOnly.isAnonymous, methods,
               passwordUid: withPassword.user.uid, uid: user.uid, methodsAfter: methodsAfter.sort(),
               providersAfter: profile(withPassword.user).providers };
    """, ns, email, link)
    password = [{"providerId": "password", "uid": email, "email": email}]
    assert outcome["passwordUid"] == outcome["uid"]
    assert outcome["providersAfter"] == password, outcome
    assert outcome["isAnonymous"] is False, outcome
    assert (outcome["providers"], outcome["methods"], outcome["methodsAfter"]) == (
        password, ["emailLink"], ["emailLink", "password"]), outcome


def test_verify_before_update_email(page, hearth, ns):
    old, new, taken = unique_email("before"), unique_email("after"), unique_email("taken")
    first = run(page, "ns, old, newEmail, taken", """
      await fb.createUserWithEmailAndPassword(T.open(ns, { auth: true }).auth, taken, 'taken-password-1');
      T.store.a = T.open(ns, { auth: true });
      const { user } = await fb.createUserWithEmailAndPassword(T.store.a.auth, old, 'change-password-1');
      const inUse = await T.rejection(fb.verifyBeforeUpdateEmail(user, taken), 'an address another account has');
      await fb.verifyBeforeUpdateEmail(user, newEmail);
      return { uid: user.uid, emailBefore: user.email, inUse };
    """, ns, old, new, taken)
    assert first["inUse"]["code"] == "auth/email-already-in-use", first["inUse"]
    assert first["emailBefore"] == old, "the address must not change before the new one is verified"
    entry = newest_code(hearth, new, "VERIFY_AND_CHANGE_EMAIL")

    outcome = run(page, "ns, old, newEmail, code, link", """
      const auth = T.store.a.auth;
      const linkOperation = fb.parseActionCodeURL(link).operation;
      const info = await fb.checkActionCode(auth, code);
      const oldStillWorks = (await fb.signInWithEmailAndPassword(T.open(ns, { auth: true }).auth, old, 'change-password-1')).user.uid;
      await fb.applyActionCode(auth, code);
      const reused = await T.rejection(fb.applyActionCode(auth, code), 'a used change-of-address code');
      const b = T.open(ns, { auth: true });
      const byNew = (await fb.signInWithEmailAndPassword(b.auth, newEmail, 'change-password-1')).user;
      const byOld = await T.rejection(fb.signInWithEmailAndPassword(T.open(ns, { auth: true }).auth, old, 'change-password-1'), 'the old address');
      return { operation: info.operation, data: { email: info.data.email, previousEmail: info.data.previousEmail },
               oldStillWorks, reused, byNew: profile(byNew), byOld, linkOperation };
    """, ns, old, new, entry["oobCode"], entry["oobLink"])
    assert outcome["operation"] == "VERIFY_AND_CHANGE_EMAIL"
    assert outcome["data"] == {"email": new, "previousEmail": old}
    assert outcome["oldStillWorks"] == first["uid"]
    assert outcome["reused"]["code"] == "auth/invalid-action-code", outcome["reused"]
    assert (outcome["byNew"]["uid"], outcome["byNew"]["email"], outcome["byNew"]["emailVerified"]) == (first["uid"], new, True)
    assert outcome["byOld"]["code"] in REFUSED_SIGN_IN, outcome["byOld"]
    # Firebase's link for this code says mode=verifyAndChangeEmail (its emulator's too), which
    # the SDK reads as VERIFY_AND_CHANGE_EMAIL (parseActionCodeURL; parseMode in firebase-auth.js).
    assert query_of(entry["oobLink"])["mode"] == "verifyAndChangeEmail", entry
    assert outcome["linkOperation"] == "VERIFY_AND_CHANGE_EMAIL"


def test_sessions_ended_by_a_password_or_email_change_sign_the_sdk_out(page, hearth, ns):
    """Firebase ends a user's other sessions when the password is reset or changed, and all of
    them when the address changes ("A major account change is detected for the user. This
    includes events like password or email address updates", Manage User Sessions). The SDK
    learns it when it refreshes the ID token: the token endpoint answers TOKEN_EXPIRED ("The
    user's credential is no longer valid. The user must sign in again.", REST reference,
    "Exchange a refresh token for an ID token"), the SDK says auth/user-token-expired and signs
    that user out (_logoutIfInvalidated; "On revocation, the user is signed out", Manage User
    Sessions). INVALID_REFRESH_TOKEN is for a token that never was one: the SDK keeps a user
    it cannot refresh signed in."""
    email, changed = unique_email("sessions"), unique_email("sessions-new")
    run(page, "ns, email", """
      T.store.a = T.open(ns, { auth: true });
      T.store.b = T.open(ns, { auth: true });
      T.store.c = T.open(ns, { auth: true });
      await fb.createUserWithEmailAndPassword(T.store.a.auth, email, 'session-password-1');
      await fb.signInWithEmailAndPassword(T.store.b.auth, email, 'session-password-1');
      await fb.signInWithEmailAndPassword(T.store.c.auth, email, 'session-password-1');
      await fb.sendPasswordResetEmail(T.store.a.auth, email);
    """, ns, email)
    reset = newest_code(hearth, email, "PASSWORD_RESET")["oobCode"]
    outcome = run(page, "ns, email, code", """
      const { a, b, c } = T.store;
      const seen = {};
      // a reset (from a page without a session), then c's session has ended
      await fb.confirmPasswordReset(T.open(ns, { auth: true }).auth, code, 'session-password-2');
      seen.afterReset = await settle(c.auth.currentUser.getIdToken(true));
      seen.signedOutAfterReset = c.auth.currentUser === null;
      // a signs in again and changes the password: b's session ends, a's goes on
      await fb.signInWithEmailAndPassword(a.auth, email, 'session-password-2');
      await fb.signInWithEmailAndPassword(b.auth, email, 'session-password-2');
      await fb.updatePassword(a.auth.currentUser, 'session-password-3');
      seen.changerStillSignedIn = await settle(a.auth.currentUser.getIdToken(true));
      seen.afterChange = await settle(b.auth.currentUser.getIdToken(true));
      seen.signedOutAfterChange = b.auth.currentUser === null;
      return seen;
    """, ns, email, reset)
    assert outcome == {
        "afterReset": "auth/user-token-expired", "signedOutAfterReset": True,
        "changerStillSignedIn": "resolved", "afterChange": "auth/user-token-expired", "signedOutAfterChange": True,
    }
    run(page, "newEmail", "await fb.verifyBeforeUpdateEmail(T.store.a.auth.currentUser, newEmail);", changed)
    change = newest_code(hearth, changed, "VERIFY_AND_CHANGE_EMAIL")["oobCode"]
    outcome.update(run(page, "code", """
      const { a } = T.store;
      await fb.applyActionCode(a.auth, code);
      return { afterEmailChange: await settle(a.auth.currentUser.getIdToken(true)),
               signedOutAfterEmailChange: a.auth.currentUser === null };
    """, change))
    assert outcome == {
        "afterReset": "auth/user-token-expired", "signedOutAfterReset": True,
        "changerStillSignedIn": "resolved", "afterChange": "auth/user-token-expired", "signedOutAfterChange": True,
        "afterEmailChange": "auth/user-token-expired", "signedOutAfterEmailChange": True,
    }


# --- anonymous upgrades ---------------------------------------------------------------------


def test_an_anonymous_user_links_an_email_and_password_and_keeps_the_uid(page, hearth, ns):
    email = unique_email("upgrade")
    outcome = run(page, "ns, email", """
      const a = T.open(ns, { auth: true });
      const anonymous = (await fb.signInAnonymously(a.auth)).user;
      const before = profile(anonymous);
      const methodsBefore = await fb.fetchSignInMethodsForEmail(a.auth, email);
      const linked = await fb.linkWithCredential(anonymous, fb.EmailAuthProvider.credential(email, 'upgrade-password-1'));
      const token = await fb.getIdTokenResult(linked.user, true);
      const after = profile(linked.user);
      const methods = await fb.fetchSignInMethodsForEmail(a.auth, email);
      await fb.signOut(a.auth);
      const again = (await fb.signInWithEmailAndPassword(a.auth, email, 'upgrade-password-1')).user;
      // another anonymous user cannot take the same address
      const other = (await fb.signInAnonymously(T.open(ns, { auth: true }).auth)).user;
      const taken = await T.rejection(fb.linkWithCredential(other, fb.EmailAuthProvider.credential(email, 'other-password-1')), 'an address in use');
      const twice = await T.rejection(fb.linkWithCredential(again, fb.EmailAuthProvider.credential(email, 'upgrade-password-1')), 'a second password');
      return { before, methodsBefore, after, operationType: linked.operationType, signInProvider: token.signInProvider,
               methods, again: profile(again), taken, twice };
    """, ns, email)
    assert outcome["before"]["isAnonymous"] is True and outcome["before"]["providers"] == []
    assert outcome["methodsBefore"] == []
    assert outcome["after"]["uid"] == outcome["before"]["uid"], "linking must keep the anonymous user's uid"
    assert outcome["operationType"] == "link"
    assert (outcome["after"]["isAnonymous"], outcome["after"]["email"]) == (False, email)
    assert outcome["after"]["providers"] == [{"providerId": "password", "uid": email, "email": email}]
    assert outcome["signInProvider"] == "password"
    assert outcome["methods"] == ["password"]
    assert outcome["again"]["uid"] == outcome["before"]["uid"]
    assert outcome["taken"]["code"] == "auth/email-already-in-use", outcome["taken"]
    assert outcome["twice"]["code"] == "auth/provider-already-linked", outcome["twice"]


def test_an_anonymous_user_links_an_email_link_and_keeps_the_uid(page, hearth, ns):
    email, taken = unique_email("anonlink"), unique_email("anonlink-taken")
    uid = run(page, "ns, email, taken", """
      await fb.createUserWithEmailAndPassword(T.open(ns, { auth: true }).auth, taken, 'taken-password-1');
      T.store.a = T.open(ns, { auth: true });
      const { user } = await fb.signInAnonymously(T.store.a.auth);
      const url = `${location.origin}/finish`;
      await fb.sendSignInLinkToEmail(T.store.a.auth, email, { url, handleCodeInApp: true });
      await fb.sendSignInLinkToEmail(T.store.a.auth, taken, { url, handleCodeInApp: true });
      return user.uid;
    """, ns, email, taken)
    link = newest_code(hearth, email, "EMAIL_SIGNIN")["oobLink"]
    taken_link = newest_code(hearth, taken, "EMAIL_SIGNIN")["oobLink"]
    outcome = run(page, "ns, email, link, taken, takenLink", """
      const other = (await fb.signInAnonymously(T.open(ns, { auth: true }).auth)).user;
      const inUse = await T.rejection(fb.linkWithCredential(other, fb.EmailAuthProvider.credentialWithLink(taken, takenLink)), 'an address another account has');
      const linked = await fb.linkWithCredential(T.store.a.auth.currentUser, fb.EmailAuthProvider.credentialWithLink(email, link));
      const b = T.open(ns, { auth: true });
      const fresh = (await fb.signInWithEmailAndPassword(b.auth, taken, 'taken-password-1')).user;
      return { inUse, user: profile(linked.user), operationType: linked.operationType, takenStillOwn: fresh.email };
    """, ns, email, link, taken, taken_link)
    assert outcome["inUse"]["code"] == "auth/email-already-in-use", outcome["inUse"]
    assert outcome["user"]["uid"] == uid, "linking must keep the anonymous user's uid"
    assert outcome["operationType"] == "link"
    assert (outcome["user"]["email"], outcome["user"]["emailVerified"]) == (email, True)
    # Firebase: the address is the `password` provider's, so the user is no longer anonymous.
    assert outcome["user"]["providers"] == [{"providerId": "password", "uid": email, "email": email}], outcome["user"]
    assert outcome["user"]["isAnonymous"] is False, outcome["user"]


# --- OpenID Connect ID tokens ---------------------------------------------------------------


def test_sign_in_with_an_oidc_id_token_and_its_raw_nonce(page, hearth, ns, provider):
    """OAuthProvider('oidc.test').credential({idToken, rawNonce}): the SDK sends
    signInWithIdp with postBody `id_token=…&providerId=oidc.test&nonce=<rawNonce>` (the raw
    nonce as given: firebase-auth.js OAuthCredential.buildRequest). The app gave the provider
    SHA-256(rawNonce) in hex, and Firebase checks that "the SHA-256 hash of the raw nonce
    [matches] the nonce field in the ID token" (OAuthCredentialOptions.rawNonce)."""
    user = IDP_USERS["nonce"]
    raw = secrets.token_urlsafe(24)
    token = provider_id_token(provider, user, nonce=hashed_nonce(raw))
    assert token_claims(token)["nonce"] == hashed_nonce(raw)
    outcome = run(page, "ns, token, raw", """
      const a = T.open(ns, { auth: true });
      const credential = new fb.OAuthProvider('oidc.test').credential({ idToken: token, rawNonce: raw });
      const result = await fb.signInWithCredential(a.auth, credential);
      const extra = fb.getAdditionalUserInfo(result);
      const back = fb.OAuthProvider.credentialFromResult(result);
      const idToken = await fb.getIdTokenResult(result.user);
      return { user: profile(result.user), operationType: result.operationType, isNewUser: extra.isNewUser,
               providerId: extra.providerId, sub: extra.profile && extra.profile.sub, backIdToken: back && back.idToken,
               signInProvider: idToken.signInProvider, identities: idToken.claims.firebase.identities,
               aud: idToken.claims.aud };
    """, ns, token, raw)
    subject = subject_for(user.email)
    assert outcome["user"]["email"] == user.email and outcome["user"]["emailVerified"] is True, outcome
    assert outcome["user"]["providers"] == [{"providerId": PROVIDER_ID, "uid": subject, "email": user.email}]
    assert (outcome["operationType"], outcome["isNewUser"], outcome["providerId"]) == ("signIn", True, PROVIDER_ID)
    assert outcome["sub"] == subject
    assert outcome["backIdToken"] == token
    assert outcome["signInProvider"] == PROVIDER_ID
    assert outcome["identities"][PROVIDER_ID] == [subject]
    assert outcome["aud"] == PROJECT


def test_an_oidc_id_token_with_a_nonce_needs_its_raw_nonce(page, hearth, ns, provider):
    """The refusals of Firebase's nonce rule: another raw nonce, the hash itself given as the
    raw nonce, or no raw nonce although the token has a nonce: auth/missing-or-invalid-nonce,
    and no account is made."""
    user = IDP_USERS["wrongnonce"]
    raw = secrets.token_urlsafe(24)
    token = provider_id_token(provider, user, nonce=hashed_nonce(raw))
    outcome = run(page, "ns, token, raw, hash, email", """
      const a = T.open(ns, { auth: true });
      const oidc = new fb.OAuthProvider('oidc.test');
      const codes = {};
      codes.otherRaw = await settle(fb.signInWithCredential(a.auth, oidc.credential({ idToken: token, rawNonce: 'not-the-raw-nonce' })));
      codes.hashAsRaw = await settle(fb.signInWithCredential(a.auth, oidc.credential({ idToken: token, rawNonce: hash })));
      codes.none = await settle(fb.signInWithCredential(a.auth, oidc.credential({ idToken: token })));
      return { codes, methods: await fb.fetchSignInMethodsForEmail(a.auth, email), signedIn: a.auth.currentUser !== null };
    """, ns, token, raw, hashed_nonce(raw), user.email)
    assert outcome == {
        "codes": {"otherRaw": "auth/missing-or-invalid-nonce", "hashAsRaw": "auth/missing-or-invalid-nonce",
                  "none": "auth/missing-or-invalid-nonce"},
        "methods": [], "signedIn": False,
    }


def test_an_anonymous_user_links_an_oidc_credential_and_keeps_the_uid(page, hearth, ns, provider):
    user = IDP_USERS["anonlink"]
    tokens = [provider_id_token(provider, user, nonce=None) for _ in range(3)]
    outcome = run(page, "ns, tokens", """
      const oidc = new fb.OAuthProvider('oidc.test');
      const a = T.open(ns, { auth: true });
      const anonymous = (await fb.signInAnonymously(a.auth)).user;
      const before = profile(anonymous);
      const linked = await fb.linkWithCredential(anonymous, oidc.credential({ idToken: tokens[0] }));
      const after = profile(linked.user);
      const linkedProvider = fb.getAdditionalUserInfo(linked).providerId;
      await fb.signOut(a.auth);
      const again = await fb.signInWithCredential(a.auth, oidc.credential({ idToken: tokens[1] }));
      // the identity belongs to that account now
      const other = (await fb.signInAnonymously(T.open(ns, { auth: true }).auth)).user;
      const inUse = await T.rejection(fb.linkWithCredential(other, oidc.credential({ idToken: tokens[2] })), 'an identity linked elsewhere');
      return { before, after, operationType: linked.operationType, linkedProvider,
               again: profile(again.user), againNew: fb.getAdditionalUserInfo(again).isNewUser, inUse };
    """, ns, tokens)
    subject = subject_for(user.email)
    assert outcome["before"]["isAnonymous"] is True
    assert outcome["after"]["uid"] == outcome["before"]["uid"], "linking must keep the anonymous user's uid"
    assert (outcome["operationType"], outcome["linkedProvider"]) == ("link", PROVIDER_ID)
    assert outcome["after"]["isAnonymous"] is False
    assert outcome["after"]["providers"] == [{"providerId": PROVIDER_ID, "uid": subject, "email": user.email}]
    # An account without an address takes the provider's (Firebase, one account per email).
    assert outcome["after"]["email"] == user.email
    assert (outcome["again"]["uid"], outcome["againNew"]) == (outcome["before"]["uid"], False)
    assert outcome["inUse"]["code"] == "auth/credential-already-in-use", outcome["inUse"]


# --- provider data, sign-in methods, password changes, unlinking -----------------------------


def test_provider_data_update_password_and_unlinking_the_password(page, hearth, ns, provider):
    email = unique_email("unlinkpw")
    user = IDP_USERS["unlinkpw"]
    subject = subject_for(user.email)
    tokens = [provider_id_token(provider, user, nonce=None) for _ in range(2)]
    outcome = run(page, "ns, email, tokens", """
      const oidc = new fb.OAuthProvider('oidc.test');
      const a = T.open(ns, { auth: true });
      const { user } = await fb.createUserWithEmailAndPassword(a.auth, email, 'first-password-1');
      const unknownMethods = await fb.fetchSignInMethodsForEmail(a.auth, 'nobody-' + email);
      const linked = await fb.linkWithCredential(user, oidc.credential({ idToken: tokens[0] }));
      const afterLink = profile(linked.user);
      const methods = (await fb.fetchSignInMethodsForEmail(a.auth, email)).sort();
      // a password change keeps this session
      await fb.updatePassword(user, 'second-password-2');
      const stillSignedIn = a.auth.currentUser && a.auth.currentUser.uid === user.uid
        && typeof (await a.auth.currentUser.getIdToken(true)) === 'string';
      const b = T.open(ns, { auth: true });
      const oldPassword = await T.rejection(fb.signInWithEmailAndPassword(b.auth, email, 'first-password-1'), 'the old password');
      const byPassword = profile((await fb.signInWithEmailAndPassword(b.auth, email, 'second-password-2')).user);
      // unlinking the password leaves the provider
      const unlinked = profile(await fb.unlink(a.auth.currentUser, 'password'));
      const again = await T.rejection(fb.unlink(a.auth.currentUser, 'password'), 'unlinking the password twice');
      const c = T.open(ns, { auth: true });
      const passwordGone = await T.rejection(fb.signInWithEmailAndPassword(c.auth, email, 'second-password-2'), 'the unlinked password');
      const byProvider = profile((await fb.signInWithCredential(c.auth, oidc.credential({ idToken: tokens[1] }))).user);
      return { uid: user.uid, unknownMethods, afterLink, methods, stillSignedIn, oldPassword, byPassword, unlinked, again,
               passwordGone, byProvider };
    """, ns, email, tokens)
    password = {"providerId": "password", "uid": email, "email": email}
    idp = {"providerId": PROVIDER_ID, "uid": subject, "email": user.email}
    key = lambda entry: entry["providerId"]  # noqa: E731
    assert outcome["unknownMethods"] == []
    assert (outcome["afterLink"]["uid"], outcome["afterLink"]["email"]) == (outcome["uid"], email)
    assert sorted(outcome["afterLink"]["providers"], key=key) == sorted([password, idp], key=key)
    assert outcome["methods"] == sorted(["password", PROVIDER_ID])
    assert outcome["stillSignedIn"] is True
    assert outcome["oldPassword"]["code"] in REFUSED_PASSWORD, outcome["oldPassword"]
    assert outcome["byPassword"]["uid"] == outcome["uid"]
    assert sorted(outcome["byPassword"]["providers"], key=key) == sorted([password, idp], key=key)
    assert outcome["unlinked"]["providers"] == [idp]
    assert outcome["again"]["code"] == "auth/no-such-provider", outcome["again"]
    assert outcome["passwordGone"]["code"] in REFUSED_SIGN_IN, outcome["passwordGone"]
    assert outcome["byProvider"]["uid"] == outcome["uid"]
    assert outcome["byProvider"]["providers"] == [idp], "a fresh sign-in should see only the provider left"


def test_unlinking_a_provider(page, hearth, ns, provider):
    email = unique_email("unlinkidp")
    user = IDP_USERS["unlinkidp"]
    tokens = [provider_id_token(provider, user, nonce=None) for _ in range(2)]
    outcome = run(page, "ns, email, tokens", """
      const oidc = new fb.OAuthProvider('oidc.test');
      const a = T.open(ns, { auth: true });
      const { user } = await fb.createUserWithEmailAndPassword(a.auth, email, 'unlink-password-1');
      await fb.linkWithCredential(user, oidc.credential({ idToken: tokens[0] }));
      const linked = providerIds(user);
      const unlinked = profile(await fb.unlink(user, 'oidc.test'));
      const b = T.open(ns, { auth: true });
      const fresh = profile((await fb.signInWithEmailAndPassword(b.auth, email, 'unlink-password-1')).user);
      const methods = await fb.fetchSignInMethodsForEmail(a.auth, email);
      // the identity is free again: signing in with it makes an account of its own
      const c = T.open(ns, { auth: true });
      const byProvider = await fb.signInWithCredential(c.auth, oidc.credential({ idToken: tokens[1] }));
      return { uid: user.uid, linked, unlinked, fresh, methods, otherUid: byProvider.user.uid,
               otherNew: fb.getAdditionalUserInfo(byProvider).isNewUser };
    """, ns, email, tokens)
    password = {"providerId": "password", "uid": email, "email": email}
    assert outcome["linked"] == sorted(["password", PROVIDER_ID])
    assert outcome["unlinked"]["providers"] == [password]
    assert outcome["fresh"]["uid"] == outcome["uid"] and outcome["fresh"]["providers"] == [password]
    assert outcome["methods"] == ["password"]
    assert outcome["otherUid"] != outcome["uid"] and outcome["otherNew"] is True


# --- errors the SDK maps ----------------------------------------------------------------------


def test_errors_the_sdk_maps(page, hearth, ns):
    unknown = unique_email("unknown")
    outcome = run(page, "ns, unknown, hearthUrl", """
      const auth = T.open(ns, { auth: true }).auth;
      const codes = {};
      const refusal = async (name, promise) => { codes[name] = await settle(promise); };
      await refusal('applyUnknown', fb.applyActionCode(auth, 'no-such-code'));
      await refusal('checkUnknown', fb.checkActionCode(auth, 'no-such-code'));
      await refusal('confirmUnknown', fb.confirmPasswordReset(auth, 'no-such-code', 'whatever-password-1'));
      await refusal('linkUnknown', fb.signInWithEmailLink(auth, unknown,
        `${hearthUrl}/__/auth/action?mode=signIn&oobCode=no-such-code&apiKey=hearth-test-key`));
      await refusal('resetNoEmail', fb.sendPasswordResetEmail(auth, ''));
      await refusal('resetBadEmail', fb.sendPasswordResetEmail(auth, 'not-an-address'));
      await refusal('methodsBadEmail', fb.fetchSignInMethodsForEmail(auth, 'not-an-address'));
      await refusal('linkBadContinueUrl', fb.sendSignInLinkToEmail(auth, unknown, { url: 'not a url', handleCodeInApp: true }));
      // An unknown address: Firebase with email enumeration protection answers as for a real
      // one (without it: auth/user-not-found); either way no code is made.
      let resetUnknown = 'sent';
      try { await fb.sendPasswordResetEmail(auth, unknown); } catch (error) { resetUnknown = error.code; }
      return { codes, resetUnknown, signedIn: auth.currentUser !== null };
    """, ns, unknown, hearth.url)
    assert outcome["codes"] == {
        "applyUnknown": "auth/invalid-action-code", "checkUnknown": "auth/invalid-action-code",
        "confirmUnknown": "auth/invalid-action-code", "linkUnknown": "auth/invalid-action-code",
        "resetNoEmail": "auth/missing-email", "resetBadEmail": "auth/invalid-email",
        "methodsBadEmail": "auth/invalid-email", "linkBadContinueUrl": "auth/invalid-continue-uri",
    }
    assert outcome["resetUnknown"] in ("sent", "auth/user-not-found")
    assert outcome["signedIn"] is False
    assert not [entry for entry in oob_codes(hearth) if unknown in (entry.get("email"), entry.get("newEmail"))]
