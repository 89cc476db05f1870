"""Failures: ``kill -9`` of a node under load loses no acknowledged write and the restarted
node catches up; the onDisconnect operations of a dead node's connections are applied by
another node once its lease runs out; with PostgreSQL unreachable, writes answer 503 in
Firebase's shape while reads keep working, and writes resume by themselves."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest
import requests
import websockets

from cluster_support import Cluster, EventStream, skip_without_parts, wait_until

skip_without_parts()


def test_kill_minus_9_under_load_loses_no_acknowledged_write(cluster, ns):
    victim = cluster.nodes[1]
    acknowledged: dict[str, set[str]] = {node.name: set() for node in cluster.nodes}
    stop = threading.Event()
    victim_down = threading.Event()

    def write(node):
        session = requests.Session()
        item = 0
        while not stop.is_set():
            key = f"{node.name}-{item:05d}"
            try:
                response = session.put(f"{node.url}/load/{key}.json", params={"ns": ns}, json=item,
                                       headers={"Authorization": "Bearer owner"}, timeout=10)
            except requests.RequestException:
                if node is victim:
                    return  # the node is gone: whatever it did not answer is not acknowledged
                raise
            if response.status_code == 200:
                acknowledged[node.name].add(key)
            item += 1

    threads = [threading.Thread(target=write, args=(node,)) for node in cluster.nodes]
    for thread in threads:
        thread.start()
    wait_until(lambda: all(len(keys) >= 30 for keys in acknowledged.values()), "writes acknowledged on every node")
    victim.kill()
    victim_down.set()
    survivors = [node for node in cluster.nodes if node is not victim]
    before = {node.name: len(acknowledged[node.name]) for node in survivors}
    wait_until(lambda: all(len(acknowledged[name]) >= count + 30 for name, count in before.items()),
               "the other nodes writing on after the kill")
    victim.start()  # same port, same node ID: it catches up from PostgreSQL
    stop.set()
    for thread in threads:
        thread.join()
    expected = set().union(*acknowledged.values())
    assert len(acknowledged[victim.name]) >= 30
    for node in cluster.nodes:
        def holds_everything(node=node):
            stored = node.value("/load", ns) or {}
            return expected <= set(stored) and stored
        stored = wait_until(holds_everything, f"every acknowledged write on {node.name}")
        for key in expected:
            assert stored[key] == int(key.rsplit("-", 1)[1])
    values = [node.value("/load", ns) for node in cluster.nodes]
    assert values[0] == values[1] == values[2]


async def _register_on_disconnect(node_port: int, ns: str, path: str, value):
    """A raw realtime client: the handshake, then onDisconnect put of ``value`` at ``path``;
    returns the open socket once the server acknowledged it."""
    socket = await websockets.connect(f"ws://127.0.0.1:{node_port}/.ws?v=5&ns={ns}", max_size=None)
    handshake = json.loads(await socket.recv())
    assert handshake["t"] == "c" and handshake["d"]["t"] == "h", handshake
    await socket.send(json.dumps({"t": "d", "d": {"r": 1, "a": "o", "b": {"p": path, "d": value}}}))
    while True:
        message = json.loads(await socket.recv())
        if message.get("t") == "d" and message["d"].get("r") == 1:
            assert message["d"]["b"]["s"] == "ok", message
            return socket


def test_a_dead_nodes_on_disconnect_operations_are_applied_by_another(cluster, ns):
    victim, watcher = cluster.nodes[0], cluster.nodes[2]
    watcher.put("/presence/ada", ns, "online")
    loop = asyncio.new_event_loop()
    try:
        socket = loop.run_until_complete(_register_on_disconnect(victim.port, ns, "/presence/ada", "offline"))
        stream = EventStream(watcher.url, "/presence/ada", ns)
        stream.wait_for(lambda events: events and events[0][2] == "online", "online")
        victim.kill()
        # The connection died with its node: after the lease (4 s), a live node applies its operation.
        stream.wait_for(lambda events: events[-1][2] == "offline", "the dead node's onDisconnect", timeout=30)
        stream.close()
        socket.transport.abort()  # its server is gone: no closing handshake to wait for
    finally:
        for task in asyncio.all_tasks(loop):
            task.cancel()
        loop.run_until_complete(asyncio.sleep(0))
        loop.close()
        if victim.process is None:
            victim.start()
    for node in cluster.nodes:
        if node is not victim:
            assert node.value("/presence/ada", ns) == "offline"
    wait_until(lambda: victim.value("/presence/ada", ns) == "offline", "the restarted node caught up")


@pytest.fixture
def small_cluster():
    running = Cluster(count=2, with_nginx=False)
    yield running
    running.close()


def test_writes_answer_503_while_postgresql_is_unreachable_and_resume_by_themselves(small_cluster, ns):
    first, second = small_cluster.nodes
    first.put("/doc", ns, {"title": "kept"})
    wait_until(lambda: second.value("/doc", ns) == {"title": "kept"}, "the write on the second node")
    small_cluster.postgres.stop("fast")
    try:
        refused = first.rest("PUT", "/doc/title", ns, "lost")
        assert refused.status_code == 503, refused.text
        assert set(refused.json()) == {"error"} and "unavailable" in refused.json()["error"]
        pushed = second.rest("POST", "/doc/list", ns, 1)
        assert pushed.status_code == 503, pushed.text
        # Reads are served from each node's replica.
        assert first.value("/doc", ns) == {"title": "kept"}
        assert second.value("/doc", ns) == {"title": "kept"}
    finally:
        small_cluster.postgres.start()
    # No restart of the nodes: their next writes go through once PostgreSQL is back.
    wait_until(lambda: first.rest("PUT", "/doc/title", ns, "after").status_code == 200, "a write through node 1",
               timeout=60, interval=0.5)
    wait_until(lambda: second.value("/doc/title", ns) == "after", "node 2 following again", timeout=30)
    assert second.rest("PUT", "/doc/other", ns, 2).status_code == 200
    wait_until(lambda: first.value("/doc", ns) == {"title": "after", "other": 2}, "both writes on node 1")
