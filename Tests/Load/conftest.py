"""The load suite: `hearth-bench soak` against a real `hearth serve --emulator` (open rules, a
data folder of its own, a free port), short enough for CI. The long runs are commands in
BENCHMARKS.md.

Fixtures:

- ``hearth``: the server (``url``, ``pid``, ``output()``), stopped at the end of the test;
  ``@pytest.mark.serve_args("--keep-alive-seconds", "0.5")`` adds `hearth serve` options.
- ``bench``: the hearth-bench binary.

Environment: HEARTH_BINARY (default: `swift build --show-bin-path`/hearth), HEARTH_BENCH_BINARY
(default: hearth-bench beside HEARTH_BINARY), HEARTH_LOG_LEVEL (the server's, default warning).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 60
OPEN_RULES = {"rules": {".read": True, ".write": True}}


def _bin_path() -> Path:
    try:
        return Path(subprocess.check_output(["swift", "build", "--show-bin-path"], cwd=REPO, text=True).strip())
    except (OSError, subprocess.CalledProcessError) as error:
        pytest.fail(f"set HEARTH_BINARY and HEARTH_BENCH_BINARY (swift build --show-bin-path failed: {error})")


def hearth_binary() -> str:
    return os.environ.get("HEARTH_BINARY") or str(_bin_path() / "hearth")


def bench_binary() -> str:
    if os.environ.get("HEARTH_BENCH_BINARY"):
        return os.environ["HEARTH_BENCH_BINARY"]
    beside = Path(hearth_binary()).with_name("hearth-bench")
    return str(beside if beside.exists() else _bin_path() / "hearth-bench")


class Hearth:
    """A `hearth serve --emulator` process on a free port; its output is kept."""

    def __init__(self, folder: Path, extra_args: list[str] = ()):
        rules = folder / "rules.json"
        rules.write_text(json.dumps(OPEN_RULES))
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            [hearth_binary(), "serve", "--port", "0", "--data", str(folder / "data"), "--emulator", "--rules", str(rules),
             "--log-level", os.environ.get("HEARTH_LOG_LEVEL", "warning"), *extra_args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        ready = threading.Event()
        ports: list[int] = []

        def read_output():
            for line in self.process.stdout:
                self.lines.append(line)
                match = re.search(r"Hearth is serving http://[^:/\s]+:(\d+)/", line)
                if match:
                    ports.append(int(match.group(1)))
                    ready.set()
            ready.set()

        threading.Thread(target=read_output, daemon=True).start()
        ready.wait(STARTUP_SECONDS)
        if not ports or self.process.poll() is not None:
            self.stop()
            pytest.fail("hearth serve did not start:\n" + self.output())
        self.url = f"http://127.0.0.1:{ports[0]}"
        self.pid = self.process.pid

    def output(self, last: int = 60) -> str:
        return "".join(self.lines[-last:])

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def hearth(request):
    """The server; a test marked ``@pytest.mark.serve_args(...)`` passes more `hearth serve` options."""
    marker = request.node.get_closest_marker("serve_args")
    folder = Path(tempfile.mkdtemp(prefix="hearth-load-"))
    server = Hearth(folder, list(marker.args) if marker else [])
    yield server
    server.stop()
    shutil.rmtree(folder, ignore_errors=True)


def pytest_configure(config):
    config.addinivalue_line("markers", "serve_args(*options): more `hearth serve` options for the test's server")


@pytest.fixture
def bench():
    return bench_binary()
