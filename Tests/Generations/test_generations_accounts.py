"""Accounts on both SDK generations (issue 31): the same scenarios, each written once against
the adapter (``A.open(ns)``: adapter8.js over the namespaced SDK 8.10.1, whose auth module speaks
Identity Toolkit v3; adapter9.js over the modular SDK 9.8.1, on v1), over WebSocket and
long-polling: sign-up, sign-in, anonymous, custom tokens, profile and reload, emailed codes
(password reset, verification, sign-in link), linking, deletion, the auth-state and ID-token
listeners, and custom claims after a forced refresh, checked through the SDK and through
firebase-admin.

Codes are read from the emulator's listing, as apps test against Firebase's emulator
(generations_support.newest_code).
"""

from __future__ import annotations

import pytest

from generations_support import newest_code, oob_codes, query_of, skip_without_sdks, unique_email

skip_without_sdks()

# A sign-in that cannot work (a changed password, a deleted account): every code the SDKs use
# for it, whatever the server's email enumeration protection (test_generations_sign_in_errors
# pins down which one when).
REFUSED_SIGN_IN = {"auth/wrong-password", "auth/invalid-login-credentials", "auth/user-not-found"}


def test_sign_up_and_sign_in(page, ns, admin):
    email = unique_email("signup")
    outcome = page.run("ns, email", """
      const a = A.open(ns);
      const created = await a.signUp(email, 'first-password-1');
      const token = await a.tokenResult();
      const b = A.open(ns);
      const signedIn = await b.signIn(email, 'first-password-1');
      const taken = await T.rejection(A.open(ns).signUp(email, 'other-password-2'), 'a second sign-up with the address');
      const weak = await T.rejection(A.open(ns).signUp(unique(), '123'), 'a 3-character password');
      const badEmail = await T.rejection(A.open(ns).signUp('not-an-address', 'good-password-3'), 'a malformed address');
      return { created, signedIn, claims: token.claims, provider: token.signInProvider, taken, weak, badEmail,
               current: b.user() };
      function unique() { return 'weak-' + Math.random().toString(36).slice(2) + '@mail.example.com'; }
    """, ns, email)
    created, signed_in = outcome["created"], outcome["signedIn"]
    assert created["isNewUser"] is True
    assert created["user"]["email"] == email
    assert created["user"]["emailVerified"] is False and created["user"]["isAnonymous"] is False
    assert created["user"]["providers"] == [{"providerId": "password", "uid": email, "email": email}]
    assert signed_in["isNewUser"] is False
    assert signed_in["user"]["uid"] == created["user"]["uid"]
    assert outcome["current"]["uid"] == created["user"]["uid"]
    assert (outcome["claims"]["email"], outcome["claims"]["user_id"], outcome["claims"]["aud"]) == \
        (email, created["user"]["uid"], "hearth")
    assert outcome["provider"] == "password"
    assert outcome["taken"]["code"] == "auth/email-already-in-use", outcome["taken"]
    assert outcome["weak"]["code"] == "auth/weak-password", outcome["weak"]
    assert outcome["badEmail"]["code"] == "auth/invalid-email", outcome["badEmail"]
    # The server agrees: one account, with that address.
    assert admin.auth.get_user_by_email(email, app=admin.app).uid == created["user"]["uid"]


def test_anonymous_sign_in(page, ns, admin):
    outcome = page.run("ns", """
      const a = A.open(ns);
      const signedIn = await a.signInAnonymously();
      const token = await a.tokenResult();
      await a.set(`users/${signedIn.user.uid}`, { anonymous: true });
      const other = await A.open(ns).signInAnonymously();
      return { signedIn, provider: token.signInProvider, own: await a.get(`users/${signedIn.user.uid}`),
               otherUid: other.user.uid };
    """, ns)
    user = outcome["signedIn"]["user"]
    assert user["isAnonymous"] is True and user["email"] is None and user["providers"] == []
    assert outcome["signedIn"]["isNewUser"] is True
    assert outcome["provider"] == "anonymous"
    assert outcome["own"] == {"anonymous": True}
    assert outcome["otherUid"] != user["uid"], "two anonymous sign-ins should be two accounts"
    record = admin.auth.get_user(user["uid"], app=admin.app)
    assert record.email is None and record.provider_data == []


