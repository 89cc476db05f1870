"""The account service: firebase-admin's `auth` module, the Firebase Auth REST API, and
Hearth's ID tokens as database credentials."""
import base64
import json
import os
import time
import uuid

import pytest
import requests

from harness import wait_past_second

PROJECT = "fake-project-id"
OWNER = {"Authorization": "Bearer owner"}
KEY = {"key": "anything"}
DB = {"ns": "auth-checks"}
JSON_TYPE = "application/json; charset=utf-8"


# Helpers ---------------------------------------------------------------------------------------

def unique_email(label="user"):
    return f"{label}-{uuid.uuid4().hex[:12]}@example.com"


def unique_uid(label="uid"):
    return f"{label}-{uuid.uuid4().hex[:16]}"


def b64url_decode(part):
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def b64url_encode(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def jwt_parts(token):
    header, payload, signature = token.split(".")
    return json.loads(b64url_decode(header)), json.loads(b64url_decode(payload)), signature


def reencoded(token, **changes):
    """The token with its payload re-encoded with `changes`; the old signature is kept (so now wrong)."""
    header, payload, signature = token.split(".")
    claims = json.loads(b64url_decode(payload))
    claims.update(changes)
    return f"{header}.{b64url_encode(json.dumps(claims).encode())}.{signature}"


def assert_auth_error(response, message, status=400):
    """Firebase's error shape: {"error": {"code", "message", "errors": [{"message", "domain", "reason"}]}}."""
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"].startswith("application/json")
    error = response.json()["error"]
    assert error["code"] == status
    assert error["message"] == message, error
    assert error["errors"][0]["message"] == message
    assert error["errors"][0]["domain"] == "global"
    return error


class Accounts:
    """The REST API as a Firebase client library calls it."""

    def __init__(self, base):
        self.base = base

    def call(self, endpoint, body, headers=None):
        return requests.post(
            f"{self.base}/identitytoolkit.googleapis.com/v1/accounts:{endpoint}", params=KEY, json=body,
            headers=headers)

    def sign_up(self, email=None, password="secret-password", **extra):
        body = dict(extra, returnSecureToken=True)
        if email is not None:
            body.update(email=email, password=password)
        return self.call("signUp", body)

    def sign_in(self, email, password):
        return self.call("signInWithPassword", {"email": email, "password": password, "returnSecureToken": True})

    def refresh(self, refresh_token):
        return requests.post(
            f"{self.base}/securetoken.googleapis.com/v1/token", params=KEY,
            data={"grant_type": "refresh_token", "refresh_token": refresh_token})

    def lookup(self, id_token):
        return self.call("lookup", {"idToken": id_token})

    def new_user(self, label="user", password="secret-password"):
        """Signs up a fresh email/password user; returns (email, password, response body)."""
        email = unique_email(label)
        response = self.sign_up(email, password)
        assert response.status_code == 200, response.text
        return email, password, response.json()


@pytest.fixture(scope="module")
def accounts(server):
    return Accounts(server)


@pytest.fixture(scope="module")
def jwks(server):
    response = requests.get(f"{server}/.well-known/jwks.json")
    assert response.status_code == 200, response.text
    return response.json()


@pytest.fixture(scope="module")
def db(server):
    """A namespace where each user may read and write only their own node."""
    rules = {"rules": {"users": {"$uid": {".read": "auth.uid === $uid", ".write": "auth.uid === $uid"}}}}
    response = requests.put(f"{server}/.settings/rules.json", params=DB, headers=OWNER, data=json.dumps(rules))
    assert response.status_code == 200, response.text
    return server


def db_error(response):
    assert response.headers["Content-Type"] == JSON_TYPE
    return response.json()["error"]


# 1. firebase-admin's auth module ------------------------------------------------------------------

def test_admin_create_and_get_user(auth_app):
    from firebase_admin import auth

    uid, email = unique_uid("created"), unique_email("created")
    created = auth.create_user(uid=uid, email=email, password="secret-password", display_name="Ada", app=auth_app)
    assert created.uid == uid
    assert created.email == email
    assert created.display_name == "Ada"
    assert created.email_verified is False
    assert created.disabled is False

    fetched = auth.get_user(uid, app=auth_app)
    assert (fetched.uid, fetched.email, fetched.display_name) == (uid, email, "Ada")
    assert fetched.custom_claims is None
    assert fetched.user_metadata.creation_timestamp > 0
    assert [p.provider_id for p in fetched.provider_data] == ["password"]

    by_email = auth.get_user_by_email(email, app=auth_app)
    assert by_email.uid == uid
    # Emails are compared without regard to case, as Firebase does.
    assert auth.get_user_by_email(email.upper(), app=auth_app).uid == uid


def test_admin_created_user_can_sign_in(auth_app, accounts):
    from firebase_admin import auth

    email = unique_email("admin-made")
    user = auth.create_user(email=email, password="secret-password", app=auth_app)
    assert len(user.uid) == 28  # a generated uid looks like Firebase's
    signed_in = accounts.sign_in(email, "secret-password")
    assert signed_in.status_code == 200, signed_in.text
    assert signed_in.json()["localId"] == user.uid


def test_admin_update_user(auth_app, accounts):
    from firebase_admin import auth

    email = unique_email("updated")
    uid = auth.create_user(email=email, password="secret-password", display_name="Before", app=auth_app).uid
    updated = auth.update_user(uid, display_name="After", email_verified=True, app=auth_app)
    assert updated.display_name == "After"
    assert updated.email_verified is True
    assert updated.disabled is False

    auth.update_user(uid, disabled=True, app=auth_app)
    fetched = auth.get_user(uid, app=auth_app)
    assert fetched.disabled is True
    assert fetched.display_name == "After"
    assert fetched.email_verified is True
    assert_auth_error(accounts.sign_in(email, "secret-password"), "USER_DISABLED")

    auth.update_user(uid, disabled=False, display_name=auth.DELETE_ATTRIBUTE, app=auth_app)
    fetched = auth.get_user(uid, app=auth_app)
    assert fetched.disabled is False
    assert fetched.display_name is None
    assert accounts.sign_in(email, "secret-password").status_code == 200


def test_admin_disabling_stops_refresh(auth_app, accounts):
    from firebase_admin import auth

    _, _, body = accounts.new_user("disabled-refresh")
    auth.update_user(body["localId"], disabled=True, app=auth_app)
    assert_auth_error(accounts.refresh(body["refreshToken"]), "USER_DISABLED")


def test_admin_update_password(auth_app, accounts):
    from firebase_admin import auth

    email, _, body = accounts.new_user("admin-password")
    auth.update_user(body["localId"], password="another-password", app=auth_app)
    assert_auth_error(accounts.sign_in(email, "secret-password"), "INVALID_LOGIN_CREDENTIALS")
    assert accounts.sign_in(email, "another-password").status_code == 200


def test_admin_custom_claims(auth_app, accounts):
    from firebase_admin import auth

    email = unique_email("claims")
    uid = auth.create_user(email=email, password="secret-password", app=auth_app).uid
    auth.set_custom_user_claims(uid, {"admin": True, "level": 3}, app=auth_app)
    assert auth.get_user(uid, app=auth_app).custom_claims == {"admin": True, "level": 3}

    # The claims appear in the user's next ID token.
    signed_in = accounts.sign_in(email, "secret-password")
    assert signed_in.status_code == 200, signed_in.text
    _, claims, _ = jwt_parts(signed_in.json()["idToken"])
    assert claims["admin"] is True
    assert claims["level"] == 3

    # None clears them.
    auth.set_custom_user_claims(uid, None, app=auth_app)
    assert auth.get_user(uid, app=auth_app).custom_claims is None
    _, claims, _ = jwt_parts(accounts.sign_in(email, "secret-password").json()["idToken"])
    assert "admin" not in claims


def test_admin_custom_claims_with_a_list(auth_app, accounts):
    from firebase_admin import auth

    email = unique_email("list-claims")
    uid = auth.create_user(email=email, password="secret-password", app=auth_app).uid
    auth.set_custom_user_claims(uid, {"roles": ["editor", "viewer"]}, app=auth_app)
    assert auth.get_user(uid, app=auth_app).custom_claims == {"roles": ["editor", "viewer"]}


def test_id_token_keeps_list_claims(auth_app, accounts):
    from firebase_admin import auth

    email = unique_email("list-token")
    uid = auth.create_user(email=email, password="secret-password", app=auth_app).uid
    auth.set_custom_user_claims(uid, {"roles": ["editor", "viewer"]}, app=auth_app)
    signed_in = accounts.sign_in(email, "secret-password")
    assert signed_in.status_code == 200, signed_in.text
    _, claims, _ = jwt_parts(signed_in.json()["idToken"])
    assert claims["roles"] == ["editor", "viewer"]


def test_admin_list_users_pages(auth_app, server):
    from firebase_admin import auth

    # Start from an empty account store so the listing is exact.
    cleared = requests.delete(f"{server}/emulator/v1/projects/{PROJECT}/accounts", headers=OWNER)
    assert cleared.status_code == 200, cleared.text
    uids = sorted(unique_uid("listed") for _ in range(5))
    for index, uid in enumerate(uids):
        auth.create_user(uid=uid, email=unique_email(f"listed{index}"), app=auth_app)

    page = auth.list_users(max_results=2, app=auth_app)
    seen, sizes = [], []
    while page:
        sizes.append(len(page.users))
        seen.extend(user.uid for user in page.users)
        page = page.get_next_page()
    assert sizes == [2, 2, 1]
    assert sorted(seen) == uids

    everyone = [user.uid for user in auth.list_users(max_results=2, app=auth_app).iterate_all()]
    assert sorted(everyone) == uids
    assert len(everyone) == 5


def test_emulator_clear_accounts(auth_app, server):
    from firebase_admin import auth

    uid = unique_uid("cleared")
    auth.create_user(uid=uid, app=auth_app)
    url = f"{server}/emulator/v1/projects/{PROJECT}/accounts"
    # Only an admin may clear the accounts.
    refused = requests.delete(url)
    assert refused.status_code in (401, 403), refused.text
    assert auth.get_user(uid, app=auth_app).uid == uid
    cleared = requests.delete(url, headers=OWNER)
    assert cleared.status_code == 200, cleared.text
    assert cleared.json() == {}
    with pytest.raises(auth.UserNotFoundError):
        auth.get_user(uid, app=auth_app)
    assert list(auth.list_users(app=auth_app).iterate_all()) == []


def test_admin_endpoints_need_an_admin(server, auth_app):
    from firebase_admin import auth

    uid = unique_uid("intruder")
    refused = requests.post(
        f"{server}/identitytoolkit.googleapis.com/v1/projects/{PROJECT}/accounts", json={"localId": uid})
    assert refused.status_code in (401, 403), refused.text
    with pytest.raises(auth.UserNotFoundError):
        auth.get_user(uid, app=auth_app)


def test_admin_delete_user(auth_app):
    from firebase_admin import auth

    uid = auth.create_user(uid=unique_uid("deleted"), email=unique_email("deleted"), app=auth_app).uid
    auth.delete_user(uid, app=auth_app)
    with pytest.raises(auth.UserNotFoundError):
        auth.get_user(uid, app=auth_app)
    with pytest.raises(auth.UserNotFoundError):
        auth.delete_user(uid, app=auth_app)


def test_admin_duplicates(auth_app):
    from firebase_admin import auth

    uid, email = unique_uid("dup"), unique_email("dup")
    auth.create_user(uid=uid, email=email, app=auth_app)
    with pytest.raises(auth.EmailAlreadyExistsError):
        auth.create_user(email=email, app=auth_app)
    with pytest.raises(auth.UidAlreadyExistsError):
        auth.create_user(uid=uid, app=auth_app)
    with pytest.raises(auth.UserNotFoundError):
        auth.get_user_by_email(unique_email("nobody"), app=auth_app)
    # Taking someone else's email by update is refused too.
    other = auth.create_user(email=unique_email("dup-other"), app=auth_app).uid
    with pytest.raises(auth.EmailAlreadyExistsError):
        auth.update_user(other, email=email, app=auth_app)


def test_admin_revoke_refresh_tokens(auth_app, accounts):
    from firebase_admin import auth

    _, _, body = accounts.new_user("revoked")
    uid, refresh_token, id_token = body["localId"], body["refreshToken"], body["idToken"]
    assert accounts.refresh(refresh_token).status_code == 200
    assert auth.verify_id_token(id_token, check_revoked=True, app=auth_app)["uid"] == uid
    # validSince is in whole seconds: let the token's iat fall strictly before it.
    wait_past_second(jwt_parts(id_token)[1]["iat"])
    auth.revoke_refresh_tokens(uid, app=auth_app)
    refused = accounts.refresh(refresh_token)
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["message"] in ("TOKEN_EXPIRED", "INVALID_REFRESH_TOKEN")
    assert auth.get_user(uid, app=auth_app).tokens_valid_after_timestamp >= (int(time.time()) - 5) * 1000
    with pytest.raises(auth.RevokedIdTokenError):
        auth.verify_id_token(id_token, check_revoked=True, app=auth_app)


# 2. Custom tokens -------------------------------------------------------------------------------

def test_custom_token_sign_in(auth_app, accounts):
    from firebase_admin import auth

    uid = unique_uid("custom")
    token = auth.create_custom_token(uid, {"premium": True}, app=auth_app)
    token = token.decode() if isinstance(token, bytes) else token
    header, _, signature = jwt_parts(token)
    assert header["alg"] == "none" and signature == ""  # the SDK's emulator-mode token

    response = accounts.call("signInWithCustomToken", {"token": token, "returnSecureToken": True})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["isNewUser"] is True
    assert body["localId"] == uid
    assert body["expiresIn"] == "3600"
    assert body["refreshToken"]

    header, claims, signature = jwt_parts(body["idToken"])
    assert header["alg"] == "RS256" and signature
    assert claims["sub"] == uid
    assert claims["user_id"] == uid
    assert claims["aud"] == PROJECT
    assert claims["iss"] == f"https://securetoken.google.com/{PROJECT}"
    assert claims["firebase"]["sign_in_provider"] == "custom"
    assert claims["premium"] is True
    assert claims["exp"] - claims["iat"] == 3600
    assert abs(claims["iat"] - time.time()) < 60

    verified = auth.verify_id_token(body["idToken"], app=auth_app)
    assert verified["uid"] == uid
    assert verified["premium"] is True

    again = accounts.call("signInWithCustomToken", {"token": token, "returnSecureToken": True})
    assert again.status_code == 200, again.text
    assert again.json()["isNewUser"] is False
    assert auth.get_user(uid, app=auth_app).uid == uid

    refreshed = accounts.refresh(body["refreshToken"])
    assert refreshed.status_code == 200, refreshed.text
    assert refreshed.json()["user_id"] == uid


def test_custom_token_refusals(auth_app, accounts):
    from firebase_admin import auth

    assert_auth_error(accounts.call("signInWithCustomToken", {"token": "garbage"}), "INVALID_CUSTOM_TOKEN")
    assert_auth_error(accounts.call("signInWithCustomToken", {}), "INVALID_CUSTOM_TOKEN")
    # An ID token is not a custom token.
    _, _, body = accounts.new_user("not-custom")
    assert_auth_error(accounts.call("signInWithCustomToken", {"token": body["idToken"]}), "INVALID_CUSTOM_TOKEN")
    # And firebase-admin refuses a custom token where an ID token is due.
    custom = auth.create_custom_token(unique_uid("x"), app=auth_app)
    with pytest.raises(auth.InvalidIdTokenError):
        auth.verify_id_token(custom, app=auth_app)


# 3. The REST API as a client library uses it ------------------------------------------------------

def test_sign_up(accounts):
    email = unique_email("signup")
    response = accounts.sign_up(email, "secret-password")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["idToken"] and body["refreshToken"] and body["localId"]
    assert body["expiresIn"] == "3600"
    assert body["email"] == email
    assert body["kind"] == "identitytoolkit#SignupNewUserResponse"
    _, claims, _ = jwt_parts(body["idToken"])
    assert claims["sub"] == body["localId"]
    assert claims["email"] == email
    assert claims["email_verified"] is False
    assert claims["firebase"]["sign_in_provider"] == "password"

    error = assert_auth_error(accounts.sign_up(email, "another-password"), "EMAIL_EXISTS")
    assert error["errors"][0]["reason"] == "invalid"
    assert_auth_error(accounts.sign_up(email.upper(), "another-password"), "EMAIL_EXISTS")


def test_id_token_identities_is_a_list(accounts):
    email, _, body = accounts.new_user("identities")
    _, claims, _ = jwt_parts(body["idToken"])
    assert claims["firebase"]["identities"] == {"email": [email]}


def test_sign_up_refusals(accounts):
    assert_auth_error(
        accounts.sign_up(unique_email("weak"), "12345"), "WEAK_PASSWORD : Password should be at least 6 characters")
    assert_auth_error(accounts.sign_up("not-an-email", "secret-password"), "INVALID_EMAIL")
    assert_auth_error(accounts.call("signUp", {"email": unique_email("nopass")}), "MISSING_PASSWORD")


def test_sign_in(accounts):
    email, password, created = accounts.new_user("signin")
    response = accounts.sign_in(email, password)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["localId"] == created["localId"]
    assert body["email"] == email
    assert body["registered"] is True
    assert body["expiresIn"] == "3600"
    assert body["idToken"] and body["refreshToken"]
    assert body["refreshToken"] != created["refreshToken"]
    # The email is matched without regard to case.
    assert accounts.sign_in(email.upper(), password).status_code == 200


def test_sign_in_refusals_do_not_tell_which_part_was_wrong(accounts):
    email, _, _ = accounts.new_user("wrong")
    wrong_password = assert_auth_error(accounts.sign_in(email, "not-the-password"), "INVALID_LOGIN_CREDENTIALS")
    unknown_email = assert_auth_error(
        accounts.sign_in(unique_email("unknown"), "not-the-password"), "INVALID_LOGIN_CREDENTIALS")
    assert wrong_password == unknown_email


def test_anonymous_sign_up(accounts):
    response = accounts.call("signUp", {})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["localId"] and body["idToken"] and body["refreshToken"]
    assert body["expiresIn"] == "3600"
    assert "email" not in body
    _, claims, _ = jwt_parts(body["idToken"])
    assert claims["sub"] == body["localId"]
    assert claims["firebase"]["sign_in_provider"] == "anonymous"
    assert claims["firebase"]["identities"] == {}
    assert "email" not in claims
    looked_up = accounts.lookup(body["idToken"])
    assert looked_up.status_code == 200, looked_up.text
    user = looked_up.json()["users"][0]
    assert user["localId"] == body["localId"]
    assert "email" not in user


def test_refresh(accounts):
    _, _, body = accounts.new_user("refresh")
    response = accounts.refresh(body["refreshToken"])
    assert response.status_code == 200, response.text
    refreshed = response.json()
    assert refreshed["user_id"] == body["localId"]
    assert refreshed["expires_in"] == "3600"
    assert refreshed["token_type"] == "Bearer"
    assert refreshed["refresh_token"]
    assert refreshed["project_id"] == PROJECT
    assert refreshed["access_token"] == refreshed["id_token"]
    _, claims, _ = jwt_parts(refreshed["id_token"])
    assert claims["sub"] == body["localId"]
    assert claims["firebase"]["sign_in_provider"] == "password"
    # The new ID token is accepted by the account endpoints.
    assert accounts.lookup(refreshed["id_token"]).json()["users"][0]["localId"] == body["localId"]


def test_refresh_refusals(accounts, server):
    assert_auth_error(accounts.refresh("garbage-refresh-token"), "INVALID_REFRESH_TOKEN")
    assert_auth_error(
        requests.post(f"{server}/securetoken.googleapis.com/v1/token", params=KEY, data={"grant_type": "refresh_token"}),
        "MISSING_REFRESH_TOKEN")
    assert_auth_error(
        requests.post(f"{server}/securetoken.googleapis.com/v1/token", params=KEY,
                      data={"grant_type": "password", "refresh_token": "x"}),
        "INVALID_GRANT_TYPE")


def test_lookup(accounts):
    email, _, body = accounts.new_user("lookup")
    response = accounts.lookup(body["idToken"])
    assert response.status_code == 200, response.text
    assert response.json()["kind"] == "identitytoolkit#GetAccountInfoResponse"
    users = response.json()["users"]
    assert len(users) == 1
    user = users[0]
    assert user["localId"] == body["localId"]
    assert user["email"] == email
    assert user["emailVerified"] is False
    assert user["providerUserInfo"][0]["providerId"] == "password"
    # Never the password hash (Firebase shows at most a redacted placeholder).
    assert user.get("passwordHash") in (None, "UkVEQUNURUQ=")
    assert "salt" not in user

    assert_auth_error(accounts.lookup("not-a-token"), "INVALID_ID_TOKEN")
    assert_auth_error(accounts.lookup(reencoded(body["idToken"], sub="someone-else")), "INVALID_ID_TOKEN")


def test_update_profile(accounts):
    _, _, body = accounts.new_user("profile")
    response = accounts.call("update", {
        "idToken": body["idToken"], "displayName": "Grace", "photoUrl": "https://example.com/grace.png",
        "returnSecureToken": True})
    assert response.status_code == 200, response.text
    updated = response.json()
    assert updated["localId"] == body["localId"]
    assert updated["displayName"] == "Grace"
    assert updated["photoUrl"] == "https://example.com/grace.png"

    user = accounts.lookup(body["idToken"]).json()["users"][0]
    assert user["displayName"] == "Grace"
    assert user["photoUrl"] == "https://example.com/grace.png"

    removed = accounts.call("update", {"idToken": body["idToken"], "deleteAttribute": ["DISPLAY_NAME"]})
    assert removed.status_code == 200, removed.text
    user = accounts.lookup(body["idToken"]).json()["users"][0]
    assert "displayName" not in user
    assert user["photoUrl"] == "https://example.com/grace.png"


def test_password_change(accounts):
    email, password, body = accounts.new_user("password-change")
    response = accounts.call("update", {"idToken": body["idToken"], "password": "new-password", "returnSecureToken": True})
    assert response.status_code == 200, response.text
    changed = response.json()
    assert changed["idToken"] and changed["refreshToken"]
    assert changed["refreshToken"] != body["refreshToken"]
    assert changed["expiresIn"] == "3600"

    old = accounts.refresh(body["refreshToken"])
    assert old.status_code == 400, old.text
    assert old.json()["error"]["message"] in ("TOKEN_EXPIRED", "INVALID_REFRESH_TOKEN")
    assert accounts.refresh(changed["refreshToken"]).status_code == 200
    assert accounts.lookup(changed["idToken"]).status_code == 200

    assert_auth_error(accounts.sign_in(email, password), "INVALID_LOGIN_CREDENTIALS")
    assert accounts.sign_in(email, "new-password").status_code == 200
    assert_auth_error(
        accounts.call("update", {"idToken": changed["idToken"], "password": "short"}),
        "WEAK_PASSWORD : Password should be at least 6 characters")


def test_sign_out_revokes_the_refresh_token(accounts):
    _, _, body = accounts.new_user("signout")
    assert accounts.refresh(body["refreshToken"]).status_code == 200
    # Token times are whole seconds: let the ID token's iat fall strictly before the sign-out.
    wait_past_second(jwt_parts(body["idToken"])[1]["iat"])
    response = accounts.call("signOut", {"idToken": body["idToken"]})
    assert response.status_code == 200, response.text
    refused = accounts.refresh(body["refreshToken"])
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["message"] in ("TOKEN_EXPIRED", "INVALID_REFRESH_TOKEN")
    # ID tokens issued before the sign-out are refused by the account endpoints.
    assert_auth_error(accounts.lookup(body["idToken"]), "TOKEN_EXPIRED")


def test_signing_in_again_right_after_sign_out_works(auth_app, accounts):
    from firebase_admin import auth

    token = auth.create_custom_token(unique_uid("again"), app=auth_app).decode()
    first = accounts.call("signInWithCustomToken", {"token": token}).json()
    # Start just after a second boundary, so sign-out and the new sign-in share a second.
    wait_past_second(time.time())
    assert accounts.call("signOut", {"idToken": first["idToken"]}).status_code == 200
    second = accounts.call("signInWithCustomToken", {"token": token})
    assert second.status_code == 200, second.text
    fresh = second.json()
    refreshed = accounts.refresh(fresh["refreshToken"])
    assert refreshed.status_code == 200, refreshed.text
    assert accounts.lookup(fresh["idToken"]).status_code == 200


def test_delete_account(accounts):
    email, password, body = accounts.new_user("self-delete")
    response = accounts.call("delete", {"idToken": body["idToken"]})
    assert response.status_code == 200, response.text
    assert response.json()["kind"] == "identitytoolkit#DeleteAccountResponse"
    assert_auth_error(accounts.sign_in(email, password), "INVALID_LOGIN_CREDENTIALS")
    assert_auth_error(accounts.lookup(body["idToken"]), "USER_NOT_FOUND")
    refused = accounts.refresh(body["refreshToken"])
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["message"] in ("USER_NOT_FOUND", "INVALID_REFRESH_TOKEN")
    # The email is free again.
    assert accounts.sign_up(email, password).status_code == 200


# 4. Rate limiting -------------------------------------------------------------------------------

def test_too_many_failed_sign_ins_lock_the_account(accounts):
    email, password, _ = accounts.new_user("ratelimited")
    other_email, other_password, _ = accounts.new_user("bystander")
    for _ in range(10):
        assert_auth_error(accounts.sign_in(email, "wrong-password"), "INVALID_LOGIN_CREDENTIALS")
    # Now even the right password is refused for a while.
    blocked = accounts.sign_in(email, password)
    assert blocked.status_code == 400, blocked.text
    assert blocked.json()["error"]["message"].startswith("TOO_MANY_ATTEMPTS_TRY_LATER")
    assert accounts.sign_in(email.upper(), password).json()["error"]["message"].startswith(
        "TOO_MANY_ATTEMPTS_TRY_LATER")
    # Other accounts are not affected.
    assert accounts.sign_in(other_email, other_password).status_code == 200


# 5. The signature matters -----------------------------------------------------------------------

def test_jwks(jwks, server, accounts):
    keys = jwks["keys"]
    assert len(keys) == 1
    key = keys[0]
    assert key["kty"] == "RSA"
    assert key["alg"] == "RS256"
    assert key["use"] == "sig"
    assert key["kid"] and key["n"] and key["e"]
    assert "d" not in key and "p" not in key  # only the public half
    assert len(b64url_decode(key["n"])) == 256  # 2048 bits
    # Google's securetoken path serves the same keys.
    google = requests.get(f"{server}/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com")
    assert google.status_code == 200
    assert google.json() == jwks

    _, _, body = accounts.new_user("kid")
    header, _, _ = jwt_parts(body["idToken"])
    assert header["alg"] == "RS256"
    assert header["kid"] == key["kid"]


def test_id_token_signature_verifies_with_the_jwks(jwks, accounts):
    pytest.importorskip("cryptography")
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding, rsa

    key = jwks["keys"][0]
    public_key = rsa.RSAPublicNumbers(
        int.from_bytes(b64url_decode(key["e"]), "big"), int.from_bytes(b64url_decode(key["n"]), "big")).public_key()

    _, _, body = accounts.new_user("signature")
    for token in (body["idToken"], accounts.refresh(body["refreshToken"]).json()["id_token"]):
        header, payload, signature = token.split(".")
        public_key.verify(
            b64url_decode(signature), f"{header}.{payload}".encode(), padding.PKCS1v15(), hashes.SHA256())
        # A changed payload no longer matches the signature.
        forged = reencoded(token, sub="someone-else").split(".")
        with pytest.raises(InvalidSignature):
            public_key.verify(
                b64url_decode(forged[2]), f"{forged[0]}.{forged[1]}".encode(), padding.PKCS1v15(), hashes.SHA256())


def test_database_accepts_hearth_id_tokens(db, accounts):
    _, _, alice = accounts.new_user("alice")
    _, _, bob = accounts.new_user("bob")
    mine = f"{db}/users/{alice['localId']}.json"

    write = requests.put(mine, params={**DB, "auth": alice["idToken"]}, data='{"note":"hello"}')
    assert write.status_code == 200, write.text
    assert write.json() == {"note": "hello"}

    others = requests.put(f"{db}/users/{bob['localId']}.json", params={**DB, "auth": alice["idToken"]}, data="1")
    assert others.status_code == 401
    assert db_error(others) == "Permission denied"

    read = requests.get(mine, params=DB, headers={"Authorization": f"Bearer {alice['idToken']}"})
    assert read.status_code == 200, read.text
    assert read.json() == {"note": "hello"}

    signed_out = requests.get(mine, params=DB)
    assert signed_out.status_code == 401
    assert db_error(signed_out) == "Permission denied"

    # A refreshed ID token works too.
    refreshed = accounts.refresh(alice["refreshToken"]).json()["id_token"]
    assert requests.get(mine, params={**DB, "auth": refreshed}).json() == {"note": "hello"}
    # Bob cannot read Alice's node.
    assert requests.get(mine, params={**DB, "auth": bob["idToken"]}).status_code == 401
    assert requests.get(mine, params=DB, headers=OWNER).json() == {"note": "hello"}


def flipped(token):
    """The token with one character in the middle of its payload changed."""
    header, payload, signature = token.split(".")
    middle = len(payload) // 2
    replacement = "A" if payload[middle] != "A" else "B"
    return f"{header}.{payload[:middle]}{replacement}{payload[middle + 1:]}.{signature}"


def test_database_refuses_a_tampered_token(db, accounts):
    _, _, alice = accounts.new_user("tamper")
    mine = f"{db}/users/{alice['localId']}.json"
    requests.put(mine, params=DB, headers=OWNER, data='"secret"').raise_for_status()
    for token in (flipped(alice["idToken"]), alice["idToken"][:-4] + "AAAA", alice["idToken"] + "x"):
        for response in (
            requests.get(mine, params={**DB, "auth": token}),
            requests.get(mine, params=DB, headers={"Authorization": f"Bearer {token}"}),
        ):
            assert response.status_code == 401
            assert db_error(response) == "Could not parse auth token."


def test_database_refuses_a_token_claiming_another_user(db, accounts):
    _, _, alice = accounts.new_user("claimant")
    _, _, bob = accounts.new_user("victim")
    theirs = f"{db}/users/{bob['localId']}.json"
    requests.put(theirs, params=DB, headers=OWNER, data='"bob only"').raise_for_status()
    forged = reencoded(alice["idToken"], sub=bob["localId"], user_id=bob["localId"])
    for response in (
        requests.get(theirs, params={**DB, "auth": forged}),
        requests.put(theirs, params={**DB, "auth": forged}, data='"overwritten"'),
    ):
        assert response.status_code == 401
        assert db_error(response) == "Could not parse auth token."
    assert requests.get(theirs, params=DB, headers=OWNER).json() == "bob only"


def test_database_refuses_a_token_signed_by_another_key(db, accounts, jwks):
    pytest.importorskip("cryptography")
    from cryptography.hazmat.primitives import hashes, hmac
    from cryptography.hazmat.primitives.asymmetric import padding, rsa

    _, _, alice = accounts.new_user("otherkey")
    mine = f"{db}/users/{alice['localId']}.json"
    header, payload, _ = alice["idToken"].split(".")
    signing_input = f"{header}.{payload}".encode()
    # Same header (kid) and claims, signed with a key Hearth never made.
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    resigned = f"{header}.{payload}.{b64url_encode(stranger.sign(signing_input, padding.PKCS1v15(), hashes.SHA256()))}"
    # The algorithm-confusion trick: HS256 keyed with the public modulus.
    hs_header = b64url_encode(json.dumps({"alg": "HS256", "typ": "JWT", "kid": jwks["keys"][0]["kid"]}).encode())
    mac = hmac.HMAC(b64url_decode(jwks["keys"][0]["n"]), hashes.SHA256())
    mac.update(f"{hs_header}.{payload}".encode())
    confused = f"{hs_header}.{payload}.{b64url_encode(mac.finalize())}"
    for token in (resigned, confused):
        response = requests.get(mine, params={**DB, "auth": token})
        assert response.status_code == 401
        assert db_error(response) == "Could not parse auth token."
    assert requests.get(mine, params={**DB, "auth": alice["idToken"]}).status_code == 200


# 6. Audience -------------------------------------------------------------------------------------

def test_token_for_another_project_is_refused(db, accounts):
    _, _, alice = accounts.new_user("audience")
    mine = f"{db}/users/{alice['localId']}.json"
    other_project = reencoded(
        alice["idToken"], aud="another-project", iss="https://securetoken.google.com/another-project")
    for token in (reencoded(alice["idToken"], aud="another-project"), other_project):
        response = requests.get(mine, params={**DB, "auth": token})
        assert response.status_code == 401
        assert db_error(response) == "Could not parse auth token."
        assert_auth_error(accounts.lookup(token), "INVALID_ID_TOKEN")
    assert requests.get(mine, params={**DB, "auth": alice["idToken"]}).status_code == 200
