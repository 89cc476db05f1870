/**
 * Hearth's web client: Firebase's Realtime Database, Auth and Storage REST APIs (plus
 * Server-Sent Events for live data, and one realtime-protocol WebSocket for connection state
 * and onDisconnect) in the spirit of Firebase's namespaced web SDK. ES modules, no dependencies.
 *
 *   import { Hearth, ServerValue } from '/lib/hearth.js';
 *   const hearth = await Hearth.connect();            // reads /__/firebase/init.json
 *   // or new Hearth({ url, bucket, projectId, apiKey, adminToken })
 *
 * Auth (on the server's own origin the refresh token is kept in an HttpOnly cookie by the server
 * and the page holds only a short-lived ID token, refreshed before it expires; see PERSISTENCE):
 *   hearth.auth.signUp(email, password, displayName) · signIn(email, password)
 *   signInAnonymously() · signOut() · updateProfile({ displayName, photoURL })
 *   currentUser → { uid, email, displayName, photoURL, isAnonymous } | null
 *   onAuthStateChanged(cb) → unsubscribe · getIdToken(forceRefresh)
 *
 * Database:
 *   const ref = hearth.db.ref('posts/abc');  ref.key · ref.parent · ref.root · ref.child('a/b')
 *   ref.push(value?) (a client-made push ID; thenable) · set(v) · update({'a/b': 1, c: null})
 *   remove() · once('value') / get() → DataSnapshot · transaction(fn) → { committed, snapshot }
 *   queries: orderByChild(path) / orderByKey() / orderByValue(), startAt(v, key?) · endAt ·
 *     equalTo · startAfter · endBefore · limitToFirst(n) · limitToLast(n)
 *   on('value' | 'child_added' | 'child_changed' | 'child_removed' | 'child_moved',
 *      cb(snapshot, prevChildKey), cancelCb(error)) → cb · off(event?, cb?)
 *   DataSnapshot: key · ref · val() · exists() · child(path) · forEach(cb) (query order; return
 *     true to stop) · numChildren() · hasChild(path) · hasChildren() · exportVal()
 *   ServerValue.TIMESTAMP · ServerValue.increment(n)
 *   ref('.info/connected').on('value', cb) → true while the realtime connection is up
 *   ref.onDisconnect() → set(v) · update(values) · remove() · cancel(): written by the server
 *     when this page's connection ends (register again whenever .info/connected turns true)
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
 * hearth.onConnectionChange(cb(online)) → unsubscribe: false when requests or streams fail.
 *
 * Failures are thrown as HearthError with .code ('permission-denied', 'not-found', 'invalid',
 * 'too-large', 'conflict', 'network', 'auth/<FIREBASE_CODE>') and .message in plain words.
 */

import { RealtimeLink } from './realtime.js';

// MARK: - Errors

const AUTH_WORDS = {
  EMAIL_EXISTS: 'That email address already has an account.',
  INVALID_LOGIN_CREDENTIALS: 'Wrong email address or password.',
  INVALID_PASSWORD: 'Wrong email address or password.',
  EMAIL_NOT_FOUND: 'Wrong email address or password.',
  INVALID_EMAIL: 'That is not an email address.',
  MISSING_EMAIL: 'Enter an email address.',
  MISSING_PASSWORD: 'Enter a password.',
  WEAK_PASSWORD: 'The password must be at least 6 characters.',
  TOO_MANY_ATTEMPTS_TRY_LATER: 'Too many attempts. Try again later.',
  USER_DISABLED: 'This account has been disabled.',
  USER_NOT_FOUND: 'This account no longer exists.',
  TOKEN_EXPIRED: 'Your session has ended. Sign in again.',
  INVALID_REFRESH_TOKEN: 'Your session has ended. Sign in again.',
  INVALID_ID_TOKEN: 'Your session has ended. Sign in again.',
  NOT_SIGNED_IN: 'Sign in first.',
  INSUFFICIENT_PERMISSION: 'You are not allowed to do that.',
};

export class HearthError extends Error {
  /**
   * @param {string} code e.g. 'permission-denied', 'network', 'auth/EMAIL_EXISTS'
   * @param {string} message what went wrong, in words for a person
   * @param {{status?: number, detail?: string}} [extra] the HTTP status and the server's text
   */
  constructor(code, message, { status, detail } = {}) {
    super(message);
    this.name = 'HearthError';
    this.code = code;
    this.status = status;
    this.detail = detail;
  }

