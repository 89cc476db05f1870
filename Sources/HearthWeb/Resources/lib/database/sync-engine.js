// The sync engine of one database in the page: the sync core (sync-core.js: views, listens,
// writes, transactions, the cache's contents; no I/O) wired to the one realtime Connection (with
// ConnectionAuth signing it in), to the offline cache in IndexedDB (OfflineCache) and to the
// page's clock and timers. Every call goes to the core, and the effects it answers are carried
// out here, in order: requests sent, records stored, callbacks called, promises settled.
//
// Everything runs on the page's one JavaScript thread; the only waits are the network and
// IndexedDB, whose answers go to the core as new inputs.

import { HearthError } from '../hearth-error.js';
import { Connection } from './connection.js';
import { ConnectionAuth } from './connection-auth.js';
import { OfflineCache } from './offline-cache.js';
import { SyncCore } from './sync-core.js';

const GET_WAIT_MS = 3000;

/// Calls user code that must not stop the caller: what it throws is reported on its own.
function callSafely(callback) {
  try {
    callback();
  } catch (error) {
    setTimeout(() => { throw error; });
  }
}

/// A promise and the ticket the core settles it with.
function ticketed(start) {
  return new Promise((resolve, reject) => start({ resolve, reject }));
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
    url, namespace, credential, credentialNow = () => undefined, userKey, persistence, cacheSizeBytes,
    onConnectionChange,
  }) {
    this.url = url.replace(/\/+$/, '');
    this.namespace = namespace ?? null;
    this._userKey = userKey;
    this._onConnectionChange = onConnectionChange;
    this.core = new SyncCore({
      clock: () => Date.now(),
      // Write IDs grow across page loads (restored writes sort before new ones); the key that
      // stores a write also names this engine, so two tabs never share one.
      firstWriteId: Date.now() * 1000,
      writeKeySuffix: Math.random().toString(36).slice(2, 10),
      persistence,
      cacheSizeBytes,
    });
    this._started = false;
    this._user = null;
    this._ready = Promise.resolve();
    this._connectedWaiters = new Set();
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
    this._auth = new ConnectionAuth({
      connection: this.connection, credential, credentialNow,
      isOffline: () => this.core.isOffline,
      isConnected: () => this.core.isConnected,
    });
    this._cache = new OfflineCache({
      enabled: persistence,
      nameFor: (user) => `hearth:${this.url}|${this.namespace ?? ''}|${user}`,
      delegate: {
        opened: (store, loaded) => this._run(() => this.core.cacheOpened(store, loaded)),
        adoptionBegan: () => this._run(() => this.core.adoptionBegan()),
        adoptionEnded: (records) => this._run(() => this.core.adoptionEnded(records)),
        save: () => this._save(),
      },
    });
    /// Transactions, as Reference.transaction starts them.
    this.transactions = {
      start: (ref, update, onComplete, applyLocally) => ticketed((ticket) => {
        this._run(() => this.core.transactions.start(ref, update, applyLocally, { ...ticket, onComplete }));
      }),
    };
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
    this._ready = this._cache.open(this._user).then(() => {
      if (!this.core.isOffline) this.connection.start();
    });
    return this._ready;
  }

  // MARK: - What the core knows (read by tests and the app)

  get isConnected() { return this.core.isConnected; }
  get serverTimeOffset() { return this.core.serverTimeOffset; }
  get cache() { return this.core.cache; }
  get writes() { return this.core.writes; }
  get views() { return this.core.views; }
  get listens() { return this.core.listens; }
  /// The IndexedDB store in use (a Persistence), or null.
  get _store() { return this._cache.store; }

  /// The server's time in milliseconds, estimated from the handshake.
  serverNow() { return this.core.serverNow(); }

  /// The value at `path` as this client sees it (server data and pending writes).
  latest(path) { return this.core.latest(path); }

  // MARK: - Calls

  addListener(query, eventType, callback, cancelCallback, context) {
    this.start();
    return this._run(() => this.core.addListener(query, eventType, callback, cancelCallback, context));
  }

  removeListener(query, eventType, callback) {
    this._run(() => this.core.removeListener(query, eventType, callback));
  }

  removeRegistration(query, registration) {
    this._run(() => this.core.removeRegistration(query, registration));
  }

  keepSynced(query, keep) {
    this.start();
    this._run(() => this.core.keepSynced(query, keep));
  }

  /// The query's value: from the local data when a live listen keeps it current, else from the
  /// server (waiting a little for a connection), else (offline) from the cache when it holds
  /// the whole value.
  async get(query) {
    await this.start();
    const live = this._run(() => this.core.readLive(query));
    if (live) return live;
    if (!this.core.isConnected && !this.core.isOffline) await this._waitForConnection(GET_WAIT_MS);
    return ticketed((ticket) => this._run(() => this.core.get(query, ticket)));
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

  /// A set or update from the API: resolves when the server has it, rejects if it refuses.
  write(path, kind, data, entries) {
    this.start();
    return ticketed((ticket) => this._run(() => this.core.addWrite(path, kind, data, entries, { ticket })));
  }

  /// How many writes the server has not acknowledged yet touch `path`.
  pendingWriteCount(path) { return this.core.pendingWriteCount(path); }

  /// Calls `callback()` once after any change to the pending writes (made, acknowledged,
  /// refused, restored), after that change's events; answers a function that stops it.
  onPendingWritesChange(callback) {
    this._pendingObservers.add(callback);
    return () => this._pendingObservers.delete(callback);
  }

  /// onDisconnect operations (`o`, `om`, `oc`): sent now, or when the connection is ready.
  onDisconnect(action, body) {
    this.start();
    return ticketed((ticket) => this._run(() => this.core.onDisconnect(action, body, ticket)));
  }

  goOffline() { this._run(() => this.core.goOffline()); }

  goOnline() { this._run(() => this.core.goOnline()); }

  /// Resolves once the offline cache holds everything changed so far (the data the server sent
  /// and the pending writes): the save that waits is done and IndexedDB has committed it. At
  /// once without an offline cache.
  async whenSaved() {
    await this._ready;
    await this._cache.whenSaved();
  }

  /// The signed-in user's ID token changed: the connection signs in again at once. Another user
  /// (or signing out) also changes the cache: theirs is loaded, and listens start over.
  userChanged() {
    if (!this._started) return;
    const user = this._userKey();
    if (this.core.isConnected) this._auth.tokenChanged();
    if (user === this._user) return;
    this._user = user;
    // The core saves what the previous user's cache still lacks, then forgets it.
    this._run(() => this.core.userChanged());
    this._cache.close();
    this._ready = this._cache.open(user);
  }

  /// Saves the cache now.
  _save() {
    this._run(() => this.core.save());
    this._cache.cancelSave();
  }

  /// Takes over the writes other tabs left (also run by tests).
  _adoptOrphanWrites() { return this._cache.adoptOrphans(); }

  // MARK: - The connection

  async _connectionReady({ timestamp }) {
    this._run(() => this.core.handshake(timestamp));
    if (await this._auth.signIn()) this._run(() => this.core.connected());
  }

  _connectionLost() {
    this._auth.connectionLost();
    this._run(() => this.core.disconnected());
  }

  _push(action, body) {
    switch (action) {
      case 'ac':
        // The credential stopped being valid: sign in again with a fresh one.
        this._auth.revoked();
        return;
      case 'sd':
        console.log(`Hearth security debug: ${body.msg ?? ''}`);
        return;
      default:
        this._run(() => this.core.receive(action, body));
    }
  }

  // MARK: - Carrying out the core's effects

  /// Runs `call` on the core, carries out the effects it answered, and answers its value.
  _run(call) {
    const value = call();
    for (const effect of this.core.takeEffects()) this._carryOut(effect);
    return value;
  }

  _carryOut(effect) {
    switch (effect.type) {
      case 'send':
        this._send(effect);
        return;
      case 'event': {
        const { registration, eventType, snapshot, prevKey } = effect;
        if (!registration.active) return;
        callSafely(() => {
          if (eventType === 'value' || eventType === 'child_removed') registration.callback.call(registration.context, snapshot);
          else registration.callback.call(registration.context, snapshot, prevKey ?? null);
        });
        return;
      }
      case 'cancel':
        callSafely(() => effect.registration.cancelCallback?.call(effect.registration.context, effect.error));
        return;
      case 'settle':
        if (effect.error) effect.ticket.reject(effect.error);
        else effect.ticket.resolve(effect.value);
        return;
      case 'transactionDone': {
        const { ticket, error, committed, snapshot } = effect;
        callSafely(() => ticket.onComplete?.(error, committed, error ? null : snapshot));
        if (error) ticket.reject(error);
        else ticket.resolve({ committed, snapshot });
        return;
      }
      case 'store':
        this._cache.apply(effect);
        return;
      case 'scheduleSave':
        this._cache.scheduleSave();
        return;
      case 'pendingWritesChanged':
        this._pendingWritesChanged();
        return;
      case 'connected':
        for (const waiter of [...this._connectedWaiters]) waiter();
        return;
      case 'connectionChange':
        this._onConnectionChange?.(effect.online);
        return;
      case 'adoptOrphans':
        this._cache.adoptOrphans();
        return;
      case 'connect':
        if (this._started) this._ready.then(() => this.connection.start());
        return;
      case 'disconnect':
        this.connection.stop();
        return;
      case 'warn':
        console.warn(effect.message);
        return;
      default:
        throw new HearthError('internal', `The sync core answered an unknown effect (${effect.type}).`);
    }
  }

  /// Sends a request of the core's; its answer (or the connection's end) goes back to it.
  _send({ request, action, body, expectsAnswer }) {
    const sent = this.connection.request(action, body);
    if (!expectsAnswer) {
      sent.catch(() => {});
      return;
    }
    sent.then(
      (answer) => this._run(() => this.core.answer(request, answer)),
      () => this._run(() => this.core.requestLost(request)),
    );
  }

  // Batched: one acknowledgement can end many writes, and callers only re-read the counts.
  _pendingWritesChanged() {
    if (this._pendingNoticeQueued || this._pendingObservers.size === 0) return;
    this._pendingNoticeQueued = true;
    queueMicrotask(() => {
      this._pendingNoticeQueued = false;
      for (const observer of [...this._pendingObservers]) callSafely(observer);
    });
  }
}
