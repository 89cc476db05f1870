// The console's own HTTP transport, for what the shared client (/lib/hearth.js) does not do:
// databases other than the default (`ns=`), byte-level progress, raw SSE for path-level tree
// updates, authorised blob downloads, the server's metrics, recent problems and request log,
// its backups, its functions, and the releases of the app it hosts. Every request carries the
// admin token; failures become ConsoleErrors whose message is plain words.

/** An error whose `message` can be shown to the operator as is. */
export class ConsoleError extends Error {
  constructor(message, status = 0) {
    super(message);
    this.name = 'ConsoleError';
    this.status = status;
  }
}

/** Words for a failed response, from its status and the server's error body (`{error: text}` or `{error: {message}}`). */
export function errorWords(status, body) {
  const detail = typeof body?.error === 'string' ? body.error : body?.error?.message;
  if (status === 401 || status === 403) {
    return detail && !/^permission denied\.?$/i.test(detail)
      ? `Permission denied: ${detail}`
      : 'Permission denied: the admin token was refused.';
  }
  if (status === 404) return detail ? `Not found: ${detail}` : 'Not found.';
  if (status === 413) return `Too large: ${detail || 'the server refused a request this big.'}`;
  if (status === 412) return 'The value changed on the server in the meantime; reload and try again.';
  if (status >= 500) return `The server failed (${status})${detail ? `: ${detail}` : '.'}`;
  return detail || `The request failed (${status}).`;
}

export const OFFLINE_WORDS = 'Offline: the server could not be reached.';

/** Encodes a database or storage path for a URL, segment by segment. */
export function encodePath(path) {
  return path.split('/').filter(Boolean).map(encodeURIComponent).join('/');
}

export class AdminApi {
  /**
   * @param {object} options
   * @param {string} options.origin the server, e.g. location.origin
   * @param {string} options.token the admin token
   * @param {string} options.bucket the storage bucket
   * @param {string|null} options.database the database (`ns=`), null for the server's default
   */
  constructor({ origin, token, bucket, database = null }) {
    Object.assign(this, { origin, token, bucket, database });
  }

  get authHeader() { return `Bearer ${this.token}`; }

  /** `/<path>.json?ns=…&…`; `params` values are added as given (already JSON where needed). */
  dbUrl(path, params = {}) {
    const url = new URL(`${this.origin}/${encodePath(path)}.json`);
    if (this.database) url.searchParams.set('ns', this.database);
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    return url.toString();
  }

  /** A stream URL: EventSource cannot send headers, so the token goes in `auth=`. */
  streamUrl(path, params = {}) {
    return this.dbUrl(path, { ...params, auth: this.token });
  }

  rulesUrl() {
    const url = new URL(`${this.origin}/.settings/rules.json`);
    if (this.database) url.searchParams.set('ns', this.database);
    return url.toString();
  }

  /** A storage object's URL (`name` null: the bucket's object list). */
  storageUrl(name = null, params = {}) {
    const base = `${this.origin}/v0/b/${encodeURIComponent(this.bucket)}/o`;
    const url = new URL(name === null ? base : `${base}/${encodeURIComponent(name)}`);
    for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
    return url.toString();
  }

  /** The server's figures in Prometheus's text format (`GET /metrics`, docs/operations.md). */
  async metrics() {
    return (await this.request('GET', `${this.origin}/metrics`, { as: 'response' })).text();
  }

  /**
   * The server's figures over the last hours, oldest first (`GET /.hearth/metrics/history`):
   * `{intervalSeconds, capacity, samples}`; `params`: `since`, `until` (ms since 1970).
   */
  async metricsHistory(params = {}) {
    const body = await this.request('GET', this.adminUrl('/.hearth/metrics/history', params));
    return { intervalSeconds: body?.intervalSeconds ?? 0, capacity: body?.capacity ?? 0, samples: body?.samples ?? [] };
  }

