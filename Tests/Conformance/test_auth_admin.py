"""firebase-admin's `auth` Admin API against `hearth serve --emulator`: importing users with
password hashes, session cookies, OIDC and SAML provider configs, phone numbers, `get_users`,
listing, disabling, email action links (and the emulator's oobCodes listing), and revocation.

Expected behaviour is Firebase's: firebase-admin's own requests and error mapping, the Auth
emulator's semantics and error codes (firebase-tools src/emulator/auth), and, for password hashes
and provider configs (which the emulator does not implement), the vectors and shapes that
firebase-admin's integration suites check against production.
"""
import base64
import datetime
import functools
import hashlib
import hmac
import json
import os
import random
import time
import uuid
from urllib import parse

import pytest
import requests

from harness import wait_past_second

PROJECT = "fake-project-id"
OWNER = {"Authorization": "Bearer owner"}
KEY = {"key": "fake-api-key"}
WRONG_PASSWORD = "not-the-password"

# Firebase's modified scrypt, with the published parameters of firebase/scrypt's README (the
# values firebase-admin's integration tests import into production and sign in with).
FIREBASE_SCRYPT_KEY = base64.b64decode(
    "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==")
FIREBASE_SCRYPT_SEPARATOR = base64.b64decode("Bw==")
FIREBASE_SCRYPT_ROUNDS = 8
FIREBASE_SCRYPT_MEM_COST = 14
FIREBASE_SCRYPT_PASSWORD = "password"
FIREBASE_SCRYPT_SALT = b"NaCl"
FIREBASE_SCRYPT_HASH = base64.b64decode(
    "V358E8LdWJXAO7muq0CufVpEOXaj8aFiC7T/rcaGieN04q/ZPJ08WhJEHGjj9lz/2TT+/86N5VjVoc5DdBhBiw==")

# A bcrypt hash of "bcrypt-secret" (cost 10), made with the `bcrypt` package (5.0.0) and checked
# with bcrypt.checkpw; kept as a constant so the suite needs no extra dependency.
BCRYPT_PASSWORD = "bcrypt-secret"
BCRYPT_HASH = b"$2b$10$.TRUyuuTrC3RNV1ICV2cJuI4VKDbOi.WnSclcSNKRs9iUTFGL6Dky"


# Helpers ---------------------------------------------------------------------------------------

def unique_email(label="user"):
    return f"{label}-{uuid.uuid4().hex[:12]}@example.com"


def unique_uid(label="uid"):
    return f"{label}-{uuid.uuid4().hex[:16]}"


_phones = random.SystemRandom()


def unique_phone():
    return "+1650" + "".join(str(_phones.randrange(10)) for _ in range(7))