def test_custom_token_sign_in(page, ns, admin, hearth):
    uid = f"custom-{ns}"
    token = admin.auth.create_custom_token(uid, {"premium": True}, app=admin.app)
    token = token.decode() if isinstance(token, bytes) else token
    hearth.put("premium/news", ns, "for premium tokens")
    outcome = page.run("ns, token", """
      const a = A.open(ns);
      const signedIn = await a.signInWithCustomToken(token);
      const result = await a.tokenResult();
      // the developer claim reaches the database rules (auth.token.premium)
      const premium = await a.get('premium/news');
      const again = await A.open(ns).signInWithCustomToken(token);
      const garbage = await T.rejection(A.open(ns).signInWithCustomToken('not-a-token'), 'a malformed custom token');
      return { signedIn, claims: result.claims, provider: result.signInProvider, premium, againNew: again.isNewUser,
               garbage };
    """, ns, token)
    assert outcome["signedIn"]["user"]["uid"] == uid
    assert outcome["signedIn"]["isNewUser"] is True
    assert outcome["againNew"] is False
    assert outcome["claims"]["premium"] is True
    assert outcome["provider"] == "custom"
    assert outcome["premium"] == "for premium tokens"
    assert outcome["garbage"]["code"] == "auth/invalid-custom-token", outcome["garbage"]
    assert admin.auth.get_user(uid, app=admin.app).uid == uid


def test_profile_update_and_reload(page, ns, admin):
    email = unique_email("profile")
    uid = page.run("ns, email", """
      T.store.a = A.open(ns);
      const { user } = await T.store.a.signUp(email, 'profile-password-1');
      await T.store.a.updateProfile({ displayName: 'Ada Lovelace', photoURL: 'https://example.com/ada.png' });
      return user.uid;
    """, ns, email)
    record = admin.auth.get_user(uid, app=admin.app)
    assert (record.display_name, record.photo_url) == ("Ada Lovelace", "https://example.com/ada.png")
    admin.auth.update_user(uid, display_name="Countess of Lovelace", app=admin.app)
    outcome = page.run("ns, email", """
      const a = T.store.a;
      const before = a.user();  // the SDK does not know until it reloads
      const reloaded = await a.reload();
      const elsewhere = (await A.open(ns).signIn(email, 'profile-password-1')).user;
      await a.updateProfile({ displayName: 'Ada' });  // only the name: the photo stays
      return { before, reloaded, elsewhere, renamed: await a.reload() };
    """, ns, email)
    assert outcome["before"]["displayName"] == "Ada Lovelace"
    assert outcome["reloaded"]["displayName"] == "Countess of Lovelace"
    assert outcome["reloaded"]["photoURL"] == "https://example.com/ada.png"
    assert outcome["elsewhere"]["displayName"] == "Countess of Lovelace"
    assert (outcome["renamed"]["displayName"], outcome["renamed"]["photoURL"]) == ("Ada", "https://example.com/ada.png")
    record = admin.auth.get_user(uid, app=admin.app)
    assert (record.display_name, record.photo_url) == ("Ada", "https://example.com/ada.png")


def test_password_reset_with_the_emailed_code(page, ns, hearth):
    email = unique_email("reset")
    uid = page.run("ns, email", """
      T.store.a = A.open(ns);
      const { user } = await T.store.a.signUp(email, 'old-password-1');
      await T.store.a.sendPasswordResetEmail(email);
      return user.uid;
    """, ns, email)
    entry = newest_code(hearth, email, "PASSWORD_RESET")
    assert query_of(entry["oobLink"])["mode"] == "resetPassword", entry
    outcome = page.run("ns, email, code", """
      const a = T.store.a;
      const verified = await a.verifyPasswordResetCode(code);
      await a.confirmPasswordReset(code, 'new-password-2');
      const reused = await T.rejection(a.confirmPasswordReset(code, 'third-password-3'), 'a used reset code');
      const unknown = await T.rejection(a.confirmPasswordReset('no-such-code', 'third-password-3'), 'an unknown reset code');
      const oldPassword = await T.rejection(A.open(ns).signIn(email, 'old-password-1'), 'the old password');
      const { user } = await A.open(ns).signIn(email, 'new-password-2');
      return { verified, reused, unknown, oldPassword, user };
    """, ns, email, entry["oobCode"])
    assert outcome["verified"] == email
    assert outcome["reused"]["code"] == "auth/invalid-action-code", outcome["reused"]
    assert outcome["unknown"]["code"] == "auth/invalid-action-code", outcome["unknown"]
    assert outcome["oldPassword"]["code"] in REFUSED_SIGN_IN, outcome["oldPassword"]
    assert outcome["user"]["uid"] == uid
    assert entry["oobCode"] not in [listed["oobCode"] for listed in oob_codes(hearth)], "a used code stays listed"


