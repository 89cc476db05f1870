"""The cluster's figures for BENCHMARKS.md (run through scripts/bench-cluster): durable writes
per second through three nodes against one node on SQLite, one write delivered to 10,000
WebSocket listeners spread over three nodes, replication lag under write load, and the
catch-up time of a new node with a million nodes. PostgreSQL runs with its defaults (fsync
on), as SQLite runs with synchronous=FULL. Prints Markdown table rows."""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "Tests" / "Cluster"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin-path", required=True)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--listeners", type=int, default=10_000)
    parser.add_argument("--only", action="append", choices=["writes", "fanout", "lag", "catchup"])
    options = parser.parse_args()
    os.environ["HEARTH_BINARY"] = os.path.join(options.bin_path, "hearth")
    os.environ.setdefault("HEARTH_LOG_LEVEL", "error")
    bench = os.path.join(options.bin_path, "hearth-bench")
    wanted = set(options.only or ["writes", "fanout", "lag", "catchup"])

    from cluster_support import Cluster
    from realtime_support import Hearth, OPEN_RULES

    print(f"| figure (2 cores; nodes, PostgreSQL and clients on one machine) | result |")
    print("|---|---|")
    if "writes" in wanted:
        folder = Path(tempfile.mkdtemp(prefix="hearth-bench-single-"))
        (folder / "rules.json").write_text(json.dumps(OPEN_RULES))
        single = Hearth(data=folder / "data", rules_file=folder / "rules.json").start(0)
        try:
            rate = ws_writes(bench, [single.port], 48, options.seconds)
            print(f"| durable writes/s, one node on SQLite, 48 WebSocket connections | {rate:,.0f}/s |")
        finally:
            single.stop()
        cluster = Cluster(count=3, with_nginx=False, durable=True)
        try:
            rate = ws_writes(bench, [cluster.nodes[0].port], 48, options.seconds)
            print(f"| durable writes/s, one node of a three-node cluster, 48 connections | {rate:,.0f}/s |")
            rate = ws_writes(bench, [node.port for node in cluster.nodes], 16, options.seconds)
            print(f"| durable writes/s, three nodes on one PostgreSQL, 16 connections each | {rate:,.0f}/s |")
            appends = cluster.postgres.psql("SELECT count(*), count(DISTINCT committed_at) FROM hearth_log WHERE database = 'writes'")
            records, transactions = (int(part) for part in appends.strip().split("|"))
            print(f"| records per PostgreSQL append (group commit) over both runs | {records / max(transactions, 1):.1f} "
                  f"({records:,} records in {transactions:,} transactions) |")
        finally:
            cluster.close()
    if "fanout" in wanted:
        folder = Path(tempfile.mkdtemp(prefix="hearth-bench-single-"))
        (folder / "rules.json").write_text(json.dumps(OPEN_RULES))
        single = Hearth(data=folder / "data", rules_file=folder / "rules.json").start(0)
        try:
            line = run([bench, "ws-fanout", "--port", str(single.port), "--listeners", str(options.listeners),
                        "--writes", "20", "--namespace", "fanout"]).strip()
            print(line.replace("| fan-out to", "| one node on SQLite: fan-out to", 1))
        finally:
            single.stop()
    if wanted & {"fanout", "lag", "catchup"}:
        cluster = Cluster(count=3, with_nginx=False, durable=True)
        try:
            if "fanout" in wanted:
                ports = [node.port for node in cluster.nodes]
                command = [bench, "ws-fanout", "--port", str(ports[0]), "--listeners", str(options.listeners),
                           "--writes", "20", "--namespace", "fanout"]
                for port in ports[1:]:
                    command += ["--also-port", str(port)]
                print(run(command).strip())
            if "lag" in wanted:
                print(replication_lag(bench, cluster, options.seconds))
            if "catchup" in wanted:
                print(catch_up(cluster))
        finally:
            cluster.close()


