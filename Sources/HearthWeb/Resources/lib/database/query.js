// A location with an optional order, range and limit: what can be read and listened to.

import { HearthError } from '../hearth-error.js';
import { Index } from './index.js';
import { pathString, splitPath } from './path.js';
import { QueryParams } from './query-params.js';

const EVENT_TYPES = ['value', 'child_added', 'child_changed', 'child_removed', 'child_moved'];

function invalid(message) {
  return new HearthError('invalid', message);
}

function isPrimitive(value) {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

/// A query (Firebase's): immutable; each method answers a new one.
export class Query {
  /// @param {import('./database.js').Database} db
  /// @param {string[]} path
  /// @param {QueryParams} [params]
  constructor(db, path, params = QueryParams.DEFAULT, orderSet = false) {
    this._db = db;
    this._path = path;
    this._params = params;
    this._orderSet = orderSet;
  }

  /// The location queried.
  get ref() { return this._db._reference(this._path); }

  /// Orders children by the value at `path` under each (children without it come first).
  orderByChild(path) {
    const segments = splitPath(path);
    if (segments.length === 0 || segments.some((key) => key.startsWith('$') || key.startsWith('.'))) {
      throw invalid(`orderByChild needs a child path, not "${path}".`);
    }
    return this._ordered(Index.child(segments));
  }

  orderByKey() { return this._ordered(Index.KEY); }
  orderByValue() { return this._ordered(Index.VALUE); }
  orderByPriority() { return this._ordered(Index.PRIORITY); }

  /// Children from `value` on (and from `key`, among those equal to `value`).
  startAt(value = null, key) { return this._bound('start', value, key, true); }
  /// Children after `value` (after `key`, among those equal to `value`).
  startAfter(value = null, key) { return this._bound('start', value, key, false); }
  /// Children up to `value` (up to `key`, among those equal to `value`).
  endAt(value = null, key) { return this._bound('end', value, key, true); }
  /// Children before `value` (before `key`, among those equal to `value`).
  endBefore(value = null, key) { return this._bound('end', value, key, false); }

  equalTo(value, key) {
    if (this._params.start || this._params.end) throw invalid('equalTo cannot be combined with startAt or endAt.');
    return this.startAt(value, key).endAt(value, key);
  }

  /// At most the first `count` children.
  limitToFirst(count) { return this._limit(count, true); }
  /// At most the last `count` children.
  limitToLast(count) { return this._limit(count, false); }

  /// Reads the value once: from the local data when a listen keeps it current, else from the
  /// server, else (offline) from the cache when it has all of it.
  /// @returns {Promise<import('./data-snapshot.js').DataSnapshot>}
  get() { return this._db._engine.get(this); }

  /// The first `eventType` event: `value` reads as `get()` does; child events wait for one.
  once(eventType = 'value', callback, cancelCallback) {
    this._checkEventType(eventType);
    if (eventType === 'value') {
      const read = this.get();
      read.then((snapshot) => callback?.(snapshot), (error) => (typeof cancelCallback === 'function' ? cancelCallback(error) : null));
      return read;
    }
    return new Promise((resolve, reject) => {
      let done = false;
      const handler = (snapshot, previous) => {
        if (done) return;
        done = true;
        this.off(eventType, handler);
        callback?.(snapshot, previous);
        resolve(snapshot);
      };
      this.on(eventType, handler, (error) => {
        if (typeof cancelCallback === 'function') cancelCallback(error);
        reject(error);
      });
    });
  }

  /// Calls `callback(snapshot, prevChildKey)` for `eventType` ('value', 'child_added',
  /// 'child_changed', 'child_removed', 'child_moved'): at once with the data known, then on
  /// every change. `cancelCallback(error)` if the server refuses or ends the listen.
  /// @returns {Function} the callback (to pass to `off`)
  on(eventType, callback, cancelCallback, context) {
    this._checkEventType(eventType);
    if (typeof callback !== 'function') throw invalid('on() needs a callback function.');
    let cancel = cancelCallback;
    let thisArg = context;
    if (cancel !== undefined && cancel !== null && typeof cancel !== 'function') {
      // Firebase's older signature: on(type, callback, context).
      thisArg = cancel;
      cancel = undefined;
    }
    this._db._engine.addListener(this, eventType, callback, cancel ?? undefined, thisArg);
    return callback;
  }

  /// Removes this query's callbacks: all, those of one event type, or one callback.
  off(eventType, callback) {
    if (eventType !== undefined) this._checkEventType(eventType);
    this._db._engine.removeListener(this, eventType, callback);
  }

  /// Keeps this query's data synchronised (and cached) even without callbacks.
  keepSynced(keep) { this._db._engine.keepSynced(this, keep); }

  isEqual(other) {
    return other instanceof Query && other._db === this._db && pathString(other._path) === pathString(this._path)
      && other._params.identifier === this._params.identifier;
  }

  toString() { return this.ref.toString(); }
  toJSON() { return this.toString(); }

  _checkEventType(eventType) {
    if (!EVENT_TYPES.includes(eventType)) throw invalid(`Unknown event type "${eventType}".`);
  }

  _with(change, orderSet = this._orderSet) {
    return new Query(this._db, this._path, this._params.with(change), orderSet);
  }

  _ordered(index) {
    if (this._orderSet) throw invalid('A query can have only one orderBy.');
    const query = this._with({ index }, true);
    query._checkBounds();
    return query;
  }

  _bound(side, value, key, inclusive) {
    if (this._params[side]) throw invalid(`${side === 'start' ? 'startAt/startAfter' : 'endAt/endBefore'} was already set.`);
    if (!isPrimitive(value)) throw invalid('Query bounds must be strings, numbers, booleans or null.');
    if (key !== undefined && key !== null && typeof key !== 'string') throw invalid('A query bound\'s key must be a string.');
    const query = this._with({ [side]: { value, key: key ?? undefined, inclusive } });
    query._checkBounds();
    return query;
  }

  _limit(count, fromLeft) {
    if (!Number.isInteger(count) || count <= 0) throw invalid('A limit must be a positive whole number.');
    if (this._params.limit) throw invalid('A query can have only one limit.');
    return this._with({ limit: { count, fromLeft } });
  }

  _checkBounds() {
    const { index, start, end } = this._params;
    for (const bound of [start, end]) {
      if (!bound) continue;
      if (index.kind === 'key') {
        if (typeof bound.value !== 'string') throw invalid('With orderByKey, bounds must be strings.');
        if (bound.key !== undefined) throw invalid('With orderByKey, bounds take no key.');
      }
      if (index.kind === 'priority' && typeof bound.value === 'boolean') {
        throw invalid('With the priority order, bounds must be strings, numbers or null.');
      }
    }
  }
}
