// The realtime protocol over a WebSocket (`/.ws`): frames in and out, and the keep-alive.

import { FrameReader, encodeFrames } from './frames.js';

const KEEP_ALIVE_MS = 45_000;

/// One WebSocket. Tells its owner each whole message (`onMessage`) and, once, that it closed
/// (`onClose(opened)`, opened: whether the socket ever opened).
export class WebSocketTransport {
  static get isAvailable() { return typeof WebSocket === 'function'; }

  /// @param {string} url the `ws(s)://…/.ws?…` URL
  /// @param {{onMessage: (message: object) => void, onClose: (opened: boolean) => void}} delegate
  constructor(url, delegate) {
    this.url = url;
    this.kind = 'websocket';
    this._delegate = delegate;
    this._reader = new FrameReader();
    this._socket = null;
    this._opened = false;
    this._closed = false;
    this._lastSent = 0;
    this._keepAlive = null;
  }

  open() {
    let socket;
    try {
      socket = new WebSocket(this.url);
    } catch {
      queueMicrotask(() => this._finish());
      return;
    }
    this._socket = socket;
    socket.onopen = () => {
      this._opened = true;
      this._lastSent = Date.now();
      // The server drops a silent client: say something every 45 s ("0" is ignored).
      this._keepAlive = setInterval(() => {
        if (Date.now() - this._lastSent >= KEEP_ALIVE_MS) this._sendRaw('0');
      }, KEEP_ALIVE_MS / 3);
    };
    socket.onmessage = (event) => {
      let message;
      try {
        message = this._reader.push(String(event.data));
      } catch {
        return this.close();
      }
      if (message && !this._closed) this._delegate.onMessage(message);
    };
    socket.onclose = () => this._finish();
    socket.onerror = () => this._finish();
  }

  send(message) {
    for (const frame of encodeFrames(message)) this._sendRaw(frame);
  }

  close() {
    if (this._closed) return;
    try {
      this._socket?.close();
    } catch {
      // Closing a socket that never opened can throw; it is gone either way.
    }
    this._finish();
  }

  _sendRaw(text) {
    if (this._closed || !this._socket || this._socket.readyState !== WebSocket.OPEN) return;
    this._lastSent = Date.now();
    this._socket.send(text);
  }

  _finish() {
    if (this._closed) return;
    this._closed = true;
    clearInterval(this._keepAlive);
    if (this._socket) {
      this._socket.onopen = this._socket.onmessage = this._socket.onclose = this._socket.onerror = null;
    }
    this._delegate.onClose(this._opened);
  }
}
