/**
 * Hearth's web client, in the spirit of Firebase's namespaced web SDK: the Realtime Database
 * (an offline-first sync engine over one realtime-protocol connection, in ./database/), and
 * Auth and Storage over their REST APIs. ES modules, no dependencies.
 *
 *   import { Hearth, ServerValue } from '/lib/hearth.js';
 *   const hearth = await Hearth.connect();            // reads /__/firebase/init.json (the last good one offline)
 *   // Hearth.connect({ startDatabase: true }): the database's offline cache opens while the session is checked
 *   // or new Hearth({ url, bucket, projectId, apiKey, adminToken, database })
 *
 * Auth (on the server's own origin the refresh token is kept in an HttpOnly cookie by the server
 * and the page holds only a short-lived ID token, refreshed before it expires; see PERSISTENCE):
 *   hearth.auth.signUp(email, password, displayName) · signIn(email, password)
 *   signInAnonymously() · signOut() · updateProfile({ displayName, photoURL })
 *   providers() → [{ providerId, displayName }] the server offers
 *   signInWithProvider(providerId, { next, link }) → leaves for the provider; its return to
 *     /__/auth/handler calls completeProviderSignIn() → { user, next } (link: the signed-in,
 *     e.g. anonymous, account gets the provider and keeps its uid)
 *   linkWithPassword(email, password, displayName?) (an anonymous account becomes an email account,
 *     named in the same request when displayName is given) · unlink(providerId)
 *   sendPasswordResetEmail(email) · sendEmailVerification() · verifyPasswordResetCode(code) → email
 *   confirmPasswordReset(code, newPassword) · applyActionCode(code) · checkActionCode(code)
 *   deleteAccount() (a password account signs in again first: the server refuses an old
 *     sign-in with auth/CREDENTIAL_TOO_OLD_LOGIN_AGAIN) → the account is deleted, then signed out here
 *   currentUser → { uid, email, displayName, photoURL, isAnonymous, claims } | null (claims: the
 *     ID token's, custom ones such as `admin` included)
 *   onAuthStateChanged(cb) → unsubscribe · getIdToken(forceRefresh)
 *   onIdTokenChanged(cb(user)) → unsubscribe: also told of each new ID token of the same user
 *     (a refresh, which may bring new custom claims; the database connection has signed in again
 *     with it before cb runs)
 *   getIdTokenResult(forceRefresh) → { token, claims, authTime, issuedAtTime, expirationTime,
 *     signInProvider } | null: a new custom claim is only in a new token (forceRefresh: true)
 *   sessionEndedBy → the HearthError with which the server ended the last session (disabled,
 *     deleted, revoked), until the next sign-in; null after a sign-out asked for here
 *
 * Database (docs/browser-client.md has the design):
 *   const ref = hearth.db.ref('posts/abc');  ref.key · ref.parent · ref.root · ref.child('a/b')
 *   ref.push(value?) (a client-made push ID; thenable) · set(v) · update({'a/b': 1, c: null})
 *   remove() · setWithPriority(v, p) · setPriority(p) · transaction(fn, onComplete?, applyLocally?)
 *   → { committed, snapshot }. Writes show at once (their events fire inside the call) and
 *   their promise settles when the server has them; a refused write is undone. Writes made
 *   offline are kept (IndexedDB) and sent when the connection is back, even after a reload.
 *   once('value') / get() → DataSnapshot (the server's value; offline, the cache's)
 *   queries: orderByChild(path) / orderByKey() / orderByValue() / orderByPriority(),
 *     startAt(v, key?) · startAfter · endAt · endBefore · equalTo · limitToFirst(n) · limitToLast(n)
 *   on('value' | 'child_added' | 'child_changed' | 'child_removed' | 'child_moved',
 *      cb(snapshot, prevChildKey), cancelCb(error)) → cb · off(event?, cb?) · keepSynced(bool)
 *   DataSnapshot: key · ref · val() · exists() · child(path) · forEach(cb) (query order; return
 *     true to stop) · numChildren() · hasChild(path) · hasChildren() · exportVal() · getPriority()
 *   ServerValue.TIMESTAMP · ServerValue.increment(n)
 *   ref('.info/connected').on('value', cb) → true while the realtime connection is up;
 *   '.info/serverTimeOffset' → the server's clock minus this one's, in milliseconds
 *   ref.onDisconnect() → set(v) · update(values) · remove() · cancel(): written by the server
 *     when this page's connection ends (register again whenever .info/connected turns true)
 *   hearth.db.goOffline() · goOnline()
 *   hearth.db.pendingWriteCount(path) → writes not yet acknowledged at, above or below path
 *   hearth.db.onPendingWritesChange(cb) → unsubscribe: cb() after writes are made, acknowledged,
 *     refused or restored (show "waiting to send" with pendingWriteCount)
 *
 * Storage:
 *   hearth.storage.ref('uid/full/id/0.jpg').put(blob, { contentType }, onProgress(fraction))
 *   → metadata · getDownloadURL() · mediaURL() (no token: for publicly readable files)
 *   delete() · getMetadata() · list({ delimiter: '/' }) → { items, prefixes, nextPageToken }
 *
 * Admin (only with adminToken, which then authorises every call):
 *   hearth.admin.listUsers(pageToken, maxResults) → { users, nextPageToken }
 *   createUser({ email, password, displayName }) · updateUser(uid, { disabled, … })
 *   deleteUser(uid) · setCustomClaims(uid, claims) · getRules() → text · setRules(text) · stats()
 *
 * hearth.onConnectionChange(cb(online)) → unsubscribe: false when the server cannot be reached.
 *
 * Failures are thrown as HearthError with .code ('permission-denied', 'not-found', 'invalid',
 * 'too-large', 'conflict', 'network', 'auth/<FIREBASE_CODE>') and .message in plain words.
 */

