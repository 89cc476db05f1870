"""A server that runs short of file descriptors refuses new work and lives (security issue 29,
item 2): `hearth serve` started with a limit of 256 descriptors, then held open connections
far past it and asked to open databases beyond what the descriptors left allow. The runtime
traps when it cannot open a file it needs (libdispatch's thread-pool monitor reads `/proc`),
so the server must never let its descriptors run out: its connection and database limits keep
a reserve, and what does not fit is answered 503 (or a closed connection).
"""

from __future__ import annotations

import resource
import shutil
import socket
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from harness import HearthProcess, wait_until

DESCRIPTORS = 256
TOKEN = "descriptor-test-admin-token"


@pytest.fixture
def starved_server():
    data = Path(tempfile.mkdtemp(prefix="hearth-descriptors-"))

    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (DESCRIPTORS, DESCRIPTORS))

    lines: list[str] = []
    hearth = HearthProcess(["serve", "--no-demo", "--port", "0", "--data", str(data / "data"), "--admin-token", TOKEN,
                            "--log-level", "warning"], timeout=60, into=lines, preexec_fn=limit).start()
    yield hearth.process, hearth.port, lines
    hearth.stop(timeout=10)
    shutil.rmtree(data, ignore_errors=True)


def status(port: int, method: str, path: str, body: bytes | None = None) -> int | str:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, method=method,
                                     headers={"Authorization": f"Bearer {TOKEN}"})
    try:
        with urllib.request.urlopen(request, timeout=15) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError as error:
        return type(error).__name__


def test_running_out_of_descriptors_refuses_work_and_the_server_lives(starved_server):
    process, port, lines = starved_server
    held = []
    for _ in range(DESCRIPTORS * 3):
        try:
            held.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        except OSError:
            break
    # Far more connections than descriptors: the ones past the cap were closed at once.
    answers = [status(port, "PUT", f"/v.json?ns=crowded{index}", b"1") for index in range(20)]
    assert process.poll() is None, "the server died:\n" + "".join(lines)
    assert all(answer in (200, 503) or isinstance(answer, str) for answer in answers), answers
    for connection in held:
        connection.close()

    # More databases than the descriptors left allow: the rest are refused, cleanly.
    wait_until(lambda: status(port, "GET", "/.json") == 200, 30, "the server to serve again after the connections closed",
               interval=0.1)
    created = [status(port, "PUT", f"/v.json?ns=many{index}", b"1") for index in range(60)]
    assert set(created) <= {200, 503}, created
    assert 200 in created and 503 in created, created
    assert process.poll() is None, "the server died:\n" + "".join(lines)
    assert status(port, "GET", "/.json") == 200
    assert "Signal" not in "".join(lines)
