"""Records the frames the official Firebase JS SDK 9.8.1 sends over the realtime protocol, for
the codec's fixture (Tests/Fixtures/realtime/js-sdk-9.8.1-client-frames.txt): a stand-in
server answers the handshake and every request `ok` (a listen gets `null` data first), while
headless chromium runs the SDK through listens of every query form, gets, writes, a transaction
and onDisconnect. One frame per line.

    .venv/bin/pip install websockets selenium
    .venv/bin/python scripts/capture_sdk_frames.py Tests/Fixtures/realtime/js-sdk-9.8.1-client-frames.txt

Needs the SDK in ../shared/firebase-js-sdk-9.8.1 (or $FIREBASE_JS_SDK) and Debian's chromium.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import websockets
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

REPO = Path(__file__).resolve().parents[1]
SDK = Path(os.environ.get("FIREBASE_JS_SDK") or REPO.parent / "shared" / "firebase-js-sdk-9.8.1")
frames: list[str] = []


def message(envelope: dict) -> str:
    return json.dumps(envelope, separators=(",", ":"))


async def stand_in_server(socket_connection):
    """Handshake first; then `ok` to every request, with `null` data pushed before a listen's `ok`."""
    await socket_connection.send(message({"t": "c", "d": {"t": "h", "d": {
        "ts": int(time.time() * 1000), "v": "5", "h": "127.0.0.1", "s": "capture"}}}))
    chunks_left, assembled = 0, ""
    async for frame in socket_connection:
        frames.append(frame)
        if chunks_left == 0 and len(frame) <= 6 and frame.isdigit():
            chunks_left, assembled = int(frame), ""
            continue
        if chunks_left:
            assembled += frame
            chunks_left -= 1
            if chunks_left:
                continue
            frame = assembled
        envelope = json.loads(frame)
        if envelope.get("t") == "c":
            if envelope["d"].get("t") == "p":
                await socket_connection.send(message({"t": "c", "d": {"t": "o", "d": {}}}))
            continue
        request, body = envelope["d"], envelope["d"].get("b", {})
        if request.get("a") == "q":
            push = {"p": body["p"].lstrip("/"), "d": None}
            if "t" in body:
                push["t"] = body["t"]
            await socket_connection.send(message({"t": "d", "d": {"a": "d", "b": push}}))
        if request.get("r") is not None:
            await socket_connection.send(message({"t": "d", "d": {"r": request["r"], "b": {"s": "ok", "d": None}}}))


PAGE = """<!doctype html>
<script type="importmap">{"imports": {"https://www.gstatic.com/firebasejs/9.8.1/firebase-app.js": "/sdk/firebase-app.js"}}</script>
<script type="module">
import { initializeApp } from '/sdk/firebase-app.js';
import { getDatabase, connectDatabaseEmulator, ref, set, update, push, onValue, query, orderByChild, orderByKey, orderByValue,
  orderByPriority, limitToFirst, limitToLast, startAt, endAt, equalTo, startAfter, endBefore, runTransaction, onDisconnect,
  get, serverTimestamp, increment, remove, setWithPriority } from '/sdk/firebase-database.js';
window.run = async (port) => {
  const app = initializeApp({ apiKey: 'x', projectId: 'hearth', databaseURL: `http://127.0.0.1:${port}?ns=capture` });
  const db = getDatabase(app);
  connectDatabaseEmulator(db, '127.0.0.1', port);
  const q = (name) => ref(db, 'q/' + name);
  onValue(query(q('a'), orderByChild('timestamp'), limitToLast(10)), () => {});
  onValue(query(q('b'), orderByKey(), startAt('a'), endAt('m'), limitToFirst(3)), () => {});
  onValue(query(q('c'), orderByValue(), equalTo(5)), () => {});
  onValue(query(q('d'), orderByChild('stars'), startAfter(3), endBefore(9)), () => {});
  onValue(query(q('e'), orderByChild('author/uid'), startAt('u1', 'k1'), endAt('u1', 'k9')), () => {});
  onValue(query(q('f'), orderByPriority(), startAt(null, 'k')), () => {});
  onValue(query(q('g'), orderByKey(), startAfter('k5'), limitToFirst(2)), () => {});
  onValue(query(q('h'), orderByChild('n'), endBefore(3, 'k2')), () => {});
  onValue(query(q('i'), orderByChild('n'), startAfter(1, 'k1'), limitToLast(4)), () => {});
  onValue(query(q('j'), orderByChild('n')), () => {});
  onValue(query(q('k'), limitToFirst(2)), () => {});
  await get(query(ref(db, 'once'), orderByChild('timestamp'), limitToLast(1))).catch(() => {});
  await get(ref(db, 'once2')).catch(() => {});
  await set(ref(db, 'a/b'), { x: 1, when: serverTimestamp(), n: increment(2) });
  await setWithPriority(ref(db, 'pri'), 'v', 7);
  await update(ref(db), { 'posts/p1/title': 'Hi', 'people/u1': null });
  await push(ref(db, 'list'), { t: 'pushed' });
  await set(ref(db, 'big'), 'x'.repeat(20000));
  await runTransaction(ref(db, 'counter'), (value) => (value || 0) + 1);
  const gone = onDisconnect(ref(db, 'status/u1'));
  await gone.set({ online: false, at: serverTimestamp() });
  await gone.update({ 'x/y': 1 });
  await gone.cancel();
  await remove(ref(db, 'a'));
  return 'done';
};
window.ready = true;
</script>"""


class PageServer(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (the standard library's name)
        path = self.path.split("?")[0]
        if path == "/page.html":
            body, content_type = PAGE.encode(), "text/html"
        elif path.startswith("/sdk/") and (SDK / path[len("/sdk/"):]).is_file():
            body, content_type = (SDK / path[len("/sdk/"):]).read_bytes(), "text/javascript"
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} OUTPUT")
    web = ThreadingHTTPServer(("127.0.0.1", 0), PageServer)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    port = free_port()
    started = threading.Event()

    async def serve():
        async with websockets.serve(stand_in_server, "127.0.0.1", port, max_size=None):
            started.set()
            await asyncio.Future()

    threading.Thread(target=lambda: asyncio.run(serve()), daemon=True).start()
    started.wait(10)
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.set_script_timeout(30)
        driver.get(f"http://127.0.0.1:{web.server_address[1]}/page.html")
        deadline = time.monotonic() + 10
        while not driver.execute_script("return window.ready === true"):
            if time.monotonic() > deadline:
                sys.exit("the SDK page did not load")
            time.sleep(0.05)
        outcome = driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "window.run(arguments[0]).then(done, (error) => done('error: ' + error.message));", port)
        if outcome != "done":
            sys.exit(f"the SDK failed: {outcome}")
    finally:
        driver.quit()
    Path(sys.argv[1]).write_text("".join(frame + "\n" for frame in frames))
    print(f"{len(frames)} frames written to {sys.argv[1]}", file=sys.stderr)


if __name__ == "__main__":
    main()
