"""What apps are told about who has an account, on both SDK generations, under the server's
`emailEnumerationProtection` setting (`auth.emailEnumerationProtection` in `hearth serve
--settings`; on by default, as in Firebase projects made since September 2023; off as in older
ones; docs/accounts.md has the table):

| | on | off |
|---|---|---|
| wrong password | SDK 9: auth/invalid-login-credentials (v1 INVALID_LOGIN_CREDENTIALS); SDK 8: auth/wrong-password (its v3 routes answer INVALID_PASSWORD: SDK 8 has no code for the other) | auth/wrong-password |
| unknown address at sign-in | the same as a wrong password | auth/user-not-found |
| fetchSignInMethodsForEmail | [] | the methods |
| password reset for an unknown address | answered, nothing sent | auth/user-not-found |
| sign-in link for a disabled account | answered, nothing sent | auth/user-disabled |
| verifyBeforeUpdateEmail to a taken address | answered, nothing sent | auth/email-already-in-use |

Signing up with a taken address is auth/email-already-in-use either way, and a refusal signs
nobody in and changes nothing: the right password still works.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from generations_support import (PROJECT, TIMEOUT, http, newest_code, oob_codes, open_page, skip_without_sdks,
                                 start_hearth, unique_email)
from harness import remove_tree

skip_without_sdks()

REFUSED_LOGIN = {
    # (protection, generation): (wrong password, unknown address)
    ("on", "sdk8"): ("auth/wrong-password", "auth/wrong-password"),
    ("on", "sdk9"): ("auth/invalid-login-credentials", "auth/invalid-login-credentials"),
    ("off", "sdk8"): ("auth/wrong-password", "auth/user-not-found"),
    ("off", "sdk9"): ("auth/wrong-password", "auth/user-not-found"),
}
# What the other requests answer an app (the same on both generations).
TOLD = {
    "on": {"resetUnknown": "resolved", "linkDisabled": "resolved", "changeToTaken": "resolved", "signUpTaken": "auth/email-already-in-use"},
    "off": {"resetUnknown": "auth/user-not-found", "linkDisabled": "auth/user-disabled",
            "changeToTaken": "auth/email-already-in-use", "signUpTaken": "auth/email-already-in-use"},
}


@pytest.fixture(scope="module", params=["on", "off"], ids=["protection-on", "protection-off"])
def protected_hearth(request):
    """A server with email enumeration protection as the parameter says: "on" is the default
    (no setting), "off" is set in the settings file."""
    extra = []
    settings_folder = None
    if request.param == "off":
        settings_folder = Path(tempfile.mkdtemp(prefix="hearth-generations-settings-"))
        settings = settings_folder / "settings.json"
        settings.write_text(json.dumps({"auth": {"emailEnumerationProtection": False}}))
        extra = ["--settings", str(settings)]
    server, folder = start_hearth(f"hearth-generations-protection-{request.param}-", extra)
    server.protection = request.param
    yield server
    server.stop()
    remove_tree(folder)
    if settings_folder is not None:
        remove_tree(settings_folder)


@pytest.fixture
def protected_page(request, chromium, page_server, protected_hearth, combination):
    yield from open_page(request, chromium, page_server, protected_hearth, combination)


def disable(hearth, uid: str):
    """Disables an account as the admin (accounts:update with disableUser, `Bearer owner`)."""
    response = http().post(f"{hearth.url}/identitytoolkit.googleapis.com/v1/projects/{PROJECT}/accounts:update",
                           json={"localId": uid, "disableUser": True}, headers={"Authorization": "Bearer owner"},
                           timeout=TIMEOUT)
    assert response.status_code == 200, f"disabling {uid}: {response.status_code} {response.text}"


def codes_for(hearth, email: str) -> list[dict]:
    return [entry for entry in oob_codes(hearth) if email in (entry.get("email"), entry.get("newEmail"))]


def test_what_an_app_is_told_about_who_has_an_account(protected_page, protected_hearth, ns, combination):
    email, unknown, taken, disabled = (unique_email(tag) for tag in ("refused", "unknown", "taken", "disabled"))
    disabled_uid = protected_page.run("ns, disabled", """
      return (await A.open(ns).signUp(disabled, 'disabled-password-1')).user.uid;
    """, ns, disabled)
    disable(protected_hearth, disabled_uid)
    outcome = protected_page.run("ns, email, unknown, taken, disabled", """
      await A.open(ns).signUp(taken, 'taken-password-1');
      const a = A.open(ns);
      const { user } = await a.signUp(email, 'right-password-1');
      const told = {};
      told.changeToTaken = await T.settle(a.verifyBeforeUpdateEmail(taken));
      await a.signOut();
      const wrongPassword = await T.rejection(a.signIn(email, 'wrong-password-2'), 'a wrong password');
      const unknownAddress = await T.rejection(a.signIn(unknown, 'any-password-3'), 'an unknown address');
      const afterRefusals = a.user();
      told.resetUnknown = await T.settle(a.sendPasswordResetEmail(unknown));
      told.linkDisabled = await T.settle(a.sendSignInLinkToEmail(disabled, { url: `${location.origin}/finish`, handleCodeInApp: true }));
      told.signUpTaken = await T.settle(A.open(ns).signUp(taken, 'another-password-4'));
      const methods = await a.fetchSignInMethods(email);
      const right = (await a.signIn(email, 'right-password-1')).user;
      return { uid: user.uid, wrongPassword, unknownAddress, afterRefusals, told, methods, right };
    """, ns, email, unknown, taken, disabled)
    protection = protected_hearth.protection
    wrong_password, unknown_address = REFUSED_LOGIN[(protection, combination.generation)]
    assert outcome["wrongPassword"]["code"] == wrong_password, outcome["wrongPassword"]
    assert outcome["unknownAddress"]["code"] == unknown_address, outcome["unknownAddress"]
    assert outcome["told"] == TOLD[protection]
    assert outcome["methods"] == ([] if protection == "on" else ["password"])
    assert outcome["afterRefusals"] is None, "a refused sign-in signed somebody in"
    assert outcome["right"]["uid"] == outcome["uid"], "the right password should still work"
    # Answered or not, nothing was sent where nobody (or nobody allowed) was to get it.
    for address in (unknown, disabled, taken):
        assert codes_for(protected_hearth, address) == [], address


def test_the_sign_in_methods_of_an_email_link_account(protected_page, protected_hearth, ns):
    """An email-link account is under the `password` provider; without protection
    fetchSignInMethodsForEmail says ['emailLink'], then ['emailLink', 'password'] once it has a
    password too; with protection, nothing ([])."""
    email = unique_email("linkview")
    protected_page.run("ns, email", """
      T.store.a = A.open(ns);
      await T.store.a.sendSignInLinkToEmail(email, { url: `${location.origin}/finish`, handleCodeInApp: true });
    """, ns, email)
    link = newest_code(protected_hearth, email, "EMAIL_SIGNIN")["oobLink"]
    outcome = protected_page.run("ns, email, link", """
      const a = T.store.a;
      const unknown = await a.fetchSignInMethods('nobody-' + email);
      const { user } = await a.signInWithEmailLink(email, link);
      const methods = await a.fetchSignInMethods(email);
      await a.updatePassword('link-then-password-1');
      const withPassword = (await A.open(ns).signIn(email, 'link-then-password-1')).user;
      const methodsAfter = (await a.fetchSignInMethods(email)).sort();
      return { unknown, user, methods, withPassword, methodsAfter };
    """, ns, email, link)
    assert outcome["unknown"] == []
    assert outcome["user"]["providers"] == [{"providerId": "password", "uid": email, "email": email}]
    assert outcome["user"]["isAnonymous"] is False
    assert outcome["withPassword"]["uid"] == outcome["user"]["uid"]
    if protected_hearth.protection == "on":
        assert (outcome["methods"], outcome["methodsAfter"]) == ([], [])
    else:
        assert (outcome["methods"], outcome["methodsAfter"]) == (["emailLink"], ["emailLink", "password"])
