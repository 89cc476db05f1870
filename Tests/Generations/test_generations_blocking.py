"""Blocking functions on both SDK generations: identity_fn's before_user_created and
before_user_signed_in (Tests/Functions/fixtures/blocking, unchanged) decide sign-ups and sign-ins
made by Firebase's own auth SDKs, through `hearth serve --functions`. What they answer reaches
the app as Firebase's SDKs read it: custom claims on the account and session claims in the ID
token; a refusal is `auth/internal-error` with the function's message."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import pytest

from generations_support import REPO, TIMEOUT, http, python_for_functions, skip_without_sdks, start_hearth, unique_email
from harness import remove_tree

skip_without_sdks()

FUNCTIONS = REPO / "Tests" / "Functions" / "fixtures" / "blocking"


@pytest.fixture(scope="module")
def hearth():
    """The suite's server with the blocking functions, once a sign-up gets through them."""
    copy = Path(tempfile.mkdtemp(prefix="hearth-generations-blocking-code-"))
    shutil.copytree(FUNCTIONS, copy / "functions", ignore=shutil.ignore_patterns("__pycache__"))
    server, folder = start_hearth("hearth-generations-blocking-",
                                  ["--functions", str(copy / "functions"), "--functions-python", python_for_functions()])
    deadline = time.monotonic() + 90
    while True:
        # Until both functions' processes listen, a sign-up is refused (a blocking function
        # that cannot be reached refuses): the first one that gets through says they are up.
        response = http().post(f"{server.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k",
                               json={"email": unique_email("ready"), "password": "ready-password-1"}, timeout=TIMEOUT)
        if response.status_code == 200:
            break
        if time.monotonic() > deadline:
            output = server.output()
            server.stop()
            remove_tree(folder)
            remove_tree(copy)
            pytest.fail(f"no sign-up got through the blocking functions within 90 s ({response.text}):\n{output}")
        time.sleep(0.25)
    yield server
    server.stop()
    remove_tree(folder)
    remove_tree(copy)


def test_the_functions_answers_reach_the_apps_tokens_and_a_refusal_its_error(page, ns):
    email = unique_email("blocking")
    outcome = page.run("ns, email", """
      const a = A.open(ns);
      const created = await a.signUp(email, 'blocking-password-1');
      const token = await a.tokenResult();
      await a.signOut();
      let refused;
      try {
        await a.signUp('someone@blocked.example', 'blocking-password-1');
        refused = { code: 'none' };
      } catch (error) {
        refused = { code: error.code, message: String(error.message) };
      }
      const again = await a.signIn(email, 'blocking-password-1');
      const second = await a.tokenResult();
      return { uid: created.user.uid, displayName: created.user.displayName, claims: token.claims, refused,
               secondClaims: second.claims };
    """, ns, email)
    assert outcome["claims"]["role"] == "member" and outcome["claims"]["signedInVia"] == "hearth", outcome
    assert outcome["secondClaims"]["role"] == "member" and outcome["secondClaims"]["signedInVia"] == "hearth"
    assert outcome["refused"]["code"] == "auth/internal-error", outcome["refused"]
    assert "blocked domain" in outcome["refused"]["message"], outcome["refused"]
