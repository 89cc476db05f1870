// The Server section: uptime, memory, open listens, realtime connections and writes per second
// (from /.hearth/stats), graphs of the last 5 minutes, hour or 6 hours, and the warnings and
// errors the server logged lately (/.hearth/logs). The graphs start with the server's own
// history (/.hearth/metrics/history: a sample every 10 seconds kept from its start, so what
// happened before anyone looked shows), and go on with the page's reads of /metrics (the same
// figures Prometheus scrapes) every two seconds while the page is visible; they are not read at
// all once it is hidden or left. The server counts since it started; a rate is the difference
// between two readings over the time between them.

import { errorWords, formatBytes, h } from '../dom.js';
import { historyPoints } from '../server/history.js';
import { lineChart } from '../server/line-chart.js';
import { parsePrometheus } from '../server/prometheus.js';
import { readingBetween, REQUEST_SERIES } from '../server/readings.js';
import { recentProblems } from '../server/recent-problems.js';
import { visiblePoller } from '../server/visible-poller.js';

const POLL_MS = 2000;
// The page's own reads are kept this long; older points come from the server's history.
const LIVE_MS = 5 * 60_000;
const RANGES = [[5 * 60_000, 'Last 5 minutes'], [60 * 60_000, 'Last hour'], [6 * 3_600_000, 'Last 6 hours']];
const MB = 1024 * 1024;

