// The sync core of one database: the server's data as this client knows it (ServerCache), the
// writes not yet acknowledged (PendingWrites), one View per distinct query with its callbacks,
// the server listens those views need, transactions and onDisconnect operations.
//
// It has no socket, timer, storage or clock of its own: it takes local calls (listen, write,
// transaction, goOffline…) and what the connection and the cache report (a handshake, an
// answer, a push, the stored records), and answers with effects for its owner to carry out,
// in order: requests to send, records to store, callbacks to call, promises to settle. The
// clock and the IDs of writes come from its owner, so a test can replay it exactly (see
// Tests/WebUnit). SyncEngine (sync-engine.js) is the owner in the browser.
//
// Every change (a server push, a local write, an acknowledgement, a refusal) recomputes the
// views at, above and below where it happened, deepest first, and answers their events with it.

import { HearthError } from '../hearth-error.js';
import { CacheRecords } from './cache-records.js';
import { DataSnapshot } from './data-snapshot.js';
import { Node } from './node.js';
import { comparePostOrder, contains, pathString, related, splitPath } from './path.js';
import { PendingWrites } from './pending-writes.js';
import { QueryParams } from './query-params.js';
import { ServerCache } from './server-cache.js';
import { TransactionQueue } from './transaction-queue.js';
import { View } from './view.js';

const DEFAULT_CACHE_BYTES = 10 * 1024 * 1024;

/// The effects the core answers (each a plain object with `type`):
/// - `send` {request, action, body}: send request `action` with `body`; report its answer with
///   `answer(request, {status, data})`, or `requestLost(request)` if the connection ends first.
///   A request with `expectsAnswer` false is one whose answer does not matter.
/// - `event` {registration, eventType, snapshot, prevKey}: call a listener (if still `active`).
/// - `cancel` {registration, error}: call a listener's cancel callback.
/// - `settle` {ticket, error, value}: settle the promise the caller gave `ticket` for.
/// - `transactionDone` {ticket, error, committed, snapshot}: a transaction ended.
/// - `store` {store, op, record | key}: a change to the stored cache `store` (the ID given to
///   `cacheOpened`); op is putWrite, deleteWrite, putNode, deleteNode, putQuery or deleteQuery.
/// - `scheduleSave`: changed data waits to be saved; call `save()` a little later.
/// - `pendingWritesChanged`, `connectionChange` {online}, `connected` (the connection is ready
///   for requests), `adoptOrphans` (look for writes another tab left), `connect` / `disconnect`
///   (goOnline / goOffline), `warn` {message}.

function viewKey(query) {
  return `${pathString(query._path)}|${query._params.identifier}`;
}

function isInfo(path) {
  return path[0] === '.info';
}

/// The state and rules of one database's synchronisation, without I/O.
export class SyncCore {
  /// @param {object} options
  /// @param {() => number} options.clock this device's time in milliseconds
  /// @param {number} options.firstWriteId the first write's ID (IDs grow across page loads, so
  ///   restored writes sort before new ones)
  /// @param {string} options.writeKeySuffix names this client in stored writes' keys, so two tabs
  ///   never share one
  /// @param {boolean} options.persistence whether the cache is kept (without it, the data of a
  ///   listen that ended is dropped, as Firebase's web SDK does)
  /// @param {number} [options.cacheSizeBytes] the stored cache's bound
  constructor({ clock, firstWriteId, writeKeySuffix, persistence, cacheSizeBytes = DEFAULT_CACHE_BYTES }) {
    this._clock = clock;
    this._nextWriteId = firstWriteId;
    this._keySuffix = writeKeySuffix;
    this._persist = persistence;
    this._cacheBytes = cacheSizeBytes;

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
    this.isConnected = false;
    this.isOffline = false;
    this._onDisconnectQueue = [];
    this._warnedIndexes = new Set();
    /// Requests sent and not answered: request → { answer, lost }.
    this._requests = new Map();
    this._nextRequest = 1;
    /// The stored cache in use (its ID), or null.
    this.store = null;
    this._saveScheduled = false;
    this._records = new CacheRecords();
    // Taking over another tab's writes reads the store; writes acknowledged while such a read
    // is under way are remembered until it ends, so they are not restored and sent twice.
    this._adoptionReads = 0;
    this._settledDuringAdoption = new Set();
    this._effects = [];
  }

