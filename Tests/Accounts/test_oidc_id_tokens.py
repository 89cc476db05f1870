"""Sign-in with an ID token the app got from the provider itself: `accounts:signInWithIdp`
with ``postBody=id_token=…&providerId=oidc.test[&nonce=…]`` (what Firebase's SDKs send for
``OAuthProvider.credential({idToken, rawNonce})``).

Nonces follow Firebase's rule (OAuthCredentialOptions.rawNonce in Firebase's reference): the
app gives the provider the SHA-256 hash (hex) of a raw nonce and gives Firebase the raw
nonce; "it is required when an ID token with a nonce field is provided. The SHA-256 hash of
the raw nonce must match the nonce field in the ID token."
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets

import pytest

from accounts_support import (
    ADMIN_TOKEN, CLIENT_ID, CLIENT_SECRET, DIRECT_REDIRECT, OTHER_AUDIENCE_PROVIDER_ID, PROJECT, PROVIDER_ID,
    PROVIDER_USERS, TIMEOUT, OIDCProvider, assert_firebase_error, jwt_claims, provider_id_token, subject_for,
)


def hashed(raw_nonce: str) -> str:
    return hashlib.sha256(raw_nonce.encode()).hexdigest()


@pytest.fixture(scope="module")
def other_issuer():
    """A second, independent provider: another issuer with its own signing key, the same
    client ID and secret, and the same people."""
    with OIDCProvider(CLIENT_ID, CLIENT_SECRET, [DIRECT_REDIRECT], PROVIDER_USERS.values()) as started:
        yield started


def assert_no_account_for(hearth, user, accounts_before: list[dict]) -> None:
    assert hearth.all_accounts() == accounts_before
    assert hearth.accounts_with_identity(PROVIDER_ID, subject_for(user.email)) == []
    assert hearth.admin_lookup(email=[user.email]) == []


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def test_an_id_token_without_nonce_signs_in_and_can_be_used_again(hearth, provider):
    user = PROVIDER_USERS["direct"]
    before = hearth.uids()
    token = provider_id_token(provider, user, nonce=None)
    assert "nonce" not in jwt_claims(token)

    response = hearth.sign_in_with_id_token(token)
    assert response.status_code == 200, response.text
    first = response.json()
    assert first["isNewUser"] is True
    assert (first["providerId"], first["federatedId"]) == (PROVIDER_ID, subject_for(user.email))
    assert (first["email"], first["emailVerified"], first["displayName"]) == (user.email, True, user.name)
    assert first["oauthIdToken"] == token
    assert first["localId"] not in before
    assert jwt_claims(first["idToken"])["firebase"]["sign_in_provider"] == PROVIDER_ID

    again = hearth.sign_in_with_id_token(token)
    assert again.status_code == 200, again.text
    assert (again.json()["localId"], again.json()["isNewUser"]) == (first["localId"], False)
    assert hearth.uids() == before | {first["localId"]}


def test_an_id_token_with_a_hashed_nonce_signs_in_with_the_raw_nonce(hearth, provider):
    user = PROVIDER_USERS["wrongnonce"]
    raw = secrets.token_urlsafe(16)
    token = provider_id_token(provider, user, nonce=hashed(raw))
    assert jwt_claims(token)["nonce"] == hashed(raw)
    accounts_before = hearth.all_accounts()

    # Refusals first: another raw nonce; the hash itself given as the raw nonce; none at all
    # although the token has one. None of them may make or change anything.
    for post_nonce in (secrets.token_urlsafe(16), hashed(raw), None):
        assert_firebase_error(hearth.sign_in_with_id_token(token, nonce=post_nonce), "MISSING_OR_INVALID_NONCE")
        assert_no_account_for(hearth, user, accounts_before)

    response = hearth.sign_in_with_id_token(token, nonce=raw)
    assert response.status_code == 200, response.text
    assert response.json()["isNewUser"] is True
    assert response.json()["federatedId"] == subject_for(user.email)


def test_a_token_whose_signature_or_claims_were_altered_is_refused(hearth, provider):
    user = PROVIDER_USERS["badsig"]
    token = provider_id_token(provider, user, nonce=None)
    header, payload, signature = token.split(".")
    accounts_before = hearth.all_accounts()

    # One character in the middle of the signature (the last one may only carry padding bits).
    middle = len(signature) // 2
    flipped = signature[:middle] + ("A" if signature[middle] != "A" else "B") + signature[middle + 1:]
    error = assert_firebase_error(hearth.sign_in_with_id_token(f"{header}.{payload}.{flipped}"), "INVALID_IDP_RESPONSE")
    assert "signature" in error["message"], error

    # The claims changed (someone else's address), the provider's signature kept.
    claims = json.loads(unb64url(payload))
    claims["email"] = "victim@idp.example.com"
    forged = b64url(json.dumps(claims).encode())
    assert_firebase_error(hearth.sign_in_with_id_token(f"{header}.{forged}.{signature}"), "INVALID_IDP_RESPONSE")

    # Unsigned ("alg": "none") with the same claims.
    none_header = b64url(json.dumps({"alg": "none", "typ": "JWT"}).encode())
    assert_firebase_error(hearth.sign_in_with_id_token(f"{none_header}.{payload}."), "INVALID_IDP_RESPONSE")

    # Not a JWT at all.
    assert_firebase_error(hearth.sign_in_with_id_token("not-a-token"), "INVALID_IDP_RESPONSE")
    assert_no_account_for(hearth, user, accounts_before)
    assert hearth.admin_lookup(email=["victim@idp.example.com"]) == []

    # The untouched token still works.
    assert hearth.sign_in_with_id_token(token).status_code == 200


def test_a_token_for_another_client_is_refused(hearth, provider):
    """``oidc.other`` has the same issuer as ``oidc.test`` but another client ID: a token the
    provider issued to oidc.test's client is not for it."""
    user = PROVIDER_USERS["audience"]
    token = provider_id_token(provider, user, nonce=None)
    assert jwt_claims(token)["aud"] == CLIENT_ID
    accounts_before = hearth.all_accounts()

    error = assert_firebase_error(
        hearth.sign_in_with_id_token(token, provider_id=OTHER_AUDIENCE_PROVIDER_ID), "INVALID_IDP_RESPONSE")
    assert "client" in error["message"], error
    assert hearth.all_accounts() == accounts_before
    assert hearth.accounts_with_identity(OTHER_AUDIENCE_PROVIDER_ID, subject_for(user.email)) == []
    assert hearth.admin_lookup(email=[user.email]) == []


