// Push notifications in the web app: app/push.js (the subscription's ID and record, and
// DevicePush turning push on and off with stand-ins for the browser's permission, push manager
// and the database), and the service worker's `push` and `notificationclick` handlers (/sw.js
// run in a context of its own, with a stand-in `self`). The whole way, with a real server,
// Chromium's service worker and a push service, is Tests/Browser/test_app_push.py.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { register } from 'node:module';
import { test } from 'node:test';
import vm from 'node:vm';

register('./site-paths.mjs', import.meta.url);
const { DevicePush, subscriptionId, subscriptionRecord, base64URL, bytesOfBase64URL, PUSH_KINDS } = await import('../../Sources/HearthWeb/Resources/app/push.js');

const SERVER_KEY = base64URL(Uint8Array.from({ length: 65 }, (_, index) => (index === 0 ? 4 : index)));
const OTHER_KEY = base64URL(Uint8Array.from({ length: 65 }, (_, index) => (index === 0 ? 4 : 200 - index)));

test('a subscription is stored under the first 16 bytes of its endpoint’s SHA-256, base64url', async () => {
  const endpoint = 'https://push.example.test/send/abc?x=1';
  const expected = createHash('sha256').update(endpoint).digest().subarray(0, 16).toString('base64url');
  assert.equal(await subscriptionId(endpoint), expected);
  assert.match(expected, /^[A-Za-z0-9_-]{22}$/); // what the rules accept
});

test('base64url round-trips and refuses what is not', () => {
  const bytes = Uint8Array.from([0, 250, 251, 252, 253, 254, 255]);
  assert.deepEqual(bytesOfBase64URL(base64URL(bytes)), bytes);
  assert.deepEqual(bytesOfBase64URL(`${base64URL(bytes)}=`), bytes);
  for (const bad of ['a+b', 'a/b', 'a b', null, 42]) assert.throws(() => bytesOfBase64URL(bad), /not base64url/, String(bad));
});

test('the record is the endpoint, the keys and the server’s time; a subscription without keys is refused', () => {
  const json = { endpoint: 'https://push.example.test/1', expirationTime: null, keys: { p256dh: 'P', auth: 'A' } };
  assert.deepEqual(subscriptionRecord(json), { endpoint: json.endpoint, keys: { p256dh: 'P', auth: 'A' }, created: { '.sv': 'timestamp' } });
  assert.ok(subscriptionRecord({ endpoint: 'https://x' }) instanceof Error);
  assert.ok(subscriptionRecord(null) instanceof Error);
});

test('the kinds are the rules’ and the server’s, in the Swift app’s order', () => {
  assert.deepEqual(PUSH_KINDS.map((entry) => entry.kind), ['follow', 'like', 'comment', 'mention', 'message']);
});

/** The database's part: `ref(path)` with get, set and remove, recording writes. */
function database(values = {}) {
  const writes = [];
  return {
    writes,
    db: {
      ref: (path) => ({
        get: async () => ({ val: () => values[path] ?? null }),
        set: async (value) => { writes.push(['set', path, value]); },
        remove: async () => { writes.push(['remove', path]); },
      }),
    },
  };
}

/** A browser: permission answers, a push manager with at most one subscription, localStorage. */
function browser({ permission = 'default', answer = 'granted', subscribeFails = null } = {}) {
  const state = { permission, subscription: null, subscribed: [], unsubscribed: 0, stored: new Map() };
  const subscriptionFor = (key, endpoint) => ({
    endpoint,
    options: { applicationServerKey: key.buffer },
    toJSON: () => ({ endpoint, expirationTime: null, keys: { p256dh: 'P'.repeat(87), auth: 'A'.repeat(22) } }),
    unsubscribe: async () => { state.unsubscribed += 1; state.subscription = null; return true; },
  });
  const pushManager = {
    getSubscription: async () => state.subscription,
    subscribe: async (options) => {
      if (subscribeFails) throw new Error(subscribeFails);
      assert.equal(options.userVisibleOnly, true);
      state.subscribed.push(base64URL(options.applicationServerKey));
      state.subscription = subscriptionFor(options.applicationServerKey, `https://push.example.test/${state.subscribed.length}`);
      return state.subscription;
    },
  };
  const env = {
    navigator: { serviceWorker: { ready: Promise.resolve({ pushManager }) } },
    PushManager: function PushManager() {},
    Notification: {
      get permission() { return state.permission; },
      requestPermission: async () => { state.permission = answer; return answer; },
    },
    localStorage: {
      getItem: (key) => state.stored.get(key) ?? null,
      setItem: (key, value) => state.stored.set(key, String(value)),
      removeItem: (key) => state.stored.delete(key),
    },
  };
  return { env, state };
}