def b64url_decode(part):
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def b64url_encode(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def jwt_parts(token):
    token = token.decode() if isinstance(token, bytes) else token
    header, payload, _ = token.split(".")
    return json.loads(b64url_decode(header)), json.loads(b64url_decode(payload))


def jwt_claims(token):
    return jwt_parts(token)[1]


def reencoded(token, **changes):
    """The token with changed claims and its old (now wrong) signature."""
    header, payload, signature = token.split(".")
    claims = json.loads(b64url_decode(payload))
    claims.update(changes)
    return f"{header}.{b64url_encode(json.dumps(claims).encode())}.{signature}"


def error_code(message):
    """Firebase's error code: the message up to any " : detail"."""
    return message.split(" : ")[0].split(":")[0].strip()


def assert_auth_error(response, code, status=400):
    """Firebase's error shape {"error": {"code", "message", "errors": [...]}}; the message is the
    code, possibly followed by " : detail"."""
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"].startswith("application/json")
    error = response.json()["error"]
    assert error["code"] == status, error
    assert error_code(error["message"]) == code, error
    return error


def link_params(link):
    return dict(parse.parse_qsl(parse.urlparse(link).query))


def wait_past(second):
    """Waits until the clock is past `second` (token times and validSince are whole seconds)."""
    wait_past_second(second)


def firebase_scrypt(password, salt, key, separator, rounds, mem_cost):
    """Firebase's modified scrypt: scrypt(password, salt + separator, N=2^mem_cost, r=rounds,
    p=1, 32 bytes) keys AES-256-CTR (zero IV), which encrypts the signer key."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    derived = hashlib.scrypt(
        password.encode(), salt=salt + separator, n=1 << mem_cost, r=rounds, p=1, dklen=32, maxmem=1 << 26)
    encryptor = Cipher(algorithms.AES(derived), modes.CTR(b"\0" * 16)).encryptor()
    return encryptor.update(key) + encryptor.finalize()


def self_signed_pem(common_name):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=365))
        .sign(key, hashes.SHA256()))
    return certificate.public_bytes(serialization.Encoding.PEM).decode()


class Rest:
    """The REST API as a Firebase client library (and an admin without the SDK) calls it."""

    def __init__(self, base):
        self.base = base
        self.v1 = f"{base}/identitytoolkit.googleapis.com/v1"
        self.admin_v1 = f"{self.v1}/projects/{PROJECT}"
        self.admin_v2 = f"{base}/identitytoolkit.googleapis.com/v2/projects/{PROJECT}"

    def call(self, endpoint, body, headers=None):
        return requests.post(f"{self.v1}/accounts:{endpoint}", params=KEY, json=body, headers=headers)

    def admin(self, path, body, method="post", params=None):
        return requests.request(method, f"{self.admin_v1}{path}", json=body, params=params, headers=OWNER)

    def sign_in(self, email, password):
        return self.call("signInWithPassword", {"email": email, "password": password, "returnSecureToken": True})

    def sign_in_ok(self, email, password):
        response = self.sign_in(email, password)
        assert response.status_code == 200, response.text
        return response.json()

    def refresh(self, refresh_token):
        return requests.post(
            f"{self.base}/securetoken.googleapis.com/v1/token", params=KEY,
            data={"grant_type": "refresh_token", "refresh_token": refresh_token})

    def new_user(self, label="user", password="secret-password"):
        email = unique_email(label)
        response = self.call("signUp", {"email": email, "password": password, "returnSecureToken": True})
        assert response.status_code == 200, response.text
        return email, password, response.json()

    def custom_token_sign_in(self, token):
        token = token.decode() if isinstance(token, bytes) else token
        response = self.call("signInWithCustomToken", {"token": token, "returnSecureToken": True})
        assert response.status_code == 200, response.text
        return response.json()

    def oob_codes(self):
        response = requests.get(f"{self.base}/emulator/v1/projects/{PROJECT}/oobCodes", headers=OWNER)
        assert response.status_code == 200, response.text
        return response.json()


@pytest.fixture(scope="module")
def rest(server):
    return Rest(server)


@pytest.fixture(scope="module")
def certificates():
    pytest.importorskip("cryptography")
    return [self_signed_pem("idp-one.example.com"), self_signed_pem("idp-two.example.com")]


# 1. import_users (accounts:batchCreate) ------------------------------------------------------------

def test_import_users_with_profile_fields(auth_app):
    from firebase_admin import auth

    uid, email, phone = unique_uid("imported"), unique_email("imported"), unique_phone()
    disabled_uid, disabled_email = unique_uid("imported-off"), unique_email("imported-off")
    raw_id = "google-" + uuid.uuid4().hex
    provider = auth.UserProvider(
        uid=raw_id, provider_id="google.com", email="ada.google@example.com", display_name="Ada G",
        photo_url="https://example.com/ada-google.png")
    records = [
        auth.ImportUserRecord(
            uid=uid, email=email, email_verified=True, display_name="Ada Imported", phone_number=phone,
            photo_url="https://example.com/ada.png", disabled=False,
            user_metadata=auth.UserMetadata(creation_timestamp=1_600_000_000_000, last_sign_in_timestamp=1_650_000_000_000),
            provider_data=[provider], custom_claims={"role": "admin", "level": 7}),
        auth.ImportUserRecord(uid=disabled_uid, email=disabled_email, disabled=True),
    ]
    result = auth.import_users(records, app=auth_app)
    assert (result.success_count, result.failure_count, result.errors) == (2, 0, [])

    user = auth.get_user(uid, app=auth_app)
    assert (user.uid, user.email, user.display_name, user.phone_number, user.photo_url) == (
        uid, email, "Ada Imported", phone, "https://example.com/ada.png")
    assert user.email_verified is True
    assert user.disabled is False
    assert user.custom_claims == {"role": "admin", "level": 7}
    assert user.user_metadata.creation_timestamp == 1_600_000_000_000
    assert user.user_metadata.last_sign_in_timestamp == 1_650_000_000_000
    # No password was imported, so there is no "password" provider; the phone number is one.
    providers = {info.provider_id: info for info in user.provider_data}
    assert set(providers) == {"google.com", "phone"}
    google = providers["google.com"]
    assert (google.uid, google.email, google.display_name, google.photo_url) == (
        raw_id, "ada.google@example.com", "Ada G", "https://example.com/ada-google.png")
    assert (providers["phone"].uid, providers["phone"].phone_number) == (phone, phone)

    assert auth.get_user_by_email(email, app=auth_app).uid == uid
    assert auth.get_user_by_phone_number(phone, app=auth_app).uid == uid
    found = auth.get_users([auth.ProviderIdentifier("google.com", raw_id)], app=auth_app)
    assert [found_user.uid for found_user in found.users] == [uid]

    off = auth.get_user(disabled_uid, app=auth_app)
    assert off.disabled is True
    assert off.email == disabled_email
    assert off.email_verified is False


HASH_CASES = ["scrypt", "standard_scrypt", "hmac_sha256", "sha256", "pbkdf2_sha256", "md5"]


@functools.lru_cache(maxsize=None)
def _hash_cases():
    """(name, UserImportHash, password hash, salt, password): the formulas and parameters that
    firebase-admin-node's integration suite imports into production and signs in with."""
    from firebase_admin import auth

    salt = b"NaCl"
    password = "imported-password"
    encoded = password.encode()
    return [
        ("scrypt", auth.UserImportHash.scrypt(
            key=FIREBASE_SCRYPT_KEY, rounds=FIREBASE_SCRYPT_ROUNDS, memory_cost=FIREBASE_SCRYPT_MEM_COST,
            salt_separator=FIREBASE_SCRYPT_SEPARATOR),
         FIREBASE_SCRYPT_HASH, FIREBASE_SCRYPT_SALT, FIREBASE_SCRYPT_PASSWORD),
        # N (cpuMemCost) is given as is, not as a power of two.
        ("standard_scrypt", auth.UserImportHash.standard_scrypt(
            memory_cost=1024, parallelization=16, block_size=8, derived_key_length=64),
         hashlib.scrypt(encoded, salt=salt, n=1024, r=8, p=16, dklen=64), salt, password),
        # HMAC over password + salt (the only order the SDKs can ask for).
        ("hmac_sha256", auth.UserImportHash.hmac_sha256(key=b"secret"),
         hmac.new(b"secret", encoded + salt, hashlib.sha256).digest(), salt, password),
        # Plain digests over salt + password.
        ("sha256", auth.UserImportHash.sha256(rounds=1), hashlib.sha256(salt + encoded).digest(), salt, password),
        # PBKDF2 with the stored hash's length (64 bytes here) as the derived-key length.
        ("pbkdf2_sha256", auth.UserImportHash.pbkdf2_sha256(rounds=100000),
         hashlib.pbkdf2_hmac("sha256", encoded, salt, 100000, dklen=64), salt, password),
        # MD5 with rounds=0: the stored hash is the digest's lowercase hex text.
        ("md5", auth.UserImportHash.md5(rounds=0), hashlib.md5(salt + encoded).hexdigest().encode(), salt, password),
    ]


@pytest.mark.parametrize("case", HASH_CASES)
def test_import_users_with_password_hash(auth_app, rest, case):
    pytest.importorskip("cryptography")
    from firebase_admin import auth

    name, hash_alg, password_hash, salt, password = _hash_cases()[HASH_CASES.index(case)]
    assert name == case
    uid, email = unique_uid(f"hash-{name}"), unique_email(f"hash-{name.replace('_', '-')}")
    record = auth.ImportUserRecord(
        uid=uid, email=email, password_hash=password_hash, password_salt=salt, custom_claims={"imported_with": name})
    result = auth.import_users([record], hash_alg=hash_alg, app=auth_app)
    assert (result.success_count, result.failure_count, result.errors) == (1, 0, [])
    user = auth.get_user(uid, app=auth_app)
    assert user.email == email
    assert [info.provider_id for info in user.provider_data] == ["password"]

    assert_auth_error(rest.sign_in(email, WRONG_PASSWORD), "INVALID_LOGIN_CREDENTIALS")
    signed_in = rest.sign_in_ok(email, password)
    assert signed_in["localId"] == uid
    assert signed_in["email"] == email
    claims = jwt_claims(signed_in["idToken"])
    assert claims["sub"] == uid
    assert claims["imported_with"] == name
    assert claims["firebase"]["sign_in_provider"] == "password"
    # And again: a server that re-hashes a verified imported password must still know it.
    assert rest.sign_in_ok(email, password)["localId"] == uid
    assert_auth_error(rest.sign_in(email, WRONG_PASSWORD), "INVALID_LOGIN_CREDENTIALS")


def test_import_users_with_bcrypt_is_refused_clearly(auth_app, rest):
    """Hearth has no bcrypt (none among its dependencies, and it writes no crypto by hand): a
    BCRYPT import is refused as a whole with a clear error, and no account is made
    (docs/compatibility.md)."""
    from firebase_admin import auth, exceptions

    uid, email = unique_uid("hash-bcrypt"), unique_email("hash-bcrypt")
    record = auth.ImportUserRecord(uid=uid, email=email, password_hash=BCRYPT_HASH)
    with pytest.raises(exceptions.InvalidArgumentError) as refused:
        auth.import_users([record], hash_alg=auth.UserImportHash.bcrypt(), app=auth_app)
    assert "UNSUPPORTED_HASH_ALGORITHM" in str(refused.value)
    with pytest.raises(auth.UserNotFoundError):
        auth.get_user(uid, app=auth_app)


def test_import_users_firebase_scrypt_with_other_parameters(auth_app, rest):
    """The modified scrypt with another key, separator, rounds and memory cost, computed here."""
    pytest.importorskip("cryptography")
    from firebase_admin import auth

    key, separator, rounds, mem_cost = hashlib.sha512(b"hearth-signer-key").digest(), b"\x01\x02", 4, 12
    users = [(unique_uid("scrypt"), unique_email("scrypt"), f"scrypt-password-{i}", os.urandom(12)) for i in range(2)]
    records = [
        auth.ImportUserRecord(
            uid=uid, email=email, password_salt=salt,
            password_hash=firebase_scrypt(password, salt, key, separator, rounds, mem_cost))
        for uid, email, password, salt in users
    ]
    # A hash made without the separator does not match the password.
    no_separator_uid, no_separator_email = unique_uid("scrypt-nosep"), unique_email("scrypt-nosep")
    records.append(auth.ImportUserRecord(
        uid=no_separator_uid, email=no_separator_email, password_salt=b"salt-salt",
        password_hash=firebase_scrypt("nosep-password", b"salt-salt", key, b"", rounds, mem_cost)))
    hash_alg = auth.UserImportHash.scrypt(key=key, rounds=rounds, memory_cost=mem_cost, salt_separator=separator)
    result = auth.import_users(records, hash_alg=hash_alg, app=auth_app)
    assert (result.success_count, result.failure_count) == (3, 0)

    for uid, email, password, _ in users:
        assert rest.sign_in_ok(email, password)["localId"] == uid
    assert_auth_error(rest.sign_in(no_separator_email, "nosep-password"), "INVALID_LOGIN_CREDENTIALS")


def test_import_users_reports_errors_per_user(auth_app):
    from firebase_admin import auth

    good = [unique_uid("batch-good"), unique_uid("batch-good")]
    bad = unique_uid("batch-bad")
    bad_record = auth.ImportUserRecord(uid=bad, email=unique_email("batch-bad"))
    # The SDK checks emails itself; slip a malformed one past it so the server sees it.
    bad_record._email = "not-an-email"
    records = [auth.ImportUserRecord(uid=good[0]), bad_record, auth.ImportUserRecord(uid=good[1], display_name="Fine")]
    result = auth.import_users(records, app=auth_app)
    assert (result.success_count, result.failure_count) == (2, 1)
    assert [(error.index, error.reason) for error in result.errors] == [(1, "email is invalid")]
    assert auth.get_user(good[0], app=auth_app).uid == good[0]
    assert auth.get_user(good[1], app=auth_app).display_name == "Fine"
    with pytest.raises(auth.UserNotFoundError):
        auth.get_user(bad, app=auth_app)


def test_import_users_per_user_errors_over_rest(auth_app, rest):
    from firebase_admin import auth

    ids = [unique_uid("rest-import") for _ in range(7)]
    response = rest.admin("/accounts:batchCreate", {"users": [
        {"email": unique_email("no-local-id")},
        {"localId": ids[1]},
        {"localId": ids[2], "email": "not#an$email"},
        {"localId": ids[3], "phoneNumber": "not#a$phone%number"},
        {"localId": ids[4], "customAttributes": "not#a$json%object"},
        {"localId": ids[5], "customAttributes": '{"sub": "123"}'},
        {"localId": ids[6], "displayName": "Also fine"},
    ]})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["error"] == [
        {"index": 0, "message": "localId is missing"},
        {"index": 2, "message": "email is invalid"},
        {"index": 3, "message": "phone number format is invalid"},
        {"index": 4, "message": "Invalid custom claims provided."},
        {"index": 5, "message": "Custom claims provided include a reserved claim."},
    ]
    assert auth.get_user(ids[1], app=auth_app).uid == ids[1]
    assert auth.get_user(ids[6], app=auth_app).display_name == "Also fine"
    for uid in ids[2:6]:
        with pytest.raises(auth.UserNotFoundError):
            auth.get_user(uid, app=auth_app)


def test_import_users_duplicate_uid_in_batch_refuses_the_batch(auth_app):
    from firebase_admin import auth

    uid, other = unique_uid("dup-import"), unique_uid("dup-import-other")
    records = [auth.ImportUserRecord(uid=other), auth.ImportUserRecord(uid=uid), auth.ImportUserRecord(uid=uid)]
    with pytest.raises(auth.UidAlreadyExistsError) as excinfo:
        auth.import_users(records, app=auth_app)
    assert "DUPLICATE_LOCAL_ID" in str(excinfo.value)
    for missing in (uid, other):
        with pytest.raises(auth.UserNotFoundError):
            auth.get_user(missing, app=auth_app)


def test_import_users_refusals_over_rest(rest):
    assert_auth_error(rest.admin("/accounts:batchCreate", {"users": []}), "MISSING_USER_ACCOUNT")
    assert_auth_error(rest.admin("/accounts:batchCreate", {}), "MISSING_USER_ACCOUNT")
    too_many_rounds = {
        "hashAlgorithm": "SHA256", "rounds": 9000,
        "users": [{"localId": unique_uid("rounds"), "email": unique_email("rounds"),
                   "passwordHash": b64url_encode(b"x" * 32), "salt": b64url_encode(b"salt")}],
    }
    assert_auth_error(rest.admin("/accounts:batchCreate", too_many_rounds), "INVALID_HASH_ROUNDS")
    # Only an admin may import.
    refused = requests.post(
        f"{rest.admin_v1}/accounts:batchCreate", params=KEY, json={"users": [{"localId": unique_uid("intruder")}]})
    assert refused.status_code in (401, 403), refused.text


# 2. Session cookies ---------------------------------------------------------------------------------

def test_session_cookie_claims_and_verification(auth_app, rest):
    from firebase_admin import auth

    uid = unique_uid("cookie")
    signed_in = rest.custom_token_sign_in(
        auth.create_custom_token(uid, {"premium": True, "plan": "silver"}, app=auth_app))
    id_token = signed_in["idToken"]
    cookie = auth.create_session_cookie(id_token, expires_in=datetime.timedelta(minutes=10), app=auth_app)
    assert isinstance(cookie, str) and cookie.count(".") == 2

    claims = jwt_claims(cookie)
    id_claims = jwt_claims(id_token)
    assert claims["iss"] == f"https://session.firebase.google.com/{PROJECT}"
    assert claims["aud"] == PROJECT
    assert claims["sub"] == uid
    assert claims["user_id"] == uid
    assert claims["exp"] - claims["iat"] == 600
    assert abs(claims["iat"] - time.time()) < 60
    assert claims["auth_time"] == id_claims["auth_time"]
    assert claims["firebase"]["sign_in_provider"] == "custom"
    assert claims["premium"] is True
    assert claims["plan"] == "silver"

    verified = auth.verify_session_cookie(cookie, app=auth_app)
    assert verified["uid"] == uid
    assert verified["premium"] is True
    assert auth.verify_session_cookie(cookie, check_revoked=True, app=auth_app)["uid"] == uid
    # A cookie is not an ID token, nor the other way round.
    with pytest.raises(auth.InvalidIdTokenError):
        auth.verify_id_token(cookie, app=auth_app)
    with pytest.raises(auth.InvalidSessionCookieError):
        auth.verify_session_cookie(id_token, app=auth_app)

    # The longest cookie Firebase makes: two weeks.
    longest = auth.create_session_cookie(id_token, expires_in=datetime.timedelta(days=14), app=auth_app)
    longest_claims = jwt_claims(longest)
    assert longest_claims["exp"] - longest_claims["iat"] == 14 * 24 * 3600


def test_session_cookie_revoked(auth_app, rest):
    from firebase_admin import auth, exceptions

    email, password, body = rest.new_user("cookie-revoked")
    uid = body["localId"]
    cookie = auth.create_session_cookie(body["idToken"], expires_in=datetime.timedelta(minutes=10), app=auth_app)
    assert auth.verify_session_cookie(cookie, check_revoked=True, app=auth_app)["uid"] == uid

    # validSince is whole seconds: revoke in a later second than the cookie's iat.
    wait_past(jwt_claims(cookie)["iat"])
    auth.revoke_refresh_tokens(uid, app=auth_app)
    assert auth.verify_session_cookie(cookie, app=auth_app)["uid"] == uid  # without the check it still decodes
    with pytest.raises(auth.RevokedSessionCookieError):
        auth.verify_session_cookie(cookie, check_revoked=True, app=auth_app)
    # The ID token the cookie came from is revoked too, so it makes no new cookie.
    with pytest.raises(exceptions.FirebaseError) as excinfo:
        auth.create_session_cookie(body["idToken"], expires_in=datetime.timedelta(minutes=10), app=auth_app)
    assert "TOKEN_EXPIRED" in str(excinfo.value)

    # Signing in again gives a cookie that passes.
    fresh = rest.sign_in_ok(email, password)["idToken"]
    cookie = auth.create_session_cookie(fresh, expires_in=datetime.timedelta(minutes=10), app=auth_app)
    assert auth.verify_session_cookie(cookie, check_revoked=True, app=auth_app)["uid"] == uid


def test_session_cookie_of_a_disabled_user(auth_app, rest):
    from firebase_admin import auth, exceptions

    _, _, body = rest.new_user("cookie-disabled")
    uid = body["localId"]
    cookie = auth.create_session_cookie(body["idToken"], expires_in=datetime.timedelta(minutes=10), app=auth_app)
    auth.update_user(uid, disabled=True, app=auth_app)
    assert auth.verify_session_cookie(cookie, app=auth_app)["sub"] == uid
    with pytest.raises(auth.UserDisabledError):
        auth.verify_session_cookie(cookie, check_revoked=True, app=auth_app)
    with pytest.raises(exceptions.FirebaseError) as excinfo:
        auth.create_session_cookie(body["idToken"], expires_in=datetime.timedelta(minutes=10), app=auth_app)
    assert "USER_DISABLED" in str(excinfo.value)


def test_session_cookie_refusals(auth_app, rest):
    from firebase_admin import auth

    with pytest.raises(auth.InvalidIdTokenError):
        auth.create_session_cookie("not.a.token", expires_in=datetime.timedelta(minutes=10), app=auth_app)
    # A token whose claims were changed after signing is not an ID token.
    _, _, body = rest.new_user("cookie-forged")
    _, _, victim = rest.new_user("cookie-victim")
    forged = reencoded(body["idToken"], sub=victim["localId"], user_id=victim["localId"])
    with pytest.raises(auth.InvalidIdTokenError):
        auth.create_session_cookie(forged, expires_in=datetime.timedelta(minutes=10), app=auth_app)

    url = f"{rest.admin_v1}:createSessionCookie"
    assert_auth_error(requests.post(url, json={"validDuration": "600"}, headers=OWNER), "MISSING_ID_TOKEN")
    for duration in ("1", "299", str(14 * 24 * 3600 + 1), "999999999999"):
        assert_auth_error(
            requests.post(url, json={"idToken": body["idToken"], "validDuration": duration}, headers=OWNER),
            "INVALID_DURATION")
    # validDuration as a string works as well as a number.
    made = requests.post(url, json={"idToken": body["idToken"], "validDuration": "300"}, headers=OWNER)
    assert made.status_code == 200, made.text
    claims = jwt_claims(made.json()["sessionCookie"])
    assert claims["exp"] - claims["iat"] == 300


# 3. Provider configs ---------------------------------------------------------------------------------

def _oidc_id():
    return f"oidc.hearth-{uuid.uuid4().hex[:10]}"


def _saml_id():
    return f"saml.hearth-{uuid.uuid4().hex[:10]}"


def test_oidc_provider_config_lifecycle(auth_app):
    from firebase_admin import auth

    provider_id = _oidc_id()
    created = auth.create_oidc_provider_config(
        provider_id, client_id="OIDC_CLIENT_ID", issuer="https://oidc.example.com/issuer",
        display_name="OIDC_DISPLAY_NAME", enabled=True, id_token_response_type=True, code_response_type=False,
        app=auth_app)
    assert isinstance(created, auth.OIDCProviderConfig)
    assert created.provider_id == provider_id
    assert created._data["name"] == f"projects/{PROJECT}/oauthIdpConfigs/{provider_id}"
    assert (created.client_id, created.issuer, created.display_name) == (
        "OIDC_CLIENT_ID", "https://oidc.example.com/issuer", "OIDC_DISPLAY_NAME")
    assert created.enabled is True
    assert created.id_token_response_type is True
    assert created.code_response_type is False
    assert created.client_secret is None

    fetched = auth.get_oidc_provider_config(provider_id, app=auth_app)
    assert fetched._data == created._data

    updated = auth.update_oidc_provider_config(
        provider_id, client_id="UPDATED_CLIENT_ID", issuer="https://oidc.example.com/updated",
        display_name="UPDATED_NAME", enabled=False, client_secret="CLIENT_SECRET",
        id_token_response_type=False, code_response_type=True, app=auth_app)
    assert (updated.client_id, updated.issuer, updated.display_name) == (
        "UPDATED_CLIENT_ID", "https://oidc.example.com/updated", "UPDATED_NAME")
    assert updated.enabled is False
    assert updated.id_token_response_type is False
    assert updated.code_response_type is True
    assert updated.client_secret == "CLIENT_SECRET"
    assert auth.get_oidc_provider_config(provider_id, app=auth_app).client_secret == "CLIENT_SECRET"

    # Only the fields in the update mask change; DELETE_ATTRIBUTE clears the display name.
    cleared = auth.update_oidc_provider_config(provider_id, display_name=auth.DELETE_ATTRIBUTE, app=auth_app)
    assert cleared.display_name is None
    assert (cleared.client_id, cleared.issuer, cleared.client_secret) == (
        "UPDATED_CLIENT_ID", "https://oidc.example.com/updated", "CLIENT_SECRET")
    assert cleared.code_response_type is True
    enabled = auth.update_oidc_provider_config(provider_id, enabled=True, app=auth_app)
    assert enabled.enabled is True
    assert enabled.client_id == "UPDATED_CLIENT_ID"
    assert enabled.display_name is None

    auth.delete_oidc_provider_config(provider_id, app=auth_app)
    with pytest.raises(auth.ConfigurationNotFoundError):
        auth.get_oidc_provider_config(provider_id, app=auth_app)
    with pytest.raises(auth.ConfigurationNotFoundError):
        auth.delete_oidc_provider_config(provider_id, app=auth_app)
    with pytest.raises(auth.ConfigurationNotFoundError):
        auth.update_oidc_provider_config(provider_id, enabled=True, app=auth_app)


def test_oidc_provider_config_defaults(auth_app):
    from firebase_admin import auth

    provider_id = _oidc_id()
    created = auth.create_oidc_provider_config(
        provider_id, client_id="client", issuer="https://issuer.example.com", app=auth_app)
    # With no response type named, the ID-token flow is the one enabled.
    assert created.id_token_response_type is True
    assert created.code_response_type is False
    assert created.display_name is None
    assert created.client_secret is None
    auth.delete_oidc_provider_config(provider_id, app=auth_app)


def test_saml_provider_config_lifecycle(auth_app, certificates):
    from firebase_admin import auth

    provider_id = _saml_id()
    created = auth.create_saml_provider_config(
        provider_id, idp_entity_id="IDP_ENTITY_ID", sso_url="https://idp.example.com/login",
        x509_certificates=[certificates[0]], rp_entity_id="RP_ENTITY_ID",
        callback_url=f"https://{PROJECT}.firebaseapp.com/__/auth/handler", display_name="SAML_DISPLAY_NAME",
        enabled=True, app=auth_app)
    assert isinstance(created, auth.SAMLProviderConfig)
    assert created.provider_id == provider_id
    assert created._data["name"] == f"projects/{PROJECT}/inboundSamlConfigs/{provider_id}"
    assert (created.idp_entity_id, created.sso_url, created.rp_entity_id, created.callback_url) == (
        "IDP_ENTITY_ID", "https://idp.example.com/login", "RP_ENTITY_ID",
        f"https://{PROJECT}.firebaseapp.com/__/auth/handler")
    assert created.x509_certificates == [certificates[0]]
    assert created.display_name == "SAML_DISPLAY_NAME"
    assert created.enabled is True

    fetched = auth.get_saml_provider_config(provider_id, app=auth_app)
    assert fetched._data == created._data

    updated = auth.update_saml_provider_config(
        provider_id, idp_entity_id="UPDATED_IDP", sso_url="https://idp.example.com/updated",
        x509_certificates=[certificates[1], certificates[0]], rp_entity_id="UPDATED_RP",
        callback_url="https://updated.example.com/__/auth/handler", display_name="UPDATED_SAML", enabled=False,
        app=auth_app)
    assert (updated.idp_entity_id, updated.sso_url, updated.rp_entity_id, updated.callback_url) == (
        "UPDATED_IDP", "https://idp.example.com/updated", "UPDATED_RP", "https://updated.example.com/__/auth/handler")
    assert updated.x509_certificates == [certificates[1], certificates[0]]
    assert (updated.display_name, updated.enabled) == ("UPDATED_SAML", False)

    # A masked update of one nested field leaves its siblings alone.
    partial = auth.update_saml_provider_config(
        provider_id, x509_certificates=[certificates[0]], display_name=auth.DELETE_ATTRIBUTE, app=auth_app)
    assert partial.x509_certificates == [certificates[0]]
    assert (partial.idp_entity_id, partial.sso_url) == ("UPDATED_IDP", "https://idp.example.com/updated")
    assert (partial.rp_entity_id, partial.callback_url) == ("UPDATED_RP", "https://updated.example.com/__/auth/handler")
    assert partial.display_name is None
    assert auth.get_saml_provider_config(provider_id, app=auth_app)._data == partial._data

    auth.delete_saml_provider_config(provider_id, app=auth_app)
    with pytest.raises(auth.ConfigurationNotFoundError):
        auth.get_saml_provider_config(provider_id, app=auth_app)
    with pytest.raises(auth.ConfigurationNotFoundError):
        auth.delete_saml_provider_config(provider_id, app=auth_app)


def _walk(first_page, max_results):
    pages, page = [], first_page
    while page:
        configs = page.provider_configs
        assert len(configs) <= max_results
        pages.append([config.provider_id for config in configs])
        if page.has_next_page:
            assert page.next_page_token
        page = page.get_next_page()
    return pages


def test_provider_config_listing(auth_app, certificates):
    from firebase_admin import auth

    oidc_ids = sorted(_oidc_id() for _ in range(3))
    saml_ids = sorted(_saml_id() for _ in range(3))
    for provider_id in oidc_ids:
        auth.create_oidc_provider_config(
            provider_id, client_id=f"client-{provider_id}", issuer="https://issuer.example.com", app=auth_app)
    for provider_id in saml_ids:
        auth.create_saml_provider_config(
            provider_id, idp_entity_id=f"idp-{provider_id}", sso_url="https://idp.example.com/sso",
            x509_certificates=[certificates[0]], rp_entity_id="rp", callback_url="https://rp.example.com/cb",
            app=auth_app)
    try:
        pages = _walk(auth.list_oidc_provider_configs(max_results=2, app=auth_app), 2)
        listed = [provider_id for page in pages for provider_id in page]
        assert len(listed) == len(set(listed))
        assert [provider_id for provider_id in listed if provider_id in oidc_ids] == oidc_ids
        assert len(pages) >= 2
        everything = list(auth.list_oidc_provider_configs(max_results=2, app=auth_app).iterate_all())
        assert [config.provider_id for config in everything] == listed
        by_id = {config.provider_id: config for config in everything}
        assert all(isinstance(config, auth.OIDCProviderConfig) for config in everything)
        assert by_id[oidc_ids[0]].client_id == f"client-{oidc_ids[0]}"
        assert by_id[oidc_ids[0]].issuer == "https://issuer.example.com"
        assert not any(provider_id.startswith("saml.") for provider_id in listed)

        pages = _walk(auth.list_saml_provider_configs(max_results=2, app=auth_app), 2)
        listed = [provider_id for page in pages for provider_id in page]
        assert len(listed) == len(set(listed))
        assert [provider_id for provider_id in listed if provider_id in saml_ids] == saml_ids
        everything = list(auth.list_saml_provider_configs(max_results=2, app=auth_app).iterate_all())
        assert [config.provider_id for config in everything] == listed
        by_id = {config.provider_id: config for config in everything}
        assert by_id[saml_ids[1]].idp_entity_id == f"idp-{saml_ids[1]}"
        assert by_id[saml_ids[1]].x509_certificates == [certificates[0]]
        assert not any(provider_id.startswith("oidc.") for provider_id in listed)
    finally:
        for provider_id in oidc_ids:
            auth.delete_oidc_provider_config(provider_id, app=auth_app)
        for provider_id in saml_ids:
            auth.delete_saml_provider_config(provider_id, app=auth_app)
    remaining = [config.provider_id for config in auth.list_oidc_provider_configs(app=auth_app).iterate_all()]
    assert not set(oidc_ids) & set(remaining)


def test_provider_config_ids_are_checked_by_the_sdk(auth_app):
    from firebase_admin import auth

    with pytest.raises(ValueError):
        auth.create_oidc_provider_config("saml.wrong", client_id="c", issuer="https://i.example.com", app=auth_app)
    with pytest.raises(ValueError):
        auth.get_saml_provider_config("oidc.wrong", app=auth_app)
    with pytest.raises(ValueError):
        auth.get_oidc_provider_config("google.com", app=auth_app)


def test_provider_config_refusals(auth_app, rest, certificates):
    from firebase_admin import auth, exceptions

    oidc = f"{rest.admin_v2}/oauthIdpConfigs"
    saml = f"{rest.admin_v2}/inboundSamlConfigs"
    assert_auth_error(
        requests.post(oidc, params={"oauthIdpConfigId": _oidc_id()}, json={"clientId": "c"}, headers=OWNER),
        "MISSING_ISSUER")
    assert_auth_error(
        requests.post(oidc, params={"oauthIdpConfigId": _oidc_id()}, json={"issuer": "https://i.example.com"},
                      headers=OWNER),
        "MISSING_OAUTH_CLIENT_ID")
    assert_auth_error(
        requests.post(saml, params={"inboundSamlConfigId": _saml_id()}, headers=OWNER, json={
            "idpConfig": {"idpEntityId": "idp", "ssoUrl": "https://idp.example.com/sso",
                          "idpCertificates": [{"x509Certificate": certificates[0]}]}}),
        "MISSING_SAML_RELYING_PARTY_CONFIG")
    for response in (
        requests.post(oidc, json={"clientId": "c", "issuer": "https://i.example.com"}, headers=OWNER),
        requests.post(oidc, params={"oauthIdpConfigId": "bad.prefix"},
                      json={"clientId": "c", "issuer": "https://i.example.com"}, headers=OWNER),
    ):
        assert response.status_code == 400, response.text
        assert error_code(response.json()["error"]["message"]) in {
            "MISSING_CONFIG_ID", "MISSING_PROVIDER_ID", "INVALID_CONFIG_ID", "INVALID_PROVIDER_ID"}, response.text
    # Provider configs are admin-only.
    assert requests.get(oidc).status_code in (401, 403)
    assert requests.post(oidc, params={"oauthIdpConfigId": _oidc_id(), **KEY},
                         json={"clientId": "c", "issuer": "https://i.example.com"}).status_code in (401, 403)

    provider_id = _oidc_id()
    auth.create_oidc_provider_config(provider_id, client_id="c", issuer="https://i.example.com", app=auth_app)
    try:
        with pytest.raises(exceptions.FirebaseError) as excinfo:
            auth.create_oidc_provider_config(provider_id, client_id="c2", issuer="https://i.example.com", app=auth_app)
        assert "CONFIGURATION_EXISTS" in str(excinfo.value)
        assert auth.get_oidc_provider_config(provider_id, app=auth_app).client_id == "c"
    finally:
        auth.delete_oidc_provider_config(provider_id, app=auth_app)
    with pytest.raises(auth.ConfigurationNotFoundError):
        auth.get_saml_provider_config(_saml_id(), app=auth_app)


# 4. Phone numbers -------------------------------------------------------------------------------------

def test_phone_number_create_lookup_and_remove(auth_app):
    from firebase_admin import auth

    phone = unique_phone()
    user = auth.create_user(phone_number=phone, app=auth_app)
    assert user.phone_number == phone
    assert [(info.provider_id, info.uid, info.phone_number) for info in user.provider_data] == [("phone", phone, phone)]
    assert auth.get_user_by_phone_number(phone, app=auth_app).uid == user.uid

    # A changed number frees the old one.
    new_phone = unique_phone()
    changed = auth.update_user(user.uid, phone_number=new_phone, app=auth_app)
    assert changed.phone_number == new_phone
    assert auth.get_user_by_phone_number(new_phone, app=auth_app).uid == user.uid
    with pytest.raises(auth.UserNotFoundError):
        auth.get_user_by_phone_number(phone, app=auth_app)

    # DELETE_ATTRIBUTE sends deleteProvider: ["phone"].
    removed = auth.update_user(user.uid, phone_number=auth.DELETE_ATTRIBUTE, app=auth_app)
    assert removed.phone_number is None
    assert removed.provider_data == []
    with pytest.raises(auth.UserNotFoundError):
        auth.get_user_by_phone_number(new_phone, app=auth_app)
    assert auth.create_user(phone_number=new_phone, app=auth_app).phone_number == new_phone

    # With an email and password as well, both providers are listed.
    both = auth.create_user(
        email=unique_email("phone-and-password"), password="secret-password", phone_number=unique_phone(),
        app=auth_app)
    assert sorted(info.provider_id for info in both.provider_data) == ["password", "phone"]


def test_phone_number_duplicates(auth_app):
    from firebase_admin import auth

    phone = unique_phone()
    owner = auth.create_user(phone_number=phone, app=auth_app)
    with pytest.raises(auth.PhoneNumberAlreadyExistsError):
        auth.create_user(phone_number=phone, app=auth_app)
    other = auth.create_user(email=unique_email("phone-other"), app=auth_app)
    with pytest.raises(auth.PhoneNumberAlreadyExistsError):
        auth.update_user(other.uid, phone_number=phone, app=auth_app)
    assert auth.get_user(other.uid, app=auth_app).phone_number is None
    assert auth.get_user_by_phone_number(phone, app=auth_app).uid == owner.uid
    # Setting a user's own number again is no conflict.
    assert auth.update_user(owner.uid, phone_number=phone, app=auth_app).phone_number == phone


def test_invalid_phone_number_over_rest(auth_app, rest):
    from firebase_admin import auth

    assert_auth_error(rest.admin("/accounts", {"phoneNumber": "5555550100"}), "INVALID_PHONE_NUMBER")
    uid = auth.create_user(email=unique_email("bad-phone"), app=auth_app).uid
    assert_auth_error(rest.admin("/accounts:update", {"localId": uid, "phoneNumber": "12345"}), "INVALID_PHONE_NUMBER")
    assert auth.get_user(uid, app=auth_app).phone_number is None
    # The SDK refuses such numbers before sending them.
    with pytest.raises(ValueError):
        auth.create_user(phone_number="5555550100", app=auth_app)


# 5. get_users ------------------------------------------------------------------------------------------

def test_get_users_by_every_identifier(auth_app):
    from firebase_admin import auth

    by_uid = auth.create_user(uid=unique_uid("get-users"), email=unique_email("get-users-a"), app=auth_app)
    by_email = auth.create_user(email=unique_email("get-users-b"), app=auth_app)
    by_phone = auth.create_user(phone_number=unique_phone(), app=auth_app)
    raw_id = "github-" + uuid.uuid4().hex
    provider_uid = unique_uid("get-users-provider")
    imported = auth.import_users([auth.ImportUserRecord(
        uid=provider_uid, provider_data=[auth.UserProvider(uid=raw_id, provider_id="github.com")])], app=auth_app)
    assert imported.success_count == 1

    unknown = [
        auth.UidIdentifier(unique_uid("nobody")),
        auth.EmailIdentifier(unique_email("nobody")),
        auth.PhoneIdentifier(unique_phone()),
        auth.ProviderIdentifier("github.com", "no-such-raw-id"),
    ]
    identifiers = [
        auth.UidIdentifier(by_uid.uid),
        auth.EmailIdentifier(by_email.email),
        auth.PhoneIdentifier(by_phone.phone_number),
        auth.ProviderIdentifier("github.com", raw_id),
        # The same users again, by other or the same identifiers.
        auth.UidIdentifier(by_uid.uid),
        auth.EmailIdentifier(by_uid.email),
        auth.UidIdentifier(by_phone.uid),
    ] + unknown
    result = auth.get_users(identifiers, app=auth_app)
    uids = [user.uid for user in result.users]
    assert sorted(uids) == sorted([by_uid.uid, by_email.uid, by_phone.uid, provider_uid])
    assert result.not_found == unknown
    found = {user.uid: user for user in result.users}
    assert found[by_phone.uid].phone_number == by_phone.phone_number
    assert [(info.provider_id, info.uid) for info in found[provider_uid].provider_data] == [("github.com", raw_id)]

    nothing = auth.get_users(unknown, app=auth_app)
    assert nothing.users == []
    assert nothing.not_found == unknown


# 6. list_users paging -----------------------------------------------------------------------------------

def test_list_users_pages_in_uid_order(auth_app):
    from firebase_admin import auth

    marker = f"listed-{uuid.uuid4().hex[:10]}"
    uids = [f"{marker}-{index:02d}" for index in range(7)]
    for uid in reversed(uids):  # made in the reverse of uid order
        auth.create_user(uid=uid, email=f"{uid}@example.com", app=auth_app)

    pages, tokens = [], []
    page = auth.list_users(max_results=3, app=auth_app)
    while page:
        assert all(isinstance(user, auth.ExportedUserRecord) for user in page.users)
        pages.append([user.uid for user in page.users])
        tokens.append(page.next_page_token)
        page = page.get_next_page()
    assert all(len(uids_on_page) == 3 for uids_on_page in pages[:-1])
    assert len(pages[-1]) <= 3
    assert tokens[-1] == ""
    assert all(tokens[:-1])
    listed = [uid for uids_on_page in pages for uid in uids_on_page]
    assert len(listed) == len(set(listed))  # every user once
    assert listed == sorted(listed)  # in uid order
    assert [uid for uid in listed if uid.startswith(marker)] == uids
    mine = {user.uid: user for user in auth.list_users(app=auth_app).iterate_all() if user.uid.startswith(marker)}
    assert mine[uids[3]].email == f"{uids[3]}@example.com"

    everyone = [user.uid for user in auth.list_users(max_results=3, app=auth_app).iterate_all()]
    assert everyone == listed
    # A page token names the same page each time it is used.
    for _ in range(2):
        again = auth.list_users(page_token=tokens[0], max_results=3, app=auth_app)
        assert [user.uid for user in again.users] == pages[1]
        assert again.next_page_token == tokens[1]


# 7. Disabling ---------------------------------------------------------------------------------------------

def test_disabling_and_enabling_again(auth_app, rest):
    from firebase_admin import auth

    email, password, body = rest.new_user("disabled")
    uid = body["localId"]
    assert auth.update_user(uid, disabled=True, app=auth_app).disabled is True
    assert_auth_error(rest.sign_in(email, password), "USER_DISABLED")
    assert_auth_error(rest.refresh(body["refreshToken"]), "USER_DISABLED")
    assert_auth_error(rest.call("lookup", {"idToken": body["idToken"]}), "USER_DISABLED")
    with pytest.raises(auth.UserDisabledError):
        auth.verify_id_token(body["idToken"], check_revoked=True, app=auth_app)
    assert auth.verify_id_token(body["idToken"], app=auth_app)["uid"] == uid

    assert auth.update_user(uid, disabled=False, app=auth_app).disabled is False
    signed_in = rest.sign_in_ok(email, password)
    assert signed_in["localId"] == uid
    assert auth.get_user(uid, app=auth_app).user_metadata.last_refresh_timestamp is None
    before = time.time() * 1000
    refreshed = rest.refresh(signed_in["refreshToken"])
    assert refreshed.status_code == 200, refreshed.text
    assert auth.verify_id_token(signed_in["idToken"], check_revoked=True, app=auth_app)["uid"] == uid
    # The refresh is the account's last use, as Firebase's lastRefreshAt (the SDK parses it).
    refreshed_at = auth.get_user(uid, app=auth_app).user_metadata.last_refresh_timestamp
    assert refreshed_at is not None and before - 1000 <= refreshed_at <= time.time() * 1000 + 1000


# 8. Email action links --------------------------------------------------------------------------------------

def test_password_reset_link(auth_app, rest):
    from firebase_admin import auth

    email, password, body = rest.new_user("reset")
    uid = body["localId"]
    link = auth.generate_password_reset_link(email, app=auth_app)
    params = link_params(link)
    assert params["mode"] == "resetPassword"
    code = params["oobCode"]

    # Without newPassword the code is only inspected, not used up.
    peek = rest.call("resetPassword", {"oobCode": code})
    assert peek.status_code == 200, peek.text
    assert (peek.json()["requestType"], peek.json()["email"]) == ("PASSWORD_RESET", email)
    assert_auth_error(rest.call("resetPassword", {"oobCode": code, "newPassword": "short"}), "WEAK_PASSWORD")

    done = rest.call("resetPassword", {"oobCode": code, "newPassword": "brand-new-password"})
    assert done.status_code == 200, done.text
    assert done.json()["kind"] == "identitytoolkit#ResetPasswordResponse"
    assert (done.json()["requestType"], done.json()["email"]) == ("PASSWORD_RESET", email)
    assert rest.sign_in_ok(email, "brand-new-password")["localId"] == uid
    assert_auth_error(rest.sign_in(email, password), "INVALID_LOGIN_CREDENTIALS")
    # Resetting by email proves the address.
    assert auth.get_user(uid, app=auth_app).email_verified is True
    assert_auth_error(rest.call("resetPassword", {"oobCode": code, "newPassword": "another-password"}), "INVALID_OOB_CODE")

    continue_url = "https://example.com/done?a=1&b=2"
    with_settings = auth.generate_password_reset_link(
        email, action_code_settings=auth.ActionCodeSettings(url=continue_url), app=auth_app)
    assert link_params(with_settings)["continueUrl"] == continue_url


def test_email_verification_link(auth_app, rest):
    from firebase_admin import auth

    email, _, body = rest.new_user("verify")
    uid = body["localId"]
    assert auth.get_user(uid, app=auth_app).email_verified is False
    link = auth.generate_email_verification_link(email, app=auth_app)
    params = link_params(link)
    assert params["mode"] == "verifyEmail"

    applied = rest.call("update", {"oobCode": params["oobCode"]})
    assert applied.status_code == 200, applied.text
    assert (applied.json()["localId"], applied.json()["email"], applied.json()["emailVerified"]) == (uid, email, True)
    assert auth.get_user(uid, app=auth_app).email_verified is True
    assert_auth_error(rest.call("update", {"oobCode": params["oobCode"]}), "INVALID_OOB_CODE")


def test_a_link_domain_must_be_one_of_the_servers_hosts(auth_app, rest, server):
    """ActionCodeSettings.link_domain names the Hosting domain a link opens on: Firebase refuses
    one the project does not own (INVALID_HOSTING_LINK_DOMAIN, InvalidHostingLinkDomainError),
    and makes nothing. Hearth's are the hosts it answers on."""
    from firebase_admin import auth

    email, _, _ = rest.new_user("link-domain")
    foreign = auth.ActionCodeSettings(url="https://example.com/done", handle_code_in_app=True,
                                      link_domain="links.example.org")
    before = requests.get(f"{server}/emulator/v1/projects/{auth_app.project_id}/oobCodes", timeout=10).json()
    for generate in (auth.generate_sign_in_with_email_link, auth.generate_password_reset_link,
                     auth.generate_email_verification_link):
        with pytest.raises(auth.InvalidHostingLinkDomainError):
            generate(email, foreign, app=auth_app)
    after = requests.get(f"{server}/emulator/v1/projects/{auth_app.project_id}/oobCodes", timeout=10).json()
    assert after == before, "a refused request makes no code"

    own = auth.ActionCodeSettings(url="https://example.com/done", handle_code_in_app=True, link_domain="localhost")
    link = auth.generate_sign_in_with_email_link(email, own, app=auth_app)
    assert parse.urlparse(link).hostname == "localhost"
    assert link_params(link)["mode"] == "signIn"


def test_an_admin_export_has_password_hashes_and_salts(auth_app, rest):
    """list_users (accounts:batchGet) gives a service account allowed to read them each user's
    password hash and salt (base64); a user without a password has neither."""
    from firebase_admin import auth

    email, _, body = rest.new_user("exported")
    passwordless = auth.create_user(email=unique_email("exported-no-password"), app=auth_app)
    exported = {user.uid: user for user in auth.list_users(app=auth_app).iterate_all()}
    user = exported[body["localId"]]
    assert user.password_hash and user.password_salt
    assert len(base64.b64decode(user.password_hash)) == 32 and len(base64.b64decode(user.password_salt)) == 16
    assert exported[passwordless.uid].password_hash is None and exported[passwordless.uid].password_salt is None
    # Nobody else sees them: an app's own lookup has neither.
    lookup = rest.call("lookup", {"idToken": body["idToken"]}).json()["users"][0]
    assert "passwordHash" not in lookup and "salt" not in lookup


def test_sign_in_with_email_link(auth_app, rest):
    from firebase_admin import auth

    settings = auth.ActionCodeSettings(url="https://example.com/done", handle_code_in_app=True)
    email, _, body = rest.new_user("email-link")
    uid = body["localId"]
    link = auth.generate_sign_in_with_email_link(email, settings, app=auth_app)
    params = link_params(link)
    assert params["mode"] == "signIn"
    assert params["continueUrl"] == "https://example.com/done"
    code = params["oobCode"]

    # The code works only with the address it was sent to (and is not used up by a mismatch).
    assert_auth_error(
        rest.call("signInWithEmailLink", {"email": unique_email("someone-else"), "oobCode": code}), "INVALID_EMAIL")
    signed_in = rest.call("signInWithEmailLink", {"email": email, "oobCode": code})
    assert signed_in.status_code == 200, signed_in.text
    result = signed_in.json()
    assert (result["localId"], result["email"], result["isNewUser"]) == (uid, email, False)
    assert result["idToken"] and result["refreshToken"]
    claims = jwt_claims(result["idToken"])
    assert claims["sub"] == uid
    assert claims["email_verified"] is True
    assert auth.get_user(uid, app=auth_app).email_verified is True
    assert_auth_error(rest.call("signInWithEmailLink", {"email": email, "oobCode": code}), "INVALID_OOB_CODE")

    # An address without an account gets one.
    newcomer = unique_email("email-link-new")
    code = link_params(auth.generate_sign_in_with_email_link(newcomer, settings, app=auth_app))["oobCode"]
    created = rest.call("signInWithEmailLink", {"email": newcomer, "oobCode": code})
    assert created.status_code == 200, created.text
    assert created.json()["isNewUser"] is True
    user = auth.get_user_by_email(newcomer, app=auth_app)
    assert user.uid == created.json()["localId"]
    assert user.email_verified is True


def test_action_link_refusals(auth_app, rest):
    from firebase_admin import auth

    with pytest.raises(auth.EmailNotFoundError):
        auth.generate_password_reset_link(unique_email("nobody"), app=auth_app)
    with pytest.raises(auth.UserNotFoundError):
        auth.generate_email_verification_link(unique_email("nobody"), app=auth_app)

    assert_auth_error(rest.call("resetPassword", {"oobCode": "not-a-code", "newPassword": "new-password"}),
                      "INVALID_OOB_CODE")
    assert_auth_error(rest.call("resetPassword", {}), "MISSING_OOB_CODE")
    assert_auth_error(rest.call("update", {"oobCode": "not-a-code"}), "INVALID_OOB_CODE")
    assert_auth_error(rest.call("signInWithEmailLink", {"email": unique_email("x"), "oobCode": "not-a-code"}),
                      "INVALID_OOB_CODE")

    # A code is good only for its own action.
    email, _, _ = rest.new_user("wrong-action")
    verify_code = link_params(auth.generate_email_verification_link(email, app=auth_app))["oobCode"]
    assert_auth_error(rest.call("resetPassword", {"oobCode": verify_code, "newPassword": "new-password"}),
                      "INVALID_OOB_CODE")
    assert_auth_error(rest.call("signInWithEmailLink", {"email": email, "oobCode": verify_code}), "INVALID_OOB_CODE")
    reset_code = link_params(auth.generate_password_reset_link(email, app=auth_app))["oobCode"]
    assert_auth_error(rest.call("signInWithEmailLink", {"email": email, "oobCode": reset_code}), "INVALID_OOB_CODE")
    assert rest.call("update", {"oobCode": verify_code}).status_code == 200

    # Links (returnOobLink) are for admins only: anyone else could take over an account.
    leaked = rest.call("sendOobCode", {"requestType": "PASSWORD_RESET", "email": email, "returnOobLink": True})
    assert leaked.status_code in (400, 401, 403), leaked.text
    assert "oobLink" not in leaked.text
    assert_auth_error(leaked, "INSUFFICIENT_PERMISSION", status=leaked.status_code)
    assert_auth_error(rest.admin("/accounts:sendOobCode", {
        "requestType": "PASSWORD_RESET", "email": email, "returnOobLink": True, "continueUrl": "noSchemeOrHost"}),
        "INVALID_CONTINUE_URI")


def test_oob_codes_listing(auth_app, rest):
    from firebase_admin import auth

    email, _, body = rest.new_user("oob-listing")
    reset_link = auth.generate_password_reset_link(email, app=auth_app)
    verify_link = auth.generate_email_verification_link(email, app=auth_app)
    sign_in_link = auth.generate_sign_in_with_email_link(
        email, auth.ActionCodeSettings(url="https://example.com/done"), app=auth_app)

    listing = rest.oob_codes()
    assert set(listing) == {"oobCodes"}
    mine = [entry for entry in listing["oobCodes"] if entry.get("email") == email]
    expected = [
        {"email": email, "oobCode": link_params(link)["oobCode"], "oobLink": link, "requestType": request_type}
        for link, request_type in (
            (reset_link, "PASSWORD_RESET"), (verify_link, "VERIFY_EMAIL"), (sign_in_link, "EMAIL_SIGNIN"))
    ]
    assert sorted(mine, key=lambda entry: entry["requestType"]) == sorted(expected, key=lambda entry: entry["requestType"])

    # A client's own request (no link in the answer) is listed too: that is how tests find the code.
    sent = rest.call("sendOobCode", {"requestType": "PASSWORD_RESET", "email": email})
    assert sent.status_code == 200, sent.text
    assert sent.json()["email"] == email
    assert "oobCode" not in sent.json() and "oobLink" not in sent.json()
    resets = [entry for entry in rest.oob_codes()["oobCodes"]
              if entry["email"] == email and entry["requestType"] == "PASSWORD_RESET"]
    assert len(resets) == 2

    # A used code leaves the listing.
    verify_code = link_params(verify_link)["oobCode"]
    assert rest.call("update", {"oobCode": verify_code}).status_code == 200
    assert verify_code not in [entry["oobCode"] for entry in rest.oob_codes()["oobCodes"]]
    assert body["localId"] == auth.get_user_by_email(email, app=auth_app).uid


# 9. Revocation -----------------------------------------------------------------------------------------------

def test_revoked_id_token(auth_app, rest):
    from firebase_admin import auth

    email, password, body = rest.new_user("revoked-id")
    uid, id_token = body["localId"], body["idToken"]
    assert auth.verify_id_token(id_token, check_revoked=True, app=auth_app)["uid"] == uid
    issued_at = jwt_claims(id_token)["iat"]
    wait_past(issued_at)
    auth.revoke_refresh_tokens(uid, app=auth_app)
    assert auth.get_user(uid, app=auth_app).tokens_valid_after_timestamp > issued_at * 1000
    assert auth.verify_id_token(id_token, app=auth_app)["uid"] == uid
    with pytest.raises(auth.RevokedIdTokenError):
        auth.verify_id_token(id_token, check_revoked=True, app=auth_app)
    refused = rest.refresh(body["refreshToken"])
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["message"] in ("TOKEN_EXPIRED", "INVALID_REFRESH_TOKEN")
    fresh = rest.sign_in_ok(email, password)["idToken"]
    assert auth.verify_id_token(fresh, check_revoked=True, app=auth_app)["uid"] == uid
