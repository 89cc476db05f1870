// The offline cache's driver (database/offline-cache.js) with a stand-in for IndexedDB: it
// carries out the core's store effects for the store in use only, saves half a second after
// the core asks, and whenSaved() resolves once that save is done and the store is idle.

import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import { OfflineCache } from '../../Sources/HearthWeb/Resources/lib/database/offline-cache.js';

function fakeStore() {
  const store = { done: [], idle: Promise.resolve(), closed: false };
  for (const op of ['putWrite', 'deleteWrite', 'putNode', 'deleteNode', 'putQuery', 'deleteQuery']) {
    store[op] = (argument) => store.done.push([op, argument]);
  }
  store.whenIdle = () => store.idle;
  store.close = () => { store.closed = true; };
  return store;
}

function cacheWith(store, saves) {
  const cache = new OfflineCache({ enabled: true, nameFor: (user) => user, delegate: { save: () => saves.push('save') } });
  cache.store = store;
  cache.storeId = 3;
  return cache;
}

test('store effects go to the store in use; those for a closed one are dropped', () => {
  const store = fakeStore();
  const cache = cacheWith(store, []);
  cache.apply({ store: 3, op: 'putNode', record: { key: '/a' } });
  cache.apply({ store: 2, op: 'deleteNode', key: '/b' });
  cache.apply({ store: 3, op: 'deleteWrite', key: 'k' });
  assert.deepEqual(store.done, [['putNode', { key: '/a' }], ['deleteWrite', 'k']]);
  cache.close();
  assert.ok(store.closed);
  cache.apply({ store: 3, op: 'putNode', record: { key: '/c' } });
  assert.equal(store.done.length, 2);
});

test('a save asked for runs once, half a second later; whenSaved waits for it and for the store', async () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    const store = fakeStore();
    let idle;
    store.idle = new Promise((resolve) => { idle = resolve; });
    const saves = [];
    const cache = cacheWith(store, saves);
    cache.scheduleSave();
    cache.scheduleSave();
    let saved = false;
    const waiting = cache.whenSaved().then(() => { saved = true; });
    mock.timers.tick(499);
    await Promise.resolve();
    assert.deepEqual(saves, []);
    mock.timers.tick(1);
    assert.deepEqual(saves, ['save']);
    // The engine's save ends by cancelling the timer, which lets the waiters go on to the store.
    cache.cancelSave();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(saved, false, 'IndexedDB has not committed yet');
    idle();
    await waiting;
    assert.equal(saved, true);
  } finally {
    mock.timers.reset();
  }
});

test('whenSaved resolves at once with nothing waiting, or without a store', async () => {
  await cacheWith(fakeStore(), []).whenSaved();
  await new OfflineCache({ enabled: false, nameFor: String, delegate: {} }).whenSaved();
});
