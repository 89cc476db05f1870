"""Records the official SDK's transcripts of the event scenarios (recorded/README.md says what a
transcript holds and how to replay one).

    HEARTH_BINARY=$(swift build --show-bin-path)/hearth .venv/bin/python Tests/Events/record.py [scenario ...]

Each scenario (all of scenarios/, or those named) runs through the official Firebase JS SDK
9.8.1 in headless chromium against a real `hearth serve --emulator`, exactly as the suite runs
it (driver.js's runScenario: each step, then a barrier), with every WebSocket of the page
wrapped (socket-recorder.js) and every call and event noted on one timeline (recorder.js). The
transcript goes to recorded/<scenario>.json. A scenario whose SDK run failed a step, or that
reported different events when run a second time, is reported and not written.

Environment: as the suite (HEARTH_BINARY, FIREBASE_JS_SDK, CHROMIUM_BINARY, CHROMEDRIVER).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# Run as a script, not by pytest (whose Tests/pytest.ini puts these on the path): the shared
# harness (Tests/) and the realtime suite's helpers (Tests/Realtime).
TESTS = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(TESTS), str(TESTS / "Realtime")]

from events_support import HERE, compare_runs, for_runner, index_rules, load_scenarios, prepare  # noqa: E402
from harness import temp_folder  # noqa: E402
from realtime_support import SDK, Page, PageServer, launch_hearth, new_chromium  # noqa: E402

RECORDED = HERE / "recorded"
FORMAT = 1
RECORDED_WITH = "firebase-js-sdk 9.8.1 (modular API), websocket, hearth serve --emulator"

RECORD_IN_PAGE = """async (scenario, ns, port) => {
  const recorder = await import('/events/recorder.js');
  return recorder.record(scenario, ns, port);
}"""


def split_timeline(timeline: list[dict], steps: int) -> tuple[list, list[list], list]:
    """The timeline cut at its step markers: (before the first step, each step's, after the last)."""
    setup: list[dict] = []
    parts: list[list[dict]] = [[] for _ in range(steps)]
    teardown: list[dict] = []
    current: list[dict] = setup
    for item in timeline:
        if item["kind"] == "step":
            current = teardown if item["index"] < 0 else parts[item["index"]]
            continue
        current.append(item)
    return setup, parts, teardown


ENTRY_ORDER = ("seq", "kind", "conn", "socket", "call", "of", "error", "url", "message", "event")


def ordered(item: dict) -> dict:
    """A timeline entry with its fields in one order (the page answers them sorted by name)."""
    if "event" in item:
        item = {**item, "event": {key: item["event"].get(key) for key in ("listener", "type", "key", "prev", "value")}}
    return {key: item[key] for key in sorted(item, key=lambda key: (ENTRY_ORDER.index(key) if key in ENTRY_ORDER
                                                                     else len(ENTRY_ORDER), key))}


def anonymize(value, ns: str, port: int):
    """The namespace and the port written as <ns> and <port>, wherever they appear in text."""
    text = json.dumps(value)
    text = text.replace(ns, "<ns>").replace(f":{port}", ":<port>")
    return json.loads(text)


def transcript(scenario: dict, ns: str, port: int, recorded: dict) -> dict:
    run, timeline = recorded["run"], recorded["timeline"]
    setup, parts, teardown = split_timeline([ordered(item) for item in timeline], len(scenario["steps"]))
    steps = []
    for index, step in enumerate(scenario["steps"]):
        steps.append({"index": index, "step": step, "timeline": parts[index],
                      "events": run["steps"][index], "error": run["errors"][index]})
    document = {
        "format": FORMAT, "scenario": scenario["name"], "recordedWith": RECORDED_WITH,
        "root": for_runner(scenario)["root"], "barrier": for_runner(scenario)["barrier"],
        "initial": scenario.get("initial"), "rules": index_rules(scenario),
        "setup": setup, "steps": steps, "teardown": teardown, "late": run["late"],
    }
    return anonymize(document, ns, port)


def write(path: Path, document: dict):
    # One timeline entry a line: readable, and a re-recording's diff shows what changed.
    lines = ["{"]
    keys = list(document)
    for position, key in enumerate(keys):
        comma = "," if position < len(keys) - 1 else ""
        value = document[key]
        if key in ("setup", "teardown") or key == "steps":
            lines.append(f"  {json.dumps(key)}: " + render_list(value, key == "steps") + comma)
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}{comma}")
    lines.append("}")
    path.write_text("\n".join(lines) + "\n")


def render_list(items: list, steps: bool) -> str:
    if not items:
        return "[]"
    if not steps:
        return "[\n" + ",\n".join(f"    {json.dumps(item)}" for item in items) + "\n  ]"
    rendered = []
    for step in items:
        inner = [f'      "index": {step["index"]}', f'      "step": {json.dumps(step["step"])}',
                 '      "timeline": ' + ("[]" if not step["timeline"] else "[\n"
                                         + ",\n".join(f"        {json.dumps(item)}" for item in step["timeline"])
                                         + "\n      ]"),
                 f'      "events": {json.dumps(step["events"])}', f'      "error": {json.dumps(step["error"])}']
        rendered.append("    {\n" + ",\n".join(inner) + "\n    }")
    return "[\n" + ",\n".join(rendered) + "\n  ]"


def record_all(scenarios: list[dict], folder: Path) -> list[str]:
    """Records each scenario twice against one server (data in ``folder``) and writes its
    transcript; answers the names of those not written."""
    server = launch_hearth(folder)
    page_server = PageServer(extra={"/events/driver.js": HERE / "driver.js", "/events/recorder.js": HERE / "recorder.js"})
    driver = new_chromium()
    failed = []
    try:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument",
                               {"source": (HERE / "socket-recorder.js").read_text()})
        page = Page(driver, page_server.url, server, "websocket").load()
        for scenario in scenarios:
            runs = []
            for _ in range(2):
                ns = prepare(server, scenario, "rec")
                runs.append((ns, page.call(RECORD_IN_PAGE, for_runner(scenario), ns, server.port)))
            (ns, first), (_, second) = runs
            errors = [error for error in first["run"]["errors"] if error]
            difference = compare_runs(scenario, first["run"], second["run"], "the first recording", "the second")
            if errors or difference:
                failed.append(scenario["name"])
                print(f"{scenario['name']}: not written\n{difference or errors}", file=sys.stderr)
                continue
            document = transcript(scenario, ns, server.port, first)
            write(RECORDED / f"{scenario['name']}.json", document)
            print(f"{scenario['name']}: {sum(len(step['timeline']) for step in document['steps'])} entries")
    finally:
        driver.quit()
        page_server.close()
        server.stop()
    return failed


def main(names: list[str]) -> int:
    if SDK is None:
        print("the official Firebase JS SDK 9.8.1 was not found (set FIREBASE_JS_SDK)", file=sys.stderr)
        return 2
    scenarios = [scenario for scenario in load_scenarios() if not names or scenario["name"] in names]
    missing = set(names) - {scenario["name"] for scenario in scenarios}
    if missing:
        print(f"no such scenarios: {', '.join(sorted(missing))}", file=sys.stderr)
        return 2
    RECORDED.mkdir(exist_ok=True)
    with temp_folder("hearth-record-") as folder:
        failed = record_all(scenarios, folder)
    print(f"{len(scenarios) - len(failed)} recorded, {len(failed)} not: {', '.join(failed)}" if failed
          else f"{len(scenarios)} recorded in {RECORDED}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
