"""Linking provider identities to accounts: an anonymous account gaining oidc.test (same uid,
its data kept), unlinking it (`accounts:update` with ``deleteProvider``), an identity that
already belongs to someone else, and Firebase's default "one account per email": a provider
that vouches for an address signs in to the account that has it, one that does not gets
``needConfirmation``.
"""

from __future__ import annotations

from accounts_support import (
    PROVIDER_ID, PROVIDER_USERS, TIMEOUT, assert_firebase_error, jwt_claims, oidc_sign_in, provider_id_token,
    provider_infos, provider_redirect, subject_for,
)


def database_url(hearth, uid: str) -> str:
    return f"{hearth.url}/users/{uid}.json"


def test_an_anonymous_account_links_the_provider_and_keeps_its_uid_and_data(hearth, provider):
    user = PROVIDER_USERS["linker"]
    anonymous = hearth.sign_up()
    uid = anonymous["localId"]
    assert "providerUserInfo" not in hearth.account(uid)
    written = hearth.http.put(database_url(hearth, uid), params={"auth": anonymous["idToken"]},
                              json={"note": "written while anonymous"}, timeout=TIMEOUT)
    assert written.status_code == 200, written.text
    before = hearth.uids()

    linked = oidc_sign_in(hearth, provider, user, id_token=anonymous["idToken"])
    assert (linked["localId"], linked["isNewUser"]) == (uid, False)
    assert (linked["providerId"], linked["federatedId"]) == (PROVIDER_ID, subject_for(user.email))
    assert hearth.uids() == before, "linking must not make an account"

    account = hearth.account(uid)
    assert set(provider_infos(account)) == {PROVIDER_ID}
    assert provider_infos(account)[PROVIDER_ID]["rawId"] == subject_for(user.email)
    # The provider vouches for the address and nobody else has it: the account takes it.
    assert (account["email"], account["emailVerified"]) == (user.email, True)
    assert [found["localId"] for found in hearth.accounts_with_identity(PROVIDER_ID, subject_for(user.email))] == [uid]
    claims = jwt_claims(linked["idToken"])
    assert claims["sub"] == uid and claims["firebase"]["sign_in_provider"] == PROVIDER_ID

    # Signing in with the provider later reaches the same account.
    again = oidc_sign_in(hearth, provider, user)
    assert (again["localId"], again["isNewUser"]) == (uid, False)
    # The anonymous session goes on (linking ends no session).
    refreshed = hearth.refresh(anonymous["refreshToken"])
    assert refreshed.status_code == 200, refreshed.text
    assert refreshed.json()["user_id"] == uid

    # The data written while anonymous is readable with the new session's token.
    read = hearth.http.get(database_url(hearth, uid), params={"auth": linked["idToken"]}, timeout=TIMEOUT)
    assert read.status_code == 200, read.text
    assert read.json() == {"note": "written while anonymous"}


def test_unlinking_removes_the_identity_and_frees_it(hearth, provider):
    user = PROVIDER_USERS["unlinker"]
    anonymous = hearth.sign_up()
    uid = anonymous["localId"]
    linked = oidc_sign_in(hearth, provider, user, id_token=anonymous["idToken"])
    assert linked["localId"] == uid
    assert PROVIDER_ID in provider_infos(hearth.account(uid))
    before = hearth.uids()

    # The app unlinks with the signed-in user's current token (the one the link gave).
    unlinked = hearth.ok("update", {"idToken": linked["idToken"], "deleteProvider": [PROVIDER_ID], "returnSecureToken": True})
    assert unlinked["localId"] == uid
    assert PROVIDER_ID not in provider_infos(unlinked)
    account = hearth.account(uid)
    assert PROVIDER_ID not in provider_infos(account)
    assert hearth.accounts_with_identity(PROVIDER_ID, subject_for(user.email)) == []
    assert hearth.uids() == before

    # The identity is free again, but the account keeps the verified address the link gave it:
    # another account cannot take the identity with that address (EMAIL_EXISTS, as Firebase's
    # linkWithCredential answers), while a plain sign-in with it links back to this account by
    # the verified email.
    other = hearth.sign_up()
    assert_firebase_error(hearth.sign_in_with_id_token(provider_id_token(provider, user, nonce=None), id_token=other["idToken"]),
                          "EMAIL_EXISTS")
    assert hearth.accounts_with_identity(PROVIDER_ID, subject_for(user.email)) == []
    again = oidc_sign_in(hearth, provider, user)
    assert again["localId"] == uid and again["isNewUser"] is False
    assert [found["localId"] for found in hearth.accounts_with_identity(PROVIDER_ID, subject_for(user.email))] == [uid]


def test_an_identity_linked_to_another_account_is_refused(hearth, provider):
    user = PROVIDER_USERS["linked-elsewhere"]
    owner = oidc_sign_in(hearth, provider, user)
    assert owner["isNewUser"] is True
    anonymous = hearth.sign_up()
    before = hearth.uids()
    owner_before = hearth.account(owner["localId"])
    anonymous_before = hearth.account(anonymous["localId"])

    redirect = provider_redirect(hearth, provider, user)
    response = hearth.sign_in_with_idp(redirect.request_uri, redirect.session_id, id_token=anonymous["idToken"])
    assert_firebase_error(response, "FEDERATED_USER_ID_ALREADY_LINKED")

    token = provider_id_token(provider, user, nonce=None)
    assert_firebase_error(hearth.sign_in_with_id_token(token, id_token=anonymous["idToken"]), "FEDERATED_USER_ID_ALREADY_LINKED")

    assert hearth.uids() == before
    assert hearth.account(owner["localId"]) == owner_before
    assert hearth.account(anonymous["localId"]) == anonymous_before
    assert [found["localId"] for found in hearth.accounts_with_identity(PROVIDER_ID, subject_for(user.email))] == [
        owner["localId"]]


