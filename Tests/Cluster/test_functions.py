"""Functions in a cluster: every node runs them, one node (the functions lease holder) delivers
each event, recorded with its write in PostgreSQL; when that node dies, another takes over and
delivers everything not yet delivered, in commit order."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from cluster_support import Cluster, skip_without_parts
from functions_support import WebhookReceiver, database_trigger, secret, write_functions

skip_without_parts()


@pytest.fixture
def functions_cluster(monkeypatch):
    """Two nodes with ``--functions`` (a webhook on ``log/{id}``) and a receiver; no nginx."""
    monkeypatch.setenv("HOOK_SECRETS", secret(7))
    receiver = WebhookReceiver([secret(7)])
    folder = write_functions(Path(tempfile.mkdtemp(prefix="hearth-cluster-functions-")), {
        "onLog": {"url": receiver.url, "secretEnv": "HOOK_SECRETS",
                  "eventTrigger": database_trigger("written", "log/{id}")},
    })
    cluster = Cluster(count=0, with_nginx=False)
    try:
        for _ in range(2):
            cluster.add_node(["--functions", str(folder)])
        yield cluster, receiver
    finally:
        cluster.close()
        receiver.stop()
        shutil.rmtree(folder, ignore_errors=True)


def values(receiver: WebhookReceiver) -> list:
    return [event["data"]["delta"] for _, event in receiver.deliveries]


def write(node, ns: str, key: str, value: int):
    response = node.rest("PUT", f"log/{key}", ns, body=value)
    assert response.status_code == 200, response.text


def test_each_event_is_delivered_once_then_survives_the_delivering_node(functions_cluster):
    cluster, receiver = functions_cluster
    ns = "fndb"
    # Writes on both nodes, one after another: one delivery each, in commit order.
    for index in range(10):
        write(cluster.nodes[index % 2], ns, f"k{index:02d}", index)
    receiver.wait_for_count(10, timeout=60)
    assert values(receiver) == list(range(10))
    ids = [webhook_id for webhook_id, _ in receiver.deliveries]
    assert len(set(ids)) == 10

    # The receiver hangs: events pile up behind the one under way. Then the delivering node dies.
    receiver.hang_left = 1000
    for index in range(10, 20):
        write(cluster.nodes[index % 2], ns, f"k{index:02d}", index)
    receiver.wait_for(lambda r: len(r.attempts) >= 11, timeout=60, what="a delivery under way")
    holder = cluster.postgres.psql("SELECT holder FROM hearth_functions_lease").strip()
    dead = next(node for node in cluster.nodes if node.name == holder)
    survivor = next(node for node in cluster.nodes if node is not dead)
    dead.kill()
    # Writes go on on the survivor; then the receiver is back.
    for index in range(20, 25):
        write(survivor, ns, f"k{index:02d}", index)
    with receiver.changed:
        receiver.hang_left = 0
    receiver.release_hang.set()
    # Every acknowledged write's event, at least once, in commit order, by the survivor.
    receiver.wait_for(lambda r: set(range(25)) <= set(values(r)), timeout=120, what="every event after the takeover")
    delivered = values(receiver)
    firsts = sorted(set(delivered), key=delivered.index)
    assert firsts == list(range(25))
    assert cluster.postgres.psql("SELECT holder FROM hearth_functions_lease").strip() == survivor.name
    dead.start()
