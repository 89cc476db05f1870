// The database's values as immutable trees with priorities, Firebase's key and value orders,
// and Firebase's node hash.

import { sha1Base64 } from './sha1.js';

const MIN_INT32 = -2147483648;
const MAX_INT32 = 2147483647;
const INT_KEY = /^-?0*\d{1,10}$/;

function int32Key(key) {
  if (!INT_KEY.test(key)) return null;
  const number = Number(key);
  return number >= MIN_INT32 && number <= MAX_INT32 ? number : null;
}

/// Key order: 32-bit integer keys first, numerically (shorter text first on ties), then the
/// other keys as strings (UTF-16 code units, as Firebase's JavaScript SDK compares them).
export function compareKeys(a, b) {
  if (a === b) return 0;
  const intA = int32Key(a);
  const intB = int32Key(b);
  if (intA !== null && intB !== null) return intA === intB ? a.length - b.length : intA - intB;
  if (intA !== null) return -1;
  if (intB !== null) return 1;
  return a < b ? -1 : 1;
}

function rank(node) {
  if (node.isEmpty) return 0;
  const value = node.leafValue;
  if (value === null) return 5; // an object
  if (value === false) return 1;
  if (value === true) return 2;
  return typeof value === 'number' ? 3 : 4;
}

/// Value order of two nodes: null < false < true < numbers < strings < objects (objects are
/// all equal to each other). Priorities compare the same way (none < numbers < strings).
export function compareNodes(a, b) {
  const rankA = rank(a);
  const rankB = rank(b);
  if (rankA !== rankB) return rankA - rankB;
  if (rankA === 3) return a.leafValue - b.leafValue;
  if (rankA === 4) return a.leafValue < b.leafValue ? -1 : a.leafValue > b.leafValue ? 1 : 0;
  return 0;
}

const hexView = new DataView(new ArrayBuffer(8));

/// A double's 16 hex digits, big-endian, as Firebase's hash writes numbers.
function ieee754Hex(number) {
  hexView.setFloat64(0, number);
  let text = '';
  for (let index = 0; index < 8; index += 1) text += hexView.getUint8(index).toString(16).padStart(2, '0');
  return text;
}

/// The value to write for `value` with `priority`, in export format.
export function withPriority(value, priority) {
  if (value === null || value === undefined) return null;
  if (typeof value === 'object' && !Array.isArray(value)) return { ...value, '.priority': priority };
  return { '.value': value, '.priority': priority };
}

function isCanonicalIndex(key) {
  return /^(0|[1-9]\d{0,8})$/.test(key);
}

/// One immutable node of the tree: a leaf (string, number, boolean) or children by key, either
/// with an optional priority (number or string). A node never has zero children: that is the
/// empty node (null). Changes return new nodes that share what did not change.
export class Node {
  /// @param {string|number|boolean|null} leafValue the value of a leaf; null for children
  /// @param {Map<string, Node>|null} children never empty; null for leaves
  /// @param {number|string|null} priority
  constructor(leafValue, children, priority) {
    this.leafValue = leafValue;
    this.children = children;
    this.priority = priority;
    this._hash = undefined;
    this._sorted = null;
  }

  /// A node from a JSON value in export format (`.value` and `.priority` keys), with arrays as
  /// objects keyed "0", "1"…, and null children and empty objects dropped.
  static fromJSON(json, priority = null) {
    if (json === null || json === undefined) return Node.EMPTY;
    if (typeof json !== 'object') return new Node(json, null, priority ?? null);
    let ownPriority = priority;
    if (Object.prototype.hasOwnProperty.call(json, '.priority')) {
      const given = json['.priority'];
      ownPriority = typeof given === 'number' || typeof given === 'string' ? given : null;
    }
    if (Object.prototype.hasOwnProperty.call(json, '.value') && (json['.value'] === null || typeof json['.value'] !== 'object')) {
      return Node.fromJSON(json['.value'], ownPriority);
    }
    const children = new Map();
    const entries = Array.isArray(json) ? json.map((value, index) => [String(index), value]) : Object.entries(json);
    for (const [key, value] of entries) {
      if (key === '.priority' || key === '.value' || key === '.sv') continue;
      const child = Node.fromJSON(value);
      if (!child.isEmpty) children.set(key, child);
    }
    return children.size === 0 ? Node.EMPTY : new Node(null, children, ownPriority);
  }

  static leaf(value, priority = null) {
    return value === null || value === undefined ? Node.EMPTY : new Node(value, null, priority);
  }

  get isEmpty() { return this.leafValue === null && this.children === null; }
  get isLeaf() { return this.leafValue !== null; }
  get numChildren() { return this.children ? this.children.size : 0; }

  /// The child at `key` (`.priority` is the priority as a leaf); the empty node when absent.
  child(key) {
    if (key === '.priority') return Node.leaf(this.priority);
    return this.children?.get(key) ?? Node.EMPTY;
  }

