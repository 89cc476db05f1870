"""Online backups of a running server, restores, and restoring a database to just before a bad
write, with the real `hearth` command line and servers."""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

import pytest

import harness
from operations_support import ADMIN_TOKEN, hearth, launch, rest, stop, wait_until

BUCKET = "hearth.appspot.com"


@pytest.fixture
def folder():
    path = Path(tempfile.mkdtemp(prefix="hearth-operations-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def stored_files(served) -> dict[str, bytes]:
    """Every stored file's content, by name, read through the storage API as admin."""
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    listing = urllib.request.Request(f"{served.url}/v0/b/{BUCKET}/o", headers=headers)
    names: list[str] = []
    with urllib.request.urlopen(listing, timeout=10) as response:
        names = [item["name"] for item in json.loads(response.read()).get("items", [])]
    contents = {}
    for name in names:
        quoted = urllib.parse.quote(name, safe="")
        request = urllib.request.Request(f"{served.url}/v0/b/{BUCKET}/o/{quoted}?alt=media", headers=headers)
        with urllib.request.urlopen(request, timeout=10) as response:
            contents[name] = response.read()
    return contents


def sign_in(served, email: str, password: str) -> int:
    request = urllib.request.Request(
        f"{served.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=any",
        data=json.dumps({"email": email, "password": password, "returnSecureToken": True}).encode(),
        headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_an_online_backup_under_writes_restores_every_acknowledged_write(folder):
    data = folder / "data"
    served = launch(data, "--snapshot-after-writes", "150", demo=True)
    demo_accounts = json.loads((data / "demo-accounts.json").read_text())
    files_before = stored_files(served)
    assert files_before, "the demo stores photos"

    # One writer, one write at a time: the database is always a prefix 0..n of its writes.
    acknowledged: list[int] = []
    stop_writing = threading.Event()

    def write():
        index = 0
        while not stop_writing.is_set():
            status, _ = rest(served, "PUT", f"/load/n{index:06d}.json", {"i": index, "pad": "x" * 200})
            assert status == 200
            acknowledged.append(index)
            index += 1

    writer = threading.Thread(target=write)
    writer.start()
    try:
        wait_until(lambda: len(acknowledged) > 300, 60, "the writer made no progress")
        before_backup = len(acknowledged)
        made = hearth("backup", str(folder / "backup"), "--data", str(data))
        after_backup = len(acknowledged)
        wait_until(lambda: len(acknowledged) > after_backup + 20, 30, "writes stopped during the backup")
    finally:
        stop_writing.set()
        writer.join()
    assert "Backed up" in made.stdout
    assert after_backup > before_backup, "writes went on while the backup ran"
    manifest = json.loads((folder / "backup" / "hearth-backup.json").read_text())
    assert [entry["name"] for entry in manifest["databases"]] == ["default"]
    assert manifest["objects"] == len(files_before)
    assert not (folder / "backup.partial").exists()
    stop(served)

    # The backup, restored into a new folder, serves on its own.
    restored = folder / "restored"
    done = hearth("restore", str(folder / "backup"), "--data", str(restored))
    assert "Restored the backup" in done.stdout
    again = launch(restored)
    try:
        status, load = rest(again, "GET", "/load.json")
        assert status == 200
        indexes = sorted(value["i"] for value in load.values())
        assert indexes == list(range(len(indexes))), "one committed moment: a prefix of the writes, without holes"
        assert len(indexes) >= before_backup, "every write acknowledged before the backup started is there"
        assert len(indexes) <= len(acknowledged)
        assert manifest["databases"][0]["sequence"] > 0
        assert stored_files(again) == files_before, "stored files come back byte for byte"
        ann = demo_accounts[0]
        assert sign_in(again, ann["email"], ann["password"]) == 200, "accounts come back"
        status, posts = rest(again, "GET", "/posts.json?shallow=true")
        assert status == 200 and posts, "the demo's posts are there"
    finally:
        stop(again)


def test_a_database_is_restored_to_just_before_a_bad_write(folder):
    data = folder / "data"
    served = launch(data, "--snapshot-after-writes", "25")
    try:
        for index in range(80):
            status, _ = rest(served, "PUT", f"/posts/p{index:03d}.json", {"title": f"post {index}", "stars": index % 7})
            assert status == 200
        status, good = rest(served, "GET", "/.json")
        assert status == 200
        noted = datetime.now(timezone.utc)
        just_before = noted.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        # The bad write gets a later millisecond than the time noted.
        harness.wait_until(lambda: int(time.time() * 1000) > int(noted.timestamp() * 1000), 1, "the next millisecond",
                           interval=0.001)
        assert rest(served, "PUT", "/posts.json", {"oops": True})[0] == 200  # the bad write
        assert rest(served, "PUT", "/after/one.json", 1)[0] == 200

        listed = hearth("history", "--data", str(data), "--path", "/posts", "--limit", "1").stdout
        bad_sequence = int(listed.strip().splitlines()[-1].split()[0])
        assert listed.strip().splitlines()[-1].split()[-1] == "/posts"

        # While the server runs: the value as it was, to a file, changing nothing.
        out = folder / "before.json"
        hearth("restore", "--data", str(data), "--to", str(bad_sequence - 1), "--json", str(out))
        assert json.loads(out.read_text()) == good
        by_time = folder / "by-time.json"
        hearth("restore", "--data", str(data), "--to", just_before, "--json", str(by_time))
        assert json.loads(by_time.read_text()) == good

        refused = hearth("restore", "--data", str(data), "--to", str(bad_sequence - 1), check=False)
        assert refused.returncode != 0 and "in use" in refused.stderr, "a running server's database is not replaced"
        outside = hearth("restore", "--data", str(data), "--to", "999999", "--json", str(folder / "x.json"), check=False)
        assert outside.returncode != 0 and "outside the history kept" in outside.stderr
        empty = folder / "empty.json"
        hearth("restore", "--data", str(data), "--to", "2001-01-01T00:00:00Z", "--json", str(empty))
        assert json.loads(empty.read_text()) is None, "before its first write the database was empty"
    finally:
        stop(served)

    # Stopped: the database itself goes back, next to a copy made by time.
    hearth("restore", "--data", str(data), "--to", just_before, "--as", "before-by-time")
    done = hearth("restore", "--data", str(data), "--to", str(bad_sequence - 1))
    assert f"to write {bad_sequence - 1}" in done.stdout
    again = launch(data)
    try:
        assert rest(again, "GET", "/.json") == (200, good)
        assert rest(again, "GET", "/.json?ns=before-by-time") == (200, good)
        assert rest(again, "PUT", "/posts/p999.json", {"title": "after the restore"})[0] == 200
        status, post = rest(again, "GET", "/posts/p999.json")
        assert status == 200 and post["title"] == "after the restore"
    finally:
        stop(again)


def test_scheduled_backups_are_made_and_old_ones_pruned(folder):
    data = folder / "data"
    backups = folder / "backups"
    served = launch(data, "--backup-every", "1s", "--backup-keep", "2", "--backup-dir", str(backups))
    try:
        assert rest(served, "PUT", "/value.json", 1)[0] == 200

        def made() -> int:
            with urllib.request.urlopen(f"{served.url}/metrics?auth={ADMIN_TOKEN}", timeout=10) as response:
                text = response.read().decode()
            for line in text.splitlines():
                if line.startswith('hearth_backups_total{result="ok"}'):
                    return int(float(line.split()[-1]))
            return 0

        wait_until(lambda: made() >= 3, 60, "three scheduled backups were not made")
        finished = sorted(path.name for path in backups.iterdir() if not path.name.endswith(".partial"))
        assert 1 <= len(finished) <= 3 and len(finished) <= made()
        wait_until(lambda: len([p for p in backups.iterdir() if not p.name.endswith(".partial")]) <= 2, 10,
                   "old backups were not pruned")
        for name in sorted(path.name for path in backups.iterdir() if not path.name.endswith(".partial")):
            assert (backups / name / "hearth-backup.json").exists()
    finally:
        stop(served)


def test_a_damaged_or_unfinished_backup_changes_nothing(folder):
    data = folder / "data"
    served = launch(data)
    try:
        assert rest(served, "PUT", "/value.json", {"kept": True})[0] == 200
        hearth("backup", str(folder / "backup"), "--data", str(data))
        again = hearth("backup", str(folder / "backup"), "--data", str(data), check=False)
        assert again.returncode != 0 and "already exists" in again.stderr
    finally:
        stop(served)
    log = folder / "backup" / "databases" / "default" / "log.sqlite"
    damaged_bytes = bytearray(log.read_bytes())
    damaged_bytes[200] ^= 0xFF
    log.write_bytes(bytes(damaged_bytes))
    damaged = hearth("restore", str(folder / "backup"), "--data", str(folder / "target"), check=False)
    assert damaged.returncode != 0 and "differs from the backup's manifest" in damaged.stderr
    assert not (folder / "target").exists()
    (folder / "backup" / "hearth-backup.json").unlink()
    unfinished = hearth("restore", str(folder / "backup"), "--data", str(folder / "target"), check=False)
    assert unfinished.returncode != 0 and "not a finished Hearth backup" in unfinished.stderr
    occupied = hearth("restore", str(folder / "backup"), "--data", str(data), check=False)
    assert occupied.returncode != 0
    status_folder = launch(data)
    try:
        assert rest(status_folder, "GET", "/value.json") == (200, {"kept": True}), "the data folder is untouched"
    finally:
        stop(status_folder)