  static network() {
    return new HearthError('network', 'The server could not be reached. Check your connection and try again.');
  }

  static auth(firebaseCode, status) {
    // Firebase appends details after a colon: "WEAK_PASSWORD : Password should be…".
    const code = String(firebaseCode || 'UNKNOWN').split(/[\s:]/)[0];
    const words = AUTH_WORDS[code] || `Signing in failed (${code.toLowerCase().replaceAll('_', ' ')}).`;
    return new HearthError(`auth/${code}`, words, { status, detail: firebaseCode });
  }

  /** The error for a failed database or storage response. */
  static fromResponse(status, text) {
    const detail = text || `HTTP ${status}`;
    if (status === 401 || status === 403) {
      if (/expired|parse auth token/i.test(detail)) return HearthError.auth('TOKEN_EXPIRED', status);
      return new HearthError('permission-denied', 'You are not allowed to do that.', { status, detail });
    }
    if (status === 404) return new HearthError('not-found', 'It is not there any more.', { status, detail });
    if (status === 412) return new HearthError('conflict', 'Someone else changed it at the same time. Try again.', { status, detail });
    if (status === 413 || /exceeds|too large/i.test(detail)) {
      return new HearthError('too-large', 'That is too large.', { status, detail });
    }
    if (status === 400) return new HearthError('invalid', `The server refused that: ${detail}`, { status, detail });
    return new HearthError('server', `The server had a problem (${detail}). Try again.`, { status, detail });
  }
}

function parseJSON(text, fallback) {
  try {
    return JSON.parse(text);
  } catch {
    return fallback;
  }
}

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

// MARK: - Values

export const ServerValue = Object.freeze({
  TIMESTAMP: Object.freeze({ '.sv': 'timestamp' }),
  increment: (delta) => ({ '.sv': { increment: delta } }),
});

function splitPath(path) {
  return String(path ?? '').split('/').filter((segment) => segment.length > 0);
}

/**
 * The database's view of a JSON value: arrays become objects keyed "0", "1"…, and null
 * children and empty objects disappear (a node never has zero children).
 */
function normalize(value) {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object') return value;
  const out = {};
  let count = 0;
  for (const [key, child] of Object.entries(value)) {
    const node = normalize(child);
    if (node !== null) {
      out[key] = node;
      count += 1;
    }
  }
  return count > 0 ? out : null;
}

/** An object whose keys are 0…n (mostly filled) is shown as an array, as Firebase does. */
function exportValue(node) {
  if (node === null || typeof node !== 'object') return node;
  const keys = Object.keys(node);
  let allIntegers = true;
  let maxIndex = 0;
  for (const key of keys) {
    if (!/^(0|[1-9]\d*)$/.test(key)) {
      allIntegers = false;
      break;
    }
    maxIndex = Math.max(maxIndex, Number(key));
  }
  if (allIntegers && keys.length > 0 && maxIndex < 2 * keys.length) {
    const array = new Array(maxIndex + 1).fill(null);
    for (const key of keys) array[Number(key)] = exportValue(node[key]);
    return array;
  }
  const out = {};
  for (const key of keys) out[key] = exportValue(node[key]);
  return out;
}

function nodeAt(node, segments) {
  let current = node;
  for (const segment of segments) {
    if (current === null || typeof current !== 'object' || !(segment in current)) return null;
    current = current[segment];
  }
  return current;
}

/** A copy of `node` with `value` at `segments` (copying only the objects along the path). */
function withNodeAt(node, segments, value) {
  if (segments.length === 0) return normalize(value);
  const [first, ...rest] = segments;
  const base = node !== null && typeof node === 'object' ? node : {};
  const child = withNodeAt(base[first] ?? null, rest, value);
  const copy = { ...base };
  if (child === null) delete copy[first];
  else copy[first] = child;
  return Object.keys(copy).length > 0 ? copy : null;
}

function sameNode(a, b) {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => key in b && sameNode(a[key], b[key]));
}

// MARK: - Ordering (Firebase's)

