// The test page's helpers around the official Firebase JS SDK 9.8.1 (window.fb: every export
// of firebase-app, firebase-database and firebase-auth; window.T: the helpers below). The page
// (realtime.html) chose the transport before this module loaded; the tests call into it with
// selenium's execute_async_script (see conftest.py, Page.call).

import * as appSDK from '/sdk/firebase-app.js';
import * as databaseSDK from '/sdk/firebase-database.js';
import * as authSDK from '/sdk/firebase-auth.js';

const fb = {};
for (const module of [appSDK, databaseSDK, authSDK]) {
  for (const [name, value] of Object.entries(module)) {
    if (name in fb) throw new Error(`two SDK modules export ${name}`);
    fb[name] = value;
  }
}
window.fb = fb;

const params = new URLSearchParams(location.search);
let appCount = 0;

// The SDK's own log (every frame sent and received), kept short, for the report of a failed test.
const sdkLog = [];
fb.enableLogging((message) => {
  sdkLog.push(new Date().toISOString().slice(11, 23) + ' ' + (message.length > 400 ? message.slice(0, 400) + '…' : message));
  if (sdkLog.length > 3000) sdkLog.splice(0, 1000);
});

const T = {
  port: Number(params.get('port')),
  transport: params.get('transport'),
  store: {},
  sdkLog,

  // A new app instance (its own name, so its own realtime connection) on namespace `ns`.
  // With `auth: true` it also gets an Auth instance (in-memory persistence) at Hearth.
  open(ns, { port = T.port, auth = false } = {}) {
    appCount += 1;
    const name = `app-${appCount}-${Math.random().toString(36).slice(2, 8)}`;
    const app = fb.initializeApp({
      apiKey: 'hearth-test-key', projectId: 'hearth', appId: '1:1:web:1',
      databaseURL: `http://127.0.0.1:${port}?ns=${ns}`,
    }, name);
    const db = fb.getDatabase(app);
    fb.connectDatabaseEmulator(db, '127.0.0.1', port);
    const opened = { app, db, name, ref: (path) => fb.ref(db, path) };
    if (auth) {
      opened.auth = fb.initializeAuth(app, { persistence: fb.inMemoryPersistence });
      fb.connectAuthEmulator(opened.auth, `http://127.0.0.1:${port}`, { disableWarnings: true });
    }
    return opened;
  },

  // Resolves with check()'s value once it is truthy (checked now and on every event recorded by
  // T.watch, and every 25 ms for anything else); rejects after `ms` with `what` in the message.
  until(check, what = 'a condition', ms = 15000) {
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const tick = () => {
        let value;
        try { value = check(); } catch (error) { reject(error); return; }
        if (value) { resolve(value); return; }
        if (Date.now() - started > ms) { reject(new Error(`timed out after ${ms} ms waiting for ${what}`)); return; }
        setTimeout(tick, 25);
      };
      tick();
    });
  },

  // The children's keys of a snapshot in the snapshot's (query's) order.
  keys(snapshot) {
    const keys = [];
    snapshot.forEach((child) => { keys.push(child.key); });
    return keys;
  },

  // Records the events of `target` (a reference or query). kinds: 'value', 'child_added',
  // 'child_changed', 'child_removed', 'child_moved'. Every event is
  // {kind, key, val, prev, keys (value events: children's keys in order), exists};
  // a cancellation is {kind: 'cancel', code, message}.
  watch(target, kinds = ['value']) {
    const events = [];
    const unsubscribes = [];
    const listeners = {
      value: fb.onValue, child_added: fb.onChildAdded, child_changed: fb.onChildChanged,
      child_removed: fb.onChildRemoved, child_moved: fb.onChildMoved,
    };
    let cancelled = false;
    const cancel = (error) => {
      if (cancelled) return; // one cancellation per watch, however many kinds it listens to
      cancelled = true;
      events.push({ kind: 'cancel', code: error.code || null, message: String(error.message || error) });
    };
    for (const kind of kinds) {
      unsubscribes.push(listeners[kind](target, (snapshot, prev) => {
        const event = { kind, key: snapshot.key, val: snapshot.val(), exists: snapshot.exists() };
        if (kind === 'value') event.keys = T.keys(snapshot);
        else event.prev = prev === undefined ? null : prev;
        events.push(event);
      }, cancel));
    }
    const watcher = {
      events,
      of: (kind) => events.filter((event) => event.kind === kind),
      values: () => events.filter((event) => event.kind === 'value').map((event) => event.val),
      last: (kind = 'value') => { const list = watcher.of(kind); return list[list.length - 1]; },
      cancelled: () => events.find((event) => event.kind === 'cancel'),
      // Waits until check(events) holds; a cancellation that the check does not expect fails fast.
      until: (check, what, ms) => T.until(() => {
        const result = check(events, watcher);
        if (!result && watcher.cancelled() && !kinds.includes('cancel')) {
          const c = watcher.cancelled();
          throw new Error(`listener was cancelled (${c.code}: ${c.message}) while waiting for ${what}`);
        }
        return result;
      }, what, ms),
      // Waits until the latest value event passes check(val, event); resolves with that event.
      untilValue: (check, what, ms) => watcher.until(() => {
        const last = watcher.last('value');
        return last !== undefined && check(last.val, last) ? last : false;
      }, what, ms),
      off: () => unsubscribes.forEach((unsubscribe) => unsubscribe()),
      childEvents: () => events.filter((event) => event.kind.startsWith('child_'))
        .map((event) => event.kind === 'child_removed' ? [event.kind, event.key] : [event.kind, event.key, event.prev]),
    };
    return watcher;
  },

  // The first value of a watch that ends the wait: a promise of the value event (the listener stays).
  firstValue(target, what = 'a first value', ms) {
    const watcher = T.watch(target, ['value']);
    return watcher.until((events) => events.some((event) => event.kind === 'value'), what, ms)
      .then(() => { watcher.off(); return watcher.of('value')[0]; });
  },

  // Resolves once the database instance reports `.info/connected` equal to `state`.
  connected(db, state = true, ms = 20000) {
    const watcher = T.watch(fb.ref(db, '.info/connected'));
    return watcher.until(() => { const last = watcher.last(); return last && last.val === state; },
      `.info/connected to be ${state}`, ms).then(() => { watcher.off(); return true; });
  },

  // The outcome of a promise that should reject: {code, message}; throws if it resolves.
  async rejection(promise, what = 'the operation') {
    try {
      const value = await promise;
      throw Object.assign(new Error(`${what} succeeded (${JSON.stringify(value && value.val ? value.val() : value)}) but should have been refused`), { unexpected: true });
    } catch (error) {
      if (error.unexpected) throw error;
      return { code: error.code || null, message: String(error.message || error) };
    }
  },

  // What the SDK's log says about an instance's connections (its PersistentConnection's id
  // prefixes them, e.g. "c:3:7:0 Websocket connected."): whether it long-polled, opened a
  // WebSocket, and finished an upgrade (the WebSocket carries both directions alone).
  transportOf(db) {
    const id = db._repoInternal.persistentConnection_.id;
    const lines = sdkLog.filter((line) => line.includes(` c:${id}:`));
    return {
      longPolled: lines.some((line) => line.includes('Connecting via long-poll')),
      webSocket: lines.some((line) => line.includes('Websocket connected.')),
      upgraded: lines.some((line) => line.includes('cleaning up and promoting a connection')),
    };
  },

  // The same string of `length` characters on every side: ASCII with a few two- and
  // three-byte UTF-8 characters (never surrogate pairs, which the SDK's frame splitting could cut).
  bigString(length, seed = 0) {
    const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-é€ü';
    let text = '';
    for (let i = 0; text.length < length; i++) text += alphabet[(i * 7 + seed) % alphabet.length];
    return text;
  },
};
window.T = T;
window.harnessReady = true;
