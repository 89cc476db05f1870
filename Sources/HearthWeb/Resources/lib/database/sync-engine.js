// The sync engine of one database: the server's data as this client knows it (ServerCache),
// the writes not yet acknowledged (PendingWrites), one View per distinct query with its
// callbacks, the server listens those views need, and the one realtime Connection, plus
// persistence of the cache and the writes (Persistence).
//
// Every change (a server push, a local write, an acknowledgement, a refusal) recomputes the
// views at, above and below where it happened, deepest first, and raises their events at
// once, synchronously. Everything runs on the page's one JavaScript thread; the only waits
// are the network and IndexedDB, whose answers are handled as new changes.

import { HearthError } from '../hearth-error.js';
import { Connection, ConnectionLost } from './connection.js';
import { DataSnapshot } from './data-snapshot.js';
import { Node } from './node.js';
import { comparePostOrder, contains, pathString, related, splitPath } from './path.js';
import { PendingWrites } from './pending-writes.js';
import { Persistence } from './persistence.js';
import { QueryParams } from './query-params.js';
import { ServerCache } from './server-cache.js';
import { TransactionQueue } from './transaction-queue.js';
import { View } from './view.js';

const SAVE_DELAY_MS = 500;
const GET_WAIT_MS = 3000;
const DEFAULT_CACHE_BYTES = 10 * 1024 * 1024;

function viewKey(query) {
  return `${pathString(query._path)}|${query._params.identifier}`;
}

function isInfo(path) {
  return path[0] === '.info';
}

/// The engine behind one `Database`.
export class SyncEngine {
  /// @param {object} options
  /// @param {string} options.url the server
  /// @param {string|null} options.namespace the database name, when not the server's default
  /// @param {(forceRefresh: boolean) => Promise<string|null>} options.credential the ID token (or admin token)
  /// @param {() => string|null|undefined} [options.credentialNow] the credential if it is at hand
  ///   (null: signed out; undefined: it must be fetched)
  /// @param {() => string} options.userKey who is signed in ('' for nobody): the cache is theirs
  /// @param {boolean} options.persistence whether to keep the cache and writes in IndexedDB
  /// @param {number} [options.cacheSizeBytes] the cache's bound
  /// @param {(online: boolean) => void} options.onConnectionChange
  constructor({
    url, namespace, credential, credentialNow = () => undefined, userKey, persistence, cacheSizeBytes = DEFAULT_CACHE_BYTES,
    onConnectionChange,
  }) {
    this.url = url.replace(/\/+$/, '');
    this.namespace = namespace ?? null;
    this._credential = credential;
    this._credentialNow = credentialNow;
    this._userKey = userKey;
    this._persist = persistence;
    this._cacheBytes = cacheSizeBytes;
    this._onConnectionChange = onConnectionChange;

    this.cache = new ServerCache();
    this.writes = new PendingWrites();
    this.views = new Map();
    /// Server listens wanted: key → { key, path, params (null: the whole location), tag, sent, answered }.
    this.listens = new Map();
    this._tags = new Map();
    this._tagKeys = new Map();
    this._nextTag = 1;
    this._info = Node.fromJSON({ connected: false, serverTimeOffset: 0 });
    this.serverTimeOffset = 0;
    this.transactions = new TransactionQueue(this);
    // Write IDs grow across page loads (restored writes sort before new ones); the key that
    // stores a write also names this engine, so two tabs never share one.
    this._nextWriteId = Date.now() * 1000;
    this._keySuffix = Math.random().toString(36).slice(2, 10);
    // Taking over another tab's writes reads the store; writes acknowledged while such a read
    // is under way are remembered until it ends, so they are not restored and sent twice.
    this._adoptionReads = 0;
    this._settledDuringAdoption = new Set();
    this._onDisconnectQueue = [];
    this._connectedWaiters = new Set();
    this._saveTimer = null;
    this._records = new Map();
    this._queryRecords = new Map();
    this._store = null;
    this._user = null;
    this._started = false;
    this._offline = false;
    this.isConnected = false;
    this._connectionEpoch = 0;
    this._warnedIndexes = new Set();
    this._ready = Promise.resolve();
    this._pendingObservers = new Set();
    this._pendingNoticeQueued = false;

    this.connection = new Connection({
      url: this.url,
      namespace: this.namespace,
      delegate: {
        onReady: (handshake) => this._connectionReady(handshake),
        onLost: () => this._connectionLost(),
        onAttemptFailed: () => this._onConnectionChange?.(false),
        onPush: (action, body) => this._push(action, body),
      },
    });
    if (typeof window !== 'undefined') {
      // Save the cache before the page goes.
      window.addEventListener('pagehide', () => this._save());
    }
  }

