// The transcript recorder's page module (driven by record.py): runs one scenario through the
// official SDK with driver.js's runScenario, as the suite does, and keeps one timeline of the
// calls made on the SDK, the realtime messages each of its WebSockets carried and the events
// its listeners reported. The WebSocket wrapper (record.py's SOCKET_RECORDER) was put in the
// page before the SDK loaded, since the SDK keeps the WebSocket class it finds at load.
//
// The two clients are told apart by their app ID, which the SDK puts in its WebSocket URL as
// `p`: "1:1:web:local" and "1:1:web:remote".

import { queryCalls, runScenario } from '/events/driver.js';

const recording = window.__hearthRecording;

function entry(fields) {
  recording.timeline.push({ seq: recording.seq++, ...fields });
}

// The same event object driver.js records (its `record`), so the timeline's events and the
// run's are equal.
function eventOf(listener, type, key, prev, value) {
  return JSON.parse(JSON.stringify({
    listener, type, key: key ?? null,
    prev: type === 'value' || type === 'child_removed' || type === 'cancel' || prev === undefined ? null : prev,
    value: value === undefined ? null : value,
  }));
}

function recordingClient(label, ns, port) {
  const { fb } = window;
  const app = fb.initializeApp({
    apiKey: 'hearth-test-key', projectId: 'hearth', appId: `1:1:web:${label}`,
    databaseURL: `http://127.0.0.1:${port}?ns=${ns}`,
  }, `record-${label}-${Math.random().toString(36).slice(2, 8)}`);
  const db = fb.getDatabase(app);
  fb.connectDatabaseEmulator(db, '127.0.0.1', port);
  const ref = (path) => fb.ref(db, path);
  const subscribe = {
    value: fb.onValue, child_added: fb.onChildAdded, child_changed: fb.onChildChanged,
    child_removed: fb.onChildRemoved, child_moved: fb.onChildMoved,
  };
  const listeners = new Map();
  const call = (fields) => {
    const seq = recording.seq;
    entry({ kind: 'call', conn: label, call: fields });
    return seq;
  };
  // A write: its call, then its result when the server answers.
  const written = (fields, write) => {
    const of = call(fields);
    // Called now, not in a later microtask: the SDK raises a write's local events at once.
    let promise;
    try {
      promise = Promise.resolve(write());
    } catch (error) {
      promise = Promise.reject(error);
    }
    promise.then(
      () => entry({ kind: 'result', conn: label, of, error: null }),
      (error) => entry({ kind: 'result', conn: label, of, error: String(error?.message ?? error) }),
    );
    return promise;
  };
  const isBarrier = (path) => path.startsWith(`${recording.barrier}/`);
  return {
    listen(id, path, query, events, emit) {
      call({ do: 'listen', id, path, query, events });
      const constraints = queryCalls(query).map(([name, ...args]) => fb[name](...args));
      const target = constraints.length ? fb.query(ref(path), ...constraints) : ref(path);
      const report = (type, key, prev, value, error) => {
        entry({ kind: 'event', event: eventOf(id, type, key, prev, value) });
        emit(type, key, prev, value, error);
      };
      listeners.set(id, events.map((type) => subscribe[type](target,
        (snapshot, prev) => report(type, snapshot.key, prev, snapshot.exportVal()),
        (error) => report('cancel', null, null, null, error))));
    },
    unlisten(id) {
      call({ do: 'unlisten', id });
      for (const unsubscribe of listeners.get(id) || []) unsubscribe();
      listeners.delete(id);
    },
    set(path, value, priority) {
      const fields = { do: 'set', path, value };
      if (priority !== undefined) fields.priority = priority;
      if (isBarrier(path)) fields.barrier = true;
      return written(fields, () => (priority === undefined
        ? fb.set(ref(path), value) : fb.setWithPriority(ref(path), value, priority)));
    },
    update: (path, values) => written({ do: 'update', path, value: values }, () => fb.update(ref(path), values)),
    remove: (path) => written({ do: 'remove', path }, () => fb.remove(ref(path))),
    setPriority: (path, priority) => written({ do: 'setPriority', path, priority }, () => fb.setPriority(ref(path), priority)),
    transaction: (path, n) => written({ do: 'transaction', path, increment: n },
      () => fb.runTransaction(ref(path), (value) => (value ?? 0) + n)),
    offline() {
      call({ do: 'offline' });
      fb.goOffline(db);
    },
    online() {
      call({ do: 'online' });
      fb.goOnline(db);
    },
    close() {
      for (const unsubscribes of listeners.values()) for (const unsubscribe of unsubscribes) unsubscribe();
      listeners.clear();
      return fb.deleteApp(app);
    },
  };
}

/// Runs `scenario` (as events_support.for_runner gives it) in namespace `ns`; answers
/// { run, timeline } where the timeline has 'step' markers ({kind: 'step', index}; -1 after
/// the last) for record.py to split on.
export async function record(scenario, ns, port) {
  recording.reset();
  recording.barrier = scenario.barrier ?? 'barrier';
  let clients = 0;
  const makeClient = () => {
    clients += 1;
    return recordingClient(clients === 1 ? 'local' : 'remote', ns, port);
  };
  const run = await runScenario(makeClient, scenario, ns, {
    step: (index) => entry({ kind: 'step', index }),
  });
  // The clients are closed: wait for each socket's close, after which no frame can arrive.
  await socketsClosed(5000);
  return { run, timeline: recording.messages() };
}

/// Resolves once every WebSocket opened in the run has fired its `close` event (noted on the
/// timeline by socket-recorder.js), or after `ms` (the transcript's teardown then shows which
/// did not).
async function socketsClosed(ms) {
  const opened = () => Object.values(recording.sockets).reduce((sum, count) => sum + count, 0);
  const closed = () => recording.timeline.filter((item) => item.kind === 'close').length;
  const started = Date.now();
  while (closed() < opened() && Date.now() - started < ms) await new Promise((resolve) => setTimeout(resolve, 10));
}
