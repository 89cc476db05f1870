// How people read in a sentence, and who liked a post, newest first (app/people-words.js).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { likedByWords, likersOf, namesPhrase } from '../../Sources/HearthWeb/Resources/app/people-words.js';

test('one, two and three people are named; more are counted after two', () => {
  assert.equal(namesPhrase([]), '');
  assert.equal(namesPhrase(['Carol']), 'Carol');
  assert.equal(namesPhrase(['Carol', 'Bob']), 'Carol and Bob');
  assert.equal(namesPhrase(['Carol', 'Bob', 'Dan']), 'Carol, Bob and Dan');
  assert.equal(namesPhrase(['Carol', 'Bob', 'Dan', 'Eve']), 'Carol, Bob and 2 others');
  // Only the first names are needed when the total is given.
  assert.equal(namesPhrase(['Carol', 'Bob', 'Dan'], 5), 'Carol, Bob and 3 others');
  assert.equal(namesPhrase(['', 'Bob']), 'Someone and Bob');
});

test('likers are newest first; the same time by uid; what is not a time is skipped', () => {
  assert.deepEqual(likersOf(null), []);
  assert.deepEqual(likersOf({ a: 10, b: 30, c: 20, d: true, e: 30 }), ['b', 'e', 'c', 'a']);
});

test('the like line names the newest likers, the reader first as "you", and is empty without likes', () => {
  const names = { a: 'Ann', b: 'Bob', c: 'Carol', d: 'Dan', e: 'Eve' };
  const nameOf = (uid) => names[uid];
  assert.equal(likedByWords([], nameOf), '');
  assert.equal(likedByWords(['c'], nameOf), 'Liked by Carol');
  assert.equal(likedByWords(['c', 'b'], nameOf), 'Liked by Carol and Bob');
  assert.equal(likedByWords(['c', 'b', 'a', 'd', 'e'], nameOf), 'Liked by Carol, Bob and 3 others');
  assert.equal(likedByWords(['c', 'b', 'a'], nameOf, 'a'), 'Liked by you, Carol and Bob');
  assert.equal(likedByWords(['a'], nameOf, 'a'), 'Liked by you');
  assert.equal(likedByWords(['c', 'b', 'e', 'd'], nameOf, 'x'), 'Liked by Carol, Bob and 2 others');
});
