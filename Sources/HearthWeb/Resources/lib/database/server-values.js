// Server values: placeholders the server replaces when it applies a write. The client shows
// its own estimate meanwhile (local time plus the server's clock offset; the increment on the
// value it knows), which the server's data replaces when it arrives.

export const ServerValue = Object.freeze({
  /// The server's time in milliseconds when it applies the write.
  TIMESTAMP: Object.freeze({ '.sv': 'timestamp' }),
  /// Adds `delta` to the number stored there (or stores `delta`).
  increment: (delta) => ({ '.sv': { increment: delta } }),
});

function isPlaceholder(value) {
  return value !== null && typeof value === 'object' && Object.prototype.hasOwnProperty.call(value, '.sv');
}

function resolvePlaceholder(placeholder, now, existing) {
  const spec = placeholder['.sv'];
  if (spec === 'timestamp') return now;
  if (spec && typeof spec === 'object' && typeof spec.increment === 'number') {
    const current = existing();
    return current.isLeaf && typeof current.leafValue === 'number' ? current.leafValue + spec.increment : spec.increment;
  }
  throw new TypeError(`Unknown server value ${JSON.stringify(spec)}.`);
}

/// `json` with its server values replaced by local estimates. `existing(relativeSegments)` is
/// the node currently at a relative path (what an increment adds to).
export function resolveServerValues(json, now, existing, relative = []) {
  if (json === null || typeof json !== 'object') return json;
  if (isPlaceholder(json)) return resolvePlaceholder(json, now, () => existing(relative));
  const out = {};
  for (const [key, value] of Object.entries(json)) {
    if (key === '.priority') {
      out[key] = isPlaceholder(value) ? resolvePlaceholder(value, now, () => existing([...relative, '.priority'])) : value;
    } else {
      out[key] = resolveServerValues(value, now, existing, key === '.value' ? relative : [...relative, key]);
    }
  }
  return out;
}
