// The event-sequence driver (Tests/Events): runs one scenario (scenarios/*.json) step by step
// through a client implementation and records every event its listeners report, grouped per
// step. Loaded into the realtime suite's page (Tests/Realtime/realtime.html, which has already
// put the official SDK's exports on window.fb and its helpers on window.T).
//
// An implementation is an adapter (see sdkClient and hearthClient below): one instance per
// client connection, with
//   listen(id, path, query, events, emit)   register one callback per event type, in order;
//                                           emit(type, key, prev, value) records an event
//   unlisten(id)
//   set(path, value, priority?) · update(path, values) · remove(path) · setPriority(path, p)
//   transaction(path, n)   (update function: (v ?? 0) + n)   → promises of the server's answer
//   offline() · online() · close()
// Paths given to adapters are absolute (the scenario's root `s` already in front).
//
// After every step while online, a barrier: the local client sets barrier/<n> (outside the
// scenario's root) and waits for the server's answer. Answers on one connection come in order,
// so every event the server sent because of earlier steps has arrived by then.

const STEP_TIMEOUT_MS = 5000;

class StepTimeout extends Error {}

function within(promise, what, ms = STEP_TIMEOUT_MS) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new StepTimeout(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([Promise.resolve(promise), timeout]).finally(() => clearTimeout(timer));
}

function message(error) {
  return String((error && error.message) || error);
}

function join(root, path) {
  return [root, path].filter((part) => part !== undefined && part !== null && part !== '').join('/');
}

// The order of a scenario's query: {orderBy, startAt, startAfter, endAt, endBefore, equalTo,
// limitToFirst, limitToLast} as a list of [method, ...arguments], in the order the SDKs expect.
export function queryCalls(query = {}) {
  const calls = [];
  const { orderBy } = query;
  if (orderBy !== undefined) {
    if (orderBy === 'key') calls.push(['orderByKey']);
    else if (orderBy === 'value') calls.push(['orderByValue']);
    else if (orderBy === 'priority') calls.push(['orderByPriority']);
    else if (typeof orderBy === 'string' && orderBy.startsWith('child:')) calls.push(['orderByChild', orderBy.slice(6)]);
    else throw new Error(`unknown orderBy ${JSON.stringify(orderBy)}`);
  }
  for (const bound of ['startAt', 'startAfter', 'endAt', 'endBefore', 'equalTo']) {
    if (query[bound] === undefined) continue;
    const args = query[bound];
    if (!Array.isArray(args) || args.length < 1 || args.length > 2) {
      throw new Error(`${bound} takes [value] or [value, key], not ${JSON.stringify(args)}`);
    }
    calls.push([bound, ...args]);
  }
  for (const limit of ['limitToFirst', 'limitToLast']) {
    if (query[limit] !== undefined) calls.push([limit, query[limit]]);
  }
  const known = new Set(['orderBy', 'startAt', 'startAfter', 'endAt', 'endBefore', 'equalTo', 'limitToFirst', 'limitToLast']);
  for (const name of Object.keys(query)) if (!known.has(name)) throw new Error(`unknown query field ${name}`);
  return calls;
}

// MARK: - The official SDK (9.8.1, modular API), one app instance per client

