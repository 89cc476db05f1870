"""The operations suite: online backups, restores to a moment of a database's history, and a
disk that fills up, tried against real `hearth serve` processes and the `hearth` command line.

Helpers:
- ``launch(data, *args, demo=False)``: starts ``hearth serve`` on ``data`` (any free port, admin
  token ``ADMIN_TOKEN``); with ``demo`` it seeds the demo app and waits for it. Returns a
  ``Served`` with ``url``, ``process`` and ``output()``; ``stop(served)`` ends it (SIGTERM).
- ``hearth(*args)``: runs the command line and returns the finished process (output captured).
- ``rest(served, method, path, body=None)``: one REST call as admin: ``(status, parsed JSON)``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

HEARTH_BINARY = os.environ.get("HEARTH_BINARY", str(Path(__file__).resolve().parents[2] / ".build/debug/hearth"))
ADMIN_TOKEN = "operations-admin-token"
STARTUP_SECONDS = 60


@dataclass
class Served:
    url: str
    data: Path
    process: subprocess.Popen
    lines: list[str] = field(default_factory=list)

    def output(self) -> str:
        return "".join(self.lines)


def launch(data: Path, *args: str, demo: bool = False) -> Served:
    if not os.access(HEARTH_BINARY, os.X_OK):
        pytest.fail(f"no hearth binary at {HEARTH_BINARY} (set HEARTH_BINARY)")
    command = [HEARTH_BINARY, "serve", "--port", "0", "--data", str(data), "--admin-token", ADMIN_TOKEN,
               "--demo" if demo else "--no-demo", *args]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    lines: list[str] = []
    ready = threading.Event()
    marker = "Demo accounts" if demo else "Hearth is serving"

    def read_output():
        for line in process.stdout:
            lines.append(line)
            if marker in line:
                ready.set()
        ready.set()

    threading.Thread(target=read_output, daemon=True).start()
    if not ready.wait(STARTUP_SECONDS) or process.poll() is not None:
        process.kill()
        pytest.fail("hearth did not start in time:\n" + "".join(lines))
    match = re.search(r"Hearth is serving (http://[^/\s]+)/", "".join(lines))
    assert match, "no URL in hearth's output:\n" + "".join(lines)
    return Served(url=match.group(1), data=data, process=process, lines=lines)


def stop(served: Served):
    served.process.terminate()
    try:
        served.process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        served.process.kill()
        served.process.wait()


def hearth(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    finished = subprocess.run([HEARTH_BINARY, *args], capture_output=True, text=True, timeout=300)
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
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(message)
        time.sleep(interval)
