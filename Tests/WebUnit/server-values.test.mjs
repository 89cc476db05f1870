// Server values estimated locally (database/server-values.js) and push IDs (database/push-id.js).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Node } from '../../Sources/HearthWeb/Resources/lib/database/node.js';
import { pushId } from '../../Sources/HearthWeb/Resources/lib/database/push-id.js';
import { ServerValue, resolveServerValues } from '../../Sources/HearthWeb/Resources/lib/database/server-values.js';

const existing = (json) => (relative) => Node.fromJSON(json).at(relative);

test('a timestamp is the time given; an increment adds to the number there (or is the delta)', () => {
  const data = { count: 5, text: 'x', nested: { n: 1 } };
  const resolved = resolveServerValues({
    at: ServerValue.TIMESTAMP, count: ServerValue.increment(2), text: ServerValue.increment(1),
    nested: { n: ServerValue.increment(-1) }, fresh: ServerValue.increment(3), plain: 'kept',
  }, 1234, existing(data));
  assert.deepEqual(resolved, { at: 1234, count: 7, text: 1, nested: { n: 0 }, fresh: 3, plain: 'kept' });
});

test('server values as a priority and inside .value', () => {
  assert.deepEqual(resolveServerValues({ '.value': ServerValue.TIMESTAMP, '.priority': ServerValue.TIMESTAMP }, 9, existing(null)),
    { '.value': 9, '.priority': 9 });
  assert.equal(resolveServerValues(ServerValue.increment(1), 0, existing(41)), 42);
});

test('an unknown server value is refused', () => {
  assert.throws(() => resolveServerValues({ '.sv': 'nonsense' }, 0, existing(null)), TypeError);
});

test('push IDs: 20 characters that sort by time, and by creation within a millisecond', () => {
  const ids = [pushId(1000), pushId(1000), pushId(1000), pushId(2000), pushId(1_700_000_000_000)];
  for (const id of ids) assert.match(id, /^[-0-9A-Z_a-z]{20}$/);
  assert.deepEqual([...ids].sort(), ids);
  assert.equal(new Set(ids).size, ids.length);
  assert.equal(pushId(0).slice(0, 8), '--------');
});
