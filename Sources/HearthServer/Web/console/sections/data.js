// The Data section: the live tree of one location (`#/data/<path>`), and the selected node's panel.
//
// One stream per shown location keeps the browser under its six-connections-per-server
// limit. A location with more than LARGE_LOCATION children is streamed as a `$key` window
// (limitToFirst) that "Show more" widens; others are streamed whole, and the tree draws only
// expanded nodes, PAGE_SIZE children at a time. "Open here" moves the location deeper.

import { encodePath } from '../api.js';
import { breadcrumbs, h } from '../dom.js';
import { LiveLocation } from '../data/live-location.js';
import { NodePanel } from '../data/node-panel.js';
import { PAGE_SIZE, TreeView } from '../data/tree-view.js';
import { childCount, formatPath, parsePath } from '../data/values.js';

const LARGE_LOCATION = 1_000;

const STATUS_WORDS = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Offline: reconnecting…',
};

function dataHash(keys) {
  return keys.length ? `#/data/${encodePath(keys.join('/'))}` : '#/data';
}

export function mount(container, { api }, route) {
  const location = parsePath(route.rest.map(decodeURIComponent).join('/'));
  const status = h('span', { class: 'status', 'data-testid': 'data-status', role: 'status' });
  const retry = h('button', { type: 'button', class: 'button', hidden: true, 'on:click': () => start() }, 'Retry');
  const panel = new NodePanel({
    api,
    onOpen: (keys) => { window.location.hash = dataHash(keys); },
    onReveal: (keys) => tree.reveal(keys),
    onClose: () => layout.classList.remove('panel-open'),
  });
  const tree = new TreeView({
    // A windowed location holds only part of its children: the panel must not offer it as the whole value.
    onSelect: (keys, value) => panel.show(keys, value, location, keys.length === location.length ? tree.total : null),
    onWiden: () => start(windowSize + PAGE_SIZE),
  });
  const layout = h('div', { class: 'data-layout' },
    h('div', { class: 'tree-pane', 'on:click': (event) => {
      if (event.target.closest('.line')) layout.classList.add('panel-open');
    } }, tree.element),
    panel.element);
  const pathInput = h('input', { id: 'data-path', type: 'text', value: formatPath(location), autocomplete: 'off',
    spellcheck: 'false', 'data-testid': 'data-path-input' });
  container.append(
    h('div', { class: 'section-head' },
      h('h1', { id: 'section-title', tabindex: -1 }, 'Data'),
      h('span', { class: 'status-line' }, status, retry)),
    h('div', { class: 'data-toolbar' },
      breadcrumbs(location, dataHash, 'root', 'Location'),
      h('form', { class: 'inline-form', 'on:submit': (event) => {
        event.preventDefault();
        window.location.hash = dataHash(parsePath(pathInput.value));
      } },
        h('label', { for: 'data-path' }, 'Go to'), pathInput,
        h('button', { class: 'button' }, 'Go'))),
    layout);

  let live = null;
  let windowSize = null;
  // Counts starts, so one that was overtaken (by another start or the cleanup) while it waited
  // for the server opens no stream: an orphaned EventSource would hold a connection for good.
  let starts = 0;

  async function start(size = null) {
    const run = ++starts;
    live?.close();
    live = null;
    retry.hidden = true;
    setStatus('connecting');
    let total = null;
    try {
      // Keys only (`shallow`), to choose between a whole stream and a window before loading data.
      const count = childCount(await api.request('GET', api.dbUrl(location.join('/'), { shallow: 'true' })));
      if (count > LARGE_LOCATION) total = count;
    } catch (error) {
      if (run === starts) setStatus('failed', error.message);
      return;
    }
    if (run !== starts) return;
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

  function setStatus(state, words) {
    status.textContent = words ?? STATUS_WORDS[state];
    status.dataset.state = state;
    retry.hidden = state !== 'failed';
  }

  start();
  return () => {
    starts += 1;
    live?.close();
  };
}
