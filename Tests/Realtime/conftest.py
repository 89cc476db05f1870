"""The realtime suite: the official Firebase JS SDK 9.8.1 (browser builds) in headless Debian
chromium, against a real `hearth serve --emulator`, over Firebase's realtime wire protocol
(WebSocket at /.ws, long-polling at /.lp).

Fixtures:

- ``hearth`` (session): one server for the whole run (open rules by default; every test uses a
  namespace of its own, ``ns``, and deploys its own rules there when it needs them).
  ``hearth.get/put/rest/deploy_rules`` speak REST as the admin (`Bearer owner`).
- ``transport``: every test runs once per mode: "websocket" (a fresh browser) and
  "long-polling" (a browser whose WebSocket failed before: `firebase:previous_websocket_failure`
  is set in localStorage before the SDK loads, so it starts with /.lp and upgrades later).
  In that mode only the page's first connection(s) start on /.lp: once one has upgraded, the SDK
  clears the flag and later instances go straight to /.ws. The tests whose subject is one
  connection (transport, presence) use the first one.
  HEARTH_REALTIME_TRANSPORTS=websocket,long-polling,long-polling-only adds a mode with no
  WebSocket in the browser at all (long-polling throughout). That mode is opt-in. Every
  long-polling instance holds a request, and chromium allows 6 connections per host, so tests
  with many instances in one page can wait on the browser.
- ``page``: the test page, freshly loaded in the session's chromium for this test and mode
  (so every app instance the test makes is new): ``page.call(js_function_source, *args)``.
- ``ns``: a fresh database name.
- ``own_hearth``: a server of the test's own (to stop and restart).

Environment: HEARTH_BINARY (default: `swift build --show-bin-path`/hearth), FIREBASE_JS_SDK,
CHROMIUM_BINARY (/usr/bin/chromium), CHROMEDRIVER (/usr/bin/chromedriver), HEARTH_LOG_LEVEL
(the server's, default warning).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from harness import remove_tree
from realtime_support import SDK, Page, PageServer, launch_hearth, new_chromium, new_namespace

TRANSPORTS = [mode.strip() for mode in os.environ.get("HEARTH_REALTIME_TRANSPORTS", "websocket,long-polling").split(",")
              if mode.strip()]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


@pytest.fixture(scope="session")
def hearth():
    folder = Path(tempfile.mkdtemp(prefix="hearth-realtime-"))
    server = launch_hearth(folder)
    yield server
    server.stop()
    remove_tree(folder)


@pytest.fixture
def own_hearth(request):
    """A server of the test's own, on its own data folder (stopped at the end)."""
    folder = Path(tempfile.mkdtemp(prefix="hearth-realtime-own-"))
    server = launch_hearth(folder)
    yield server
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        print("the test's own hearth, output (last lines):\n" + server.output())
    server.stop()
    remove_tree(folder)


@pytest.fixture(scope="session")
def page_server():
    if SDK is None:
        pytest.skip("the official Firebase JS SDK was not found")
    server = PageServer()
    yield server
    server.close()


@pytest.fixture(scope="session")
def chromium():
    driver = new_chromium()
    yield driver
    driver.quit()


@pytest.fixture(params=TRANSPORTS)
def transport(request):
    return request.param


@pytest.fixture
def ns():
    return new_namespace()


@pytest.fixture
def page(request, chromium, page_server, hearth, transport):
    """The test page, loaded fresh for this test; afterwards the tab goes to about:blank (closing
    every connection the test opened) and other tabs are closed. A failed test reports the
    page's errors, the SDK's log and the server's output."""
    if transport.startswith("long-polling") and not hearth.serves_long_polling():
        pytest.fail("the server answers /.lp with 404: long-polling is not implemented", pytrace=False)
    main = chromium.current_window_handle
    test_page = Page(chromium, page_server.url, hearth, transport).load()
    test_page.network()  # forget what came before
    yield test_page
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        print(test_page.diagnostics())
        print("hearth output (last lines):\n" + hearth.output())
    for handle in chromium.window_handles:
        if handle != main:
            chromium.switch_to.window(handle)
            chromium.close()
    chromium.switch_to.window(main)
    chromium.get("about:blank")
