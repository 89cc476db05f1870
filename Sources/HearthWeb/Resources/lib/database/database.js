// The database of a Hearth server, as Firebase's web SDK presents it: references, queries,
// listeners, writes, transactions and onDisconnect, over one realtime connection, offline
// first (see docs/browser-client.md).

import { Node } from './node.js';
import { Reference } from './reference.js';
import { resolveServerValues } from './server-values.js';
import { SyncEngine } from './sync-engine.js';

/// One database: `ref(path)` to start.
export class Database {
  /// @param {object} options
  /// @param {string} options.url the server (http or https)
  /// @param {string|null} [options.namespace] the database name, when not the server's default
  /// @param {(forceRefresh: boolean) => Promise<string|null>} options.credential the credential to sign the connection in with
  /// @param {() => string|null|undefined} [options.credentialNow] the credential when it is at hand
  ///   without waiting (null: none; undefined: not at hand)
  /// @param {() => string} [options.userKey] who is signed in ('' for nobody): each has a cache of their own
  /// @param {boolean} [options.persistence] keep the cache and pending writes in IndexedDB (default true)
  /// @param {number} [options.cacheSizeBytes] the cache's bound (about 10 MB by default)
  /// @param {(online: boolean) => void} [options.onConnectionChange]
  constructor({
    url, namespace = null, credential, credentialNow, userKey = () => '', persistence = true, cacheSizeBytes, onConnectionChange,
  }) {
    this.url = url.replace(/\/+$/, '');
    this._engine = new SyncEngine({
      url: this.url, namespace, credential, credentialNow, userKey, persistence, cacheSizeBytes, onConnectionChange,
    });
  }

  /// The location at `path` ('' or '/' for the root). The first call opens the cache and the
  /// connection, as Firebase's SDK connects on first use.
  ref(path = '') {
    this._engine.start();
    return this._reference(String(path ?? '').split('/').filter((key) => key.length > 0));
  }

  /// Closes the connection; reads and writes go on locally until `goOnline`.
  goOffline() { this._engine.goOffline(); }

  goOnline() { this._engine.goOnline(); }

  /// Settles once the offline cache is open and its data shown (listeners added before get
  /// their cached events then).
  ready() { return this._engine.start(); }

  /// Resolves once the offline cache has saved everything changed so far: the server's data
  /// this client holds and its pending writes are in IndexedDB (the save that waits, at most
  /// half a second after a change, is done and committed). Resolves at once without an offline
  /// cache. Tests wait on it instead of sleeping; an app can say "saved on this device".
  whenSaved() { return this._engine.whenSaved(); }

  /// How many writes made by this client (this page's, or an earlier page's restored from the
  /// offline cache) the server has not acknowledged yet at, above or below `path`: while it is
  /// above 0, what is shown there is waiting to be sent.
  pendingWriteCount(path = '') {
    return this._engine.pendingWriteCount(String(path ?? '').split('/').filter((key) => key.length > 0));
  }

  /// Calls `callback()` whenever pending writes change (one is made, acknowledged, refused, or
  /// restored from the cache at load), after that change's events; answers a function that
  /// stops it. Read `pendingWriteCount` in it.
  onPendingWritesChange(callback) { return this._engine.onPendingWritesChange(callback); }

  _reference(path) { return new Reference(this, path); }

  /// `json` to write at `path` with its server values estimated locally.
  _resolve(path, json) {
    const engine = this._engine;
    const resolved = resolveServerValues(json, engine.serverNow(), (relative) => engine.latest([...path, ...relative]));
    return Node.fromJSON(resolved);
  }
}
