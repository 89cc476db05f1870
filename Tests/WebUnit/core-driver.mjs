// A sync core owned by a test instead of a page: the library's own Database, Reference and
// Query objects over a SyncCore whose effects are carried out here, synchronously. Requests the
// core sends are collected (`sent`) for a test or a scripted server to answer; stored-cache
// effects are collected (`stored`); listener callbacks are called as the browser's engine calls
// them. The clock and the write IDs are fixed, so a run is the same every time.

import { Database } from '../../Sources/HearthWeb/Resources/lib/database/database.js';
import { SyncCore } from '../../Sources/HearthWeb/Resources/lib/database/sync-core.js';

export const LIB = new URL('../../Sources/HearthWeb/Resources/lib/', import.meta.url);

/// Owns one SyncCore. `db` is a real Database whose engine is this driver.
export class CoreDriver {
  constructor({ now = 1_700_000_000_000, persistence = false, cacheSizeBytes } = {}) {
    this.now = now;
    this.core = new SyncCore({
      clock: () => this.now, firstWriteId: 1, writeKeySuffix: 'test', persistence, cacheSizeBytes,
    });
    /// Requests the core sent: { request, action, body, expectsAnswer }, in order.
    this.sent = [];
    /// `store` effects, in order.
    this.stored = [];
    /// Other effects worth a look: warnings, connection wishes, save requests.
    this.notes = [];
    /// Called with each `send` effect as it comes (a scripted server listens here).
    this.onSend = null;
    /// Called when the core asks to connect (goOnline) or disconnect (goOffline).
    this.onConnectionWish = null;
    this.db = Object.create(Database.prototype);
    this.db.url = 'http://replay.test';
    this.db._engine = this;
    this.transactions = {
      start: (ref, update, onComplete, applyLocally) => new Promise((resolve, reject) => {
        this.run(() => this.core.transactions.start(ref, update, applyLocally, { resolve, reject, onComplete }));
      }),
    };
  }

  /// Runs `call` on the core and carries out its effects; answers the call's value.
  run(call) {
    const value = call();
    for (const effect of this.core.takeEffects()) this._carryOut(effect);
    return value;
  }

  _carryOut(effect) {
    switch (effect.type) {
      case 'send':
        this.sent.push(effect);
        this.onSend?.(effect);
        return;
      case 'event': {
        const { registration, eventType, snapshot, prevKey } = effect;
        if (!registration.active) return;
        if (eventType === 'value' || eventType === 'child_removed') registration.callback.call(registration.context, snapshot);
        else registration.callback.call(registration.context, snapshot, prevKey ?? null);
        return;
      }
      case 'cancel':
        effect.registration.cancelCallback?.call(effect.registration.context, effect.error);
        return;
      case 'settle':
        if (effect.error) effect.ticket.reject(effect.error);
        else effect.ticket.resolve(effect.value);
        return;
      case 'transactionDone':
        effect.ticket.onComplete?.(effect.error, effect.committed, effect.error ? null : effect.snapshot);
        if (effect.error) effect.ticket.reject(effect.error);
        else effect.ticket.resolve({ committed: effect.committed, snapshot: effect.snapshot });
        return;
      case 'store':
        this.stored.push(effect);
        return;
      case 'connect':
      case 'disconnect':
        this.notes.push(effect);
        this.onConnectionWish?.(effect.type);
        return;
      default:
        this.notes.push(effect);
    }
  }

  // The engine's interface, as Database, Reference and Query use it.
  start() { return Promise.resolve(); }
  serverNow() { return this.core.serverNow(); }
  latest(path) { return this.core.latest(path); }
  get isConnected() { return this.core.isConnected; }
  get serverTimeOffset() { return this.core.serverTimeOffset; }
  addListener(query, eventType, callback, cancelCallback, context) {
    return this.run(() => this.core.addListener(query, eventType, callback, cancelCallback, context));
  }
  removeListener(query, eventType, callback) { this.run(() => this.core.removeListener(query, eventType, callback)); }
  keepSynced(query, keep) { this.run(() => this.core.keepSynced(query, keep)); }
  write(path, kind, data, entries) {
    return new Promise((resolve, reject) => this.run(() => this.core.addWrite(path, kind, data, entries, { ticket: { resolve, reject } })));
  }
  onDisconnect(action, body) {
    return new Promise((resolve, reject) => this.run(() => this.core.onDisconnect(action, body, { resolve, reject })));
  }
  get(query) {
    const live = this.run(() => this.core.readLive(query));
    if (live) return Promise.resolve(live);
    return new Promise((resolve, reject) => this.run(() => this.core.get(query, { resolve, reject })));
  }
  goOffline() { this.run(() => this.core.goOffline()); }
  goOnline() { this.run(() => this.core.goOnline()); }
  pendingWriteCount(path) { return this.core.pendingWriteCount(path); }

  // The connection's side, as a test plays it.
  connect(timestamp = this.now) {
    this.run(() => this.core.handshake(timestamp));
    this.run(() => this.core.connected());
  }
  disconnect() { this.run(() => this.core.disconnected()); }
  answer(request, status = 'ok', data = null) { this.run(() => this.core.answer(request, { status, data })); }
  push(action, body) { this.run(() => this.core.receive(action, body)); }

  /// The last request the core sent with `action`, or null.
  lastSent(action) {
    for (let index = this.sent.length - 1; index >= 0; index -= 1) if (this.sent[index].action === action) return this.sent[index];
    return null;
  }
}
