// Paths as arrays of keys, and the checks made before anything is written (database/path.js).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  comparePostOrder, contains, keyProblem, pathString, related, splitPath, valueProblem, writePathProblem,
} from '../../Sources/HearthWeb/Resources/lib/database/path.js';

test('splitPath ignores empty segments; pathString puts them back with a leading slash', () => {
  assert.deepEqual(splitPath('a//b/'), ['a', 'b']);
  assert.deepEqual(splitPath(''), []);
  assert.deepEqual(splitPath(null), []);
  assert.equal(pathString(['a', 'b']), '/a/b');
  assert.equal(pathString([]), '/');
});

test('contains and related: a path contains itself and everything below it', () => {
  assert.ok(contains([], ['a']));
  assert.ok(contains(['a'], ['a']));
  assert.ok(contains(['a'], ['a', 'b']));
  assert.ok(!contains(['a', 'b'], ['a']));
  assert.ok(!contains(['a'], ['ab']));
  assert.ok(related(['a', 'b'], ['a']));
  assert.ok(!related(['a', 'b'], ['a', 'c']));
});

test('comparePostOrder puts deeper paths before their ancestors and siblings by key', () => {
  const paths = [[], ['a'], ['a', 'b'], ['b'], ['a', 'a']];
  paths.sort(comparePostOrder);
  assert.deepEqual(paths, [['a', 'a'], ['a', 'b'], ['a'], ['b'], []]);
});

test('keys may not be empty, hold . # $ [ ] / or control characters, or pass 768 bytes', () => {
  assert.equal(keyProblem('fine-key_1'), null);
  for (const bad of ['', 'a.b', 'a#b', 'a$b', 'a[b', 'a]b', 'a/b', 'a\u0001b', 'a\u007fb']) assert.ok(keyProblem(bad), bad);
  assert.ok(keyProblem('é'.repeat(385)), 'more than 768 bytes of UTF-8');
  assert.equal(keyProblem('é'.repeat(384)), null);
});

test('write paths: .info is the client\'s own, .priority may end a path, 32 levels at most', () => {
  assert.ok(writePathProblem(['.info', 'connected']));
  assert.equal(writePathProblem(['a', '.priority']), null);
  assert.ok(writePathProblem(['.priority', 'a']));
  assert.equal(writePathProblem(Array(32).fill('k')), null);
  assert.ok(writePathProblem(Array(33).fill('k')));
});

test('values: finite numbers, valid keys, and only .value, .priority and .sv start with a dot', () => {
  assert.equal(valueProblem({ a: 1, b: 'x', c: true, d: null, e: { '.value': 1, '.priority': 2 } }), null);
  assert.equal(valueProblem({ t: { '.sv': 'timestamp' } }), null);
  assert.ok(valueProblem(Number.NaN));
  assert.ok(valueProblem(Number.POSITIVE_INFINITY));
  assert.ok(valueProblem({ 'a.b': 1 }));
  assert.ok(valueProblem({ f: () => 1 }));
  assert.ok(valueProblem(undefined) === null);
});
