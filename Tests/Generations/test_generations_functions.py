"""Callable functions on both SDK generations: Firebase's own functions SDK calls a function
written with Firebase's Python functions SDK (Tests/Functions/fixtures/python, unchanged) through
`hearth serve --functions`, at the emulator's path on Hearth's port, from a page on another
origin (CORS). SDK 9.8.1: `getFunctions(app, region)` + `connectFunctionsEmulator` +
`httpsCallable`; SDK 8.10.1: `app.functions(region)` + `useEmulator` + `httpsCallable`
(adapter9.js, adapter8.js: ``a.call(name, data, {region})``).

The fixture's `addnumbers` returns {"sum": a + b, "uid": the caller's uid or None} and raises
HttpsError INVALID_ARGUMENT "a and b must be numbers" with details {"got": [a, b]}.

Each scenario runs on the suite's four combinations (sdk8/sdk9 × websocket/long-polling), as the
other modules do; the transport is the database's and changes nothing here.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from generations_support import (REPO, PROJECT, TIMEOUT, http, python_for_functions, skip_without_sdks, start_hearth,
                                 unique_email)
from harness import remove_tree

skip_without_sdks()

FUNCTIONS = REPO / "Tests" / "Functions" / "fixtures" / "python"
REGION = "us-central1"
ADD_NUMBERS = f"/{PROJECT}/{REGION}/addnumbers"


@pytest.fixture(scope="module")
def hearth():
    """The suite's server (emulator mode, its rules) with the Python fixture's functions, once
    its callable answers (each function's functions-framework process starts with the server)."""
    # A copy: Python writes its bytecode cache next to main.py.
    copy = Path(tempfile.mkdtemp(prefix="hearth-generations-functions-code-"))
    shutil.copytree(FUNCTIONS, copy / "functions", ignore=shutil.ignore_patterns("__pycache__"))
    server, folder = start_hearth("hearth-generations-functions-",
                                  ["--functions", str(copy / "functions"), "--functions-python", python_for_functions()])
    deadline = time.monotonic() + 90
    while True:
        try:
            response = http().post(f"{server.url}{ADD_NUMBERS}", json={"data": {"a": 0, "b": 0}}, timeout=TIMEOUT)
            if response.status_code == 200:
                break
            last = f"{response.status_code} {response.text}"
        except OSError as error:
            last = str(error)
        if time.monotonic() > deadline:
            output = server.output()
            server.stop()
            remove_tree(folder)
            remove_tree(copy)
            pytest.fail(f"the callable did not answer within 90 s (last: {last}):\n{output}")
        time.sleep(0.25)
    yield server
    server.stop()
    remove_tree(folder)
    remove_tree(copy)


def code(page, name: str) -> str:
    """A FunctionsError's code as the generation spells it: SDK 9 prefixes it ("functions/…"),
    SDK 8 does not."""
    return f"functions/{name}" if page.generation == "sdk9" else name


# The outcome of a call that should fail: the error's code, message and details.
FAILURE = """
  async function failure(promise, what) {
    try {
      const value = await promise;
      throw new Error(`${what} succeeded (${JSON.stringify(value)}) but should have failed`);
    } catch (error) {
      if (error.message && error.message.endsWith('but should have failed')) throw error;
      return { code: error.code || null, message: String(error.message || error),
               details: error.details === undefined ? '(undefined)' : error.details };
    }
  }
"""


def function_requests(page) -> list[tuple[str, str, int | None]]:
    """The page's requests to a function path since the last look (method, URL, status), from
    chromium's performance log; the browser's preflights are left out."""
    seen, statuses = {}, {}
    for entry in page.driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        params = message.get("params", {})
        if message.get("method") == "Network.requestWillBeSent":
            request = params.get("request", {})
            if f"/{PROJECT}/" in request.get("url", "") and request.get("method") != "OPTIONS":
                seen[params["requestId"]] = (request.get("method"), request.get("url"))
        elif message.get("method") == "Network.responseReceived":
            statuses[params.get("requestId")] = params.get("response", {}).get("status")
    return [(method, url, statuses.get(request_id)) for request_id, (method, url) in seen.items()]


def test_a_callable_answers_signed_out_and_sees_the_signed_in_caller(page, ns, admin, hearth):
    email = unique_email("callable")
    function_requests(page)  # forget the page's earlier requests
    outcome = page.run("ns, email", """
      const a = A.open(ns);
      const signedOut = await a.call('addnumbers', { a: 1, b: 2 });
      const created = await a.signUp(email, 'callable-password-1');
      const signedIn = await a.call('addnumbers', { a: 2, b: 3.5 });
      // Another instance, signed out, still calls as nobody.
      const other = await A.open(ns).call('addnumbers', { a: 10, b: -4 });
      return { signedOut, uid: created.user.uid, signedIn, other };
    """, ns, email)
    assert outcome["signedOut"] == {"sum": 3, "uid": None}
    assert outcome["signedIn"] == {"sum": 5.5, "uid": outcome["uid"]}
    assert outcome["other"] == {"sum": 6, "uid": None}
    # The uid the function saw is the account the SDK created.
    assert admin.auth.get_user_by_email(email, app=admin.app).uid == outcome["uid"]
    # Every call went to Hearth's own port, at the emulator's path, from the page's other origin.
    assert not page.page_url.endswith(f":{hearth.port}")
    calls = function_requests(page)
    assert calls == [("POST", f"{hearth.url}{ADD_NUMBERS}", 200)] * 3, calls


def test_an_https_error_reaches_the_app_with_its_code_message_and_details(page, ns):
    outcome = page.run("ns", FAILURE + """
      const a = A.open(ns);
      const signedOut = await failure(a.call('addnumbers', { a: 'x', b: 1 }), 'a call with a string');
      await a.signInAnonymously();
      const signedIn = await failure(a.call('addnumbers', { b: 1 }), 'a call without a');
      return { signedOut, signedIn };
    """, ns)
    assert outcome["signedOut"] == {"code": code(page, "invalid-argument"), "message": "a and b must be numbers",
                                    "details": {"got": ["x", 1]}}
    # A missing argument is None in Python, null in the details.
    assert outcome["signedIn"]["code"] == code(page, "invalid-argument"), outcome["signedIn"]
    assert outcome["signedIn"]["details"] == {"got": [None, 1]}, outcome["signedIn"]


def test_an_unknown_function_is_not_found(page, ns, hearth):
    """A name no function has, or a function's name in another region: not a function path, so
    the database answers its 404 (`{"error": "Not found."}`), which both SDKs read by the HTTP
    status as not-found (as they read the Firebase emulator's plain-text 404); the message is the
    code, for the body has no callable error object."""
    function_requests(page)
    outcome = page.run("ns", FAILURE + """
      const a = A.open(ns);
      const unknown = await failure(a.call('nosuchfunction', { a: 1, b: 2 }), 'a call to an unknown function');
      const elsewhere = await failure(a.call('addnumbers', { a: 1, b: 2 }, { region: 'europe-west1' }),
                                      'a call in another region');
      // The page still calls the function that exists.
      const known = await a.call('addnumbers', { a: 1, b: 2 });
      return { unknown, elsewhere, known };
    """, ns)
    for failed in (outcome["unknown"], outcome["elsewhere"]):
        assert failed["code"] == code(page, "not-found"), failed
        assert failed["message"] == "not-found", failed
        assert failed["details"] in ("(undefined)", None), failed
    assert outcome["known"] == {"sum": 3, "uid": None}
    calls = function_requests(page)
    assert [(method, status) for method, _, status in calls] == [("POST", 404), ("POST", 404), ("POST", 200)], calls
    assert calls[1][1] == f"{hearth.url}/{PROJECT}/europe-west1/addnumbers", calls


def test_the_callable_path_answers_cors_for_the_headers_the_sdks_send(hearth):
    """What chromium needs for a callable from another origin: the preflight for a POST with the
    headers both SDKs send (Content-Type: application/json, Authorization once signed in; SDK 9
    also X-Firebase-AppCheck with App Check, X-Firebase-Instance-ID-Token with messaging)
    allows them, and the answer, the function's own or the server's refusal, allows any origin."""
    origin = "http://127.0.0.1:1"
    asked = "authorization,content-type,x-firebase-appcheck,x-firebase-instance-id-token"
    preflight = http().options(f"{hearth.url}{ADD_NUMBERS}", timeout=TIMEOUT, headers={
        "Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": asked})
    assert preflight.status_code in (200, 204), preflight.text
    assert preflight.headers.get("Access-Control-Allow-Origin") == "*"
    assert "POST" in [m.strip() for m in preflight.headers.get("Access-Control-Allow-Methods", "").split(",")]
    allowed = {h.strip().lower() for h in preflight.headers.get("Access-Control-Allow-Headers", "").split(",")}
    assert set(asked.split(",")) <= allowed, preflight.headers
    for body, headers, status in ((
            {"data": {"a": 1, "b": 2}}, {}, 200),
            ({"data": {"a": "x", "b": 2}}, {}, 400),
            ({"data": {"a": 1, "b": 2}}, {"Authorization": "Bearer not-a-token"}, 401)):
        answer = http().post(f"{hearth.url}{ADD_NUMBERS}", json=body, timeout=TIMEOUT, headers={"Origin": origin, **headers})
        assert answer.status_code == status, answer.text
        assert answer.headers.get("Access-Control-Allow-Origin") == "*", (status, answer.headers)
        assert answer.headers.get("Content-Type", "").startswith("application/json"), answer.headers