export function sdkClient(ns) {
  const { fb, T } = window;
  const opened = T.open(ns);
  const ref = (path) => fb.ref(opened.db, path);
  const subscribe = {
    value: fb.onValue, child_added: fb.onChildAdded, child_changed: fb.onChildChanged,
    child_removed: fb.onChildRemoved, child_moved: fb.onChildMoved,
  };
  const listeners = new Map();
  return {
    listen(id, path, query, events, emit) {
      const constraints = queryCalls(query).map(([name, ...args]) => fb[name](...args));
      const target = constraints.length ? fb.query(ref(path), ...constraints) : ref(path);
      const unsubscribes = events.map((type) => {
        if (!subscribe[type]) throw new Error(`unknown event type ${type}`);
        return subscribe[type](target, (snapshot, prev) => emit(type, snapshot.key, prev, snapshot.exportVal()),
          (error) => emit('cancel', null, null, null, error));
      });
      listeners.set(id, unsubscribes);
    },
    unlisten(id) {
      for (const unsubscribe of listeners.get(id) || []) unsubscribe();
      listeners.delete(id);
    },
    set: (path, value, priority) => (priority === undefined
      ? fb.set(ref(path), value) : fb.setWithPriority(ref(path), value, priority)),
    update: (path, values) => fb.update(ref(path), values),
    remove: (path) => fb.remove(ref(path)),
    setPriority: (path, priority) => fb.setPriority(ref(path), priority),
    transaction: (path, n) => fb.runTransaction(ref(path), (value) => (value ?? 0) + n),
    offline: () => fb.goOffline(opened.db),
    online: () => fb.goOnline(opened.db),
    close: () => {
      for (const id of [...listeners.keys()]) {
        for (const unsubscribe of listeners.get(id)) unsubscribe();
        listeners.delete(id);
      }
      return fb.deleteApp(opened.app);
    },
  };
}

// MARK: - Hearth's browser client (Web/lib/hearth.js, served by the Hearth server under test)

const hearthModules = new Map();

export async function hearthClient(ns, { origin, port }) {
  const url = `${origin}/lib/hearth.js`;
  if (!hearthModules.has(url)) hearthModules.set(url, import(url));
  const { Hearth } = await hearthModules.get(url);
  // The namespace is the first label of the host (`<ns>.localhost` is the loopback address in
  // chromium), and is also given as `namespace` for a client that takes it.
  const hearth = new Hearth({ url: `http://${ns}.localhost:${port}`, namespace: ns, persistence: 'none',
    // The SDK keeps nothing across listens; with the IndexedDB cache a re-listen would show
    // the cached value first (by design), which the SDK cannot record.
    databasePersistence: false });
  const db = hearth.db;
  const ref = (path) => db.ref(path);
  const need = (target, method, what) => {
    if (typeof target[method] !== 'function') throw new Error(`hearth.js has no ${what}${method}()`);
    return target[method].bind(target);
  };
  const listeners = new Map();
  const stop = (id) => {
    for (const [target, type, callback] of listeners.get(id) || []) target.off(type, callback);
    listeners.delete(id);
  };
  return {
    listen(id, path, query, events, emit) {
      let target = ref(path);
      for (const [name, ...args] of queryCalls(query)) target = need(target, name, 'query.')(...args);
      const registered = [];
      listeners.set(id, registered);
      for (const type of events) {
        const callback = (snapshot, prev) => emit(type, snapshot.key, prev,
          typeof snapshot.exportVal === 'function' ? snapshot.exportVal() : snapshot.val());
        target.on(type, callback, (error) => emit('cancel', null, null, null, error));
        registered.push([target, type, callback]);
      }
    },
    unlisten: stop,
    set: (path, value, priority) => (priority === undefined
      ? ref(path).set(value) : need(ref(path), 'setWithPriority', 'reference.')(value, priority)),
    update: (path, values) => ref(path).update(values),
    remove: (path) => ref(path).remove(),
    setPriority: (path, priority) => need(ref(path), 'setPriority', 'reference.')(priority),
    transaction: (path, n) => ref(path).transaction((value) => (value ?? 0) + n),
    offline: () => need(db, 'goOffline', 'db.')(),
    online: () => need(db, 'goOnline', 'db.')(),
    close: async () => {
      for (const id of [...listeners.keys()]) stop(id);
      if (typeof db.goOffline === 'function') db.goOffline();
      if (typeof hearth.close === 'function') await hearth.close();
    },
  };
}

// MARK: - Running a scenario