test('turning push on subscribes with the server’s key and stores the subscription under its ID', async () => {
  const { db, writes } = database({ 'pushConfig/vapidPublicKey': SERVER_KEY });
  const { env, state } = browser();
  const push = new DevicePush({ db }, env);
  assert.equal(await push.isOn('ann'), false);
  await push.enable('ann');
  assert.deepEqual(state.subscribed, [SERVER_KEY]);
  const id = await subscriptionId('https://push.example.test/1');
  assert.equal(writes.length, 1);
  assert.deepEqual(writes[0].slice(0, 2), ['set', `pushSubscriptions/ann/${id}`]);
  assert.equal(writes[0][2].endpoint, 'https://push.example.test/1');
  assert.equal(await push.isOn('ann'), true);
  assert.equal(await push.isOn('bob'), false);
});

test('a browser subscribed with another server key is subscribed again with this one', async () => {
  const { db } = database({ 'pushConfig/vapidPublicKey': SERVER_KEY });
  const { env, state } = browser({ permission: 'granted' });
  const push = new DevicePush({ db }, env);
  state.subscription = { endpoint: 'https://old', options: { applicationServerKey: bytesOfBase64URL(OTHER_KEY).buffer }, unsubscribe: async () => { state.unsubscribed += 1; return true; } };
  await push.enable('ann');
  assert.equal(state.unsubscribed, 1);
  assert.deepEqual(state.subscribed, [SERVER_KEY]);
});

