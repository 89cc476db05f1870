"""Refused sign-ins on both SDK generations: a wrong password and an unknown address give an
error code each SDK maps to a meaningful error, under the server's `emailEnumerationProtection`
setting (`auth.emailEnumerationProtection` in `hearth serve --settings`, on by default):

- on: the refusal does not tell which part was wrong. Identity Toolkit v1 answers
  INVALID_LOGIN_CREDENTIALS (SDK 9.8.1 shows it as auth/invalid-login-credentials), the v3
  routes of SDK 8.10.1 INVALID_PASSWORD (auth/wrong-password) for both;
- off: EMAIL_NOT_FOUND (auth/user-not-found) and INVALID_PASSWORD (auth/wrong-password) on both.

Either way a refusal signs nobody in and changes nothing: the right password still works.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from generations_support import open_page, skip_without_sdks, start_hearth, unique_email
from harness import remove_tree

skip_without_sdks()

EXPECTED = {
    # (protection, generation): (wrong password, unknown address)
    ("on", "sdk8"): ("auth/wrong-password", "auth/wrong-password"),
    ("on", "sdk9"): ("auth/invalid-login-credentials", "auth/invalid-login-credentials"),
    ("off", "sdk8"): ("auth/wrong-password", "auth/user-not-found"),
    ("off", "sdk9"): ("auth/wrong-password", "auth/user-not-found"),
}


@pytest.fixture(scope="module", params=["on", "off"], ids=["protection-on", "protection-off"])
def protected_hearth(request):
    """A server with email enumeration protection as the parameter says: "on" is the default
    (no setting), "off" sets it in the settings file."""
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


def test_wrong_password_and_unknown_address(protected_page, protected_hearth, ns, combination):
    email = unique_email("refused")
    outcome = protected_page.run("ns, email, unknown", """
      const a = A.open(ns);
      const { user } = await a.signUp(email, 'right-password-1');
      await a.signOut();
      const wrongPassword = await T.rejection(a.signIn(email, 'wrong-password-2'), 'a wrong password');
      const unknownAddress = await T.rejection(a.signIn(unknown, 'any-password-3'), 'an unknown address');
      const afterRefusals = a.user();
      const right = (await a.signIn(email, 'right-password-1')).user;
      return { uid: user.uid, wrongPassword, unknownAddress, afterRefusals, right };
    """, ns, email, unique_email("unknown"))
    wrong_password, unknown_address = EXPECTED[(protected_hearth.protection, combination.generation)]
    assert outcome["wrongPassword"]["code"] == wrong_password, outcome["wrongPassword"]
    assert outcome["unknownAddress"]["code"] == unknown_address, outcome["unknownAddress"]
    assert outcome["afterRefusals"] is None, "a refused sign-in signed somebody in"
    assert outcome["right"]["uid"] == outcome["uid"], "the right password should still work"
