"""Functions benchmarks (issue 32), on release builds, on this machine:

1. Durable write throughput (wrk, 16 connections, POSTs that push a post) with ten webhook
   functions whose trigger every write fires, against the same server with none, alternating in
   each round. The webhooks go to hearth-bench's bare Hummingbird route, so delivery costs the
   server what it costs, not what a slow receiver costs. Each round starts once the delivered
   servers' backlogs drained, so no server's catch-up runs during another's round.
2. Commit-to-handler delay at a steady write rate, with 1 and with 10 functions: a receiver on
   loopback takes each event's `time` (when the write was checked, just before its commit) and
   its own clock at arrival.
3. A function down for a while: its backlog builds at the steady rate, then the time from its
   return until every event has arrived.

Started by scripts/bench-functions, which builds the release binaries.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ADMIN = "bench-functions-admin"
SECRET = "whsec_" + base64.b64encode(bytes(range(32))).decode()
RULES = '{"rules": {".read": true, ".write": true}}'


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port}")


class Hearth:
    def __init__(self, bin_path, hooks: dict | None):
        self.folder = tempfile.mkdtemp(prefix="bench-functions-")
        self.port = free_port()
        rules = os.path.join(self.folder, "rules.json")
        with open(rules, "w") as handle:
            handle.write(RULES)
        args = [os.path.join(bin_path, "hearth"), "serve", "--port", str(self.port), "--data", os.path.join(self.folder, "data"),
                "--admin-token", ADMIN, "--no-demo", "--rules", rules, "--log-level", "error"]
        env = dict(os.environ, BENCH_HOOK_SECRET=SECRET)
        if hooks:
            functions = os.path.join(self.folder, "functions")
            os.makedirs(functions)
            with open(os.path.join(functions, "webhooks.json"), "w") as handle:
                json.dump({"webhooks": hooks}, handle)
            args += ["--functions", functions, "--function-backlog", "1000000"]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        wait_for_port(self.port)
        self.url = f"http://127.0.0.1:{self.port}"

    def backlog(self):
        """Events waiting for delivery, from the server's metrics."""
        request = urllib.request.Request(f"{self.url}/metrics", headers={"Authorization": f"Bearer {ADMIN}"})
        text = urllib.request.urlopen(request, timeout=10).read().decode()
        return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith("hearth_function_backlog{"))

    def drained(self, timeout=600):
        """Waits until nothing waits for delivery (a server whose functions are down never drains)."""
        deadline = time.time() + timeout
        while self.backlog() > 0:
            if time.time() > deadline:
                raise RuntimeError("the backlog did not drain")
            time.sleep(0.2)

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


def hooks(count, url, ref="bench/posts/{postId}"):
    # Each function at a path of its own: functions with one trigger share an event's ID.
    return {f"hook{n}": {"url": f"{url}hook{n}", "secretEnv": "BENCH_HOOK_SECRET",
                         "eventTrigger": {"eventType": "google.firebase.database.ref.v1.written",
                                          "eventFilterPathPatterns": {"ref": ref}},
                         "timeoutSeconds": 30}
            for n in range(count)}


