"""Hearth's Swift client (HearthClient), driven by `hearth-bench client-events --url URL --ns NS
--scenario FILE`, runs every scenario: its listeners must report the events the official SDK
reported, step by step and event by event (timestamps normalized). Skipped while the runner has
no `client-events` command.

The runner's contract:
- The namespace NS on the server at URL is ready when it starts: the scenario's rules are
  deployed and its `initial` value is written at /<root> (do not write it again).
- FILE is the scenario (the format of scenarios/*.json) with two more fields: "root" (the
  location every step's path is relative to, "s") and "barrier" (where barriers write,
  "barrier"). Open two clients on URL and NS: the local one runs every step, the remote one
  the "remote" steps (op: set, update, remove, setPriority or transaction, with the same fields
  as the local steps).
- For each listen step, register one observer per listed event type, in the listed order; an
  event is recorded as {"listener": id, "type": event type (or "cancel"), "key": snapshot key
  (null at the root), "prev": previous sibling's key (null for value, child_removed and cancel,
  and for a first child), "value": the snapshot's value with priorities (".priority" in
  objects, {".value": v, ".priority": p} for a leaf with one)}.
- A transaction step runs (current ?? 0) + increment.
- After every step while online (after an "online" step too), set /<barrier>/<n> (n = 1, 2, …
  counting every barrier) to n and wait for the server's answer. A write step (and a remote
  step) waits for its own answer first. While offline there is no barrier, and write steps do
  not wait (their answers come after "online").
- Every event goes to the step that was running when it was reported.
- Print one JSON object on stdout: {"steps": [[event, ...] for each step], "errors": [null or a
  message for each step]} ("errors" may be left out when there are none), and exit 0. Exit
  non-zero only if the scenario could not be run at all (message on stderr).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from events_support import RunnerMissing, bench_binary, compare_runs, run_swift

_missing: list[str] = []


@pytest.fixture(scope="session")
def swift_runner():
    try:
        binary = bench_binary()
    except RunnerMissing as error:
        pytest.fail(str(error), pytrace=False)
    if not Path(binary).is_file():
        pytest.fail(f"{binary} does not exist: build hearth-bench (swift build), or set HEARTH_BENCH_BINARY", pytrace=False)
    return binary


@pytest.fixture(scope="session")
def swift_folder(output_folder):
    folder = output_folder / "swift-scenarios"
    folder.mkdir()
    return folder


def test_the_swift_client_reports_the_sdks_events(scenario, sdk_recordings, swift_runner, swift_folder, hearth):
    if _missing:
        pytest.skip(_missing[0])
    try:
        actual = run_swift(swift_runner, hearth, scenario, swift_folder)
    except RunnerMissing as error:
        _missing.append(str(error))
        pytest.skip(str(error))
    difference = compare_runs(scenario, sdk_recordings[scenario["name"]], actual, "the SDK", "the Swift client")
    stderr = actual["stderr"].strip()
    assert difference is None, (difference + f"\n(the Swift client ran in namespace {actual['ns']}"
                                + (f"; its stderr (end):\n{stderr[-2000:]})" if stderr else ")"))
