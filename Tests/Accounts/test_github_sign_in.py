"""Sign-in with GitHub (provider ``github.com``) against a GitHub Enterprise Server stand-in
(Tests/Support/github_server.py), configured with Hearth's ``githubURL`` setting: the redirect
flow (`accounts:createAuthUri`, GitHub's login page, `accounts:signInWithIdp` with the redirect),
an access token the app already holds (``postBody: access_token=…&providerId=github.com``), and
linking GitHub to an anonymous account.

Every refusal is checked for Firebase's error shape and for having changed nothing: the same
accounts as before, field for field.

The Hearth here is configured through Firebase's v2 admin API
(``defaultSupportedIdpConfigs?idpId=github.com``); the settings file's ``githubURL`` is checked
on a second Hearth at the end.
"""

from __future__ import annotations

import json
import secrets
from typing import Any, Optional
from urllib.parse import urlencode, urljoin

import pytest

from accounts_support import (
    ADMIN_TOKEN, DIRECT_REDIRECT, OWN_DATA_RULES, PROJECT, TIMEOUT, ProviderRedirect, assert_firebase_error, free_port,
    jwt_claims, launch_hearth, new_http, provider_infos, query_of, settings_for, stop_hearth, with_query,
)
from github_server import GitHubEmail, GitHubServer, GitHubUser, s256

GITHUB = "github.com"
GITHUB_CLIENT_ID = "Iv1.hearthaccounts01"
GITHUB_CLIENT_SECRET = "ghe-client-secret-0123456789abcdef01234567"


def github_user(tag: str, number: int, name: Optional[str] = "default", verified: bool = True,
                extra: tuple[GitHubEmail, ...] = (), public_email: Optional[str] = None) -> GitHubUser:
    """A GitHub account for one test: its login and primary email say which test it belongs to."""
    primary = GitHubEmail(f"{tag}@ghe.example.com", primary=True, verified=verified)
    return GitHubUser(
        login=f"mona-{tag}", password=f"pw-{tag}-123", id=number,
        name=f"Mona {tag.title()}" if name == "default" else name, emails=(*extra, primary), public_email=public_email)


# One or two accounts per test, so the tests share no identity. IDs are GitHub-like integers.
GITHUB_USERS = {user.login.removeprefix("mona-"): user for user in [
    github_user("first", 9000001, extra=(GitHubEmail("first-work@ghe.example.com"), GitHubEmail("first-old@ghe.example.com", verified=False)),
                public_email="first-work@ghe.example.com"),
    github_user("noname", 9000002, name=None),
    github_user("unverified", 9000003, verified=False),
    github_user("unverified-clash", 9000004, verified=False),
    github_user("forged", 9000005),
    github_user("usedcode", 9000006),
    github_user("cancel", 9000007),
    github_user("apptoken", 9000008),
    github_user("badtoken", 9000009),
    github_user("linker", 9000010),
    github_user("narrow", 9000011, extra=(GitHubEmail("narrow-public@ghe.example.com"),), public_email="narrow-public@ghe.example.com"),
    github_user("secret", 9000012),
    github_user("settings", 9000013),
]}


def database_url(hearth, uid: str) -> str:
    return f"{hearth.url}/users/{uid}.json"


@pytest.fixture(scope="module")
def github(hearth_port):
    callbacks = [f"http://127.0.0.1:{hearth_port}/__/auth/handler", DIRECT_REDIRECT]
    with GitHubServer(GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET, callbacks, GITHUB_USERS.values()) as server:
        yield server


