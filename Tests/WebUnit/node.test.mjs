// Immutable values with priorities, Firebase's orders and node hash (database/node.js).

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { Node, compareKeys, compareNodes, withPriority } from '../../Sources/HearthWeb/Resources/lib/database/node.js';
import { sha1Base64 } from '../../Sources/HearthWeb/Resources/lib/database/sha1.js';

const sha1 = (text) => createHash('sha1').update(text, 'utf8').digest('base64');

test('sha1Base64 agrees with node:crypto, across block boundaries and in UTF-8', () => {
  for (const text of ['', 'abc', 'x'.repeat(55), 'x'.repeat(56), 'x'.repeat(64), 'x'.repeat(1000), 'héllo ✓ 🔥']) {
    assert.equal(sha1Base64(text), sha1(text), JSON.stringify(text.slice(0, 20)));
  }
});

test('key order: 32-bit integers first, numerically, then strings', () => {
  const keys = ['b', '10', 'a', '2', '-1', '2147483648', '007', '7'];
  keys.sort(compareKeys);
  assert.deepEqual(keys, ['-1', '2', '7', '007', '10', '2147483648', 'a', 'b']);
});

test('value order: null < false < true < numbers < strings < objects', () => {
  const nodes = [Node.fromJSON({ a: 1 }), Node.fromJSON('s'), Node.fromJSON(2), Node.fromJSON(true), Node.fromJSON(false), Node.EMPTY, Node.fromJSON(-1)];
  nodes.sort(compareNodes);
  assert.deepEqual(nodes.map((node) => node.val()), [null, false, true, -1, 2, 's', { a: 1 }]);
});

test('fromJSON drops nulls and empty objects, reads arrays as keyed objects and keeps priorities', () => {
  assert.ok(Node.fromJSON({ a: null, b: {} }).isEmpty);
  const list = Node.fromJSON(['x', 'y']);
  assert.deepEqual([...list.children.keys()], ['0', '1']);
  assert.deepEqual(list.val(), ['x', 'y']);
  const leaf = Node.fromJSON({ '.value': 3, '.priority': 'p' });
  assert.equal(leaf.leafValue, 3);
  assert.equal(leaf.priority, 'p');
  assert.deepEqual(leaf.val(true), { '.value': 3, '.priority': 'p' });
  assert.deepEqual(Node.fromJSON({ a: 1, '.priority': 2 }).val(true), { a: 1, '.priority': 2 });
});

test('val reads objects keyed mostly 0…n as arrays, as Firebase does', () => {
  assert.deepEqual(Node.fromJSON({ 0: 'a', 2: 'c' }).val(), ['a', null, 'c']);
  assert.deepEqual(Node.fromJSON({ 0: 'a', 5: 'f' }).val(), { 0: 'a', 5: 'f' });
  assert.deepEqual(Node.fromJSON({ 0: 'a', x: 'b' }).val(), { 0: 'a', x: 'b' });
});

test('setAt and withChild share what did not change and prune what became empty', () => {
  const node = Node.fromJSON({ a: { b: 1 }, c: 2 });
  const changed = node.setAt(['a', 'd'], Node.fromJSON(3));
  assert.deepEqual(changed.val(), { a: { b: 1, d: 3 }, c: 2 });
  assert.equal(changed.child('c'), node.child('c'));
  assert.deepEqual(node.setAt(['a', 'b'], Node.EMPTY).val(), { c: 2 });
  assert.ok(node.setAt(['a', 'b'], Node.EMPTY).setAt(['c'], Node.EMPTY).isEmpty);
  assert.equal(node.setAt(['x', '.priority'], Node.fromJSON(1)).child('x').isEmpty, true, 'no priority on nothing');
  assert.equal(node.setAt(['c', '.priority'], Node.fromJSON(9)).child('c').priority, 9);
});

test('a leaf keeps its value when a child of it is removed', () => {
  const leaf = Node.fromJSON(5);
  assert.equal(leaf.withChild('x', Node.EMPTY), leaf);
});

test('equals compares values and priorities deeply', () => {
  assert.ok(Node.fromJSON({ a: { b: 1 } }).equals(Node.fromJSON({ a: { b: 1 } })));
  assert.ok(!Node.fromJSON({ a: 1 }).equals(Node.fromJSON({ a: 1, '.priority': 1 })));
  assert.ok(!Node.fromJSON({ a: 1 }).equals(Node.fromJSON({ a: 2 })));
});

test('hash: Firebase\'s node hash (priority, type and value; children in priority order)', () => {
  assert.equal(Node.EMPTY.hash(), '');
  assert.equal(Node.fromJSON('hi').hash(), sha1('string:hi'));
  assert.equal(Node.fromJSON(true).hash(), sha1('boolean:true'));
  assert.equal(Node.fromJSON(1).hash(), sha1('number:3ff0000000000000'));
  assert.equal(Node.fromJSON({ '.value': 'x', '.priority': 1 }).hash(), sha1('priority:number:3ff0000000000000:string:x'));
  const object = Node.fromJSON({ b: 'y', a: 'x' });
  assert.equal(object.hash(), sha1(`:a:${sha1('string:x')}:b:${sha1('string:y')}`));
});

test('withPriority writes a value with a priority in export format', () => {
  assert.deepEqual(withPriority(3, 1), { '.value': 3, '.priority': 1 });
  assert.deepEqual(withPriority({ a: 1 }, 'p'), { a: 1, '.priority': 'p' });
  assert.equal(withPriority(null, 1), null);
});