function write(client, step) {
  switch (step.do) {
    case 'set': return client.set(step.path, step.value === undefined ? null : step.value, step.priority);
    case 'update': return client.update(step.path, step.value);
    case 'remove': return client.remove(step.path);
    case 'setPriority': return client.setPriority(step.path, step.priority);
    case 'transaction': return client.transaction(step.path, step.increment ?? 1);
    default: throw new Error(`unknown write ${JSON.stringify(step.do)}`);
  }
}

/**
 * Runs `scenario` with clients made by `makeClient(ns)` (the local one, and a second one for
 * remote steps). Returns {steps: [[event, ...] per step], errors: [null | text per step],
 * late: [events after the last step]}; every event is {listener, type, key, prev, value}.
 * `hooks.step(index)` (optional) is called as each step begins, and `hooks.step(-1)` once the
 * last has ended (the recorder, record.py, splits its timeline there).
 */
export async function runScenario(makeClient, scenario, ns, hooks = {}) {
  const root = scenario.root ?? 's';
  const barrierRoot = scenario.barrier ?? 'barrier';
  const steps = scenario.steps.map(() => []);
  const errors = scenario.steps.map(() => null);
  const late = [];
  let current = -1;
  const record = (listener) => (type, key, prev, value) => {
    const event = {
      listener, type, key: key ?? null,
      prev: type === 'value' || type === 'child_removed' || type === 'cancel' || prev === undefined ? null : prev,
      value: value === undefined ? null : value,
    };
    (current >= 0 ? steps[current] : late).push(JSON.parse(JSON.stringify(event)));
  };
  const at = (step) => ({ ...step, path: join(root, step.path) });

  const local = await makeClient(ns);
  const remote = scenario.steps.some((step) => step.do === 'remote') ? await makeClient(ns) : null;
  let online = true;
  let barriers = 0;
  let pending = [];  // writes made offline: answered after `online`
  try {
    for (const [index, step] of scenario.steps.entries()) {
      current = index;
      hooks.step?.(index);
      try {
        switch (step.do) {
          case 'listen':
            local.listen(step.id, join(root, step.path), step.query ?? {}, step.events ?? ['value'], record(step.id));
            break;
          case 'unlisten':
            local.unlisten(step.id);
            break;
          case 'remote':
            await within(write(remote, at({ ...step, do: step.op })), `the remote ${step.op}`);
            break;
          case 'offline':
            local.offline();
            online = false;
            break;
          case 'online':
            local.online();
            online = true;
            break;
          default: {
            const written = Promise.resolve(write(local, at(step)));
            if (online) {
              await within(written, `the answer to the ${step.do}`);
            } else {
              written.catch(() => {});
              pending.push([step.do, written]);
            }
          }
        }
        if (online) {
          barriers += 1;
          await within(local.set(`${barrierRoot}/${barriers}`, barriers), `the barrier after step ${index}`);
        }
        if (step.do === 'online') {
          const answers = pending;
          pending = [];
          for (const [what, written] of answers) await within(written, `the answer to the ${what} made offline`);
        }
      } catch (error) {
        errors[index] = message(error);
        if (error instanceof StepTimeout) {
          for (let rest = index + 1; rest < scenario.steps.length; rest += 1) errors[rest] = 'not run (an earlier step timed out)';
          break;
        }
      }
    }
  } finally {
    current = -1;
    hooks.step?.(-1);
    await Promise.all([local, remote].filter(Boolean).map((client) => within(client.close(), 'closing a client', 3000).catch(() => {})));
  }
  return { steps, errors, late };
}

/** Runs `scenario` through `implementation` ('sdk' or 'hearth.js') in namespace `ns`. */
export function run(implementation, scenario, ns, options = {}) {
  if (implementation === 'sdk') return runScenario(sdkClient, scenario, ns);
  if (implementation === 'hearth.js') return runScenario((name) => hearthClient(name, options), scenario, ns);
  throw new Error(`unknown implementation ${implementation}`);
}