def admin_headers() -> dict[str, str]:
    return {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def github_config_url(hearth, suffix: str = "") -> str:
    return f"{hearth.url}/identitytoolkit.googleapis.com/v2/projects/{PROJECT}/defaultSupportedIdpConfigs{suffix}"


@pytest.fixture(scope="module")
def gh_hearth(hearth_port, github):
    """A Hearth whose github.com provider points at the stand-in, set through the admin API."""
    server = launch_hearth(settings_for(hearth_port), port=hearth_port, rules=OWN_DATA_RULES)
    try:
        created = server.http.post(
            github_config_url(server), params={"idpId": GITHUB}, headers=admin_headers(), timeout=TIMEOUT,
            json={"clientId": GITHUB_CLIENT_ID, "clientSecret": GITHUB_CLIENT_SECRET, "enabled": True, "githubURL": github.url})
        assert created.status_code == 200, created.text
        assert created.json()["name"] == f"projects/{PROJECT}/defaultSupportedIdpConfigs/{GITHUB}"
        assert created.json()["githubURL"] == github.url
        yield server
    finally:
        stop_hearth(server)


# --- driving GitHub's side ----------------------------------------------------------------------


def through_github(github: GitHubServer, start_url: str, user: GitHubUser, browser=None, button: str = "1") -> str:
    """Follows an authorization URL through the stand-in (its login page, unless the browser is
    signed in there and the app authorized) and returns GitHub's redirect back, not followed."""
    browser = browser or new_http()
    page = browser.get(start_url, allow_redirects=False, timeout=TIMEOUT)
    if page.status_code == 302:
        return urljoin(start_url, page.headers["Location"])
    assert page.status_code == 200, f"GitHub's authorize page answered {page.status_code}: {page.text[:300]}"
    start = page.text.index('name="authenticity_token" value="') + len('name="authenticity_token" value="')
    form = {"authenticity_token": page.text[start:page.text.index('"', start)], "authorize": button}
    if 'name="password"' in page.text and button == "1":
        form.update(login=user.login, password=user.password)
    posted = browser.post(f"{github.url}/login/oauth/authorize", data=form, allow_redirects=False, timeout=TIMEOUT)
    assert posted.status_code == 302, f"GitHub did not accept {user.login}'s login: {posted.text[:300]}"
    return urljoin(start_url, posted.headers["Location"])


def github_redirect(hearth, github: GitHubServer, user: GitHubUser, browser=None, button: str = "1") -> ProviderRedirect:
    started = hearth.create_auth_uri(GITHUB)
    assert started["providerId"] == GITHUB
    assert started["authUri"].startswith(github.url + "/login/oauth/authorize?"), started["authUri"]
    request_uri = through_github(github, started["authUri"], user, browser, button)
    assert request_uri.startswith(hearth.handler_url + "?"), request_uri
    return ProviderRedirect(started["sessionId"], started["authUri"], request_uri)


def github_sign_in(hearth, github: GitHubServer, user: GitHubUser, id_token: Optional[str] = None, browser=None) -> dict:
    redirect = github_redirect(hearth, github, user, browser)
    response = hearth.sign_in_with_idp(redirect.request_uri, redirect.session_id, id_token=id_token)
    assert response.status_code == 200, response.text
    return response.json()


def app_access_token(github: GitHubServer, user: GitHubUser) -> str:
    """A GitHub access token got by the app itself (its own web flow with PKCE, to a redirect URI
    that is not Hearth's), as an app using GitHub's SDK would hold one."""
    verifier = secrets.token_urlsafe(48)
    state = secrets.token_urlsafe(8)
    params = {"client_id": GITHUB_CLIENT_ID, "redirect_uri": DIRECT_REDIRECT, "scope": "read:user user:email", "state": state,
              "code_challenge": s256(verifier), "code_challenge_method": "S256"}
    location = through_github(github, f"{github.url}/login/oauth/authorize?{urlencode(params)}", user)
    assert location.startswith(DIRECT_REDIRECT + "?") and query_of(location)["state"] == state, location
    answer = new_http().post(f"{github.url}/login/oauth/access_token", headers={"Accept": "application/json"}, timeout=TIMEOUT, data={
        "client_id": GITHUB_CLIENT_ID, "client_secret": GITHUB_CLIENT_SECRET, "code": query_of(location)["code"],
        "redirect_uri": DIRECT_REDIRECT, "code_verifier": verifier})
    assert "access_token" in answer.json(), answer.text
    return answer.json()["access_token"]


def sign_in_with_access_token(hearth, access_token: str, id_token: Optional[str] = None, provider_id: str = GITHUB):
    body: dict[str, Any] = {
        "postBody": urlencode({"access_token": access_token, "providerId": provider_id}), "requestUri": "http://localhost",
        "returnSecureToken": True, "returnIdpCredential": True,
    }
    if id_token is not None:
        body["idToken"] = id_token
    return hearth.post("signInWithIdp", body)


def assert_nothing_for(hearth, user: GitHubUser, accounts_before: list[dict]) -> None:
    """Nothing changed: the same accounts, field for field, and none with this GitHub identity."""
    assert hearth.all_accounts() == accounts_before
    assert hearth.accounts_with_identity(GITHUB, str(user.id)) == []


# --- the tests ------------------------------------------------------------------------------------


def test_first_sign_in_makes_an_account_and_the_second_reaches_it(gh_hearth, github):
    hearth, user = gh_hearth, GITHUB_USERS["first"]
    before = hearth.uids()
    browser = new_http()
    token_requests = len(github.token_requests)

    redirect = github_redirect(hearth, github, user, browser=browser)
    # What Hearth asked GitHub for: its client, its handler, the scopes sign-in needs, PKCE S256.
    asked = query_of(redirect.auth_uri)
    assert asked["client_id"] == GITHUB_CLIENT_ID and asked["redirect_uri"] == hearth.handler_url
    assert set(asked["scope"].split()) == {"read:user", "user:email"}
    assert asked["code_challenge_method"] == "S256" and len(asked["code_challenge"]) == 43
    assert "nonce" not in asked  # GitHub is not an OpenID provider
    assert query_of(redirect.request_uri)["state"] == asked["state"]

    response = hearth.sign_in_with_idp(redirect.request_uri, redirect.session_id)
    assert response.status_code == 200, response.text
    first = response.json()
    # How Hearth exchanged the code: once, with the verifier of the challenge it sent, asking for JSON.
    sent = github.token_requests[token_requests:]
    assert len(sent) == 1
    assert sent[0].form["code"] == query_of(redirect.request_uri)["code"]
    assert s256(sent[0].form["code_verifier"]) == asked["code_challenge"]
    assert sent[0].form["redirect_uri"] == hearth.handler_url and sent[0].form["client_id"] == GITHUB_CLIENT_ID
    assert "application/json" in sent[0].headers["accept"]

    assert first["isNewUser"] is True
    assert (first["providerId"], first["federatedId"]) == (GITHUB, str(user.id))
    # The verified primary address: not the public one (/user's email), not another verified one.
    assert (first["email"], first["emailVerified"]) == (user.primary_email.email, True)
    assert first["displayName"] == user.name
    assert first["photoUrl"] == github.avatar_url(user)
    assert github.token_owner(first["oauthAccessToken"]) == user.login  # returnIdpCredential
    raw = json.loads(first["rawUserInfo"])
    assert (raw["login"], raw["id"]) == (user.login, user.id)
    uid = first["localId"]
    assert uid not in before and first["idToken"] and first["refreshToken"]

    claims = jwt_claims(first["idToken"])
    assert claims["sub"] == uid and claims["aud"] == PROJECT
    assert claims["firebase"]["sign_in_provider"] == GITHUB
    assert claims["firebase"]["identities"][GITHUB] == [str(user.id)]

    account = hearth.account(uid)
    assert (account["email"], account["emailVerified"], account["displayName"]) == (user.primary_email.email, True, user.name)
    assert account["photoUrl"] == github.avatar_url(user)
    infos = provider_infos(account)
    assert set(infos) == {GITHUB}, infos
    assert (infos[GITHUB]["rawId"], infos[GITHUB]["email"]) == (str(user.id), user.primary_email.email)
    assert [found["localId"] for found in hearth.accounts_with_identity(GITHUB, str(user.id))] == [uid]
    assert hearth.uids() == before | {uid}

    # Again in the same browser (GitHub sends it straight back): the same account.
    second = github_sign_in(hearth, github, user, browser=browser)
    assert (second["localId"], second["isNewUser"]) == (uid, False)
    # And from a fresh browser, through GitHub's login page.
    third = github_sign_in(hearth, github, user)
    assert (third["localId"], third["isNewUser"]) == (uid, False)
    assert hearth.uids() == before | {uid}

    refreshed = hearth.refresh(first["refreshToken"])
    assert refreshed.status_code == 200, refreshed.text
    assert refreshed.json()["user_id"] == uid
    assert hearth.lookup(third["idToken"])["localId"] == uid


def test_a_user_without_a_name_is_named_by_login(gh_hearth, github):
    user = GITHUB_USERS["noname"]
    signed_in = github_sign_in(gh_hearth, github, user)
    assert signed_in["isNewUser"] is True
    assert signed_in["displayName"] == user.login
    assert gh_hearth.account(signed_in["localId"])["displayName"] == user.login


def test_unverified_primary_email_is_not_vouched_for(gh_hearth, github):
    hearth, user = gh_hearth, GITHUB_USERS["unverified"]
    accounts_before = hearth.all_accounts()

    # GitHub itself issues no token to such a user through the web flow ("unverified_user_email").
    redirect = github_redirect(hearth, github, user)
    error = assert_firebase_error(hearth.sign_in_with_idp(redirect.request_uri, redirect.session_id), "INVALID_IDP_RESPONSE")
    assert "unverified_user_email" in error["message"], error
    assert_nothing_for(hearth, user, accounts_before)

    # A token GitHub issued earlier (before the primary address changed) still signs in: the
    # address is taken, but not as verified.
    response = sign_in_with_access_token(hearth, github.issue_token(user.login))
    assert response.status_code == 200, response.text
    signed_in = response.json()
    assert signed_in["isNewUser"] is True
    assert (signed_in["email"], signed_in["emailVerified"]) == (user.primary_email.email, False)
    account = hearth.account(signed_in["localId"])
    assert (account["email"], account["emailVerified"]) == (user.primary_email.email, False)


def test_unverified_primary_email_of_an_existing_account_needs_confirmation(gh_hearth, github):
    hearth, user = gh_hearth, GITHUB_USERS["unverified-clash"]
    password = "Owner-Passw0rd!"
    owner = hearth.sign_up(user.primary_email.email, password)
    accounts_before = hearth.all_accounts()

    response = sign_in_with_access_token(hearth, github.issue_token(user.login))
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["needConfirmation"] is True
    assert (answer["email"], answer["emailVerified"], answer["federatedId"]) == (user.primary_email.email, False, str(user.id))
    for absent in ("idToken", "refreshToken"):
        assert absent not in answer, answer
    # Nothing changed: the owner's account has no GitHub identity and the password still works.
    assert_nothing_for(hearth, user, accounts_before)
    assert GITHUB not in provider_infos(hearth.account(owner["localId"]))
    assert hearth.sign_in_password(user.primary_email.email, password).status_code == 200


def test_a_token_without_the_email_scope_falls_back_to_the_unvouched_public_email(gh_hearth, github):
    hearth, user = gh_hearth, GITHUB_USERS["narrow"]
    # /user/emails is hidden from this token (404): only /user's public address is known.
    response = sign_in_with_access_token(hearth, github.issue_token(user.login, scopes=("read:user",)))
    assert response.status_code == 200, response.text
    signed_in = response.json()
    assert (signed_in["email"], signed_in["emailVerified"]) == (user.public_email, False)
    assert hearth.account(signed_in["localId"])["emailVerified"] is False


def test_forged_state_is_refused_before_the_code_is_exchanged(gh_hearth, github):
    hearth, user = gh_hearth, GITHUB_USERS["forged"]
    accounts_before = hearth.all_accounts()
    redirect = github_redirect(hearth, github, user)
    state = query_of(redirect.request_uri)["state"]
    forged = with_query(redirect.request_uri, state=state[:-2] + ("AA" if not state.endswith("AA") else "BB"))
    token_requests = len(github.token_requests)

    hearth.refused("signInWithIdp", {"requestUri": forged, "sessionId": redirect.session_id, "returnSecureToken": True},
                   "INVALID_IDP_RESPONSE", detail="state")
    assert len(github.token_requests) == token_requests, "the code must not be exchanged"
    assert_nothing_for(hearth, user, accounts_before)

    # The sign-in session is spent: the genuine redirect is refused too.
    hearth.refused("signInWithIdp", {"requestUri": redirect.request_uri, "sessionId": redirect.session_id},
                   "INVALID_IDP_RESPONSE")
    # The unexchanged code in another sign-in session: its state passes, but GitHub refuses the
    # code for that session's PKCE verifier.
    started = hearth.create_auth_uri(GITHUB)
    moved = with_query(redirect.request_uri, state=query_of(started["authUri"])["state"])
    error = assert_firebase_error(hearth.sign_in_with_idp(moved, started["sessionId"]), "INVALID_IDP_RESPONSE")
    assert "bad_verification_code" in error["message"], error
    assert_nothing_for(hearth, user, accounts_before)

    # Starting over works, and makes the account only now.
    assert github_sign_in(hearth, github, user)["isNewUser"] is True


def test_a_used_code_is_refused(gh_hearth, github):
    hearth, user = gh_hearth, GITHUB_USERS["usedcode"]
    redirect = github_redirect(hearth, github, user)
    done = hearth.sign_in_with_idp(redirect.request_uri, redirect.session_id)
    assert done.status_code == 200, done.text
    accounts_before = hearth.all_accounts()

    # The same redirect again: the sign-in session is spent.
    error = assert_firebase_error(hearth.sign_in_with_idp(redirect.request_uri, redirect.session_id), "INVALID_IDP_RESPONSE")
    assert "session" in error["message"]
    # The used code under a new session's state: GitHub refuses it (bad_verification_code).
    started = hearth.create_auth_uri(GITHUB)
    reused = with_query(redirect.request_uri, state=query_of(started["authUri"])["state"])
    error = assert_firebase_error(hearth.sign_in_with_idp(reused, started["sessionId"]), "INVALID_IDP_RESPONSE")
    assert "bad_verification_code" in error["message"], error
    assert hearth.all_accounts() == accounts_before


def test_cancel_at_github_is_user_cancelled(gh_hearth, github):
    hearth, user = gh_hearth, GITHUB_USERS["cancel"]
    accounts_before = hearth.all_accounts()
    redirect = github_redirect(hearth, github, user, button="0")
    back = query_of(redirect.request_uri)
    assert back["error"] == "access_denied" and "code" not in back

    hearth.refused("signInWithIdp", {"requestUri": redirect.request_uri, "sessionId": redirect.session_id, "returnSecureToken": True},
                   "USER_CANCELLED")
    assert_nothing_for(hearth, user, accounts_before)


def test_an_access_token_the_app_holds_signs_in(gh_hearth, github):
    hearth, user = gh_hearth, GITHUB_USERS["apptoken"]
    before = hearth.uids()
    token = app_access_token(github, user)

    response = sign_in_with_access_token(hearth, token)
    assert response.status_code == 200, response.text
    first = response.json()
    assert first["isNewUser"] is True
    assert (first["providerId"], first["federatedId"]) == (GITHUB, str(user.id))
    assert (first["email"], first["emailVerified"], first["displayName"]) == (user.primary_email.email, True, user.name)
    assert first["oauthAccessToken"] == token
    uid = first["localId"]
    assert hearth.uids() == before | {uid}
    assert jwt_claims(first["idToken"])["firebase"]["sign_in_provider"] == GITHUB

    # The redirect flow reaches the same account, and so does the token again.
    assert github_sign_in(hearth, github, user)["localId"] == uid
    again = sign_in_with_access_token(hearth, token)
    assert again.status_code == 200 and again.json()["localId"] == uid and again.json()["isNewUser"] is False


def test_bad_and_revoked_access_tokens_are_refused(gh_hearth, github):
    hearth, user = gh_hearth, GITHUB_USERS["badtoken"]
    accounts_before = hearth.all_accounts()

    for bad in ("gho_" + secrets.token_hex(18), "", "not a token"):
        assert_firebase_error(sign_in_with_access_token(hearth, bad), "INVALID_IDP_RESPONSE")
    revoked = github.issue_token(user.login)
    github.revoke(revoked)
    assert_firebase_error(sign_in_with_access_token(hearth, revoked), "INVALID_IDP_RESPONSE")
    # A real token of the same person, but issued to another OAuth app, or a personal access
    # token: GitHub's token check says it is not this app's, and nobody is signed in with it.
    for foreign in (github.issue_token(user.login, client_id="Iv1.someoneelse"), github.issue_token(user.login, client_id=None)):
        assert_firebase_error(sign_in_with_access_token(hearth, foreign), "INVALID_IDP_RESPONSE",
                              detail="the access token was not issued to this app")
    # An ID token is no GitHub credential.
    post = urlencode({"id_token": "x.y.z", "providerId": GITHUB})
    hearth.refused("signInWithIdp", {"postBody": post, "requestUri": "http://localhost"}, "INVALID_CREDENTIAL_OR_PROVIDER_ID")
    assert_nothing_for(hearth, user, accounts_before)


def test_linking_github_to_an_anonymous_account_keeps_its_uid_and_data(gh_hearth, github):
    hearth, user = gh_hearth, GITHUB_USERS["linker"]
    anonymous = hearth.sign_up()
    uid = anonymous["localId"]
    written = hearth.http.put(database_url(hearth, uid), params={"auth": anonymous["idToken"]},
                              json={"note": "written while anonymous"}, timeout=TIMEOUT)
    assert written.status_code == 200, written.text
    before = hearth.uids()

    linked = github_sign_in(hearth, github, user, id_token=anonymous["idToken"])
    assert (linked["localId"], linked["isNewUser"]) == (uid, False)
    assert (linked["providerId"], linked["federatedId"]) == (GITHUB, str(user.id))
    assert hearth.uids() == before, "linking must not make an account"
    account = hearth.account(uid)
    assert set(provider_infos(account)) == {GITHUB}
    assert provider_infos(account)[GITHUB]["rawId"] == str(user.id)
    # GitHub vouches for the primary address and nobody else has it: the account takes it.
    assert (account["email"], account["emailVerified"]) == (user.primary_email.email, True)
    assert jwt_claims(linked["idToken"])["firebase"]["sign_in_provider"] == GITHUB

    # Signing in with GitHub later reaches the same account, with its data.
    again = github_sign_in(hearth, github, user)
    assert (again["localId"], again["isNewUser"]) == (uid, False)
    read = hearth.http.get(database_url(hearth, uid), params={"auth": again["idToken"]}, timeout=TIMEOUT)
    assert read.status_code == 200 and read.json() == {"note": "written while anonymous"}, read.text


def test_a_wrong_client_secret_is_refused_by_github(gh_hearth, github):
    hearth, user = gh_hearth, GITHUB_USERS["secret"]
    accounts_before = hearth.all_accounts()

    def set_secret(secret: str) -> None:
        changed = hearth.http.patch(github_config_url(hearth, f"/{GITHUB}"), params={"updateMask": "clientSecret"},
                                    json={"clientSecret": secret}, headers=admin_headers(), timeout=TIMEOUT)
        assert changed.status_code == 200, changed.text

    set_secret("not-the-secret")
    try:
        redirect = github_redirect(hearth, github, user)
        error = assert_firebase_error(hearth.sign_in_with_idp(redirect.request_uri, redirect.session_id), "INVALID_IDP_RESPONSE")
        assert "incorrect_client_credentials" in error["message"], error
        assert_nothing_for(hearth, user, accounts_before)
    finally:
        set_secret(GITHUB_CLIENT_SECRET)
    assert github_sign_in(hearth, github, user)["isNewUser"] is True


def test_settings_file_github_url_is_used(github):
    """docs/accounts.md: "for GitHub Enterprise Server add "githubURL"" to the provider in the
    settings file. The stand-in's registered callback is on 127.0.0.1, so any port may use it."""
    user = GITHUB_USERS["settings"]
    port = free_port()
    settings = settings_for(port, providers=[{
        "id": GITHUB, "clientId": GITHUB_CLIENT_ID, "clientSecret": GITHUB_CLIENT_SECRET, "githubURL": github.url}])
    hearth = launch_hearth(settings, port=port)
    try:
        served = hearth.http.get(github_config_url(hearth, f"/{GITHUB}"), headers=admin_headers(), timeout=TIMEOUT)
        assert served.status_code == 200, served.text
        started = hearth.create_auth_uri(GITHUB)
        assert started["authUri"].startswith(github.url + "/login/oauth/authorize?"), (
            f"the settings file's githubURL was not used: authUri {started['authUri']}, config {served.json()}")
        assert served.json().get("githubURL") == github.url
        signed_in = github_sign_in(hearth, github, user)
        assert (signed_in["federatedId"], signed_in["isNewUser"]) == (str(user.id), True)
    finally:
        stop_hearth(hearth)
