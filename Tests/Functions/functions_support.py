"""Helpers of the functions suite:
- ``WebhookReceiver``: an HTTP endpoint on loopback that verifies each delivery's Standard
  Webhooks signature with the ``standardwebhooks`` package and keeps what it got; it can be told
  to answer with a failure, to hang, or to go away and come back on the same port.
- ``serve(tmp_path, webhooks, ...)``: ``hearth serve`` with a functions folder holding
  ``webhooks.json``; ``serve_python(tmp_path, ...)``: ``hearth serve`` running Python functions
  written with Firebase's SDK (``fixtures/python`` unless another folder is given; the console's
  browser tests use it too); ``rest(server, ...)``: one REST call as admin.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import sqlite3
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from standardwebhooks import Webhook

from harness import HearthProcess

ADMIN_TOKEN = "functions-admin-token"
PYTHON_FIXTURE = Path(__file__).parent / "fixtures" / "python"


def secret(seed: int) -> str:
    return "whsec_" + base64.b64encode(bytes((seed + i) % 256 for i in range(32))).decode()


class WebhookReceiver:
    """Deliveries, verified: ``deliveries`` holds ``(webhook-id, CloudEvent dict)`` in arrival
    order (refused or failed ones are in ``attempts`` only)."""

    def __init__(self, secrets: list[str], port: int = 0):
        self.verifiers = [Webhook(s) for s in secrets]
        self.deliveries: list[tuple[str, dict]] = []
        self.attempts: list[str] = []
        self.failures_left = 0
        self.failure_status = 500
        self.hang_left = 0
        self.changed = threading.Condition()
        self.release_hang = threading.Event()
        self._start(port)

    def _start(self, port: int):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                headers = {name.lower(): value for name, value in self.headers.items()}
                with receiver.changed:
                    receiver.attempts.append(headers.get("webhook-id", ""))
                    hang = receiver.hang_left > 0
                    if hang:
                        receiver.hang_left -= 1
                    fail = not hang and receiver.failures_left > 0
                    if fail:
                        receiver.failures_left -= 1
                    receiver.changed.notify_all()
                if hang:
                    receiver.release_hang.wait(30)
                    return
                for verifier in receiver.verifiers:
                    # Raises when the signature, the ID or the timestamp is wrong.
                    verifier.verify(body, headers)
                if fail:
                    self.send_response(receiver.failure_status)
                    self.end_headers()
                    self.wfile.write(b"not now")
                    return
                event = json.loads(body)
                with receiver.changed:
                    receiver.deliveries.append((headers["webhook-id"], event))
                    receiver.changed.notify_all()
                self.send_response(204)
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def restart(self):
        self._start(self.port)

    def wait_for(self, predicate, timeout: float = 30, what: str = "deliveries"):
        deadline = time.monotonic() + timeout
        with self.changed:
            while not predicate(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out waiting for {what}: {len(self.deliveries)} delivered, "
                                         f"{len(self.attempts)} attempts")
                self.changed.wait(left)

    def wait_for_count(self, count: int, timeout: float = 30):
        self.wait_for(lambda r: len(r.deliveries) >= count, timeout, f"{count} deliveries")
        return self.deliveries[:count]


def write_functions(folder: Path, webhooks: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "webhooks.json").write_text(json.dumps({"webhooks": webhooks}))
    return folder


def serve(tmp_path: Path, webhooks: dict, env: dict | None = None, data: Path | None = None, *args) -> HearthProcess:
    functions = write_functions(tmp_path / "functions", webhooks)
    data = data or tmp_path / "data"
    process = HearthProcess(["serve", "--port", "0", "--data", str(data), "--admin-token", ADMIN_TOKEN, "--no-demo",
                             "--functions", str(functions), *args], env=env)
    return process.start()


def serve_python(tmp_path: Path, *args, source: Path = PYTHON_FIXTURE, rules: str | None = None) -> HearthProcess:
    """``hearth serve`` running the functions of ``source`` (copied to ``tmp_path/functions``
    unless that folder is there already) in this interpreter, whose environment has
    firebase-functions and functions-framework (Tests/Functions/requirements.txt); ``rules``: the
    database rules' text (closed without: only admins and the functions write)."""
    functions = tmp_path / "functions"
    if not functions.exists():
        shutil.copytree(source, functions)
    rules_args = []
    if rules is not None:
        (tmp_path / "rules.json").write_text(rules)
        rules_args = ["--rules", str(tmp_path / "rules.json")]
    process = HearthProcess(["serve", "--port", "0", "--data", str(tmp_path / "data"), "--admin-token", ADMIN_TOKEN,
                             "--no-demo", *rules_args, "--functions", str(functions), "--functions-python", sys.executable,
                             *args])
    return process.start()


def rest(server, method: str, path: str, body=None, timeout: float = 10):
    separator = "&" if "?" in path else "?"
    request = urllib.request.Request(f"{server.url}{path}{separator}auth={ADMIN_TOKEN}",
                                     data=None if body is None else json.dumps(body).encode(), method=method)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def dead_letters(data: Path, database: str = "default") -> list[dict]:
    """The dead-letter list as the database's log file keeps it (read-only, beside the server)."""
    connection = sqlite3.connect(f"file:{data / 'databases' / database / 'log.sqlite'}?mode=ro", uri=True)
    try:
        rows = connection.execute("SELECT subscriber, id, attempts, reason, body FROM outbox_dead_letter ORDER BY seq").fetchall()
    finally:
        connection.close()
    return [{"function": r[0], "id": r[1], "attempts": r[2], "reason": r[3], "event": stored_event(r[4])} for r in rows]


def stored_event(body: bytes) -> dict:
    """An event as an outbox keeps it: a whole CloudEvent (storage, accounts), or a database
    event's attributes on one line and its data after it (the CloudEvent is made at delivery)."""
    head, newline, data = bytes(body).decode().partition("\n")
    event = json.loads(head)
    if newline and event.get("recorded") == "database":
        event["data"] = json.loads(data)
    return event


def database_trigger(event: str, ref: str, instance: str | None = None) -> dict:
    filters = {"ref": ref}
    if instance is not None:
        filters["instance"] = instance
    return {"eventType": f"google.firebase.database.ref.v1.{event}", "eventFilterPathPatterns": filters}
