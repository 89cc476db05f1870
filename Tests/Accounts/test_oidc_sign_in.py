"""Sign-in with an OpenID Connect provider through the redirect flow: `accounts:createAuthUri`
then the provider's login form then `accounts:signInWithIdp` with the provider's redirect.

Every refusal is checked for Firebase's error shape and for having changed nothing: no
account made, no identity linked.
"""

from __future__ import annotations

import secrets
from urllib.parse import urlencode, urlsplit, urlunsplit

from accounts_support import (
    CLIENT_ID, PROJECT, PROVIDER_ID, PROVIDER_USERS, assert_firebase_error, jwt_claims, new_http,
    oidc_sign_in, provider_id_token, provider_infos, provider_redirect, query_of, subject_for, with_query,
)


def assert_no_account_for(hearth, user, uids_before: set[str]) -> None:
    """Nothing was made for ``user``: the same accounts as before, none linked to them."""
    assert hearth.uids() == uids_before
    assert hearth.accounts_with_identity(PROVIDER_ID, subject_for(user.email)) == []
    assert hearth.admin_lookup(email=[user.email]) == []


def test_sign_in_creates_an_account_and_signs_in_to_it_again(hearth, provider):
    user = PROVIDER_USERS["first"]
    before = hearth.uids()
    browser = new_http()

    redirect = provider_redirect(hearth, provider, user, browser=browser)
    # What Hearth asked the provider for: the code flow, PKCE S256, its own state and nonce.
    asked = query_of(redirect.auth_uri)
    assert asked["client_id"] == CLIENT_ID and asked["response_type"] == "code"
    assert asked["redirect_uri"] == hearth.handler_url
    assert asked["code_challenge_method"] == "S256" and asked["code_challenge"]
    assert set(asked["scope"].split()) >= {"openid", "email", "profile"}
    assert query_of(redirect.request_uri)["state"] == asked["state"]

    response = hearth.sign_in_with_idp(redirect.request_uri, redirect.session_id)
    assert response.status_code == 200, response.text
    first = response.json()
    assert first["isNewUser"] is True
    assert first["providerId"] == PROVIDER_ID
    assert first["federatedId"] == subject_for(user.email)
    assert (first["email"], first["emailVerified"], first["displayName"]) == (user.email, True, user.name)
    uid = first["localId"]
    assert uid not in before
    assert first["idToken"] and first["refreshToken"]
    # The provider's own ID token is given back (returnIdpCredential), with Hearth's nonce in it.
    provider_claims = jwt_claims(first["oauthIdToken"])
    assert provider_claims["aud"] == CLIENT_ID and provider_claims["nonce"] == asked["nonce"]

    claims = jwt_claims(first["idToken"])
    assert claims["sub"] == uid and claims["aud"] == PROJECT
    assert claims["firebase"]["sign_in_provider"] == PROVIDER_ID
    assert claims["firebase"]["identities"][PROVIDER_ID] == [subject_for(user.email)]

    # The account, as an admin sees it: the provider's identity linked, its email verified.
    account = hearth.account(uid)
    assert (account["email"], account["emailVerified"], account["displayName"]) == (user.email, True, user.name)
    infos = provider_infos(account)
    assert set(infos) == {PROVIDER_ID}, infos
    assert infos[PROVIDER_ID]["rawId"] == subject_for(user.email)
    assert infos[PROVIDER_ID]["email"] == user.email
    assert hearth.uids() == before | {uid}

    # Again, with the provider remembering the login (no form this time): the same account.
    second = oidc_sign_in_with_browser(hearth, provider, user, browser)
    assert (second["localId"], second["isNewUser"]) == (uid, False)
    # And from a fresh browser, through the login form.
    third = oidc_sign_in(hearth, provider, user)
    assert (third["localId"], third["isNewUser"]) == (uid, False)
    assert hearth.uids() == before | {uid}

    refreshed = hearth.refresh(first["refreshToken"])
    assert refreshed.status_code == 200, refreshed.text
    assert refreshed.json()["user_id"] == uid

    # The ID tokens work for accounts:lookup (the user's own view of the account).
    for id_token in (first["idToken"], third["idToken"], refreshed.json()["id_token"]):
        own = hearth.lookup(id_token)
        assert own["localId"] == uid
        assert provider_infos(own)[PROVIDER_ID]["rawId"] == subject_for(user.email)


