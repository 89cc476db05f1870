"""The event-sequence suite: every scenario in scenarios/ (writes and listens of every query
form) runs through the official Firebase JS SDK 9.8.1 in headless chromium, which records the
events its listeners report, step by step; then through Hearth's own clients (Web/lib/hearth.js
in the same chromium, and the Swift HearthClient through `hearth-bench client-events`), whose
events must be the same, event by event. Nothing expected is written by hand: the SDK's
sequences are recorded in the run (once per session, written to
<pytest tmp>/events/sdk-recordings.json for reading).

A scenario (scenarios/<name>.json; "note" is optional):

    {"name": "<name>", "initial": <the value at /s, written by the admin before clients open, or null>,
     "steps": [
       {"do": "listen", "id": "L1", "path": "items", "query": {"orderBy": "child:score" | "key" | "value" | "priority",
          "startAt" | "startAfter" | "endAt" | "endBefore" | "equalTo": [value] or [value, key],
          "limitToFirst" | "limitToLast": n}, "events": [event types, registered in this order]},
       {"do": "unlisten", "id": "L1"},
       {"do": "set", "path": "items/a", "value": ..., "priority": optional},
       {"do": "update", "path": "items", "value": {"a/score": 3, "b": null}},
       {"do": "remove", "path": "items/a"},  {"do": "setPriority", "path": "items/a", "priority": 5},
       {"do": "transaction", "path": "counter", "increment": 1},          (current ?? 0) + increment
       {"do": "remote", "op": "set" | "update" | "remove" | "setPriority" | "transaction", ...the same fields},
       {"do": "offline"}, {"do": "online"}]}

Paths are relative to /s. Server values are written as they travel ({".sv": "timestamp"},
{".sv": {"increment": n}}). The rules of each run open everything and add the `.indexOn` its
ordered listens need. Numbers from 1e12 up compare as "<timestamp>". Within a step each
listener's events must match in order; how different listeners' events interleave is not
compared (see events_support.compare_runs).

Fixtures (all for the session: one server, one chromium, one page):

- ``hearth``: `hearth serve --emulator --web-root Web` (so hearth.js is this working copy's);
  every run of a scenario gets a fresh namespace with the scenario's index rules and initial
  value (events_support.prepare).
- ``page``: the realtime suite's page (SDK loaded, WebSocket), where driver.js runs scenarios.
- ``sdk_recordings``: {scenario name: run} recorded through the SDK.

Environment: as the realtime suite (HEARTH_BINARY, FIREBASE_JS_SDK, CHROMIUM_BINARY,
CHROMEDRIVER, HEARTH_LOG_LEVEL), and HEARTH_BENCH_BINARY for the Swift runner (default:
hearth-bench beside HEARTH_BINARY, else `swift build --show-bin-path`/hearth-bench).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from events_support import HERE, REPO, load_scenarios, run_in_page
from harness import remove_tree
from realtime_support import SDK, Page, PageServer, launch_hearth, new_chromium

SCENARIOS = load_scenarios()
_written: list[Path] = []


def pytest_generate_tests(metafunc):
    if "scenario" in metafunc.fixturenames:
        metafunc.parametrize("scenario", SCENARIOS, ids=[scenario["name"] for scenario in SCENARIOS])


@pytest.fixture(scope="session")
def hearth():
    folder = Path(tempfile.mkdtemp(prefix="hearth-events-"))
    server = launch_hearth(folder, extra_args=["--web-root", str(REPO / "Web")])
    yield server
    server.stop()
    remove_tree(folder)


@pytest.fixture(scope="session")
def page_server():
    if SDK is None:
        pytest.skip("the official Firebase JS SDK was not found")
    server = PageServer(extra={"/events/driver.js": HERE / "driver.js"})
    yield server
    server.close()


@pytest.fixture(scope="session")
def chromium():
    driver = new_chromium()
    yield driver
    driver.quit()


@pytest.fixture(scope="session")
def page(chromium, page_server, hearth):
    return Page(chromium, page_server.url, hearth, "websocket").load()


@pytest.fixture(scope="session")
def output_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("events")


@pytest.fixture(scope="session")
def sdk_recordings(page, hearth, output_folder):
    """Every scenario run through the official SDK, once for the session."""
    recordings = {scenario["name"]: run_in_page(page, hearth, "sdk", scenario) for scenario in SCENARIOS}
    file = output_folder / "sdk-recordings.json"
    file.write_text(json.dumps(recordings, indent=1))
    _written.append(file)
    return recordings


def pytest_terminal_summary(terminalreporter):
    for file in _written:
        terminalreporter.write_line(f"the official SDK's recorded event sequences: {file}")
