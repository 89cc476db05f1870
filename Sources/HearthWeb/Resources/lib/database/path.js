// Database paths as arrays of keys (['posts', 'abc']; the root is []), and the checks Firebase
// makes on keys and paths before anything is written.

/// "a//b/" → ['a', 'b']: empty segments are ignored, as everywhere in Firebase.
export function splitPath(path) {
  return String(path ?? '').split('/').filter((segment) => segment.length > 0);
}

/// ['a', 'b'] → "/a/b"; [] → "/".
export function pathString(segments) {
  return `/${segments.join('/')}`;
}

/// True when `ancestor` is `path` or above it.
export function contains(ancestor, path) {
  if (ancestor.length > path.length) return false;
  for (let index = 0; index < ancestor.length; index += 1) {
    if (ancestor[index] !== path[index]) return false;
  }
  return true;
}

/// True when one path is at or under the other (a change at one can affect the other).
export function related(a, b) {
  return contains(a, b) || contains(b, a);
}

/// Sorts deeper paths before the paths above them, siblings by key: the order Firebase raises a
/// change's events in (each location's descendants, then the location).
export function comparePostOrder(a, b) {
  const shared = Math.min(a.length, b.length);
  for (let index = 0; index < shared; index += 1) {
    if (a[index] !== b[index]) return a[index] < b[index] ? -1 : 1;
  }
  return b.length - a.length;
}

const MAX_KEY_BYTES = 768;
const MAX_DEPTH = 32;
// Control characters and the five characters a key cannot hold.
const INVALID_KEY = /[.#$[\]/\u0000-\u001f\u007f]/;
const encoder = new TextEncoder();

/// The reason `key` cannot be a key, or null when it can.
export function keyProblem(key) {
  if (typeof key !== 'string' || key.length === 0) return 'Keys cannot be empty.';
  if (INVALID_KEY.test(key)) return `"${key}" cannot be a key: keys cannot contain . # $ [ ] / or control characters.`;
  if (encoder.encode(key).length > MAX_KEY_BYTES) return 'Keys cannot be longer than 768 bytes.';
  return null;
}

/// The reason `segments` cannot be written to, or null. `.priority` may end a path, and `.info`
/// is this client's own.
export function writePathProblem(segments) {
  if (segments[0] === '.info') return 'Locations under .info are kept by the client and cannot be written.';
  if (segments.length > MAX_DEPTH) return 'Paths cannot be deeper than 32 levels.';
  for (let index = 0; index < segments.length; index += 1) {
    if (index === segments.length - 1 && segments[index] === '.priority') continue;
    const problem = keyProblem(segments[index]);
    if (problem) return problem;
  }
  return null;
}

/// The reason `value` cannot be written, or null: keys must be valid, numbers finite, and only
/// `.value`, `.priority` and `.sv` may start with a dot.
export function valueProblem(value, depth = 0) {
  if (value === null || value === undefined) return null;
  if (depth > MAX_DEPTH) return 'Values cannot be nested deeper than 32 levels.';
  switch (typeof value) {
    case 'string': case 'boolean': return null;
    case 'number': return Number.isFinite(value) ? null : 'Numbers must be finite (not NaN or Infinity).';
    case 'object': break;
    default: return `A ${typeof value} cannot be stored.`;
  }
  for (const [key, child] of Object.entries(value)) {
    if (key === '.sv') continue; // checked when server values are resolved
    if (key !== '.value' && key !== '.priority') {
      const problem = keyProblem(key);
      if (problem) return problem;
    }
    const problem = valueProblem(child, depth + 1);
    if (problem) return problem;
  }
  return null;
}