def test_email_verification(page, ns, hearth, admin):
    email = unique_email("verify")
    uid = page.run("ns, email", """
      T.store.a = A.open(ns);
      const { user } = await T.store.a.signUp(email, 'verify-password-1');
      await T.store.a.sendEmailVerification({ url: `${location.origin}/verified?from=app` });
      return user.uid;
    """, ns, email)
    entry = newest_code(hearth, email, "VERIFY_EMAIL")
    assert query_of(entry["oobLink"])["mode"] == "verifyEmail", entry
    assert query_of(entry["oobLink"])["continueUrl"] == f"{page.page_url}/verified?from=app", entry
    assert admin.auth.get_user(uid, app=admin.app).email_verified is False
    outcome = page.run("code", """
      const a = T.store.a;
      const info = await a.checkActionCode(code);
      await a.applyActionCode(code);
      const stale = a.user().emailVerified;  // the SDK does not know until it reloads
      const reloaded = await a.reload();
      const token = await a.tokenResult(true);
      const reused = await T.rejection(a.applyActionCode(code), 'a used verification code');
      return { info, stale, reloaded, claim: token.claims.email_verified, reused };
    """, entry["oobCode"])
    assert outcome["info"] == {"operation": "VERIFY_EMAIL", "email": email, "previousEmail": None}
    assert outcome["stale"] is False
    assert (outcome["reloaded"]["uid"], outcome["reloaded"]["emailVerified"]) == (uid, True)
    assert outcome["claim"] is True, "a refreshed ID token should say email_verified: true"
    assert outcome["reused"]["code"] == "auth/invalid-action-code", outcome["reused"]
    assert admin.auth.get_user(uid, app=admin.app).email_verified is True


def test_sign_in_with_an_email_link(page, ns, hearth):
    email = unique_email("link")
    continue_url = page.run("ns, email", """
      T.store.a = A.open(ns);
      const url = `${location.origin}/finish-sign-in?cart=42`;
      await T.store.a.sendSignInLinkToEmail(email, { url, handleCodeInApp: true });
      return url;
    """, ns, email)
    link = newest_code(hearth, email, "EMAIL_SIGNIN")["oobLink"]
    assert query_of(link)["mode"] == "signIn" and query_of(link)["continueUrl"] == continue_url
    outcome = page.run("ns, email, link", """
      const a = T.store.a;
      const isLink = a.isSignInWithEmailLink(link);
      const notLink = a.isSignInWithEmailLink(link.replace('mode=signIn', 'mode=resetPassword'));
      const info = await a.checkActionCode(query(link).get('oobCode'));
      const signedIn = await a.signInWithEmailLink(email, link);
      const reused = await T.rejection(A.open(ns).signInWithEmailLink(email, link), 'a used link');
      return { isLink, notLink, info, signedIn, reused };
      function query(url) { return new URL(url).searchParams; }
    """, ns, email, link)
    assert (outcome["isLink"], outcome["notLink"]) == (True, False)
    # Firebase does not tell a sign-in code's address: whoever has the link must know it.
    assert outcome["info"] == {"operation": "EMAIL_SIGNIN", "email": None, "previousEmail": None}
    user = outcome["signedIn"]["user"]
    assert outcome["signedIn"]["isNewUser"] is True
    assert (user["email"], user["emailVerified"], user["isAnonymous"]) == (email, True, False)
    assert outcome["reused"]["code"] == "auth/invalid-action-code", outcome["reused"]


def test_an_email_link_claims_an_unverified_account(page, ns, hearth):
    """Whoever proves they hold an address that was never verified gets its account: signing in
    with an emailed link keeps the uid, marks the address verified and drops the password
    someone else may have set (docs/compatibility.md, account takeover defences)."""
    email = unique_email("claim")
    uid = page.run("ns, email", """
      const { user } = await A.open(ns).signUp(email, 'squatter-password-1');
      T.store.a = A.open(ns);
      await T.store.a.sendSignInLinkToEmail(email, { url: `${location.origin}/finish`, handleCodeInApp: true });
      return user.uid;
    """, ns, email)
    link = newest_code(hearth, email, "EMAIL_SIGNIN")["oobLink"]
    outcome = page.run("ns, email, link", """
      const signedIn = await T.store.a.signInWithEmailLink(email, link);
      const password = await T.rejection(A.open(ns).signIn(email, 'squatter-password-1'), "the squatter's password");
      return { signedIn, password };
    """, ns, email, link)
    user = outcome["signedIn"]["user"]
    assert (user["uid"], user["emailVerified"], outcome["signedIn"]["isNewUser"]) == (uid, True, False)
    assert outcome["password"]["code"] in REFUSED_SIGN_IN, outcome["password"]


