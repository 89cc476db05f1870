// The server's figures over the last hours (GET /.hearth/metrics/history): samples the server
// took every few seconds from its start, whether or not anyone looked. Each sample is turned
// into the shape of a /metrics scrape, so the graphs' points come from the same calculation
// (./readings.js) as the page's own scrapes. Pure, like ./prometheus.js.

import { readingBetween } from './readings.js';

/**
 * @typedef {object} HistorySample as the server sends it (MetricsSample)
 * @property {number} time milliseconds since 1970
 * @property {Record<string, number>} requests by transport
 * @property {Record<string, number>} serverErrors 5xx answers by transport
 * @property {number} realtimeRequests
 * @property {number} writes
 * @property {number} commits
 * @property {number} denials
 * @property {Record<string, number>} latencyBuckets cumulative counts by `le`
 * @property {Record<string, number>} connections by kind
 * @property {number} [memoryBytes]
 */

/**
 * A sample as a scrape of the series ./readings.js reads. A transport's 5xx answers get a
 * series of their own (status "500"), the rest another, so sums by transport and filters on
 * the status both come out right.
 * @param {HistorySample} sample
 * @returns {import('./prometheus.js').Scrape}
 */
export function sampleScrape(sample) {
  const samples = [];
  const add = (name, labels, value) => { if (Number.isFinite(value)) samples.push({ name, labels, value }); };
  for (const [transport, total] of Object.entries(sample.requests ?? {})) {
    const errors = sample.serverErrors?.[transport] ?? 0;
    add('hearth_requests_total', { transport, status: '200' }, total - errors);
    if (errors) add('hearth_requests_total', { transport, status: '500' }, errors);
  }
  add('hearth_realtime_requests_total', {}, sample.realtimeRequests ?? 0);
  add('hearth_writes_total', {}, sample.writes ?? 0);
  add('hearth_commits_total', {}, sample.commits ?? 0);
  add('hearth_rules_denials_total', {}, sample.denials ?? 0);
  for (const [le, count] of Object.entries(sample.latencyBuckets ?? {})) {
    samples.push({ name: 'hearth_request_duration_seconds_bucket', labels: { le }, value: count });
  }
  for (const [kind, count] of Object.entries(sample.connections ?? {})) add('hearth_connections', { kind }, count);
  if (sample.memoryBytes != null) add('hearth_resident_memory_bytes', {}, sample.memoryBytes);
  return { samples, types: new Map() };
}

/**
 * The graphs' points for a run of samples, oldest first: each one's rates over the time since
 * the one before (the first sample gives only gauges).
 * @param {HistorySample[]} samples oldest first
 * @param {HistorySample | null} [before] the sample just before these, if one was read earlier
 * @returns {{ time: number, reading: import('./readings.js').Reading }[]}
 */
export function historyPoints(samples, before = null) {
  const points = [];
  let previous = before ? sampleScrape(before) : null;
  let previousTime = before?.time ?? null;
  for (const sample of samples) {
    const scrape = sampleScrape(sample);
    const seconds = previousTime === null ? 0 : (sample.time - previousTime) / 1000;
    points.push({ time: sample.time, reading: readingBetween(previous, scrape, seconds) });
    previous = scrape;
    previousTime = sample.time;
  }
  return points;
}