def run(command: list[str]) -> str:
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def ws_writes(bench: str, ports: list[int], connections: int, seconds: float) -> float:
    """Runs ``hearth-bench ws-writes`` against every port at once; the summed writes/s."""
    processes = [subprocess.Popen([bench, "ws-writes", "--port", str(port), "--connections", str(connections),
                                   "--seconds", str(seconds), "--namespace", "writes"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for port in ports]
    total = 0.0
    for process in processes:
        out, err = process.communicate()
        match = re.search(r"\| ([\d.]+)/s;", out)
        if not match:
            raise SystemExit(f"ws-writes failed:\n{out}\n{err}")
        total += float(match.group(1))
    return total


def replication_lag(bench: str, cluster, seconds: float) -> str:
    """While ws-writes loads nodes 1 and 2, a writer stamps /lag on node 1 every 20 ms and a
    stream on node 3 records when each stamp arrives: lag = arrival on node 3 − acknowledgement
    on node 1."""
    import requests
    from cluster_support import EventStream

    load = [subprocess.Popen([bench, "ws-writes", "--port", str(node.port), "--connections", "8",
                              "--seconds", str(seconds + 4), "--warmup", "1", "--namespace", "lag"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for node in cluster.nodes[:2]]
    time.sleep(1.5)
    writer, reader = cluster.nodes[0], cluster.nodes[2]
    stream = EventStream(reader.url, "/lag", "lag")
    arrivals: dict[int, float] = {}

    def watch():
        seen = 0
        while not done.is_set():
            with stream.changed:
                stream.changed.wait(0.1)
                events = stream.events[seen:]
                seen = len(stream.events)
            now = time.monotonic()
            for _, path, data in events:
                if path == "/stamp" and isinstance(data, int):
                    arrivals.setdefault(data, now)

    done = threading.Event()
    watcher = threading.Thread(target=watch)
    watcher.start()
    acknowledged: dict[int, float] = {}
    sent: dict[int, float] = {}
    session = requests.Session()
    end = time.monotonic() + seconds
    index = 0
    while time.monotonic() < end:
        index += 1
        sent[index] = time.monotonic()
        response = session.put(f"{writer.url}/lag/stamp.json", params={"ns": "lag"}, json=index,
                               headers={"Authorization": "Bearer owner"}, timeout=30)
        if response.status_code == 200:
            acknowledged[index] = time.monotonic()
        time.sleep(0.02)
    time.sleep(1)
    done.set()
    watcher.join()
    stream.close()
    for process in load:
        process.wait()
    lags = sorted((arrivals[i] - acknowledged[i]) * 1000 for i in acknowledged if i in arrivals)
    trips = sorted((arrivals[i] - sent[i]) * 1000 for i in acknowledged if i in arrivals)
    if not lags:
        return "| replication lag | no stamp arrived |"

    def p(values, q):
        return values[min(len(values) - 1, int(len(values) * q))]
    return (f"| replication lag under write load (16 connections writing through nodes 1 and 2): node 1's "
            f"acknowledgement → the value on node 3's stream; and the write sent → it arrives on node 3 "
            f"| p50 {p(lags, 0.5):.1f} ms, p99 {p(lags, 0.99):.1f} ms; sent → arrived p50 {p(trips, 0.5):.1f} ms, "
            f"p99 {p(trips, 0.99):.1f} ms ({len(lags)} of {len(acknowledged)} stamps seen) |")


def catch_up(cluster) -> str:
    writer = cluster.nodes[0]
    for chunk in range(10):
        writer.put(f"/big/c{chunk}", "big", {f"k{leaf:06d}": f"value {leaf:06d}" for leaf in range(100_000)})
    started = time.monotonic()
    newcomer = cluster.add_node()
    started_serving = time.monotonic() - started
    value = newcomer.value("/big", "big", shallow="true")
    total = time.monotonic() - started
    assert sorted(value) == [f"c{chunk}" for chunk in range(10)], value
    return (f"| catch-up of a new node, database of 1,000,000 nodes (snapshot + log in PostgreSQL) "
            f"| {total:.1f} s from start to its first answer from that database (process up in {started_serving:.1f} s) |")


if __name__ == "__main__":
    main()
