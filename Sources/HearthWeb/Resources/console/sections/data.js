// The Data section: the live tree of one location (`#/data/<path>`), and the selected node's panel.
//
// First the server says how big the location is (`/.hearth/data/summary`, its nodes counted
// up to BIG_LOCATION_NODES). A location that small is streamed live: one stream per shown
// location keeps the browser under its six-connections-per-server limit; one with more than
// LARGE_LOCATION children is streamed as a `$key` window (limitToFirst) that "Show more"
// widens; others are streamed whole, and the tree draws only expanded nodes, PAGE_SIZE
// children at a time. A bigger location is never downloaded whole: it is read on demand
// (data/lazy-location.js), a page of keys at a time with only the size of each object, and
// is not live; Refresh reads it again. "Open here" moves the location deeper, to a part that
// may be small enough to follow live. "Find keys" searches the location's children by key on
// the server (data/key-search.js).

import { encodePath } from '../api.js';
import { breadcrumbs, counted, h } from '../dom.js';
import { KeySearch } from '../data/key-search.js';
import { LAZY_PAGE, LazyLocation } from '../data/lazy-location.js';
import { LiveLocation } from '../data/live-location.js';
import { NodePanel } from '../data/node-panel.js';
import { PAGE_SIZE, TreeView } from '../data/tree-view.js';
import { formatPath, parsePath } from '../data/values.js';

const LARGE_LOCATION = 1_000;
// Past this many nodes a location is read on demand instead of streamed.
export const BIG_LOCATION_NODES = 20_000;

const STATUS_WORDS = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Offline: reconnecting…',
  reading: 'Reading…',
  static: 'Not live',
};

function dataHash(keys) {
  return keys.length ? `#/data/${encodePath(keys.join('/'))}` : '#/data';
}

