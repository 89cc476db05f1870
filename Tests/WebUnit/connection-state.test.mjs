// The page's connection in three states, and what a chat's presence line says in each
// (app/connection-state.js).

import assert from 'node:assert/strict';
import { register } from 'node:module';
import { test } from 'node:test';
import { CONNECT_PATIENCE_MS, connectionState, presenceLine, presenceText } from '../../Sources/HearthWeb/Resources/app/connection-state.js';

test('connected is online; lost, failed or waited too long is offline; just started is connecting', () => {
  const base = { connected: false, everConnected: false, reachable: true, waitedMs: 100 };
  assert.equal(connectionState({ ...base, connected: true, everConnected: true }), 'online');
  assert.equal(connectionState(base), 'connecting');
  assert.equal(connectionState({ ...base, everConnected: true }), 'offline');
  assert.equal(connectionState({ ...base, reachable: false }), 'offline');
  assert.equal(connectionState({ ...base, waitedMs: CONNECT_PATIENCE_MS }), 'offline');
});

test('the presence line never claims "Online" while the reader is offline, and says nothing while connecting', () => {
  const now = 1_800_000_000_000;
  const online = { state: 'online', lastChanged: now - 1000 };
  assert.deepEqual(presenceLine(online, 'online', now), { text: 'Online', online: true });
  assert.deepEqual(presenceLine(online, 'offline', now), { text: 'You are offline', online: false });
  assert.deepEqual(presenceLine(online, 'connecting', now), { text: '', online: false });
  assert.deepEqual(presenceLine({ state: 'offline', lastChanged: now - 5 * 60000 }, 'online', now), { text: 'Last seen 5 min ago', online: false });
  assert.deepEqual(presenceLine(null, 'online', now), { text: '', online: false });
});

test('a status reads as online, or when last seen', () => {
  const now = 1_800_000_000_000;
  assert.equal(presenceText({ state: 'offline', lastChanged: now - 10_000 }, now), 'Last seen just now');
  assert.equal(presenceText({ state: 'offline', lastChanged: now - 3 * 3600_000 }, now), 'Last seen 3 h ago');
  assert.equal(presenceText(undefined, now), '');
});

// watchConnection (app/presence.js) with a stand-in client: `.info/connected` and the client's
// own reachability drive the three states; each change is told once; stopping removes both.
register('./site-paths.mjs', import.meta.url);
const { watchConnection } = await import('../../Sources/HearthWeb/Resources/app/presence.js');

function standIn({ online = true } = {}) {
  const listeners = new Set();
  const observers = new Set();
  return {
    isOnline: online,
    listeners,
    observers,
    db: {
      ref(path) {
        assert.equal(path, '.info/connected');
        return {
          on(event, callback) { listeners.add(callback); callback({ val: () => this.connected ?? false }); return callback; },
          off(event, callback) { listeners.delete(callback); },
        };
      },
    },
    onConnectionChange(callback) { observers.add(callback); return () => observers.delete(callback); },
    connect(value) { for (const listener of [...listeners]) listener({ val: () => value }); },
    reach(value) { this.isOnline = value; for (const observer of [...observers]) observer(value); },
  };
}

test('watchConnection tells each change once, and a lost connection at once', () => {
  const hearth = standIn();
  const told = [];
  const stop = watchConnection(hearth, (state) => told.push(state));
  // Node's clock has run past the patience by now, or not: either way never "online" unconnected.
  assert.notEqual(told[0], 'online');
  hearth.connect(true);
  hearth.connect(true);
  hearth.connect(false);
  hearth.connect(true);
  assert.deepEqual(told.slice(-3), ['online', 'offline', 'online']);
  stop();
  assert.equal(hearth.listeners.size, 0);
  assert.equal(hearth.observers.size, 0);
  hearth.connect(false);
  assert.equal(told[told.length - 1], 'online');
});

test('watchConnection says offline when the client finds the server unreachable, before any connection', () => {
  const hearth = standIn();
  const told = [];
  const stop = watchConnection(hearth, (state) => told.push(state));
  hearth.reach(false);
  assert.equal(told[told.length - 1], 'offline');
  stop();
});