import { HearthError } from './hearth-error.js';
import { Database } from './database/database.js';
import { splitPath } from './database/path.js';

export { HearthError } from './hearth-error.js';
export { Database } from './database/database.js';
export { DataSnapshot } from './database/data-snapshot.js';
export { Query } from './database/query.js';
export { Reference } from './database/reference.js';
export { ServerValue } from './database/server-values.js';
export { compareKeys } from './database/node.js';
export { pushId } from './database/push-id.js';

/** The error text inside a response body: `{"error": "…"}` or `{"error": {"message": "…"}}`. */
function errorText(body) {
  try {
    const parsed = JSON.parse(body);
    const error = parsed && parsed.error;
    if (typeof error === 'string') return error;
    if (error && typeof error.message === 'string') return error.message;
  } catch {
    // Not JSON: the text itself is the message.
  }
  return body;
}

// MARK: - Connection state

/**
 * Whether the server can be reached. Once the database's realtime connection has started, it
 * is the judge; before that (a page using only Auth or Storage), REST requests are.
 */
class ConnectionState {
  constructor() {
    this.online = typeof navigator === 'undefined' ? true : navigator.onLine !== false;
    this.observers = new Set();
    this._realtime = null;
    if (typeof window !== 'undefined') window.addEventListener('offline', () => this._update(false));
  }

  /** What a REST request found. */
  set(online) {
    if (this._realtime === null) this._update(online);
  }

  /** What the realtime connection found. */
  setRealtime(online) {
    this._realtime = online;
    this._update(online);
  }

  _update(online) {
    if (online === this.online) return;
    this.online = online;
    for (const observer of [...this.observers]) observer(online);
  }

  observe(callback) {
    this.observers.add(callback);
    queueMicrotask(() => this.observers.has(callback) && callback(this.online));
    return () => this.observers.delete(callback);
  }
}

// MARK: - Hearth

/** How long `Hearth.connect` waits for the server to confirm a remembered session. */
const SESSION_WAIT_MS = 3000;

export class Hearth {
  /**
   * Connects to the server at `url` (default: this page's origin), reading its project's
   * settings from `/__/firebase/init.json`.
   */
  static async connect({
    url = location.origin, adminToken, storageKey, persistence, database, databasePersistence, cacheSizeBytes, startDatabase = false,
  } = {}) {
    const base = url.replace(/\/+$/, '');
    const settings = await Hearth._settings(base);
    const hearth = new Hearth({
      url: base, bucket: settings.storageBucket, projectId: settings.projectId, apiKey: settings.apiKey, adminToken, storageKey,
      filesUrl: settings.storageOrigin, persistence, database, databasePersistence, cacheSizeBytes,
    });
    // The offline cache opens (and the connection starts) while the session is checked.
    if (startDatabase) hearth.db.ready();
    // A server that does not answer (rather than refusing) must not hold the page: after a
    // while it starts with the user it remembers, and the check ends behind (signing out then
    // if the session is over).
    await Promise.race([hearth.auth.ready, new Promise((resolve) => { setTimeout(resolve, SESSION_WAIT_MS); })]);
    return hearth;
  }

  /**
   * The project's settings (`/__/firebase/init.json`). The last good ones are kept, and used
   * at once when there are some (then refreshed for the next start): an app opened with the
   * server unreachable, or slow to answer, still starts from its offline cache.
   */
  static async _settings(base) {
    const keptKey = `hearth.init:${base}`;
    let kept = null;
    try {
      kept = JSON.parse(localStorage.getItem(keptKey) ?? 'null');
    } catch {
      kept = null;
    }
    const fetching = (async () => {
      let response;
      try {
        response = await fetch(`${base}/__/firebase/init.json`);
      } catch {
        throw HearthError.network();
      }
      if (!response.ok) throw HearthError.fromResponse(response.status, errorText(await response.text()));
      const settings = await response.json();
      try {
        localStorage.setItem(keptKey, JSON.stringify(settings));
      } catch {
        // No storage: the next start waits for the server again.
      }
      return settings;
    })();
    if (kept && typeof kept === 'object') {
      fetching.catch(() => {});
      return kept;
    }
    return fetching;
  }

  /**
   * @param {object} options
   * @param {string} [options.url] the server (default: this page's origin)
   * @param {string} [options.filesUrl] where files are served from, when not `url` (init.json's `storageOrigin`)
   * @param {'server'|'local'|'none'} [options.persistence] where the session is kept (see PERSISTENCE);
   *   'server' by default on the server's own origin, 'none' with an admin token, else 'local'
   * @param {string} [options.database] the database's name (the realtime protocol's `ns`), when
   *   not the server's default (`namespace` is the same)
   * @param {boolean} [options.databasePersistence] keep the database's cache and pending writes
   *   in IndexedDB, per signed-in user (default: true, but false with an admin token, whose
   *   data should not stay in a browser)
   * @param {number} [options.cacheSizeBytes] the database cache's bound (about 10 MB by default)
   */
  constructor({
    url = location.origin, filesUrl, bucket, projectId, apiKey = 'hearth', adminToken = null, storageKey, persistence,
    database = null, namespace = null, databasePersistence, cacheSizeBytes,
  } = {}) {
    this.url = url.replace(/\/+$/, '');
    this.filesUrl = (filesUrl || this.url).replace(/\/+$/, '');
    this.bucket = bucket;
    this.projectId = projectId;
    this.apiKey = apiKey;
    this.adminToken = adminToken;
    this._connection = new ConnectionState();
    this._clockOffset = 0;
    const sameOrigin = typeof location !== 'undefined' && this.url === location.origin;
    const kept = persistence ?? (adminToken ? 'none' : sameOrigin ? 'server' : 'local');
    if (!PERSISTENCE.includes(kept)) throw new TypeError(`persistence must be one of ${PERSISTENCE.join(', ')}`);
    this.auth = new Auth(this, storageKey ?? `hearth.session:${this.url}`, kept);
    this.db = new Database({
      url: this.url,
      namespace: database ?? namespace,
      credential: (forceRefresh) => this._credential(forceRefresh),
      credentialNow: () => this._credentialNow(),
      // The cache belongs to whoever is signed in; an admin's is never kept.
      userKey: () => (this.adminToken ? 'admin' : this.auth.currentUser?.uid ?? ''),
      persistence: databasePersistence ?? !adminToken,
      cacheSizeBytes,
      onConnectionChange: (online) => this._connection.setRealtime(online),
    });
    // A new ID token signs the connection in again; another user gets their own cache.
    this.auth._onTokenChange(() => this.db._engine.userChanged());
    this.storage = new Storage(this);
    this.admin = adminToken ? new Admin(this) : null;
  }

