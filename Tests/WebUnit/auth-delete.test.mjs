// The web client's deleteAccount() (lib/hearth.js) with a stand-in for fetch: it sends the
// signed-in user's ID token to `accounts:delete` as the other account calls are sent, then
// signs out here; a refusal (an old sign-in) changes nothing; signed out, nothing is sent.

import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { Hearth } from '../../Sources/HearthWeb/Resources/lib/hearth.js';

const URL_BASE = 'http://hearth.test';
const ACCOUNTS = `${URL_BASE}/identitytoolkit.googleapis.com/v1/accounts`;

/** An unsigned ID token with these claims (the client only reads them). */
function idToken(claims) {
  const part = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none' })}.${part(claims)}.`;
}

const TOKEN = idToken({ user_id: 'u1', sub: 'u1', email: 'dee@example.test', firebase: { sign_in_provider: 'password' } });

/** Requests made, and the answers to give by endpoint (`accounts:delete` → [status, body]). */
let requests;
let answers;
const realFetch = globalThis.fetch;

beforeEach(() => {
  requests = [];
  answers = {
    'accounts:signInWithPassword': [200, { localId: 'u1', idToken: TOKEN, refreshToken: 'refresh-1', expiresIn: '3600' }],
    'accounts:delete': [200, { kind: 'identitytoolkit#DeleteAccountResponse' }],
    // The account is gone by then: ending its session fails, and signing out succeeds anyway.
    'accounts:signOut': [400, { error: { message: 'USER_NOT_FOUND' } }],
  };
  globalThis.fetch = async (url, init = {}) => {
    const address = new URL(url);
    const endpoint = address.pathname.split('/').pop();
    requests.push({
      endpoint, key: address.searchParams.get('key'), method: init.method, type: init.headers?.['Content-Type'], body: JSON.parse(init.body ?? 'null'),
    });
    const [status, body] = answers[endpoint] ?? [404, { error: { message: 'NOT_FOUND' } }];
    return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
  };
});

afterEach(() => {
  globalThis.fetch = realFetch;
});

async function signedIn() {
  const hearth = new Hearth({ url: URL_BASE, apiKey: 'the-key', persistence: 'none', databasePersistence: false });
  await hearth.auth.signIn('dee@example.test', 'secret-password');
  requests = [];
  return hearth;
}

test('deleteAccount sends the ID token to accounts:delete, then signs out here', async () => {
  const hearth = await signedIn();
  const seen = [];
  hearth.auth.onAuthStateChanged((user) => seen.push(user?.uid ?? null));
  await new Promise((resolve) => { queueMicrotask(resolve); });
  await hearth.auth.deleteAccount();
  assert.deepEqual(requests[0], {
    endpoint: 'accounts:delete', key: 'the-key', method: 'POST', type: 'application/json', body: { idToken: TOKEN },
  });
  // Then the session's end, told to the server (refused: the account is gone; no matter).
  assert.deepEqual(requests.slice(1).map((request) => request.endpoint), ['accounts:signOut']);
  assert.equal(hearth.auth.currentUser, null);
  assert.equal(hearth.auth.sessionEndedBy, null, 'a deletion asked for here is not a session the server ended');
  assert.deepEqual(seen, ['u1', null]);
});

test('a refused deletion (an old sign-in) throws and keeps the user signed in', async () => {
  const hearth = await signedIn();
  answers['accounts:delete'] = [400, { error: { message: 'CREDENTIAL_TOO_OLD_LOGIN_AGAIN' } }];
  await assert.rejects(hearth.auth.deleteAccount(), (error) => {
    assert.equal(error.name, 'HearthError');
    assert.equal(error.code, 'auth/CREDENTIAL_TOO_OLD_LOGIN_AGAIN');
    assert.equal(error.message, 'For your safety, sign in again first.');
    return true;
  });
  assert.deepEqual(requests.map((request) => request.endpoint), ['accounts:delete']);
  assert.equal(hearth.auth.currentUser?.uid, 'u1');
  await hearth.auth.signOut(); // (its refresh timer would keep the test's process alive)
});

test('signed out, deleteAccount sends nothing and says to sign in', async () => {
  const hearth = new Hearth({ url: URL_BASE, persistence: 'none', databasePersistence: false });
  await assert.rejects(hearth.auth.deleteAccount(), { code: 'auth/NOT_SIGNED_IN', message: 'Sign in first.' });
  assert.deepEqual(requests, []);
});
