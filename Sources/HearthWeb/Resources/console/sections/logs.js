// The Logs section: the server's request log (GET /.hearth/requests: the latest requests over
// every transport, newest first, filtered by status class and path prefix) and its recent
// warnings and errors (GET /.hearth/logs, the same panel as the Server page). Both are read
// every two seconds while the page is visible, and not at all once it is hidden or left.

import { h } from '../dom.js';
import { recentProblems } from '../server/recent-problems.js';
import { visiblePoller } from '../server/visible-poller.js';

const POLL_MS = 2000;
const SHOWN = 200;
const STATUS_CLASSES = [['', 'Any status'], ['2xx', '2xx success'], ['3xx', '3xx redirect'], ['4xx', '4xx client error'],
  ['5xx', '5xx server error']];

export function mount(container, { api }) {
  const status = h('select', { id: 'requests-status', 'data-testid': 'requests-status', 'on:change': () => poller.now() },
    STATUS_CLASSES.map(([value, label]) => h('option', { value }, label)));
  let pathTimer = null;
  const path = h('input', { id: 'requests-path', type: 'search', autocomplete: 'off', spellcheck: 'false', placeholder: '/users',
    'data-testid': 'requests-path', 'on:input': () => {
      clearTimeout(pathTimer);
      pathTimer = setTimeout(() => poller.now(), 250);
    } });
  const body = h('tbody', {});
  const empty = h('p', { class: 'muted', 'data-testid': 'requests-empty', hidden: true });
  const error = h('p', { class: 'error', role: 'alert', 'data-testid': 'requests-error', hidden: true });
  const updated = h('p', { class: 'muted', 'data-testid': 'requests-updated' });
  const problems = recentProblems();
  let drawn = null;

  container.append(
    h('div', { class: 'section-head' }, h('h1', { id: 'section-title', tabindex: -1 }, 'Logs')),
    h('section', { class: 'requests', 'aria-labelledby': 'requests-title', 'data-testid': 'requests' },
      h('h2', { id: 'requests-title' }, 'Requests'),
      h('p', { class: 'note' }, 'The latest requests the server answered over every transport, newest first: REST, '
        + 'streams, accounts, files, and realtime connections and messages (a realtime message is answered on its socket, '
        + 'so it has no status). Credentials in a query are shown as ***. The reads that monitoring repeats (this page\'s own, '
        + 'the Server page\'s figures and /metrics) are not listed.'),
      h('form', { class: 'toolbar', role: 'search', 'aria-label': 'Filter requests', 'on:submit': (event) => {
        event.preventDefault();
        poller.now();
      } },
        h('div', { class: 'field' }, h('label', { for: 'requests-status' }, 'Status'), status),
        h('div', { class: 'field' }, h('label', { for: 'requests-path' }, 'Path starts with'), path)),
      error,
      empty,
      h('div', { class: 'table-wrap' },
        h('table', { class: 'requests-table', 'data-testid': 'requests-table' },
          h('caption', { class: 'visually-hidden' }, 'Recent requests, newest first'),
          h('thead', {}, h('tr', {}, ['Time', 'Method', 'Path', 'Status', 'Time taken', 'Transport', 'User', 'Request ID']
            .map((title) => h('th', { scope: 'col' }, title)))),
          body)),
      updated),
    problems.element);

  async function read(isAlive) {
    const params = { limit: String(SHOWN) };
    if (status.value) params.status = status.value;
    if (path.value.trim()) params.path = path.value.trim();
    const [requests, logs] = await Promise.allSettled([api.requestLog(params), api.recentLogs()]);
    if (!isAlive()) return;
    if (requests.status === 'fulfilled') {
      error.hidden = true;
      show(requests.value);
    } else {
      error.textContent = `The request log could not be read: ${requests.reason.message}`;
      error.hidden = false;
    }
    if (logs.status === 'fulfilled') problems.show(logs.value);
    else problems.fail(logs.reason.message);
    updated.textContent = `Updated at ${new Date().toLocaleTimeString()}; refreshed every ${POLL_MS / 1000} seconds while this page is visible.`;
  }

  function show({ entries, capacity }) {
    // Redrawn only when something changed, so a reader's selection stays.
    const signature = JSON.stringify([status.value, path.value, capacity, entries.length, entries[0] ?? null]);
    if (signature === drawn) return;
    drawn = signature;
    empty.hidden = entries.length > 0;
    if (capacity === 0) empty.textContent = 'The request log is off: this server was started with --request-log-size 0.';
    else if (status.value || path.value.trim()) empty.textContent = 'No recent request matches these filters.';
    else empty.textContent = 'No requests yet.';
    body.replaceChildren(...entries.map(requestRow));
  }

  const poller = visiblePoller(read, POLL_MS);
  return () => {
    poller.stop();
    clearTimeout(pathTimer);
  };
}

function requestRow(entry) {
  const time = new Date(entry.time);
  const statusClass = entry.status ? `status-${Math.floor(entry.status / 100)}xx` : 'status-none';
  return h('tr', { 'data-testid': 'request-row', 'data-status': entry.status ?? '' },
    h('td', { 'data-label': 'Time' }, h('time', { datetime: entry.time, title: time.toLocaleString() }, time.toLocaleTimeString())),
    h('td', { 'data-label': 'Method', class: 'mono' }, entry.method),
    h('td', { 'data-label': 'Path', class: 'mono request-path', 'data-testid': 'request-path' }, entry.path),
    h('td', { 'data-label': 'Status' },
      h('span', { class: `http-status ${statusClass}`, 'data-testid': 'request-status' }, entry.status ?? '—')),
    h('td', { 'data-label': 'Time taken' }, entry.milliseconds == null ? '—' : formatMilliseconds(entry.milliseconds)),
    h('td', { 'data-label': 'Transport' }, entry.transport),
    h('td', { 'data-label': 'User', class: 'mono' }, entry.uid ?? '—'),
    h('td', { 'data-label': 'Request ID', class: 'mono muted' }, entry.requestID ?? ''));
}

function formatMilliseconds(ms) {
  return ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms).toLocaleString()} ms`;
}