def test_a_token_from_another_issuer_is_refused(hearth, provider, other_issuer):
    user = PROVIDER_USERS["issuer"]
    assert other_issuer.issuer != provider.issuer
    token = provider_id_token(other_issuer, user, nonce=None)
    claims = jwt_claims(token)
    assert (claims["iss"], claims["aud"]) == (other_issuer.issuer, CLIENT_ID)
    accounts_before = hearth.all_accounts()

    assert_firebase_error(hearth.sign_in_with_id_token(token), "INVALID_IDP_RESPONSE")
    assert_no_account_for(hearth, user, accounts_before)

    # Configured as a provider of its own (Firebase's v2 admin API), the same token signs in
    # there, as that provider's identity, not oidc.test's.
    created = hearth.http.post(
        f"{hearth.url}/identitytoolkit.googleapis.com/v2/projects/{PROJECT}/oauthIdpConfigs",
        params={"oauthIdpConfigId": "oidc.second"},
        json={"displayName": "Second", "issuer": other_issuer.issuer, "clientId": CLIENT_ID, "clientSecret": CLIENT_SECRET,
              "enabled": True},
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=TIMEOUT)
    assert created.status_code == 200, created.text
    response = hearth.sign_in_with_id_token(token, provider_id="oidc.second")
    assert response.status_code == 200, response.text
    assert (response.json()["providerId"], response.json()["isNewUser"]) == ("oidc.second", True)
    assert hearth.accounts_with_identity(PROVIDER_ID, subject_for(user.email)) == []
    assert len(hearth.accounts_with_identity("oidc.second", subject_for(user.email))) == 1

    # And a token of oidc.test's issuer is not one of oidc.second's.
    mine = provider_id_token(provider, PROVIDER_USERS["issuer"], nonce=None)
    assert_firebase_error(hearth.sign_in_with_id_token(mine, provider_id="oidc.second"), "INVALID_IDP_RESPONSE")


def test_post_body_without_a_token_is_refused(hearth):
    accounts_before = hearth.all_accounts()
    hearth.refused("signInWithIdp", {"postBody": f"providerId={PROVIDER_ID}", "requestUri": "http://localhost"},
                   "INVALID_CREDENTIAL_OR_PROVIDER_ID")
    hearth.refused("signInWithIdp", {"postBody": f"access_token=abc&providerId={PROVIDER_ID}",
                                     "requestUri": "http://localhost"}, "INVALID_CREDENTIAL_OR_PROVIDER_ID")
    assert hearth.all_accounts() == accounts_before