const MIN_INT32 = -2147483648;
const MAX_INT32 = 2147483647;

function int32Key(key) {
  if (!/^-?0*\d{1,10}$/.test(key)) return null;
  const number = Number(key);
  return number >= MIN_INT32 && number <= MAX_INT32 ? number : null;
}

/** Key order: 32-bit integer keys first, numerically (shorter text first on ties), then strings. */
export function compareKeys(a, b) {
  if (a === b) return 0;
  const intA = int32Key(a);
  const intB = int32Key(b);
  if (intA !== null && intB !== null) return intA === intB ? a.length - b.length : intA - intB;
  if (intA !== null) return -1;
  if (intB !== null) return 1;
  return a < b ? -1 : 1;
}

function typeRank(value) {
  if (value === null || value === undefined) return 0;
  if (value === false) return 1;
  if (value === true) return 2;
  if (typeof value === 'number') return 3;
  if (typeof value === 'string') return 4;
  return 5;
}

/** Value order: null < false < true < numbers < strings < objects (objects all equal). */
export function compareValues(a, b) {
  const rankA = typeRank(a);
  const rankB = typeRank(b);
  if (rankA !== rankB) return rankA - rankB;
  if (rankA === 3) return a - b;
  if (rankA === 4) return a < b ? -1 : a > b ? 1 : 0;
  return 0;
}

/** The comparator of (key, node) entries for an order: { by: 'key'|'value'|'child', path }. */
function entryComparator(order) {
  if (!order || order.by === 'key' || order.by === 'priority') return (a, b) => compareKeys(a[0], b[0]);
  const pick = order.by === 'value' ? (node) => node : (node) => nodeAt(node, order.path);
  return (a, b) => compareValues(pick(a[1]), pick(b[1])) || compareKeys(a[0], b[0]);
}

function orderedEntries(node, order) {
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).sort(entryComparator(order));
}

// MARK: - Push IDs (Firebase's algorithm)

const PUSH_CHARS = '-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';
let lastPushTime = 0;
const lastRandomDigits = new Array(12).fill(0);

/**
 * A 20-character ID: 8 characters of the time in milliseconds, then 12 random ones. IDs made
 * in the same millisecond increment the random part, so they never sort backwards.
 */
export function pushId(now = Date.now()) {
  const duplicateTime = now === lastPushTime;
  lastPushTime = now;
  const timeChars = new Array(8);
  let time = now;
  for (let index = 7; index >= 0; index -= 1) {
    timeChars[index] = PUSH_CHARS.charAt(time % 64);
    time = Math.floor(time / 64);
  }
  if (!duplicateTime) {
    const random = crypto.getRandomValues(new Uint8Array(12));
    for (let index = 0; index < 12; index += 1) lastRandomDigits[index] = random[index] % 64;
  } else {
    let index = 11;
    for (; index >= 0 && lastRandomDigits[index] === 63; index -= 1) lastRandomDigits[index] = 0;
    lastRandomDigits[index] += 1;
  }
  return timeChars.join('') + lastRandomDigits.map((digit) => PUSH_CHARS.charAt(digit)).join('');
}

// MARK: - Snapshots

export class DataSnapshot {
  /** @param {Reference} ref @param node the normalized value @param order how children sort */
  constructor(ref, node, order = null) {
    this.ref = ref;
    this.key = ref.key;
    this._node = node ?? null;
    this._order = order;
  }

  val() { return exportValue(this._node); }
  exportVal() { return this.val(); }
  toJSON() { return this.val(); }
  exists() { return this._node !== null; }

  child(path) {
    return new DataSnapshot(this.ref.child(path), nodeAt(this._node, splitPath(path)));
  }

  hasChild(path) { return nodeAt(this._node, splitPath(path)) !== null; }
  hasChildren() { return this.numChildren() > 0; }

  numChildren() {
    return this._node !== null && typeof this._node === 'object' ? Object.keys(this._node).length : 0;
  }

  get size() { return this.numChildren(); }

  /** Calls `action` with each child in the query's order; returning true stops (and returns true). */
  forEach(action) {
    for (const [key, node] of orderedEntries(this._node, this._order)) {
      if (action(new DataSnapshot(this.ref.child(key), node)) === true) return true;
    }
    return false;
  }
}

