#!/usr/bin/env python3
"""Instructions per REST request, by component, counted by valgrind's callgrind.

Started by scripts/profile-rest, which builds the release binaries. For each load it starts a
server under callgrind with instrumentation off, warms it with 500 requests, turns counting on,
sends exactly N requests (HTTP/1.1 keep-alive, 16 connections, one request in flight on each),
dumps the counts and prints the instructions per request: in all, and for each component of
Hearth's request path (inclusive counts of synchronous functions, from the call graph). Counts
are user-space instructions (the kernel's work is not counted) and repeat within a percent or
so whatever else the machine is doing, unlike requests per second on a shared machine.

    scripts/profile-rest [--requests 2000] [--only get|denied|post|ceiling-get|ceiling-post]...
    .venv/bin/python scripts/profile_rest.py --bin-path A [--compare-bin-path B] ...

Two workarounds for this machine's valgrind 3.19, applied to copies in a temporary folder:
the binaries' DWARF 5 debug information makes it give up (it is stripped; symbols stay), and
its rt_sigsuspend wrapper writes into the caller's signal mask, which libdispatch keeps in
read-only memory (every Swift program with an async main): a preloaded sigsuspend copies it.
"""
import argparse
import collections
import os
import re
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_http import ADMIN_TOKEN, BENCH_RULES, DENIED_READ, POST_BODY, free_port  # noqa: E402

SIGSUSPEND_SHIM = r"""
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
int sigsuspend(const sigset_t *mask) {
    sigset_t copy = *mask;
    return (int)syscall(SYS_rt_sigsuspend, &copy, 8);
}
"""

LOADS = {
    "get": dict(path="/bench/posts/p1.json", status=200),
    "denied": dict(path=DENIED_READ, status=401),
    "post": dict(path="/bench/posts.json", method="POST", body=POST_BODY, status=200),
    "ceiling-get": dict(path="/", status=200, ceiling=True),
    "ceiling-post": dict(path="/", method="POST", body=POST_BODY, status=200, ceiling=True),
}

# Components of the request path: a label and the demangled callee each row sums the call
# edges into (from outside itself), optionally only from callers matching a third pattern.
COMPONENTS = [
    ("request metrics (ServerMetrics.request)", r"^ServerMetrics\.request\(", None),
    ("request log entry (RequestLog.record)", r"^RequestLog\.record\(path", None),
    ("request log: request ID as text (context.id)", r"^Logger\.MetadataValue\.description\.getter|^protocol witness for LogHandler\.subscript\.getter", None),
    ("CORS headers (CORS.decorate)", r"^(specialized )?static CORS\.decorate", None),
    ("security headers (SecurityHeaders.apply)", r"^(specialized )?static SecurityHeaders\.apply", None),
    ("proxy check (ProxyTrust.forwardedClient)", r"^ProxyTrust\.forwardedClient", None),
    ("namespace table: matchers, copies, path", r"^closure #\d+ in HearthResponder\.init|outlined (init with copy|destroy) of Namespace$|^URI\.path\.getter|outlined (copy|consume) of Namespace\.Match", r"NamespaceTable\.respond|accepts"),
    ("REST request parsing (RESTRequest.init)", r"^(specialized )?RESTRequest\.init", None),
    ("database name (Host, ns=)", r"^DatabaseResponder\.databaseName\(for", None),
    ("open database (provider lock, rules watch)", r"^DataFolder\.database\(named:\)$|DatabaseProvider\.(isOpen|openDatabase)|^RulesRegistry\.watch", None),
    ("read: rules and tree lookup (DatabaseOperations.read)", r"^DatabaseOperations\.read\(", None),
    ("refusal: metric (ServerMetrics.denied)", r"^ServerMetrics\.denied", None),
    ("refusal: answer (HearthError.response)", r"^HearthError\.response\(\)", None),
    ("write: refusal check before the body (refuseEarly)", r"^DatabaseOperations\.refuseEarly", None),
    ("write: body parse (JSONParser.parse)", r"^static JSONParser\.parse<", None),
    ("write: the writer, under its lock (Database.enqueue)", r"^Database\.enqueue\(", None),
    ("  · apply to the tree (DatabaseState.applying)", r"^DatabaseState\.applying\(_:now:\)", r"Database\.enqueue"),
    ("  · rules: the write's authorization", r"writeAuthorization\(for:on:\)", r"Database\.enqueue"),
    ("  · push ID", r"closure #1 in Database\.submitPush", r"Database\.enqueue"),
    ("  · log record: JSON and path text", r"^JSONWriter\.write\(_:\)|^Path\.description\.getter", r"Database\.enqueue"),
    ("write: SQLite insert and commit (per write)", r"^DatabaseWriter\.write<", None),
    ("answer: JSON text (JSONWriter.bytes, Node.object)", r"^static JSONWriter\.bytes|^static Node\.object|nameObject", r"DatabaseResponder\.handle"),
    ("answer: response (JSONResponse.make, buffer)", r"^(specialized )?static JSONResponse\.make|^specialized ByteBufferAllocator\.buffer", r"DatabaseResponder|HearthError"),
]