  get isOnline() { return this._connection.online; }

  /**
   * The server's time in milliseconds, estimated from the realtime handshake (or, before it,
   * responses' Date headers), so push IDs sort in the server's order even when this device's
   * clock is off.
   */
  serverNow() {
    const engine = this.db._engine;
    return engine.isConnected || engine.serverTimeOffset !== 0 ? engine.serverNow() : Date.now() + this._clockOffset;
  }

  _learnClock(response) {
    const date = Date.parse(response.headers.get('Date') ?? '');
    if (Number.isNaN(date)) return;
    // The header has whole seconds: ignore differences the rounding explains.
    const offset = date - Date.now();
    this._clockOffset = Math.abs(offset) > 2000 ? offset : 0;
  }

  /** Calls `callback(online)` now and whenever the connection to the server is lost or back. */
  onConnectionChange(callback) { return this._connection.observe(callback); }

  /**
   * The credential without waiting: the admin token, the user's ID token while it is valid for
   * a minute more, null when signed out; undefined when it has to be fetched.
   */
  _credentialNow() {
    if (this.adminToken) return this.adminToken;
    const session = this.auth._session;
    if (!session) return null;
    return session.idToken && session.expiresAt - Date.now() > 60_000 ? session.idToken : undefined;
  }

  /** The credential for a request: the admin token, else the user's ID token, else none. */
  async _credential(forceRefresh = false) {
    if (this.adminToken) return this.adminToken;
    return this.auth.currentUser ? this.auth.getIdToken(forceRefresh) : null;
  }

  /**
   * A request to the server. Signs it (refreshing an expired ID token once), tracks the
   * connection, and turns failures into HearthErrors.
   * @returns {Promise<Response>} a successful (2xx) response, or one with an allowed status
   */
  async _request(method, path, { body, headers = {}, scheme = 'Bearer', allow = [], retried = false, base = this.url } = {}) {
    const credential = await this._credential(retried);
    const allHeaders = { ...headers };
    if (credential) allHeaders.Authorization = `${scheme} ${credential}`;
    let response;
    try {
      response = await fetch(`${base}${path}`, { method, headers: allHeaders, body });
    } catch {
      this._connection.set(false);
      throw HearthError.network();
    }
    this._connection.set(true);
    this._learnClock(response);
    if (response.ok || allow.includes(response.status)) return response;
    const text = errorText(await response.text());
    const error = HearthError.fromResponse(response.status, text);
    if (error.code === 'auth/TOKEN_EXPIRED' && !retried && !this.adminToken && this.auth.currentUser) {
      return this._request(method, path, { body, headers, scheme, allow, base, retried: true });
    }
    throw error;
  }

  async _json(method, path, options = {}) {
    const response = await this._request(method, path, options);
    const text = await response.text();
    return text ? JSON.parse(text) : null;
  }
}

// MARK: - Auth

const REFRESH_MARGIN_MS = 5 * 60 * 1000;

function decodeJWT(token) {
  try {
    const payload = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    const bytes = Uint8Array.from(atob(payload), (c) => c.charCodeAt(0));
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return {};
  }
}

/**
 * Where a signed-in session is kept between page loads:
 * - 'server' (the default for a page of the server's own origin): the refresh token lives in an
 *   HttpOnly cookie only the server reads (`/.hearth/session`); the page holds just a short-lived
 *   ID token in memory, and remembers who is signed in (not any credential) to show it at once.
 * - 'local': the whole session in localStorage, readable by any script on the page (for pages
 *   of another origin, which cannot use the server's cookie).
 * - 'none': in memory only; a reload signs out.
 */
const PERSISTENCE = ['server', 'local', 'none'];

class Auth {
  constructor(hearth, storageKey, persistence) {
    this._hearth = hearth;
    this._storageKey = storageKey;
    this._persistence = persistence;
    this._observers = new Set();
    this._tokenObservers = new Set();
    this._idTokenObservers = new Set();
    this._refreshing = null;
    this._timer = null;
    this.sessionEndedBy = null;
    this._user = null; // the current user, decoded once per set of claims
    this._legacyRefreshToken = null; // a session an older version kept in localStorage
    this._session = this._load();
    this._channel = null;
    if (persistence === 'server' && typeof BroadcastChannel !== 'undefined') {
      // Another tab signed in or out: ask the server what the session is now.
      this._channel = new BroadcastChannel(`hearth.auth:${storageKey}`);
      this._channel.onmessage = () => { this.ready = this._restore(); };
    }
    if (persistence === 'local' && typeof window !== 'undefined') {
      // Another tab signed in or out: follow it.
      window.addEventListener('storage', (event) => {
        if (event.key !== this._storageKey) return;
        this._adoptStored(this._load());
      });
    }
    /** Settles once the session kept on the server (if any) has been checked. */
    // Only a page that remembers a signed-in user asks: a visitor who never signed in has no cookie.
    this.ready = Promise.resolve();
    if (persistence === 'server' && this._legacyRefreshToken) this.ready = this._adoptLegacy(this._legacyRefreshToken);
    else if (persistence === 'server' && this._session) this.ready = this._restore();
    this._scheduleRefresh();
  }

