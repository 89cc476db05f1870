// Unacknowledged writes and how they overlay the server's data (database/pending-writes.js).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Node } from '../../Sources/HearthWeb/Resources/lib/database/node.js';
import { PendingWrites } from '../../Sources/HearthWeb/Resources/lib/database/pending-writes.js';

let nextId = 1;
function write(entries, { visible = true } = {}) {
  return { id: nextId++, entries: entries.map(([path, json]) => [path, Node.fromJSON(json)]), visible };
}

test('writes apply in order over the server\'s data; a set above makes the location complete', () => {
  const writes = new PendingWrites();
  writes.add(write([[['a', 'x'], 1]]));
  writes.add(write([[['a'], { y: 2 }]]));
  writes.add(write([[['a', 'z'], 3]]));
  const result = writes.overlay(['a'], Node.EMPTY, false);
  assert.deepEqual(result.node.val(), { y: 2, z: 3 });
  assert.equal(result.complete, true);
});

test('a write below changes a direct child even when the location is not complete', () => {
  const writes = new PendingWrites();
  writes.add(write([[['a', 'b'], 1]]));
  writes.add(write([[['a', 'c', 'd'], 2]]));
  const partial = writes.overlay(['a'], Node.EMPTY, false);
  assert.deepEqual(partial.node.val(), { b: 1 }, 'a deeper child known only in part is not shown');
  assert.equal(partial.complete, false);
  assert.deepEqual(writes.overlay(['a'], Node.EMPTY, true).node.val(), { b: 1, c: { d: 2 } });
});

test('hidden and excluded writes do not show', () => {
  const writes = new PendingWrites();
  const hidden = write([[['a'], 1]], { visible: false });
  const excluded = write([[['b'], 2]]);
  writes.add(hidden);
  writes.add(excluded);
  assert.ok(writes.overlay(['a'], Node.EMPTY, false).node.isEmpty);
  assert.ok(writes.overlay(['b'], Node.EMPTY, false, new Set([excluded.id])).node.isEmpty);
});

test('remove, get, prepend and touches', () => {
  const writes = new PendingWrites();
  const first = write([[['a', 'b'], 1]]);
  const second = write([[['c'], 1]]);
  writes.add(second);
  writes.prepend([first]);
  assert.deepEqual(writes.list.map((item) => item.id), [first.id, second.id]);
  assert.ok(writes.touches(['a']) && writes.touches(['a', 'b', 'c']) && !writes.touches(['d']));
  assert.equal(writes.remove(first.id), first);
  assert.equal(writes.remove(first.id), null);
  assert.equal(writes.get(second.id), second);
  assert.equal(writes.size, 1);
});
