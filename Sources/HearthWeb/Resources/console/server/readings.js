// What the Server page's graphs plot, worked out from two scrapes of /metrics (docs/operations.md
// lists the metrics): rates are how much a counter grew over the seconds between the scrapes,
// latencies come from how much each histogram bucket grew, and gauges are read as they are.
// Pure, like ./prometheus.js.

import { bucketIncrease, histogramQuantile, increase, increaseBy, valueOf } from './prometheus.js';

/**
 * The request series, by transport family. Realtime-protocol messages (over WebSocket or
 * long-polling) are counted apart from HTTP requests; the long-polling requests that carry
 * them go under "Other", so nothing is counted twice.
 */
export const REQUEST_SERIES = [
  { key: 'rest', label: 'REST' },
  { key: 'sse', label: 'Streams (SSE)' },
  { key: 'realtime', label: 'Realtime' },
  { key: 'auth', label: 'Accounts' },
  { key: 'files', label: 'Files' },
  { key: 'other', label: 'Other (web, admin, …)' },
];

/**
 * @typedef {object} Reading
 * @property {Record<string, number> | null} requests per second by REQUEST_SERIES key
 * @property {{ writes: number, commits: number } | null} writes per second
 * @property {{ p50: number | null, p99: number | null } | null} latency HTTP request latency, in seconds
 * @property {{ listens: number | null, realtime: number | null }} connections open now
 * @property {number | null} memory resident bytes
 * @property {{ denials: number, errors: number } | null} problems rules denials and 5xx answers per second
 */

/**
 * The figures for one point of the graphs. Without an earlier scrape (the first one), the
 * rates are null; gauges are always there.
 * @param {import('./prometheus.js').Scrape | null} before the previous scrape
 * @param {import('./prometheus.js').Scrape} after this scrape
 * @param {number} seconds the time between the two
 * @returns {Reading}
 */
export function readingBetween(before, after, seconds) {
  const reading = {
    requests: null,
    writes: null,
    latency: null,
    connections: {
      listens: valueOf(after, 'hearth_connections', { kind: 'listens' }),
      realtime: valueOf(after, 'hearth_connections', { kind: 'realtime' }),
    },
    memory: valueOf(after, 'hearth_resident_memory_bytes'),
    problems: null,
  };
  if (!before || !(seconds > 0)) return reading;
  const perSecond = (count) => count / seconds;

  const requests = Object.fromEntries(REQUEST_SERIES.map((series) => [series.key, 0]));
  for (const [transport, count] of increaseBy(before, after, 'hearth_requests_total', 'transport')) {
    const key = transport in requests && transport !== 'realtime' ? transport : 'other';
    requests[key] += perSecond(count);
  }
  requests.realtime = perSecond(increase(before, after, 'hearth_realtime_requests_total'));
  reading.requests = requests;

  reading.writes = {
    writes: perSecond(increase(before, after, 'hearth_writes_total')),
    commits: perSecond(increase(before, after, 'hearth_commits_total')),
  };

  const buckets = bucketIncrease(before, after, 'hearth_request_duration_seconds');
  reading.latency = { p50: histogramQuantile(0.5, buckets), p99: histogramQuantile(0.99, buckets) };

  reading.problems = {
    denials: perSecond(increase(before, after, 'hearth_rules_denials_total')),
    errors: perSecond(increase(before, after, 'hearth_requests_total', { status: /^5\d\d$/ })),
  };
  return reading;
}
