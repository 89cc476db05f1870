/**
 * One WebSocket to the server's realtime protocol (`/.ws`, Firebase's wire protocol), for what
 * only a connection can do: say whether this page is connected (`.info/connected`) and keep
 * onDisconnect operations, which the server runs when the connection ends (a closed tab, a
 * lost network). Reads and writes still go over REST and Server-Sent Events.
 *
 * The link opens on first use, signs in with the user's ID token (again when it changes),
 * reconnects with backoff, and sends the protocol's keep-alive. onDisconnect operations belong
 * to one connection: as with Firebase, register them again each time `.info/connected` turns
 * true.
 */

const MAX_FRAME = 16384;
const KEEP_ALIVE_MS = 45000;

export class RealtimeLink {
  /**
   * @param {object} options
   * @param {string} options.url the server's base URL (http or https)
   * @param {() => Promise<string|null>} options.credential the ID token (or admin token), or null
   * @param {(code: string, message: string) => Error} options.error makes the error a failed request rejects with
   */
  constructor({ url, credential, error }) {
    this._url = `${url.replace(/^http/, 'ws')}/.ws?v=5`;
    this._credential = credential;
    this._error = error;
    this._socket = null;
    this._connected = false;
    this._observers = new Set();
    this._pending = new Map();
    this._nextRequest = 1;
    this._backoff = 1000;
    this._stopped = true;
    this._chunks = null;
  }

  get connected() { return this._connected; }

  /** Calls `callback(connected)` now and on every change; opens the link. */
  observe(callback) {
    this._observers.add(callback);
    this._start();
    queueMicrotask(() => this._observers.has(callback) && callback(this._connected));
    return () => this._observers.delete(callback);
  }

  /** Sends request `action` with `body` once connected; resolves with its data. */
  request(action, body) {
    this._start();
    return new Promise((resolve, reject) => {
      const send = () => {
        const id = this._nextRequest++;
        this._pending.set(id, { resolve, reject });
        this._send({ t: 'd', d: { r: id, a: action, b: body } });
      };
      if (this._connected) send();
      else {
        // Queued until the connection (and its sign-in) is ready.
        const stop = this.observe((connected) => {
          if (!connected) return;
          stop();
          send();
        });
      }
    });
  }

  /** Signs the connection in again (the user's token changed, or they signed out). */
  async reauthenticate() {
    if (!this._connected) return;
    await this._authenticate();
  }

  _start() {
    if (!this._stopped) return;
    this._stopped = false;
    this._open();
  }

  _open() {
    let socket;
    try {
      socket = new WebSocket(this._url);
    } catch {
      this._retry();
      return;
    }
    this._socket = socket;
    socket.onmessage = (event) => this._receive(event.data);
    socket.onclose = () => {
      if (this._socket !== socket) return;
      this._socket = null;
      clearInterval(this._keepAlive);
      this._setConnected(false);
      for (const { reject } of this._pending.values()) reject(this._error('network', 'The connection was lost.'));
      this._pending.clear();
      this._retry();
    };
  }

  _retry() {
    const delay = this._backoff;
    this._backoff = Math.min(this._backoff * 1.5, 30000);
    setTimeout(() => this._open(), delay);
  }

  _send(message) {
    if (!this._socket || this._socket.readyState !== WebSocket.OPEN) return;
    const text = JSON.stringify(message);
    this._lastSent = Date.now();
    if (text.length <= MAX_FRAME) {
      this._socket.send(text);
      return;
    }
    const chunks = [];
    for (let index = 0; index < text.length; index += MAX_FRAME) chunks.push(text.slice(index, index + MAX_FRAME));
    this._socket.send(String(chunks.length));
    for (const chunk of chunks) this._socket.send(chunk);
  }

  _receive(frame) {
    if (this._chunks) {
      this._chunks.parts.push(frame);
      if (this._chunks.parts.length < this._chunks.count) return;
      frame = this._chunks.parts.join('');
      this._chunks = null;
    } else if (frame.length <= 6 && /^\d+$/.test(frame)) {
      this._chunks = { count: Number(frame), parts: [] };
      return;
    }
    let message;
    try {
      message = JSON.parse(frame);
    } catch {
      return;
    }
    if (message.t === 'c' && message.d?.t === 'h') {
      this._backoff = 1000;
      this._authenticate().then(() => this._setConnected(true), () => this._socket?.close());
      this._keepAlive = setInterval(() => {
        if (Date.now() - (this._lastSent ?? 0) >= KEEP_ALIVE_MS) {
          this._lastSent = Date.now();
          this._socket?.send('0');
        }
      }, KEEP_ALIVE_MS / 3);
      return;
    }
    const data = message.t === 'd' ? message.d : null;
    if (data && typeof data.r === 'number') {
      const waiting = this._pending.get(data.r);
      if (!waiting) return;
      this._pending.delete(data.r);
      const status = data.b?.s;
      if (status === 'ok') waiting.resolve(data.b.d ?? null);
      else waiting.reject(this._error(status === 'permission_denied' ? 'permission-denied' : 'invalid', String(data.b?.d ?? status)));
    } else if (data?.a === 'ac') {
      // The credential expired: sign in again with a fresh one.
      this._authenticate(true).catch(() => this._socket?.close());
    }
  }

  /** `auth` with the current credential (or `unauth`), answered before anything else is sent. */
  async _authenticate(forceRefresh = false) {
    const credential = await this._credential(forceRefresh);
    const id = this._nextRequest++;
    const answered = new Promise((resolve, reject) => this._pending.set(id, { resolve, reject }));
    this._send({ t: 'd', d: { r: id, a: credential ? 'auth' : 'unauth', b: credential ? { cred: credential } : {} } });
    await answered;
  }

  _setConnected(connected) {
    if (connected === this._connected) return;
    this._connected = connected;
    for (const observer of [...this._observers]) observer(connected);
  }
}
