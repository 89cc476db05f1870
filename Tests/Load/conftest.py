"""The load suite: `hearth-bench soak` against a real `hearth serve --emulator` (open rules, a
data folder of its own, a free port), short enough for CI. The long runs are commands in
BENCHMARKS.md.

Fixtures:

- ``hearth``: the server (``url``, ``pid``, ``output()``), stopped at the end of the test;
  ``@pytest.mark.serve_args("--keep-alive-seconds", "0.5")`` adds `hearth serve` options.
- ``bench``: the hearth-bench binary.

The figures that depend on the machine's load (latency, transactions given up under contention)
are reported at the end of the run (``harness.record``), never judged.

Environment: HEARTH_BINARY (default: `swift build --show-bin-path`/hearth), HEARTH_BENCH_BINARY
(default: hearth-bench beside HEARTH_BINARY), HEARTH_LOG_LEVEL (the server's, default warning).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from harness import HearthDidNotStart, HearthProcess, bench_binary

STARTUP_SECONDS = 60
OPEN_RULES = {"rules": {".read": True, ".write": True}}


class Hearth:
    """A `hearth serve --emulator` process on a free port; its output is kept."""

    def __init__(self, folder: Path, extra_args: list[str] = ()):
        rules = folder / "rules.json"
        rules.write_text(json.dumps(OPEN_RULES))
        self.lines: list[str] = []
        self._hearth = HearthProcess(
            ["serve", "--port", "0", "--data", str(folder / "data"), "--emulator", "--rules", str(rules),
             "--log-level", os.environ.get("HEARTH_LOG_LEVEL", "warning"), *extra_args],
            timeout=STARTUP_SECONDS, into=self.lines)
        self.process = self._hearth.process
        try:
            self._hearth.start()
        except HearthDidNotStart as error:
            self.stop()
            pytest.fail(f"hearth serve did not start: {error}")
        self.url = f"http://127.0.0.1:{self._hearth.port}"
        self.pid = self.process.pid

    def output(self, last: int = 60) -> str:
        return "".join(self.lines[-last:])

    def stop(self):
        self._hearth.stop(timeout=15)


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

