// The Logs section: the server's request log (GET /.hearth/requests: the latest requests over
// every transport, newest first, filtered by status class, path prefix and time) and its recent
// warnings and errors (GET /.hearth/logs, the same panel as the Server page, filtered by time).
// Both are read every two seconds while the page is visible, and not at all once it is hidden or
// left. The server answers with the latest of its rings; what the page read earlier is kept while
// it is open (bounded, ../server/kept-entries.js), so a burst does not push what came before
// out of sight.

import { h } from '../dom.js';
import { keepEntries, problemKey, requestKey, requestMatches, timeBounds, withinTime, KEPT_MAX }
  from '../server/kept-entries.js';
import { recentProblems } from '../server/recent-problems.js';
import { visiblePoller } from '../server/visible-poller.js';

const POLL_MS = 2000;
// Asked of the server at each read; the page keeps up to KEPT_MAX and draws up to DRAWN.
const SHOWN = 200;
const DRAWN = 1_000;
const TIMES = [['', 'Any time'], ['5', 'Last 5 minutes'], ['15', 'Last 15 minutes'], ['60', 'Last hour'],
  ['range', 'Between…']];
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
  const time = h('select', { id: 'requests-time', 'data-testid': 'requests-time', 'on:change': () => {
    rangeFields.hidden = time.value !== 'range';
    poller.now();
  } }, TIMES.map(([value, label]) => h('option', { value }, label)));
  const from = h('input', { id: 'requests-from', type: 'datetime-local', 'data-testid': 'requests-from', 'on:change': () => poller.now() });
  const to = h('input', { id: 'requests-to', type: 'datetime-local', 'data-testid': 'requests-to', 'on:change': () => poller.now() });
  const rangeFields = h('div', { class: 'range-fields', hidden: true },
    h('div', { class: 'field' }, h('label', { for: 'requests-from' }, 'From'), from),
    h('div', { class: 'field' }, h('label', { for: 'requests-to' }, 'To'), to));
  const count = h('p', { class: 'muted', 'data-testid': 'requests-count' });
  let keptRequests = [];
  let keptProblems = [];
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
        + 'the Server page\'s figures and /metrics) are not listed. What this page read stays listed while it is open, '
        + `up to ${KEPT_MAX.toLocaleString()} requests.`),
      h('form', { class: 'toolbar', role: 'search', 'aria-label': 'Filter requests', 'on:submit': (event) => {
        event.preventDefault();
        poller.now();
      } },
        h('div', { class: 'field' }, h('label', { for: 'requests-status' }, 'Status'), status),
        h('div', { class: 'field' }, h('label', { for: 'requests-path' }, 'Path starts with'), path),
        h('div', { class: 'field' }, h('label', { for: 'requests-time' }, 'Time'), time),
        rangeFields),
      error,
      empty,
      count,
      h('div', { class: 'table-wrap' },
        h('table', { class: 'requests-table', 'data-testid': 'requests-table' },
          h('caption', { class: 'visually-hidden' }, 'Recent requests, newest first'),
          h('thead', {}, h('tr', {}, ['Time', 'Method', 'Path', 'Status', 'Time taken', 'Transport', 'User', 'Request ID']
            .map((title) => h('th', { scope: 'col' }, title)))),
          body)),
      updated),
    problems.element);

  /** The filters as the server takes them, and the time bounds in ms. */
  function filters() {
    const bounds = timeBounds(time.value, Date.now(), from.value, to.value);
    return { status: status.value, path: path.value.trim(), since: bounds.since, until: bounds.until, error: bounds.error };
  }

  async function read(isAlive) {
    const filter = filters();
    if (filter.error) {
      error.textContent = filter.error;
      error.hidden = false;
      return;
    }
    const times = {};
    if (filter.since !== null) times.since = String(filter.since);
    if (filter.until !== null) times.until = String(filter.until);
    const params = { limit: String(SHOWN), ...times };
    if (filter.status) params.status = filter.status;
    if (filter.path) params.path = filter.path;
    const [requests, logs] = await Promise.allSettled([api.requestLog(params), api.recentLogs(times)]);
    if (!isAlive()) return;
    if (requests.status === 'fulfilled') {
      error.hidden = true;
      keptRequests = keepEntries(keptRequests, requests.value.entries, requestKey);
      show({ entries: keptRequests.filter((entry) => requestMatches(entry, filter)), capacity: requests.value.capacity }, filter);
    } else {
      error.textContent = `The request log could not be read: ${requests.reason.message}`;
      error.hidden = false;
    }
    if (logs.status === 'fulfilled') {
      keptProblems = keepEntries(keptProblems, logs.value, problemKey);
      problems.show(keptProblems.filter((entry) => withinTime(entry, filter)));
    } else {
      problems.fail(logs.reason.message);
    }
    updated.textContent = `Updated at ${new Date().toLocaleTimeString()}; refreshed every ${POLL_MS / 1000} seconds while this page is visible.`;
  }

  function show({ entries, capacity }, filter) {
    // Redrawn only when something changed, so a reader's selection stays.
    const signature = JSON.stringify([filter.status, filter.path, time.value, from.value, to.value, capacity, entries.length,
      entries[0] ?? null]);
    if (signature === drawn) return;
    drawn = signature;
    empty.hidden = entries.length > 0;
    if (capacity === 0) empty.textContent = 'The request log is off: this server was started with --request-log-size 0.';
    else if (filter.status || filter.path || time.value) empty.textContent = 'No recent request matches these filters.';
    else empty.textContent = 'No requests yet.';
    count.hidden = entries.length === 0;
    count.textContent = entries.length > DRAWN
      ? `The latest ${DRAWN.toLocaleString()} of ${entries.length.toLocaleString()} requests kept: narrow the filters to see older ones.`
      : `${entries.length.toLocaleString()} ${entries.length === 1 ? 'request' : 'requests'}.`;
    body.replaceChildren(...entries.slice(0, DRAWN).map(requestRow));
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
    // Long paths are cut short on a wide screen; the whole of it is in the title.
    h('td', { 'data-label': 'Path', class: 'mono request-path', 'data-testid': 'request-path', title: entry.path }, entry.path),
    h('td', { 'data-label': 'Status' },
      h('span', { class: `http-status ${statusClass}`, 'data-testid': 'request-status' }, entry.status ?? '—')),
    h('td', { 'data-label': 'Time taken' }, entry.milliseconds == null ? '—' : formatMilliseconds(entry.milliseconds)),
    h('td', { 'data-label': 'Transport' }, entry.transport),
    h('td', { 'data-label': 'User', class: 'mono' }, entry.uid ?? '—'),
    h('td', { 'data-label': 'Request ID', class: 'mono muted request-id', title: entry.requestID ?? null }, entry.requestID ?? ''));
}

function formatMilliseconds(ms) {
  return ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms).toLocaleString()} ms`;
}
