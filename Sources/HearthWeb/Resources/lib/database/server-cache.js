// What the server has said: one tree of untagged data (every view along a path sees it), the
// locations known to be complete, and each filtered query's own window (tagged data). Data of
// listens that ended stays as a cache (complete, perhaps stale) until evicted.

import { Node } from './node.js';
import { PathTree } from './path-tree.js';
import { pathString } from './path.js';

/// The server's data as this client knows it.
export class ServerCache {
  constructor() {
    this.root = Node.EMPTY;
    /// Locations whose data in `root` is the whole value (true at the location).
    this.complete = new PathTree();
    /// Filtered queries' windows: key → { path, node, complete }.
    this.queries = new Map();
    /// Complete roots (the topmost complete locations) changed since the last save.
    this.dirty = new Set();
    this.dirtyQueries = new Set();
  }

  nodeAt(path) { return this.root.at(path); }

  isComplete(path) { return this.complete.findAbove(path) !== null; }

  /// The topmost complete location at or above `path`, or null.
  completeRoot(path) { return this.complete.findAbove(path)?.path ?? null; }

  /// The server's whole value at `path` (a `d` push, a listen's data, the cache on load).
  overwrite(path, node) {
    this.root = this.root.setAt(path, node);
    this._markDirty(path);
  }

  /// Declares `path` complete: its data in the tree is the whole value.
  markComplete(path) {
    if (this.isComplete(path)) return;
    // Complete locations below are covered now; their saved records go with the next save.
    this.complete.forEachBelow(path, (below) => this.dirty.add(pathString(below)));
    this.complete.delete(path, true);
    this.complete.set(path, true);
    this.dirty.add(pathString(path));
  }

  /// Forgets `path` (evicted from the cache).
  forget(path) {
    this.root = this.root.setAt(path, Node.EMPTY);
    this.complete.delete(path, true);
    this.dirty.add(pathString(path));
  }

  /// The data known at `path`: all of it when complete, else only its complete children (a
  /// child seen only in part is not shown).
  known(path) {
    if (this.isComplete(path)) return { node: this.root.at(path), complete: true };
    const subtree = this.complete.subtree(path);
    let node = Node.EMPTY;
    if (subtree) {
      for (const [key, child] of subtree.children) {
        if (child.value) node = node.withChild(key, this.root.at(path).child(key));
      }
    }
    return { node, complete: false };
  }

  query(key) { return this.queries.get(key) ?? null; }

  /// A filtered query's window from the server (`d` with its tag), complete from then on.
  setQuery(key, path, node) {
    this.queries.set(key, { path, node, complete: true });
    this.dirtyQueries.add(key);
  }

  mergeQuery(key, path, entries) {
    const entry = this.queries.get(key) ?? { path, node: Node.EMPTY, complete: false };
    let node = entry.node;
    for (const [relative, child] of entries) node = node.setAt(relative, child);
    this.queries.set(key, { ...entry, node });
    this.dirtyQueries.add(key);
  }

  markQueryComplete(key, path) {
    const entry = this.queries.get(key);
    if (entry?.complete) return;
    this.queries.set(key, { path, node: entry?.node ?? Node.EMPTY, complete: true });
    this.dirtyQueries.add(key);
  }

  forgetQuery(key) {
    this.queries.delete(key);
    this.dirtyQueries.add(key);
  }

  clear() {
    this.root = Node.EMPTY;
    this.complete = new PathTree();
    this.queries.clear();
    this.dirty.clear();
    this.dirtyQueries.clear();
  }

  _markDirty(path) {
    const root = this.completeRoot(path);
    if (root) this.dirty.add(pathString(root));
  }
}