  /**
   * The latest warnings and errors the server logged, newest first (`GET /.hearth/logs`);
   * `params`: `since`, `until` (ms since 1970).
   */
  async recentLogs(params = {}) {
    return (await this.request('GET', this.adminUrl('/.hearth/logs', params)))?.entries ?? [];
  }

  /**
   * Every location under `path` whose key contains `text`, ignoring case (`GET /.hearth/data/search`):
   * `{matches: [{path, value} | {path, children}], visited, complete, stoppedAt}`.
   */
  async searchKeys(path, text, params = {}) {
    return this.request('GET', this.dataUrl('search', path, { q: text, ...params }));
  }

  /** `${origin}${path}?…` with `params` as given. */
  adminUrl(path, params = {}) {
    const url = new URL(`${this.origin}${path}`);
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    return url.toString();
  }

  /**
   * The latest requests the server answered, newest first (`GET /.hearth/requests`);
   * `params`: `limit`, `status` (`2xx`…), `path` (a prefix), `since`, `until` (ms since 1970).
   */
  async requestLog(params = {}) {
    const url = new URL(`${this.origin}/.hearth/requests`);
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    const body = await this.request('GET', url.toString());
    return { entries: body?.entries ?? [], capacity: body?.capacity ?? 0 };
  }

  /**
   * How big a location is, cheaply (`GET /.hearth/data/summary`): `{children, nodes, more}`,
   * its nodes counted up to `cap` (`more` when there are more).
   */
  async dataSummary(path, cap) {
    return this.request('GET', this.dataUrl('summary', path, { cap: String(cap) }));
  }

  /**
   * Up to `limit` children of a location in key order, without their values
   * (`GET /.hearth/data/children`): `{children, keys: [{key, value} | {key, children}], more}`.
   * `params`: `startAt`, `startAfter`, `endAt` (plain keys) and `limit`.
   */
  async dataChildren(path, params = {}) {
    return this.request('GET', this.dataUrl('children', path, params));
  }

  dataUrl(endpoint, path, params) {
    const url = new URL(`${this.origin}/.hearth/data/${endpoint}`);
    url.searchParams.set('path', `/${path}`);
    if (this.database) url.searchParams.set('ns', this.database);
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    return url.toString();
  }

  /** The backups in the server's backup folder and the one running (`GET /.hearth/backups`). */
  backups() {
    return this.request('GET', `${this.origin}/.hearth/backups`);
  }

  /** How far the running backup is (`{ running }`, null when none runs), without listing them. */
  backupProgress() {
    return this.request('GET', `${this.origin}/.hearth/backups?progress`);
  }

  /** Makes a backup now, resolving once it is written (`POST /.hearth/backups`). */
  backUpNow() {
    return this.request('POST', `${this.origin}/.hearth/backups`);
  }

  /** `{ backup, database, path }`: the value there now and in the backup, by size. */
  previewRestore(target) {
    return this.request('POST', `${this.origin}/.hearth/backups/preview`, { body: target });
  }

  /** `{ backup, database, path }`: puts the backup's value back there, as one write. */
  restoreFromBackup(target) {
    return this.request('POST', `${this.origin}/.hearth/backups/restore`, { body: target });
  }

  /** The functions with their triggers, processes and backlogs, and the latest attempts (`GET /.hearth/functions`). */
  functions() {
    return this.request('GET', `${this.origin}/.hearth/functions`);
  }

  /** The latest lines a function's process printed, oldest first (`GET /.hearth/functions/logs`). */
  async functionLogs(name) {
    const url = new URL(`${this.origin}/.hearth/functions/logs`);
    url.searchParams.set('function', name);
    return (await this.request('GET', url.toString()))?.lines ?? [];
  }

  /** The events given up on, of one function or (`name` null) all (`GET /.hearth/functions/dead-letters`). */
  async deadLetters(name = null) {
    const url = new URL(`${this.origin}/.hearth/functions/dead-letters`);
    if (name) url.searchParams.set('function', name);
    return (await this.request('GET', url.toString()))?.deadLetters ?? [];
  }

