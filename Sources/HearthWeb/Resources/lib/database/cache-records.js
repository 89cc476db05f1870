// What the stored cache holds, as the sync core keeps track of it: one record per saved
// complete location and per saved filtered window, with its size and when a view last used it.
// From the server cache's changes it works out what to store and delete at a save, and which
// records to drop when the cache grows past its bound (the least recently used that no view
// uses). It answers the changes; the core hands them on as `store` effects.

import { pathString, related, splitPath } from './path.js';

/// A change to the stored cache: { op: 'putNode'|'deleteNode'|'putQuery'|'deleteQuery', record | key }.
/// @typedef {{op: string, record?: object, key?: string}} StoreChange

/// The records of the stored cache.
export class CacheRecords {
  constructor() {
    /// Saved complete locations: key (the path) → { size, lastUsed }.
    this.nodes = new Map();
    /// Saved filtered windows: key → { path, size, lastUsed }.
    this.queries = new Map();
  }

  clear() {
    this.nodes.clear();
    this.queries.clear();
  }

  /// Records read from storage at load.
  loadedNode(record) {
    this.nodes.set(record.key, { size: record.size ?? 0, lastUsed: record.lastUsed ?? 0 });
  }

  loadedQuery(record) {
    this.queries.set(record.key, { path: splitPath(record.path), size: record.size ?? 0, lastUsed: record.lastUsed ?? 0 });
  }

  /// Marks the records a view at `path` uses as used `now`.
  touch(path, now) {
    for (const [key, record] of this.nodes) if (related(splitPath(key), path)) record.lastUsed = now;
    for (const record of this.queries.values()) if (related(record.path, path)) record.lastUsed = now;
  }

  /// The changes that store what `cache` (a ServerCache) changed since the last save: the
  /// topmost complete locations rewritten whole, locations no longer complete (or covered by
  /// one above) deleted, complete windows rewritten, others deleted. Clears the cache's dirty
  /// sets.
  /// @returns {StoreChange[]}
  save(cache, now) {
    const changes = [];
    for (const key of cache.dirty) {
      const path = splitPath(key);
      const root = cache.completeRoot(path);
      if (root && pathString(root) === key) {
        const json = cache.nodeAt(path).val(true);
        const size = JSON.stringify(json)?.length ?? 4;
        changes.push({ op: 'putNode', record: { key, json, size, lastUsed: now } });
        this.nodes.set(key, { size, lastUsed: now });
      } else if (this.nodes.has(key) || !root) {
        changes.push({ op: 'deleteNode', key });
        this.nodes.delete(key);
      }
    }
    cache.dirty.clear();
    for (const key of cache.dirtyQueries) {
      const entry = cache.query(key);
      if (entry?.complete) {
        const json = entry.node.val(true);
        const size = JSON.stringify(json)?.length ?? 4;
        changes.push({ op: 'putQuery', record: { key, path: pathString(entry.path), json, size, lastUsed: now } });
        this.queries.set(key, { path: entry.path, size, lastUsed: now });
      } else {
        changes.push({ op: 'deleteQuery', key });
        this.queries.delete(key);
      }
    }
    cache.dirtyQueries.clear();
    return changes;
  }

  /// Beyond `bound` bytes, drops the least recently used records whose location no view uses
  /// (`inUse(path)`), from `cache` too; answers their deletions.
  /// @returns {StoreChange[]}
  evict(cache, bound, inUse) {
    let total = 0;
    for (const record of this.nodes.values()) total += record.size;
    for (const record of this.queries.values()) total += record.size;
    if (total <= bound) return [];
    const candidates = [
      ...[...this.nodes].map(([key, record]) => ({ key, path: splitPath(key), record, query: false })),
      ...[...this.queries].map(([key, record]) => ({ key, path: record.path, record, query: true })),
    ].sort((a, b) => a.record.lastUsed - b.record.lastUsed);
    const changes = [];
    for (const candidate of candidates) {
      if (total <= bound) break;
      if (inUse(candidate.path)) continue;
      total -= candidate.record.size;
      if (candidate.query) {
        cache.forgetQuery(candidate.key);
        this.queries.delete(candidate.key);
        changes.push({ op: 'deleteQuery', key: candidate.key });
      } else {
        cache.forget(candidate.path);
        this.nodes.delete(candidate.key);
        changes.push({ op: 'deleteNode', key: candidate.key });
      }
    }
    // What was forgotten is deleted here already: not again at the next save.
    cache.dirty.clear();
    cache.dirtyQueries.clear();
    return changes;
  }
}
