// The realtime protocol over long-polling (`/.lp`), for browsers where WebSocket is missing or
// blocked. As in Firebase's browser SDK, every request is a script (JSONP) loaded in a hidden
// frame of this transport's own, whose answer calls back into this page:
// - `start=t&cb=<n>` opens a session; the answer calls `pLPCommand<n>('start', id, pw)` and
//   gives the handshake as packet 0 through `pRTLPCB<n>(0, [messages])`;
// - polls (`id`, `pw`, `ser`) carry this client's messages as numbered base64 segments
//   (`seg<i>`, `ts<i>` = segments in the message, `d<i>`); the server holds the newest poll
//   until it has messages and answers with the next packet, or `pLPCommand('close')`.

const MAX_URL_DATA = 1800;
const REQUEST_TIMEOUT_MS = 40_000;

function base64Url(text) {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (let index = 0; index < bytes.length; index += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(index, index + 0x8000));
  }
  // Web-safe, with '.' for padding, as the server decodes.
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=/g, '.');
}

/// One long-polling session. The same delegate as ``WebSocketTransport``.
export class LongPollTransport {
  static get isAvailable() { return typeof document !== 'undefined' && typeof window !== 'undefined'; }

  /// @param {string} url the `http(s)://…/.lp` URL
  /// @param {Record<string, string>} params the connection's parameters (`v`, `ns`, `ls`)
  /// @param {{onMessage: (message: object) => void, onClose: (opened: boolean) => void}} delegate
  constructor(url, params, delegate) {
    this.url = url;
    this.kind = 'long-polling';
    this._params = params;
    this._delegate = delegate;
    this._callback = String(Math.floor(Math.random() * 1e9));
    this._frame = null;
    this._id = null;
    this._password = null;
    this._serial = 0;
    this._segment = 0;
    this._outgoing = [];
    this._outstanding = new Set();
    this._packets = new Map();
    this._nextPacket = 0;
    this._closeAfter = null;
    this._opened = false;
    this._closed = false;
    this._onPageHide = () => this._sayGoodbye();
  }

  open() {
    window[`pLPCommand${this._callback}`] = (command, first, second) => this._command(command, first, second);
    window[`pRTLPCB${this._callback}`] = (number, messages) => this._packet(number, messages);
    // A frame of its own: each connect script defines the callbacks' globals for its session.
    const frame = document.createElement('iframe');
    frame.hidden = true;
    frame.tabIndex = -1;
    frame.setAttribute('aria-hidden', 'true');
    (document.body ?? document.documentElement).appendChild(frame);
    this._frame = frame;
    this._load({ ...this._params, start: 't', ser: String(Math.floor(Math.random() * 1e8)), cb: this._callback });
    addEventListener('pagehide', this._onPageHide);
  }

  send(message) {
    const data = base64Url(JSON.stringify(message));
    const chunks = [];
    for (let index = 0; index < data.length; index += MAX_URL_DATA) chunks.push(data.slice(index, index + MAX_URL_DATA));
    for (const chunk of chunks) this._outgoing.push({ serial: this._segment++, total: chunks.length, data: chunk });
    this._pump();
  }

  close() {
    if (this._closed) return;
    if (this._id) this._sayGoodbye();
    this._finish();
  }

  /// Sends what is waiting, and keeps one poll open for the server to answer.
  _pump() {
    if (this._closed || !this._id) return;
    while (this._outgoing.length > 0) {
      const params = { id: this._id, pw: this._password, ser: String(this._serial++) };
      let size = 0;
      let index = 0;
      while (this._outgoing.length > 0 && (index === 0 || size + this._outgoing[0].data.length <= MAX_URL_DATA)) {
        const segment = this._outgoing.shift();
        params[`seg${index}`] = String(segment.serial);
        params[`ts${index}`] = String(segment.total);
        params[`d${index}`] = segment.data;
        size += segment.data.length;
        index += 1;
      }
      this._load(params);
    }
    if (this._outstanding.size === 0) this._load({ id: this._id, pw: this._password, ser: String(this._serial++) });
  }

  _load(params) {
    const document = this._frame?.contentDocument;
    if (!document) return this._finish();
    const script = document.createElement('script');
    script.src = `${this.url}?${new URLSearchParams(params)}`;
    const timer = setTimeout(() => this._finish(), REQUEST_TIMEOUT_MS);
    const done = (failed) => {
      clearTimeout(timer);
      script.remove();
      this._outstanding.delete(script);
      if (this._closed) return;
      if (failed) return this._finish();
      this._pump();
    };
    script.onload = () => done(false);
    script.onerror = () => done(true);
    this._outstanding.add(script);
    (document.body ?? document.documentElement ?? document.appendChild(document.createElement('html'))).appendChild(script);
  }

  _command(command, first, second) {
    if (this._closed) return;
    if (command === 'start') {
      this._id = first;
      this._password = second;
      this._opened = true;
      queueMicrotask(() => this._pump());
    } else if (command === 'close') {
      // After the packet it names (which may still be on its way), or now.
      if (typeof first === 'number' && this._nextPacket <= first) this._closeAfter = first;
      else this._finish();
    }
  }

  _packet(number, messages) {
    if (this._closed) return;
    this._packets.set(number, messages);
    while (this._packets.has(this._nextPacket)) {
      const packet = this._packets.get(this._nextPacket);
      this._packets.delete(this._nextPacket);
      const current = this._nextPacket;
      this._nextPacket += 1;
      for (const message of packet) {
        if (this._closed) return;
        this._delegate.onMessage(message);
      }
      if (this._closeAfter !== null && current >= this._closeAfter) return this._finish();
    }
  }

  /// Tells the server this session ends now (a beacon survives the page going away).
  _sayGoodbye() {
    if (!this._id || typeof navigator?.sendBeacon !== 'function') return;
    const params = new URLSearchParams({ disconn: 't', id: this._id, pw: this._password });
    try {
      navigator.sendBeacon(`${this.url}?${params}`);
    } catch {
      // The server notices the missing polls instead.
    }
  }

  _finish() {
    if (this._closed) return;
    this._closed = true;
    removeEventListener('pagehide', this._onPageHide);
    for (const script of this._outstanding) script.remove();
    this._outstanding.clear();
    this._frame?.remove();
    this._frame = null;
    delete window[`pLPCommand${this._callback}`];
    delete window[`pRTLPCB${this._callback}`];
    this._delegate.onClose(this._opened);
  }
}
