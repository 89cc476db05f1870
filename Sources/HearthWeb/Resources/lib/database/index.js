// How a query orders children: by priority (the default), key, value or a child's value.

import { Node, compareKeys, compareNodes } from './node.js';
import { pathString } from './path.js';

/// An order of children (Firebase's indexes). Ties are always broken by key.
export class Index {
  /// @param {'priority'|'key'|'value'|'child'} kind
  /// @param {string[]} path the child path, for 'child'
  constructor(kind, path = []) {
    this.kind = kind;
    this.path = path;
    this.id = kind === 'child' ? path.join('/') : `.${kind}`;
  }

  static child(path) { return new Index('child', path); }

  /// The index as the wire protocol's `i` names it (absent for priority).
  get wireName() { return this.kind === 'priority' ? undefined : this.id; }

  /// What a child is sorted by: a node (its priority as a leaf, itself, or the value at the
  /// child path), or its key for the key index.
  sortValue(key, node) {
    switch (this.kind) {
      case 'key': return key;
      case 'priority': return Node.leaf(node.priority);
      case 'value': return node;
      default: return node.at(this.path);
    }
  }

  compareSortValues(a, b) {
    return this.kind === 'key' ? compareKeys(a, b) : compareNodes(a, b);
  }

  compare(keyA, nodeA, keyB, nodeB) {
    if (this.kind === 'key') return compareKeys(keyA, keyB);
    return compareNodes(this.sortValue(keyA, nodeA), this.sortValue(keyB, nodeB)) || compareKeys(keyA, keyB);
  }

  /// A bound's value as this index compares it: a key for the key index, a node otherwise.
  boundValue(value) {
    return this.kind === 'key' ? String(value) : Node.fromJSON(value);
  }

  /// Whether a changed child moved in this order (child_moved): its sort value changed.
  sortValueChanged(key, oldNode, newNode) {
    if (this.kind === 'key') return false;
    return !this.sortValue(key, oldNode).equals(this.sortValue(key, newNode));
  }

  toString() { return this.kind === 'child' ? pathString(this.path) : this.id; }
}

Index.PRIORITY = new Index('priority');
Index.KEY = new Index('key');
Index.VALUE = new Index('value');
