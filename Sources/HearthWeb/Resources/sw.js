// The web app's service worker: keeps the app's own files (its shell) so the app opens, and
// every screen's module loads, while the server cannot be reached, and the photos it showed.
// Data is not its business: the database client keeps its own offline cache (IndexedDB), and
// nothing the server answers for the database or accounts passes through here (see
// docs/web-app-offline.md).
//
// The shell is kept as one snapshot of every file, named after a hash of their contents, and
// served from it first (stale-while-revalidate): a page never mixes files of two versions, and
// opening it costs no round trip. After each opening of the app, the snapshot is checked
// against the server (conditional requests); when anything changed, a new snapshot is stored
// whole and replaces the old one, and open pages are told a new version is ready.
//
// It also shows the push notifications the server sends (see the end of this file and
// app/push.js).

/** The app's files. Tests/Browser/test_app_offline.py checks that it lists every file under app/ and lib/. */
const SHELL = [
  '/',
  '/app/actions.js',
  '/app/auth-pages.js',
  '/app/app.css',
  '/app/boot.js',
  '/app/components.js',
  '/app/connection-state.js',
  '/app/cropper.js',
  '/app/icons.js',
  '/app/liked-by.js',
  '/app/main.js',
  '/app/mentions.js',
  '/app/notification-groups.js',
  '/app/notifications-sync.js',
  '/app/paging.js',
  '/app/people-words.js',
  '/app/photo-viewer.js',
  '/app/post-queue.js',
  '/app/pending.js',
  '/app/presence.js',
  '/app/profile-editor.js',
  '/app/push.js',
  '/app/rich-text.js',
  '/app/screen-cache.js',
  '/app/screen-place.js',
  '/app/social.css',
  '/app/social.js',
  '/app/ui.js',
  '/app/views/auth.js',
  '/app/views/chat.js',
  '/app/views/compose.js',
  '/app/views/feed.js',
  '/app/views/moderation.js',
  '/app/views/notification-settings.js',
  '/app/views/notifications.js',
  '/app/views/post.js',
  '/app/views/posts.js',
  '/app/views/profile.js',
  '/app/views/saved.js',
  '/app/views/search.js',
  '/app/views/tag.js',
  '/lib/hearth-error.js',
  '/lib/hearth.js',
  '/lib/database/cache-records.js',
  '/lib/database/connection-auth.js',
  '/lib/database/connection.js',
  '/lib/database/data-snapshot.js',
  '/lib/database/database.js',
  '/lib/database/frames.js',
  '/lib/database/index.js',
  '/lib/database/long-poll-transport.js',
  '/lib/database/node.js',
  '/lib/database/offline-cache.js',
  '/lib/database/on-disconnect.js',
  '/lib/database/path-tree.js',
  '/lib/database/path.js',
  '/lib/database/pending-writes.js',
  '/lib/database/persistence.js',
  '/lib/database/push-id.js',
  '/lib/database/query-params.js',
  '/lib/database/query.js',
  '/lib/database/reference.js',
  '/lib/database/server-cache.js',
  '/lib/database/server-values.js',
  '/lib/database/sha1.js',
  '/lib/database/sync-core.js',
  '/lib/database/sync-engine.js',
  '/lib/database/transaction-queue.js',
  '/lib/database/view.js',
  '/lib/database/websocket-transport.js',
];
const SHELL_PATHS = new Set(SHELL);
const PREFIX = 'hearth-shell-';
/** A cache of its own that names the current snapshot (workers are stopped and started often). */
const META = 'hearth-shell-meta';
const CURRENT_KEY = '/__hearth/shell-version';
/** Checks against the server at most this often (each is ~50 conditional requests). */
const CHECK_INTERVAL_MS = 30_000;
/** After the page that triggered it, so the check does not compete with its start-up. */
const CHECK_DELAY_MS = 2_000;

let current = null; // the snapshot's cache name, once known
let checking = null;
let lastCheck = 0;