  /** The signed-in user, from the ID token's claims; null when signed out. */
  get currentUser() {
    const session = this._session;
    if (!session) return null;
    if (this._user?.claims !== session.claims) {
      const claims = session.claims;
      this._user = {
        claims,
        value: Object.freeze({
          uid: claims.user_id ?? claims.sub,
          email: claims.email ?? null,
          emailVerified: claims.email_verified === true,
          displayName: claims.name ?? null,
          photoURL: claims.picture ?? null,
          isAnonymous: claims.firebase?.sign_in_provider === 'anonymous',
          claims,
        }),
      };
    }
    return this._user.value;
  }

  /** Calls `callback(user or null)` now and whenever someone signs in or out or changes profile. */
  onAuthStateChanged(callback) {
    this._observers.add(callback);
    queueMicrotask(() => this._observers.has(callback) && callback(this.currentUser));
    return () => this._observers.delete(callback);
  }

  /**
   * Calls `callback(user or null)` now and whenever the ID token changes: a sign-in or out, and
   * also a refresh for the same user (as Firebase's onIdTokenChanged), which is when new custom
   * claims arrive. The database connection has been given the new token by then.
   */
  onIdTokenChanged(callback) {
    this._idTokenObservers.add(callback);
    queueMicrotask(() => this._idTokenObservers.has(callback) && callback(this.currentUser));
    return () => this._idTokenObservers.delete(callback);
  }

  /**
   * The ID token with its decoded claims, as Firebase's getIdTokenResult (times as UTC date
   * strings); null when signed out. `forceRefresh` asks the server for a new token, which
   * carries the custom claims set since the last one (e.g. `admin`).
   */
  async getIdTokenResult(forceRefresh = false) {
    const token = await this.getIdToken(forceRefresh);
    if (!token) return null;
    const claims = decodeJWT(token);
    const time = (seconds) => (typeof seconds === 'number' ? new Date(seconds * 1000).toUTCString() : null);
    return {
      token,
      claims,
      authTime: time(claims.auth_time),
      issuedAtTime: time(claims.iat),
      expirationTime: time(claims.exp),
      signInProvider: claims.firebase?.sign_in_provider ?? null,
    };
  }

  /** Internal: told whenever the ID token changes (streams reconnect with the new one). */
  _onTokenChange(callback) {
    this._tokenObservers.add(callback);
    return () => this._tokenObservers.delete(callback);
  }

  async signUp(email, password, displayName) {
    const body = { email, password, returnSecureToken: true };
    if (displayName) body.displayName = displayName;
    await this._start(await this._call('accounts:signUp', body));
    // Servers that ignore displayName at sign-up get it set the usual way.
    if (displayName && this.currentUser.displayName !== displayName) await this.updateProfile({ displayName });
    return this.currentUser;
  }

  async signIn(email, password) {
    await this._start(await this._call('accounts:signInWithPassword', { email, password, returnSecureToken: true }));
    return this.currentUser;
  }

  async signInAnonymously() {
    await this._start(await this._call('accounts:signUp', { returnSecureToken: true }));
    return this.currentUser;
  }

  /**
   * Signs out here, and tells the server, which ends this session's refresh token (other
   * devices stay signed in), as Hearth's Swift client does.
   */
  async signOut() {
    const session = this._session;
    this.sessionEndedBy = null;
    this._save(null);
    this._changed();
    if (!session) return;
    try {
      if (this._persistence === 'server') {
        await this._sessionCall('DELETE', '/.hearth/session');
        this._channel?.postMessage('changed');
      } else if (session.refreshToken) {
        await this._call('accounts:signOut', { idToken: session.idToken, refreshToken: session.refreshToken });
      }
    } catch {
      // Signed out locally either way; the token expires on its own.
    }
  }

  /** The sign-in providers the server offers: [{ providerId, displayName }]. */
  async providers() {
    const answer = await this._fetchJSON(`${this._hearth.url}/__/auth/providers`, { method: 'GET' });
    return answer.providers ?? [];
  }

  /**
   * Leaves for `providerId`'s sign-in page; the provider sends the browser back to
   * /__/auth/handler, which finishes with completeProviderSignIn(). With `link`, the provider
   * is added to the signed-in account (an anonymous one keeps its uid and everything it made).
   */
  async signInWithProvider(providerId, { next = '#/', link = false } = {}) {
    const continueUri = `${location.origin}/__/auth/handler`;
    const answer = await this._call('accounts:createAuthUri', { providerId, continueUri });
    sessionStorage.setItem(`${this._storageKey}:provider-sign-in`, JSON.stringify({
      sessionId: answer.sessionId, providerId, next, link: Boolean(link && this._session),
    }));
    location.assign(answer.authUri);
  }

  /** Finishes a provider sign-in on the page the provider came back to. Answers { user, next }. */
  async completeProviderSignIn(requestUri = location.href) {
    const key = `${this._storageKey}:provider-sign-in`;
    const started = JSON.parse(sessionStorage.getItem(key) ?? 'null');
    sessionStorage.removeItem(key);
    if (!started?.sessionId) throw HearthError.auth('PROVIDER_SIGN_IN_LOST');
    const body = { requestUri, sessionId: started.sessionId, returnSecureToken: true, returnIdpCredential: false };
    if (started.link) {
      const idToken = await this.getIdToken();
      if (idToken) body.idToken = idToken;
    }
    const answer = await this._call('accounts:signInWithIdp', body);
    if (answer.needConfirmation || !answer.idToken) throw HearthError.auth('NEED_CONFIRMATION');
    await this._start(answer);
    return { user: this.currentUser, next: started.next ?? '#/', isNewUser: Boolean(answer.isNewUser) };
  }

