"""A server restart under the official Firebase JS SDK: writes made while the server is down
wait in the SDK, reach the restarted server (same port, same data folder) and its other
clients, and listeners pick up where they were.

Note: a WebSocket that failed to connect makes the SDK set `firebase:previous_websocket_failure`,
so after an outage the SDK reconnects with long-polling (/.lp) first, whatever the mode."""

from __future__ import annotations

import pytest

from realtime_support import skip_without_sdk

skip_without_sdk()


def test_writes_made_while_the_server_is_down_arrive_after_a_restart(page, own_hearth, ns):
    server = own_hearth
    if not server.serves_long_polling():
        pytest.fail("the server answers /.lp with 404; after an outage the SDK reconnects with long-polling first",
                    pytrace=False)
    page.call("""async (ns, port) => {
      const a = T.open(ns, { port }), b = T.open(ns, { port });
      Object.assign(T.store, { a, b, watchA: T.watch(a.ref('queue')), watchB: T.watch(b.ref('queue')),
                               connectedA: T.watch(a.ref('.info/connected')) });
      await fb.set(a.ref('queue/before'), 1);
      await T.store.watchB.untilValue((v) => v && v.before === 1, 'the first write at the other instance');
    }""", ns, server.port)

    server.stop()
    page.call("""async () => {
      const { a, watchA, connectedA } = T.store;
      await connectedA.untilValue((v) => v === false, 'the SDK to notice that the server is gone', 30000);
      const pending = [
        fb.set(a.ref('queue/during'), 2),
        fb.update(a.ref('queue'), { 'multi/x': 1, 'multi/y': 2 }),
        fb.push(a.ref('queue/list'), 'pushed'),
        fb.runTransaction(a.ref('queue/count'), (value) => (value || 0) + 1).then((result) => result.committed),
      ];
      T.store.outcomes = Promise.all(pending.map((p) => p.then((value) => (typeof value === 'boolean' ? value : 'ok'),
                                                             (error) => 'error: ' + error.message)));
      await watchA.untilValue((v) => v.during === 2 && v.multi, 'the writes to show locally while offline');
    }""")

    server.start()  # the same port and data folder
    outcome = page.call("""async () => {
      const { watchB, connectedA } = T.store;
      await connectedA.untilValue((v) => v === true, 'the SDK to reconnect', 45000);
      const outcomes = await T.store.outcomes;
      await watchB.untilValue((v) => v && v.during === 2 && v.multi && v.list && v.count === 1,
        'the other instance to see the writes made while the server was down', 20000);
      return { outcomes, seen: watchB.last().val };
    }""")
    assert outcome["outcomes"] == ["ok", "ok", "ok", True], outcome
    stored = server.get("queue", ns)
    assert stored["before"] == 1 and stored["during"] == 2 and stored["multi"] == {"x": 1, "y": 2}, stored
    assert list(stored["list"].values()) == ["pushed"] and stored["count"] == 1, stored
    assert outcome["seen"] == stored

    # the listeners are live again: a REST write reaches both instances
    server.put("queue/after", ns, 3)
    page.call("""async () => {
      await T.store.watchA.untilValue((v) => v.after === 3, 'a REST write after the restart at the writer');
      await T.store.watchB.untilValue((v) => v.after === 3, 'a REST write after the restart at the other instance');
    }""")
