// What the Logs page keeps while it is open: the server answers with the latest entries of its
// ring (the latest 200), so entries read earlier are kept here, newest first and bounded, and
// shown with the same filters the server applies (status class, path prefix, time). Pure.

/** How many entries of each kind the page keeps at most. */
export const KEPT_MAX = 5_000;

/**
 * Merges the server's latest answer into what was kept: newest first, each entry once
 * (by `keyOf`), at most `max`.
 * @template T
 * @param {T[]} kept newest first
 * @param {T[]} incoming newest first
 * @param {(entry: T) => string} keyOf
 * @param {number} [max]
 * @returns {T[]}
 */
export function keepEntries(kept, incoming, keyOf, max = KEPT_MAX) {
  const seen = new Set();
  const merged = [];
  for (const entry of [...incoming, ...kept]) {
    const key = keyOf(entry);
    if (seen.has(key)) continue;
    seen.add(key);
    merged.push(entry);
  }
  merged.sort((a, b) => Date.parse(b.time) - Date.parse(a.time));
  return merged.slice(0, max);
}

/** A request log entry's identity: its request ID where it has one, else what it was. */
export function requestKey(entry) {
  return entry.requestID ? `id:${entry.requestID}` : [entry.time, entry.method, entry.path, entry.transport, entry.status].join('|');
}

/** A logged problem's identity. */
export function problemKey(entry) {
  return [entry.time, entry.level, entry.message, entry.metadata?.['hb.request.id'] ?? ''].join('|');
}

/**
 * The bounds of a time choice, in milliseconds since 1970 (null: unbounded).
 * @param {string} choice '' (any time), a number of minutes ('5', '60'), or 'range'
 * @param {number} now
 * @param {string} [from] a datetime-local value, for 'range'
 * @param {string} [to] a datetime-local value, for 'range'
 * @returns {{ since: number | null, until: number | null, error?: string }}
 */
export function timeBounds(choice, now, from = '', to = '') {
  if (!choice) return { since: null, until: null };
  if (choice !== 'range') {
    const minutes = Number(choice);
    return Number.isFinite(minutes) && minutes > 0 ? { since: now - minutes * 60_000, until: null } : { since: null, until: null };
  }
  const since = from ? new Date(from).getTime() : null;
  // A minute written "to" includes all of it.
  const until = to ? new Date(to).getTime() + 59_999 : null;
  if (Number.isNaN(since) || Number.isNaN(until)) return { since: null, until: null, error: 'Enter the times as a date and a time.' };
  if (since !== null && until !== null && since > until) {
    return { since: null, until: null, error: '“From” is after “to”: nothing can match.' };
  }
  return { since, until };
}

/** Whether an entry's time is within the bounds. */
export function withinTime(entry, { since, until }) {
  const time = Date.parse(entry.time);
  if (since !== null && time < since) return false;
  if (until !== null && time > until) return false;
  return true;
}

/**
 * Whether a request log entry passes the page's filters, as the server judges them.
 * @param {object} entry
 * @param {{ status: string, path: string, since: number | null, until: number | null }} filter
 *   `status` '2xx'…'5xx' or ''; `path` a prefix or ''
 */
export function requestMatches(entry, { status, path, since, until }) {
  if (status) {
    if (!entry.status || Math.floor(entry.status / 100) !== Number(status[0])) return false;
  }
  if (path) {
    const prefix = path.startsWith('/') ? path : `/${path}`;
    if (!entry.path.startsWith(prefix)) return false;
  }
  return withinTime(entry, { since, until });
}
