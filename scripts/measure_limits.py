"""The attacks of the security review (issue 29), tried against a real `hearth serve`, with the
server's memory, file descriptors and disk measured before, during and after each: what
docs/security.md's table of limits reports. Run it with `scripts/measure-limits`.

Each attack is what an outsider can do without an account: name databases into being, send
large bodies to locations the rules refuse (and to one they allow), hold connections open
without finishing a request, withhold a long-polling segment, start uploads into another
user's folder, and sign up in bulk. A server that keeps its limits ends each one answering
normal requests, with its memory and descriptors back near where they started.
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures
import json
import os
import re
import resource
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ADMIN = "measure-admin-token"
RULES = {"rules": {"public": {".read": True, ".write": True},
                   "private": {"$uid": {".read": "auth.uid === $uid", ".write": "auth.uid === $uid"}}}}
STORAGE_RULES = """rules_version = '2';
service firebase.storage { match /b/{bucket}/o { match /{owner}/{rest=**} {
  allow read; allow write: if request.auth != null && request.auth.uid == owner; } } }"""


class Server:
    def __init__(self, binary: str, folder: Path, descriptors: int, extra: list[str]):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "rules.json").write_text(json.dumps(RULES))
        (folder / "storage.rules").write_text(STORAGE_RULES)

        def limit():
            resource.setrlimit(resource.RLIMIT_NOFILE, (descriptors, descriptors))

        self.process = subprocess.Popen(
            [binary, "serve", "--port", "0", "--data", str(folder / "data"), "--admin-token", ADMIN,
             "--rules", str(folder / "rules.json"), "--storage-rules", str(folder / "storage.rules"),
             "--log-level", "warning", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=limit)
        self.lines: list[str] = []
        self.port = None
        ready = threading.Event()

        def read():
            for line in self.process.stdout:
                self.lines.append(line)
                match = re.search(r"Hearth is serving http://[^:]+:(\d+)/", line)
                if match:
                    self.port = int(match.group(1))
                    ready.set()
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(60) or self.port is None:
            raise SystemExit("hearth did not start:\n" + "".join(self.lines))
        self.data = folder / "data"

    def rss_mb(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) / 1024

    def descriptors(self) -> int:
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def request(server: Server, method: str, path: str, body: bytes | None = None, headers: dict | None = None,
            timeout: float = 30) -> int:
    req = urllib.request.Request(f"http://127.0.0.1:{server.port}{path}", data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return 0


def healthy(server: Server) -> bool:
    return server.alive() and request(server, "GET", "/public.json", timeout=10) == 200


class PeakSampler:
    """The server's largest resident memory while the block runs."""

    def __init__(self, server: Server):
        self.server, self.peak, self.running = server, 0.0, True

    def __enter__(self):
        def sample():
            while self.running and self.server.alive():
                self.peak = max(self.peak, self.server.rss_mb())
                time.sleep(0.05)
        self.thread = threading.Thread(target=sample, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *_):
        self.running = False
        self.thread.join()


def disk_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1024 / 1024


def attack_databases(server: Server, count: int) -> dict:
    before = (server.rss_mb(), server.descriptors())
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        codes = list(pool.map(lambda i: request(server, "GET", f"/.json?ns=made-up-{i}"), range(count)))
    created = len([d for d in (server.data / "databases").iterdir() if d.name.startswith("made-up")])
    return {"attack": f"{count} GETs naming new databases (`?ns=`)",
            "answers": summarize(codes), "databases created": created,
            "memory MB": f"{before[0]:.0f} → {server.rss_mb():.0f}", "descriptors": f"{before[1]} → {server.descriptors()}"}