export function mount(container, { api }, route) {
  const location = parsePath(route.rest.map(decodeURIComponent).join('/'));
  const status = h('span', { class: 'status', 'data-testid': 'data-status', role: 'status' });
  const retry = h('button', { type: 'button', class: 'button', hidden: true, 'on:click': () => start() }, 'Retry');
  const refresh = h('button', { type: 'button', class: 'button', hidden: true, 'data-testid': 'data-refresh',
    'on:click': () => start(null, true) }, 'Refresh');
  const bigNote = h('p', { class: 'big-note', 'data-testid': 'data-big-note', hidden: true });
  const panel = new NodePanel({
    api,
    onOpen: (keys) => { window.location.hash = dataHash(keys); },
    onReveal: (keys) => {
      tree.reveal(keys);
      if (lazy) start(null, true);
    },
    onClose: () => layout.classList.remove('panel-open'),
    // A location read on demand is not live: what the panel wrote shows after a refresh.
    onWritten: () => { if (lazy) start(null, true); },
  });
  const tree = new TreeView({
    // A windowed location holds only part of its children: the panel must not offer it as the whole value.
    onSelect: (keys, value) => panel.show(keys, value, location, keys.length === location.length ? tree.total : null),
    onWiden: () => start(windowSize + PAGE_SIZE),
    onLoad: (keys) => loadMore(keys),
  });
  const layout = h('div', { class: 'data-layout' },
    h('div', { class: 'tree-pane', 'on:click': (event) => {
      if (event.target.closest('.line')) layout.classList.add('panel-open');
    } }, tree.element),
    panel.element);
  const search = new KeySearch({
    api,
    location,
    onOpen: (key, value) => {
      // A loaded row is selected in the tree (and stays live); any other key is shown in the panel.
      const keys = [...location, key];
      const row = tree.rows.get(formatPath(keys));
      if (row) tree.select(row);
      else panel.show(keys, value, location);
      layout.classList.add('panel-open');
    },
  });
  const pathInput = h('input', { id: 'data-path', type: 'text', value: formatPath(location), autocomplete: 'off',
    spellcheck: 'false', 'data-testid': 'data-path-input' });
  container.append(
    h('div', { class: 'section-head' },
      h('h1', { id: 'section-title', tabindex: -1 }, 'Data'),
      h('span', { class: 'status-line' }, status, retry, refresh)),
    bigNote,
    h('div', { class: 'data-toolbar' },
      breadcrumbs(location, dataHash, 'root', 'Location'),
      h('form', { class: 'inline-form', 'on:submit': (event) => {
        event.preventDefault();
        window.location.hash = dataHash(parsePath(pathInput.value));
      } },
        h('label', { for: 'data-path' }, 'Go to'), pathInput,
        h('button', { class: 'button' }, 'Go')),
      search.form),
    search.results,
    layout);

  let live = null;
  // The location read on demand, when it is too big to stream.
  let lazy = null;
  const loading = new Set();
  let windowSize = null;
  // Counts starts, so one that was overtaken (by another start or the cleanup) while it waited
  // for the server opens no stream: an orphaned EventSource would hold a connection for good.
  let starts = 0;

  /** Opens the location; `again`: a Refresh of one read on demand, which keeps what was expanded. */
  async function start(size = null, again = false) {
    const run = ++starts;
    live?.close();
    live = null;
    retry.hidden = true;
    setStatus(again ? 'reading' : 'connecting');
    let total = null;
    let summary;
    try {
      // Its size only, to choose between a whole stream, a window, and reading on demand.
      summary = await api.dataSummary(location.join('/'), BIG_LOCATION_NODES);
      if (summary.children > LARGE_LOCATION) total = summary.children;
    } catch (error) {
      if (run === starts) setStatus('failed', error.message);
      return;
    }
    if (run !== starts) return;
    if (summary.more) {
      await startOnDemand(run, summary, again);
      return;
    }
    lazy = null;
    bigNote.hidden = true;
    windowSize = total === null ? null : (size ?? PAGE_SIZE);
    const params = windowSize ? { orderBy: '"$key"', limitToFirst: String(windowSize) } : {};
    let first = true;
    live = new LiveLocation(api, location, {
      params,
      onStatus: setStatus,
      onChange: (changed) => {
        if (first) tree.show(location, live.value, total);
        else tree.update(live.value, [...location, ...changed], total);
        first = false;
      },
    });
    live.open();
  }

  async function startOnDemand(run, summary, again) {
    const next = new LazyLocation(api, location);
    next.value = again ? lazy?.value ?? null : null;
    setStatus('reading');
    try {
      if (again && next.value) await next.refresh(tree.expanded, formatPath);
      else await next.load();
    } catch (error) {
      if (run === starts) setStatus('failed', error.message);
      return;
    }
    if (run !== starts) return;
    lazy = next;
    loading.clear();
    bigNote.textContent = `This location is too big to follow live (${counted(summary.children, 'child', 'children')}, `
      + `more than ${BIG_LOCATION_NODES.toLocaleString()} nodes), so its children are read ${LAZY_PAGE} at a time `
      + 'and changes show when you press Refresh. Select a smaller part and choose “Open here” to follow it live.';
    bigNote.hidden = false;
    tree.show(location, lazy.value, null);
    setStatus('static');
  }

  /** Reads the next page of an object of the location read on demand, and draws it. */
  async function loadMore(keys) {
    const path = formatPath(keys);
    const current = lazy;
    if (!current || loading.has(path)) return;
    loading.add(path);
    try {
      await current.loadMore(keys);
    } catch (error) {
      setStatus('failed', error.message);
      return;
    } finally {
      loading.delete(path);
    }
    if (current === lazy) tree.redraw(keys);
  }

  function setStatus(state, words) {
    status.textContent = words ?? STATUS_WORDS[state];
    status.dataset.state = state;
    retry.hidden = state !== 'failed';
    refresh.hidden = state !== 'static' && state !== 'reading';
  }

  start();
  return () => {
    starts += 1;
    live?.close();
  };
}
