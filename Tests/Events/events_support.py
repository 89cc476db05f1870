"""Helpers of the event-sequence suite (fixtures are in conftest.py): the scenarios, preparing a
namespace for one run of a scenario, running a scenario in the page, the Swift runner, and
comparing two runs event by event with a readable diff.

A run is ``{"steps": [[event, ...] per step], "errors": [null | text per step], "late": [...]}``;
an event is ``{"listener", "type", "key", "prev", "value"}`` (``value``: the snapshot's
``exportVal()``, priorities included).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import harness
from realtime_support import new_namespace  # the realtime suite's helpers (Tests/Realtime)

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

SCENARIOS_DIR = HERE / "scenarios"
ROOT = "s"            # every scenario's paths are under /s
BARRIER = "barrier"   # the barriers' writes go to /barrier/<n>
TIMESTAMP_FLOOR = 1e12
STEP_KINDS = {"listen", "unlisten", "set", "update", "remove", "setPriority", "transaction", "remote", "offline", "online"}
EVENT_TYPES = {"child_added", "child_changed", "child_removed", "child_moved", "value"}


# MARK: - Scenarios

def load_scenarios() -> list[dict]:
    """Every scenario file, checked for the format's mistakes (a bad file fails the collection
    with its name rather than as an odd run)."""
    scenarios = []
    for path in sorted(SCENARIOS_DIR.glob("*.json")):
        scenario = json.loads(path.read_text())
        problems = check_scenario(scenario)
        if problems:
            raise ValueError(f"{path.name}: " + "; ".join(problems))
        if scenario["name"] != path.stem:
            raise ValueError(f"{path.name}: its name is {scenario['name']!r}, not the file's name")
        scenario["file"] = str(path)
        scenarios.append(scenario)
    return scenarios


def check_scenario(scenario: dict) -> list[str]:
    problems = []
    if not isinstance(scenario.get("name"), str):
        problems.append("no name")
    if "initial" not in scenario:
        problems.append("no initial value (give null for none)")
    listening: set[str] = set()
    for index, step in enumerate(scenario.get("steps") or []):
        kind = step.get("do")
        where = f"step {index}"
        if kind not in STEP_KINDS:
            problems.append(f"{where}: unknown step {kind!r}")
            continue
        if kind == "listen":
            if step.get("id") in listening:
                problems.append(f"{where}: {step.get('id')} is already listening")
            listening.add(step.get("id"))
            bad = set(step.get("events") or []) - EVENT_TYPES
            if bad or not step.get("events"):
                problems.append(f"{where}: events must be some of {sorted(EVENT_TYPES)}")
        elif kind == "unlisten":
            if step.get("id") not in listening:
                problems.append(f"{where}: {step.get('id')} is not listening")
            listening.discard(step.get("id"))
        elif kind == "remote":
            if step.get("op") not in {"set", "update", "remove", "setPriority", "transaction"}:
                problems.append(f"{where}: unknown remote op {step.get('op')!r}")
        if kind not in {"listen", "unlisten", "offline", "online"} and not isinstance(step.get("path"), str):
            problems.append(f"{where}: no path")
    if not scenario.get("steps"):
        problems.append("no steps")
    return problems


def index_rules(scenario: dict) -> dict:
    """Open rules, with the `.indexOn` every ordered listen of the scenario needs (a child
    path, or `.value`), at the listened location."""
    rules: dict = {".read": True, ".write": True}
    for step in scenario["steps"]:
        order = (step.get("query") or {}).get("orderBy") if step.get("do") == "listen" else None
        if order is None or order in ("key", "priority"):
            continue
        index = ".value" if order == "value" else order[len("child:"):]
        node = rules
        for segment in [ROOT, *[part for part in step.get("path", "").split("/") if part]]:
            node = node.setdefault(segment, {})
        wanted = node.setdefault(".indexOn", [])
        if index not in wanted:
            wanted.append(index)
    return {"rules": rules}


def prepare(hearth, scenario: dict, prefix: str) -> str:
    """A fresh namespace for one run of `scenario`: its index rules deployed and its initial
    value written at /s by the admin, before any client opens. Returns the namespace."""
    ns = new_namespace(prefix)
    hearth.deploy_rules(ns, index_rules(scenario))
    if scenario.get("initial") is not None:
        hearth.put(ROOT, ns, scenario["initial"])
    return ns


def for_runner(scenario: dict) -> dict:
    """The scenario as given to a runner: the file's content plus where it runs."""
    runnable = {key: value for key, value in scenario.items() if key != "file"}
    runnable["root"] = ROOT
    runnable["barrier"] = BARRIER
    return runnable


