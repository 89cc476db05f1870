// A location in the database: a query of all of it, and what can be written there.

import { HearthError } from '../hearth-error.js';
import { withPriority } from './node.js';
import { OnDisconnect } from './on-disconnect.js';
import { contains, pathString, splitPath, valueProblem, writePathProblem } from './path.js';
import { pushId } from './push-id.js';
import { Query } from './query.js';

function refused(problem) {
  return Promise.reject(new HearthError('invalid', `That cannot be saved: ${problem}`));
}

/// Settles `onComplete(error or null)` (Firebase's callback style) along with `promise`.
function reporting(promise, onComplete) {
  if (typeof onComplete === 'function') promise.then(() => onComplete(null), (error) => onComplete(error));
  return promise;
}

/// A database location (Firebase's Reference).
export class Reference extends Query {
  /// The last key of the path (null at the root).
  get key() { return this._path.length ? this._path[this._path.length - 1] : null; }
  get ref() { return this; }
  get parent() { return this._path.length ? this._db._reference(this._path.slice(0, -1)) : null; }
  get root() { return this._db._reference([]); }
  /// The path, "/a/b".
  get path() { return pathString(this._path); }

  child(path) { return this._db._reference([...this._path, ...splitPath(path)]); }

  toString() { return `${this._db.url}/${this._path.map(encodeURIComponent).join('/')}`; }

  /// Operations the server runs when this client's connection ends.
  onDisconnect() { return new OnDisconnect(this); }

  /// Replaces the value here (null or undefined removes it). The change is seen here at once;
  /// the promise settles when the server has it (or refuses it, which undoes the change).
  set(value, onComplete) {
    return reporting(this._set(this._path, value === undefined ? null : value), onComplete);
  }

  /// Sets the value here with a priority.
  setWithPriority(value, priority, onComplete) {
    if (priority !== null && typeof priority !== 'number' && typeof priority !== 'string') {
      return reporting(refused('a priority must be a number, a string or null.'), onComplete);
    }
    return reporting(this._set(this._path, withPriority(value, priority)), onComplete);
  }

  /// Sets only the priority of the value here.
  setPriority(priority, onComplete) {
    if (priority !== null && typeof priority !== 'number' && typeof priority !== 'string') {
      return reporting(refused('a priority must be a number, a string or null.'), onComplete);
    }
    return reporting(this._set([...this._path, '.priority'], priority), onComplete);
  }

  /// Sets each relative path of `values` (null removes), all at once.
  update(values, onComplete) {
    return reporting(this._update(values), onComplete);
  }

  remove(onComplete) { return this.set(null, onComplete); }

  /// A new child under a push ID made here (so it is known at once). With a value, it is also
  /// written; the returned reference is then thenable (resolving to a plain reference).
  push(value, onComplete) {
    const child = this.child(pushId(this._db._engine.serverNow()));
    const written = value === undefined ? Promise.resolve(child) : child.set(value, onComplete).then(() => child);
    const thenable = this._db._reference(child._path);
    thenable.then = written.then.bind(written);
    thenable.catch = written.catch.bind(written);
    return thenable;
  }

  /// Runs `update(current value)` and writes what it returns, unless the value changed on the
  /// server meanwhile: then it runs again on the new value. Returning undefined aborts.
  /// `onComplete(error, committed, snapshot)`; `applyLocally` false keeps the intermediate
  /// results from this client's listeners.
  /// @returns {Promise<{committed: boolean, snapshot: import('./data-snapshot.js').DataSnapshot}>}
  transaction(update, onComplete, applyLocally = true) {
    const problem = writePathProblem(this._path) ?? (this._path.at(-1) === '.priority' ? 'transactions cannot run on .priority.' : null);
    if (problem) return refused(problem);
    if (typeof update !== 'function') return refused('transaction() needs an update function.');
    this._db._engine.start();
    return this._db._engine.transactions.start(this, update, onComplete, applyLocally);
  }

  _set(path, data) {
    const problem = writePathProblem(path) ?? valueProblem(data);
    if (problem) return refused(problem);
    const engine = this._db._engine;
    return engine.write(path, 'set', data, [[path, this._db._resolve(path, data)]]);
  }

  _update(values) {
    if (values === null || typeof values !== 'object' || Array.isArray(values)) {
      return refused('update() takes an object of paths and values.');
    }
    const keys = Object.keys(values);
    if (keys.length === 0) return Promise.resolve();
    const paths = keys.map((key) => [...this._path, ...splitPath(key)]);
    for (let index = 0; index < keys.length; index += 1) {
      const problem = writePathProblem(paths[index]) ?? valueProblem(values[keys[index]]);
      if (problem) return refused(problem);
      for (let other = 0; other < keys.length; other += 1) {
        if (other !== index && contains(paths[index], paths[other])) {
          return refused(`"${keys[index]}" is above "${keys[other]}" in the same update.`);
        }
      }
    }
    const entries = paths.map((path, index) => [path, this._db._resolve(path, values[keys[index]] ?? null)]);
    return this._db._engine.write(this._path, 'merge', values, entries);
  }
}
