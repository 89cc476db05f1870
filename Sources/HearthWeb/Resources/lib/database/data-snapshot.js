// What listeners and reads are given: an immutable value at a location, in a query's order.

import { Node } from './node.js';
import { Index } from './index.js';
import { splitPath } from './path.js';

export class DataSnapshot {
  /// @param {import('./reference.js').Reference} ref where the value is
  /// @param {Node} node the value
  /// @param {Index} [index] the order `forEach` visits children in (the query's)
  constructor(ref, node, index = Index.PRIORITY) {
    this.ref = ref;
    this.key = ref.key;
    this._node = node ?? Node.EMPTY;
    this._index = index;
  }

  /// The value as JSON (null when there is nothing); objects keyed 0…n read as arrays.
  val() { return this._node.val(); }
  /// The value with priorities (`.priority`, `.value`), and no arrays.
  exportVal() { return this._node.val(true); }
  toJSON() { return this.val(); }
  exists() { return !this._node.isEmpty; }
  /// The priority: a number, a string, or null.
  getPriority() { return this._node.priority; }
  get priority() { return this._node.priority; }

  child(path) {
    const segments = splitPath(path);
    return new DataSnapshot(this.ref.child(path), this._node.at(segments));
  }

  hasChild(path) { return !this._node.at(splitPath(path)).isEmpty; }
  hasChildren() { return this._node.numChildren > 0; }
  numChildren() { return this._node.numChildren; }
  get size() { return this._node.numChildren; }

  /// Calls `action(childSnapshot)` for each child in the query's order; returning true stops
  /// (and `forEach` returns true).
  forEach(action) {
    for (const [key, child] of this._node.sortedChildren(this._index)) {
      if (action(new DataSnapshot(this.ref.child(key), child)) === true) return true;
    }
    return false;
  }
}
