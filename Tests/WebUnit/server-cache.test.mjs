// What the server said (database/server-cache.js) and the path tree under it (path-tree.js);
// the WebSocket framing (frames.js).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CacheRecords } from '../../Sources/HearthWeb/Resources/lib/database/cache-records.js';
import { FrameReader, encodeFrames } from '../../Sources/HearthWeb/Resources/lib/database/frames.js';
import { Node } from '../../Sources/HearthWeb/Resources/lib/database/node.js';
import { PathTree } from '../../Sources/HearthWeb/Resources/lib/database/path-tree.js';
import { ServerCache } from '../../Sources/HearthWeb/Resources/lib/database/server-cache.js';

test('complete locations: a location is complete at or under a complete one', () => {
  const cache = new ServerCache();
  cache.overwrite(['a'], Node.fromJSON({ b: 1, c: { d: 2 } }));
  assert.equal(cache.isComplete(['a']), false);
  cache.markComplete(['a']);
  assert.ok(cache.isComplete(['a']) && cache.isComplete(['a', 'c', 'd']) && !cache.isComplete(['x']));
  assert.deepEqual(cache.completeRoot(['a', 'c']), ['a']);
  assert.deepEqual(cache.known(['a']), { node: cache.nodeAt(['a']), complete: true });
});

test('above a complete location only its complete children are known', () => {
  const cache = new ServerCache();
  cache.overwrite(['p', 'x'], Node.fromJSON(1));
  cache.markComplete(['p', 'x']);
  cache.overwrite(['p', 'y', 'z'], Node.fromJSON(2));
  const known = cache.known(['p']);
  assert.equal(known.complete, false);
  assert.deepEqual(known.node.val(), { x: 1 });
});

test('marking a location complete covers the complete ones below it (their records go at the next save)', () => {
  const cache = new ServerCache();
  cache.markComplete(['a', 'b']);
  cache.dirty.clear();
  cache.markComplete(['a']);
  assert.deepEqual([...cache.dirty].sort(), ['/a', '/a/b']);
  assert.deepEqual(cache.completeRoot(['a', 'b']), ['a']);
});

test('filtered windows: set, merged, completed and forgotten', () => {
  const cache = new ServerCache();
  cache.mergeQuery('k', ['a'], [[['x'], Node.fromJSON(1)]]);
  assert.equal(cache.query('k').complete, false);
  cache.markQueryComplete('k', ['a']);
  assert.deepEqual(cache.query('k').node.val(), { x: 1 });
  cache.setQuery('k', ['a'], Node.fromJSON({ y: 2 }));
  assert.deepEqual(cache.query('k').node.val(), { y: 2 });
  cache.forgetQuery('k');
  assert.equal(cache.query('k'), null);
  cache.overwrite(['a'], Node.fromJSON(1));
  cache.markComplete(['a']);
  cache.forget(['a']);
  assert.ok(!cache.isComplete(['a']) && cache.nodeAt(['a']).isEmpty);
});

test('cache records: a save stores the topmost complete locations and complete windows, then deletes what stopped being one', () => {
  const cache = new ServerCache();
  const records = new CacheRecords();
  cache.overwrite(['a', 'b'], Node.fromJSON(1));
  cache.markComplete(['a', 'b']);
  cache.setQuery('/q|x', ['q'], Node.fromJSON({ k: 1 }));
  assert.deepEqual(records.save(cache, 5).map((change) => [change.op, change.record?.key ?? change.key]),
    [['putNode', '/a/b'], ['putQuery', '/q|x']]);
  cache.overwrite(['a'], Node.fromJSON({ b: 1, c: 2 }));
  cache.markComplete(['a']);
  cache.forgetQuery('/q|x');
  assert.deepEqual(records.save(cache, 6).map((change) => [change.op, change.record?.key ?? change.key]).sort(),
    [['deleteNode', '/a/b'], ['deleteQuery', '/q|x'], ['putNode', '/a']]);
  assert.deepEqual([...records.nodes.keys()], ['/a']);
});

test('cache records: eviction drops the least recently used records no view uses, down to the bound', () => {
  const cache = new ServerCache();
  const records = new CacheRecords();
  for (const [key, used] of [['old', 1], ['mid', 2], ['new', 3]]) {
    cache.overwrite([key], Node.fromJSON('x'.repeat(10)));
    cache.markComplete([key]);
    records.save(cache, used);
  }
  records.touch(['old'], 10);
  const inUse = (path) => path[0] === 'new';
  assert.deepEqual(records.evict(cache, 30, inUse), [{ op: 'deleteNode', key: '/mid' }]);
  assert.ok(!cache.isComplete(['mid']) && cache.isComplete(['old']));
  assert.deepEqual(records.evict(cache, 100, inUse), []);
});

test('PathTree: values by path, found from above, pruned when emptied', () => {
  const tree = new PathTree();
  tree.set(['a', 'b'], 1);
  tree.set(['a', 'c', 'd'], 2);
  assert.deepEqual(tree.findAbove(['a', 'b', 'x']), { path: ['a', 'b'], value: 1 });
  assert.equal(tree.findAbove(['a']), null);
  const seen = [];
  tree.forEachBelow(['a'], (path, value) => seen.push([path.join('/'), value]));
  assert.deepEqual(seen, [['a/b', 1], ['a/c/d', 2]]);
  tree.delete(['a', 'c', 'd']);
  assert.equal(tree.subtree(['a', 'c']), null);
  tree.delete(['a'], true);
  assert.equal(tree.children.size, 0);
});

test('frames: a long message goes as a count, then its parts, and reads back whole', () => {
  const short = { t: 'd', d: { r: 1 } };
  assert.deepEqual(encodeFrames(short), [JSON.stringify(short)]);
  const long = { t: 'd', d: { b: { d: 'x'.repeat(40000) } } };
  const frames = encodeFrames(long);
  assert.equal(frames[0], String(frames.length - 1));
  assert.ok(frames.slice(1).every((frame) => frame.length <= 16384));
  const reader = new FrameReader();
  const read = frames.map((frame) => reader.push(frame));
  assert.deepEqual(read.slice(0, -1), Array(frames.length - 1).fill(null));
  assert.deepEqual(read.at(-1), long);
  assert.throws(() => reader.push('not json'), SyntaxError);
});
