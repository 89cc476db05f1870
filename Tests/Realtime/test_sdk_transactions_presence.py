"""Transactions under contention between app instances (each its own realtime connection), and
onDisconnect: run by the server when an instance goes offline or its tab is closed, and not
run once cancelled."""

from __future__ import annotations

import time

import pytest

from realtime_support import skip_without_sdk

skip_without_sdk()

INSTANCES, INCREMENTS = 4, 8


def test_transactions_from_several_instances_never_lose_an_increment(page, hearth, ns):
    outcome = page.call("""async (ns, n, m) => {
      const apps = Array.from({ length: n }, () => T.open(ns));
      await Promise.all(apps.map((a) => T.connected(a.db)));
      const committed = await Promise.all(apps.map(async (a) => {
        const values = [];
        for (let i = 0; i < m; i++) {
          const result = await fb.runTransaction(a.ref('counter'), (value) => (value || 0) + 1);
          values.push(result.committed ? result.snapshot.val() : 'not committed');
        }
        return values;
      }));
      // Every instance ends up seeing the total.
      const totals = apps.map((a) => T.watch(a.ref('counter')));
      await Promise.all(totals.map((w) => w.untilValue((v) => v === n * m, 'the total at every instance')));
      // An aborted transaction (the update function returns undefined) commits nothing.
      const aborted = await fb.runTransaction(apps[0].ref('counter'), () => undefined);
      // A transaction on an object whose current value the instance has never seen.
      await fb.set(apps[1].ref('doc'), { count: 5, log: { a: true } });
      const onDoc = await fb.runTransaction(T.open(ns).ref('doc'), (doc) => {
        if (doc === null) return { count: 1 };  // the first guess, before the server's value is known
        return { ...doc, count: doc.count + 1, log: { ...doc.log, b: true } };
      });
      const final = (await fb.get(T.open(ns).ref('counter'))).val();
      return { committed, final, aborted: { committed: aborted.committed, value: aborted.snapshot.val() },
               doc: { committed: onDoc.committed, value: onDoc.snapshot.val() } };
    }""", ns, INSTANCES, INCREMENTS)
    total = INSTANCES * INCREMENTS
    values = sorted(value for per_app in outcome["committed"] for value in per_app)
    assert outcome["final"] == total, outcome
    assert values == list(range(1, total + 1)), "every committed transaction should have written a value of its own"
    assert outcome["aborted"] == {"committed": False, "value": total}
    assert outcome["doc"] == {"committed": True, "value": {"count": 6, "log": {"a": True, "b": True}}}
    assert hearth.get("counter", ns) == total
    assert hearth.get("doc", ns) == {"count": 6, "log": {"a": True, "b": True}}


def test_on_disconnect_runs_when_an_instance_goes_offline(page, hearth, ns):
    outcome = page.call("""async (ns) => {
      const leaver = T.open(ns), watcher = T.open(ns);
      // The leaver connects first (in the long-polling mode: the connection that starts on /.lp
      // and upgrades; instances made after an upgrade go straight to a WebSocket).
      // Registered first, then cancelled: must not run.
      await fb.onDisconnect(leaver.ref('presence/cancelled')).set('should not be written');
      await fb.onDisconnect(leaver.ref('presence/cancelled')).cancel();
      const presence = T.watch(watcher.ref('presence'));
      await fb.onDisconnect(leaver.ref('presence/leaver')).set({ state: 'offline', at: fb.serverTimestamp() });
      await fb.onDisconnect(leaver.ref('presence/removed')).remove();
      await fb.onDisconnect(leaver.ref('presence/updated')).update({ a: 2, 'deep/b': 3 });
      await fb.set(leaver.ref('presence/leaver'), { state: 'online' });
      await fb.set(leaver.ref('presence/removed'), 'here');
      await fb.set(leaver.ref('presence/updated'), { a: 1, c: 1 });
      await presence.untilValue((v) => v && v.leaver && v.leaver.state === 'online' && v.removed === 'here' && v.updated,
        'the online state');
      const before = Date.now();
      const leaverTransport = T.transportOf(leaver.db);
      fb.goOffline(leaver.db);
      await presence.untilValue((v) => v.leaver.state === 'offline', 'the onDisconnect set after goOffline', 10000);
      await presence.untilValue((v) => !('removed' in v) && v.updated.a === 2, 'the onDisconnect remove and update', 10000);
      const fresh = (await fb.get(T.open(ns).ref('presence'))).val();
      // back online: the instance writes again
      fb.goOnline(leaver.db);
      await fb.set(leaver.ref('presence/leaver/state'), 'back');
      await presence.untilValue((v) => v.leaver.state === 'back', 'the write after goOnline');
      return { fresh, before, after: Date.now(), leaverTransport };
    }""", ns)
    if page.transport != "websocket":
        assert outcome["leaverTransport"]["longPolled"], "the leaver did not start on /.lp (the mode tests nothing)"
    fresh = outcome["fresh"]
    assert "cancelled" not in fresh, "a cancelled onDisconnect ran"
    assert fresh["leaver"]["state"] == "offline" and outcome["before"] - 5000 <= fresh["leaver"]["at"] <= outcome["after"] + 5000, fresh
    assert "removed" not in fresh
    assert fresh["updated"] == {"a": 2, "c": 1, "deep": {"b": 3}}
    assert hearth.get("presence/leaver/state", ns) == "back"


@pytest.mark.parametrize("leaving", ["tab closed", "tab navigated away"])
def test_on_disconnect_runs_when_the_tab_goes_away(page, ns, leaving):
    """A second tab registers an onDisconnect and is then closed, or goes to another page; the
    first tab sees the value within a few seconds."""
    page.call("""async (ns) => {
      const watcher = T.open(ns);
      T.store.tab = T.watch(watcher.ref('presence/tab'));
      await T.store.tab.until((events) => events.length >= 1, 'the first value of /presence/tab');
    }""", ns)
    main = page.driver.current_window_handle
    page.open_tab()
    page.call("""async (ns) => {
      const other = T.open(ns);
      await fb.onDisconnect(other.ref('presence/tab')).set('gone');
      await fb.set(other.ref('presence/tab'), 'here');
    }""", ns)
    if leaving == "tab closed":
        page.driver.close()
    else:
        page.driver.get("about:blank")
    closed = time.monotonic()
    page.driver.switch_to.window(main)
    values = page.call("""async () => {
      await T.store.tab.untilValue((v) => v === 'gone', 'the closed tab\\'s onDisconnect', 10000);
      return T.store.tab.values();
    }""")
    assert values == [None, "here", "gone"], values
    assert time.monotonic() - closed < 10
