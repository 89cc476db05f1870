// Database paths and values as the tree sees them: paths are arrays of keys, values are
// null, a primitive, or a plain object (arrays from the server become objects keyed 0, 1, …).

// Firebase's key order (32-bit integer keys first, numerically), as the shared client sorts.
export { compareKeys } from '/lib/hearth.js';

/** "/a/b" → ['a', 'b']; "/" → []. */
export function parsePath(text) {
  return text.split('/').filter(Boolean);
}

/** ['a', 'b'] → "/a/b"; [] → "/". */
export function formatPath(keys) {
  return `/${keys.join('/')}`;
}

export function isObject(value) {
  return value !== null && typeof value === 'object';
}

/** A server value with arrays turned into objects and null entries dropped, as Firebase stores them. */
export function normalize(value) {
  if (!isObject(value)) return value;
  const result = {};
  for (const [key, child] of Object.entries(value)) {
    const normalized = normalize(child);
    if (normalized !== null) result[key] = normalized;
  }
  return isEmpty(result) ? null : result;
}

function isEmpty(object) {
  for (const _ in object) return false;
  return true;
}

export function valueAt(root, keys) {
  let value = root;
  for (const key of keys) {
    if (!isObject(value) || !(key in value)) return null;
    value = value[key];
  }
  return value;
}

/**
 * `root` with the value at `keys` replaced by `value` (already normalized; null deletes, and
 * parents left empty vanish). Objects along the path are changed in place.
 */
export function withValueAt(root, keys, value) {
  if (keys.length === 0) return value;
  const [first, ...rest] = keys;
  const object = isObject(root) ? root : {};
  const child = withValueAt(object[first] ?? null, rest, value);
  if (child === null) delete object[first];
  else object[first] = child;
  return isEmpty(object) ? null : object;
}

/** The number of children of an object value (0 for a leaf). */
export function childCount(value) {
  return isObject(value) ? Object.keys(value).length : 0;
}

/** True when `value` has at most `limit` nodes; stops counting past the limit. */
export function hasAtMostNodes(value, limit) {
  let budget = limit;
  const visit = (node) => {
    budget -= 1;
    if (budget < 0 || !isObject(node)) return;
    for (const key in node) {
      visit(node[key]);
      if (budget < 0) return;
    }
  };
  visit(value);
  return budget >= 0;
}

/** How a leaf reads in the tree: strings quoted, as JSON writes them. */
export function displayLeaf(value) {
  return JSON.stringify(value);
}

/** The kind of value for the editor: 'string', 'number', 'boolean', 'null' or 'object'. */
export function kindOf(value) {
  if (value === null) return 'null';
  if (isObject(value)) return 'object';
  return typeof value;
}