export function mount(container, { hearth, api }) {
  const graph = (options) => lineChart({ windowMs: RANGES[0][0], gapMs: POLL_MS * 3, ...options });
  const figure = (id, label) => {
    const value = h('dd', { 'data-testid': `figure-${id}` }, '…');
    return { value, element: h('div', { class: 'figure card' }, h('dt', {}, label), value) };
  };
  const figures = {
    uptime: figure('uptime', 'Uptime'),
    memory: figure('memory', 'Memory'),
    streams: figure('streams', 'Open listens'),
    realtime: figure('realtime', 'Realtime connections'),
    writes: figure('writes', 'Writes per second'),
  };
  const charts = [
    { pick: (reading) => reading.requests, chart: graph({ id: 'requests', title: 'Requests per second',
      series: REQUEST_SERIES, format: formatPerSecond }) },
    { pick: (reading) => reading.writes, chart: graph({ id: 'writes', title: 'Writes per second',
      series: [{ key: 'writes', label: 'Writes' }, { key: 'commits', label: 'Commits (each one fsync)' }],
      format: formatPerSecond }) },
    { pick: (reading) => reading.latency, chart: graph({ id: 'latency', title: 'HTTP request latency',
      series: [{ key: 'p50', label: 'Median (p50)' }, { key: 'p99', label: '99th percentile (p99)' }],
      format: formatSeconds, minimumScale: 0.001 }) },
    { pick: (reading) => reading.connections, chart: graph({ id: 'connections', title: 'Open connections',
      series: [{ key: 'listens', label: 'Open listens' }, { key: 'realtime', label: 'Realtime connections' }],
      format: (count) => Math.round(count).toLocaleString() }) },
    { pick: (reading) => ({ memory: reading.memory }), chart: graph({ id: 'memory', title: 'Resident memory',
      series: [{ key: 'memory', label: 'Resident memory' }], format: formatBytes,
      minimumScale: MB, scaleUnit: MB }) },
    { pick: (reading) => reading.problems, chart: graph({ id: 'problems', title: 'Rules denials and errors per second',
      series: [{ key: 'denials', label: 'Rules denials' }, { key: 'errors', label: 'Server errors (5xx)' }],
      format: formatPerSecond }) },
  ];
  const problems = recentProblems();
  const body = h('tbody', {});
  const error = h('p', { class: 'error', role: 'alert', 'data-testid': 'server-error', hidden: true });
  const graphsError = h('p', { class: 'error', role: 'alert', 'data-testid': 'graphs-error', hidden: true });
  const updated = h('p', { class: 'muted' });
  /** The page's own graph points, the last LIVE_MS: `{ time, reading }`, time in ms since 1970. */
  const history = [];
  /** Points from the server's history (its samples, oldest first), bounded by what it keeps. */
  let serverPoints = [];
  let lastSample = null;
  let sampleSeconds = 10;
  let historyCapacity = 2160;
  let previous = null;
  let previousScrape = null;
  const range = h('select', { id: 'graphs-range', 'data-testid': 'graphs-range', 'on:change': () => drawCharts(Date.now()) },
    RANGES.map(([ms, label]) => h('option', { value: String(ms) }, label)));
  const historyNote = h('span', { 'data-testid': 'history-note' });

  container.append(
    h('div', { class: 'section-head' }, h('h1', { id: 'section-title', tabindex: -1 }, 'Server')),
    error,
    h('dl', { class: 'figures', 'data-testid': 'server-figures' }, Object.values(figures).map((item) => item.element)),
    h('section', { class: 'graphs-section', 'aria-labelledby': 'graphs-title', 'data-testid': 'server-graphs',
      'data-poll-ms': POLL_MS },
      h('div', { class: 'graphs-head' },
        h('h2', { id: 'graphs-title' }, 'Graphs'),
        h('div', { class: 'field inline-field' }, h('label', { for: 'graphs-range' }, 'Show'), range)),
      h('p', { class: 'note' }, 'From the figures at /metrics: what the server kept from before this page was opened ',
        historyNote, `, then read every ${POLL_MS / 1000} seconds while this page is visible. `
        + 'This page\'s own requests count as admin ones.'),
      graphsError,
      h('div', { class: 'graphs' }, charts.map((item) => item.chart.element))),
    problems.element,
    h('div', { class: 'table-wrap' },
      h('table', { 'data-testid': 'server-databases' },
        h('caption', {}, 'Databases'),
        h('thead', {}, h('tr', {}, ['Database', 'Writes since start', 'Writes per second', 'Open listens']
          .map((title) => h('th', { scope: 'col' }, title)))),
        body)),
    updated);

  async function read(isAlive) {
    const since = lastSample ? { since: String(lastSample.time + 1) } : {};
    const [stats, metrics, logs, kept] = await Promise.allSettled([hearth.admin.stats(), api.metrics(), api.recentLogs(),
      api.metricsHistory(since)]);
    if (!isAlive()) return;
    const now = Date.now();
    if (kept.status === 'fulfilled') addHistory(kept.value);
    if (stats.status === 'fulfilled') {
      error.hidden = true;
      show(stats.value, previous && { stats: previous.stats, seconds: (now - previous.time) / 1000 });
      previous = { stats: stats.value, time: now };
    } else {
      error.textContent = `The server's figures could not be read: ${words(stats.reason)}`;
      error.hidden = false;
    }
    if (metrics.status === 'fulfilled') {
      graphsError.hidden = true;
      const scrape = parsePrometheus(metrics.value);
      const seconds = previousScrape ? (now - previousScrape.time) / 1000 : 0;
      history.push({ time: now, reading: readingBetween(previousScrape?.scrape ?? null, scrape, seconds) });
      while (history.length && history[0].time < now - LIVE_MS) history.shift();
      previousScrape = { scrape, time: now };
      drawCharts(now);
    } else {
      graphsError.textContent = `The live graphs could not be read: ${words(metrics.reason)}`;
      graphsError.hidden = false;
    }
    if (logs.status === 'fulfilled') problems.show(logs.value);
    else problems.fail(words(logs.reason));
    updated.textContent = `Updated at ${new Date().toLocaleTimeString()}; refreshed every ${POLL_MS / 1000} seconds while this page is visible.`;
  }

  function show(stats, before) {
    const rateOf = (database) => {
      const old = before?.stats.databases.find((candidate) => candidate.name === database.name);
      return before ? Math.max(0, database.writes - (old?.writes ?? 0)) / before.seconds : null;
    };
    const rates = stats.databases.map(rateOf);
    const total = before ? rates.reduce((sum, rate) => sum + rate, 0) : null;
    figures.uptime.value.textContent = formatDuration(stats.uptimeSeconds);
    figures.memory.value.textContent = formatBytes(stats.memoryBytes);
    figures.streams.value.textContent = stats.connections.streams.toLocaleString();
    figures.realtime.value.textContent = (stats.connections.realtime ?? 0).toLocaleString();
    figures.writes.value.textContent = total === null ? 'measuring…' : formatRate(total);
    figures.writes.value.classList.toggle('pending', total === null);
    body.replaceChildren(...stats.databases.map((database, index) => h('tr', { 'data-testid': 'database-row' },
      h('th', { scope: 'row' }, database.name),
      h('td', {}, database.writes.toLocaleString()),
      h('td', {}, rates[index] === null ? '…' : formatRate(rates[index])),
      h('td', {}, database.streams.toLocaleString()))));
  }

  /** Adds the server's samples taken since the last ones read. */
  function addHistory({ intervalSeconds, capacity, samples }) {
    sampleSeconds = intervalSeconds || sampleSeconds;
    historyCapacity = capacity || historyCapacity;
    if (samples.length) {
      serverPoints.push(...historyPoints(samples, lastSample));
      lastSample = samples[samples.length - 1];
      if (serverPoints.length > historyCapacity) serverPoints = serverPoints.slice(-historyCapacity);
    }
    const graphs = container.querySelector('[data-testid="server-graphs"]');
    graphs.dataset.historySamples = String(serverPoints.length);
    graphs.dataset.historyFrom = serverPoints.length ? String(serverPoints[0].time) : '';
    historyNote.textContent = serverPoints.length
      ? `(since ${new Date(serverPoints[0].time).toLocaleTimeString()}, a sample every ${formatInterval(sampleSeconds)})`
      : '(nothing yet)';
  }

  function drawCharts(now) {
    // The server's samples up to the page's first own point, then the page's finer ones.
    const firstLive = history.length ? history[0].time : Infinity;
    const points = [...serverPoints.filter((point) => point.time < firstLive), ...history];
    const span = { windowMs: Number(range.value), gapMs: Math.max(POLL_MS * 3, sampleSeconds * 2500) };
    for (const { chart, pick } of charts) {
      chart.update(points.map(({ time, reading }) => ({ time, values: pick(reading) ?? {} })), now, span);
    }
  }

  const poller = visiblePoller(read, POLL_MS);
  return () => poller.stop();
}