  /// Opens the cache and the connection on first use.
  start() {
    if (this._started) return this._ready;
    this._started = true;
    this._user = this._userKey();
    this._ready = this._openStore(this._user).then(() => {
      if (!this._offline) this.connection.start();
    });
    return this._ready;
  }

  // MARK: - Time

  /// The server's time in milliseconds, estimated from the handshake.
  serverNow() { return Date.now() + this.serverTimeOffset; }

  // MARK: - Listening

  /// Registers `callback` for `eventType` on `query`; it gets the initial events at once.
  addListener(query, eventType, callback, cancelCallback, context) {
    this.start();
    const view = this._viewFor(query);
    const registration = { eventType, callback, cancelCallback, context, active: true };
    view.registrations.push(registration);
    this._touch(view.path);
    this._schedulePlan();
    this._raise(view.initialEvents(registration));
    return registration;
  }

  /// Removes `query`'s registrations for `eventType` and `callback` (undefined: any). As in
  /// Firebase, `off` on a plain location removes them from every query at that location.
  removeListener(query, eventType, callback) {
    const path = pathString(query._path);
    const keys = query._params.isDefault
      ? [...this.views].filter(([, view]) => pathString(view.path) === path).map(([key]) => key)
      : [viewKey(query)];
    for (const key of keys) {
      const view = this.views.get(key);
      if (!view) continue;
      view.registrations = view.registrations.filter((registration) => {
        const matches = (eventType === undefined || registration.eventType === eventType)
          && (callback === undefined || registration.callback === callback);
        if (matches) registration.active = false;
        return !matches;
      });
      this._dropIfUnused(key, view);
    }
  }

  /// Removes one registration (as `addListener` answered it).
  removeRegistration(query, registration) {
    const key = viewKey(query);
    const view = this.views.get(key);
    registration.active = false;
    if (!view) return;
    view.registrations = view.registrations.filter((candidate) => candidate !== registration);
    this._dropIfUnused(key, view);
  }

  keepSynced(query, keep) {
    this.start();
    const key = viewKey(query);
    if (keep) {
      this._viewFor(query).keepSynced += 1;
      this._schedulePlan();
    } else {
      const view = this.views.get(key);
      if (!view || view.keepSynced === 0) return;
      view.keepSynced -= 1;
      this._dropIfUnused(key, view);
    }
  }

  _viewFor(query) {
    const key = viewKey(query);
    let view = this.views.get(key);
    if (!view) {
      view = new View(query);
      view.update(this._compute(view));
      this.views.set(key, view);
    }
    return view;
  }

  _dropIfUnused(key, view) {
    if (!view.isUnused) return;
    this.views.delete(key);
    this._schedulePlan();
  }

  // MARK: - Reading once

  /// The query's value: from the local data when a live listen keeps it current, else from the
  /// server, else (offline) from the cache when it holds the whole value.
  async get(query) {
    await this.start();
    const path = query._path;
    if (isInfo(path)) return this._snapshotOf(query, this._compute({ path, params: query._params, query }));
    const live = this._base(path, query._params, true);
    if (live) return this._snapshotOf(query, this._finish(query, live));
    if (!this.isConnected && !this._offline) await this._waitForConnection(GET_WAIT_MS);
    if (this.isConnected) {
      let answer;
      try {
        answer = await this.connection.request('g', { p: pathString(path), q: query._params.wireObject() });
      } catch (error) {
        if (!(error instanceof ConnectionLost)) throw error;
        answer = null;
      }
      if (answer && answer.status !== 'ok') throw HearthError.fromRealtime(answer.status, answer.data);
      if (answer) {
        const node = Node.fromJSON(answer.data);
        if (!query._params.isFiltered && this.cache.isComplete(path)) {
          // Fresher than the cached value, which it replaces. (A location not cached stays
          // so, as in Firebase: its views would switch from this value to their listens'.)
          this.cache.overwrite(path, node);
          this.cache.markComplete(path);
          this._scheduleSave();
          this._raise(this._recompute(path));
        }
        return this._snapshotOf(query, this._finish(query, { node, complete: true }));
      }
    }
    // Offline: the cache (with the pending writes) when it has the whole value.
    const local = this._finish(query, this._base(path, query._params, false));
    if (local.complete) return this._snapshotOf(query, local);
    throw HearthError.network();
  }

