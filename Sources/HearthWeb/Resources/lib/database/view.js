// One query's local view: the callbacks registered on it, what it showed last, and the events
// that take its callbacks from that to what it shows now (Firebase's event generation).

import { Node } from './node.js';
import { DataSnapshot } from './data-snapshot.js';

/// A callback registered with `on`.
/// @typedef {{eventType: string, callback: Function, cancelCallback?: Function, context?: object}} Registration

/// An event ready to raise: a registration and what to call it with.
/// @typedef {{registration: Registration, type: string, snapshot: DataSnapshot, prevKey?: string|null}} ViewEvent

const CHILD_TYPES = ['child_removed', 'child_added', 'child_moved', 'child_changed'];

/// The view of one query (equal queries share it).
export class View {
  /// @param {import('./query.js').Query} query
  constructor(query) {
    this.query = query;
    this.path = query._path;
    this.params = query._params;
    /** @type {Registration[]} */
    this.registrations = [];
    /// What the callbacks were last told: { node, complete }, or null before the first result.
    this.last = null;
    /// keepSynced(true) calls: the view stays (and listened to) without callbacks.
    this.keepSynced = 0;
    /// The server listen that feeds this view (its key), chosen when listens are planned.
    this.listenKey = null;
  }

  get isUnused() { return this.registrations.length === 0 && this.keepSynced === 0; }

  /// Moves the view to `next` ({ node, complete }, the query's window already applied) and
  /// answers the events for every registration, in Firebase's order.
  update(next) {
    const previous = this.last ?? { node: Node.EMPTY, complete: false };
    this.last = next;
    return this._events(previous, next, this.registrations);
  }

  /// The events a registration added now gets: child_added for each child known (even when the
  /// view is not complete), then value when it is complete.
  initialEvents(registration) {
    if (!this.last) return [];
    return this._events({ node: Node.EMPTY, complete: false }, this.last, [registration]);
  }

  _events(previous, next, registrations) {
    if (registrations.length === 0) return [];
    const index = this.params.index;
    const ref = this.query.ref;
    const oldNode = previous.node;
    const newNode = next.node;
    const events = [];
    if (oldNode !== newNode) {
      const changes = { child_removed: [], child_added: [], child_moved: [], child_changed: [] };
      const oldChildren = oldNode.children ?? new Map();
      const newChildren = newNode.children ?? new Map();
      for (const [key, child] of oldChildren) {
        if (!newChildren.has(key)) changes.child_removed.push([key, child]);
      }
      for (const [key, child] of newChildren) {
        const before = oldChildren.get(key);
        if (before === undefined) {
          changes.child_added.push([key, child]);
        } else if (before !== child && !before.equals(child)) {
          changes.child_changed.push([key, child]);
          if (index.sortValueChanged(key, before, child)) changes.child_moved.push([key, child]);
        }
      }
      let previousKeys = null;
      const prevKeyOf = (key) => {
        if (!previousKeys) {
          previousKeys = new Map();
          let before = null;
          for (const [childKey] of newNode.sortedChildren(index)) {
            previousKeys.set(childKey, before);
            before = childKey;
          }
        }
        return previousKeys.get(key) ?? null;
      };
      for (const type of CHILD_TYPES) {
        const list = changes[type];
        if (list.length === 0) continue;
        const wanted = registrations.filter((registration) => registration.eventType === type);
        if (wanted.length === 0) continue;
        list.sort((a, b) => index.compare(a[0], a[1], b[0], b[1]));
        for (const [key, child] of list) {
          const snapshot = new DataSnapshot(ref.child(key), child);
          const prevKey = type === 'child_removed' ? undefined : prevKeyOf(key);
          for (const registration of wanted) events.push({ registration, type, snapshot, prevKey });
        }
      }
    }
    if (next.complete && (!previous.complete || !oldNode.equals(newNode))) {
      const wanted = registrations.filter((registration) => registration.eventType === 'value');
      if (wanted.length > 0) {
        const snapshot = new DataSnapshot(ref, newNode, index);
        for (const registration of wanted) events.push({ registration, type: 'value', snapshot });
      }
    }
    return events;
  }
}
