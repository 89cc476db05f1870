// The sync core (database/sync-core.js) with the test as its owner: what it sends, stores and
// settles for the calls and messages the recorded scenarios do not cover (reads, refusals,
// revoked listens, onDisconnect, transactions that go stale, the stored cache, a change of
// user), and that it has no I/O of its own.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { CoreDriver, LIB } from './core-driver.mjs';

function connected(options) {
  const driver = new CoreDriver(options);
  driver.connect();
  return driver;
}

function record(ref, type = 'value') {
  const seen = [];
  ref.on(type, (snapshot, prev) => seen.push(type === 'value' ? snapshot.val() : [snapshot.key, snapshot.val(), prev]),
    (error) => seen.push({ cancelled: error.code }));
  return seen;
}

const settled = (promise) => promise.then((value) => ({ value }), (error) => ({ error }));

test('the core is pure: no sockets, timers, storage, clock or randomness of its own', () => {
  const pure = ['sync-core.js', 'transaction-queue.js', 'view.js', 'server-cache.js', 'pending-writes.js', 'path-tree.js', 'query-params.js', 'node.js'];
  const forbidden = /\b(Date\.now|Math\.random|setTimeout|setInterval|queueMicrotask|WebSocket|indexedDB|localStorage|fetch\(|window\.|document\.|console\.|crypto\.)/;
  for (const file of pure) {
    const code = readFileSync(new URL(`database/${file}`, LIB), 'utf8').split('\n').filter((line) => !line.trim().startsWith('//'));
    const found = code.find((line) => forbidden.test(line));
    assert.equal(found, undefined, `${file} reaches outside: ${found}`);
  }
});

test('listens go out on connecting, with the hash of cached data; a reconnection listens again', () => {
  const driver = new CoreDriver();
  const seen = record(driver.db.ref('a'));
  assert.equal(driver.sent.length, 0, 'nothing is sent before the connection is up');
  driver.connect();
  const listen = driver.lastSent('q');
  assert.deepEqual(listen.body, { p: '/a', h: '' });
  driver.push('d', { p: 'a', d: { x: 1 } });
  driver.answer(listen.request, 'ok', {});
  assert.deepEqual(seen, [{ x: 1 }]);
  driver.disconnect();
  driver.connect();
  assert.equal(driver.lastSent('q').body.h, driver.core.cache.nodeAt(['a']).hash());
  assert.notEqual(driver.lastSent('q').body.h, '');
});

test('a filtered query under no whole listen gets a tagged listen of its own; pushes with its tag feed it', () => {
  const driver = connected();
  const query = driver.db.ref('list').orderByChild('n').limitToFirst(1);
  const seen = record(query, 'child_added');
  const listen = driver.lastSent('q');
  assert.deepEqual(listen.body, { p: '/list', q: { l: 1, vf: 'l', i: 'n' }, t: 1, h: '' });
  driver.push('d', { p: 'list', d: { b: { n: 1 } }, t: 1 });
  driver.push('d', { p: 'list', d: { c: { n: 0 } }, t: 99 });  // another tag: not this query's
  assert.deepEqual(seen, [['b', { n: 1 }, null]]);
  // A whole listen above now covers it: the tagged one ends.
  record(driver.db.ref('list'));
  assert.deepEqual(driver.lastSent('q').body, { p: '/list', h: '' });
  assert.deepEqual(driver.lastSent('n').body, { p: '/list', q: { l: 1, vf: 'l', i: 'n' }, t: 1 });
});

test('a write shows at once, is sent, and settles with the answer; a refusal takes it back', async () => {
  const driver = connected();
  const seen = record(driver.db.ref('a'));
  driver.push('d', { p: 'a', d: 1 });
  driver.answer(driver.lastSent('q').request, 'ok', {});
  const accepted = driver.db.ref('a').set(2);
  assert.deepEqual(driver.lastSent('p').body, { p: '/a', d: 2 });
  driver.push('d', { p: 'a', d: 2 });
  driver.answer(driver.lastSent('p').request);
  assert.deepEqual(await settled(accepted), { value: undefined });
  const refused = driver.db.ref('a').set(3);
  driver.answer(driver.lastSent('p').request, 'permission_denied', 'no');
  const outcome = await settled(refused);
  assert.equal(outcome.error.code, 'permission-denied');
  assert.deepEqual(seen, [1, 2, 3, 2]);
  assert.ok(driver.notes.some((note) => note.type === 'warn' && /refused a write/.test(note.message)));
});

test('writes made offline are kept in order and sent on connecting; unanswered ones go again', () => {
  const driver = new CoreDriver();
  driver.db.ref('a').set(1);
  driver.db.ref('b').update({ c: 2 });
  assert.equal(driver.core.pendingWriteCount([]), 2);
  driver.connect();
  assert.deepEqual(driver.sent.map((effect) => [effect.action, effect.body.p]), [['p', '/a'], ['m', '/b']]);
  driver.disconnect();
  driver.connect();
  assert.deepEqual(driver.sent.slice(2).map((effect) => [effect.action, effect.body.p]), [['p', '/a'], ['m', '/b']]);
});

test('get: live data at once; otherwise the server; offline, the cache when it is whole', async () => {
  const driver = connected();
  const asked = driver.db.ref('g').get();
  const request = driver.lastSent('g');
  assert.deepEqual(request.body, { p: '/g', q: {} });
  driver.answer(request.request, 'ok', { v: 1 });
  assert.deepEqual((await asked).val(), { v: 1 });
  driver.disconnect();
  const offline = await settled(driver.db.ref('unknown').get());
  assert.equal(offline.error.code, 'network');
  driver.connect();
  record(driver.db.ref('h'));
  driver.push('d', { p: 'h', d: 5 });
  driver.answer(driver.lastSent('q').request, 'ok', {});
  const sentBefore = driver.sent.length;
  assert.equal((await driver.db.ref('h').get()).val(), 5);
  assert.equal(driver.sent.length, sentBefore, 'a live value is read without asking');
  driver.disconnect();
  assert.equal((await driver.db.ref('h').get()).val(), 5, 'offline, from the cache');
});

test('a get whose connection ends before the answer falls back to the cache', async () => {
  const driver = connected();
  const asked = settled(driver.db.ref('x').get());
  driver.disconnect();
  assert.equal((await asked).error.code, 'network');
});

test('a refused listen and a revoked one cancel their callbacks', () => {
  const driver = connected();
  const refused = record(driver.db.ref('secret'));
  driver.answer(driver.lastSent('q').request, 'permission_denied', 'no');
  assert.deepEqual(refused, [{ cancelled: 'permission-denied' }]);
  const revoked = record(driver.db.ref('list').orderByKey().limitToFirst(2));
  driver.answer(driver.lastSent('q').request, 'ok', {});
  driver.push('c', { p: 'list', q: { vf: 'l', l: 2, i: '.key' } });
  assert.deepEqual(revoked, [null, { cancelled: 'permission-denied' }]);
  assert.equal(driver.core.views.size, 0);
});

test('onDisconnect operations wait for the connection and fail if it ends first', async () => {
  const driver = new CoreDriver();
  const waiting = driver.db.ref('presence').onDisconnect().set('gone');
  assert.equal(driver.sent.length, 0);
  driver.connect();
  assert.deepEqual(driver.lastSent('o').body, { p: '/presence', d: 'gone' });
  driver.answer(driver.lastSent('o').request);
  assert.deepEqual(await settled(waiting), { value: undefined });
  const lost = settled(driver.db.ref('presence').onDisconnect().cancel());
  driver.disconnect();
  assert.equal((await lost).error.code, 'network');
});

test('.info/connected and .info/serverTimeOffset follow the connection and the injected clock', () => {
  const driver = new CoreDriver({ now: 1000 });
  const connectedSeen = record(driver.db.ref('.info/connected'));
  const offsetSeen = record(driver.db.ref('.info/serverTimeOffset'));
  driver.connect(1500);
  driver.disconnect();
  assert.deepEqual(connectedSeen, [false, true, false]);
  assert.deepEqual(offsetSeen, [0, 500]);
  assert.equal(driver.core.serverNow(), 1500);
});

test('a transaction runs again on the newer value after datastale, and commits', async () => {
  const driver = connected();
  const counter = driver.db.ref('counter');
  const done = counter.transaction((value) => (value ?? 0) + 1);
  const first = driver.lastSent('p');
  assert.deepEqual(first.body, { p: '/counter', d: 1, h: '' });
  const listen = driver.lastSent('q');
  driver.push('d', { p: 'counter', d: 10 });
  driver.answer(listen.request, 'ok', {});
  driver.answer(first.request, 'datastale');
  const second = driver.lastSent('p');
  assert.equal(second.body.d, 11);
  assert.equal(second.body.h, driver.core.cache.nodeAt(['counter']).hash());
  driver.push('d', { p: 'counter', d: 11 });
  driver.answer(second.request);
  const { committed, snapshot } = await done;
  assert.equal(committed, true);
  assert.equal(snapshot.val(), 11);
});

test('a transaction whose update returns undefined aborts without sending', async () => {
  const driver = connected();
  const sentBefore = driver.sent.filter((effect) => effect.action === 'p').length;
  const { committed, snapshot } = await driver.db.ref('t').transaction(() => undefined);
  assert.equal(committed, false);
  assert.equal(snapshot.val(), null);
  assert.equal(driver.sent.filter((effect) => effect.action === 'p').length, sentBefore);
});

test('the stored cache: writes stored and deleted, data saved when asked, evicted beyond the bound', () => {
  const driver = new CoreDriver({ persistence: true, cacheSizeBytes: 30 });
  driver.run(() => driver.core.cacheOpened(7, { writes: [], nodes: [], queries: [] }));
  driver.connect();
  driver.db.ref('w').set('x');
  const put = driver.stored.find((effect) => effect.op === 'putWrite');
  assert.equal(put.store, 7);
  assert.equal(put.record.path, '/w');
  driver.answer(driver.lastSent('p').request);
  assert.ok(driver.stored.some((effect) => effect.op === 'deleteWrite' && effect.key === put.record.key));

  const one = driver.db.ref('one');
  const callback = () => {};
  one.on('value', callback);
  driver.push('d', { p: 'one', d: 'x'.repeat(20) });
  driver.answer(driver.lastSent('q').request, 'ok', {});
  assert.ok(driver.notes.some((note) => note.type === 'scheduleSave'));
  driver.run(() => driver.core.save());
  assert.ok(driver.stored.some((effect) => effect.op === 'putNode' && effect.record.key === '/one'));
  one.off('value', callback);
  const two = driver.db.ref('two');
  two.on('value', () => {});
  driver.push('d', { p: 'two', d: 'y'.repeat(20) });
  driver.answer(driver.lastSent('q').request, 'ok', {});
  driver.now += 1000;
  driver.run(() => driver.core.save());
  // Beyond 30 bytes: the least recently used location nobody listens to goes.
  assert.ok(driver.stored.some((effect) => effect.op === 'deleteNode' && effect.key === '/one'));
  assert.equal(driver.core.cache.isComplete(['one']), false);
  assert.equal(driver.core.cache.isComplete(['two']), true);
});

test('opening the stored cache shows its data and restores its writes, which are then sent', () => {
  const driver = new CoreDriver({ persistence: true });
  const seen = record(driver.db.ref('a'));
  driver.run(() => driver.core.cacheOpened(1, {
    nodes: [{ key: '/a', json: { b: 1 }, size: 7, lastUsed: 0 }],
    queries: [],
    writes: [{ key: '5-old', id: 5, path: '/a/c', kind: 'set', data: 2, entries: [['/a/c', 2]] }],
  }));
  assert.deepEqual(seen, [{ b: 1, c: 2 }]);
  driver.connect();
  assert.deepEqual(driver.lastSent('p').body, { p: '/a/c', d: 2 });
  assert.equal(driver.core.writes.list[0].key, '5-old');
});

test('a write acknowledged while other tabs\' writes are read is not restored again', () => {
  const driver = new CoreDriver({ persistence: true });
  driver.run(() => driver.core.cacheOpened(1, { writes: [], nodes: [], queries: [] }));
  driver.connect();
  driver.db.ref('n').set(1);
  const key = driver.core.writes.list[0].key;
  const record_ = driver.stored.find((effect) => effect.op === 'putWrite').record;
  driver.run(() => driver.core.adoptionBegan());
  driver.answer(driver.lastSent('p').request);
  driver.run(() => driver.core.adoptionEnded([record_]));
  assert.equal(driver.core.writes.size, 0, `${key} came back`);
});

test('another user: unsent writes are cancelled (kept in the previous user\'s store), the cache cleared, listens sent again', async () => {
  const driver = new CoreDriver({ persistence: true });
  driver.run(() => driver.core.cacheOpened(1, { writes: [], nodes: [], queries: [] }));
  const unsent = settled(driver.db.ref('mine').set(1));
  driver.connect();
  driver.answer(driver.lastSent('p').request);
  const queued = settled(driver.db.ref('later').set(2));
  driver.disconnect();
  record(driver.db.ref('shared'));
  driver.connect();
  driver.disconnect();
  driver.run(() => driver.core.userChanged());
  assert.equal((await queued).error.code, 'cancelled');
  assert.deepEqual(await unsent, { value: undefined });
  assert.equal(driver.core.store, null);
  assert.equal(driver.core.cache.isComplete(['shared']), false);
});