def send_body(server: Server, path: str, size: int) -> int:
    """Sends a PUT of a JSON object of about `size` bytes (1 MiB strings, Firebase allows 10 MB
    a string) in 1 MiB pieces; the status, or 0 when the server stopped it early."""
    pieces = max(1, size >> 20)
    first = b"{"
    pieces_bytes = [(b"," if index else b"") + f'"k{index:05d}":"'.encode() + b"x" * ((1 << 20) - 12) + b'"'
                    for index in range(min(pieces, 1))]
    piece_length = len(pieces_bytes[0]) + 1  # the comma of every piece after the first
    length = len(first) + len(pieces_bytes[0]) + (pieces - 1) * piece_length + 1
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=120) as connection:
            connection.sendall(f"PUT {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n".encode() + first)
            for index in range(pieces):
                connection.settimeout(0.001)
                try:
                    answer = connection.recv(4096)
                    if answer:
                        return int(answer.split()[1])
                except (socket.timeout, BlockingIOError):
                    pass
                connection.settimeout(120)
                piece = (b"," if index else b"") + f'"k{index:05d}":"'.encode() + b"x" * ((1 << 20) - 12) + b'"'
                connection.sendall(piece)
            connection.sendall(b"}")
            answer = connection.recv(4096)
            status = int(answer.split()[1])
            if status not in (200, 401, 503):
                print(f"  {path}: {answer[-200:]!r}")
            return status
    except (OSError, ValueError, IndexError):
        return 0


def attack_bodies(server: Server, path: str, clients: int, size: int, label: str) -> dict:
    before = server.rss_mb()
    with PeakSampler(server) as sampler, concurrent.futures.ThreadPoolExecutor(clients) as pool:
        codes = list(pool.map(lambda _: send_body(server, path, size), range(clients)))
    return {"attack": f"{clients} concurrent signed-out {size >> 20} MB PUTs {label}", "answers": summarize(codes),
            "memory MB": f"{before:.0f} → peak {sampler.peak:.0f} → {server.rss_mb():.0f}"}


def attack_slow_headers(server: Server, connections: int, seconds: float) -> dict:
    """Half the connections trickle a header line every 10 s, half send nothing."""
    before = server.descriptors()
    sockets, refused = [], 0
    for index in range(connections):
        try:
            connection = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            if index % 2 == 0:
                connection.sendall(b"GET /public.json HTTP/1.1\r\n")
            sockets.append(connection)
        except OSError:
            refused += 1
    held = server.descriptors()
    ok_during = healthy(server)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for index, connection in enumerate(sockets):
            if index % 2 == 0:
                try:
                    connection.sendall(b"X-Slow: 1\r\n")
                except OSError:
                    pass
        time.sleep(10)
    still_open = 0
    for connection in sockets:
        connection.setblocking(False)
        try:
            still_open += 0 if connection.recv(1) == b"" else 1
        except BlockingIOError:
            still_open += 1
        except OSError:
            pass
        connection.close()
    return {"attack": f"{connections} connections from one address, half trickling a header line every 10 s, "
                      f"half silent, for {seconds:.0f} s",
            "answers": f"{refused} refused at connect; {still_open} still open at the end",
            "descriptors": f"{before} → {held} while held → {server.descriptors()}",
            "a normal client meanwhile": "served" if ok_during else "NOT served"}


def attack_descriptors(server: Server, connections: int, descriptor_limit: int) -> dict:
    sockets = []
    for _ in range(connections):
        try:
            sockets.append(socket.create_connection(("127.0.0.1", server.port), timeout=5))
        except OSError:
            break
    time.sleep(1)
    alive_during, ok_during = server.alive(), healthy(server)
    peak = server.descriptors() if server.alive() else None
    for connection in sockets:
        connection.close()
    time.sleep(1)
    return {"attack": f"{connections} idle connections against a server limited to {descriptor_limit} descriptors",
            "answers": f"{len(sockets)} connected; server {'alive' if alive_during else 'DEAD'}, "
                       f"a new client {'served' if ok_during else 'not served'} while they were held",
            "descriptors": f"peak {peak}", "after": "served" if healthy(server) else "NOT served"}


