"""Helpers of the operations suite (online backups, restores to a moment of a database's
history, and a disk that fills up, tried against real `hearth serve` processes and the `hearth`
command line):
- ``launch(data, *args, demo=False)``: starts ``hearth serve`` on ``data`` (any free port, admin
  token ``ADMIN_TOKEN``); with ``demo`` it seeds the demo app and waits for it. Returns a
  ``Served`` with ``url``, ``process`` and ``output()``; ``stop(served)`` ends it (SIGTERM).
- ``hearth(*args)``: runs the command line and returns the finished process (output captured).
- ``rest(served, method, path, body=None)``: one REST call as admin: ``(status, parsed JSON)``.
"""

from __future__ import annotations

import json
import os
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import harness
from harness import HearthDidNotStart, HearthProcess, Output

ADMIN_TOKEN = "operations-admin-token"
STARTUP_SECONDS = 60


@dataclass
class Served:
    url: str
    data: Path
    process: subprocess.Popen
    lines: list[str] = field(default_factory=list)
    log: Output | None = None

    def output(self) -> str:
        return "".join(self.lines)


def launch(data: Path, *args: str, demo: bool = False) -> Served:
    binary = harness.hearth_binary()
    if not os.access(binary, os.X_OK):
        pytest.fail(f"no hearth binary at {binary} (set HEARTH_BINARY)")
    lines: list[str] = []
    process = HearthProcess(["serve", "--port", "0", "--data", str(data), "--admin-token", ADMIN_TOKEN,
                             "--demo" if demo else "--no-demo", *args],
                            ready="Demo accounts" if demo else None, timeout=STARTUP_SECONDS, binary=binary, into=lines)
    try:
        process.start()
    except HearthDidNotStart as error:
        pytest.fail(f"hearth did not start in time: {error}")
    return Served(url=process.url, data=data, process=process.process, lines=lines, log=process.output)


def stop(served: Served):
    harness.stop_process(served.process, timeout=20)


def hearth(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    finished = subprocess.run([harness.hearth_binary(), *args], capture_output=True, text=True, timeout=300)
    if check and finished.returncode != 0:
        pytest.fail(f"hearth {' '.join(args)} failed ({finished.returncode}):\n{finished.stdout}\n{finished.stderr}")
    return finished


def rest(served: Served, method: str, path: str, body=None, timeout: float = 10):
    """One REST call with the admin token: ``(status, parsed JSON body)``."""
    separator = "&" if "?" in path else "?"
    url = f"{served.url}{path}{separator}auth={ADMIN_TOKEN}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        raw = error.read()
        try:
            return error.code, json.loads(raw)
        except ValueError:
            return error.code, raw.decode(errors="replace")


def wait_until(condition, timeout: float, message: str, interval: float = 0.05):
    """Polls ``condition`` until it returns something true; fails with ``message`` after ``timeout``."""
    try:
        return harness.wait_until(condition, timeout, message, interval)
    except harness.WaitTimeout:
        pytest.fail(message)
