// Query parameters: the wire form, identity of equal queries, and the window of children a
// query shows (database/query-params.js, database/index.js, through the Query API).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Node } from '../../Sources/HearthWeb/Resources/lib/database/node.js';
import { QueryParams } from '../../Sources/HearthWeb/Resources/lib/database/query-params.js';
import { CoreDriver } from './core-driver.mjs';

const db = new CoreDriver().db;
const items = () => db.ref('items');
const windowKeys = (query, json) => [...query._params.window(Node.fromJSON(json)).sortedChildren(query._params.index)].map(([key]) => key);

test('the wire form names the index, bounds and limit as the protocol does', () => {
  assert.deepEqual(items()._params.wireObject(), {});
  assert.deepEqual(items().orderByChild('score').startAt(1).endBefore(5, 'k').limitToLast(3)._params.wireObject(),
    { sp: 1, sin: true, ep: 5, en: 'k', ein: false, l: 3, vf: 'r', i: 'score' });
  assert.deepEqual(items().orderByKey().startAfter('b')._params.wireObject(), { sp: 'b', sin: false, i: '.key' });
  assert.deepEqual(items().orderByValue().limitToFirst(2)._params.wireObject(), { l: 2, vf: 'l', i: '.value' });
  assert.deepEqual(items().orderByPriority().equalTo(3)._params.wireObject(), { sp: 3, sin: true, ep: 3, ein: true });
});

test('equal queries share an identifier; the plain location is "default"', () => {
  assert.equal(items()._params.identifier, 'default');
  assert.equal(items().orderByChild('a').limitToFirst(2)._params.identifier, items().orderByChild('a').limitToFirst(2)._params.identifier);
  assert.notEqual(items().orderByChild('a').limitToFirst(2)._params.identifier, items().orderByChild('a').limitToLast(2)._params.identifier);
  // The server echoes a revoked query's object: its identifier is the same whatever the key order.
  assert.equal(QueryParams.identifierOf({ l: 2, vf: 'l', i: 'a' }), QueryParams.identifierOf({ i: 'a', vf: 'l', l: 2 }));
  assert.ok(items().orderByKey()._params.isFiltered === false && items().orderByKey()._params.isDefault === false);
});

test('windows: ranges by child, key and value, with limits from either end', () => {
  const data = { a: { n: 3 }, b: { n: 1 }, c: { n: 2 }, d: { m: 0 }, e: { n: 2 } };
  assert.deepEqual(windowKeys(items().orderByChild('n'), data), ['d', 'b', 'c', 'e', 'a']);
  assert.deepEqual(windowKeys(items().orderByChild('n').startAt(2), data), ['c', 'e', 'a']);
  assert.deepEqual(windowKeys(items().orderByChild('n').startAt(2, 'd'), data), ['e', 'a']);
  assert.deepEqual(windowKeys(items().orderByChild('n').startAfter(2), data), ['a']);
  assert.deepEqual(windowKeys(items().orderByChild('n').endBefore(2), data), ['d', 'b']);
  assert.deepEqual(windowKeys(items().orderByChild('n').equalTo(2), data), ['c', 'e']);
  assert.deepEqual(windowKeys(items().orderByChild('n').limitToLast(2), data), ['e', 'a']);
  assert.deepEqual(windowKeys(items().orderByKey().startAt('b').endAt('d'), data), ['b', 'c', 'd']);
  assert.deepEqual(windowKeys(items().orderByKey().limitToFirst(1), data), ['a']);
  assert.deepEqual(windowKeys(items().orderByValue().limitToFirst(2), { x: 3, y: 'str', z: 1 }), ['z', 'x']);
});

test('a filtered query of a leaf shows nothing; an unfiltered one shows the node as it is', () => {
  assert.ok(items().limitToFirst(1)._params.window(Node.fromJSON(5)).isEmpty);
  const leaf = Node.fromJSON(5);
  assert.equal(items().orderByKey()._params.window(leaf), leaf);
});

test('the query API refuses what Firebase refuses', () => {
  assert.throws(() => items().orderByChild('$x'));
  assert.throws(() => items().orderByKey().orderByValue());
  assert.throws(() => items().startAt(1).equalTo(2));
  assert.throws(() => items().limitToFirst(0));
});
