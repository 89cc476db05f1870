"""The generations suite: the same scenarios on both generations of the official Firebase JS SDK
that apps ship with, side by side (issue 31): 8.10.1, the namespaced API most Firebase web apps
in the wild are written against (`firebase.auth()`, `firebase.database().ref()`,
`firebase.storage().ref()`, plain <script> tags; its auth module speaks the Identity Toolkit v3
API), and 9.8.1, the modular API (ES modules; Identity Toolkit v1), each over WebSocket and over
long-polling, in headless chromium against `hearth serve --emulator`.

Fixtures:

- ``combination`` (parametrized): sdk8-websocket, sdk8-long-polling, sdk9-websocket,
  sdk9-long-polling. In the long-polling mode the page sets `firebase:previous_websocket_failure`
  in localStorage before the SDK loads (both generations read it), so the page's first database
  connection starts with /.lp; a fresh browser's starts with /.ws.
- ``hearth`` (module): one server per test module, `--project hearth`, database and storage
  rules that read `auth` (generations_support.DATABASE_RULES, STORAGE_RULES); every test uses
  its own emails, namespace (``ns``) and storage paths. test_generations_email_enumeration has
  two servers of its own, with email enumeration protection on and off; test_generations_functions
  one with the Python functions of Tests/Functions/fixtures/python (``--functions``).
- ``admin``: firebase-admin's auth module pointed at that server (emulator mode: custom tokens
  unsigned, `Bearer owner`).
- ``page``: the generation's test page (sdk8.html or sdk9.html), freshly loaded for this test in
  the session's one chromium: ``page.run(params, body, *args)`` runs `async (params) => { body }`
  with ``A`` (the adapter: ``A.open(ns)`` gives an app instance with the same operations in
  both generations, adapter8.js and adapter9.js) and ``T`` (common.js). A failed test prints the
  page's errors, the SDK's database log, the account API requests the page made (method, path,
  body fields, status) and the server's output.

Environment: HEARTH_BINARY (default: `swift build --show-bin-path`/hearth), FIREBASE_JS_SDK_8
and FIREBASE_JS_SDK (the SDK folders), CHROMIUM_BINARY, CHROMEDRIVER, HEARTH_LOG_LEVEL.
"""

from __future__ import annotations

import os

import pytest

from generations_support import COMBINATIONS, GENERATIONS, PROJECT, PageServer, open_page, start_hearth
from harness import remove_tree
from realtime_support import new_chromium, new_namespace


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


@pytest.fixture(scope="module")
def hearth():
    server, folder = start_hearth("hearth-generations-")
    yield server
    server.stop()
    remove_tree(folder)


@pytest.fixture(scope="module")
def admin(hearth):
    """firebase-admin's auth module against ``hearth`` (emulator mode), as ``auth`` functions
    taking ``app=``: ``admin.auth`` and ``admin.app``."""
    import firebase_admin
    from firebase_admin import auth

    previous = os.environ.get("FIREBASE_AUTH_EMULATOR_HOST")
    os.environ["FIREBASE_AUTH_EMULATOR_HOST"] = hearth.url.replace("http://", "")
    app = firebase_admin.initialize_app(options={"projectId": PROJECT}, name=f"generations-{hearth.port}")

    class Admin:
        pass

    handle = Admin()
    handle.auth, handle.app = auth, app
    yield handle
    firebase_admin.delete_app(app)
    if previous is None:
        os.environ.pop("FIREBASE_AUTH_EMULATOR_HOST", None)
    else:
        os.environ["FIREBASE_AUTH_EMULATOR_HOST"] = previous


@pytest.fixture(scope="session")
def page_server():
    if any(folder is None for _, folder, _ in GENERATIONS.values()):
        pytest.skip("the official Firebase JS SDK browser builds were not found")
    server = PageServer()
    yield server
    server.close()


@pytest.fixture(scope="session")
def chromium():
    driver = new_chromium()
    yield driver
    driver.quit()


@pytest.fixture(params=COMBINATIONS, ids=[combination.id for combination in COMBINATIONS])
def combination(request):
    return request.param


@pytest.fixture
def ns():
    return new_namespace("gen")


@pytest.fixture
def page(request, chromium, page_server, hearth, combination):
    yield from open_page(request, chromium, page_server, hearth, combination)

