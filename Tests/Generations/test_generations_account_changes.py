"""Account changes on both SDK generations, each scenario written once against the adapter:
changes of address (verifyBeforeUpdateEmail and its emailed code, read with checkActionCode),
password changes and the sessions they end, reauthentication, an anonymous account upgraded by
an email link, profile fields removed with null,
disabled accounts, refusals of unknown codes, and signing out on the database connection.
"""

from __future__ import annotations

from generations_support import newest_code, oob_codes, query_of, skip_without_sdks, unique_email

skip_without_sdks()

REFUSED_SIGN_IN = {"auth/wrong-password", "auth/invalid-login-credentials", "auth/user-not-found"}
PASSWORD = lambda email: [{"providerId": "password", "uid": email, "email": email}]  # noqa: E731


def test_change_of_address_with_the_emailed_code(page, ns, hearth, admin):
    # (a taken address: test_generations_email_enumeration)
    old, new = unique_email("before"), unique_email("after")
    first = page.run("ns, old, newEmail", """
      T.store.a = A.open(ns);
      const { user } = await T.store.a.signUp(old, 'change-password-1');
      await T.store.a.verifyBeforeUpdateEmail(newEmail);
      return { uid: user.uid, emailBefore: T.store.a.user().email };
    """, ns, old, new)
    assert first["emailBefore"] == old, "the address must not change before the new one is verified"
    entry = newest_code(hearth, new, "VERIFY_AND_CHANGE_EMAIL")
    assert query_of(entry["oobLink"])["mode"] == "verifyAndChangeEmail", entry
    outcome = page.run("ns, old, newEmail, code", """
      const a = T.store.a;
      const info = await a.checkActionCode(code);
      await a.applyActionCode(code);
      const reused = await T.rejection(a.applyActionCode(code), 'a used change-of-address code');
      const byNew = (await A.open(ns).signIn(newEmail, 'change-password-1')).user;
      const byOld = await T.rejection(A.open(ns).signIn(old, 'change-password-1'), 'the old address');
      return { info, reused, byNew, byOld };
    """, ns, old, new, entry["oobCode"])
    assert outcome["info"] == {"operation": "VERIFY_AND_CHANGE_EMAIL", "email": new, "previousEmail": old}
    assert outcome["reused"]["code"] == "auth/invalid-action-code", outcome["reused"]
    assert (outcome["byNew"]["uid"], outcome["byNew"]["email"], outcome["byNew"]["emailVerified"]) == (first["uid"], new, True)
    assert outcome["byOld"]["code"] in REFUSED_SIGN_IN, outcome["byOld"]
    assert admin.auth.get_user(first["uid"], app=admin.app).email == new


def test_password_change_reauthentication_and_the_sessions_it_ends(page, ns, hearth):
    """Firebase ends the user's other sessions when the password changes or is reset; the SDK
    learns it when it refreshes the ID token (TOKEN_EXPIRED: auth/user-token-expired) and signs
    that user out. The session that changed the password goes on."""
    email = unique_email("sessions")
    outcome = page.run("ns, email", """
      const a = A.open(ns), b = A.open(ns);
      const { user } = await a.signUp(email, 'session-password-1');
      await b.signIn(email, 'session-password-1');
      const reauthenticated = await a.reauthenticate(email, 'session-password-1');
      const wrongReauth = await T.rejection(a.reauthenticate(email, 'not-the-password'), 'reauthentication with a wrong password');
      const otherEmail = 'other-' + email;
      await A.open(ns).signUp(otherEmail, 'other-password-1');
      const mismatch = await T.rejection(a.reauthenticate(otherEmail, 'other-password-1'), "reauthentication as another account");
      await a.updatePassword('session-password-2');
      const changer = await T.settle(a.idToken(true));
      const other = await T.settle(b.idToken(true));
      const oldPassword = await T.rejection(A.open(ns).signIn(email, 'session-password-1'), 'the old password');
      const newPassword = (await A.open(ns).signIn(email, 'session-password-2')).user.uid;
      const weak = await T.rejection(a.updatePassword('123'), 'a 3-character password');
      await a.sendPasswordResetEmail(email);
      return { uid: user.uid, reauthenticated, wrongReauth, mismatch, changer, other, otherSignedOut: b.user() === null,
               oldPassword, newPassword, weak };
    """, ns, email)
    assert outcome["reauthenticated"]["user"]["uid"] == outcome["uid"]
    assert outcome["reauthenticated"]["operationType"] == "reauthenticate"
    assert outcome["wrongReauth"]["code"] in REFUSED_SIGN_IN, outcome["wrongReauth"]
    assert outcome["mismatch"]["code"] == "auth/user-mismatch", outcome["mismatch"]
    assert (outcome["changer"], outcome["other"], outcome["otherSignedOut"]) == ("resolved", "auth/user-token-expired", True)
    assert outcome["oldPassword"]["code"] in REFUSED_SIGN_IN, outcome["oldPassword"]
    assert outcome["newPassword"] == outcome["uid"]
    assert outcome["weak"]["code"] == "auth/weak-password", outcome["weak"]
    # A reset from a page without a session ends the changer's session too.
    code = newest_code(hearth, email, "PASSWORD_RESET")["oobCode"]
    reset = page.run("ns, email, code", """
      const info = await A.open(ns).checkActionCode(code);
      const a = A.open(ns);
      await a.signIn(email, 'session-password-2');
      await A.open(ns).confirmPasswordReset(code, 'session-password-3');
      return { info, afterReset: await T.settle(a.idToken(true)), signedOut: a.user() === null };
    """, ns, email, code)
    assert reset == {"info": {"operation": "PASSWORD_RESET", "email": email, "previousEmail": None},
                     "afterReset": "auth/user-token-expired", "signedOut": True}