def wrk_posts(url, duration):
    script = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)
    script.write('wrk.method = "POST"\nwrk.body = \'{"text": "hello", "n": 1}\'\nwrk.headers["Content-Type"] = "application/json"\n')
    script.close()
    args = ["wrk", "-t2", "-c16", f"-d{duration}s", "-s", script.name, f"{url}/bench/posts.json?auth={ADMIN}&print=silent"]
    output = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    os.unlink(script.name)
    if re.search(r"Non-2xx or 3xx responses|Socket errors", output):
        raise RuntimeError(f"errors under load:\n{output}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))


class Receiver:
    """Takes webhook deliveries on loopback (HTTP/1.1, kept alive) and keeps each event's delay."""

    def __init__(self, port=0):
        self.delays: list[float] = []
        self.ids: set[str] = set()
        self.lock = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                arrived = time.time()
                event = json.loads(body)
                sent = datetime.fromisoformat(event["time"].replace("Z", "+00:00")).timestamp()
                with receiver.lock:
                    key = (self.path, event["id"])
                    if key not in receiver.ids:
                        receiver.ids.add(key)
                        receiver.delays.append((arrived - sent) * 1000)
                    receiver.lock.notify_all()
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def wait_for(self, count, timeout):
        deadline = time.time() + timeout
        with self.lock:
            while len(self.ids) < count and time.time() < deadline:
                self.lock.wait(deadline - time.time())
            return len(self.ids)


def steady_writes(url, rate, seconds):
    """PUTs at `rate` per second for `seconds`, on one kept-alive connection per writer thread."""
    count = int(rate * seconds)
    started = time.time()

    def writer(offset, step):
        import http.client
        connection = http.client.HTTPConnection(url.replace("http://", ""), timeout=10)
        for n in range(offset, count, step):
            due = started + n / rate
            pause = due - time.time()
            if pause > 0:
                time.sleep(pause)
            connection.request("PUT", f"/bench/posts/p{n}.json?auth={ADMIN}&print=silent", body=b'{"text": "hello"}',
                               headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            response.read()
            if response.status not in (200, 204):
                raise RuntimeError(f"write failed: {response.status}")

    threads = [threading.Thread(target=writer, args=(i, 4)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return count


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin-path", required=True)
    parser.add_argument("--duration", type=int, default=15, help="seconds of each throughput measurement")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--rate", type=int, default=50, help="steady writes per second for the delay and backlog runs")
    parser.add_argument("--seconds", type=int, default=20, help="seconds of steady writes for the delay runs")
    parser.add_argument("--down", type=int, default=60, help="seconds the function is down in the backlog run")
    parser.add_argument("--only", action="append", choices=["throughput", "delay", "backlog"], help="run only these parts")
    args = parser.parse_args()
    wanted = set(args.only or ["throughput", "delay", "backlog"])

    # 1. Throughput: no functions; one function delivered to; ten functions whose endpoint is
    # down (the events are recorded with the writes and wait: the cost on the write path); ten
    # functions delivered to (recording and delivery share the two cores with the writes).
    if "throughput" in wanted:
        throughput(args)
    if "delay" in wanted:
        delay(args)
    if "backlog" in wanted:
        backlog(args)


def throughput(args):
    ceiling_port = free_port()
    ceiling = subprocess.Popen([os.path.join(args.bin_path, "hearth-bench"), "ceiling", "--port", str(ceiling_port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_port(ceiling_port)
    delivered = f"http://127.0.0.1:{ceiling_port}/"
    down = f"http://127.0.0.1:{free_port()}/"
    servers = {
        "none": Hearth(args.bin_path, None),
        "1 delivered": Hearth(args.bin_path, hooks(1, delivered)),
        "10 recorded, endpoint down": Hearth(args.bin_path, hooks(10, down)),
        "10 delivered": Hearth(args.bin_path, hooks(10, delivered)),
    }
    rates = {name: [] for name in servers}
    try:
        for server in servers.values():
            wrk_posts(server.url, 2)  # warm-up
        for _ in range(args.rounds):
            for name, server in servers.items():
                # Every server starts its round alone: a delivered server's catch-up after its
                # own round would otherwise run during the next server's round.
                for other, quiet in servers.items():
                    if "delivered" in other:
                        quiet.drained()
                rates[name].append(wrk_posts(server.url, args.duration))
    finally:
        for server in servers.values():
            server.stop()
        ceiling.terminate()
    base = statistics.mean(rates["none"])
    for name, values in rates.items():
        print(f"throughput, {name}: {[round(v) for v in values]} writes/s, {statistics.mean(values) / base:.2f} of none")



def delay(args):
    """2. Delay at a steady rate."""
    for functions in (1, 10):
        receiver = Receiver()
        server = Hearth(args.bin_path, hooks(functions, f"http://127.0.0.1:{receiver.port}/"))
        try:
            count = steady_writes(server.url, args.rate, args.seconds)
            got = receiver.wait_for(count * functions, 120)
            delays = receiver.delays
            print(f"delay with {functions} function(s), {args.rate} writes/s for {args.seconds} s: "
                  f"{got}/{count * functions} events, p50 {percentile(delays, 0.5):.1f} ms, p99 {percentile(delays, 0.99):.1f} ms")
        finally:
            server.stop()
            receiver.stop()



def backlog(args):
    """3. A function down, then back."""
    receiver = Receiver()
    port = receiver.port
    server = Hearth(args.bin_path, hooks(1, f"http://127.0.0.1:{port}/"))
    try:
        receiver.stop()
        count = steady_writes(server.url, args.rate, args.down)
        back = time.time()
        receiver = Receiver(port)
        got = receiver.wait_for(count, 600)
        print(f"backlog: {count} events written while the function was down {args.down} s; "
              f"all {got} delivered {time.time() - back:.1f} s after it came back")
    finally:
        server.stop()
        receiver.stop()


if __name__ == "__main__":
    sys.exit(main())