def test_linking_an_anonymous_account_to_a_password_keeps_the_uid(page, ns, admin):
    email = unique_email("linking")
    outcome = page.run("ns, email", """
      const a = A.open(ns);
      const anonymous = (await a.signInAnonymously()).user;
      await a.set(`users/${anonymous.uid}`, { cart: 3 });
      const linked = await a.linkWithPassword(email, 'linked-password-1');
      const token = await a.tokenResult(true);
      const b = A.open(ns);
      const later = (await b.signIn(email, 'linked-password-1')).user;
      const again = await T.rejection(a.linkWithPassword(unique(), 'another-password-2'), 'a second password link');
      return { anonymous, linked, provider: token.signInProvider, later, data: await b.get(`users/${anonymous.uid}`), again };
      function unique() { return 'second-' + Math.random().toString(36).slice(2) + '@mail.example.com'; }
    """, ns, email)
    uid = outcome["anonymous"]["uid"]
    assert outcome["anonymous"]["isAnonymous"] is True
    linked = outcome["linked"]["user"]
    assert (linked["uid"], linked["email"], linked["isAnonymous"]) == (uid, email, False)
    assert linked["providers"] == [{"providerId": "password", "uid": email, "email": email}]
    assert outcome["linked"]["operationType"] == "link"
    assert outcome["provider"] == "password"
    assert outcome["later"]["uid"] == uid
    assert outcome["data"] == {"cart": 3}, "the account's data should stay with the uid"
    assert outcome["again"]["code"] == "auth/provider-already-linked", outcome["again"]
    assert admin.auth.get_user(uid, app=admin.app).email == email


def test_deleting_the_account(page, ns, admin):
    email = unique_email("delete")
    outcome = page.run("ns, email", """
      const a = A.open(ns);
      const { user } = await a.signUp(email, 'delete-password-1');
      const events = a.recordAuth();
      await T.until(() => events.auth.length === 1, 'the first auth state');
      await a.deleteUser();
      await T.until(() => events.auth.length === 2, 'the auth state after the deletion');
      const signIn = await T.rejection(A.open(ns).signIn(email, 'delete-password-1'), 'a sign-in to the deleted account');
      const signUp = await A.open(ns).signUp(email, 'delete-password-2');
      return { uid: user.uid, current: a.user(), events: events.auth, signIn, newUid: signUp.user.uid };
    """, ns, email)
    uid = outcome["uid"]
    assert outcome["current"] is None
    assert outcome["events"] == [uid, None]
    assert outcome["signIn"]["code"] in REFUSED_SIGN_IN, outcome["signIn"]
    assert outcome["newUid"] != uid, "the address is free again, for a new account"
    with pytest.raises(admin.auth.UserNotFoundError):
        admin.auth.get_user(uid, app=admin.app)


def test_auth_state_and_id_token_listeners(page, ns):
    email = unique_email("listeners")
    outcome = page.run("ns, email", """
      const a = A.open(ns);
      const events = a.recordAuth();
      await T.until(() => events.auth.length === 1 && events.token.length === 1, 'the first calls (signed out)');
      const { user } = await a.signUp(email, 'listen-password-1');
      await T.until(() => events.auth.length === 2 && events.token.length === 2, 'the calls for the sign-up');
      const first = await a.idToken();
      const refreshed = await a.idToken(true);
      await T.until(() => events.token.length === 3, 'the call for the forced refresh');
      await a.signOut();
      await T.until(() => events.auth.length === 3 && events.token.length === 4, 'the calls for the sign-out');
      return { uid: user.uid, auth: events.auth, token: events.token, changed: first !== refreshed };
    """, ns, email)
    uid = outcome["uid"]
    assert outcome["auth"] == [None, uid, None], "onAuthStateChanged: signed out, signed in, signed out"
    assert outcome["token"] == [None, uid, uid, None], "onIdTokenChanged: also the forced refresh"
    assert outcome["changed"] is True, "a forced refresh should give a new ID token"


def test_custom_claims_show_after_a_forced_refresh(page, ns, admin, hearth):
    email = unique_email("claims")
    hearth.put("premium/news", ns, "for premium tokens")
    uid = page.run("ns, email", """
      T.store.a = A.open(ns);
      const { user } = await T.store.a.signUp(email, 'claims-password-1');
      T.store.refused = await T.rejection(T.store.a.get('premium/news'), 'a premium read before the claim');
      return user.uid;
    """, ns, email)
    admin.auth.set_custom_user_claims(uid, {"premium": True, "roles": ["editor", "viewer"]}, app=admin.app)
    outcome = page.run("", """
      const a = T.store.a;
      const cached = (await a.tokenResult()).claims;
      const refreshed = (await a.tokenResult(true)).claims;
      // the database connection is re-authenticated with the new token: the rule now allows it
      const premium = await T.eventually(() => a.get('premium/news'), 'the premium read with the new token');
      return { refused: T.store.refused, cached, refreshed, premium };
    """)
    assert "permission" in outcome["refused"]["message"].lower(), outcome["refused"]
    assert "premium" not in outcome["cached"], "the cached token cannot have the new claim yet"
    assert outcome["refreshed"]["premium"] is True
    assert outcome["refreshed"]["roles"] == ["editor", "viewer"]
    assert outcome["premium"] == "for premium tokens"