// MARK: - Connection state

class ConnectionState {
  constructor() {
    this.online = typeof navigator === 'undefined' ? true : navigator.onLine !== false;
    this.observers = new Set();
    if (typeof window !== 'undefined') window.addEventListener('offline', () => this.set(false));
  }

  set(online) {
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

export class Hearth {
  /**
   * Connects to the server at `url` (default: this page's origin), reading its project's
   * settings from `/__/firebase/init.json`.
   */
  static async connect({ url = location.origin, adminToken, storageKey, persistence } = {}) {
    const base = url.replace(/\/+$/, '');
    let settings;
    try {
      const response = await fetch(`${base}/__/firebase/init.json`);
      if (!response.ok) throw HearthError.fromResponse(response.status, errorText(await response.text()));
      settings = await response.json();
    } catch (error) {
      throw error instanceof HearthError ? error : HearthError.network();
    }
    const hearth = new Hearth({
      url: base, bucket: settings.storageBucket, projectId: settings.projectId, apiKey: settings.apiKey, adminToken, storageKey,
      filesUrl: settings.storageOrigin, persistence,
    });
    await hearth.auth.ready;
    return hearth;
  }

  /**
   * @param {object} options
   * @param {string} [options.url] the server (default: this page's origin)
   * @param {string} [options.filesUrl] where files are served from, when not `url` (init.json's `storageOrigin`)
   * @param {'server'|'local'|'none'} [options.persistence] where the session is kept (see PERSISTENCE);
   *   'server' by default on the server's own origin, 'none' with an admin token, else 'local'
   */
  constructor({
    url = location.origin, filesUrl, bucket, projectId, apiKey = 'hearth', adminToken = null, storageKey, persistence,
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
    this.db = new Database(this);
    this.storage = new Storage(this);
    this.admin = adminToken ? new Admin(this) : null;
  }

  get isOnline() { return this._connection.online; }

  /**
   * The server's time in milliseconds, estimated from responses' Date headers, so push IDs
   * sort in the server's order even when this device's clock is off.
   */
  serverNow() { return Date.now() + this._clockOffset; }

  _learnClock(response) {
    const date = Date.parse(response.headers.get('Date') ?? '');
    if (Number.isNaN(date)) return;
    // The header has whole seconds: ignore differences the rounding explains.
    const offset = date - Date.now();
    this._clockOffset = Math.abs(offset) > 2000 ? offset : 0;
  }

  /** Calls `callback(online)` now and whenever the connection to the server is lost or back. */
  onConnectionChange(callback) { return this._connection.observe(callback); }

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
    this._refreshing = null;
    this._timer = null;
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
    for (const observer of [...this._tokenObservers]) observer();
  }
}

// MARK: - Database

const EVENT_TYPES = ['value', 'child_added', 'child_changed', 'child_removed', 'child_moved'];
const TRANSACTION_ATTEMPTS = 25;

class Database {
  constructor(hearth) {
    this._hearth = hearth;
    /** One live stream per distinct query, shared by its callbacks. */
    this._streams = new Map();
    const reconnectAll = () => {
      for (const stream of this._streams.values()) stream.reconnect();
    };
    hearth.auth._onTokenChange(() => {
      reconnectAll();
      this._link?.reauthenticate().catch(() => {});
    });
    /** The realtime connection, opened on first use (`.info/connected`, onDisconnect). */
    this._link = null;
    this._infoObservers = new Map();
    // Back online: reconnect at once rather than when the backoff says.
    if (typeof window !== 'undefined') window.addEventListener('online', reconnectAll);
  }

  ref(path = '') { return new Reference(this, splitPath(path)); }

  get _realtime() {
    this._link ??= new RealtimeLink({
      url: this._hearth.url,
      credential: (forceRefresh) => this._hearth._credential(forceRefresh),
      error: (code, message) => new HearthError(code, message),
    });
    return this._link;
  }

  /** The path part of a REST URL: each segment percent-encoded. */
  _restPath(segments) {
    return `/${segments.map(encodeURIComponent).join('/')}.json`;
  }
}

class Query {
  constructor(db, segments, params = {}) {
    this._db = db;
    this._segments = segments;
    this._params = params;
  }

  get ref() { return new Reference(this._db, this._segments); }

  orderByChild(path) { return this._with({ order: { by: 'child', path: splitPath(path) } }); }
  orderByKey() { return this._with({ order: { by: 'key' } }); }
  orderByValue() { return this._with({ order: { by: 'value' } }); }
  startAt(value = null, key) { return this._with({ start: { value, key, inclusive: true } }); }
  startAfter(value = null, key) { return this._with({ start: { value, key, inclusive: false } }); }
  endAt(value = null, key) { return this._with({ end: { value, key, inclusive: true } }); }
  endBefore(value = null, key) { return this._with({ end: { value, key, inclusive: false } }); }
  equalTo(value, key) { return this.startAt(value, key).endAt(value, key); }
  limitToFirst(count) { return this._with({ limit: { count, from: 'first' } }); }
  limitToLast(count) { return this._with({ limit: { count, from: 'last' } }); }

  _with(change) { return new Query(this._db, this._segments, { ...this._params, ...change }); }

  /**
   * The REST query parameters. An ordering without a range or limit is not sent: the whole
   * location is read and sorted here (as Firebase's SDKs do), so it needs no index.
   */
  _queryString() {
    const { order, start, end, limit } = this._params;
    if (!order || (!start && !end && !limit)) return '';
    const params = new URLSearchParams();
    const orderName = order.by === 'key' ? '$key' : order.by === 'value' ? '$value' : order.path.join('/');
    params.set('orderBy', JSON.stringify(orderName));
    const bound = ({ value, key }) => JSON.stringify(value) + (key === undefined ? '' : `,${JSON.stringify(key)}`);
    if (start) params.set(start.inclusive ? 'startAt' : 'startAfter', bound(start));
    if (end) params.set(end.inclusive ? 'endAt' : 'endBefore', bound(end));
    if (limit) params.set(limit.from === 'first' ? 'limitToFirst' : 'limitToLast', String(limit.count));
    return params.toString();
  }

  /** Identifies the query: callbacks on equal queries share one stream. */
  _identity() { return `${this._segments.join('/')}?${this._queryString()}|${JSON.stringify(this._params.order ?? null)}`; }

  _snapshot(node) { return new DataSnapshot(this.ref, node, this._params.order); }

  /** Reads the value once. */
  async get() {
    const query = this._queryString();
    const value = await this._db._hearth._json('GET', this._db._restPath(this._segments) + (query ? `?${query}` : ''));
    return this._snapshot(normalize(value));
  }

  /** `once('value')` reads the value; other events wait for the first such event. */
  once(eventType = 'value', callback) {
    if (eventType === 'value') {
      const read = this.get();
      if (callback) read.then(callback, () => {});
      return read;
    }
    return new Promise((resolve, reject) => {
      const handler = this.on(eventType, (snapshot, previous) => {
        this.off(eventType, handler);
        callback?.(snapshot, previous);
        resolve(snapshot);
      }, reject);
    });
  }

  /**
   * Calls `callback(snapshot, prevChildKey)` for `eventType` now (with the current data) and on
   * every change; `cancelCallback(error)` if the server ends the listen (e.g. access revoked).
   */
  on(eventType, callback, cancelCallback) {
    if (!EVENT_TYPES.includes(eventType)) throw new HearthError('invalid', `Unknown event type "${eventType}".`);
    if (this._isConnectedInfo) {
      if (eventType === 'value') {
        const stop = this._db._realtime.observe((connected) => callback(this._snapshot(connected)));
        this._db._infoObservers.set(callback, stop);
      }
      return callback;
    }
    const identity = this._identity();
    let stream = this._db._streams.get(identity);
    if (!stream) {
      stream = new Stream(this._db, this);
      this._db._streams.set(identity, stream);
    }
    stream.add({ eventType, callback, cancelCallback });
    return callback;
  }

  /** Removes callbacks: all of this query's, those of one event type, or one callback. */
  off(eventType, callback) {
    if (this._isConnectedInfo) {
      for (const [registered, stop] of this._db._infoObservers) {
        if (callback === undefined || registered === callback) {
          stop();
          this._db._infoObservers.delete(registered);
        }
      }
      return;
    }
    const identity = this._identity();
    const stream = this._db._streams.get(identity);
    if (!stream) return;
    stream.remove(eventType, callback);
    if (stream.isEmpty) {
      stream.close();
      this._db._streams.delete(identity);
    }
  }

  toString() { return this.ref.toString(); }

  /** `.info/connected`: the state of the realtime connection, not data. */
  get _isConnectedInfo() { return this._segments.length === 2 && this._segments[0] === '.info' && this._segments[1] === 'connected'; }
}

/**
 * Writes the server makes when this page's realtime connection ends (Firebase's onDisconnect):
 * checked against the rules when registered, kept by the server (even across its restarts).
 */
class OnDisconnect {
  constructor(ref) {
    this._ref = ref;
  }

  get _path() { return `/${this._ref._segments.join('/')}`; }

  async set(value) {
    await this._ref._db._realtime.request('o', { p: this._path, d: value === undefined ? null : value });
  }

  async update(values) {
    await this._ref._db._realtime.request('om', { p: this._path, d: values });
  }

  async remove() { await this.set(null); }

  /** Drops what is registered at this location and below. */
  async cancel() {
    await this._ref._db._realtime.request('oc', { p: this._path });
  }
}

class Reference extends Query {
  constructor(db, segments) {
    super(db, segments, {});
  }

  get key() { return this._segments.length ? this._segments[this._segments.length - 1] : null; }
  get ref() { return this; }
  get parent() { return this._segments.length ? new Reference(this._db, this._segments.slice(0, -1)) : null; }
  get root() { return new Reference(this._db, []); }
  get path() { return `/${this._segments.join('/')}`; }

  child(path) { return new Reference(this._db, [...this._segments, ...splitPath(path)]); }

  toString() { return `${this._db._hearth.url}/${this._segments.map(encodeURIComponent).join('/')}`; }

  onDisconnect() { return new OnDisconnect(this); }

  async set(value) {
    await this._write('PUT', value === undefined ? null : value);
  }

  /** A multi-path update: keys are relative paths; null deletes. Atomic. */
  async update(values) {
    if (values === null || typeof values !== 'object' || Array.isArray(values)) {
      throw new HearthError('invalid', 'update() takes an object of paths and values.');
    }
    if (Object.keys(values).length === 0) return;
    await this._write('PATCH', values);
  }

  async remove() {
    await this._db._hearth._request('DELETE', this._db._restPath(this._segments));
  }

  /**
   * A new child under a push ID made here (so it is known at once). With a value, it is also
   * written; the returned reference is then thenable (resolving to a plain reference).
   */
  push(value) {
    const child = this.child(pushId(this._db._hearth.serverNow()));
    const written = value === undefined ? Promise.resolve(child) : child.set(value).then(() => child);
    const thenable = new Reference(this._db, child._segments);
    thenable.then = written.then.bind(written);
    thenable.catch = written.catch.bind(written);
    return thenable;
  }

  /**
   * Runs `update(current)` and writes what it returns if the value has not changed meanwhile
   * (ETags); otherwise runs it again on the new value. Returning undefined aborts.
   */
  async transaction(update) {
    const hearth = this._db._hearth;
    const path = this._db._restPath(this._segments);
    let response = await hearth._request('GET', path, { headers: { 'X-Firebase-ETag': 'true' } });
    for (let attempt = 0; attempt < TRANSACTION_ATTEMPTS; attempt += 1) {
      const etag = response.headers.get('ETag');
      const current = normalize(await response.json());
      const next = update(exportValue(current));
      if (next === undefined) return { committed: false, snapshot: this._snapshot(current) };
      response = await hearth._request('PUT', path, {
        body: JSON.stringify(next), headers: { 'Content-Type': 'application/json', 'if-match': etag ?? 'null_etag' }, allow: [412],
      });
      if (response.status !== 412) return { committed: true, snapshot: this._snapshot(normalize(await response.json())) };
      // 412: the body is the current value and the header its ETag. Go again.
    }
    throw new HearthError('conflict', 'Too many people changed this at once. Try again.');
  }

  async _write(method, value) {
    await this._db._hearth._request(method, this._db._restPath(this._segments), {
      body: JSON.stringify(value), headers: { 'Content-Type': 'application/json' },
    });
  }
}

// MARK: - Live streams

const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 30_000;
/** The server sends keep-alive events every 30 s: silence for longer means a dead connection. */
const SILENCE_MS = 75_000;

/**
 * One Server-Sent Events stream for a query: keeps the latest value, and tells each
 * registered callback what changed (child events computed from successive values).
 */
class Stream {
  constructor(db, query) {
    this._db = db;
    this._query = query;
    this._registrations = [];
    this._node = undefined; // undefined until the first event
    this._source = null;
    this._retryDelay = RETRY_FIRST_MS;
    this._retryTimer = null;
    this._silenceTimer = null;
    this._closed = false;
    this._generation = 0;
    this._open();
  }

  get isEmpty() { return this._registrations.length === 0; }

  add(registration) {
    this._registrations.push(registration);
    if (this._node !== undefined) {
      // Already loaded: this callback gets the current data now, as if it had just arrived.
      queueMicrotask(() => {
        if (this._registrations.includes(registration)) this._deliver([registration], undefined, this._node);
      });
    }
  }

  remove(eventType, callback) {
    this._registrations = this._registrations.filter((registration) =>
      !((eventType === undefined || registration.eventType === eventType) && (callback === undefined || registration.callback === callback)));
  }

  close() {
    this._closed = true;
    clearTimeout(this._retryTimer);
    clearTimeout(this._silenceTimer);
    this._source?.close();
    this._source = null;
  }

  /** Reopens now with the current credential (after sign-in or -out, a token refresh, going online). */
  reconnect() {
    if (this._closed) return;
    this._source?.close();
    this._source = null;
    clearTimeout(this._retryTimer);
    this._retryDelay = RETRY_FIRST_MS;
    this._open();
  }

  /** Something arrived: the connection is alive. */
  _heard(source) {
    this._db._hearth._connection.set(true);
    clearTimeout(this._silenceTimer);
    this._silenceTimer = setTimeout(() => {
      if (this._source === source) this._failed(source);
    }, SILENCE_MS);
  }

  async _open() {
    const generation = ++this._generation;
    const hearth = this._db._hearth;
    let credential = null;
    try {
      credential = await hearth._credential();
    } catch (error) {
      if (error.code === 'network') return this._retryLater();
      // The session ended; listen signed out (the rules decide what is still readable).
    }
    if (this._closed || generation !== this._generation) return;
    // Each open EventSource holds one of the browser's few connections: never keep two.
    this._source?.close();
    const params = new URLSearchParams(this._query._queryString());
    if (credential) params.set('auth', credential);
    const query = params.toString();
    const source = new EventSource(`${hearth.url}${this._db._restPath(this._query._segments)}${query ? `?${query}` : ''}`);
    this._source = source;
    const handle = (type) => (event) => {
      if (this._source !== source) return;
      this._heard(source);
      this._handle(type, event.data);
    };
    source.addEventListener('open', () => {
      if (this._source !== source) return;
      this._retryDelay = RETRY_FIRST_MS;
      this._heard(source);
    });
    source.addEventListener('keep-alive', () => {
      if (this._source === source) this._heard(source);
    });
    source.addEventListener('put', handle('put'));
    source.addEventListener('patch', handle('patch'));
    source.addEventListener('cancel', handle('cancel'));
    source.addEventListener('auth_revoked', handle('auth_revoked'));
    source.addEventListener('error', () => {
      if (this._source === source) this._failed(source);
    });
  }

  _handle(type, data) {
    if (type === 'auth_revoked') {
      // The token expired under us: fetch a fresh one (which reopens every stream).
      this._db._hearth.auth.getIdToken(true).catch(() => this.reconnect());
      return;
    }
    if (type === 'cancel') {
      const reason = String(parseJSON(data, data) || 'Permission denied');
      this._cancel(HearthError.fromResponse(/denied/i.test(reason) ? 401 : 400, reason));
      return;
    }
    const event = parseJSON(data, null);
    if (!event || typeof event.path !== 'string') return;
    const { path, data: value } = event;
    const segments = splitPath(path);
    let node = this._node ?? null;
    if (type === 'put') {
      node = withNodeAt(node, segments, value);
    } else {
      for (const [relative, child] of Object.entries(value ?? {})) node = withNodeAt(node, [...segments, ...splitPath(relative)], child);
    }
    const previous = this._node;
    this._node = node;
    this._deliver(this._registrations, previous, node);
  }

  /**
   * The stream broke. EventSource does not say why, so a plain read of the same query tells a
   * refusal (given to the cancel callbacks) from a lost connection (retried with backoff).
   */
  async _failed(source) {
    source.close();
    this._source = null;
    clearTimeout(this._silenceTimer);
    // A reconnect (new token, back online) while the probe runs has opened a new source already.
    const generation = this._generation;
    const superseded = () => this._closed || generation !== this._generation;
    const hearth = this._db._hearth;
    // Shallow keeps the probe cheap; it cannot be combined with query parameters.
    const query = this._query._queryString() || 'shallow=true';
    try {
      await hearth._request('GET', `${this._db._restPath(this._query._segments)}?${query}`);
    } catch (error) {
      if (superseded()) return;
      if (error.code === 'network' || error.code === 'server') return this._retryLater();
      return this._cancel(error);
    }
    if (!superseded()) this._retryLater();
  }

  _retryLater() {
    if (this._closed) return;
    this._db._hearth._connection.set(false);
    const delay = this._retryDelay * (0.8 + Math.random() * 0.4);
    this._retryDelay = Math.min(this._retryDelay * 2, RETRY_MAX_MS);
    clearTimeout(this._retryTimer);
    this._retryTimer = setTimeout(() => this._open(), delay);
  }

  _cancel(error) {
    const registrations = this._registrations;
    this._registrations = [];
    this.close();
    this._db._streams.delete(this._query._identity());
    for (const registration of registrations) registration.cancelCallback?.(error);
  }

  /** Tells `registrations` how the value went from `previous` (undefined: never seen) to `node`. */
  _deliver(registrations, previous, node) {
    const first = previous === undefined;
    if (!first && sameNode(previous, node)) return;
    const order = this._query._params.order;
    const snapshot = (key, child) => new DataSnapshot(this._query.ref.child(key), child);
    const oldEntries = first ? [] : orderedEntries(previous, order);
    const newEntries = orderedEntries(node, order);
    const oldByKey = new Map(oldEntries);
    const newByKey = new Map(newEntries);
    const previousKey = (entries) => {
      const map = new Map();
      entries.forEach(([key], index) => map.set(key, index > 0 ? entries[index - 1][0] : null));
      return map;
    };
    const newPrevious = previousKey(newEntries);
    // Children kept on both sides: whether their place among each other changed is a move.
    const keptOld = previousKey(oldEntries.filter(([key]) => newByKey.has(key)));
    const keptNew = previousKey(newEntries.filter(([key]) => oldByKey.has(key)));

    const events = [];
    for (const [key, child] of oldEntries) {
      if (!newByKey.has(key)) events.push(['child_removed', snapshot(key, child), null]);
    }
    for (const [key, child] of newEntries) {
      if (!oldByKey.has(key)) events.push(['child_added', snapshot(key, child), newPrevious.get(key)]);
    }
    for (const [key, child] of newEntries) {
      if (oldByKey.has(key) && !sameNode(oldByKey.get(key), child) && keptOld.get(key) !== keptNew.get(key)) {
        events.push(['child_moved', snapshot(key, child), newPrevious.get(key)]);
      }
    }
    for (const [key, child] of newEntries) {
      if (oldByKey.has(key) && !sameNode(oldByKey.get(key), child)) events.push(['child_changed', snapshot(key, child), newPrevious.get(key)]);
    }
    events.push(['value', this._query._snapshot(node), undefined]);

    for (const [type, eventSnapshot, prevKey] of events) {
      for (const registration of registrations) {
        if (registration.eventType !== type || !this._registrations.includes(registration)) continue;
        try {
          if (type === 'value') registration.callback(eventSnapshot);
          else registration.callback(eventSnapshot, prevKey);
        } catch (error) {
          // One failing callback must not stop the others.
          queueMicrotask(() => { throw error; });
        }
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
      createdAt: raw.createdAt ? Number(raw.createdAt) : null,
      lastLoginAt: raw.lastLoginAt ? Number(raw.lastLoginAt) : null,
    };
  }
}
