"""A disk that fills up under writes: writes fail with Firebase's `unavailable`-shaped error,
nothing acknowledged is lost, reads keep working, and writes resume by themselves once there is
room again. The data folder is on a size-limited tmpfs (needs root, as scripts/test runs)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from operations_support import launch, rest, stop, wait_until

SIZE = "12m"
BALLAST_MB = 3


@pytest.fixture
def small_disk():
    mount_point = Path(tempfile.mkdtemp(prefix="hearth-full-"))
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE},mode=0700", "tmpfs", str(mount_point)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        shutil.rmtree(mount_point, ignore_errors=True)
        pytest.skip(f"cannot mount a size-limited tmpfs here: {mounted.stderr.strip()}")
    yield mount_point
    subprocess.run(["umount", "-l", str(mount_point)], check=False)
    shutil.rmtree(mount_point, ignore_errors=True)


def test_a_full_disk_refuses_writes_keeps_what_was_acknowledged_and_recovers(small_disk):
    ballast = small_disk / "ballast"
    data = small_disk / "data"
    served = launch(data, "--snapshot-after-writes", "100000")
    try:
        # Room to free later: the disk is filled up to this file.
        ballast.write_bytes(b"\0" * (BALLAST_MB << 20))
        acknowledged: dict[str, str] = {}
        refusal = None
        for index in range(10_000):
            key = f"k{index:05d}"
            value = f"{index:05d}-" + "x" * 4000
            status, body = rest(served, "PUT", f"/fill/{key}.json", value)
            if status == 200:
                acknowledged[key] = value
                continue
            refusal = (status, body)
            break
        assert refusal is not None, "the disk never filled up"
        status, body = refusal
        assert status == 503, refusal
        assert isinstance(body, dict) and "unavailable" in body.get("error", "").lower(), refusal
        assert len(acknowledged) > 100

        # Still full: refused the same way, nothing changes.
        status, body = rest(served, "PUT", "/fill/extra.json", "x" * 4000)
        assert status == 503 and "error" in body
        # Reads keep working.
        first = next(iter(acknowledged))
        assert rest(served, "GET", f"/fill/{first}.json") == (200, acknowledged[first])
        status, keys = rest(served, "GET", "/fill.json?shallow=true")
        assert status == 200 and set(keys) == set(acknowledged), "the refused writes are not there"

        # Room again: writes resume without a restart.
        ballast.unlink()

        def resumed():
            status, _ = rest(served, "PUT", "/fill/after.json", "back")
            return status == 200

        wait_until(resumed, 30, "writes did not resume after space was freed", interval=0.25)
        acknowledged["after"] = "back"
    finally:
        stop(served)

    # Every acknowledged write survived, and nothing refused appeared.
    again = launch(data)
    try:
        status, stored = rest(again, "GET", "/fill.json")
        assert status == 200
        assert stored == acknowledged
    finally:
        stop(again)
    assert os.path.exists(data / "databases" / "default" / "log.sqlite")
