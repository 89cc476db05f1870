"""onDisconnect keeps its promise across a crash: operations queued over the realtime protocol
are on disk, so after `kill -9` the next start applies those of connections that did not
come back (presence reads `offline`), before it accepts clients."""
from __future__ import annotations

import asyncio
import json
import subprocess
import tempfile
import time

import requests
import websockets

from harness import HearthProcess


def start(data: str, port: int = 0) -> tuple[subprocess.Popen, int]:
    hearth = HearthProcess(["serve", "--emulator", "--port", str(port), "--data", data, "--log-level", "warning"],
                           timeout=60).start()
    return hearth.process, hearth.port


async def queue_on_disconnect(port: int, while_open) -> None:
    """Marks a user online and queues `offline` for when the connection ends, then calls
    `while_open()` with the connection still open (it kills the server under it: closing the
    socket first would end the session, and the server would apply the operations at once)."""
    socket = await websockets.connect(f"ws://127.0.0.1:{port}/.ws?v=5&ns=crash")
    handshake = json.loads(await socket.recv())
    assert handshake["d"]["t"] == "h"

    async def request(number: int, action: str, body: dict) -> dict:
        await socket.send(json.dumps({"t": "d", "d": {"r": number, "a": action, "b": body}}))
        while True:
            message = json.loads(await socket.recv())
            if message["t"] == "d" and message["d"].get("r") == number:
                return message["d"]["b"]

    assert (await request(1, "gauth", {"cred": "owner"}))["s"] == "ok"
    assert (await request(2, "p", {"p": "/status/ann", "d": "online"}))["s"] == "ok"
    assert (await request(3, "o", {"p": "/status/ann", "d": "offline"}))["s"] == "ok"
    assert (await request(4, "om", {"p": "/status", "d": {"last/ann": {".sv": "timestamp"}}}))["s"] == "ok"
    # The socket stays open: the crash, not a close, ends it.
    socket.transport.pause_reading()
    while_open()


def test_on_disconnect_operations_survive_kill_9():
    data = tempfile.mkdtemp(prefix="hearth-crash-")
    process, port = start(data)
    seen = {}

    def check_then_crash():
        seen["status"] = requests.get(f"http://127.0.0.1:{port}/status.json?ns=crash",
                                      headers={"Authorization": "Bearer owner"}).json()
        process.kill()
        process.wait()

    try:
        asyncio.run(queue_on_disconnect(port, check_then_crash))
        assert seen["status"] == {"ann": "online"}, seen
    finally:
        process.kill()
        process.wait()
    before_restart = int(time.time() * 1000)
    process, port = start(data)
    try:
        status = requests.get(f"http://127.0.0.1:{port}/status.json?ns=crash",
                              headers={"Authorization": "Bearer owner"}).json()
        assert status["ann"] == "offline", status
        assert status["last"]["ann"] >= before_restart, "the server value resolves when the operation runs"
    finally:
        process.terminate()
        process.wait()
    # Applied once: a further restart finds nothing left to apply.
    process, port = start(data)
    try:
        requests.put(f"http://127.0.0.1:{port}/status/ann.json?ns=crash", json="back",
                     headers={"Authorization": "Bearer owner"})
        process.terminate()
        process.wait()
        process, port = start(data, port)
        status = requests.get(f"http://127.0.0.1:{port}/status/ann.json?ns=crash",
                              headers={"Authorization": "Bearer owner"}).json()
        assert status == "back", "an onDisconnect operation ran a second time"
    finally:
        process.terminate()
        process.wait()


def test_a_graceful_stop_answers_a_waiting_long_poll_at_once():
    """SIGTERM does not wait out a held long-poll (20 s): the poll is told to close."""
    import re as re_module
    import threading
    import urllib.request

    data = tempfile.mkdtemp(prefix="hearth-lp-stop-")
    process, port = start(data)
    try:
        connect = urllib.request.urlopen(f"http://127.0.0.1:{port}/.lp?start=t&ser=1&cb=1&v=5&ns=stop").read().decode()
        poll_id, password = re_module.search(r"pLPCommand\('start','([^']+)','([^']+)'\)", connect).groups()
        answers: list[str] = []
        polling = threading.Thread(target=lambda: answers.append(urllib.request.urlopen(
            f"http://127.0.0.1:{port}/.lp?id={poll_id}&pw={password}&ser=2&ns=stop", timeout=30).read().decode()))
        polling.start()
        # The poll is held once the server has it; a first empty answer would be a bug too. This
        # pause is the thing under test (a poll held, not answered): there is no signal of "held"
        # but time passing without an answer.
        time.sleep(0.5)
        assert polling.is_alive(), f"the poll was answered at once: {answers}"
        stopped = time.monotonic()
        process.terminate()
        process.wait(timeout=15)
        polling.join(timeout=15)
        assert time.monotonic() - stopped < 5, "the stop waited for the held poll"
        assert answers == ["pLPCommand('close');"], answers
    finally:
        if process.poll() is None:
            process.kill()
