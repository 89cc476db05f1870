"""Two Hearth builds side by side: the same loads, interleaved, against each (A, B, A, B, …), so
a change's cost shows as a ratio measured in one run on one machine.

    .venv/bin/python scripts/bench_ab.py --a /tmp/hearth-base/.build/release --b .build/release \
        [--rounds 3] [--duration 6] [--only "point read"]...

Loads (wrk -t2 -c16 after a 2 s warm-up): a point read (`GET /bench/p1.json`), a durable write
(`POST /bench/posts.json`), a page of the web app (`GET /`), and a 1 KB image download
(`GET /v0/b/<bucket>/o/<name>?alt=media`). Prints each round and the medians of the rate and
of the server's CPU time per request (user + system, from /proc): on a shared machine the rate
swings with the neighbours, the CPU time per request much less.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_http import BUCKET, Servers, request, wrk  # noqa: E402


def cpu_seconds(pid: int) -> float:
    """The process's user + system CPU time so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def prepare(url: str):
    request("PUT", f"{url}/bench/p1.json", json.dumps({"title": "hello", "stars": 3}))
    request("POST", f"{url}/v0/b/{BUCKET}/o?uploadType=media&name=bench%2Fdot.png", bytes(1024),
            headers={"Content-Type": "image/png"})


LOADS = {
    "point read": lambda url: dict(url=f"{url}/bench/p1.json"),
    "durable write": lambda url: dict(url=f"{url}/bench/posts.json", method="POST", body='{"title":"x","stars":1}'),
    "web page": lambda url: dict(url=f"{url}/"),
    "1 KB image": lambda url: dict(url=f"{url}/v0/b/{BUCKET}/o/bench%2Fdot.png?alt=media"),
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--a", required=True, help="the folder of build A's hearth binary")
    parser.add_argument("--b", required=True, help="the folder of build B's hearth binary")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=int, default=6)
    parser.add_argument("--only", choices=list(LOADS), action="append", help="measure only these loads")
    args = parser.parse_args()
    loads = {name: make for name, make in LOADS.items() if not args.only or name in args.only}
    servers = {name: Servers(path, pocketbase=None) for name, path in (("A", args.a), ("B", args.b))}
    try:
        started = {name: server.hearth() for name, server in servers.items()}
        urls = {name: url for name, (url, _) in started.items()}
        pids = {name: pid for name, (_, pid) in started.items()}
        for url in urls.values():
            prepare(url)
        results = {load: {"A": [], "B": []} for load in loads}
        costs = {load: {"A": [], "B": []} for load in loads}
        for round_number in range(args.rounds):
            for load, make in loads.items():
                for name in ("A", "B") if round_number % 2 == 0 else ("B", "A"):
                    options = make(urls[name])
                    url = options.pop("url")
                    wrk(url, 2, **options)  # warm-up, not reported
                    before = cpu_seconds(pids[name])
                    rate = wrk(url, args.duration, **options)
                    cost = (cpu_seconds(pids[name]) - before) / (rate * args.duration) * 1e6
                    results[load][name].append(rate)
                    costs[load][name].append(cost)
                    print(f"round {round_number + 1} {load:14} {name}: {rate:,.0f}/s, {cost:.1f} µs CPU each", flush=True)
        print()
        print(f"| What | A (median of {args.rounds}) | B (median) | B / A | CPU per request A | B | B / A |")
        print("|---|---|---|---|---|---|---|")
        for load, rates in results.items():
            a, b = statistics.median(rates["A"]), statistics.median(rates["B"])
            cost_a, cost_b = statistics.median(costs[load]["A"]), statistics.median(costs[load]["B"])
            print(f"| {load} | {a:,.0f}/s | {b:,.0f}/s | {b / a:.2f} | {cost_a:.1f} µs | {cost_b:.1f} µs | {cost_b / cost_a:.2f} |")
    finally:
        for server in servers.values():
            server.stop()


if __name__ == "__main__":
    main()