  /// The effects answered since the last call, in order (and forgets them).
  takeEffects() {
    const effects = this._effects;
    this._effects = [];
    return effects;
  }

  _emit(effect) { this._effects.push(effect); }

  // MARK: - Time

  /// The server's time in milliseconds, estimated from the handshake.
  serverNow() { return this._clock() + this.serverTimeOffset; }

  // MARK: - Listening

  /// Registers `callback` for `eventType` on `query`; it gets the initial events at once.
  /// Answers the registration.
  addListener(query, eventType, callback, cancelCallback, context) {
    const view = this._viewFor(query);
    const registration = { eventType, callback, cancelCallback, context, active: true };
    view.registrations.push(registration);
    this._touch(view.path);
    this._planListens();
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
    const key = viewKey(query);
    if (keep) {
      this._viewFor(query).keepSynced += 1;
      this._planListens();
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
    this._planListens();
  }

  // MARK: - Reading once

  /// The query's value at once when it is known for sure (a `.info` location, or data a live
  /// listen keeps current), as a snapshot; null when the server must be asked.
  readLive(query) {
    const path = query._path;
    if (isInfo(path)) return this._snapshotOf(query, this._compute({ path, params: query._params, query }));
    const live = this._base(path, query._params, true);
    return live ? this._snapshotOf(query, this._finish(query, live)) : null;
  }

  /// Asks the server for the query's value (settles `ticket` with a snapshot); offline, the
  /// cache (with the pending writes) answers when it holds the whole value.
  get(query, ticket) {
    if (!this.isConnected) return this._getLocally(query, ticket);
    const path = query._path;
    this._request('g', { p: pathString(path), q: query._params.wireObject() }, {
      answer: ({ status, data }) => {
        if (status !== 'ok') return this._settle(ticket, HearthError.fromRealtime(status, data));
        const node = Node.fromJSON(data);
        if (!query._params.isFiltered && this.cache.isComplete(path)) {
          // Fresher than the cached value, which it replaces. (A location not cached stays
          // so, as in Firebase: its views would switch from this value to their listens'.)
          this.cache.overwrite(path, node);
          this.cache.markComplete(path);
          this._scheduleSave();
          this._raise(this._recompute(path));
        }
        this._settle(ticket, null, this._snapshotOf(query, this._finish(query, { node, complete: true })));
      },
      lost: () => this._getLocally(query, ticket),
    });
  }

  _getLocally(query, ticket) {
    const local = this._finish(query, this._base(query._path, query._params, false));
    if (local.complete) this._settle(ticket, null, this._snapshotOf(query, local));
    else this._settle(ticket, HearthError.network());
  }

  _snapshotOf(query, result) {
    return new DataSnapshot(query.ref, result.node, query._params.index);
  }

  /// A snapshot of `node` at `ref` (transactions' results).
  snapshot(ref, node) { return new DataSnapshot(ref, node); }

  _settle(ticket, error, value) {
    this._emit({ type: 'settle', ticket, error: error ?? null, value });
  }

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
      this._emit({ type: 'event', registration, eventType: type, snapshot, prevKey });
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
  /// `quiet` (the caller raises the events), `ticket` (settled when the server answers).
  addWrite(path, kind, data, entries, { transaction = false, visible = true, quiet = false, ticket = null } = {}) {
    const id = this._nextWriteId++;
    const write = {
      id, key: `${id}-${this._keySuffix}`, path, kind, data, entries, visible, transaction, sent: false, ticket, store: null,
    };
    this.writes.add(write);
    this._pendingWritesChanged();
    if (!transaction) this._saveWrite(write);
    if (!quiet) this._raise(this._recompute(path));
    if (!transaction && this.isConnected) this._sendWrite(write);
    return id;
  }

  /// Removes a pending write (acknowledged or refused).
  removeWrite(id, { quiet = false } = {}) {
    const write = this.writes.remove(id);
    if (!write) return null;
    this._pendingWritesChanged();
    if (!write.transaction && write.store !== null) {
      this._emit({ type: 'store', store: write.store, op: 'deleteWrite', key: write.key });
      // A read of the stored writes begun before this deletion still returns it: not again.
      if (this._adoptionReads > 0) this._settledDuringAdoption.add(write.key);
    }
    if (!quiet) this._raise(this._recompute(write.path));
    return write;
  }

  _saveWrite(write) {
    if (this.store === null) return;
    write.store = this.store;
    this._emit({
      type: 'store', store: this.store, op: 'putWrite', record: {
        key: write.key, id: write.id, path: pathString(write.path), kind: write.kind, data: write.data,
        entries: write.entries.map(([target, node]) => [pathString(target), node.val(true)]),
      },
    });
  }

  _sendWrite(write) {
    write.sent = true;
    const action = write.kind === 'set' ? 'p' : 'm';
    this._request(action, { p: pathString(write.path), d: write.data }, {
      answer: ({ status, data }) => {
        if (this.writes.get(write.id) !== write) return;
        this.removeWrite(write.id);
        if (status === 'ok') {
          if (write.ticket) this._settle(write.ticket, null);
        } else {
          this._emit({ type: 'warn', message: `Hearth: the server refused a write to ${pathString(write.path)} (${status}: ${data}).` });
          if (write.ticket) this._settle(write.ticket, HearthError.fromRealtime(status, data));
        }
      },
      // The connection went: sent again when it is back.
      lost: () => { write.sent = false; },
    });
  }

  /// How many writes the server has not acknowledged yet touch `path`: set at, above or below
  /// it (restored ones from an earlier page load included).
  pendingWriteCount(path) {
    return this.writes.list.filter((write) => write.entries.some(([target]) => contains(target, path) || contains(path, target))).length;
  }

  _pendingWritesChanged() { this._emit({ type: 'pendingWritesChanged' }); }

  /// onDisconnect operations (`o`, `om`, `oc`): sent now, or when the connection is ready.
  onDisconnect(action, body, ticket) {
    const operation = { action, body, ticket };
    if (this.isConnected) this._sendOnDisconnect(operation);
    else this._onDisconnectQueue.push(operation);
  }

  _sendOnDisconnect(operation) {
    this._request(operation.action, operation.body, {
      answer: ({ status, data }) => this._settle(operation.ticket, status === 'ok' ? null : HearthError.fromRealtime(status, data)),
      lost: () => this._settle(operation.ticket, HearthError.network()),
    });
  }

  // MARK: - Requests

  /// Answers a request with `handlers` ({answer, lost}; none: the answer does not matter).
  _request(action, body, handlers = null) {
    const request = this._nextRequest++;
    if (handlers) this._requests.set(request, handlers);
    this._emit({ type: 'send', request, action, body, expectsAnswer: handlers !== null });
    return request;
  }

  /// The server answered `request`.
  answer(request, { status, data = null }) {
    const handlers = this._requests.get(request);
    if (!handlers) return;
    this._requests.delete(request);
    handlers.answer({ status, data });
  }

  /// `request` will not be answered (its connection ended).
  requestLost(request) {
    const handlers = this._requests.get(request);
    if (!handlers) return;
    this._requests.delete(request);
    handlers.lost?.();
  }

  // MARK: - Online and offline

  goOffline() {
    this.isOffline = true;
    this._emit({ type: 'disconnect' });
  }

  goOnline() {
    this.isOffline = false;
    this._emit({ type: 'connect' });
  }

  /// A connection's handshake: the server's time. (It is ready for requests once signed in:
  /// `connected`.)
  handshake(timestamp) {
    this.serverTimeOffset = timestamp - this._clock();
    this._setInfo('serverTimeOffset', this.serverTimeOffset);
  }

  /// A new connection is signed in: listen again, send every unacknowledged write in order,
  /// then what waited for the connection.
  connected() {
    this.isConnected = true;
    for (const listen of this.listens.values()) this._sendListen(listen);
    for (const write of this.writes.list) {
      if (!write.transaction) this._sendWrite(write);
    }
    this.transactions.connected();
    const queued = this._onDisconnectQueue;
    this._onDisconnectQueue = [];
    for (const operation of queued) this._sendOnDisconnect(operation);
    this._emit({ type: 'connected' });
    this._setInfo('connected', true);
    this._emit({ type: 'connectionChange', online: true });
    // Writes another tab left behind when it closed.
    this._emit({ type: 'adoptOrphans' });
  }

  /// The connection ended: what was sent and not answered goes again on the next one.
  disconnected() {
    const wasConnected = this.isConnected;
    this.isConnected = false;
    for (const listen of this.listens.values()) {
      listen.sent = false;
      listen.answered = false;
    }
    for (const write of this.writes.list) write.sent = false;
    this.transactions.disconnected();
    this._emit({ type: 'connectionChange', online: false });
    if (wasConnected) this._setInfo('connected', false);
    const unanswered = [...this._requests.values()];
    this._requests.clear();
    for (const handlers of unanswered) handlers.lost?.();
  }

  _setInfo(key, value) {
    const next = this._info.withChild(key, Node.fromJSON(value));
    if (next.equals(this._info)) return;
    this._info = next;
    this._raise(this._recompute(['.info', key]));
  }

  /// Another user signed in (or out): the cache is theirs from now on (the owner opens it and
  /// reports it with `cacheOpened`). Writes not yet sent belong to the previous user: kept in
  /// their stored cache for next time. Listens start over (the server has the new credential).
  userChanged() {
    this.save();
    this.store = null;
    for (const write of [...this.writes.list]) {
      if (write.sent || write.transaction) continue;
      this.writes.remove(write.id);
      this._pendingWritesChanged();
      if (write.ticket) {
        this._settle(write.ticket, new HearthError('cancelled', 'The user changed before this was saved; it is saved when they sign in again.'));
      }
    }
    this.cache.clear();
    this._records.clear();
    this._raise(this._recompute(null));
    if (this.isConnected) for (const listen of this.listens.values()) this._sendListen(listen);
  }

  // MARK: - Server listens

  _tagFor(key) {
    let tag = this._tags.get(key);
    if (tag === undefined) {
      tag = this._nextTag++;
      this._tags.set(key, tag);
      this._tagKeys.set(tag, key);
    }
    return tag;
  }

  /// Works out the server listens the views need, and starts and stops listens to match, at
  /// once: a listen goes out before anything the caller does next (the server answers in
  /// order), as in Firebase's SDK. A location listened to as a whole covers every query at and
  /// below it; equal queries share one listen; a filtered query elsewhere gets a tagged listen
  /// of its own.
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
      if (this.isConnected && listen.sent) this._request('n', this._listenBody(listen, false));
      if (!this._persist) this._forgetUnlistened(listen, views);
    }
  }

  /// Without persistence the core keeps, as Firebase's web SDK, only what is listened to: the
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
    this._request('q', this._listenBody(listen, true), {
      answer: ({ status, data }) => {
        if (this.listens.get(listen.key) !== listen) return;
        if (status !== 'ok') return this._listenFailed(listen, HearthError.fromRealtime(status, data));
        listen.answered = true;
        if (listen.params === null) this.cache.markComplete(listen.path);
        else this.cache.markQueryComplete(listen.key, listen.path);
        if (Array.isArray(data?.w) && data.w.includes('no_index') && !this._warnedIndexes.has(listen.key)) {
          this._warnedIndexes.add(listen.key);
          this._emit({
            type: 'warn',
            message: `Hearth: no index for ${listen.params?.index} at ${pathString(listen.path)}: the server sends it all and `
              + 'this client filters it. Add ".indexOn" to the rules.',
          });
        }
        this._scheduleSave();
        this._raise(this._recompute(listen.path));
      },
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
    for (const registration of cancelled) this._emit({ type: 'cancel', registration, error });
    this._planListens();
  }

  // MARK: - Server pushes

  /// A push from the server: data (`d`, `m`) or a revoked listen (`c`). Others are not the
  /// core's (the owner handles `ac` and `sd`).
  receive(action, body) {
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
      default:
        return;
    }
  }

  // MARK: - The stored cache

  /// The stored cache `store` (an ID of the owner's) was opened and read: its data and writes
  /// are shown, and the writes sent.
  cacheOpened(store, { writes, nodes, queries }) {
    this.store = store;
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
      this._records.loadedNode(record);
    }
    for (const record of queries) {
      if (this.cache.query(record.key)?.complete) continue;
      this.cache.setQuery(record.key, splitPath(record.path), Node.fromJSON(record.json));
      this._records.loadedQuery(record);
    }
    this.cache.dirty.clear();
    this.cache.dirtyQueries.clear();
    for (const key of unsaved) this.cache.dirty.add(key);
    for (const key of unsavedQueries) this.cache.dirtyQueries.add(key);
    if (unsaved.length > 0 || unsavedQueries.length > 0) this._scheduleSave();
    this._restoreWrites(writes);
    // Writes made before the cache opened are saved now.
    for (const write of this.writes.list) {
      if (!write.transaction && write.store === null) this._saveWrite(write);
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
      restored.push({
        id: record.id, key: record.key, path: splitPath(record.path), kind: record.kind, data: record.data,
        entries: record.entries.map(([target, json]) => [splitPath(target), Node.fromJSON(json)]),
        visible: true, transaction: false, sent: false, store: this.store, ticket: null,
      });
      this._nextWriteId = Math.max(this._nextWriteId, record.id + 1);
    }
    if (restored.length === 0) return [];
    this.writes.prepend(restored);
    this._pendingWritesChanged();
    this.writes.list.sort((a, b) => a.id - b.id);
    if (this.isConnected) for (const write of restored) this._sendWrite(write);
    return restored;
  }

  /// The owner begins reading the stored writes to take over other tabs' (see `adoptionEnded`).
  adoptionBegan() { this._adoptionReads += 1; }

  /// The read begun with `adoptionBegan` ended: `records` are the writes this client now owns
  /// (null: none, or the read failed).
  adoptionEnded(records) {
    const restored = records ? this._restoreWrites(records) : [];
    this._adoptionReads -= 1;
    if (this._adoptionReads === 0) this._settledDuringAdoption.clear();
    if (restored.length > 0) this._raise(this._recompute(null));
  }

  _scheduleSave() {
    if (this.store === null || this._saveScheduled) return;
    this._saveScheduled = true;
    this._emit({ type: 'scheduleSave' });
  }

  /// Stores the changed complete locations and filtered queries, then evicts the least
  /// recently used ones nobody listens to beyond the size bound.
  save() {
    this._saveScheduled = false;
    const store = this.store;
    if (store === null) return;
    const inUse = (path) => [...this.views.values()].some((view) => related(view.path, path));
    const changes = [
      ...this._records.save(this.cache, this._clock()),
      ...this._records.evict(this.cache, this._cacheBytes, inUse),
    ];
    for (const change of changes) this._emit({ type: 'store', store, ...change });
  }

  /// Marks the saved locations a view at `path` uses as recently used.
  _touch(path) { this._records.touch(path, this._clock()); }
}