def drive(port, count, path, method="GET", body=None, connections=16):
    """Sends exactly `count` requests and returns the statuses seen."""
    payload = body.encode() if body else b""
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
    if body is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
    request = (head + "\r\n").encode() + payload
    selector = selectors.DefaultSelector()
    sent = done = 0
    statuses = collections.Counter()
    sockets = []
    for _ in range(min(connections, count)):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(request)
        sent += 1
        state = {"sock": sock, "buffer": b""}
        selector.register(sock, selectors.EVENT_READ, state)
        sockets.append(sock)
    while done < count:
        for key, _ in selector.select(timeout=120):
            state = key.data
            data = state["sock"].recv(65536)
            if not data:
                raise RuntimeError("the server closed a connection")
            state["buffer"] += data
            while True:
                buffer = state["buffer"]
                end = buffer.find(b"\r\n\r\n")
                if end < 0:
                    break
                lines = buffer[:end].decode("latin1").split("\r\n")
                length = next((int(line.split(":", 1)[1]) for line in lines[1:] if line.lower().startswith("content-length:")), 0)
                if len(buffer) < end + 4 + length:
                    break
                state["buffer"] = buffer[end + 4 + length:]
                statuses[int(lines[0].split()[1])] += 1
                done += 1
                if sent < count:
                    state["sock"].sendall(request)
                    sent += 1
    for sock in sockets:
        sock.close()
    return statuses


def prepared_binaries(bin_path, folder):
    """Copies of hearth and hearth-bench without debug information, and the sigsuspend shim."""
    for name in ("hearth", "hearth-bench"):
        subprocess.run(["objcopy", "--strip-debug", os.path.join(bin_path, name), os.path.join(folder, name)], check=True)
    source = os.path.join(folder, "sigshim.c")
    with open(source, "w") as handle:
        handle.write(SIGSUSPEND_SHIM)
    shim = os.path.join(folder, "sigshim.so")
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", shim, source], check=True)
    return shim


def profile(folder, shim, load, count):
    """Runs one load under callgrind; returns the path of the dump of the counted requests."""
    spec = LOADS[load]
    port = free_port()
    data = tempfile.mkdtemp(prefix="hearth-profile-", dir=folder)
    rules = os.path.join(data, "rules.json")
    with open(rules, "w") as handle:
        handle.write(BENCH_RULES)
    if spec.get("ceiling"):
        command = [os.path.join(folder, "hearth-bench"), "ceiling", "--host", "127.0.0.1", "--port", str(port)]
    else:
        command = [os.path.join(folder, "hearth"), "serve", "--host", "127.0.0.1", "--port", str(port),
                   "--data", os.path.join(data, "data"), "--admin-token", ADMIN_TOKEN, "--log-level", "warning",
                   "--rules", rules, "--no-demo"]
    out = os.path.join(folder, f"callgrind.{load}")
    log = open(os.path.join(data, "server.log"), "w")
    server = subprocess.Popen(["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}.%p"] + command,
                              stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, LD_PRELOAD=shim))
    try:
        deadline = time.time() + 300
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).read()
                break
            except urllib.error.HTTPError:
                break
            except OSError:
                if server.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"the server under valgrind did not start; see {log.name}")
                time.sleep(0.5)
        if not spec.get("ceiling"):
            body = POST_BODY.encode()
            put = urllib.request.Request(f"http://127.0.0.1:{port}/bench/posts/p1.json", data=body, method="PUT")
            urllib.request.urlopen(put).read()
        arguments = dict(path=spec["path"], method=spec.get("method", "GET"), body=spec.get("body"))
        drive(port, 500, **arguments)  # warm-up, not counted
        subprocess.run(["callgrind_control", "-i", "on", str(server.pid)], check=True, capture_output=True)
        statuses = drive(port, count, **arguments)
        if set(statuses) != {spec["status"]}:
            raise RuntimeError(f"{load}: unexpected answers {dict(statuses)}")
        subprocess.run(["callgrind_control", "-d", str(server.pid)], check=True, capture_output=True)
        time.sleep(1)
    finally:
        server.terminate()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
    return f"{out}.{server.pid}.1"


