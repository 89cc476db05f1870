"""Helpers of the cluster suite: a throwaway PostgreSQL (Tests/Support/postgres_server.py),
Hearth nodes started with ``hearth serve --cluster`` (Tests/Realtime's ``Hearth`` with the
cluster's options), nginx in front of them from the committed sample
(docs/deploy/nginx-cluster.conf, only its ports replaced), and a Server-Sent Events reader.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
import requests

import harness
from harness import free_port
from postgres_server import PostgresServer, postgres_bin  # Tests/Support
from realtime_support import OPEN_RULES, Hearth, hearth_binary  # Tests/Realtime

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

NGINX = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin:/sbin")
SAMPLE = REPO / "docs" / "deploy" / "nginx-cluster.conf"
SAMPLE_PORTS = ("127.0.0.1:9000", "127.0.0.1:9010", "127.0.0.1:9020")
LEASE_SECONDS = 4


def skip_without_parts():
    if postgres_bin() is None:
        pytest.skip("needs PostgreSQL (apt-get install -y postgresql)", allow_module_level=True)
    if NGINX is None:
        pytest.skip("needs nginx (apt-get install -y nginx-light)", allow_module_level=True)


class Node(Hearth):
    """One ``hearth serve --emulator --cluster`` process (admin REST: ``Bearer owner``)."""

    def __init__(self, root: Path, name: str, url: str, files: Path, extra: list[str] = ()):
        root.mkdir(parents=True, exist_ok=True)
        rules_file = root / "rules.json"
        rules_file.write_text(json.dumps(OPEN_RULES))
        super().__init__(data=root / "data", rules_file=rules_file, extra_args=[
            "--cluster", url, "--node-id", name, "--files-dir", str(files),
            "--node-lease-seconds", str(LEASE_SECONDS), *extra])
        self.name = name

    def kill(self):
        """``kill -9``: no shutdown at all."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.process = None

    def value(self, path: str, ns: str, **params):
        response = self.rest("GET", path, ns, **params)
        assert response.status_code == 200, f"{self.name} GET /{path}: {response.status_code} {response.text}"
        return response.json()


class Cluster:
    """PostgreSQL, ``count`` nodes on one shared files folder, and (optionally) nginx."""

    def __init__(self, count: int = 3, with_nginx: bool = True, durable: bool = False):
        self.root = Path(tempfile.mkdtemp(prefix="hearth-cluster-"))
        self.postgres = PostgresServer(durable=durable)
        self.files = self.root / "files"
        self.files.mkdir()
        self.nodes: list[Node] = []
        for index in range(count):
            self.add_node()
        self.nginx = Nginx(self.root / "nginx", [node.port for node in self.nodes]) if with_nginx else None

    def add_node(self, extra: list[str] = ()) -> Node:
        name = f"node-{len(self.nodes) + 1}"
        node = Node(self.root / name, name, self.postgres.url, self.files, list(extra)).start(0)
        self.nodes.append(node)
        return node

    def status(self) -> dict:
        output = subprocess.run([hearth_binary(), "cluster", "status", "--cluster", self.postgres.url, "--json"],
                                capture_output=True, text=True, timeout=60)
        assert output.returncode == 0, output.stderr
        return json.loads(output.stdout)

    def output(self) -> str:
        return "\n".join(f"--- {node.name}:\n{node.output()}" for node in self.nodes)

    def close(self):
        if self.nginx:
            self.nginx.stop()
        for node in self.nodes:
            node.stop()
        self.postgres.close()
        shutil.rmtree(self.root, ignore_errors=True)


class Nginx:
    """Debian's nginx running the committed sample with the nodes' ports."""

    def __init__(self, folder: Path, ports: list[int]):
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.port = free_port()
        sample = SAMPLE.read_text()
        assert len(ports) == len(SAMPLE_PORTS), "the sample names three nodes"
        for old, port in zip(SAMPLE_PORTS, ports):
            assert old in sample, f"the sample no longer names {old}"
            sample = sample.replace(old, f"127.0.0.1:{port}")
        assert "listen 8080;" in sample
        sample = sample.replace("listen 8080;", f"listen 127.0.0.1:{self.port};")
        (folder / "hearth.conf").write_text(sample)
        temp = folder / "temp"
        temp.mkdir(exist_ok=True)
        (folder / "nginx.conf").write_text(f"""
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/error.log warn;
daemon off;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    include {folder}/hearth.conf;
}}
""")
        self.process = subprocess.Popen([NGINX, "-p", str(folder), "-c", str(folder / "nginx.conf")],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        if not harness.wait_for_port(self.port, self.process, timeout=20):
            raise AssertionError("nginx did not start:\n" + self.log())

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        path = self.folder / "error.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


class EventStream:
    """A REST stream (Server-Sent Events) of ``path`` on one server, read on a thread:
    ``events`` is every ``put``/``patch`` as (event, path, data); ``wait_for(predicate)``
    waits until the list satisfies it."""

    def __init__(self, base_url: str, path: str, ns: str):
        self.events: list[tuple[str, str, object]] = []
        self.changed = threading.Condition()
        host, port = base_url.removeprefix("http://").split(":")
        self.connection = http.client.HTTPConnection(host, int(port), timeout=120)
        self.connection.request("GET", f"/{path.strip('/')}.json?ns={ns}",
                                headers={"Accept": "text/event-stream", "Authorization": "Bearer owner"})
        self.response = self.connection.getresponse()
        assert self.response.status == 200, self.response.read()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        event = None
        try:
            for raw in self.response:
                line = raw.decode().rstrip("\r\n")
                if line.startswith("event:"):
                    event = line[6:].strip()
                elif line.startswith("data:") and event in ("put", "patch"):
                    payload = json.loads(line[5:])
                    with self.changed:
                        self.events.append((event, payload["path"], payload["data"]))
                        self.changed.notify_all()
        except (OSError, ValueError, http.client.HTTPException):  # closed
            pass

    def wait_for(self, predicate, what: str, timeout: float = 60):
        deadline = time.monotonic() + timeout
        with self.changed:
            while not predicate(self.events):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"timed out waiting for {what}; saw {len(self.events)} events: {self.events[-5:]}")
                self.changed.wait(remaining)

    def close(self):
        # Shutting the socket down wakes the reading thread at once.
        try:
            self.connection.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.connection.close()


def wait_until(check, what: str, timeout: float = 60, interval: float = 0.05):
    """Polls ``check()`` until it returns a true value (returned); fails after ``timeout``. A
    request that fails or a check that raises AssertionError counts as "not yet"."""
    return harness.wait_until(check, timeout, what, interval, ignoring=(requests.RequestException, AssertionError))
