// The web client's ID token and its claims (lib/hearth.js), with stand-ins for fetch and for the
// realtime connection's WebSocket: getIdTokenResult() decodes the token's claims (custom ones such
// as `admin` included); a forced refresh brings a new token whose claims replace the old ones,
// tells onIdTokenChanged's observers (same user: onAuthStateChanged's are not told), and signs the
// open database connection in again with it, before those observers run, as Firebase's SDK does
// on every ID token change.

import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { Hearth } from '../../Sources/HearthWeb/Resources/lib/hearth.js';

const URL_BASE = 'http://hearth.test';

/** An unsigned ID token with these claims (the client only reads them). */
function idToken(claims) {
  const part = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none' })}.${part(claims)}.`;
}

const BASE_CLAIMS = {
  user_id: 'u1', sub: 'u1', email: 'dee@example.test', name: 'Dee', iat: 1_700_000_000, exp: 1_700_003_600,
  auth_time: 1_699_999_000, firebase: { sign_in_provider: 'password' },
};
const FIRST = idToken(BASE_CLAIMS);
const WITH_ADMIN = idToken({ ...BASE_CLAIMS, iat: 1_700_000_100, admin: true });

/** Requests made (endpoint names), and the next refreshed token to answer. */
let requests;
let nextRefresh;
const realFetch = globalThis.fetch;
const realWebSocket = globalThis.WebSocket;

/**
 * Plays the server's end of the realtime protocol: the handshake, then an `ok` to every request.
 * `sent` keeps the client's requests ({ a, b }) in order.
 */
class StandInSocket {
  static OPEN = 1;
  static opened = [];

  constructor(url) {
    this.url = url;
    this.readyState = 0;
    this.sent = [];
    StandInSocket.opened.push(this);
    setTimeout(() => {
      this.readyState = StandInSocket.OPEN;
      this.onopen?.();
      this._push({ t: 'c', d: { t: 'h', d: { ts: Date.now(), v: '5', h: 'hearth.test', s: 'session-1' } } });
    }, 0);
  }

  send(text) {
    const message = JSON.parse(text);
    if (message.t !== 'd' || typeof message.d?.r !== 'number') return;
    this.sent.push({ a: message.d.a, b: message.d.b });
    const body = message.d.a === 'auth' ? { s: 'ok', d: { auth: {} } } : { s: 'ok', d: {} };
    setTimeout(() => this._push({ t: 'd', d: { r: message.d.r, b: body } }), 0);
  }

  close() {
    this.readyState = 3;
    this.onclose?.();
  }

  _push(message) {
    if (this.readyState === StandInSocket.OPEN) this.onmessage?.({ data: JSON.stringify(message) });
  }
}

beforeEach(() => {
  requests = [];
  nextRefresh = WITH_ADMIN;
  StandInSocket.opened = [];
  globalThis.WebSocket = StandInSocket;
  globalThis.fetch = async (url, init = {}) => {
    const endpoint = new URL(url).pathname.split('/').pop();
    requests.push(endpoint);
    const answers = {
      'accounts:signInWithPassword': [200, { localId: 'u1', idToken: FIRST, refreshToken: 'refresh-1', expiresIn: '3600' }],
      token: [200, { id_token: nextRefresh, refresh_token: 'refresh-2', expires_in: '3600', user_id: 'u1' }],
      'accounts:signOut': [200, {}],
    };
    const [status, body] = answers[endpoint] ?? [404, { error: { message: 'NOT_FOUND' } }];
    assert.ok(endpoint !== 'token' || String(init.body).includes('grant_type=refresh_token'));
    return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
  };
});

afterEach(() => {
  globalThis.fetch = realFetch;
  globalThis.WebSocket = realWebSocket;
});

async function signedIn() {
  const hearth = new Hearth({ url: URL_BASE, apiKey: 'the-key', persistence: 'none', databasePersistence: false });
  await hearth.auth.signIn('dee@example.test', 'secret-password');
  return hearth;
}

