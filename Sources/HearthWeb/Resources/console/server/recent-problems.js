// The Server page's "Recent problems": the warnings and errors the server logged lately
// (GET /.hearth/logs, newest first), each with its level, time, message and metadata — among it
// the request ID, which finds the request's other lines in the server's log.

import { h } from '../dom.js';

const SHOWN = 50;
const LEVEL_WORDS = { critical: 'Critical', error: 'Error', warning: 'Warning', notice: 'Notice' };
const METADATA_NAMES = { 'hb.request.id': 'Request ID' };

/**
 * Makes the panel.
 * @returns {{ element: HTMLElement, show: (entries: object[]) => void, fail: (words: string) => void }}
 *   `show` draws the server's entries (redrawing only when they changed, so a reader's place and
 *   selection stay); `fail` says they could not be read.
 */
export function recentProblems() {
  const list = h('ol', { class: 'problems-list', 'data-testid': 'problems-list' });
  const empty = h('p', { class: 'muted', 'data-testid': 'problems-empty', hidden: true },
    'No warnings or errors since the server started.');
  const more = h('p', { class: 'muted', hidden: true });
  const error = h('p', { class: 'error', role: 'alert', 'data-testid': 'problems-error', hidden: true });
  const count = h('span', { class: 'muted problems-count', 'data-testid': 'problems-count' });
  const element = h('section', { class: 'problems card', 'aria-labelledby': 'problems-title', 'data-testid': 'problems' },
    h('h2', { id: 'problems-title' }, 'Recent problems ', count),
    h('p', { class: 'note' }, 'Warnings and errors the server logged, newest first. The server keeps the latest 200 in memory.'),
    error, empty, list, more);
  let drawn = null;

  function show(entries) {
    error.hidden = true;
    const signature = JSON.stringify([entries.length, entries[0] ?? null]);
    if (signature === drawn) return;
    drawn = signature;
    empty.hidden = entries.length > 0;
    count.textContent = entries.length ? `(${entries.length.toLocaleString()})` : '';
    list.replaceChildren(...entries.slice(0, SHOWN).map(entryItem));
    more.hidden = entries.length <= SHOWN;
    more.textContent = `And ${(entries.length - SHOWN).toLocaleString()} older ones (GET /.hearth/logs lists them all).`;
  }

  function fail(words) {
    error.textContent = `The recent problems could not be read: ${words}`;
    error.hidden = false;
  }

  return { element, show, fail };
}

function entryItem(entry) {
  const time = new Date(entry.time);
  const valid = !Number.isNaN(time.getTime());
  const metadata = Object.entries(entry.metadata ?? {}).sort(([a], [b]) => metadataOrder(a) - metadataOrder(b) || a.localeCompare(b));
  return h('li', { class: 'problem', 'data-testid': 'problem', 'data-level': entry.level },
    h('div', { class: 'problem-head' },
      h('span', { class: `level level-${entry.level}`, 'data-testid': 'problem-level' }, LEVEL_WORDS[entry.level] ?? entry.level),
      h('time', { datetime: entry.time, title: valid ? time.toLocaleString() : null, 'data-testid': 'problem-time' },
        valid ? time.toLocaleTimeString() : entry.time),
      entry.source ? h('span', { class: 'muted' }, entry.source) : null),
    h('p', { class: 'problem-message', 'data-testid': 'problem-message' }, entry.message),
    metadata.length ? h('dl', { class: 'problem-metadata', 'data-testid': 'problem-metadata' },
      metadata.map(([name, value]) => h('div', {}, h('dt', {}, METADATA_NAMES[name] ?? name), h('dd', {}, value))))
      : null);
}

/** The request ID first: it is what an operator searches the log for. */
function metadataOrder(name) {
  return name in METADATA_NAMES ? 0 : 1;
}