def attack_long_poll(server: Server, polls: int) -> dict:
    start = urllib.request.urlopen(f"http://127.0.0.1:{server.port}/.lp?start=t&ser=1&cb=1&v=5", timeout=10).read().decode()
    session, password = re.search(r"pLPCommand\('start','(\w+)','(\w+)'\)", start).groups()
    chunk = "A" * 1800
    before = server.rss_mb()
    ended_at = None
    held = None
    for index in range(1, polls + 1):
        # Each poll stays open (a client that drops a poll is gone); the next releases it.
        connection = socket.create_connection(("127.0.0.1", server.port), timeout=30)
        connection.sendall((f"GET /.lp?id={session}&pw={password}&ser={index + 1}&seg0={index}&ts0=2&d0={chunk} HTTP/1.1\r\n"
                            "Host: x\r\n\r\n").encode())
        if held is not None:
            held.settimeout(30)
            answer = held.recv(65536).decode(errors="replace")
            held.close()
            if "Too much data" in answer or "close" in answer:
                ended_at = index - 1
                connection.close()
                break
        held = connection
    if held is not None:
        held.close()
    return {"attack": f"a long-polling client withholding segment 0 and sending up to {polls} segments of 1.8 KB after it",
            "answers": f"session ended after {ended_at} segments ({ended_at * 1.8 / 1024:.1f} MB held)" if ended_at
            else "session still open",
            "memory MB": f"{before:.0f} → {server.rss_mb():.0f}"}


def attack_uploads(server: Server, megabytes: int) -> dict:
    before = disk_mb(server.data / "files") if (server.data / "files").exists() else 0
    headers = {"X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start",
               "X-Goog-Upload-Header-Content-Length": str(megabytes << 20),
               "X-Goog-Upload-Header-Content-Type": "application/octet-stream", "Content-Type": "application/json"}
    start = request(server, "POST", "/v0/b/hearth.appspot.com/o?name=victim%2Fbig.bin", b"{}", headers)
    simple = send_body_upload(server, megabytes)
    after = disk_mb(server.data / "files") if (server.data / "files").exists() else 0
    return {"attack": f"signed-out {megabytes} MiB uploads into another user's folder (resumable start, simple upload)",
            "answers": f"start {start}, simple {simple}", "disk MB": f"{before:.1f} → {after:.1f}"}


def send_body_upload(server: Server, megabytes: int) -> int:
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=60) as connection:
            connection.sendall((f"POST /v0/b/hearth.appspot.com/o?name=victim%2Fsimple.bin HTTP/1.1\r\nHost: x\r\n"
                                f"Content-Type: application/octet-stream\r\nContent-Length: {megabytes << 20}\r\n\r\n").encode())
            connection.sendall(b"y" * (64 << 10))
            return int(connection.recv(64).split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def attack_sign_ups(server: Server, count: int) -> dict:
    url = "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=x"
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(lambda _: request(server, "POST", url, b'{"returnSecureToken": true}',
                                                 {"Content-Type": "application/json"}), range(count)))
    return {"attack": f"{count} anonymous sign-ups from one address", "answers": summarize(codes),
            "time": f"{time.monotonic() - started:.1f} s"}


def summarize(codes: list[int]) -> str:
    counts: dict[int, int] = {}
    for code in codes:
        counts[code] = counts.get(code, 0) + 1
    return ", ".join(f"{count}× {code if code else 'cut off'}" for code, count in sorted(counts.items()))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--quick", action="store_true", help="smaller attacks (for a smoke run)")
    options = parser.parse_args()
    scale = 0.1 if options.quick else 1
    results = []
    folder = Path(tempfile.mkdtemp(prefix="hearth-limits-"))
    try:
        server = Server(options.binary, folder / "one", 20_000, [])
        results.append(attack_databases(server, int(2000 * scale)))
        results.append(attack_bodies(server, "/private/victim.json", 8, int(200 * scale) << 20, "to a refused location"))
        results.append(attack_bodies(server, "/public/big.json", 8, int(200 * scale) << 20, "to an open location"))
        results.append(attack_long_poll(server, 20_000 if not options.quick else 2_000))
        results.append(attack_uploads(server, 64))
        results.append(attack_sign_ups(server, int(1000 * scale)))
        results.append(attack_slow_headers(server, int(3000 * scale), 90 * scale if options.quick else 90))
        results.append({"attack": "the server after all of the above",
                        "answers": "alive and serving" if healthy(server) else "NOT serving",
                        "memory MB": f"{server.rss_mb():.0f}", "descriptors": str(server.descriptors())})
        server.stop()
        small = Server(options.binary, folder / "two", 1024, [])
        results.append(attack_descriptors(small, 3500, 1024))
        small.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    for result in results:
        print("- " + result.pop("attack") + ": " + "; ".join(f"{key}: {value}" for key, value in result.items()))


if __name__ == "__main__":
    main()