/** The admin API's errors are already in words; anything else gets the app's wording. */
function words(failure) {
  return failure?.name === 'ConsoleError' ? failure.message : errorWords(failure);
}

/** "10 s", "0.2 s", "1 min". */
function formatInterval(seconds) {
  return seconds >= 60 && seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`;
}

function formatRate(rate) {
  return rate < 10 ? rate.toFixed(1) : Math.round(rate).toLocaleString();
}

/** "0/s", "0.05/s", "3.2/s", "1,250/s". */
function formatPerSecond(rate) {
  if (rate === 0) return '0/s';
  if (rate < 0.1) return `${rate.toFixed(2)}/s`;
  return `${formatRate(rate)}/s`;
}

/** "0.42 ms", "12.5 ms", "1.2 s". */
function formatSeconds(seconds) {
  if (seconds >= 1) return `${seconds.toFixed(1)} s`;
  const ms = seconds * 1000;
  return `${ms < 1 ? ms.toFixed(2) : ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`;
}

/** "3 d 4 h", "2 h 5 min", "4 min 10 s". */
function formatDuration(seconds) {
  const s = Math.floor(seconds);
  const [days, hours, minutes] = [Math.floor(s / 86400), Math.floor(s / 3600) % 24, Math.floor(s / 60) % 60];
  if (days) return `${days} d ${hours} h`;
  if (hours) return `${hours} h ${minutes} min`;
  if (minutes) return `${minutes} min ${s % 60} s`;
  return `${s} s`;
}
