#!/usr/bin/env python3
"""Runs `swift test --skip-build ARGS` for scripts/test's swift stage, and guards it against a
run that hangs: a hung run would otherwise hold the whole CI run until its time limit and say
nothing of where it was.

The run's output is passed through line by line (line-buffered with stdbuf, so the last lines are
never lost in a buffer). When nothing is printed for HEARTH_SWIFT_IDLE_SECONDS (480), or the run
passes HEARTH_SWIFT_MAX_SECONDS (2400), the run is taken as hung:

- the tests that started and did not end are printed;
- every thread's stack of the test process is written by gdb (Debian's; the toolchain's lldb
  wants a Python it does not have here) to test-output/swift-hang-<attempt>.txt, and the frames
  in this repository's code printed;
- the process group is killed, and the stage is run once more, whole.

The stage passes only when a run ends by itself with status 0; a hang is always reported, also
when the second run passes, so it is looked into.
"""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
IDLE_SECONDS = float(os.environ.get("HEARTH_SWIFT_IDLE_SECONDS", "480"))
MAX_SECONDS = float(os.environ.get("HEARTH_SWIFT_MAX_SECONDS", "2400"))
STARTED = re.compile(r"^◇ Test (?!case )(.+?) started\.$")
ENDED = re.compile(r"^[✔✘↷] Test (?!case )(.+?) (?:passed|failed|skipped)\b")


def run_once(arguments: list[str], attempt: int) -> tuple[int, bool]:
    """(exit status, hung) of one run."""
    command = ["stdbuf", "-oL", "-eL", "swift", "test", "--skip-build", *arguments]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    running: dict[str, float] = {}
    started = last_output = time.monotonic()
    pending = b""
    while True:
        now = time.monotonic()
        idle, total = now - last_output, now - started
        if idle > IDLE_SECONDS or total > MAX_SECONDS:
            why = f"nothing printed for {idle:.0f} s" if idle > IDLE_SECONDS else f"still running after {total:.0f} s"
            report_hang(process, running, why, attempt)
            return 1, True
        ready, _, _ = select.select([process.stdout], [], [], min(5.0, IDLE_SECONDS))
        if not ready:
            continue
        chunk = os.read(process.stdout.fileno(), 65536)
        if not chunk:
            break
        last_output = time.monotonic()
        sys.stdout.buffer.write(chunk)
        sys.stdout.flush()
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for raw in lines:
            line = raw.decode("utf-8", "replace")
            if match := STARTED.match(line):
                running[match.group(1)] = last_output
            elif match := ENDED.match(line):
                running.pop(match.group(1), None)
    return process.wait(), False


def descendants(pid: int) -> list[int]:
    found = []
    try:
        children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    except OSError:
        return found
    for child in map(int, children):
        found += [child, *descendants(child)]
    return found


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode("utf-8", "replace")
    except OSError:
        return ""  # ended meanwhile


def report_hang(process: subprocess.Popen, running: dict[str, float], why: str, attempt: int):
    print(f"\n=== swift: the run hung ({why}); tests started and not ended:", flush=True)
    now = time.monotonic()
    for name, since in sorted(running.items(), key=lambda item: item[1]):
        print(f"    {name} (for {now - since:.0f} s)")
    output = REPO / "test-output" / f"swift-hang-{attempt}.txt"
    output.parent.mkdir(parents=True, exist_ok=True)
    tests = [pid for pid in descendants(process.pid) if "xctest" in command_line(pid)]
    with output.open("w") as file:
        for pid in tests:
            try:
                stacks = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "set pagination off", "-ex", "thread apply all bt"],
                                        capture_output=True, text=True, timeout=300).stdout
                stacks = subprocess.run(["swift", "demangle", "--simplified"], input=stacks, capture_output=True, text=True,
                                        timeout=120).stdout or stacks
            except (OSError, subprocess.TimeoutExpired) as error:
                stacks = f"gdb could not read the stacks: {error}"
            file.write(stacks)
            print(f"=== the frames of Hearth's code in process {pid}'s threads (all of them: {output}):")
            thread = None
            for line in stacks.splitlines():
                if line.startswith("Thread "):
                    thread = line.strip()
                elif f" at {REPO}/Sources/" in line or f" at {REPO}/Tests/" in line:
                    if thread:
                        print(f"  {thread[:160]}")
                        thread = None
                    print(f"      {line.strip()[:240]}")
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def main() -> int:
    arguments = sys.argv[1:]
    status, hung = run_once(arguments, 1)
    if not hung:
        return status
    print("\n=== swift: running the whole stage again after the hang above", flush=True)
    status, hung_again = run_once(arguments, 2)
    print(f"\n=== swift: the first run hung (see above and test-output/swift-hang-1.txt); the second run "
          f"{'hung too' if hung_again else 'passed' if status == 0 else 'failed'}", flush=True)
    return 1 if hung_again else status


if __name__ == "__main__":
    sys.exit(main())
