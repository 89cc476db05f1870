// The realtime protocol's framing over WebSocket (docs/protocol.md §3): one JSON message per text
// frame; a message longer than 16,384 characters goes as a frame holding the number of chunks,
// then the chunks.

const MAX_FRAME = 16384;

/// The frames that carry `message` (an object).
export function encodeFrames(message) {
  const text = JSON.stringify(message);
  if (text.length <= MAX_FRAME) return [text];
  const chunks = [];
  for (let index = 0; index < text.length; index += MAX_FRAME) chunks.push(text.slice(index, index + MAX_FRAME));
  return [String(chunks.length), ...chunks];
}

/// Reassembles messages from frames.
export class FrameReader {
  constructor() {
    this._expected = 0;
    this._parts = [];
  }

  /// Takes one frame; answers the whole message it completes (parsed), or null.
  /// @throws {SyntaxError} when a whole message is not JSON
  push(frame) {
    if (this._expected > 0) {
      this._parts.push(frame);
      if (this._parts.length < this._expected) return null;
      const text = this._parts.join('');
      this._expected = 0;
      this._parts = [];
      return JSON.parse(text);
    }
    // A short frame that is a number announces that many chunks.
    if (frame.length <= 6 && /^\d+$/.test(frame)) {
      this._expected = Number(frame);
      return null;
    }
    return JSON.parse(frame);
  }
}
