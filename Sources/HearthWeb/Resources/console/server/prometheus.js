// Reading Prometheus's text exposition format (what the server's /metrics answers) and the few
// calculations the Server page needs from two scrapes: how much a counter grew, and a quantile
// from how much each histogram bucket grew (as PromQL's rate() and histogram_quantile() do).
// Pure functions, no DOM, so they can be tested on their own.

/**
 * @typedef {{ name: string, labels: Record<string, string>, value: number }} Sample
 * @typedef {{ samples: Sample[], types: Map<string, string> }} Scrape
 * A label filter: each label's value must equal a string, match a RegExp, or pass a function.
 * @typedef {Record<string, string | RegExp | ((value: string) => boolean)>} Where
 */

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?\s*$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(?:,|$)/y;

/**
 * Parses Prometheus's text format (version 0.0.4). `# TYPE` lines give each metric's type;
 * other comments and blank lines are skipped, and so is a line that is not a sample (one bad
 * line should not blank the whole page).
 * @param {string} text
 * @returns {Scrape}
 */
export function parsePrometheus(text) {
  const samples = [];
  const types = new Map();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    if (line.startsWith('#')) {
      const type = /^#\s*TYPE\s+(\S+)\s+(\S+)/.exec(line);
      if (type) types.set(type[1], type[2]);
      continue;
    }
    const match = SAMPLE.exec(line);
    if (!match) continue;
    const labels = parseLabels(match[2] ?? '');
    const value = parseValue(match[3]);
    if (labels === null || value === null) continue;
    samples.push({ name: match[1], labels, value });
  }
  return { samples, types };
}

function parseLabels(text) {
  const labels = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const start = LABEL.lastIndex;
    const match = LABEL.exec(text);
    if (!match) return text.slice(start).trim() === '' ? labels : null;
    labels[match[1]] = match[2].replace(/\\(.)/g, (_, escaped) => (escaped === 'n' ? '\n' : escaped));
  }
  return labels;
}

function parseValue(text) {
  if (text === '+Inf' || text === 'Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  const value = Number(text);
  return text !== '' && !Number.isNaN(value) ? value : null;
}

/** Whether `labels` pass the filter `where`. */
function matches(labels, where) {
  return Object.entries(where).every(([name, test]) => {
    const value = labels[name] ?? '';
    if (typeof test === 'function') return test(value);
    if (test instanceof RegExp) return test.test(value);
    return value === test;
  });
}

/** A series' identity: its name and labels, in a fixed order. */
function seriesKey(sample) {
  return `${sample.name}{${Object.keys(sample.labels).sort().map((name) => `${name}=${JSON.stringify(sample.labels[name])}`).join(',')}}`;
}

/**
 * The sum of the current values of `name`'s series that pass `where` (for gauges), or null
 * when the scrape has none.
 * @param {Scrape} scrape
 * @param {string} name
 * @param {Where} [where]
 * @returns {number | null}
 */
export function valueOf(scrape, name, where = {}) {
  const found = scrape.samples.filter((sample) => sample.name === name && matches(sample.labels, where));
  return found.length ? found.reduce((sum, sample) => sum + sample.value, 0) : null;
}

/**
 * How much the counter `name` grew from `before` to `after`, by the value of `label` (summed
 * over the series that pass `where`). A series missing before counts from 0 (counters appear
 * at their first increment); one that went down was reset (a restart) and counts from 0 too,
 * as Prometheus's rate() does.
 * @param {Scrape} before
 * @param {Scrape} after
 * @param {string} name
 * @param {string | null} label null: everything under one key, ''
 * @param {Where} [where]
 * @returns {Map<string, number>}
 */
export function increaseBy(before, after, name, label, where = {}) {
  const earlier = new Map();
  for (const sample of before.samples) {
    if (sample.name === name) earlier.set(seriesKey(sample), sample.value);
  }
  const grown = new Map();
  for (const sample of after.samples) {
    if (sample.name !== name || !matches(sample.labels, where)) continue;
    const old = earlier.get(seriesKey(sample)) ?? 0;
    const delta = sample.value >= old ? sample.value - old : sample.value;
    const key = label === null ? '' : sample.labels[label] ?? '';
    grown.set(key, (grown.get(key) ?? 0) + delta);
  }
  return grown;
}

/**
 * How much the counter `name` grew from `before` to `after`, summed over the series that pass
 * `where` (see {@link increaseBy}).
 * @param {Scrape} before
 * @param {Scrape} after
 * @param {string} name
 * @param {Where} [where]
 * @returns {number}
 */
export function increase(before, after, name, where = {}) {
  return increaseBy(before, after, name, null, where).get('') ?? 0;
}

/**
 * How many observations fell in each bucket of the histogram `name` between two scrapes,
 * summed over the series that pass `where` (like `sum by (le) (increase(name_bucket[…]))`).
 * @param {Scrape} before
 * @param {Scrape} after
 * @param {string} name the histogram, without `_bucket`
 * @param {Where} [where]
 * @returns {{ le: number, count: number }[]} cumulative counts by upper bound, ascending
 */
export function bucketIncrease(before, after, name, where = {}) {
  const byBound = increaseBy(before, after, `${name}_bucket`, 'le', where);
  return [...byBound].map(([le, count]) => ({ le: parseValue(le), count }))
    .filter((bucket) => bucket.le !== null && !Number.isNaN(bucket.le))
    .sort((a, b) => a.le - b.le);
}

/**
 * The `q` quantile (0…1) of a histogram's cumulative buckets, as PromQL's histogram_quantile():
 * found by linear interpolation inside the bucket holding the rank (the first bucket starts at
 * 0); a rank in the `+Inf` bucket gives the highest finite bound. Null when nothing was
 * observed.
 * @param {number} q
 * @param {{ le: number, count: number }[]} buckets ascending by `le`, the last `+Inf`
 * @returns {number | null}
 */
export function histogramQuantile(q, buckets) {
  if (!buckets.length || buckets[buckets.length - 1].le !== Infinity) return null;
  const total = buckets[buckets.length - 1].count;
  if (!(total > 0)) return null;
  const rank = Math.min(Math.max(q, 0), 1) * total;
  let lower = 0;
  let below = 0;
  for (const bucket of buckets) {
    if (bucket.count >= rank) {
      if (bucket.le === Infinity) return buckets.length > 1 ? buckets[buckets.length - 2].le : null;
      const inside = bucket.count - below;
      return inside > 0 ? lower + (bucket.le - lower) * ((rank - below) / inside) : bucket.le;
    }
    lower = bucket.le;
    below = bucket.count;
  }
  return null;
}