  /** `{ source, sequence }`: puts a dead letter back at the end of its function's queue. */
  replayDeadLetter(target) {
    return this.request('POST', `${this.origin}/.hearth/functions/dead-letters/replay`, { body: target });
  }

  /** `{ source, sequence }`: removes a dead letter for good. */
  discardDeadLetter(target) {
    return this.request('POST', `${this.origin}/.hearth/functions/dead-letters/discard`, { body: target });
  }

  /**
   * The hosted app (`GET /.hearth/hosting`): `{mode, folder, releasesFolder, live, releases, deployCommand}`,
   * the releases newest first.
   */
  hosting() {
    return this.request('GET', `${this.origin}/.hearth/hosting`);
  }

  /** `{ release, files: [{site, path, bytes}], total }`: a release's first 2,000 files (`GET /.hearth/hosting/files`). */
  hostingFiles(id) {
    const url = new URL(`${this.origin}/.hearth/hosting/files`);
    url.searchParams.set('release', id);
    return this.request('GET', url.toString());
  }

  /** Makes a release live again (`POST /.hearth/hosting/rollback`), resolving to it. */
  async rollBackHosting(id) {
    return (await this.request('POST', `${this.origin}/.hearth/hosting/rollback`, { body: { release: id } }))?.live;
  }

  /**
   * Sends a request with the admin token. `body` is sent as JSON unless it is a string or Blob.
   * Resolves to the parsed JSON body (null when empty); `as: 'response'` gives the Response.
   */
  async request(method, url, { body, headers = {}, as = 'json' } = {}) {
    const init = { method, headers: { Authorization: this.authHeader, ...headers } };
    if (body !== undefined) {
      const raw = typeof body === 'string' || body instanceof Blob;
      init.body = raw ? body : JSON.stringify(body);
      if (!raw) init.headers['Content-Type'] = 'application/json';
    }
    let response;
    try {
      response = await fetch(url, init);
    } catch {
      throw new ConsoleError(OFFLINE_WORDS);
    }
    if (!response.ok) throw new ConsoleError(errorWords(response.status, await readJSON(response)), response.status);
    if (as === 'response') return response;
    return readJSON(response);
  }

  /**
   * Sends a body with XMLHttpRequest, the one browser API that reports upload progress.
   * `onProgress(sent, total)` is called as bytes leave; resolves to the parsed JSON answer.
   */
  upload(method, url, body, { contentType, onProgress } = {}) {
    return new Promise((resolve, reject) => {
      const request = new XMLHttpRequest();
      request.open(method, url);
      request.setRequestHeader('Authorization', this.authHeader);
      if (contentType) request.setRequestHeader('Content-Type', contentType);
      request.upload.onprogress = (event) => onProgress?.(event.loaded, event.lengthComputable ? event.total : null);
      request.onerror = () => reject(new ConsoleError(OFFLINE_WORDS));
      request.onload = () => {
        const parsed = parseJSON(request.responseText);
        if (request.status >= 200 && request.status < 300) resolve(parsed);
        else reject(new ConsoleError(errorWords(request.status, parsed), request.status));
      };
      request.send(body);
    });
  }

  /**
   * Downloads a URL as a Blob, reading the stream to report progress: `onProgress(received,
   * total)`, with total from Content-Length when the server sends it (null otherwise).
   */
  async download(url, { onProgress, type } = {}) {
    const response = await this.request('GET', url, { as: 'response' });
    const length = Number(response.headers.get('Content-Length')) || null;
    const reader = response.body.getReader();
    const chunks = [];
    let received = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      received += value.length;
      onProgress?.(received, length);
    }
    return new Blob(chunks, { type: type ?? response.headers.get('Content-Type') ?? '' });
  }
}

async function readJSON(response) {
  return parseJSON(await response.text());
}

function parseJSON(text) {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return { error: text };
  }
}
