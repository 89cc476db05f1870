"""The web client's database engine (/lib/hearth.js, Web/lib/database/) in headless chromium
against a real `hearth serve --demo`: Firebase's events for local and remote writes, one
realtime connection for every listener, offline writes kept across a reload and a server
restart, a refused write undone, a transaction two pages contend for, and the long-polling
fallback of a browser without WebSocket.

The test page is served by a small server of its own (another origin than hearth's), so it
still loads while the test's own hearth is stopped; the client reaches hearth cross-origin, as
an app hosted elsewhere does. The long-polling test uses the social app itself, on hearth's
origin and under its Content-Security-Policy.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

from browser_support import WEB_ROOT, js_errors, launch_server, stop_server, wait_until

PAGE = (b"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Hearth client sync</title></head>"
        b"<body><p>Hearth client sync test page</p></body></html>")


class PageServer:
    """Serves /sync.html and hearth's /lib/ modules from the repository, on a port of its own."""

    def __init__(self):
        lib = WEB_ROOT / "lib"

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (the standard library's name)
                path = self.path.split("?")[0]
                if path == "/sync.html":
                    body, content_type = PAGE, "text/html; charset=utf-8"
                elif path.startswith("/lib/") and ".." not in path and (lib / path[5:]).is_file():
                    body, content_type = (lib / path[5:]).read_bytes(), "text/javascript"
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()


@pytest.fixture(scope="module")
def pages():
    served = PageServer()
    yield served
    served.close()


# Every script starts with these: the client module, and `client(name, options)`, one Hearth
# instance per name for the page's life (each has its own database connection).
PRELUDE = """
const { Hearth, ServerValue } = await import('/lib/hearth.js');
const SERVER = %(server)s, ADMIN = %(admin)s, ID = %(id)s;
window.clients ??= {};
const client = (name, options = {}) => (window.clients[name] ??= new Hearth({
  url: SERVER, projectId: 'hearth', bucket: 'hearth.appspot.com', storageKey: `sync-${name}`, ...options }));
const admin = (name = 'admin', options = {}) => client(name, { adminToken: ADMIN, ...options });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const until = async (check, what, ms = 15000) => {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() - started > ms) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
};
const connected = (hearth) => until(() => hearth.db._engine.isConnected, 'the connection');
"""


def run_js(driver, server, test_id: str, body: str):
    """Runs an async function body (after PRELUDE) in the page; returns its value. A failure in
    the page fails the test with its message."""
    prelude = PRELUDE % {"server": json.dumps(server.url), "admin": json.dumps(server.admin_token), "id": json.dumps(test_id)}
    result = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        f"(async () => {{ {prelude}\n{body} }})().then((value) => done({{ value }}), "
        "(error) => done({ error: String(error && (error.stack || error.message) || error) }));")
    if "error" in result:
        pytest.fail(f"in the page: {result['error']}", pytrace=False)
    return result.get("value")


def open_page(driver, pages):
    driver.set_script_timeout(60)
    driver.get(f"{pages.url}/sync.html")