async function currentName() {
  if (current) return current;
  const meta = await caches.open(META);
  const stored = await meta.match(CURRENT_KEY);
  current = stored ? await stored.text() : null;
  return current;
}

function hex(buffer) {
  return [...new Uint8Array(buffer)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

/**
 * Fetches every shell file (revalidating with the HTTP cache's ETags) and, when they differ
 * from the current snapshot, stores them as the new one and drops the old. Any failure leaves
 * the current snapshot as it is.
 * @returns {Promise<boolean>} whether a new snapshot was stored
 */
async function refreshShell() {
  const responses = await Promise.all(SHELL.map(async (path) => {
    const response = await fetch(path, { cache: 'no-cache', credentials: 'same-origin' });
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
    return response;
  }));
  const bodies = await Promise.all(responses.map((response) => response.clone().arrayBuffer()));
  const encoder = new TextEncoder();
  const parts = [];
  SHELL.forEach((path, index) => parts.push(encoder.encode(`${path}\n${bodies[index].byteLength}\n`), new Uint8Array(bodies[index])));
  const whole = new Uint8Array(parts.reduce((sum, part) => sum + part.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    whole.set(part, offset);
    offset += part.byteLength;
  }
  const name = PREFIX + hex(await crypto.subtle.digest('SHA-256', whole)).slice(0, 16);
  const previous = await currentName();
  if (name === previous) return false;
  const cache = await caches.open(name);
  await Promise.all(SHELL.map((path, index) => cache.put(path, responses[index])));
  // Only a complete snapshot becomes the current one.
  const meta = await caches.open(META);
  await meta.put(CURRENT_KEY, new Response(name));
  current = name;
  await dropOldSnapshots();
  if (previous) {
    for (const client of await self.clients.matchAll({ type: 'window' })) client.postMessage({ type: 'hearth-shell-updated' });
  }
  return true;
}

async function dropOldSnapshots() {
  const keep = await currentName();
  for (const name of await caches.keys()) {
    if (name.startsWith(PREFIX) && name !== keep && name !== META) await caches.delete(name);
  }
}

/** One check at a time, at most every CHECK_INTERVAL_MS; failures (server down) wait for the next. */
function checkSoon(delay) {
  if (checking || Date.now() - lastCheck < CHECK_INTERVAL_MS) return checking ?? Promise.resolve();
  checking = new Promise((resolve) => setTimeout(resolve, delay))
    .then(() => refreshShell())
    .catch(() => false)
    .finally(() => {
      lastCheck = Date.now();
      checking = null;
    });
  return checking;
}

self.addEventListener('install', (event) => {
  // Installed only with a complete snapshot; then in charge at once (pages opened before it
  // load their later modules through it, so they work offline too).
  event.waitUntil(refreshShell().then(() => {
    lastCheck = Date.now();
    return self.skipWaiting();
  }));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(dropOldSnapshots().then(() => self.clients.claim()));
});

self.addEventListener('message', (event) => {
  // A page asks for a check now (tests, and a page that saw the server come back).
  if (event.data?.type === 'hearth-shell-check') {
    lastCheck = 0;
    event.waitUntil(checkSoon(0).then(() => event.source?.postMessage({ type: 'hearth-shell-checked' })));
  }
});

/** The shell path a request is for, or null for everything the worker leaves alone. */
function shellPath(request) {
  if (request.method !== 'GET') return null;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin || url.search) return null;
  if (request.mode === 'navigate') return url.pathname === '/' || url.pathname === '/index.html' ? '/' : null;
  return SHELL_PATHS.has(url.pathname) ? url.pathname : null;
}

/** The current snapshot's cache, opened once per worker start. */
let opened = { name: null, cache: null };

async function fromShell(event, path) {
  const name = await currentName();
  if (!name) return fetch(event.request);
  // Answered with the stored response itself (not a copy): Chromium keeps compiled code for
  // scripts stored in Cache Storage, which a made-up response would lose.
  if (opened.name !== name) opened = { name, cache: caches.open(name) };
  return (await (await opened.cache).match(path)) ?? fetch(event.request);
}

// --- Photos -------------------------------------------------------------------------------

/** Stored files the app has shown (photos, avatars), kept so the app opens with them offline. */
const PHOTOS = 'hearth-photos';
/** At most this many; the oldest go first. */
const PHOTOS_KEPT = 400;

/** Whether `request` downloads a stored file of this server (Firebase Storage's `?alt=media`). */
function isPhoto(request) {
  if (request.method !== 'GET' || request.headers.has('range')) return false;
  const url = new URL(request.url);
  return url.origin === self.location.origin && /^\/v0\/b\/[^/]+\/o\/[^/]+$/.test(url.pathname) && url.searchParams.get('alt') === 'media';
}

/** From the server when it answers (and kept); from what was kept when it cannot be reached. */
async function photo(event) {
  const cache = await caches.open(PHOTOS);
  let response;
  try {
    response = await fetch(event.request);
  } catch (error) {
    const kept = await cache.match(event.request);
    if (kept) return kept;
    throw error;
  }
  if (response.status === 200) event.waitUntil(cache.put(event.request, response.clone()).then(() => trimPhotos(cache)).catch(() => {}));
  else if (response.status === 404) event.waitUntil(cache.delete(event.request));
  return response;
}

async function trimPhotos(cache) {
  const kept = await cache.keys();
  for (const request of kept.slice(0, Math.max(0, kept.length - PHOTOS_KEPT))) await cache.delete(request);
}

self.addEventListener('fetch', (event) => {
  if (isPhoto(event.request)) {
    event.respondWith(photo(event));
    return;
  }
  const path = shellPath(event.request);
  // Not answered here: the database (/.ws, /.lp, ….json), accounts, files, the console's own
  // files, init.json. (The console's /lib/ modules come from the snapshot too.)
  if (!path) return;
  event.respondWith(fromShell(event, path));
  if (event.request.mode === 'navigate') event.waitUntil(checkSoon(CHECK_DELAY_MS));
});

// --- Push notifications (app/push.js subscribes; the server's functions send) -------------

/** Where a notification without its own (or with a bad) address leads. */
const DEFAULT_HASH = '#/notifications';

/**
 * What a push message shows: the server sends `{kind, title, body, url, tag}` as JSON
 * (PushDelivery.Message); anything else still shows, as a generic notification.
 */
function notificationOf(data) {
  let message = {};
  try {
    message = data?.json() ?? {};
  } catch {
    message = { body: data?.text() ?? '' };
  }
  const text = (value, limit) => (typeof value === 'string' ? value.slice(0, limit) : '');
  const url = text(message.url, 500);
  return {
    title: text(message.title, 200) || 'Hearth',
    options: {
      body: text(message.body, 500),
      // A newer push with the same tag (a conversation's) replaces the older one.
      tag: text(message.tag, 200) || undefined,
      data: { hash: url.startsWith('#/') ? url : DEFAULT_HASH },
    },
  };
}

self.addEventListener('push', (event) => {
  // A push must show a notification (userVisibleOnly): always one, even for a message not understood.
  const { title, options } = notificationOf(event.data);
  event.waitUntil(self.registration.showNotification(title, options));
});

/** Shows `hash` in an open window of the app (brought forward), or opens one. */
async function openApp(hash) {
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const open = windows.find((client) => {
    const url = new URL(client.url);
    return url.origin === self.location.origin && (url.pathname === '/' || url.pathname === '/index.html');
  });
  if (open) {
    open.postMessage({ type: 'hearth-open', hash });
    try {
      await open.focus();
    } catch {
      // Focus is the browser's to give; the window shows the screen anyway.
    }
    return;
  }
  await self.clients.openWindow(`/${hash}`);
}

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const hash = event.notification.data?.hash;
  event.waitUntil(openApp(typeof hash === 'string' && hash.startsWith('#/') ? hash : DEFAULT_HASH));
});