def test_an_anonymous_account_upgraded_by_an_email_link_keeps_the_uid(page, ns, hearth):
    email, taken = unique_email("anonlink"), unique_email("anonlink-taken")
    uid = page.run("ns, email, taken", """
      await A.open(ns).signUp(taken, 'taken-password-1');
      T.store.a = A.open(ns);
      const { user } = await T.store.a.signInAnonymously();
      const url = `${location.origin}/finish`;
      await T.store.a.sendSignInLinkToEmail(email, { url, handleCodeInApp: true });
      await T.store.a.sendSignInLinkToEmail(taken, { url, handleCodeInApp: true });
      return user.uid;
    """, ns, email, taken)
    link = newest_code(hearth, email, "EMAIL_SIGNIN")["oobLink"]
    taken_link = newest_code(hearth, taken, "EMAIL_SIGNIN")["oobLink"]
    outcome = page.run("ns, email, link, taken, takenLink", """
      const other = A.open(ns);
      await other.signInAnonymously();
      const inUse = await T.rejection(other.linkWithEmailLink(taken, takenLink), 'an address another account has');
      const linked = await T.store.a.linkWithEmailLink(email, link);
      const takenStill = (await A.open(ns).signIn(taken, 'taken-password-1')).user.email;
      return { inUse, linked, takenStill };
    """, ns, email, link, taken, taken_link)
    assert outcome["inUse"]["code"] == "auth/email-already-in-use", outcome["inUse"]
    user = outcome["linked"]["user"]
    assert user["uid"] == uid, "linking must keep the anonymous user's uid"
    assert outcome["linked"]["operationType"] == "link"
    assert (user["email"], user["emailVerified"], user["isAnonymous"]) == (email, True, False)
    assert user["providers"] == PASSWORD(email)
    assert outcome["takenStill"] == taken


def test_profile_fields_removed_with_null(page, ns, admin, combination):
    """`updateProfile({displayName: null, photoURL: null})` removes them. SDK 8 sends
    setAccountInfo with `deleteAttribute: ["DISPLAY_NAME", "PHOTO_URL"]` (the v3 API's way);
    SDK 9.8.1 sends `displayName: null, photoUrl: null` to accounts:update, where what Firebase
    does is not documented (its emulator refuses null): there the SDK and the server must at
    least agree."""
    email = unique_email("nulls")
    outcome = page.run("ns, email", """
      const a = A.open(ns);
      const { user } = await a.signUp(email, 'nulls-password-1');
      await a.updateProfile({ displayName: 'Grace', photoURL: 'https://example.com/grace.png' });
      const settle = await T.settle(a.updateProfile({ displayName: null, photoURL: null }));
      const seen = a.user();
      const reloaded = await a.reload();
      return { uid: user.uid, settle, seen, reloaded };
    """, ns, email)
    record = admin.auth.get_user(outcome["uid"], app=admin.app)
    held = {"displayName": record.display_name, "photoURL": record.photo_url}
    if combination.generation == "sdk8":
        assert outcome["settle"] == "resolved"
        assert held == {"displayName": None, "photoURL": None}, "deleteAttribute should remove both"
    if outcome["settle"] == "resolved":
        reloaded = outcome["reloaded"]
        assert {"displayName": reloaded["displayName"], "photoURL": reloaded["photoURL"]} == held
        assert {"displayName": outcome["seen"]["displayName"], "photoURL": outcome["seen"]["photoURL"]} == held, \
            "the SDK's user after the update should say what the server holds"