def rest(server, method: str, path: str, value=None):
    """A REST request as the admin (another client of the server)."""
    request = urllib.request.Request(
        f"{server.url}/{path}.json", method=method, data=None if value is None else json.dumps(value).encode(),
        headers={"Authorization": f"Bearer {server.admin_token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read() or b"null")


def new_id() -> str:
    return uuid.uuid4().hex[:10]


def test_local_and_remote_writes_raise_firebase_events(server, pages, browser):
    """The events Firebase's SDK raises, in its order and with its previous keys (this sequence
    was recorded from the official SDK 9.8.1 against hearth): a local write's events come inside
    set(), before its promise settles; another client's writes arrive from the server."""
    open_page(browser, pages)
    events = run_js(browser, server, new_id(), """
        const mine = admin('mine'), other = admin('other');
        const items = mine.db.ref(`sync/${ID}/items`);
        const events = [];
        const record = (type) => (snapshot, previous) => events.push(
          type === 'value' ? [type, JSON.stringify(snapshot.val())] : [type, snapshot.key, previous ?? null]);
        const query = items.orderByChild('n');
        for (const type of ['child_added', 'child_changed', 'child_moved', 'child_removed']) query.on(type, record(type));
        await new Promise((resolve) => query.on('value', (snapshot) => { record('value')(snapshot); resolve(); }));
        events.push('set');
        const written = items.set({ a: { n: 2 }, b: { n: 1 } });
        events.push(`sync:${events.length}`);
        await written;
        events.push('remote');
        await other.db.ref(`sync/${ID}/items/c`).set({ n: 0 });
        await until(() => events.some((event) => event[1] === 'c'), 'the other client\\'s write');
        events.push('remote2');
        await other.db.ref(`sync/${ID}/items/a`).update({ n: -1 });
        await until(() => events.some((event) => event[0] === 'child_moved'), 'the move');
        // The move's events end with the value that has a's new score.
        await until(() => events.some((event) => event[0] === 'value' && event[1].includes('"n":-1')), 'the value after the move');
        events.push('remove');
        const removed = items.child('b').remove();
        events.push(`sync:${events.length}`);
        await removed;
        // One more round trip: anything the server still sent for these writes has arrived.
        await mine.db.ref(`sync/${ID}/barrier`).set(true);
        return events;""")
    assert events == [
        ["value", "null"], "set", ["child_added", "b", None], ["child_added", "a", "b"],
        ["value", '{"a":{"n":2},"b":{"n":1}}'], "sync:5", "remote", ["child_added", "c", None],
        ["value", '{"a":{"n":2},"b":{"n":1},"c":{"n":0}}'], "remote2", ["child_moved", "a", None],
        ["child_changed", "a", None], ["value", '{"a":{"n":-1},"b":{"n":1},"c":{"n":0}}'], "remove",
        ["child_removed", "b", None], ["value", '{"a":{"n":-1},"c":{"n":0}}'], "sync:16",
    ], events


def test_one_connection_carries_every_listener(server, pages, browser):
    """Many listeners, queries and writes of one database share one WebSocket; equal queries
    share one server listen, and a query under a location listened to as a whole has none of
    its own."""
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
        window.__sockets = [];
        const Native = window.WebSocket;
        window.WebSocket = class extends Native {
          constructor(...args) { super(...args); window.__sockets.push(this); }
        };"""})
    open_page(browser, pages)
    result = run_js(browser, server, new_id(), """
        const hearth = admin('one', { databasePersistence: false });
        const root = hearth.db.ref(`sync/${ID}`);
        await root.set({ a: { n: 1 }, b: { n: 2 }, c: { n: 3 } });
        const counts = { values: 0 };
        const listen = (query) => new Promise((resolve) => query.on('value', () => { counts.values += 1; resolve(); }));
        await Promise.all([
          listen(root), listen(root.child('a')), listen(root.child('b/n')), listen(root.orderByChild('n')),
          listen(root.orderByChild('n').limitToLast(2)), listen(root.orderByChild('n').limitToLast(2)),
          listen(hearth.db.ref(`sync/${ID}-elsewhere`).orderByKey().limitToFirst(1)),
          listen(hearth.db.ref('.info/connected')),
        ]);
        const listens = [...hearth.db._engine.listens.values()].map((listen) => [listen.path.join('/'), listen.tag !== null]);
        await root.child('d').set({ n: 4 });
        return {
          sockets: window.__sockets.filter((socket) => socket.readyState === WebSocket.OPEN).length,
          created: window.__sockets.length,
          listens: listens.sort(),
          values: counts.values,
        };""")
    assert result["created"] == 1 and result["sockets"] == 1, result
    # The whole location covers everything under it; the query elsewhere has a tagged listen.
    test_path = [path for path, tagged in result["listens"] if not tagged]
    assert len(test_path) == 1 and test_path[0].startswith("sync/"), result["listens"]
    assert [tagged for _, tagged in result["listens"]] == [False, True], result["listens"]
    assert [line for line in js_errors(browser) if "favicon" not in line] == []


def test_offline_writes_survive_a_reload_and_a_server_restart(pages, browser, tmp_path):
    """Writes made while the server is down are kept in IndexedDB: after a reload (server still
    down) the page shows the cached data with those writes at once; when the server is back they
    are sent once each, in order, and both sides agree."""
    hearth = launch_server(tmp_path / "data")
    port = int(hearth.url.rsplit(":", 1)[1])
    test_id = new_id()
    options = "{ databasePersistence: true }"
    try:
        open_page(browser, pages)
        run_js(browser, hearth, test_id, f"""
            const db = admin('offline', {options}).db;
            const base = db.ref(`sync/${{ID}}`);
            await base.set({{ a: 1, kept: 'yes', counter: 10 }});
            await new Promise((resolve) => base.on('value', resolve));
            await db.whenSaved();  // the cache is saved after a short delay
            return true;""")

        stop_server(hearth)
        shown = run_js(browser, hearth, test_id, f"""
            const db = admin('offline', {options}).db;
            const base = db.ref(`sync/${{ID}}`);
            await until(() => !db._engine.isConnected, 'the connection to end');
            let latest = null;
            base.on('value', (snapshot) => {{ latest = snapshot.val(); }});
            base.child('b').set(2);
            base.update({{ a: null, c: 3, counter: ServerValue.increment(5) }});
            base.child('list').push({{ text: 'first' }});
            base.child('list').push({{ text: 'second' }});
            await db.whenSaved();  // the pending writes are stored before the reload
            return latest;""")
        assert shown["b"] == 2 and shown["c"] == 3 and "a" not in shown and shown["counter"] == 15
        assert sorted(entry["text"] for entry in shown["list"].values()) == ["first", "second"]

        # A reload with the server still down: the cache and the pending writes, at once.
        open_page(browser, pages)
        reloaded = run_js(browser, hearth, test_id, f"""
            const db = admin('offline', {options}).db;
            await db.ready();
            const events = [];
            db.ref(`sync/${{ID}}`).on('value', (snapshot) => events.push(snapshot.val()));
            const atOnce = events.length;
            return {{ atOnce, value: events[0] ?? null, pending: db._engine.writes.size }};""")
        assert reloaded["atOnce"] == 1, "the cached value did not come at once"
        assert reloaded["value"] == {**{k: v for k, v in shown.items()}}, reloaded
        assert reloaded["pending"] == 4

        # The server is back: the writes go, once each, and both sides agree.
        hearth = launch_server(tmp_path / "data", port)
        final = run_js(browser, hearth, test_id, f"""
            const db = admin('offline', {options}).db;
            await until(() => db._engine.isConnected && db._engine.writes.size === 0, 'the writes to be acknowledged', 30000);
            return (await db.ref(`sync/${{ID}}`).get()).val();""")
        stored = rest(hearth, "GET", f"sync/{test_id}")
        assert final == stored
        assert stored["b"] == 2 and stored["c"] == 3 and "a" not in stored and stored["kept"] == "yes"
        assert stored["counter"] == 15, "the increment was lost or applied twice"
        assert sorted(entry["text"] for entry in stored["list"].values()) == ["first", "second"]
        # A reload now finds nothing left to send.
        open_page(browser, pages)
        left = run_js(browser, hearth, test_id, f"""
            const db = admin('offline', {options}).db;
            await db.ready();
            return db._engine.writes.size;""")
        assert left == 0
    finally:
        stop_server(hearth)


def test_a_write_acknowledged_while_taking_over_writes_is_not_sent_again(server, pages, browser):
    """Taking over another tab's writes reads IndexedDB; a write the server acknowledges while
    that read is under way comes back in its result, and must not be restored and sent again
    (an increment would count twice)."""
    open_page(browser, pages)
    test_id = new_id()
    result = run_js(browser, server, test_id, """
        const db = admin('adopting', { databasePersistence: true }).db;
        await db.ready();
        const engine = db._engine;
        await until(() => engine._store, 'the offline cache');
        const counter = db.ref(`sync/${ID}/counter`);
        await counter.set(1);
        db.goOffline();
        const write = counter.set(ServerValue.increment(1));
        // The read of the stored writes begins now and ends only after the acknowledgement.
        const store = engine._store, read = store.adoptOrphans.bind(store);
        store.adoptOrphans = async () => {
          const records = await read();
          await until(() => engine.writes.size === 0, 'the acknowledgement');
          return records;
        };
        const adoption = engine._adoptOrphanWrites();
        db.goOnline();
        await write;
        await adoption;
        store.adoptOrphans = read;
        const pendingAfter = engine.writes.size;
        await counter.set(ServerValue.increment(0));  // one more round trip after any resend
        return { pendingAfter, value: (await counter.get()).val() };""")
    assert result["pendingAfter"] == 0, "the acknowledged write was restored again"
    assert result["value"] == 2
    assert rest(server, "GET", f"sync/{test_id}/counter") == 2


def test_a_refused_write_is_undone(server, pages, browser):
    """A write the rules refuse shows at once, then is taken back (with the events that undo
    it) and its promise rejects with the error REST would give."""
    open_page(browser, pages)
    result = run_js(browser, server, new_id(), """
        const visitor = client('visitor');
        const people = visitor.db.ref('people').orderByKey().startAt(`zz-${ID}`).endAt(`zz-${ID}~`);
        const events = [];
        for (const type of ['child_added', 'child_removed']) people.on(type, (snapshot) => events.push([type, snapshot.key]));
        await new Promise((resolve) => people.on('value', resolve));
        const write = visitor.db.ref(`people/zz-${ID}`).set({ full_name: 'Not me' });
        const shownAtOnce = events.length;
        const error = await write.then(() => null, (failure) => failure);
        return { shownAtOnce, events, code: error?.code, message: error?.message, name: error?.name };""")
    assert result["shownAtOnce"] == 1
    assert [event[0] for event in result["events"]] == ["child_added", "child_removed"]
    assert result["code"] == "permission-denied" and result["name"] == "HearthError"
    assert result["message"] == "You are not allowed to do that."


def test_transactions_contended_by_two_pages(server, pages, browser_factory):
    """Two pages (two browsers) increment one counter with transactions at the same time:
    every increment counts once, and both pages end with the server's value."""
    first, second = browser_factory(), browser_factory()
    test_id = new_id()
    for driver in (first, second):
        open_page(driver, pages)
        run_js(driver, server, test_id, """
            const db = admin('tx', { databasePersistence: false }).db;
            window.counter = null;
            db.ref(`sync/${ID}/counter`).on('value', (snapshot) => { window.counter = snapshot.val(); });
            await connected(admin('tx'));
            return true;""")
    start = """
        const db = admin('tx').db;
        window.results = null;
        const ref = db.ref(`sync/${ID}/counter`);
        Promise.all(Array.from({ length: 10 }, () => ref.transaction((value) => (value ?? 0) + 1)))
          .then((results) => { window.results = results.map((result) => result.committed); },
                (error) => { window.results = String(error); });
        return true;"""
    run_js(first, server, test_id, start)
    run_js(second, server, test_id, start)
    for driver in (first, second):
        results = run_js(driver, server, test_id, "return await until(() => window.results, 'the transactions', 30000);")
        assert results == [True] * 10, results
    assert rest(server, "GET", f"sync/{test_id}/counter") == 20
    for driver in (first, second):
        wait_until(driver, lambda d: d.execute_script("return window.counter") == 20, 10, "the page does not show 20")


def test_long_polling_when_the_browser_has_no_websocket(server, browser):
    """The social app in a browser without WebSocket: the client falls back to long-polling at
    /.lp (JSONP, under the app's Content-Security-Policy), and listens, writes and
    .info/connected work over it."""
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": "window.WebSocket = undefined;"})
    browser.execute_cdp_cmd("Network.enable", {})
    browser.set_script_timeout(60)
    browser.get(f"{server.url}/#/")
    wait_until(browser, lambda d: d.execute_script("return Boolean(window.hearth)"), message="the app did not start")
    wait_until(browser, lambda d: d.find_elements("css selector", "[data-testid=post-card]"), 20, "no posts over long-polling")
    test_id = new_id()
    result = run_js(browser, server, test_id, """
        const app = window.hearth;
        const engine = app.db._engine;
        await connected(app);
        const other = admin('lp-admin', { databasePersistence: false });
        const seen = [];
        app.db.ref(`posts`).orderByKey().limitToLast(1).on('child_added', (snapshot) => seen.push(snapshot.key));
        const connectedNow = await new Promise((resolve) => app.db.ref('.info/connected').once('value', (s) => resolve(s.val())));
        return { transport: engine.connection.transportKind, connectedNow };""")
    assert result == {"transport": "long-polling", "connectedNow": True}, result
    # A change made elsewhere arrives over the long poll.
    rest(server, "PUT", f"sync/{test_id}", {"seen": False})
    arrived = run_js(browser, server, test_id, """
        const other = admin('lp-admin', { databasePersistence: false });
        const values = [];
        other.db.ref(`sync/${ID}`).on('value', (snapshot) => values.push(snapshot.val()));
        await until(() => values.length > 0, 'the first value');
        return values[values.length - 1];""")
    assert arrived == {"seen": False}
    assert not [line for line in js_errors(browser) if "favicon" not in line]


def test_the_cache_belongs_to_the_signed_in_user(server, pages, browser):
    """Each signed-in user has an IndexedDB cache of their own: another user signing in on the
    same browser does not see the first one's cached data."""
    open_page(browser, pages)
    ann, ben = server.accounts[0], server.accounts[1]
    result = run_js(browser, server, new_id(), f"""
        const hearth = client('user');
        await hearth.auth.signIn({json.dumps(ann['email'])}, {json.dumps(ann['password'])});
        const uid = hearth.auth.currentUser.uid;
        const profile = hearth.db.ref(`people/${{uid}}`);
        await new Promise((resolve) => profile.on('value', resolve));
        await hearth.db.whenSaved();  // the cache is saved after a short delay
        const names = async () => (await indexedDB.databases()).map((database) => database.name).filter((name) => name.startsWith('hearth:'));
        const before = await names();
        const cachedBefore = hearth.db._engine.cache.isComplete(['people', uid]);
        profile.off();
        await hearth.auth.signIn({json.dumps(ben['email'])}, {json.dumps(ben['password'])});
        await until(() => hearth.auth.currentUser.uid !== uid, 'the other user');
        await hearth.db.ready();
        // Ann's profile, as Ben's client knows it: nothing cached.
        const known = hearth.db._engine.cache.isComplete(['people', uid]);
        return {{ before, cachedBefore, known, after: await names(), uid, ben: hearth.auth.currentUser.uid }};""")
    assert any(name.endswith(f"|{result['uid']}") for name in result["before"]), result
    assert result["cachedBefore"] is True and result["known"] is False
    assert any(name.endswith(f"|{result['ben']}") for name in result["after"]), result


def test_the_cache_is_bounded_and_keep_synced_listens(server, pages, browser):
    """Beyond its size bound the cache drops the least recently used locations no listener
    uses; keepSynced(true) keeps a location listened to (and cached) without callbacks."""
    open_page(browser, pages)
    result = run_js(browser, server, new_id(), """
        const db = admin('lru', { databasePersistence: true, cacheSizeBytes: 2500 }).db;
        const engine = db._engine;
        const big = 'x'.repeat(1000);
        for (const name of ['one', 'two', 'three']) {
          const ref = db.ref(`sync/${ID}/${name}`);
          await ref.set({ big });
          await new Promise((resolve) => ref.on('value', resolve));
          if (name !== 'three') ref.off();
          await db.whenSaved();  // saved, and evicted beyond the bound
        }
        const cached = ['one', 'two', 'three'].map((name) => engine.cache.isComplete(['sync', ID, name]));

        const synced = db.ref(`sync/${ID}/synced`);
        synced.keepSynced(true);
        await until(() => [...engine.listens.values()].some((listen) => listen.path.join('/') === `sync/${ID}/synced` && listen.answered),
          'the keepSynced listen');
        await admin('lru-other', { databasePersistence: false }).db.ref(`sync/${ID}/synced`).set('changed elsewhere');
        await until(() => engine.cache.nodeAt(['sync', ID, 'synced']).val() === 'changed elsewhere', 'the synced value');
        synced.keepSynced(false);
        const listened = () => [...engine.listens.values()].some((listen) => listen.path.join('/') === `sync/${ID}/synced`);
        await until(() => !listened(), 'the keepSynced listen to end', 5000).catch(() => null);
        const stillListened = listened();
        return { cached, stillListened };""")
    assert result["cached"] == [False, True, True], result
    assert result["stillListened"] is False
