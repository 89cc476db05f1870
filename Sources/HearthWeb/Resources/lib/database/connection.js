// One realtime connection to the server (docs/protocol.md): which transport carries it, the
// handshake, numbered requests and their answers, the server's pushes, and reconnecting with
// backoff. What is listened to and written is the sync engine's business: after each handshake
// it restores its state on the new connection.

import { LongPollTransport } from './long-poll-transport.js';
import { WebSocketTransport } from './websocket-transport.js';

const FIRST_DELAY_MS = 1000;
const MAX_DELAY_MS = 30_000;
/// After this many WebSocket attempts fail before their handshake, try long-polling.
const WEBSOCKET_FAILURES_BEFORE_FALLBACK = 2;
/// How long a browser known to lose WebSockets starts with long-polling.
const FALLBACK_MEMORY_MS = 10 * 60 * 1000;

/// The error a request is rejected with when its connection ends before the answer.
export class ConnectionLost extends Error {
  constructor() {
    super('The connection was lost before the server answered.');
    this.name = 'ConnectionLost';
  }
}

/// A realtime connection that keeps itself open until stopped.
export class Connection {
  /// @param {object} options
  /// @param {string} options.url the server (http or https)
  /// @param {string|null} options.namespace the database name (`ns`), when not the server's default
  /// @param {{onReady: (handshake: {timestamp: number, sessionId: string}) => void, onLost: () => void,
  ///   onPush: (action: string, body: object) => void}} options.delegate
  constructor({ url, namespace, delegate }) {
    this._base = url.replace(/\/+$/, '');
    this._namespace = namespace;
    this._delegate = delegate;
    this._transport = null;
    this._ready = false;
    this._running = false;
    this._delay = FIRST_DELAY_MS;
    this._timer = null;
    this._nextRequest = 1;
    this._pending = new Map();
    this._lastSessionId = null;
    this._websocketFailures = 0;
    this._memoryKey = `hearth:long-polling:${this._base}`;
    this._onOnline = () => this.retryNow();
    this.transportKind = null;
  }

  /// True between the handshake and the end of the connection.
  get isReady() { return this._ready; }

  start() {
    if (this._running) return;
    this._running = true;
    if (typeof window !== 'undefined') window.addEventListener('online', this._onOnline);
    this._open();
  }

  /// Closes the connection and stays closed until `start` (goOffline).
  stop() {
    if (!this._running) return;
    this._running = false;
    if (typeof window !== 'undefined') window.removeEventListener('online', this._onOnline);
    clearTimeout(this._timer);
    this._transport?.close();
  }

  /// Reconnects at once if waiting to (the browser says it is back online).
  retryNow() {
    if (!this._running || this._transport) return;
    clearTimeout(this._timer);
    this._delay = FIRST_DELAY_MS;
    this._open();
  }

  /// Sends request `action` with `body`; resolves with the answer's { status, data }.
  /// Rejects with ConnectionLost if the connection ends first.
  request(action, body) {
    return new Promise((resolve, reject) => {
      if (!this._ready) return reject(new ConnectionLost());
      const id = this._nextRequest++;
      this._pending.set(id, { resolve, reject });
      this._transport.send({ t: 'd', d: { r: id, a: action, b: body } });
    });
  }

  /// Sends request `action` whose answer does not matter.
  send(action, body) {
    this.request(action, body).catch(() => {});
  }

  _open() {
    const transport = this._chooseTransport();
    if (!transport) {
      this._scheduleRetry();
      return;
    }
    this._transport = transport;
    this.transportKind = transport.kind;
    transport.open();
  }

