// Writes the server makes when this client's connection ends (Firebase's onDisconnect).

import { HearthError } from '../hearth-error.js';
import { withPriority } from './node.js';
import { pathString, valueProblem, writePathProblem } from './path.js';

/// The onDisconnect operations of one location. They belong to the current connection: as in
/// Firebase, register them again whenever `.info/connected` turns true. Operations registered
/// while offline are sent when the connection is ready.
export class OnDisconnect {
  /// @param {import('./reference.js').Reference} ref
  constructor(ref) {
    this._ref = ref;
  }

  get _engine() { return this._ref._db._engine; }

  /// Sets `value` here when the connection ends (checked against the rules now).
  set(value, onComplete) {
    return this._send('o', value === undefined ? null : value, onComplete);
  }

  setWithPriority(value, priority, onComplete) {
    return this._send('o', withPriority(value, priority), onComplete);
  }

  /// Updates the relative paths of `values` here when the connection ends.
  update(values, onComplete) {
    if (values === null || typeof values !== 'object' || Array.isArray(values)) {
      return this._report(Promise.reject(new HearthError('invalid', 'update() takes an object of paths and values.')), onComplete);
    }
    return this._send('om', values, onComplete);
  }

  remove(onComplete) { return this.set(null, onComplete); }

  /// Drops what is registered at this location and below.
  cancel(onComplete) {
    return this._report(this._engine.onDisconnect('oc', { p: pathString(this._ref._path) }), onComplete);
  }

  _send(action, data, onComplete) {
    const problem = writePathProblem(this._ref._path) ?? valueProblem(data);
    if (problem) return this._report(Promise.reject(new HearthError('invalid', `That cannot be saved: ${problem}`)), onComplete);
    return this._report(this._engine.onDisconnect(action, { p: pathString(this._ref._path), d: data }), onComplete);
  }

  _report(promise, onComplete) {
    if (typeof onComplete === 'function') promise.then(() => onComplete(null), (error) => onComplete(error));
    return promise;
  }
}