def oidc_sign_in_with_browser(hearth, provider, user, browser) -> dict:
    redirect = provider_redirect(hearth, provider, user, browser=browser)
    response = hearth.sign_in_with_idp(redirect.request_uri, redirect.session_id)
    assert response.status_code == 200, response.text
    return response.json()


def test_forged_state_is_refused_and_ends_the_sign_in(hearth, provider):
    user = PROVIDER_USERS["forged"]
    before = hearth.uids()
    redirect = provider_redirect(hearth, provider, user)
    state = query_of(redirect.request_uri)["state"]
    forged = with_query(redirect.request_uri, state=state[:-2] + ("AA" if not state.endswith("AA") else "BB"))

    hearth.refused("signInWithIdp", {"requestUri": forged, "sessionId": redirect.session_id, "returnSecureToken": True},
                   "INVALID_IDP_RESPONSE", detail="state")
    assert_no_account_for(hearth, user, before)

    # The sign-in session is one-time: after the forged attempt even the genuine redirect is
    # refused (the app starts over), and still nothing is made.
    hearth.refused("signInWithIdp", {"requestUri": redirect.request_uri, "sessionId": redirect.session_id},
                   "INVALID_IDP_RESPONSE")
    assert_no_account_for(hearth, user, before)

    # Starting over works, and makes the account only now.
    assert oidc_sign_in(hearth, provider, user)["isNewUser"] is True


def finished_sign_in(hearth, provider, user):
    """A provider sign-in taken to its end: the redirect it used, the account's uid, and the
    accounts and that account as they are afterwards (to show a refusal changed nothing)."""
    redirect = provider_redirect(hearth, provider, user)
    done = hearth.sign_in_with_idp(redirect.request_uri, redirect.session_id)
    assert done.status_code == 200, done.text
    uid = done.json()["localId"]
    return redirect, uid, hearth.uids(), hearth.account(uid)


def test_replayed_redirect_is_refused(hearth, provider):
    user = PROVIDER_USERS["replayed"]
    redirect, uid, before, account_before = finished_sign_in(hearth, provider, user)

    error = assert_firebase_error(hearth.sign_in_with_idp(redirect.request_uri, redirect.session_id), "INVALID_IDP_RESPONSE")
    assert "session" in error["message"]
    assert hearth.uids() == before
    assert hearth.account(uid) == account_before


def test_unknown_session_id_is_refused_and_leaves_the_real_one_usable(hearth, provider):
    user = PROVIDER_USERS["unknownsession"]
    redirect = provider_redirect(hearth, provider, user)
    before = hearth.uids()
    accounts_before = hearth.all_accounts()

    assert_firebase_error(hearth.sign_in_with_idp(redirect.request_uri, secrets.token_urlsafe(32)), "INVALID_IDP_RESPONSE")
    assert_firebase_error(hearth.sign_in_with_idp(redirect.request_uri, None), "MISSING_SESSION_ID")
    assert hearth.all_accounts() == accounts_before
    assert_no_account_for(hearth, user, before)

    # The unknown session took nothing away: the real one still finishes the sign-in.
    done = hearth.sign_in_with_idp(redirect.request_uri, redirect.session_id)
    assert done.status_code == 200, done.text
    assert done.json()["isNewUser"] is True


def test_request_uri_on_another_path_is_refused(hearth, provider):
    user = PROVIDER_USERS["otherpath"]
    before = hearth.uids()
    for change in ({"path": "/__/auth/other"}, {"path": "/__/auth/handler/"}, {"netloc": f"localhost:{hearth.port}"}):
        redirect = provider_redirect(hearth, provider, user)
        moved = urlunsplit(urlsplit(redirect.request_uri)._replace(**change))
        hearth.refused("signInWithIdp", {"requestUri": moved, "sessionId": redirect.session_id}, "INVALID_IDP_RESPONSE",
                       detail="requestUri")
        assert_no_account_for(hearth, user, before)