def read_dump(path):
    """Call edges (caller, callee) -> inclusive instructions, demangled names, and the total."""
    names, edges, total = {}, collections.Counter(), 0
    function = callee = None
    pending = False

    def name_of(spec):
        match = re.match(r"\((\d+)\)(?: (.*))?", spec)
        if match.group(2) is not None:
            names[match.group(1)] = match.group(2)
        return names[match.group(1)]

    with open(path, errors="replace") as handle:
        for line in handle:
            line = line.rstrip("\n")
            if line.startswith("fn="):
                function = name_of(line[3:])
            elif line.startswith("cfn="):
                callee = name_of(line[4:])
            elif line.startswith("calls="):
                pending = True
            elif line and (line[0].isdigit() or line[0] in "+-*"):
                parts = line.split()
                if len(parts) < 2:
                    continue
                if pending:
                    edges[(function, callee)] += int(parts[1])
                    pending = False
                else:
                    total += int(parts[1])
    mangled = sorted({name for edge in edges for name in edge})
    demangled = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(mangled),
                               capture_output=True, text=True, check=True).stdout.split("\n")
    return edges, dict(zip(mangled, demangled)), total


def component_cost(edges, names, callee_pattern, caller_pattern):
    callee_rx = re.compile(callee_pattern)
    caller_rx = re.compile(caller_pattern) if caller_pattern else None
    cost = 0
    for (caller, callee), instructions in edges.items():
        if callee_rx.search(names[callee]) and not callee_rx.search(names[caller]):
            if caller_rx is None or caller_rx.search(names[caller]):
                cost += instructions
    return cost


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin-path", required=True)
    parser.add_argument("--compare-bin-path", help="a second build, profiled with the same loads")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--only", choices=list(LOADS), action="append")
    parser.add_argument("--keep", action="store_true", help="keep the dumps (callgrind_annotate reads them)")
    args = parser.parse_args()
    loads = args.only or list(LOADS)
    builds = [("", args.bin_path)] + ([(" (B)", args.compare_bin_path)] if args.compare_bin_path else [])
    folder = tempfile.mkdtemp(prefix="hearth-callgrind-")
    columns = []
    try:
        for suffix, bin_path in builds:
            build_folder = tempfile.mkdtemp(dir=folder)
            shim = prepared_binaries(bin_path, build_folder)
            for load in loads:
                dump = profile(build_folder, shim, load, args.requests)
                edges, names, total = read_dump(dump)
                columns.append((load + suffix, edges, names, total))
                print(f"{load}{suffix}: {total / args.requests:,.0f} instructions per request ({dump})", flush=True)
        print()
        print("| Instructions per request | " + " | ".join(name for name, _, _, _ in columns) + " |")
        print("|---|" + "---:|" * len(columns))
        print("| whole request (user space) | " + " | ".join(f"{total / args.requests:,.0f}" for _, _, _, total in columns) + " |")
        for label, callee, caller in COMPONENTS:
            costs = [component_cost(edges, names, callee, caller) / args.requests for _, edges, names, _ in columns]
            if any(cost >= 50 for cost in costs):
                print(f"| {label} | " + " | ".join(f"{cost:,.0f}" if cost >= 50 else "–" for cost in costs) + " |")
    finally:
        if args.keep:
            print(f"\ndumps kept in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