  /** Gives the signed-in (anonymous) account an email and password, keeping its uid. */
  async linkWithPassword(email, password, displayName) {
    const idToken = await this.getIdToken();
    if (!idToken) throw HearthError.auth('NOT_SIGNED_IN');
    const request = { idToken, email, password, returnSecureToken: true };
    // One request: nobody ever sees the account with its email but not yet its name.
    if (displayName !== undefined) request.displayName = displayName;
    const answer = await this._call('accounts:update', request);
    if (answer.idToken) await this._start(answer);
    else await this.getIdToken(true);
    this._changed();
    return this.currentUser;
  }

  /** Removes a way of signing in (`password`, `phone` or a provider ID) from the account. */
  async unlink(providerId) {
    const idToken = await this.getIdToken();
    if (!idToken) throw HearthError.auth('NOT_SIGNED_IN');
    await this._call('accounts:update', { idToken, deleteProvider: [providerId] });
    await this.getIdToken(true);
    this._changed();
    return this.currentUser;
  }

  /** The account's sign-in methods and email state, from the server. */
  async accountInfo() {
    const idToken = await this.getIdToken();
    if (!idToken) throw HearthError.auth('NOT_SIGNED_IN');
    const answer = await this._call('accounts:lookup', { idToken });
    return answer.users?.[0] ?? null;
  }

  /** Emails a link to set a new password. */
  async sendPasswordResetEmail(email) {
    await this._call('accounts:sendOobCode', { requestType: 'PASSWORD_RESET', email });
  }

  /** Signs in with an emailed sign-in link's code and the address it was sent to. */
  async signInWithEmailLink(email, code) {
    await this._start(await this._call('accounts:signInWithEmailLink', { email, oobCode: code, returnSecureToken: true }));
    return this.currentUser;
  }

  /** Emails the signed-in user a link that verifies their address. */
  async sendEmailVerification() {
    const idToken = await this.getIdToken();
    if (!idToken) throw HearthError.auth('NOT_SIGNED_IN');
    await this._call('accounts:sendOobCode', { requestType: 'VERIFY_EMAIL', idToken });
  }

  /** The address a password reset code is for (the code stays usable). */
  async verifyPasswordResetCode(code) {
    const answer = await this._call('accounts:resetPassword', { oobCode: code });
    return answer.email;
  }

  /** What an emailed code does: { requestType, email }. */
  async checkActionCode(code) {
    const answer = await this._call('accounts:resetPassword', { oobCode: code });
    return { requestType: answer.requestType, email: answer.email ?? null };
  }

  /** Sets a new password with an emailed code. */
  async confirmPasswordReset(code, newPassword) {
    await this._call('accounts:resetPassword', { oobCode: code, newPassword });
  }

  /** Applies an emailed verification code; the signed-in user's token then says so. */
  async applyActionCode(code) {
    await this._call('accounts:update', { oobCode: code });
    if (this._session) {
      await this.getIdToken(true).catch(() => {});
      this._changed();
    }
  }

  /** Changes the display name and/or photo URL; the new ID token carries them. */
  async updateProfile({ displayName, photoURL } = {}) {
    const idToken = await this.getIdToken();
    if (!idToken) throw HearthError.auth('NOT_SIGNED_IN');
    const body = { idToken, returnSecureToken: true };
    if (displayName !== undefined) body.displayName = displayName;
    if (photoURL !== undefined) body.photoUrl = photoURL;
    const answer = await this._call('accounts:update', body);
    if (answer.idToken) await this._start(answer);
    else await this.getIdToken(true);
    this._changed();
    return this.currentUser;
  }

  /**
   * Deletes the signed-in account, then signs out here, as Hearth's Swift client does. The
   * server wants a recent sign-in (except for an anonymous account): sign in again first, or
   * it answers auth/CREDENTIAL_TOO_OLD_LOGIN_AGAIN and nothing changes.
   */
  async deleteAccount() {
    const idToken = await this.getIdToken();
    if (!idToken) throw HearthError.auth('NOT_SIGNED_IN');
    await this._call('accounts:delete', { idToken });
    // The session's end is told to the server too (its cookie cleared); that the account is
    // gone already is no failure.
    await this.signOut();
  }

  /** A valid ID token (refreshed when it is close to expiry, or when forced); null when signed out. */
  async getIdToken(forceRefresh = false) {
    await this.ready;
    const session = this._session;
    if (!session) return null;
    if (!forceRefresh && session.idToken && session.expiresAt - Date.now() > REFRESH_MARGIN_MS) return session.idToken;
    this._refreshing ??= this._refresh(session).finally(() => { this._refreshing = null; });
    return this._refreshing;
  }