def test_provider_error_access_denied_is_user_cancelled(hearth, provider):
    user = PROVIDER_USERS["denied"]
    before = hearth.uids()
    started = hearth.create_auth_uri()
    state = query_of(started["authUri"])["state"]
    denied = hearth.handler_url + "?" + urlencode(
        {"error": "access_denied", "error_description": "The user denied the request", "state": state})
    hearth.refused("signInWithIdp", {"requestUri": denied, "sessionId": started["sessionId"]}, "USER_CANCELLED")
    assert_no_account_for(hearth, user, before)

    # Another provider error is an invalid response, not a cancellation.
    started = hearth.create_auth_uri()
    failed = hearth.handler_url + "?" + urlencode(
        {"error": "server_error", "state": query_of(started["authUri"])["state"]})
    hearth.refused("signInWithIdp", {"requestUri": failed, "sessionId": started["sessionId"]}, "INVALID_IDP_RESPONSE")
    assert_no_account_for(hearth, user, before)


def test_a_used_authorization_code_is_refused_by_the_provider(hearth, provider):
    user = PROVIDER_USERS["reusedcode"]
    redirect, uid, before, account_before = finished_sign_in(hearth, provider, user)

    # A new sign-in session, finished with the old (already exchanged) code and the new state:
    # everything Hearth checks itself passes, so the provider's token endpoint refuses it.
    started = hearth.create_auth_uri()
    reused = with_query(redirect.request_uri, state=query_of(started["authUri"])["state"])
    error = assert_firebase_error(hearth.sign_in_with_idp(reused, started["sessionId"]), "INVALID_IDP_RESPONSE")
    assert "invalid_grant" in error["message"], error
    assert hearth.uids() == before
    assert hearth.account(uid) == account_before


def test_a_disabled_provider_refuses_every_way_in(hearth, provider):
    user = PROVIDER_USERS["disabled"]
    before = hearth.uids()
    pending = provider_redirect(hearth, provider, user)  # begun while the provider was enabled
    token = provider_id_token(provider, user, nonce=None)

    hearth.set_provider_enabled(PROVIDER_ID, False)
    try:
        hearth.refused("createAuthUri", {"providerId": PROVIDER_ID, "continueUri": hearth.handler_url},
                       "OPERATION_NOT_ALLOWED")
        assert_firebase_error(hearth.sign_in_with_idp(pending.request_uri, pending.session_id), "OPERATION_NOT_ALLOWED")
        assert_firebase_error(hearth.sign_in_with_id_token(token), "OPERATION_NOT_ALLOWED")
        assert_no_account_for(hearth, user, before)
    finally:
        hearth.set_provider_enabled(PROVIDER_ID, True)

    # Enabled again, the same ID token signs in (and makes the account only now).
    response = hearth.sign_in_with_id_token(token)
    assert response.status_code == 200, response.text
    assert response.json()["isNewUser"] is True


def test_unknown_providers_and_bad_continue_uris_are_refused(hearth):
    before = hearth.all_accounts()
    for provider_id in ("oidc.unknown", "saml.unknown", "facebook.com"):
        hearth.refused("createAuthUri", {"providerId": provider_id, "continueUri": hearth.handler_url}, "INVALID_PROVIDER_ID")
        post = urlencode({"id_token": "x.y.z", "providerId": provider_id})
        hearth.refused("signInWithIdp", {"postBody": post, "requestUri": "http://localhost"}, "INVALID_PROVIDER_ID")
    for continue_uri in ("not a url", "ftp://127.0.0.1/x", hearth.handler_url + "#fragment"):
        hearth.refused("createAuthUri", {"providerId": PROVIDER_ID, "continueUri": continue_uri}, "INVALID_CONTINUE_URI")
    assert hearth.all_accounts() == before
