// The writes the server has not acknowledged yet, in the order they were made, and how they
// overlay the server's data: what every view shows is the server's data with these applied.

import { contains } from './path.js';

/// A write: `entries` are the [absolute path, node] pairs it sets (one for a set, one per key
/// for an update), with server values resolved locally (import('./node.js').Node); `data` is what goes to the server.
/// @typedef {{id: number, path: string[], kind: 'set'|'merge', data: *, entries: [string[], Node][],
///   visible: boolean, transaction: boolean}} PendingWrite

/// The pending writes, in order.
export class PendingWrites {
  constructor() {
    /** @type {PendingWrite[]} */
    this.list = [];
  }

  get size() { return this.list.length; }

  add(write) { this.list.push(write); }

  get(id) { return this.list.find((write) => write.id === id) ?? null; }

  /// Removes a write and answers it (null when it was not there).
  remove(id) {
    const index = this.list.findIndex((write) => write.id === id);
    if (index < 0) return null;
    return this.list.splice(index, 1)[0];
  }

  /// Puts writes restored from storage before the ones made since the page loaded (which
  /// are newer).
  prepend(writes) { this.list.unshift(...writes); }

  /// Whether any write touches a location at, above or below `path`.
  touches(path) {
    return this.list.some((write) => write.entries.some(([target]) => contains(target, path) || contains(path, target)));
  }

  /// `node` at `path` (`complete` when it is the whole value; `window` when it is a filtered
  /// query's window, complete only for the children in it) with the visible writes applied,
  /// except those in `excluded`. A set at or above `path` makes it complete; one below it
  /// changes a child, unless only part of the data is known and not that child (as Firebase,
  /// which cannot show a child it knows only in part).
  overlay(path, node, complete, excluded = null, window = false) {
    let result = node;
    let whole = complete;
    let childrenKnown = complete && !window;
    for (const write of this.list) {
      if (!write.visible || excluded?.has(write.id)) continue;
      for (const [target, value] of write.entries) {
        if (contains(target, path)) {
          result = value.at(path, target.length);
          whole = true;
          childrenKnown = true;
        } else if (contains(path, target)) {
          const relative = target.slice(path.length);
          if (childrenKnown || relative.length === 1 || result.hasChild(relative[0])) result = result.setAt(relative, value);
        }
      }
    }
    return { node: result, complete: whole };
  }
}
