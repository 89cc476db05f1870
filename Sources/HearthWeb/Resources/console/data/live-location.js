// A live copy of one database location, kept by one Server-Sent Events stream.
//
// The tree uses the raw stream rather than the shared client's `on('value')` because the
// stream's `put`/`patch` events name the path that changed: the tree redraws and highlights
// just that part instead of comparing whole snapshots on every write.

import { normalize, parsePath, withValueAt } from './values.js';

export class LiveLocation {
  /**
   * @param {import('../api.js').AdminApi} api
   * @param {string[]} keys the location
   * @param {object} options
   * @param {object} options.params query parameters (e.g. a `$key` window for a huge location)
   * @param {(changed: string[]) => void} options.onChange called with the changed path, relative to the location
   * @param {(state: 'connecting'|'live'|'reconnecting'|'failed', words?: string) => void} options.onStatus
   */
  constructor(api, keys, { params = {}, onChange, onStatus }) {
    Object.assign(this, { api, keys, params, onChange, onStatus });
    this.value = null;
    this.source = null;
  }

  open() {
    this.close();
    this.onStatus('connecting');
    const source = new EventSource(this.api.streamUrl(this.keys.join('/'), this.params));
    this.source = source;
    source.onopen = () => this.onStatus('live');
    source.addEventListener('put', (event) => this.apply(event, false));
    source.addEventListener('patch', (event) => this.apply(event, true));
    source.addEventListener('cancel', (event) => {
      this.close();
      this.onStatus('failed', `The server ended the live view: ${parseData(event.data) ?? 'no reason given'}`);
    });
    // Admin tokens do not expire, but a revoked credential is worth one fresh attempt.
    source.addEventListener('auth_revoked', () => this.open());
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) this.failed();
      else this.onStatus('reconnecting');
    };
  }

  close() {
    this.source?.close();
    this.source = null;
  }

  apply(event, isPatch) {
    const { path, data } = JSON.parse(event.data);
    const base = parsePath(path);
    if (isPatch) {
      for (const [relative, child] of Object.entries(data)) {
        this.value = withValueAt(this.value, [...base, ...parsePath(relative)], normalize(child));
      }
    } else {
      this.value = withValueAt(this.value, base, normalize(data));
    }
    this.onChange(base);
  }

  /** EventSource hides the HTTP error of a refused stream; a plain request tells it in words. */
  async failed() {
    this.close();
    try {
      await this.api.request('GET', this.api.dbUrl(this.keys.join('/'), { shallow: 'true' }));
      this.onStatus('failed', 'The live connection closed.');
    } catch (error) {
      this.onStatus('failed', error.message);
    }
  }
}

function parseData(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