def test_a_second_identity_of_the_same_provider_is_refused(hearth, provider):
    """An account holds one identity per provider: linking another oidc.test identity must not
    quietly replace the one it has (Firebase: PROVIDER_ALREADY_LINKED, "User can only be
    linked to one identity for the given provider")."""
    user, other_user = PROVIDER_USERS["twice"], PROVIDER_USERS["twice-other"]
    owner = oidc_sign_in(hearth, provider, user)
    before = hearth.uids()
    owner_before = hearth.account(owner["localId"])

    token = provider_id_token(provider, other_user, nonce=None)
    assert_firebase_error(hearth.sign_in_with_id_token(token, id_token=owner["idToken"]), "PROVIDER_ALREADY_LINKED")
    assert hearth.uids() == before
    assert hearth.account(owner["localId"]) == owner_before
    assert hearth.accounts_with_identity(PROVIDER_ID, subject_for(other_user.email)) == []
    # The first identity still signs in to the account.
    assert oidc_sign_in(hearth, provider, user)["localId"] == owner["localId"]


def test_linking_a_provider_whose_email_another_account_has_is_refused(hearth, provider):
    """Firebase (one account per email, its default) refuses to link a credential whose
    email belongs to another account: EMAIL_EXISTS (auth/email-already-in-use)."""
    user = PROVIDER_USERS["noemailclash"]
    holder = hearth.sign_up(user.email, "holder-password-1")
    anonymous = hearth.sign_up()
    before = hearth.uids()
    holder_before = hearth.account(holder["localId"])
    anonymous_before = hearth.account(anonymous["localId"])

    token = provider_id_token(provider, user, nonce=None)
    assert_firebase_error(hearth.sign_in_with_id_token(token, id_token=anonymous["idToken"]), "EMAIL_EXISTS")
    assert hearth.uids() == before
    assert hearth.account(holder["localId"]) == holder_before
    assert hearth.account(anonymous["localId"]) == anonymous_before
    assert hearth.accounts_with_identity(PROVIDER_ID, subject_for(user.email)) == []


def test_a_verified_provider_email_signs_in_to_the_account_with_that_address(hearth, provider):
    user = PROVIDER_USERS["byemail"]
    password = "squatter-password-1"
    registered = hearth.sign_up(user.email, password)
    uid = registered["localId"]
    assert hearth.account(uid)["emailVerified"] is False
    before = hearth.uids()

    signed_in = oidc_sign_in(hearth, provider, user)
    assert (signed_in["localId"], signed_in["isNewUser"]) == (uid, False)
    assert hearth.uids() == before

    account = hearth.account(uid)
    assert (account["email"], account["emailVerified"]) == (user.email, True)
    # Whoever set the password never proved they hold the address: it is gone, with its sessions.
    assert set(provider_infos(account)) == {PROVIDER_ID}
    assert_firebase_error(hearth.sign_in_password(user.email, password), "INVALID_LOGIN_CREDENTIALS")
    assert_firebase_error(hearth.refresh(registered["refreshToken"]), "TOKEN_EXPIRED")
    # The provider's session is the one that works.
    assert hearth.refresh(signed_in["refreshToken"]).status_code == 200


def test_an_address_named_by_an_anonymous_account_is_claimed_with_its_sessions(hearth, provider):
    """Pre-hijacking: someone browsing anonymously names the victim's address (no password).
    When the victim signs in with a provider that vouches for the address, the account becomes
    theirs and the squatter's session ends: refreshing it answers TOKEN_EXPIRED."""
    user = PROVIDER_USERS["prehijacked"]
    squatter = hearth.sign_up()
    named = hearth.ok("update", {"idToken": squatter["idToken"], "email": user.email, "returnSecureToken": True})
    assert named["email"] == user.email
    assert hearth.refresh(squatter["refreshToken"]).status_code == 200

    victim = oidc_sign_in(hearth, provider, user)
    assert victim["localId"] == squatter["localId"]
    assert_firebase_error(hearth.refresh(squatter["refreshToken"]), "TOKEN_EXPIRED")
    assert set(provider_infos(hearth.account(victim["localId"]))) == {PROVIDER_ID}
    assert hearth.refresh(victim["refreshToken"]).status_code == 200


def test_an_unverified_provider_email_needs_confirmation_and_links_nothing(hearth, provider):
    user = PROVIDER_USERS["unverified-byemail"]
    assert not user.email_verified
    password = "owner-password-1"
    registered = hearth.sign_up(user.email, password)
    uid = registered["localId"]
    before = hearth.uids()
    account_before = hearth.account(uid)

    redirect = provider_redirect(hearth, provider, user)
    response = hearth.sign_in_with_idp(redirect.request_uri, redirect.session_id)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["needConfirmation"] is True
    assert (answer["email"], answer["emailVerified"], answer["providerId"]) == (user.email, False, PROVIDER_ID)
    for absent in ("idToken", "refreshToken"):
        assert absent not in answer, answer

    # Nothing linked, nothing made, the account's password and session untouched.
    assert hearth.uids() == before
    assert hearth.account(uid) == account_before
    assert set(provider_infos(hearth.account(uid))) == {"password"}
    assert hearth.accounts_with_identity(PROVIDER_ID, subject_for(user.email)) == []
    assert hearth.sign_in_password(user.email, password).status_code == 200
    assert hearth.refresh(registered["refreshToken"]).status_code == 200
