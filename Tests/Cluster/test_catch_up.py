"""A node added to a running cluster that holds a million nodes of data catches up (from the
newest snapshot in PostgreSQL and the log after it) and serves the same data, then follows."""

from __future__ import annotations

import time

from cluster_support import skip_without_parts, wait_until

skip_without_parts()

CHUNKS = 10
LEAVES_PER_CHUNK = 100_000


def test_a_node_added_later_catches_up_with_a_million_nodes(cluster, ns):
    writer = cluster.nodes[0]
    for chunk in range(CHUNKS):
        writer.put(f"/big/c{chunk}", ns, {f"k{leaf:06d}": f"value {leaf:06d}" for leaf in range(LEAVES_PER_CHUNK)})
    # Some small writes after the bulk, so the newcomer needs the log after a snapshot too.
    for index in range(50):
        writer.put(f"/big/tail/t{index}", ns, index)
    expected = writer.value("/big", ns)
    assert sum(len(expected[f"c{chunk}"]) for chunk in range(CHUNKS)) == CHUNKS * LEAVES_PER_CHUNK
    # The bulk is past the snapshot threshold (16 MB of log): a node stored one.
    wait_until(lambda: int(cluster.postgres.psql(
        f"SELECT count(*) FROM hearth_snapshot_done WHERE database = '{ns}'").strip() or 0) >= 1,
        "a snapshot of the database in PostgreSQL", timeout=120, interval=0.5)

    started = time.monotonic()
    newcomer = cluster.add_node()
    try:
        assert newcomer.value("/big", ns) == expected
        caught_up = time.monotonic() - started
        print(f"a new node served {CHUNKS * LEAVES_PER_CHUNK:,} nodes {caught_up:.1f} s after it was started")
        # And it follows on from there.
        cluster.nodes[1].put("/big/tail/after", ns, "joined")
        wait_until(lambda: newcomer.value("/big/tail/after", ns) == "joined", "a later write on the new node")
    finally:
        newcomer.stop()
        cluster.nodes.remove(newcomer)
