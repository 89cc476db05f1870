// The Server section: uptime, memory, open listens, realtime connections and writes per second, from polls of
// /.hearth/stats every few seconds while the page is visible. The server counts writes since
// it started; the rate is the difference between two polls over the time between them.

import { errorWords, formatBytes, h } from '../dom.js';

const POLL_MS = 3000;
const HISTORY = 40;

export function mount(container, { hearth }) {
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
  const chart = h('div', { class: 'sparkline card', hidden: true });
  const body = h('tbody', {});
  const error = h('p', { class: 'error', role: 'alert', 'data-testid': 'server-error', hidden: true });
  const updated = h('p', { class: 'muted' });
  const history = [];
  let previous = null;
  let timer = null;
  let alive = true;

  container.append(
    h('div', { class: 'section-head' }, h('h1', { id: 'section-title', tabindex: -1 }, 'Server')),
    error,
    h('dl', { class: 'figures', 'data-testid': 'server-figures' }, Object.values(figures).map((item) => item.element)),
    chart,
    h('div', { class: 'table-wrap' },
      h('table', { 'data-testid': 'server-databases' },
        h('caption', {}, 'Databases'),
        h('thead', {}, h('tr', {}, ['Database', 'Writes since start', 'Writes per second', 'Open listens']
          .map((title) => h('th', { scope: 'col' }, title)))),
        body)),
    updated);

  async function poll() {
    try {
      const stats = await hearth.admin.stats();
      if (!alive) return;
      const now = performance.now();
      error.hidden = true;
      show(stats, previous && { stats: previous.stats, seconds: (now - previous.time) / 1000 });
      previous = { stats, time: now };
    } catch (failure) {
      error.textContent = `The server's figures could not be read: ${errorWords(failure)}`;
      error.hidden = false;
    }
    schedule();
  }

  function schedule() {
    clearTimeout(timer);
    timer = alive && document.visibilityState === 'visible' ? setTimeout(poll, POLL_MS) : null;
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
    if (total !== null) {
      history.push(total);
      if (history.length > HISTORY) history.shift();
      drawChart();
    }
    updated.textContent = `Updated at ${new Date().toLocaleTimeString()}; refreshed every ${POLL_MS / 1000} seconds while this page is visible.`;
  }

  function drawChart() {
    const peak = Math.max(1, ...history);
    const width = 300;
    const height = 60;
    const step = width / (HISTORY - 1);
    const points = history.map((rate, index) =>
      `${(index + HISTORY - history.length) * step},${height - (rate / peak) * (height - 4) - 2}`).join(' ');
    const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
    svg.setAttribute('preserveAspectRatio', 'none');
    svg.setAttribute('aria-hidden', 'true');
    const line = document.createElementNS('http://www.w3.org/2000/svg', 'polyline');
    line.setAttribute('points', points);
    svg.append(line);
    chart.hidden = false;
    chart.replaceChildren(
      h('p', { class: 'muted' }, `Writes per second, last ${history.length} readings (peak ${formatRate(peak)})`), svg);
  }

  const visibility = () => (document.visibilityState === 'visible' ? poll() : schedule());
  document.addEventListener('visibilitychange', visibility);
  poll();
  return () => {
    alive = false;
    clearTimeout(timer);
    document.removeEventListener('visibilitychange', visibility);
  };
}

function formatRate(rate) {
  return rate < 10 ? rate.toFixed(1) : Math.round(rate).toLocaleString();
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