  _chooseTransport() {
    const params = { v: '5' };
    if (this._namespace) params.ns = this._namespace;
    if (this._lastSessionId) params.ls = this._lastSessionId;
    const delegate = {
      onMessage: (message) => this._receive(transport, message),
      onClose: () => this._closed(transport),
    };
    let transport = null;
    const useWebSocket = WebSocketTransport.isAvailable && !this._remembersFallback()
      && this._websocketFailures < WEBSOCKET_FAILURES_BEFORE_FALLBACK;
    if (useWebSocket || !LongPollTransport.isAvailable) {
      if (!WebSocketTransport.isAvailable) return null;
      const url = `${this._base.replace(/^http/, 'ws')}/.ws?${new URLSearchParams(params)}`;
      transport = new WebSocketTransport(url, delegate);
    } else {
      transport = new LongPollTransport(`${this._base}/.lp`, params, delegate);
    }
    transport.handshook = false;
    return transport;
  }

  _remembersFallback() {
    try {
      const since = Number(localStorage.getItem(this._memoryKey));
      return since > 0 && Date.now() - since < FALLBACK_MEMORY_MS;
    } catch {
      return false;
    }
  }

  _remember(fallback) {
    try {
      if (fallback) localStorage.setItem(this._memoryKey, String(Date.now()));
      else localStorage.removeItem(this._memoryKey);
    } catch {
      // No storage: decided again on each page.
    }
  }

  _receive(transport, message) {
    if (transport !== this._transport) return;
    if (message.t === 'c') return this._control(transport, message.d ?? {});
    const data = message.t === 'd' ? message.d : null;
    if (!data) return;
    if (typeof data.r === 'number') {
      const waiting = this._pending.get(data.r);
      if (!waiting) return;
      this._pending.delete(data.r);
      waiting.resolve({ status: data.b?.s, data: data.b?.d ?? null });
    } else if (typeof data.a === 'string') {
      this._delegate.onPush(data.a, data.b ?? {});
    }
  }

  _control(transport, control) {
    switch (control.t) {
      case 'h': {
        const handshake = control.d ?? {};
        transport.handshook = true;
        this._ready = true;
        this._delay = FIRST_DELAY_MS;
        this._lastSessionId = handshake.s ?? null;
        if (transport.kind === 'websocket') {
          this._websocketFailures = 0;
          this._remember(false);
        } else if (this._websocketFailures > 0 && WebSocketTransport.isAvailable) {
          // WebSockets fail where long-polling works: start with it for a while.
          this._remember(true);
        }
        this._delegate.onReady({ timestamp: Number(handshake.ts) || Date.now(), sessionId: handshake.s ?? null });
        break;
      }
      case 's':
        // The server is going away: reconnect, but not at once.
        this._delay = MAX_DELAY_MS;
        transport.close();
        break;
      case 'r':
        // Asked to reconnect (the host it names is this one: Hearth serves one origin).
        this._delay = 0;
        transport.close();
        break;
      case 'e':
        console.warn(`Hearth: the server reported "${control.d}".`);
        break;
      default:
        // Pongs and the long-polling upgrade's messages need nothing here.
        break;
    }
  }

  _closed(transport) {
    if (transport !== this._transport) return;
    this._transport = null;
    this.transportKind = null;
    const wasReady = this._ready;
    this._ready = false;
    if (!transport.handshook && transport.kind === 'websocket') this._websocketFailures += 1;
    else if (!transport.handshook) this._websocketFailures = 0; // long-polling failed too: the server is away
    const pending = [...this._pending.values()];
    this._pending.clear();
    for (const { reject } of pending) reject(new ConnectionLost());
    if (wasReady) this._delegate.onLost();
    else this._delegate.onAttemptFailed?.();
    if (this._running) this._scheduleRetry();
  }

  _scheduleRetry() {
    clearTimeout(this._timer);
    // 1 s doubling to 30 s, each ±20% so that many clients do not come back at the same moment.
    const delay = this._delay * (0.8 + Math.random() * 0.4);
    this._delay = Math.min(Math.max(this._delay * 2, FIRST_DELAY_MS), MAX_DELAY_MS);
    this._timer = setTimeout(() => {
      if (this._running && !this._transport) this._open();
    }, delay);
  }
}