  async _refresh(session) {
    let answer;
    try {
      if (this._persistence === 'server') {
        answer = await this._sessionCall('POST', '/.hearth/session/token');
      } else {
        const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: session.refreshToken });
        const raw = await this._post('/securetoken.googleapis.com/v1/token', form, 'application/x-www-form-urlencoded');
        answer = { idToken: raw.id_token, refreshToken: raw.refresh_token, expiresIn: raw.expires_in };
      }
    } catch (error) {
      // Refused (revoked, disabled, deleted, no session): the session is over. A fault is not.
      if (error.code !== 'network' && (error.status ?? 500) < 500 && this._session === session) {
        this.sessionEndedBy = error;
        this._save(null);
        this._changed();
      }
      throw error;
    }
    if (this._session !== session) return this._session?.idToken ?? null;
    const before = session.idToken ? this.currentUser?.uid : undefined;
    this._store(answer);
    this._tokenChanged(before);
    return this._session.idToken;
  }

  /** Asks the server for the session its cookie holds (at start, or when another tab changed it). */
  async _restore() {
    const session = this._session;
    let answer;
    try {
      answer = await this._sessionCall('POST', '/.hearth/session/token');
    } catch (error) {
      // Offline or a server fault: keep what is known, and check again on use.
      if (error.code === 'network' || (error.status ?? 500) >= 500) return;
      if (this._session && this._session === session) {
        this.sessionEndedBy = error;
        this._save(null);
        this._changed();
      }
      return;
    }
    if (this._session !== session) return; // signed in or out here meanwhile
    const before = this.currentUser?.uid;
    this._store(answer);
    this._tokenChanged(before);
  }

  _call(endpoint, body) {
    return this._post(`/identitytoolkit.googleapis.com/v1/${endpoint}`, JSON.stringify(body), 'application/json');
  }

  async _post(path, body, contentType) {
    const url = `${this._hearth.url}${path}?key=${encodeURIComponent(this._hearth.apiKey)}`;
    return this._fetchJSON(url, { method: 'POST', headers: { 'Content-Type': contentType }, body });
  }

  /** A call to the server's session endpoint, which keeps the refresh token in its cookie. */
  _sessionCall(method, path, body) {
    const init = { method, credentials: 'same-origin' };
    if (body) Object.assign(init, { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    return this._fetchJSON(`${this._hearth.url}${path}`, init);
  }

  async _fetchJSON(url, init) {
    let response;
    try {
      response = await fetch(url, init);
    } catch {
      this._hearth._connection.set(false);
      throw HearthError.network();
    }
    this._hearth._connection.set(true);
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) throw HearthError.auth(answer?.error?.message ?? `HTTP_${response.status}`, response.status);
    return answer;
  }

  /** Takes the session a sign-in (or a password change) answered. */
  async _start(answer) {
    if (this._persistence === 'server') {
      // The refresh token goes to the server's cookie and is not kept here.
      let kept;
      try {
        kept = await this._sessionCall('POST', '/.hearth/session', { refreshToken: answer.refreshToken });
      } catch (error) {
        // The server would not keep it (a proxy in the way, an older server, the network):
        // the user is signed in all the same, for as long as this page lasts.
        console.warn(`Hearth: the server did not keep the session (${error.message}); it lasts as long as this page.`);
        this._persistence = 'none';
      }
      if (kept) {
        this._store(kept);
        this._channel?.postMessage('changed');
        this._changed();
        return;
      }
    }
    this._store(answer);
    this._changed();
  }

  /**
   * A session an older version of this client kept in localStorage, refresh token and all:
   * handed to the server's cookie and wiped from storage, or wiped if the server refuses it.
   */
  async _adoptLegacy(refreshToken) {
    this._legacyRefreshToken = null;
    let kept;
    try {
      kept = await this._sessionCall('POST', '/.hearth/session', { refreshToken });
    } catch (error) {
      // Offline: keep it where it is and try on the next load. Refused: it is of no use.
      if (error.code !== 'network') this._save(null);
      return;
    }
    this._store(kept);
    this._changed();
  }

  _store({ idToken, refreshToken, expiresIn }) {
    this.sessionEndedBy = null;
    const seconds = Number(expiresIn) || 3600;
    this._save({
      idToken,
      refreshToken: this._persistence === 'server' ? undefined : (refreshToken ?? this._session?.refreshToken),
      expiresAt: Date.now() + seconds * 1000,
      claims: decodeJWT(idToken),
    });
  }

  _save(session) {
    this._session = session;
    if (this._persistence !== 'none') {
      try {
        // 'server' keeps only who is signed in: no token is written where page scripts can read it.
        const stored = session && this._persistence === 'server' ? { claims: session.claims } : session;
        if (stored) localStorage.setItem(this._storageKey, JSON.stringify(stored));
        else localStorage.removeItem(this._storageKey);
      } catch {
        // Private mode without storage: the session lasts as long as the page.
      }
    }
    this._scheduleRefresh();
  }

  _load() {
    if (this._persistence === 'none') return null;
    try {
      const stored = JSON.parse(localStorage.getItem(this._storageKey) ?? 'null');
      if (this._persistence === 'server') {
        if (stored?.refreshToken) {
          this._legacyRefreshToken = stored.refreshToken;
          return null;
        }
        return stored?.claims ? { idToken: null, expiresAt: 0, claims: stored.claims } : null;
      }
      if (!stored?.idToken || !stored.refreshToken) return null;
      return { ...stored, claims: decodeJWT(stored.idToken) };
    } catch {
      return null;
    }
  }

  _adoptStored(session) {
    const before = this.currentUser?.uid;
    this._session = session;
    this._scheduleRefresh();
    this._tokenChanged(before);
  }

  /** A new ID token: streams follow it; observers hear of it when the user is not `previousUid`. */
  _tokenChanged(previousUid) {
    this._notifyToken();
    if (this.currentUser?.uid !== previousUid) this._notify();
  }

  /** Refreshes the token a few minutes before it expires, so streams never see it lapse. */
  _scheduleRefresh() {
    clearTimeout(this._timer);
    if (!this._session?.idToken) return;
    const delay = Math.max(0, this._session.expiresAt - Date.now() - REFRESH_MARGIN_MS);
    this._timer = setTimeout(() => {
      this.getIdToken(true).catch(() => {
        // Offline: try again in a minute (getIdToken refreshes on use anyway).
        this._timer = setTimeout(() => this._scheduleRefresh(), 60_000);
      });
    }, Math.min(delay, 2 ** 31 - 1));
  }

  _changed() {
    this._notifyToken();
    this._notify();
  }

  _notify() {
    const user = this.currentUser;
    for (const observer of [...this._observers]) observer(user);
  }

  _notifyToken() {
    // The library's own first (the database connection signs in with the new token), then the page's.
    for (const observer of [...this._tokenObservers]) observer();
    const user = this.currentUser;
    for (const observer of [...this._idTokenObservers]) {
      // A page's observer that throws does not stop the sign-in or refresh that told it.
      try {
        observer(user);
      } catch (error) {
        setTimeout(() => { throw error; });
      }
    }
  }
}

