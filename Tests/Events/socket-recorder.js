// Put in the page by record.py before anything else runs (a classic script, not a module):
// replaces WebSocket with a subclass that notes, on the recording's timeline, each socket's
// opening, every frame it carries either way, and its closing. The SDK keeps the WebSocket
// class it finds when it loads, so this must come first.
(() => {
  const Native = window.WebSocket;
  const recording = {
    seq: 0,
    timeline: [],
    sockets: {},
    barrier: 'barrier',
    reset() {
      this.seq = 0;
      this.timeline = [];
      this.sockets = {};
    },
    // The timeline with frames joined into whole messages (a message longer than a frame is
    // sent as a frame holding the number of parts, then the parts) and keep-alives left out.
    messages() {
      const out = [];
      const partial = new Map();
      for (const item of this.timeline) {
        if (item.kind !== 'send' && item.kind !== 'receive') {
          out.push(item);
          continue;
        }
        const key = `${item.conn}/${item.socket}/${item.kind}`;
        const waiting = partial.get(key);
        if (waiting) {
          waiting.parts.push(item.frame);
          if (waiting.parts.length < waiting.count) continue;
          partial.delete(key);
          out.push({ ...waiting.first, message: JSON.parse(waiting.parts.join('')) });
          continue;
        }
        if (/^\d{1,6}$/.test(item.frame)) {
          const count = Number(item.frame);
          if (count > 0) partial.set(key, { count, parts: [], first: { seq: item.seq, kind: item.kind, conn: item.conn, socket: item.socket } });
          continue; // "0" is the SDK's keep-alive
        }
        let message;
        try {
          message = JSON.parse(item.frame);
        } catch {
          message = { unparsed: item.frame };
        }
        out.push({ seq: item.seq, kind: item.kind, conn: item.conn, socket: item.socket, message });
      }
      return out;
    },
  };
  window.__hearthRecording = recording;

  class RecordingWebSocket extends Native {
    constructor(url, ...rest) {
      super(url, ...rest);
      const appId = new URL(url, location.href).searchParams.get('p') ?? '';
      const conn = appId.split(':').pop() || 'unknown';
      recording.sockets[conn] = (recording.sockets[conn] ?? 0) + 1;
      const socket = recording.sockets[conn];
      const note = (fields) => recording.timeline.push({ seq: recording.seq++, conn, socket, ...fields });
      this._note = note;
      // Registered before the SDK sets onmessage, so a frame is noted before what it causes.
      this.addEventListener('open', () => note({ kind: 'open', url: String(url) }));
      this.addEventListener('message', (event) => note({ kind: 'receive', frame: String(event.data) }));
      this.addEventListener('close', () => note({ kind: 'close' }));
    }

    send(data) {
      this._note({ kind: 'send', frame: String(data) });
      super.send(data);
    }
  }
  window.WebSocket = RecordingWebSocket;
})();