# MARK: - Running in the page

RUN_IN_PAGE = """async (implementation, scenario, ns, options) => {
  const driver = await import('/events/driver.js');
  return driver.run(implementation, scenario, ns, options);
}"""


def run_in_page(page, hearth, implementation: str, scenario: dict) -> dict:
    ns = prepare(hearth, scenario, "ev")
    result = page.call(RUN_IN_PAGE, implementation, for_runner(scenario), ns,
                       {"origin": hearth.url, "port": hearth.port})
    result["ns"] = ns
    return result


# MARK: - The Swift client's runner

class RunnerMissing(Exception):
    """The hearth-bench binary has no `client-events` command (yet)."""


def bench_binary() -> str:
    """$HEARTH_BENCH_BINARY; else hearth-bench beside $HEARTH_BINARY; else `swift build
    --show-bin-path`/hearth-bench."""
    try:
        return harness.bench_binary()
    except RuntimeError as error:
        raise RunnerMissing(str(error)) from error


UNSUPPORTED = re.compile(r"unexpected argument|unknown (sub)?command|unknown option|no such (sub)?command", re.I)


def run_swift(binary: str, hearth, scenario: dict, folder: Path, timeout: float = 60) -> dict:
    """Runs `hearth-bench client-events --url … --ns … --scenario FILE` for one scenario (its
    namespace prepared here first) and returns its run. Raises RunnerMissing when the binary
    does not know the command."""
    ns = prepare(hearth, scenario, "ev-swift")
    file = folder / f"{scenario['name']}.json"
    file.write_text(json.dumps(for_runner(scenario), indent=1))
    command = [binary, "client-events", "--url", hearth.url, "--ns", ns, "--scenario", str(file)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as error:
        raise AssertionError(f"{' '.join(command)} ran for more than {timeout} s\n"
                             f"stderr (end):\n{(error.stderr or '')[-3000:] if isinstance(error.stderr, str) else ''}")
    if done.returncode != 0:
        if UNSUPPORTED.search(done.stderr) and "client-events" not in help_text(binary):
            raise RunnerMissing(f"{binary} has no `client-events` command yet ({done.stderr.strip().splitlines()[0]}): "
                                "the Swift client's event sequences are not compared")
        raise AssertionError(f"{' '.join(command)} exited with {done.returncode}\nstderr (end):\n{done.stderr[-3000:]}")
    try:
        result = json.loads(done.stdout)
    except json.JSONDecodeError as error:
        raise AssertionError(f"the runner's stdout is not one JSON object ({error}):\n{done.stdout[:2000]}")
    if not isinstance(result, dict) or not isinstance(result.get("steps"), list):
        raise AssertionError(f"the runner's stdout has no \"steps\" list:\n{done.stdout[:2000]}")
    result.setdefault("errors", [None] * len(result["steps"]))
    result.setdefault("late", [])
    result["ns"] = ns
    result["stderr"] = done.stderr
    return result


def help_text(binary: str) -> str:
    try:
        done = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout + done.stderr


# MARK: - Comparing

def normalize(value):
    """Numbers from 1e12 up (server timestamps) become "<timestamp>"; whole floats become ints."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        if value >= TIMESTAMP_FLOOR:
            return "<timestamp>"
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return value
    if isinstance(value, list):
        return [normalize(item) for item in value]
    if isinstance(value, dict):
        return {key: normalize(item) for key, item in value.items()}
    return value


def canonical_steps(run: dict) -> list[list[dict]]:
    """The run's events with timestamps normalized. An event that repeats what the listener last
    reported for the same location, and differs from it only in a timestamp, is dropped: a
    client raises it when the server's time differs from the client's estimate, and not when
    the two fall in the same millisecond, so it is noise once timestamps are normalized."""
    seen: dict[tuple, tuple] = {}  # (listener, "value" | child key) -> (raw value, normalized value)
    steps = []
    for events in run["steps"]:
        kept = []
        for event in events:
            event = {name: event.get(name) for name in ("listener", "type", "key", "prev", "value")}
            raw, value = event["value"], normalize(event["value"])
            event["value"] = value
            kind = event["type"]
            slot = (event["listener"], "value") if kind == "value" else (event["listener"], "child", event["key"])
            if kind in ("value", "child_changed") and slot in seen:
                last_raw, last_value = seen[slot]
                if last_value == value and last_raw != raw:
                    seen[slot] = (raw, value)
                    continue
            if kind == "child_removed":
                seen.pop(slot, None)
            elif kind != "cancel":
                seen[slot] = (raw, value)
            kept.append(event)
        steps.append(kept)
    return steps


def describe_step(step: dict) -> str:
    return json.dumps(step, separators=(", ", ": "))


def describe_event(event: dict | None) -> str:
    if event is None:
        return "(none)"
    text = f"{event['listener']} {event['type']} key={json.dumps(event['key'])}"
    if event["type"] not in ("value", "child_removed", "cancel"):
        text += f" prev={json.dumps(event['prev'])}"
    return text + f" value={json.dumps(event['value'], sort_keys=True)}"


def by_listener(events: list[dict]) -> dict[str, list[dict]]:
    grouped: dict[str, list[dict]] = {}
    for event in events:
        grouped.setdefault(event["listener"], []).append(event)
    return grouped


def compare_runs(scenario: dict, expected: dict, actual: dict, expected_name: str = "the SDK",
                 actual_name: str = "the client", max_lines: int = 80, same_errors_pass: bool = False) -> str | None:
    """None when the two runs report the same events (timestamps normalized) in every step and
    neither had a step error (with ``same_errors_pass``: the same step errors in both);
    otherwise a readable report: every step that differs, with the first differing event and
    both sequences of the first such step in full.

    Within a step, each listener's events must be the same, in the same order; how the events
    of different listeners interleave is not compared. (The official SDK itself interleaves them
    in the order the server's messages come, which for listens of different queries is the
    server's choice: two runs of the SDK differ there.) An interleaving that differs is noted."""
    lines: list[str] = []
    notes: list[str] = []
    steps = scenario["steps"]
    compared_errors = not (same_errors_pass and (expected.get("errors") or []) == (actual.get("errors") or []))
    for name, run in ((expected_name, expected), (actual_name, actual)) if compared_errors else ():
        for index, error in enumerate(run.get("errors") or []):
            if error:
                lines.append(f"step {index} {describe_step(steps[index]) if index < len(steps) else ''}: "
                             f"{name} failed: {error}")
    ours, theirs = canonical_steps(expected), canonical_steps(actual)
    if len(theirs) != len(ours):
        lines.append(f"{actual_name} reported {len(theirs)} steps, the scenario has {len(ours)}")
    detailed = False
    for index, (want, got) in enumerate(zip(ours, theirs)):
        if want == got:
            continue
        wanted, reported = by_listener(want), by_listener(got)
        if wanted == reported:
            notes.append(f"note: step {index}: the same events per listener, interleaved differently across listeners")
            continue
        for listener in [*wanted, *[name for name in reported if name not in wanted]]:
            a, b = wanted.get(listener, []), reported.get(listener, [])
            if a == b:
                continue
            first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            lines.append(f"step {index} {describe_step(steps[index])}: listener {listener}: {len(a)} events expected, "
                         f"{len(b)} reported; first difference at its event {first}:")
            lines.append(f"    expected: {describe_event(a[first] if first < len(a) else None)}")
            lines.append(f"    reported: {describe_event(b[first] if first < len(b) else None)}")
        if not detailed:
            detailed = True
            lines.append(f"  {expected_name}, step {index} (every listener):")
            lines.extend(f"    {i:2} {describe_event(event)}" for i, event in enumerate(want))
            lines.append(f"  {actual_name}, step {index} (every listener):")
            lines.extend(f"    {i:2} {describe_event(event)}" for i, event in enumerate(got))
    for name, run in ((expected_name, expected), (actual_name, actual)):
        if run.get("late"):
            lines.append(f"{name} reported {len(run['late'])} events after the last step: "
                         + "; ".join(describe_event(event) for event in canonical_steps({"steps": [run["late"]]})[0][:5]))
    if not lines:
        return None
    if len(lines) > max_lines:
        lines = lines[:max_lines] + [f"... ({len(lines) - max_lines} more lines)"]
    return f"scenario {scenario['name']} ({scenario['file']}):\n" + "\n".join(lines + notes)