def test_refusals_change_nothing(page, ns, hearth, admin):
    email, unknown = unique_email("refusals"), unique_email("unknown")
    uid = page.run("ns, email", """
      const { user } = await A.open(ns).signUp(email, 'refusal-password-1');
      return user.uid;
    """, ns, email)
    admin.auth.update_user(uid, disabled=True, app=admin.app)
    outcome = page.run("ns, email, unknown", """
      const a = A.open(ns);
      const codes = {};
      codes.disabled = await T.settle(a.signIn(email, 'refusal-password-1'));
      codes.apply = await T.settle(a.applyActionCode('no-such-code'));
      codes.check = await T.settle(a.checkActionCode('no-such-code'));
      codes.confirm = await T.settle(a.confirmPasswordReset('no-such-code', 'whatever-password-1'));
      codes.verify = await T.settle(a.verifyPasswordResetCode('no-such-code'));
      codes.badEmail = await T.settle(a.sendPasswordResetEmail('not-an-address'));
      // an unknown address: as for a known one, and no code is made (email enumeration protection)
      codes.resetUnknown = await T.settle(a.sendPasswordResetEmail(unknown));
      return { codes, signedIn: a.user() !== null };
    """, ns, email, unknown)
    assert outcome["codes"] == {
        "disabled": "auth/user-disabled", "apply": "auth/invalid-action-code", "check": "auth/invalid-action-code",
        "confirm": "auth/invalid-action-code", "verify": "auth/invalid-action-code", "badEmail": "auth/invalid-email",
        "resetUnknown": "resolved",
    }
    assert outcome["signedIn"] is False
    assert not [entry for entry in oob_codes(hearth) if unknown in (entry.get("email"), entry.get("newEmail"))]
    assert admin.auth.get_user(uid, app=admin.app).disabled is True


def test_signing_out_revokes_what_only_the_user_could_read(page, ns):
    """After signOut the database SDK sends `unauth` on the open connection: listens the rules
    no longer allow are cancelled, writes as the user are refused."""
    outcome = page.run("ns, email", """
      const a = A.open(ns);
      const { user } = await a.signUp(email, 'signout-password-1');
      await a.set(`users/${user.uid}`, { name: 'Me' });
      const own = T.watch(a, `users/${user.uid}`);
      await own.untilValue((v) => v && v.name === 'Me', "the user's own data");
      await a.signOut();
      const cancel = await own.untilCancelled("the listener on the user's data to be revoked after signOut");
      const write = await T.rejection(a.set(`users/${user.uid}/name`, 'x'), 'a write after signOut');
      return { cancel, write };
    """, ns, unique_email("signout"))
    assert outcome["cancel"]["code"] == "PERMISSION_DENIED", outcome["cancel"]
    assert outcome["write"]["code"] == "PERMISSION_DENIED", outcome["write"]


def test_a_signed_in_user_survives_a_page_reload(page, ns):
    """What most apps rely on: the SDK keeps the user in the browser (SDK 8's default LOCAL
    persistence; IndexedDB in SDK 9, as getAuth does), finds it again on the next page load,
    refreshes its token and authenticates the database with it; after signOut the next page
    load finds nobody."""
    name = f"persisted-{ns}"
    first = page.run("ns, name, email", """
      const a = A.open(ns, { persistent: name });
      const { user } = await a.signUp(email, 'reload-password-1');
      await a.set(`users/${user.uid}`, { name: 'Persisted' });
      return user.uid;
    """, ns, name, unique_email("reload"))
    page.load()
    outcome = page.run("ns, name", """
      const a = A.open(ns, { persistent: name });
      const restored = await a.restored();
      const own = await a.get(`users/${restored.uid}`);
      const refreshed = await T.settle(a.idToken(true));
      await a.signOut();
      return { restored, own, refreshed };
    """, ns, name)
    assert outcome["restored"] is not None and outcome["restored"]["uid"] == first
    assert outcome["own"] == {"name": "Persisted"}, "the database should know the restored user"
    assert outcome["refreshed"] == "resolved"
    page.load()
    after = page.run("ns, name", "return A.open(ns, { persistent: name }).restored();", ns, name)
    assert after is None, "a signed-out user came back on the next page load"


def test_emails_in_the_apps_language(page, ns, hearth):
    """`auth.languageCode` makes both SDKs send `X-Firebase-Locale` with their requests (a
    header the browser asks the server about first, cross-origin)."""
    email = unique_email("locale")
    outcome = page.run("ns, email", """
      const a = A.open(ns);
      a.setLanguage('fr');
      const { user } = await a.signUp(email, 'locale-password-1');
      await a.sendEmailVerification();
      await a.sendPasswordResetEmail(email);
      return user.uid;
    """, ns, email)
    assert outcome
    for request_type in ("VERIFY_EMAIL", "PASSWORD_RESET"):
        assert newest_code(hearth, email, request_type)["oobCode"]