  hasChild(key) { return this.children?.has(key) ?? false; }

  at(segments, from = 0) {
    let node = this;
    for (let index = from; index < segments.length && !node.isEmpty; index += 1) node = node.child(segments[index]);
    return node;
  }

  withPriority(priority) {
    if (this.isEmpty || priority === this.priority) return this;
    const node = new Node(this.leafValue, this.children, priority ?? null);
    return node;
  }

  /// This node with `child` at `key` (the empty node removes it).
  withChild(key, child) {
    if (key === '.priority') return this.withPriority(child.isLeaf ? child.leafValue : null);
    if (this.isLeaf) {
      // Firebase keeps a leaf when a child of it is removed, and its priority when one is set.
      if (child.isEmpty) return this;
      return new Node(null, new Map([[key, child]]), this.priority);
    }
    const current = this.children?.get(key);
    if (current === child || (current === undefined && child.isEmpty)) return this;
    const children = new Map(this.children ?? []);
    if (child.isEmpty) children.delete(key);
    else children.set(key, child);
    return children.size === 0 ? Node.EMPTY : new Node(null, children, this.priority);
  }

  /// This node with `node` at the relative path `segments`.
  setAt(segments, node, from = 0) {
    if (from >= segments.length) return node;
    const key = segments[from];
    if (key === '.priority' && from === segments.length - 1) return this.withChild(key, node);
    return this.withChild(key, this.child(key).setAt(segments, node, from + 1));
  }

  /// The children as [key, node] pairs, sorted by `index` (cached per node and index).
  sortedChildren(index) {
    if (!this.children) return [];
    this._sorted ??= new Map();
    let sorted = this._sorted.get(index.id);
    if (!sorted) {
      sorted = [...this.children].sort((a, b) => index.compare(a[0], a[1], b[0], b[1]));
      this._sorted.set(index.id, sorted);
    }
    return sorted;
  }

  equals(other) {
    if (this === other) return true;
    if (this.leafValue !== other.leafValue || this.priority !== other.priority) return false;
    if (!this.children || !other.children) return this.children === other.children;
    if (this.children.size !== other.children.size) return false;
    for (const [key, child] of this.children) {
      const theirs = other.children.get(key);
      if (!theirs || !child.equals(theirs)) return false;
    }
    return true;
  }

  /// The value as JSON: objects whose keys are mostly 0…n read as arrays, as in Firebase. With
  /// `exportFormat`, priorities are kept (`.priority`, `.value`) and there are no arrays.
  val(exportFormat = false) {
    if (this.isEmpty) return null;
    if (this.isLeaf) {
      return exportFormat && this.priority !== null ? { '.value': this.leafValue, '.priority': this.priority } : this.leafValue;
    }
    if (!exportFormat) {
      let allIndexes = true;
      let maxIndex = 0;
      for (const key of this.children.keys()) {
        if (!isCanonicalIndex(key)) {
          allIndexes = false;
          break;
        }
        maxIndex = Math.max(maxIndex, Number(key));
      }
      if (allIndexes && maxIndex < 2 * this.children.size) {
        const array = new Array(maxIndex + 1).fill(null);
        for (const [key, child] of this.children) array[Number(key)] = child.val();
        return array;
      }
    }
    // In priority order, as Firebase builds it (the order Object.keys shows).
    const out = {};
    for (const [key, child] of this.sortedChildren(PRIORITY_ORDER)) out[key] = child.val(exportFormat);
    if (exportFormat && this.priority !== null) out['.priority'] = this.priority;
    return out;
  }

  /// Firebase's node hash (docs/protocol.md §11): the transaction and listen hash, and the REST ETag.
  hash() {
    if (this._hash !== undefined) return this._hash;
    let text = '';
    if (this.priority !== null) {
      text = typeof this.priority === 'number'
        ? `priority:number:${ieee754Hex(this.priority)}:` : `priority:string:${this.priority}:`;
    }
    if (this.isLeaf) {
      const value = this.leafValue;
      text += typeof value === 'number' ? `number:${ieee754Hex(value)}` : `${typeof value}:${value}`;
    } else if (this.children) {
      for (const [key, child] of this.sortedChildren(PRIORITY_ORDER)) {
        const childHash = child.hash();
        if (childHash !== '') text += `:${key}:${childHash}`;
      }
    }
    this._hash = text === '' ? '' : sha1Base64(text);
    return this._hash;
  }
}

Node.EMPTY = new Node(null, null, null);

// The order the hash visits children in: by priority, ties by key (the Index class's priority
// order, restated here so that this module does not depend on it).
const PRIORITY_ORDER = {
  id: '.priority',
  compare(keyA, nodeA, keyB, nodeB) {
    return compareNodes(Node.leaf(nodeA.priority), Node.leaf(nodeB.priority)) || compareKeys(keyA, keyB);
  },
};
