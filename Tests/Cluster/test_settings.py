"""Joining a cluster from a settings file (``hearth serve --settings``, the ``cluster`` block):
the URL with its password from a file, the node's ID, address and files folder; a misspelt
setting or a URL that is not PostgreSQL's stops the server naming it, with no password shown."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from cluster_support import OPEN_RULES, Hearth, hearth_binary, skip_without_parts, wait_until

skip_without_parts()


def test_a_node_joins_from_a_settings_file(cluster, ns):
    folder = Path(tempfile.mkdtemp(prefix="hearth-cluster-settings-"))
    (folder / "pg-password").write_text("not-needed-with-trust\n")
    (folder / "rules.json").write_text(json.dumps(OPEN_RULES))
    parts = urlsplit(cluster.postgres.url)
    (folder / "settings.json").write_text(json.dumps({"cluster": {
        "url": urlunsplit(parts), "passwordFile": "pg-password", "nodeID": "from-settings",
        "address": "http://10.9.8.7:9000", "filesDir": str(cluster.files)}}))
    node = Hearth(data=folder / "data", rules_file=folder / "rules.json",
                  extra_args=["--settings", str(folder / "settings.json")]).start(0)
    try:
        cluster.nodes[0].put("/from-settings", ns, "hello")
        wait_until(lambda: node.get("/from-settings", ns) == "hello", "the write on the node from the settings file")
        status = {entry["id"]: entry for entry in cluster.status()["nodes"]}
        assert status["from-settings"]["address"] == "http://10.9.8.7:9000"
        assert status["from-settings"]["alive"]
    finally:
        node.stop()


def test_bad_cluster_settings_stop_the_server_naming_them(cluster, tmp_path):
    cases = {
        "misspelt": ({"cluster": {"url": cluster.postgres.url, "nodeId": "x"}}, "cluster.nodeId is not a setting"),
        "not postgres": ({"cluster": {"url": "mysql://root:hunter2@db/x"}}, "cluster.url must be a PostgreSQL URL"),
    }
    for name, (settings, message) in cases.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(settings))
        result = subprocess.run([hearth_binary(), "serve", "--port", "0", "--data", str(tmp_path / name),
                                 "--settings", str(path), "--no-demo"], capture_output=True, text=True, timeout=60)
        assert result.returncode != 0, name
        assert message in result.stderr + result.stdout, result.stderr
        assert "hunter2" not in result.stderr + result.stdout
    unreachable = subprocess.run(
        [hearth_binary(), "serve", "--port", "0", "--data", str(tmp_path / "unreachable"), "--no-demo",
         "--cluster", "postgres://hearth:hunter2@127.0.0.1:1/hearth?sslmode=disable"],
        capture_output=True, text=True, timeout=60)
    assert unreachable.returncode != 0
    assert "cannot join the cluster at postgres://hearth:***@127.0.0.1:1/hearth" in unreachable.stderr, unreachable.stderr
    assert "hunter2" not in unreachable.stderr + unreachable.stdout
