// The console's kept figures and logs: the server's history turned into graph points
// (console/server/history.js), and what the Logs page keeps and filters by time
// (console/server/kept-entries.js).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { historyPoints, sampleScrape } from '../../Sources/HearthWeb/Resources/console/server/history.js';
import { keepEntries, requestKey, requestMatches, timeBounds, withinTime }
  from '../../Sources/HearthWeb/Resources/console/server/kept-entries.js';

const sample = (time, { rest = 0, errors = 0, writes = 0, listens = 0, fast = 0, all = 0 } = {}) => ({
  time, requests: { rest }, serverErrors: errors ? { rest: errors } : {}, realtimeRequests: 0, writes, commits: writes,
  denials: 0, latencyBuckets: { '0.01': fast, '+Inf': all }, connections: { listens, realtime: 0 }, memoryBytes: 1024,
});

test('a sample reads as a scrape: totals by transport and the 5xx answers apart', () => {
  const scrape = sampleScrape(sample(0, { rest: 10, errors: 3 }));
  const requests = scrape.samples.filter((s) => s.name === 'hearth_requests_total');
  assert.deepEqual(requests.map((s) => [s.labels.status, s.value]), [['200', 7], ['500', 3]]);
  assert.ok(scrape.samples.some((s) => s.name === 'hearth_resident_memory_bytes' && s.value === 1024));
});

test('samples become points with rates over the time between them', () => {
  const points = historyPoints([sample(0, { rest: 0 }), sample(10_000, { rest: 50, errors: 10, writes: 20, listens: 3, fast: 40, all: 50 })]);
  assert.equal(points.length, 2);
  assert.equal(points[0].reading.requests, null, 'the first sample has no rate');
  assert.equal(points[0].reading.connections.listens, 0);
  const { reading } = points[1];
  assert.equal(points[1].time, 10_000);
  assert.equal(reading.requests.rest, 5);
  assert.equal(reading.problems.errors, 1);
  assert.equal(reading.writes.writes, 2);
  assert.equal(reading.connections.listens, 3);
  assert.ok(reading.latency.p50 > 0 && reading.latency.p50 <= 0.01);
  // Given the sample before, the first new one has a rate too.
  const next = historyPoints([sample(20_000, { rest: 70 })], sample(10_000, { rest: 50 }));
  assert.equal(next[0].reading.requests.rest, 2);
});

test('kept entries merge newest first, once each, bounded', () => {
  const entry = (second, id) => ({ time: new Date(second * 1000).toISOString(), requestID: id, path: `/p${id}` });
  let kept = keepEntries([], [entry(3, 'c'), entry(2, 'b')], requestKey);
  kept = keepEntries(kept, [entry(5, 'e'), entry(4, 'd'), entry(3, 'c')], requestKey);
  assert.deepEqual(kept.map((e) => e.requestID), ['e', 'd', 'c', 'b']);
  assert.deepEqual(keepEntries(kept, [], requestKey, 2).map((e) => e.requestID), ['e', 'd']);
  // Without a request ID, an entry is known by what it was.
  const realtime = { time: entry(6).time, method: 'put', path: '/a', transport: 'realtime', status: null };
  assert.equal(keepEntries([realtime], [{ ...realtime }], requestKey).length, 1);
});

test('time choices give bounds, and bad ranges say why', () => {
  const now = Date.parse('2026-11-29T12:00:00Z');
  assert.deepEqual(timeBounds('', now), { since: null, until: null });
  assert.deepEqual(timeBounds('5', now), { since: now - 300_000, until: null });
  const range = timeBounds('range', now, '2026-11-29T10:00', '2026-11-29T11:00');
  assert.equal(range.until - range.since, 3_600_000 + 59_999);
  assert.match(timeBounds('range', now, '2026-11-29T11:00', '2026-11-29T10:00').error, /after/);
  const at = (iso) => ({ time: iso });
  assert.equal(withinTime(at('2026-11-29T11:58:00Z'), timeBounds('5', now)), true);
  assert.equal(withinTime(at('2026-11-29T11:50:00Z'), timeBounds('5', now)), false);
});

test('requests match the status class, the path prefix and the time as the server judges them', () => {
  const entry = { time: '2026-11-29T12:00:00Z', path: '/users/a.json', status: 404 };
  const any = { status: '', path: '', since: null, until: null };
  assert.equal(requestMatches(entry, any), true);
  assert.equal(requestMatches(entry, { ...any, status: '4xx' }), true);
  assert.equal(requestMatches(entry, { ...any, status: '2xx' }), false);
  assert.equal(requestMatches({ ...entry, status: null }, { ...any, status: '4xx' }), false);
  assert.equal(requestMatches(entry, { ...any, path: 'users' }), true);
  assert.equal(requestMatches(entry, { ...any, path: '/posts' }), false);
  assert.equal(requestMatches(entry, { ...any, since: Date.parse('2026-11-29T12:00:01Z') }), false);
});