test('refusals say why and store nothing', async (t) => {
  await t.test('permission refused', async () => {
    const { db, writes } = database({ 'pushConfig/vapidPublicKey': SERVER_KEY });
    const { env, state } = browser({ answer: 'denied' });
    const push = new DevicePush({ db }, env);
    await assert.rejects(push.enable('ann'), /blocked/);
    assert.deepEqual(writes, []);
    assert.deepEqual(state.subscribed, []);
    assert.equal(push.permission, 'denied');
  });
  await t.test('a server without a key', async () => {
    const { db, writes } = database({});
    const { env, state } = browser();
    await assert.rejects(new DevicePush({ db }, env).enable('ann'), /does not send push/);
    assert.deepEqual(writes, []);
    assert.equal(state.permission, 'default'); // not even asked
  });
  await t.test('the push service unreachable', async () => {
    const { db, writes } = database({ 'pushConfig/vapidPublicKey': SERVER_KEY });
    const { env } = browser({ subscribeFails: 'Registration failed - push service error' });
    const push = new DevicePush({ db }, env);
    await assert.rejects(push.enable('ann'), /push service could not be reached \(Registration failed/);
    assert.deepEqual(writes, []);
    assert.equal(push.owner, null);
  });
  await t.test('a browser without push', async () => {
    const push = new DevicePush(database().db, { navigator: {}, localStorage: null });
    assert.equal(push.permission, 'unsupported');
    await assert.rejects(push.enable('ann'), /cannot show push/);
  });
});

test('turning push off removes the record, then the browser’s subscription', async () => {
  const { db, writes } = database({ 'pushConfig/vapidPublicKey': SERVER_KEY });
  const { env, state } = browser();
  const push = new DevicePush({ db }, env);
  await push.enable('ann');
  await push.disable('ann');
  const id = await subscriptionId('https://push.example.test/1');
  assert.deepEqual(writes.at(-1), ['remove', `pushSubscriptions/ann/${id}`]);
  assert.equal(state.unsubscribed, 1);
  assert.equal(await push.isOn('ann'), false);
});

test('signing out leaves: the record goes; after a deletion only the browser’s subscription goes', async () => {
  const { db, writes } = database({ 'pushConfig/vapidPublicKey': SERVER_KEY });
  const { env, state } = browser();
  const push = new DevicePush({ db }, env);
  await push.leave('ann'); // never turned on: nothing
  assert.deepEqual(writes, []);
  await push.enable('ann');
  await push.leave('ann');
  assert.equal(writes.at(-1)[0], 'remove');
  assert.equal(state.unsubscribed, 1);
  await push.enable('ann');
  const before = writes.length;
  await push.leave('ann', { stored: false });
  assert.equal(writes.length, before);
  assert.equal(state.unsubscribed, 2);
  assert.equal(push.owner, null);
});

test('after sign-in the owner’s subscription is stored again; someone else’s browser subscription is dropped', async () => {
  const { db, writes } = database({ 'pushConfig/vapidPublicKey': SERVER_KEY });
  const { env, state } = browser();
  const push = new DevicePush({ db }, env);
  await push.enable('ann');
  writes.length = 0;
  await push.follow('ann');
  assert.equal(writes.length, 1);
  assert.match(writes[0][1], /^pushSubscriptions\/ann\//);
  await push.follow('bob');
  assert.equal(state.unsubscribed, 1);
  assert.equal(push.owner, null);
  assert.equal(writes.length, 1); // Bob cannot touch Ann's record
});

// --- The service worker ----------------------------------------------------------------

/** /sw.js in a context of its own; answers its listeners and what they did. */
function serviceWorker({ windows = [] } = {}) {
  const listeners = new Map();
  const shown = [];
  const opened = [];
  const self = {
    location: { origin: 'https://hearth.test' },
    addEventListener: (type, listener) => listeners.set(type, listener),
    registration: { showNotification: async (title, options) => { shown.push({ title, options }); } },
    clients: {
      matchAll: async () => windows,
      openWindow: async (url) => { opened.push(url); },
      claim: async () => {},
    },
  };
  const source = readFileSync(new URL('../../Sources/HearthWeb/Resources/sw.js', import.meta.url), 'utf8');
  vm.runInNewContext(source, { self, URL, TextEncoder, console });
  // Objects made in the worker's context have its prototypes: compared as plain data.
  /** Runs the listener for `type` with an event whose waitUntil promise is awaited. */
  const dispatch = async (type, fields) => {
    let waited = Promise.resolve();
    listeners.get(type)({ ...fields, waitUntil: (promise) => { waited = promise; } });
    await waited;
  };
  return { dispatch, shown, opened };
}

const plain = (value) => JSON.parse(JSON.stringify(value));
const pushData = (value) => ({ json: () => JSON.parse(value), text: () => value });

test('a push shows the server’s message, tagged, leading to its screen', async () => {
  const worker = serviceWorker();
  await worker.dispatch('push', { data: pushData(JSON.stringify({ kind: 'like', title: 'Ann', body: 'Ann liked your post', url: '#/post/p1', tag: 'like_p1_ann' })) });
  assert.deepEqual(plain(worker.shown), [{ title: 'Ann', options: { body: 'Ann liked your post', tag: 'like_p1_ann', data: { hash: '#/post/p1' } } }]);
});

test('a push not understood still shows a notification, leading to the notifications', async () => {
  const worker = serviceWorker();
  await worker.dispatch('push', { data: pushData('not json') });
  await worker.dispatch('push', { data: null });
  await worker.dispatch('push', { data: pushData(JSON.stringify({ title: 7, url: 'https://elsewhere.test/', body: 'x'.repeat(900) })) });
  assert.deepEqual(worker.shown.map((entry) => entry.title), ['Hearth', 'Hearth', 'Hearth']);
  assert.equal(worker.shown[0].options.body, 'not json');
  assert.ok(worker.shown.every((entry) => entry.options.data.hash === '#/notifications'));
  assert.equal(worker.shown[2].options.body.length, 500);
});

test('a click shows the screen in the open app window, or opens one', async () => {
  const messages = [];
  let focused = 0;
  const open = { url: 'https://hearth.test/#/feed', postMessage: (message) => messages.push(message), focus: async () => { focused += 1; } };
  const console = { url: 'https://hearth.test/console/', postMessage: () => assert.fail('not the app') };
  const closed = [];
  const notification = (data) => ({ data, close: () => closed.push(data) });

  const withWindow = serviceWorker({ windows: [console, open] });
  await withWindow.dispatch('notificationclick', { notification: notification({ hash: '#/chat/c1' }) });
  assert.deepEqual(plain(messages), [{ type: 'hearth-open', hash: '#/chat/c1' }]);
  assert.equal(focused, 1);
  assert.deepEqual(withWindow.opened, []);

  const without = serviceWorker({ windows: [console] });
  await without.dispatch('notificationclick', { notification: notification({ hash: 'javascript:alert(1)' }) });
  assert.deepEqual(without.opened, ['/#/notifications']);
  assert.equal(closed.length, 2);
});
