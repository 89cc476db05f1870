// A query's order, range and limit: what it sends to the server (the wire protocol's query
// object), how two equal queries are recognised, and how it picks its window of children.

import { Node, compareKeys } from './node.js';
import { Index } from './index.js';

/// An immutable set of query parameters.
export class QueryParams {
  /// @param {object} parts
  /// @param {Index} [parts.index]
  /// @param {{value: *, key?: string, inclusive: boolean}|null} [parts.start]
  /// @param {{value: *, key?: string, inclusive: boolean}|null} [parts.end]
  /// @param {{count: number, fromLeft: boolean}|null} [parts.limit]
  constructor({ index = Index.PRIORITY, start = null, end = null, limit = null } = {}) {
    this.index = index;
    this.start = start;
    this.end = end;
    this.limit = limit;
    this._identifier = undefined;
  }

  with(change) { return new QueryParams({ ...this, ...change }); }

  get hasRange() { return this.start !== null || this.end !== null; }
  get hasLimit() { return this.limit !== null; }
  /// A query with a range or a limit sees only part of the location: it needs a server listen
  /// of its own (a tagged one) unless the whole location is listened to.
  get isFiltered() { return this.hasRange || this.hasLimit; }
  get isDefault() { return !this.isFiltered && this.index === Index.PRIORITY; }

  /// The wire protocol's query object (`sp`, `sn`, `sin`, `ep`, `en`, `ein`, `l`, `vf`, `i`).
  wireObject() {
    const object = {};
    if (this.start) {
      object.sp = this.start.value;
      if (this.start.key !== undefined) object.sn = this.start.key;
      object.sin = this.start.inclusive;
    }
    if (this.end) {
      object.ep = this.end.value;
      if (this.end.key !== undefined) object.en = this.end.key;
      object.ein = this.end.inclusive;
    }
    if (this.limit) {
      object.l = this.limit.count;
      object.vf = this.limit.fromLeft ? 'l' : 'r';
    }
    if (this.index.wireName !== undefined) object.i = this.index.wireName;
    return object;
  }

  /// Equal queries have equal identifiers ('default' for the plain location).
  get identifier() {
    if (this._identifier === undefined) {
      this._identifier = this.isDefault ? 'default' : QueryParams.identifierOf(this.wireObject());
    }
    return this._identifier;
  }

  /// The identifier of a query object as the wire protocol carries it (the server echoes it
  /// when it revokes a listen).
  static identifierOf(object) {
    const keys = Object.keys(object ?? {});
    if (keys.length === 0) return 'default';
    return JSON.stringify(keys.sort().map((key) => [key, object[key]]));
  }

  /// Whether a child is inside the range (the limit aside).
  inRange(key, node) {
    const index = this.index;
    const check = (bound, sign) => {
      let order = index.compareSortValues(index.sortValue(key, node), index.boundValue(bound.value));
      if (order === 0 && bound.key !== undefined && index.kind !== 'key') order = compareBoundKey(key, bound.key);
      return sign * order > 0 || (order === 0 && bound.inclusive);
    };
    return (!this.start || check(this.start, 1)) && (!this.end || check(this.end, -1));
  }

  /// The children of `node` this query shows: in range, then the first or last `limit`. A
  /// filtered query of a leaf shows nothing, and filtered results have no priority (as Firebase).
  window(node) {
    if (!this.isFiltered) return node;
    if (node.isLeaf || node.isEmpty) return Node.EMPTY;
    let entries = node.sortedChildren(this.index);
    if (this.hasRange) entries = entries.filter(([key, child]) => this.inRange(key, child));
    if (this.limit) {
      const count = this.limit.count;
      entries = this.limit.fromLeft ? entries.slice(0, count) : entries.slice(Math.max(0, entries.length - count));
    }
    if (entries.length === 0) return Node.EMPTY;
    const result = new Node(null, new Map(entries), null);
    // Already in this order: later sorts of the window are free.
    result._sorted = new Map([[this.index.id, entries]]);
    return result;
  }
}

// The wire protocol's names for "before every key" and "after every key".
const MIN_NAME = '[MIN_NAME]';
const MAX_NAME = '[MAX_NAME]';

function compareBoundKey(key, boundKey) {
  if (boundKey === MIN_NAME) return 1;
  if (boundKey === MAX_NAME) return -1;
  return key === boundKey ? 0 : compareKeys(key, boundKey);
}

QueryParams.DEFAULT = new QueryParams();