  _waitForConnection(milliseconds) {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this._connectedWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, milliseconds);
      this._connectedWaiters.add(done);
    });
  }

  _snapshotOf(query, result) {
    return new DataSnapshot(query.ref, result.node, query._params.index);
  }

  /// A snapshot of `node` at `ref` (transactions' results).
  snapshot(ref, node) { return new DataSnapshot(ref, node); }

  // MARK: - Computing views

  /// The server's data for a query at `path`: { node, complete }. With `liveOnly`, only data a
  /// listen keeps current (null otherwise). Live data wins over cached data, and the whole
  /// location's data over a filtered query's window.
  _base(path, params, liveOnly) {
    const wholeComplete = this.cache.isComplete(path);
    const entry = params.isFiltered ? this.cache.query(`${pathString(path)}|${params.identifier}`) : null;
    if (wholeComplete && this._isLive(path, null)) return { node: this.cache.nodeAt(path), complete: true };
    if (entry?.complete && this._isLive(path, params)) return { node: entry.node, complete: true, window: true };
    if (liveOnly) return null;
    if (wholeComplete) return { node: this.cache.nodeAt(path), complete: true };
    if (entry?.complete) return { node: entry.node, complete: true, window: true };
    return this.cache.known(path);
  }

  /// Whether an answered listen keeps `path` current (with `params`: that filtered query's).
  _isLive(path, params) {
    if (!this.isConnected) return false;
    for (const listen of this.listens.values()) {
      if (!listen.answered) continue;
      if (params === null && listen.params === null && contains(listen.path, path)) return true;
      if (params !== null && listen.params !== null && listen.params.identifier === params.identifier
        && pathString(listen.path) === pathString(path)) return true;
    }
    return false;
  }

  /// The pending writes over `base`, then the query's window.
  _finish(query, base) {
    const overlaid = this.writes.overlay(query._path, base.node, base.complete, null, base.window ?? false);
    return { node: query._params.window(overlaid.node), complete: overlaid.complete };
  }

  _compute(view) {
    const query = view.query;
    if (isInfo(view.path)) return { node: query._params.window(this._info.at(view.path, 1)), complete: true };
    return this._finish(query, this._base(view.path, view.params, false));
  }

  /// Recomputes the views a change at `path` can affect (all, for null), deepest first, and
  /// answers their events.
  _recompute(path) {
    const affected = [...this.views.values()].filter((view) => path === null || related(view.path, path));
    affected.sort((a, b) => comparePostOrder(a.path, b.path));
    const events = [];
    for (const view of affected) events.push(...view.update(this._compute(view)));
    return events;
  }

  /// Recomputes the views a change at `path` can affect and raises their events.
  refresh(path) { this._raise(this._recompute(path)); }

  _raise(events) {
    for (const { registration, type, snapshot, prevKey } of events) {
      if (!registration.active) continue;
      try {
        if (type === 'value' || type === 'child_removed') registration.callback.call(registration.context, snapshot);
        else registration.callback.call(registration.context, snapshot, prevKey ?? null);
      } catch (error) {
        // One failing callback must not stop the others.
        setTimeout(() => { throw error; });
      }
    }
  }

  /// The value at `path` as this client sees it (server data and pending writes, except the
  /// writes in `excluded`): what a transaction runs on.
  latest(path, excluded = null) {
    const base = this._base(path, QueryParams.DEFAULT, false);
    return this.writes.overlay(path, base.node, base.complete, excluded).node;
  }

  // MARK: - Writing

  /// Adds a pending write, shows it, saves it and sends it; answers its ID. Options:
  /// `transaction` (sent by the transaction queue, not saved), `visible` (false: not shown),
  /// `quiet` (the caller raises the events).
  addWrite(path, kind, data, entries, { transaction = false, visible = true, quiet = false } = {}) {
    this.start();
    const id = this._nextWriteId++;
    const write = {
      id, key: `${id}-${this._keySuffix}`, path, kind, data, entries, visible, transaction, sent: false, resolve: null, reject: null,
    };
    write.promise = new Promise((resolve, reject) => {
      write.resolve = resolve;
      write.reject = reject;
    });
    this.writes.add(write);
    this._pendingWritesChanged();
    if (!transaction) this._saveWrite(write);
    if (!quiet) this._raise(this._recompute(path));
    if (!transaction && this.isConnected) this._sendWrite(write);
    return id;
  }

  /// A set or update from the API: resolves when the server has it, rejects if it refuses.
  write(path, kind, data, entries) {
    const id = this.addWrite(path, kind, data, entries);
    return this.writes.get(id).promise;
  }

  /// Removes a pending write (acknowledged or refused).
  removeWrite(id, { quiet = false } = {}) {
    const write = this.writes.remove(id);
    if (!write) return null;
    this._pendingWritesChanged();
    if (!write.transaction && write.store) {
      write.store.deleteWrite(write.key);
      // A read of the stored writes begun before this deletion still returns it: not again.
      if (this._adoptionReads > 0) this._settledDuringAdoption.add(write.key);
    }
    if (!quiet) this._raise(this._recompute(write.path));
    return write;
  }

  _saveWrite(write) {
    if (!this._store) return;
    write.store = this._store;
    this._store.putWrite({
      key: write.key, id: write.id, path: pathString(write.path), kind: write.kind, data: write.data,
      entries: write.entries.map(([target, node]) => [pathString(target), node.val(true)]),
    });
  }

  _sendWrite(write) {
    write.sent = true;
    const action = write.kind === 'set' ? 'p' : 'm';
    this.connection.request(action, { p: pathString(write.path), d: write.data }).then(
      ({ status, data }) => {
        if (this.writes.get(write.id) !== write) return;
        this.removeWrite(write.id);
        if (status === 'ok') {
          write.resolve();
        } else {
          console.warn(`Hearth: the server refused a write to ${pathString(write.path)} (${status}: ${data}).`);
          write.reject(HearthError.fromRealtime(status, data));
        }
      },
      () => {
        // The connection went: sent again when it is back.
        write.sent = false;
      },
    );
  }

  /// How many writes the server has not acknowledged yet touch `path`: set at, above or below
  /// it (restored ones from an earlier page load included).
  pendingWriteCount(path) {
    return this.writes.list.filter((write) => write.entries.some(([target]) => contains(target, path) || contains(path, target))).length;
  }

  /// Calls `callback()` once after any change to the pending writes (made, acknowledged,
  /// refused, restored), after that change's events; answers a function that stops it.
  onPendingWritesChange(callback) {
    this._pendingObservers.add(callback);
    return () => this._pendingObservers.delete(callback);
  }

  // Batched: one acknowledgement can end many writes, and callers only re-read the counts.
  _pendingWritesChanged() {
    if (this._pendingNoticeQueued || this._pendingObservers.size === 0) return;
    this._pendingNoticeQueued = true;
    queueMicrotask(() => {
      this._pendingNoticeQueued = false;
      for (const observer of [...this._pendingObservers]) {
        try {
          observer();
        } catch (error) {
          setTimeout(() => { throw error; });
        }
      }
    });
  }

  /// Sends `request` with `body` (the transaction queue's puts).
  request(action, body) { return this.connection.request(action, body); }

  errorFor(status, message) { return HearthError.fromRealtime(status, message); }

  /// onDisconnect operations (`o`, `om`, `oc`): sent now, or when the connection is ready.
  onDisconnect(action, body) {
    this.start();
    return new Promise((resolve, reject) => {
      const operation = { action, body, resolve, reject };
      if (this.isConnected) this._sendOnDisconnect(operation);
      else this._onDisconnectQueue.push(operation);
    });
  }

  _sendOnDisconnect(operation) {
    this.connection.request(operation.action, operation.body).then(({ status, data }) => {
      if (status === 'ok') operation.resolve();
      else operation.reject(HearthError.fromRealtime(status, data));
    }, () => operation.reject(HearthError.network()));
  }

  // MARK: - Online and offline

  goOffline() {
    this._offline = true;
    this.connection.stop();
  }

  goOnline() {
    this._offline = false;
    if (this._started) this._ready.then(() => this.connection.start());
  }

  // MARK: - Server listens

  /// Plans the server listens now: a listen goes out before anything the caller does next
  /// (the server answers in order), as in Firebase's SDK.
  _schedulePlan() {
    this._planListens();
  }

  _tagFor(key) {
    let tag = this._tags.get(key);
    if (tag === undefined) {
      tag = this._nextTag++;
      this._tags.set(key, tag);
      this._tagKeys.set(tag, key);
    }
    return tag;
  }

  /// Works out the server listens the views need, and starts and stops listens to match. A
  /// location listened to as a whole covers every query at and below it; equal queries share
  /// one listen; a filtered query elsewhere gets a tagged listen of its own.
  _planListens() {
    const views = [...this.views.values()].filter((view) => !isInfo(view.path));
    const wholes = views.filter((view) => !view.params.isFiltered).map((view) => view.path);
    const coverOf = (path) => {
      let best = null;
      for (const candidate of wholes) {
        if (contains(candidate, path) && (best === null || candidate.length < best.length)) best = candidate;
      }
      return best;
    };
    const wanted = new Map();
    for (const view of views) {
      const cover = coverOf(view.path);
      let listen;
      if (cover) {
        listen = { key: `${pathString(cover)}|default`, path: cover, params: null, tag: null };
      } else {
        const key = viewKey(view.query);
        listen = { key, path: view.path, params: view.params, tag: this._tagFor(key) };
      }
      view.listenKey = listen.key;
      if (!wanted.has(listen.key)) wanted.set(listen.key, listen);
    }
    // New listens first, then the ones no longer needed, so no change falls in between.
    for (const [key, listen] of wanted) {
      if (this.listens.has(key)) continue;
      const entry = { ...listen, sent: false, answered: false };
      this.listens.set(key, entry);
      if (this.isConnected) this._sendListen(entry);
    }
    for (const [key, listen] of this.listens) {
      if (wanted.has(key)) continue;
      this.listens.delete(key);
      if (this.isConnected && listen.sent) this.connection.send('n', this._listenBody(listen, false));
      if (!this._persist) this._forgetUnlistened(listen, views);
    }
  }

  /// Without persistence the engine keeps, as Firebase's web SDK, only what is listened to: the
  /// data of a listen that ended goes (unless a view below it still uses it).
  _forgetUnlistened(listen, views) {
    if (listen.params) {
      this.cache.forgetQuery(listen.key);
    } else if (!views.some((view) => contains(listen.path, view.path))) {
      this.cache.forget(listen.path);
    }
  }

  _listenBody(listen, withHash) {
    const body = { p: pathString(listen.path) };
    if (listen.params) {
      body.q = listen.params.wireObject();
      body.t = listen.tag;
    }
    if (withHash) {
      let hash = '';
      if (listen.params === null && this.cache.isComplete(listen.path)) {
        hash = this.cache.nodeAt(listen.path).hash();
      } else if (listen.params !== null) {
        const entry = this.cache.query(listen.key);
        if (entry?.complete) hash = entry.node.hash();
      }
      body.h = hash;
    }
    return body;
  }

  _sendListen(listen) {
    listen.sent = true;
    listen.answered = false;
    this.connection.request('q', this._listenBody(listen, true)).then(({ status, data }) => {
      if (this.listens.get(listen.key) !== listen) return;
      if (status !== 'ok') return this._listenFailed(listen, HearthError.fromRealtime(status, data));
      listen.answered = true;
      if (listen.params === null) this.cache.markComplete(listen.path);
      else this.cache.markQueryComplete(listen.key, listen.path);
      if (Array.isArray(data?.w) && data.w.includes('no_index') && !this._warnedIndexes.has(listen.key)) {
        this._warnedIndexes.add(listen.key);
        console.warn(`Hearth: no index for ${listen.params?.index} at ${pathString(listen.path)}: the server sends it all and `
          + 'this client filters it. Add ".indexOn" to the rules.');
      }
      this._scheduleSave();
      this._raise(this._recompute(listen.path));
    }, () => {
      // The connection went: listened again when it is back.
    });
  }

  /// The server refused or revoked a listen: the views it fed are cancelled.
  _listenFailed(listen, error) {
    this.listens.delete(listen.key);
    const cancelled = [];
    for (const [key, view] of this.views) {
      if (view.listenKey !== listen.key) continue;
      this.views.delete(key);
      cancelled.push(...view.registrations);
    }
    for (const registration of cancelled) registration.active = false;
    for (const registration of cancelled) {
      try {
        registration.cancelCallback?.call(registration.context, error);
      } catch (thrown) {
        setTimeout(() => { throw thrown; });
      }
    }
    this._schedulePlan();
  }

  // MARK: - The connection

  async _connectionReady({ timestamp }) {
    const epoch = ++this._connectionEpoch;
    this.serverTimeOffset = timestamp - Date.now();
    this._setInfo('serverTimeOffset', this.serverTimeOffset);
    const signedIn = await this._authenticate(epoch);
    if (!signedIn || epoch !== this._connectionEpoch || !this.connection.isReady) return;
    this._restore();
  }

  /// Sends `auth` (or nothing, signed out) and waits for its answer, so that what follows runs
  /// as the right user. A refused token is refreshed once. False when the connection went.
  async _authenticate(epoch, forceRefresh = false) {
    let credential;
    try {
      credential = await this._credential(forceRefresh);
    } catch (error) {
      if (error?.code === 'network') {
        // Cannot get a token now: try the whole connection again later.
        this.connection.stop();
        setTimeout(() => { if (!this._offline) this.connection.start(); }, 2000);
        return false;
      }
      credential = null; // the session ended: signed out
    }
    if (epoch !== this._connectionEpoch || !this.connection.isReady) return false;
    if (!credential) return true;
    const action = credential.split('.').length === 3 ? 'auth' : 'gauth';
    let answer;
    try {
      answer = await this.connection.request(action, { cred: credential });
    } catch {
      return false;
    }
    if (answer.status === 'ok') return true;
    if (!forceRefresh && (answer.status === 'expired_token' || answer.status === 'invalid_token')) {
      return this._authenticate(epoch, true);
    }
    console.warn(`Hearth: the server refused the credential (${answer.status}); continuing signed out.`);
    return true;
  }

  /// A new connection: listen again, send every unacknowledged write in order, then what
  /// waited for the connection.
  _restore() {
    this.isConnected = true;
    for (const listen of this.listens.values()) this._sendListen(listen);
    for (const write of this.writes.list) {
      if (!write.transaction) this._sendWrite(write);
    }
    this.transactions.connected();
    const queued = this._onDisconnectQueue;
    this._onDisconnectQueue = [];
    for (const operation of queued) this._sendOnDisconnect(operation);
    for (const waiter of [...this._connectedWaiters]) waiter();
    this._setInfo('connected', true);
    this._onConnectionChange?.(true);
    // Writes another tab left behind when it closed.
    this._adoptOrphanWrites();
  }

  _connectionLost() {
    this._connectionEpoch += 1;
    const wasConnected = this.isConnected;
    this.isConnected = false;
    for (const listen of this.listens.values()) {
      listen.sent = false;
      listen.answered = false;
    }
    for (const write of this.writes.list) write.sent = false;
    this.transactions.disconnected();
    this._onConnectionChange?.(false);
    if (wasConnected) this._setInfo('connected', false);
  }

  _setInfo(key, value) {
    const next = this._info.withChild(key, Node.fromJSON(value));
    if (next.equals(this._info)) return;
    this._info = next;
    this._raise(this._recompute(['.info', key]));
  }

  /// The signed-in user's ID token changed: the connection signs in again at once (before any
  /// write that follows, which the server then judges as the new user). Another user (or
  /// signing out) also changes the cache: theirs is loaded, and listens start over.
  userChanged() {
    if (!this._started) return;
    const user = this._userKey();
    if (this.isConnected) this._sendAuth(this._credentialNow());
    if (user === this._user) return;
    this._user = user;
    this._save();
    this._store?.close();
    this._store = null;
    // Writes not yet sent belong to the previous user: kept in their cache for next time.
    for (const write of [...this.writes.list]) {
      if (write.sent || write.transaction) continue;
      this.writes.remove(write.id);
      this._pendingWritesChanged();
      write.reject(new HearthError('cancelled', 'The user changed before this was saved; it is saved when they sign in again.'));
    }
    this.cache.clear();
    this._records.clear();
    this._queryRecords.clear();
    this._raise(this._recompute(null));
    // Listened again as the new user (the server has the new credential first).
    if (this.isConnected) for (const listen of this.listens.values()) this._sendListen(listen);
    this._ready = this._openStore(user);
  }

  /// Sends `auth` (`gauth` for a credential that is not a JWT, `unauth` for none) now. A token
  /// that is not at hand (expired) is fetched first.
  _sendAuth(credential) {
    if (credential === undefined) {
      const epoch = this._connectionEpoch;
      this._credential(false).then((fetched) => {
        if (epoch === this._connectionEpoch && this.isConnected) this._sendAuth(fetched ?? null);
      }, () => {});
      return;
    }
    const action = !credential ? 'unauth' : credential.split('.').length === 3 ? 'auth' : 'gauth';
    this.connection.request(action, credential ? { cred: credential } : {}).then((answer) => {
      if (answer.status === 'expired_token' || answer.status === 'invalid_token') this._authenticate(this._connectionEpoch, true);
    }, () => {});
  }

  // MARK: - Server pushes

  _push(action, body) {
    const path = splitPath(body.p);
    switch (action) {
      case 'd':
      case 'm': {
        const tag = body.t;
        if (tag !== undefined && tag !== null) {
          const key = this._tagKeys.get(tag);
          if (!key) return;
          if (action === 'd') this.cache.setQuery(key, path, Node.fromJSON(body.d));
          else this.cache.mergeQuery(key, path, Object.entries(body.d ?? {}).map(([relative, value]) => [splitPath(relative), Node.fromJSON(value)]));
          this._scheduleSave();
          const events = [];
          for (const view of this.views.values()) {
            if (viewKey(view.query) === key) events.push(...view.update(this._compute(view)));
          }
          this._raise(events);
          return;
        }
        if (action === 'd') {
          this.cache.overwrite(path, Node.fromJSON(body.d));
          this.cache.markComplete(path);
        } else {
          for (const [relative, value] of Object.entries(body.d ?? {})) {
            this.cache.overwrite([...path, ...splitPath(relative)], Node.fromJSON(value));
          }
        }
        this._scheduleSave();
        this._raise(this._recompute(path));
        return;
      }
      case 'c': {
        // A listen revoked (the rules changed): its views are cancelled.
        const queries = Array.isArray(body.q) ? body.q : body.q ? [body.q] : [];
        const identifier = queries.length > 0 ? QueryParams.identifierOf(queries[0]) : 'default';
        for (const listen of this.listens.values()) {
          if (pathString(listen.path) !== pathString(path)) continue;
          if ((listen.params?.identifier ?? 'default') !== identifier) continue;
          this._listenFailed(listen, HearthError.fromRealtime('permission_denied', 'Permission denied'));
          return;
        }
        return;
      }
      case 'ac': {
        // The credential stopped being valid: sign in again with a fresh one.
        const epoch = this._connectionEpoch;
        this._authenticate(epoch, true);
        return;
      }
      case 'sd':
        console.log(`Hearth security debug: ${body.msg ?? ''}`);
        return;
      default:
        return;
    }
  }

  // MARK: - Persistence

  async _openStore(user) {
    if (!this._persist) return;
    const name = `hearth:${this.url}|${this.namespace ?? ''}|${user}`;
    const store = await Persistence.open(name);
    if (!store) return;
    if (this._user !== user) {
      store.close();
      return;
    }
    let loaded;
    try {
      loaded = await store.load();
    } catch (error) {
      console.warn(`Hearth: the offline cache could not be read (${error?.message ?? error}).`);
      return;
    }
    if (this._user !== user) {
      store.close();
      return;
    }
    this._store = store;
    store.onOwnerGone = () => this._adoptOrphanWrites();
    this._applyLoaded(loaded);
    // A tab that was closing as this one loaded may have held writes: look again soon.
    setTimeout(() => this._adoptOrphanWrites(), 1500);
  }

  _applyLoaded({ writes, nodes, queries }) {
    // What the server sent while the cache was opening (after a change of user the connection
    // is already up) is still to be saved; what is loaded here is not saved again.
    const unsaved = [...this.cache.dirty];
    const unsavedQueries = [...this.cache.dirtyQueries];
    // Deeper first: a location saved later above one wins over it.
    nodes.sort((a, b) => splitPath(b.key).length - splitPath(a.key).length);
    for (const record of nodes) {
      const path = splitPath(record.key);
      // The server may have answered while the cache opened: its data is newer.
      if (this.cache.isComplete(path)) continue;
      this.cache.overwrite(path, Node.fromJSON(record.json));
      this.cache.markComplete(path);
      this._records.set(record.key, { size: record.size ?? 0, lastUsed: record.lastUsed ?? 0 });
    }
    for (const record of queries) {
      if (this.cache.query(record.key)?.complete) continue;
      this.cache.setQuery(record.key, splitPath(record.path), Node.fromJSON(record.json));
      this._queryRecords.set(record.key, { path: splitPath(record.path), size: record.size ?? 0, lastUsed: record.lastUsed ?? 0 });
    }
    this.cache.dirty.clear();
    this.cache.dirtyQueries.clear();
    for (const key of unsaved) this.cache.dirty.add(key);
    for (const key of unsavedQueries) this.cache.dirtyQueries.add(key);
    if (unsaved.length > 0 || unsavedQueries.length > 0) this._scheduleSave();
    this._restoreWrites(writes);
    // Writes made before the cache opened are saved now.
    for (const write of this.writes.list) {
      if (!write.transaction && !write.store) this._saveWrite(write);
    }
    this._raise(this._recompute(null));
  }

  /// Stored writes become pending again (in their order, before newer ones), shown and sent.
  _restoreWrites(records) {
    const known = new Set(this.writes.list.map((write) => write.key));
    for (const key of this._settledDuringAdoption) known.add(key);
    const restored = [];
    for (const record of records) {
      if (known.has(record.key)) continue;
      const write = {
        id: record.id, key: record.key, path: splitPath(record.path), kind: record.kind, data: record.data,
        entries: record.entries.map(([target, json]) => [splitPath(target), Node.fromJSON(json)]),
        visible: true, transaction: false, sent: false, store: this._store,
        resolve: () => {}, reject: () => {},
      };
      write.promise = Promise.resolve();
      restored.push(write);
      this._nextWriteId = Math.max(this._nextWriteId, record.id + 1);
    }
    if (restored.length === 0) return [];
    this.writes.prepend(restored);
    this._pendingWritesChanged();
    this.writes.list.sort((a, b) => a.id - b.id);
    if (this.isConnected) for (const write of restored) this._sendWrite(write);
    return restored;
  }

  async _adoptOrphanWrites() {
    const store = this._store;
    if (!store) return;
    let records;
    this._adoptionReads += 1;
    try {
      records = await store.adoptOrphans();
    } catch {
      records = null;
    }
    const restored = records && store === this._store ? this._restoreWrites(records) : [];
    this._adoptionReads -= 1;
    if (this._adoptionReads === 0) this._settledDuringAdoption.clear();
    if (restored.length > 0) this._raise(this._recompute(null));
  }

  _scheduleSave() {
    if (!this._store || this._saveTimer) return;
    this._saveTimer = setTimeout(() => {
      this._saveTimer = null;
      this._save();
    }, SAVE_DELAY_MS);
  }

  /// Writes the changed complete locations and filtered queries to IndexedDB, then evicts the
  /// least recently used ones nobody listens to beyond the size bound.
  _save() {
    clearTimeout(this._saveTimer);
    this._saveTimer = null;
    const store = this._store;
    if (!store) return;
    const now = Date.now();
    for (const key of this.cache.dirty) {
      const path = splitPath(key);
      const root = this.cache.completeRoot(path);
      if (root && pathString(root) === key) {
        const json = this.cache.nodeAt(path).val(true);
        const size = JSON.stringify(json)?.length ?? 4;
        store.putNode({ key, json, size, lastUsed: now });
        this._records.set(key, { size, lastUsed: now });
      } else if (this._records.has(key) || !root) {
        store.deleteNode(key);
        this._records.delete(key);
      }
    }
    this.cache.dirty.clear();
    for (const key of this.cache.dirtyQueries) {
      const entry = this.cache.query(key);
      if (entry?.complete) {
        const json = entry.node.val(true);
        const size = JSON.stringify(json)?.length ?? 4;
        store.putQuery({ key, path: pathString(entry.path), json, size, lastUsed: now });
        this._queryRecords.set(key, { path: entry.path, size, lastUsed: now });
      } else {
        store.deleteQuery(key);
        this._queryRecords.delete(key);
      }
    }
    this.cache.dirtyQueries.clear();
    this._evict();
  }

  /// Marks the saved locations a view at `path` uses as recently used.
  _touch(path) {
    const now = Date.now();
    for (const [key, record] of this._records) if (related(splitPath(key), path)) record.lastUsed = now;
    for (const record of this._queryRecords.values()) if (related(record.path, path)) record.lastUsed = now;
  }

  _evict() {
    let total = 0;
    for (const record of this._records.values()) total += record.size;
    for (const record of this._queryRecords.values()) total += record.size;
    if (total <= this._cacheBytes) return;
    const inUse = (path) => [...this.views.values()].some((view) => related(view.path, path));
    const candidates = [
      ...[...this._records].map(([key, record]) => ({ key, path: splitPath(key), record, query: false })),
      ...[...this._queryRecords].map(([key, record]) => ({ key, path: record.path, record, query: true })),
    ].sort((a, b) => a.record.lastUsed - b.record.lastUsed);
    for (const candidate of candidates) {
      if (total <= this._cacheBytes) break;
      if (inUse(candidate.path)) continue;
      total -= candidate.record.size;
      if (candidate.query) {
        this.cache.forgetQuery(candidate.key);
        this._queryRecords.delete(candidate.key);
        this._store.deleteQuery(candidate.key);
      } else {
        this.cache.forget(candidate.path);
        this._records.delete(candidate.key);
        this._store.deleteNode(candidate.key);
      }
    }
    this.cache.dirty.clear();
    this.cache.dirtyQueries.clear();
  }
}