// MARK: - Storage

class Storage {
  constructor(hearth) {
    this._hearth = hearth;
  }

  ref(path = '') { return new StorageReference(this, splitPath(path)); }
}

class StorageReference {
  constructor(storage, segments) {
    this._storage = storage;
    this._segments = segments;
  }

  get fullPath() { return this._segments.join('/'); }
  get name() { return this._segments[this._segments.length - 1] ?? ''; }
  get bucket() { return this._storage._hearth.bucket; }
  get parent() { return this._segments.length ? new StorageReference(this._storage, this._segments.slice(0, -1)) : null; }
  get root() { return new StorageReference(this._storage, []); }
  child(path) { return new StorageReference(this._storage, [...this._segments, ...splitPath(path)]); }
  toString() { return `gs://${this.bucket}/${this.fullPath}`; }

  get _bucketPath() { return `/v0/b/${encodeURIComponent(this.bucket)}/o`; }
  get _objectPath() { return `${this._bucketPath}/${encodeURIComponent(this.fullPath)}`; }

  /**
   * Uploads `blob`; `onProgress(fraction)` follows the bytes sent.
   * @returns {Promise<object>} the new object's metadata
   */
  async put(blob, { contentType } = {}, onProgress) {
    const hearth = this._storage._hearth;
    const type = contentType || blob.type || 'application/octet-stream';
    const url = `${hearth.filesUrl}${this._bucketPath}?uploadType=media&name=${encodeURIComponent(this.fullPath)}`;
    const send = (credential) => new Promise((resolve, reject) => {
      const request = new XMLHttpRequest();
      request.open('POST', url);
      request.setRequestHeader('Content-Type', type);
      if (credential) request.setRequestHeader('Authorization', `${hearth.adminToken ? 'Bearer' : 'Firebase'} ${credential}`);
      request.upload.addEventListener('progress', (event) => {
        if (event.lengthComputable) onProgress?.(event.loaded / event.total);
      });
      request.addEventListener('load', () => resolve(request));
      request.addEventListener('error', () => reject(HearthError.network()));
      request.send(blob);
    });
    let request;
    try {
      request = await send(await hearth._credential());
      if (request.status === 401 && !hearth.adminToken) request = await send(await hearth._credential(true));
    } catch (error) {
      if (error.code === 'network') hearth._connection.set(false);
      throw error;
    }
    hearth._connection.set(true);
    if (request.status < 200 || request.status >= 300) throw HearthError.fromResponse(request.status, errorText(request.responseText));
    onProgress?.(1);
    return JSON.parse(request.responseText);
  }

  /** The file's URL without a token: enough where the rules let anyone read it. */
  mediaURL() { return `${this._storage._hearth.filesUrl}${this._objectPath}?alt=media`; }

  /** A URL that works for anyone: with the file's download token. */
  async getDownloadURL() {
    const metadata = await this.getMetadata();
    const token = metadata.downloadTokens?.split(',')[0];
    return token ? `${this.mediaURL()}&token=${encodeURIComponent(token)}` : this.mediaURL();
  }

  getMetadata() { return this._storage._hearth._json('GET', this._objectPath, this._options); }

  async delete() { await this._storage._hearth._request('DELETE', this._objectPath, this._options); }

  /** The files and folders directly under this one (`delimiter: '/'`), a page at a time. */
  async list({ delimiter = '/', maxResults, pageToken } = {}) {
    const params = new URLSearchParams({ prefix: this.fullPath ? `${this.fullPath}/` : '', delimiter });
    if (maxResults) params.set('maxResults', String(maxResults));
    if (pageToken) params.set('pageToken', pageToken);
    const answer = await this._storage._hearth._json('GET', `${this._bucketPath}?${params}`, this._options);
    return {
      items: (answer.items ?? []).map((item) => this._storage.ref(item.name)),
      prefixes: (answer.prefixes ?? []).map((prefix) => this._storage.ref(prefix)),
      nextPageToken: answer.nextPageToken ?? null,
    };
  }

  get _scheme() { return this._storage._hearth.adminToken ? 'Bearer' : 'Firebase'; }

  /** Storage requests go to the files origin, signed as Firebase's storage clients sign them. */
  get _options() { return { scheme: this._scheme, base: this._storage._hearth.filesUrl }; }
}

// MARK: - Admin

class Admin {
  constructor(hearth) {
    this._hearth = hearth;
  }

  get _accounts() { return `/identitytoolkit.googleapis.com/v1/projects/${encodeURIComponent(this._hearth.projectId)}/accounts`; }

