"""Hearth's Swift client (HearthClient) offline, with real processes: each client run is a
`hearth-bench client-sync` process with a SQLite cache file (an app launched, used, and
closed), against a real `hearth serve` that the test stops and starts.

- Writes made while the server is down survive the client's exit, show again from the cache
  on the next launch, and reach the server exactly once when it is back (pushes carry a
  server increment in the same update, so a write sent twice would count twice).
- Two clients edit the same data, one offline and one online: both converge on the server's
  final value, which is the later write's.
- Several client processes contend on one counter with transactions: no increment is lost.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import pytest

from harness import bench_binary
from realtime_support import new_namespace


class SwiftApp:
    """One device: a cache file, and `client-sync` runs of the Swift client on it."""

    def __init__(self, server, ns: str, folder: Path, name: str):
        self.server, self.ns, self.name = server, ns, name
        self.cache = folder / f"{name}.sqlite"

    def command(self, *args: str) -> list[str]:
        return [bench_binary(), "client-sync", "--url", self.server.url, "--ns", self.ns, "--cache", str(self.cache),
                "--name", self.name, *args]

    def run(self, *args: str, timeout: float = 60) -> dict:
        done = subprocess.run(self.command(*args), capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, f"client-sync {' '.join(args)} exited with {done.returncode}:\n{done.stderr[-3000:]}"
        return json.loads(done.stdout.strip().splitlines()[-1])

    def start(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen(self.command(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture
def folder():
    path = Path(tempfile.mkdtemp(prefix="hearth-swift-offline-"))
    yield path
    subprocess.run(["rm", "-rf", str(path)], check=False)


def test_writes_made_with_the_server_down_survive_a_restart_and_arrive_once(own_hearth, folder):
    ns = new_namespace("sw")
    own_hearth.put("app", ns, {"count": 0, "title": "before"})
    app = SwiftApp(own_hearth, ns, folder, "ann")
    # Online first: the app reads (and caches) the data.
    first = app.run("--read", "app", "--wait-synced", "20")
    assert first["read"] == {"count": 0, "title": "before"}, first
    own_hearth.stop()
    # The server is down: the app shows its cached data, writes, and is closed with them pending.
    offline = app.run("--read", "app", "--pushes", "3", "--set", 'app/title="offline edit"', "--read-timeout", "3")
    assert offline["read"] == {"count": 0, "title": "before"}, "the cached data was not shown offline: " + json.dumps(offline)
    assert offline["pendingAfterWrites"] == 4 and offline["pendingAtExit"] == 4, offline
    # Launched again, still offline: the pending writes come back and show over the cache.
    again = app.run("--read", "app", "--pushes", "1", "--read-timeout", "3")
    assert again["pendingAtStart"] == 4, again
    shown = again["read"]
    assert shown["title"] == "offline edit" and len(shown["items"]) == 3, "pending writes not shown after a restart: " + json.dumps(again)
    assert again["pendingAtExit"] == 5, again
    # The server comes back: the next launch sends everything, in order, once.
    own_hearth.start()
    synced = app.run("--wait-synced", "30")
    assert synced["synced"] is True and synced["pendingAtExit"] == 0, synced
    data = own_hearth.get("app", ns)
    assert data["title"] == "offline edit", data
    assert len(data["items"]) == 4, data
    assert data["count"] == 4, f"the increments say each write arrived {data['count']} / 4 times: {data}"
    assert sorted(item["n"] for item in data["items"].values()) == [0, 0, 1, 2], data
    # Nothing is sent again by a later launch.
    assert app.run("--wait-synced", "10")["pendingAtStart"] == 0
    assert own_hearth.get("app/count", ns) == 4


def test_two_devices_editing_the_same_data_offline_and_online_converge(own_hearth, folder):
    ns = new_namespace("sw")
    own_hearth.put("doc", ns, {"title": "v0"})
    ann, bob = SwiftApp(own_hearth, ns, folder, "ann"), SwiftApp(own_hearth, ns, folder, "bob")
    assert ann.run("--read", "doc", "--wait-synced", "20")["read"] == {"title": "v0"}
    own_hearth.stop()
    # Ann edits offline and closes the app.
    assert ann.run("--set", 'doc/title="ann offline"', "doc/ann=true")["pendingAtExit"] == 2
    own_hearth.start()
    # Bob edits online meanwhile.
    assert bob.run("--set", 'doc/title="bob online"', "--wait-synced", "20")["synced"] is True
    assert own_hearth.get("doc/title", ns) == "bob online"
    # Ann comes back online: her queued writes go after Bob's (the last write wins), and both
    # devices read the same data.
    assert ann.run("--wait-synced", "30")["synced"] is True
    final = own_hearth.get("doc", ns)
    assert final == {"title": "ann offline", "ann": True}, final
    # Each device shows its cached copy first, then the server's: the same on both.
    assert ann.run("--read", "doc")["readSynced"] == final
    assert bob.run("--read", "doc")["readSynced"] == final


def test_transactions_from_several_client_processes_lose_no_increment(own_hearth, folder):
    ns = new_namespace("sw")
    own_hearth.put("app/counter", ns, 0)
    apps = [SwiftApp(own_hearth, ns, folder, f"device{index}") for index in range(4)]
    runs = [app.start("--transactions", "15", "--wait-synced", "60") for app in apps]
    results = []
    for process in runs:
        stdout, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stderr[-3000:]
        results.append(json.loads(stdout.strip().splitlines()[-1]))
    assert [result["transactionsCommitted"] for result in results] == [15] * 4, results
    assert own_hearth.get("app/counter", ns) == 60
