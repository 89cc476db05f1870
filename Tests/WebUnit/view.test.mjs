// Event generation of one query's view (database/view.js): Firebase's order of events and
// the previous keys child events carry.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Node } from '../../Sources/HearthWeb/Resources/lib/database/node.js';
import { View } from '../../Sources/HearthWeb/Resources/lib/database/view.js';
import { CoreDriver } from './core-driver.mjs';

const db = new CoreDriver().db;
const ALL = ['child_removed', 'child_added', 'child_moved', 'child_changed', 'value'];

function viewOf(query, types = ALL) {
  const view = new View(query);
  for (const eventType of types) view.registrations.push({ eventType, callback() {}, active: true });
  return view;
}

const described = (events) => events.map(({ type, snapshot, prevKey }) => `${type} ${snapshot.key}${prevKey !== undefined ? ` after ${prevKey}` : ''}`);
const state = (json, complete = true) => ({ node: Node.fromJSON(json), complete });

test('the first complete result: child_added in order, each after the one before, then value', () => {
  const view = viewOf(db.ref('list').orderByChild('n'));
  assert.deepEqual(described(view.update(state({ a: { n: 2 }, b: { n: 1 } }))),
    ['child_added b after null', 'child_added a after b', 'value list']);
});

test('an incomplete result raises child events but no value', () => {
  const view = viewOf(db.ref('list'));
  assert.deepEqual(described(view.update(state({ a: 1 }, false))), ['child_added a after null']);
  assert.deepEqual(described(view.update(state({ a: 1 }))), ['value list']);
});

test('changes raise removed, added, moved and changed, in that order, then value', () => {
  const view = viewOf(db.ref('list').orderByChild('n'));
  view.update(state({ a: { n: 1 }, b: { n: 2 }, c: { n: 3 } }));
  assert.deepEqual(described(view.update(state({ a: { n: 9 }, b: { n: 2 }, d: { n: 0 } }))), [
    'child_removed c', 'child_added d after null', 'child_moved a after b', 'child_changed a after b', 'value list',
  ]);
});

test('nothing changed: no events; a registration added later gets the current state', () => {
  const view = viewOf(db.ref('list'));
  view.update(state({ a: 1 }));
  assert.deepEqual(view.update(state({ a: 1 })), []);
  const late = { eventType: 'child_added', callback() {}, active: true };
  view.registrations.push(late);
  assert.deepEqual(described(view.initialEvents(late)), ['child_added a after null']);
});

test('a change of priority only moves a child in priority order', () => {
  const view = viewOf(db.ref('list'));
  view.update(state({ a: { '.value': 1, '.priority': 1 }, b: { '.value': 2, '.priority': 2 } }));
  assert.deepEqual(described(view.update(state({ a: { '.value': 1, '.priority': 3 }, b: { '.value': 2, '.priority': 2 } }))),
    ['child_moved a after b', 'child_changed a after b', 'value list']);
});

test('only the types registered are raised', () => {
  const view = viewOf(db.ref('list'), ['value']);
  assert.deepEqual(described(view.update(state({ a: 1 }))), ['value list']);
});