  async _post(path, body) {
    return this._hearth._json('POST', path, { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
  }

  /** A page of users: { users: [{ uid, email, displayName, photoURL, disabled, customClaims, createdAt, lastLoginAt }], nextPageToken }. */
  async listUsers(pageToken, maxResults = 100) {
    const params = new URLSearchParams({ maxResults: String(maxResults) });
    if (pageToken) params.set('nextPageToken', pageToken);
    const answer = await this._hearth._json('GET', `${this._accounts}:batchGet?${params}`);
    return { users: (answer.users ?? []).map(Admin._user), nextPageToken: answer.nextPageToken ?? null };
  }

  async createUser({ email, password, displayName } = {}) {
    const body = { email, password };
    if (displayName) body.displayName = displayName;
    return Admin._user(await this._post(this._accounts, body));
  }

  /** Changes an account: { email, password, displayName, photoURL, disabled }. */
  async updateUser(uid, { photoURL, ...fields } = {}) {
    const body = { localId: uid, ...fields };
    if (photoURL !== undefined) body.photoUrl = photoURL;
    return this._post(`${this._accounts}:update`, body);
  }

  async deleteUser(uid) { await this._post(`${this._accounts}:delete`, { localId: uid }); }

  /**
   * Users whose uid, email, name or phone contains `search`, optionally only `disabled` (true)
   * or enabled (false) ones, after the uid `after`: { users, last } (`last` opens the next page).
   */
  async searchUsers({ search = '', disabled = null, after = null, limit = 25 } = {}) {
    const body = { search, limit };
    if (disabled !== null) body.disabled = disabled;
    if (after) body.after = after;
    const answer = await this._post(`${this._accounts}:query`, body);
    const users = (answer.userInfo ?? []).map(Admin._user);
    return { users, last: users.length === limit ? users[users.length - 1].uid : null };
  }

  async setDisabled(uid, disabled) { await this._post(`${this._accounts}:update`, { localId: uid, disableUser: disabled }); }

  /** Ends every session of the user: refresh tokens stop working, ID tokens from before are refused. */
  async revokeSessions(uid) {
    await this._post(`${this._accounts}:update`, { localId: uid, validSince: String(Math.floor(Date.now() / 1000)) });
  }

  /** Emails the user a link to choose a new password. */
  async sendPasswordReset(email) {
    await this._post(`${this._accounts}:sendOobCode`, { requestType: 'PASSWORD_RESET', email });
  }

  get _configs() { return `/identitytoolkit.googleapis.com/v2/projects/${encodeURIComponent(this._hearth.projectId)}`; }

  /** The sign-in providers: [{ id, kind ('oidc' | 'github'…), displayName, enabled, issuer, clientId }]. */
  async listProviders() {
    const [oidc, builtIn] = await Promise.all([
      this._hearth._json('GET', `${this._configs}/oauthIdpConfigs?pageSize=100`),
      this._hearth._json('GET', `${this._configs}/defaultSupportedIdpConfigs?pageSize=100`),
    ]);
    const entry = (raw) => ({
      id: raw.name.split('/').pop(), displayName: raw.displayName ?? null, enabled: raw.enabled !== false,
      issuer: raw.issuer ?? null, clientId: raw.clientId ?? null,
    });
    return [...(oidc.oauthIdpConfigs ?? []), ...(builtIn.defaultSupportedIdpConfigs ?? [])].map(entry);
  }

  _providerPath(id) {
    const collection = id.startsWith('oidc.') ? 'oauthIdpConfigs' : 'defaultSupportedIdpConfigs';
    return `${this._configs}/${collection}`;
  }

  /** Adds a provider: `oidc.<name>` with an issuer, or a built-in one such as `github.com`. */
  async addProvider({ id, displayName, issuer, clientId, clientSecret }) {
    const body = { clientId, clientSecret, enabled: true };
    if (displayName) body.displayName = displayName;
    if (id.startsWith('oidc.')) Object.assign(body, { issuer, responseType: { code: true } });
    const parameter = id.startsWith('oidc.') ? 'oauthIdpConfigId' : 'idpId';
    return this._post(`${this._providerPath(id)}?${parameter}=${encodeURIComponent(id)}`, body);
  }

  async setProviderEnabled(id, enabled) {
    return this._hearth._json('PATCH', `${this._providerPath(id)}/${encodeURIComponent(id)}?updateMask=enabled`, {
      body: JSON.stringify({ enabled }), headers: { 'Content-Type': 'application/json' },
    });
  }

  async deleteProvider(id) { await this._hearth._json('DELETE', `${this._providerPath(id)}/${encodeURIComponent(id)}`); }

  async setCustomClaims(uid, claims) {
    await this._post(`${this._accounts}:update`, { localId: uid, customAttributes: JSON.stringify(claims ?? {}) });
  }

  /** The database rules' source text. */
  async getRules() {
    const response = await this._hearth._request('GET', '/.settings/rules.json');
    return response.text();
  }

  /** Deploys rules; a refusal is a HearthError whose .detail is the server's text (with line and column). */
  async setRules(text) {
    await this._hearth._request('PUT', '/.settings/rules.json', { body: text, headers: { 'Content-Type': 'application/json' } });
  }

  stats() { return this._hearth._json('GET', '/.hearth/stats'); }

  static _user(raw) {
    let customClaims = null;
    try {
      customClaims = raw.customAttributes ? JSON.parse(raw.customAttributes) : null;
    } catch {
      customClaims = null;
    }
    return {
      uid: raw.localId,
      email: raw.email ?? null,
      displayName: raw.displayName ?? null,
      photoURL: raw.photoUrl ?? null,
      disabled: raw.disabled === true,
      emailVerified: raw.emailVerified === true,
      customClaims,
      phoneNumber: raw.phoneNumber ?? null,
      providers: (raw.providerUserInfo ?? []).map((entry) => entry.providerId),
      createdAt: raw.createdAt ? Number(raw.createdAt) : null,
      lastLoginAt: raw.lastLoginAt ? Number(raw.lastLoginAt) : null,
    };
  }
}