/** Waits (on the event loop, not a clock) until `condition()` holds. */
async function until(condition, what) {
  for (let turn = 0; turn < 500; turn += 1) {
    if (condition()) return;
    await new Promise((resolve) => { setTimeout(resolve, 0); });
  }
  assert.fail(`never happened: ${what}`);
}

const authsSent = (socket) => socket.sent.filter((request) => request.a === 'auth').map((request) => request.b.cred);

test('getIdTokenResult decodes the token: claims, times and the sign-in provider', async () => {
  const hearth = await signedIn();
  const result = await hearth.auth.getIdTokenResult();
  assert.equal(result.token, FIRST);
  assert.equal(result.claims.user_id, 'u1');
  assert.equal(result.claims.admin, undefined);
  assert.equal(result.signInProvider, 'password');
  assert.equal(result.issuedAtTime, new Date(1_700_000_000_000).toUTCString());
  assert.equal(result.expirationTime, new Date(1_700_003_600_000).toUTCString());
  assert.equal(result.authTime, new Date(1_699_999_000_000).toUTCString());
  assert.deepEqual(requests, ['accounts:signInWithPassword'], 'a valid token is not fetched again');
  await hearth.auth.signOut();
  assert.equal(await hearth.auth.getIdTokenResult(), null, 'signed out: no token');
});

test('a forced refresh brings the new claims, tells onIdTokenChanged and signs the connection in again first', async () => {
  const hearth = await signedIn();
  // The database connects and signs in with the first token.
  hearth.db.ready();
  hearth.db.ref('.info/connected').on('value', () => {});
  await until(() => StandInSocket.opened.length === 1 && authsSent(StandInSocket.opened[0]).length === 1, 'the first sign-in of the connection');
  const socket = StandInSocket.opened[0];
  assert.deepEqual(authsSent(socket), [FIRST]);

  const tokenChanges = [];
  const authChanges = [];
  hearth.auth.onIdTokenChanged((user) => tokenChanges.push({
    admin: user?.claims?.admin === true, authsSentBefore: authsSent(socket).length,
  }));
  hearth.auth.onAuthStateChanged((user) => authChanges.push(user?.uid ?? null));
  await until(() => tokenChanges.length === 1 && authChanges.length === 1, 'the observers\' first calls');
  assert.equal(hearth.auth.currentUser.claims.admin, undefined);

  const result = await hearth.auth.getIdTokenResult(true);
  assert.equal(result.token, WITH_ADMIN);
  assert.equal(result.claims.admin, true);
  assert.equal(hearth.auth.currentUser.claims.admin, true, 'currentUser carries the new claims');
  assert.equal(hearth.auth.currentUser.uid, 'u1');
  assert.deepEqual(requests.slice(-1), ['token']);

  // The connection was given the new token at once, before the page's observers heard of it.
  assert.deepEqual(authsSent(socket), [FIRST, WITH_ADMIN]);
  assert.deepEqual(tokenChanges, [{ admin: false, authsSentBefore: 1 }, { admin: true, authsSentBefore: 2 }]);
  // The same user: no auth state change.
  assert.deepEqual(authChanges, ['u1']);
  assert.equal(StandInSocket.opened.length, 1, 'the same connection, signed in again (not a new one)');

  // A claim taken away comes the same way.
  nextRefresh = FIRST;
  await hearth.auth.getIdToken(true);
  assert.equal(hearth.auth.currentUser.claims.admin, undefined);
  assert.deepEqual(authsSent(socket), [FIRST, WITH_ADMIN, FIRST]);
  assert.deepEqual(tokenChanges.map((change) => change.admin), [false, true, false]);

  hearth.db.goOffline();
  await hearth.auth.signOut();
  assert.deepEqual(tokenChanges.map((change) => change.admin), [false, true, false, false], 'signing out is a token change too');
});

test('an unsubscribed onIdTokenChanged observer hears nothing more', async () => {
  const hearth = await signedIn();
  const heard = [];
  const stop = hearth.auth.onIdTokenChanged((user) => heard.push(user?.claims?.admin === true));
  await until(() => heard.length === 1, 'the first call');
  stop();
  await hearth.auth.getIdToken(true);
  assert.deepEqual(heard, [false]);
  await hearth.auth.signOut();
});
