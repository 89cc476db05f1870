"""Every node a full replica, writes in one order: writes made through different nodes reach
every node in the same order; listeners on one node see the others' writes; transactions
(REST ETag conditions) from clients on every node end exactly right; rules deployed on one
node hold on every node; ``hearth cluster status`` shows the nodes and how far they applied."""

from __future__ import annotations

import subprocess
import threading

import requests

from cluster_support import EventStream, hearth_binary, skip_without_parts, wait_until

skip_without_parts()


def test_writes_through_every_node_reach_every_node_in_one_order(cluster, ns):
    nodes = cluster.nodes
    streams = [EventStream(node.url, "/ordered", ns) for node in nodes]
    for stream in streams:
        stream.wait_for(lambda events: len(events) >= 1, "the stream's first (empty) value")
    per_node = 25
    errors: list[str] = []

    def write(node_index: int):
        session = requests.Session()
        node = nodes[node_index]
        for item in range(per_node):
            # Every write replaces the same value, so only one order of them can end the same way.
            response = session.put(f"{node.url}/ordered/last.json", params={"ns": ns}, json=f"{node.name}-{item}",
                                   headers={"Authorization": "Bearer owner"}, timeout=30)
            if response.status_code != 200:
                errors.append(f"{node.name}: {response.status_code} {response.text}")
            response = session.post(f"{node.url}/ordered/log.json", params={"ns": ns}, json=f"{node.name}-{item}",
                                    headers={"Authorization": "Bearer owner"}, timeout=30)
            if response.status_code != 200:
                errors.append(f"{node.name}: {response.status_code} {response.text}")

    threads = [threading.Thread(target=write, args=(index,)) for index in range(len(nodes))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    total = 2 * per_node * len(nodes)
    for stream in streams:
        stream.wait_for(lambda events: len(events) >= 1 + total, f"{total} events on every node")
    sequences = [stream.events[1:] for stream in streams]
    for stream in streams:
        stream.close()
    assert sequences[0] == sequences[1] == sequences[2], "the nodes saw the writes in different orders"
    assert len(sequences[0]) == total
    # Each node's own writes keep their order within the one order.
    for node in nodes:
        own = [data for _, path, data in sequences[0] if path == "/last" and data.startswith(node.name + "-")]
        assert own == [f"{node.name}-{item}" for item in range(per_node)]
    values = [node.value("/ordered", ns) for node in nodes]
    assert values[0] == values[1] == values[2]
    assert len(values[0]["log"]) == per_node * len(nodes)


def test_transactions_from_clients_on_every_node_end_exactly_right(cluster, ns):
    """Firebase's REST transaction: read with an ETag, write with if-match, retry on 412."""
    increments_per_client = 12
    clients_per_node = 2
    failures: list[str] = []
    retries = [0]

    def increment(node):
        session = requests.Session()
        url = f"{node.url}/counter.json"
        admin = {"Authorization": "Bearer owner"}
        for _ in range(increments_per_client):
            response = session.get(url, params={"ns": ns}, headers={**admin, "X-Firebase-ETag": "true"}, timeout=30)
            value, etag = response.json(), response.headers["ETag"]
            while True:
                response = session.put(url, params={"ns": ns}, json=(value or 0) + 1,
                                       headers={**admin, "if-match": etag}, timeout=30)
                if response.status_code == 200:
                    break
                if response.status_code != 412:
                    failures.append(f"{response.status_code} {response.text}")
                    return
                retries[0] += 1
                value, etag = response.json(), response.headers["ETag"]

    threads = [threading.Thread(target=increment, args=(node,)) for node in cluster.nodes for _ in range(clients_per_node)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    expected = increments_per_client * clients_per_node * len(cluster.nodes)
    for node in cluster.nodes:
        wait_until(lambda: node.value("/counter", ns) == expected, f"{expected} on {node.name}")
    assert retries[0] > 0, "the clients never contended: the test proves nothing"


def test_listeners_on_one_node_see_another_nodes_writes_in_order(cluster, ns):
    listener = EventStream(cluster.nodes[2].url, "/chat", ns)
    listener.wait_for(lambda events: len(events) >= 1, "the initial value")
    writer = cluster.nodes[0]
    for index in range(20):
        writer.put(f"/chat/m{index:02d}", ns, {"text": f"message {index}"})
    listener.wait_for(lambda events: len(events) >= 21, "twenty messages")
    listener.close()
    assert [path for _, path, _ in listener.events[1:]] == [f"/m{index:02d}" for index in range(20)]
    assert listener.events[-1][2] == {"text": "message 19"}


def test_rules_deployed_on_one_node_hold_on_every_node(cluster, ns):
    first, second = cluster.nodes[0], cluster.nodes[1]
    second.put("/notes/a", ns, "before")
    rules = {"rules": {"notes": {".read": True, ".write": False}, "open": {".read": True, ".write": True}}}
    first.deploy_rules(ns, rules)
    # The rules travel through the log: once node 2 serves them, its writes are judged by them.
    wait_until(lambda: requests.get(f"{second.url}/.settings/rules.json", params={"ns": ns},
                                    headers={"Authorization": "Bearer owner"}, timeout=10).json() == rules,
               "the rules on node 2")
    refused = requests.put(f"{second.url}/notes/a.json", params={"ns": ns}, json="after", timeout=10)
    assert refused.status_code == 401, refused.text
    assert refused.json() == {"error": "Permission denied"}
    allowed = requests.put(f"{second.url}/open/a.json", params={"ns": ns}, json="yes", timeout=10)
    assert allowed.status_code == 200, allowed.text
    for node in cluster.nodes:
        wait_until(lambda: node.value("/open/a", ns) == "yes", f"the allowed write on {node.name}")
        assert node.value("/notes/a", ns) == "before"


def test_cluster_status_shows_every_node_and_its_position(cluster, ns):
    cluster.nodes[1].put("/status-check", ns, True)
    for node in cluster.nodes:
        wait_until(lambda: node.value("/status-check", ns) is True, f"the write on {node.name}")

    def caught_up():
        status = cluster.status()
        nodes = {node["id"]: node for node in status["nodes"]}
        ours = [nodes.get(node.name) for node in cluster.nodes]
        if not all(node and node["alive"] and ns in node["applied"] and node["lag"][ns] == 0 for node in ours):
            return None
        return ours

    ours = wait_until(caught_up, "every node reporting the database applied", timeout=30, interval=0.5)
    positions = {node["applied"][ns] for node in ours}
    assert len(positions) == 1 and positions.pop() >= 1
    # The table form names the same nodes.
    text = subprocess.run([hearth_binary(), "cluster", "status", "--cluster", cluster.postgres.url],
                          capture_output=True, text=True, timeout=60).stdout
    for node in cluster.nodes:
        assert node.name in text
    assert "APPLIED" in text and "LAG" in text
