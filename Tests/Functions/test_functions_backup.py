"""Functions in backups: `hearth backup --functions` copies the functions folder's source beside
the data, an event still waiting for its endpoint is in the copied log (the outbox), and after
`hearth restore --functions` a server started on the restored folders delivers it."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import harness
from functions_support import ADMIN_TOKEN, WebhookReceiver, database_trigger, rest, secret, serve
from harness import HearthProcess


def hearth(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([harness.hearth_binary(), *args], capture_output=True, text=True, timeout=300)


def waiting_events(log: Path) -> list[tuple[str, str]]:
    """``(function, event ID)`` of each event in line in a copied log.sqlite, read without changing it."""
    connection = sqlite3.connect(f"file:{log}?immutable=1", uri=True)
    try:
        # One row per event, its functions listed between commas; each function's cursor says
        # what it is done with.
        cursors = dict(connection.execute("SELECT subscriber, done FROM outbox_cursor").fetchall())
        rows = connection.execute("SELECT seq, subscribers, event_id FROM outbox_entry ORDER BY seq").fetchall()
        return [(function, event_id) for seq, subscribers, event_id in rows
                for function in subscribers.strip(",").split(",") if seq > cursors.get(function, 0)]
    finally:
        connection.close()


def test_an_event_waiting_in_a_backup_is_delivered_by_the_restored_server_and_functions(tmp_path):
    hook_secret = secret(7)
    # The endpoint is down while the server runs: its port is known, nothing listens there.
    receiver = WebhookReceiver([hook_secret])
    receiver.stop()
    hooks = {"onItem": {"url": receiver.url, "secretEnv": "HOOK_SECRET",
                        "eventTrigger": database_trigger("written", "items/{id}")}}
    env = {"HOOK_SECRET": hook_secret}
    server = serve(tmp_path, hooks, env)
    functions = tmp_path / "functions"
    (functions / "lib").mkdir()
    (functions / "lib" / "shared.py").write_text("LIMIT = 3\n")
    for rebuilt in ["venv/bin/python", "__pycache__/main.cpython-312.pyc", "node_modules/x/index.js"]:
        (functions / rebuilt).parent.mkdir(parents=True, exist_ok=True)
        (functions / rebuilt).write_text("rebuilt\n")
    backup = tmp_path / "backup"
    try:
        # Acknowledged, so its event is committed in the outbox with the write.
        assert rest(server, "PUT", "/items/a.json", {"n": 1})[0] == 200
        made = hearth("backup", str(backup), "--data", str(tmp_path / "data"), "--functions", str(functions))
        assert made.returncode == 0, made.stderr
        assert "Functions: 2 files of" in made.stdout
    finally:
        server.stop()

    manifest = json.loads((backup / "hearth-backup.json").read_text())
    assert manifest["format"] == 2
    assert manifest["functions"] == {"source": str(functions.resolve()), "linksLeftOut": []}
    assert sorted(f["path"] for f in manifest["files"] if f["path"].startswith("functions/")) == [
        "functions/lib/shared.py", "functions/webhooks.json"]
    waiting = waiting_events(backup / "databases" / "default" / "log.sqlite")
    assert [function for function, _ in waiting] == ["onItem"], "the undelivered event is in the backup"

    restored_data, restored_functions = tmp_path / "restored-data", tmp_path / "restored-functions"
    done = hearth("restore", str(backup), "--data", str(restored_data), "--functions", str(restored_functions))
    assert done.returncode == 0, done.stderr
    assert f"are in {restored_functions}" in done.stdout
    assert json.loads((restored_functions / "webhooks.json").read_text()) == {"webhooks": hooks}
    assert (restored_functions / "lib" / "shared.py").read_text() == "LIMIT = 3\n"
    assert not (restored_functions / "venv").exists() and not (restored_functions / "__pycache__").exists()

    # The endpoint is back on its port; the restored server delivers what was waiting.
    receiver.restart()
    again = HearthProcess(["serve", "--port", "0", "--data", str(restored_data), "--admin-token", ADMIN_TOKEN, "--no-demo",
                           "--functions", str(restored_functions)], env=env).start()
    try:
        delivered = receiver.wait_for_count(1)
        webhook_id, event = delivered[0]
        assert event["ref"] == "items/a" and event["data"] == {"data": None, "delta": {"n": 1}}
        assert webhook_id == waiting[0][1], "the same event, by its stable ID"
    finally:
        again.stop()
        receiver.stop()


def test_backup_and_restore_refuse_functions_folders_plainly(tmp_path):
    receiver = WebhookReceiver([secret(8)])
    server = serve(tmp_path, {"onItem": {"url": receiver.url, "secretEnv": "HOOK_SECRET",
                                         "eventTrigger": database_trigger("written", "items/{id}")}},
                   {"HOOK_SECRET": secret(8)})
    data = tmp_path / "data"
    try:
        missing = hearth("backup", str(tmp_path / "b1"), "--data", str(data), "--functions", str(tmp_path / "absent"))
        assert missing.returncode != 0 and "does not exist or is not a folder" in missing.stderr
        assert not (tmp_path / "b1").exists() and not (tmp_path / "b1.partial").exists()
        plain = hearth("backup", str(tmp_path / "b2"), "--data", str(data))
        assert plain.returncode == 0, plain.stderr
        assert "Functions:" not in plain.stdout
    finally:
        server.stop()
        receiver.stop()
    asked = hearth("restore", str(tmp_path / "b2"), "--data", str(tmp_path / "r"), "--functions", str(tmp_path / "rf"))
    assert asked.returncode != 0 and "holds no functions folder" in asked.stderr
    assert not (tmp_path / "r").exists()
    alone = hearth("restore", "--data", str(data), "--to", "1", "--functions", str(tmp_path / "rf"))
    assert alone.returncode != 0 and "--functions goes with a backup folder" in alone.stderr
