// The Hosting section (`#/hosting`): the owner's web app as this server hosts it
// (GET /.hearth/hosting, docs/hosting.md). It says whether the server serves a folder as it is
// on disk (`--hosting`) or the live one of the releases deployed with `hearth hosting deploy`.
// Then it lists every release kept, newest first, with its time, note, file count and size, the
// live one marked. A release's files are read when it is expanded (GET /.hearth/hosting/files,
// the first 2,000). Rolling back to an earlier release asks first (POST
// /.hearth/hosting/rollback); servers serving the releases switch on their next request. The list
// is read every five seconds while the page is visible, so a deploy from the command line shows
// up, and at once after a rollback.

import { busy, confirmDialog, counted, formatBytes, h } from '../dom.js';
import { visiblePoller } from '../server/visible-poller.js';

const POLL_MS = 5000;

export function mount(container, { api }) {
  let state = null;
  // Release ID → its card, kept from one read to the next, so an open file list and focus stay.
  const cards = new Map();
  let order = '';

  const loading = h('p', { class: 'muted', 'data-testid': 'hosting-loading' }, 'Reading the releases…');
  const error = h('p', { class: 'error', role: 'alert', 'data-testid': 'hosting-error', hidden: true });
  const mode = h('p', { class: 'note setup', 'data-testid': 'hosting-mode', hidden: true });
  const command = h('code', { 'data-testid': 'hosting-deploy-command' });
  const empty = h('section', { class: 'card hosting-empty', 'aria-labelledby': 'hosting-empty-title', 'data-testid': 'hosting-empty',
    hidden: true },
    h('h2', { id: 'hosting-empty-title' }, 'No release is deployed yet'),
    h('p', {}, 'Deploy your Firebase web app from the folder that holds its firebase.json:'),
    h('pre', { class: 'command-block' }, command),
    h('p', { class: 'note' }, 'Each deploy is kept as a release and made live. A server started without --hosting serves the live '
      + 'release, switching on its next request after a deploy; the releases then show here, where you can roll back to an '
      + 'earlier one (see docs/hosting.md).'));

  const liveLine = h('p', { class: 'hosting-live', 'data-testid': 'hosting-live' });
  const result = h('div', { class: 'hosting-result', 'aria-live': 'polite', 'data-testid': 'hosting-result' });
  const actionError = h('p', { class: 'error', role: 'alert', 'data-testid': 'hosting-action-error', hidden: true });
  const releasesTitle = h('h2', { id: 'releases-title', tabindex: -1 }, 'Releases');
  const list = h('ol', { class: 'releases', 'aria-labelledby': 'releases-title', 'data-testid': 'releases' });
  const updated = h('p', { class: 'muted', 'data-testid': 'hosting-updated' });
  const listing = h('section', { class: 'hosting-releases', 'aria-labelledby': 'releases-title', 'data-testid': 'hosting-listing',
    hidden: true },
    releasesTitle,
    h('p', { class: 'note' }, 'Newest first. A deploy keeps the latest ten releases (hearth hosting deploy --keep) and never '
      + 'removes the live one.'),
    liveLine,
    result,
    actionError,
    list,
    updated);

  container.append(h('div', { class: 'section-head' }, h('h1', { id: 'section-title', tabindex: -1 }, 'Hosting')),
    loading, error, mode, empty, listing);

  async function read(isAlive) {
    let answer;
    try {
      answer = await api.hosting();
    } catch (failure) {
      if (!isAlive()) return;
      loading.hidden = true;
      error.textContent = `The releases could not be read: ${failure.message}`;
      error.hidden = false;
      return;
    }
    if (!isAlive()) return;
    error.hidden = true;
    state = answer;
    draw();
    updated.textContent = `Updated at ${new Date().toLocaleTimeString()}; read again every ${POLL_MS / 1000} seconds while this page is visible.`;
  }

  function draw() {
    loading.hidden = true;
    mode.hidden = false;
    mode.textContent = modeWords(state);
    command.textContent = state.deployCommand;
    const releases = state.releases ?? [];
    empty.hidden = releases.length > 0;
    listing.hidden = releases.length === 0;
    for (const id of cards.keys()) {
      if (!releases.some((release) => release.id === id)) cards.delete(id);
    }
    for (const release of releases) {
      if (!cards.has(release.id)) cards.set(release.id, releaseCard(release));
    }
    // Cards are moved only when the order changed: moving a card would take focus from its buttons.
    const ids = releases.map((release) => release.id).join(' ');
    if (ids !== order) {
      order = ids;
      list.replaceChildren(...releases.map((release) => cards.get(release.id).element));
    }
    for (const release of releases) cards.get(release.id).mark(release.id === state.live);
    const live = releases.find((release) => release.id === state.live);
    liveLine.replaceChildren(...(live
      ? [h('strong', {}, state.mode === 'folder' ? 'Live release (for servers without --hosting): ' : 'Live: '),
        `release ${live.id}, deployed ${new Date(live.created).toLocaleString()}${live.message ? `: ${live.message}` : ''}.`]
      : [h('strong', {}, 'No release is live.')]));
  }

  function releaseCard(release) {
    const titleId = `release-${release.id}`;
    const filesId = `release-files-${release.id}`;
    const created = new Date(release.created);
    const badge = h('span', { class: 'badge live-badge', 'data-testid': 'release-live-badge', hidden: true }, 'Live');
    const toggle = h('button', { type: 'button', class: 'button', 'aria-expanded': 'false', 'aria-controls': filesId,
      'aria-describedby': titleId, 'data-testid': 'release-files-toggle', 'on:click': () => toggleFiles() }, 'Show files');
    const rollBack = h('button', { type: 'button', class: 'button danger', 'aria-describedby': titleId,
      'data-testid': 'release-rollback', 'on:click': () => rollBackTo(release, rollBack) }, 'Roll back to this release…');
    const files = h('div', { id: filesId, class: 'release-files', 'data-testid': 'release-files', hidden: true });
    const element = h('li', { class: 'card release', 'data-testid': 'release', 'data-id': release.id },
      h('h3', { id: titleId, class: 'release-title' }, 'Release ', h('span', { class: 'mono' }, release.id), badge),
      h('dl', { class: 'release-facts' },
        fact('Deployed', h('time', { datetime: created.toISOString() }, created.toLocaleString()), 'release-created'),
        fact('Note', release.message || '—', 'release-message'),
        fact('Files', counted(release.files, 'file'), 'release-file-count'),
        fact('Size', formatBytes(release.bytes), 'release-size'),
        fact('Deployed from', h('span', { class: 'mono' }, release.source), 'release-source')),
      h('div', { class: 'button-row' }, toggle, rollBack),
      files);
    let loaded = false;

    async function toggleFiles() {
      const open = toggle.getAttribute('aria-expanded') !== 'true';
      toggle.setAttribute('aria-expanded', String(open));
      toggle.textContent = open ? 'Hide files' : 'Show files';
      files.hidden = !open;
      if (!open || loaded) return;
      files.replaceChildren(h('p', { class: 'muted', role: 'status' }, 'Reading the files…'));
      await busy(toggle, async () => {
        const answer = await api.hostingFiles(release.id);
        loaded = true;
        files.replaceChildren(...fileList(release, answer));
      }, (failure) => {
        // Not kept: showing the files again asks again.
        files.replaceChildren(h('p', { class: 'error', role: 'alert', 'data-testid': 'release-files-error' },
          `The files could not be read: ${failure.message}`));
      });
    }

    return {
      element,
      mark(live) {
        element.dataset.live = String(live);
        element.classList.toggle('live', live);
        if (live) element.setAttribute('aria-current', 'true');
        else element.removeAttribute('aria-current');
        badge.hidden = !live;
        rollBack.hidden = live;
      },
    };
  }

  async function rollBackTo(release, button) {
    const from = state.live;
    const note = release.message ? ` (${release.message})` : '';
    const effect = state.mode === 'folder'
      ? 'This server goes on serving its --hosting folder; servers started without --hosting switch to the release on their next request.'
      : `The app switches to it on its next request${from ? `; release ${from} stays kept and can be made live again` : ''}.`;
    const ok = await confirmDialog(`Roll back to release ${release.id}, deployed ${new Date(release.created).toLocaleString()}${note}? `
      + effect, { confirm: 'Roll back', danger: true });
    if (!ok) return;
    actionError.hidden = true;
    result.textContent = '';
    const done = await busy(button, async () => {
      const live = await api.rollBackHosting(release.id);
      state = { ...state, live: live.id };
      draw();
      result.textContent = `Rolled back: release ${live.id} is live${from ? ` in place of ${from}` : ''}.`;
    }, (failure) => {
      actionError.textContent = `Not rolled back: ${failure.message}`;
      actionError.hidden = false;
    });
    // The release's button is gone now that it is live: focus moves to the list's heading rather than falling to the page.
    if (done) releasesTitle.focus();
    poller.now();
  }

  const poller = visiblePoller(read, POLL_MS);
  return () => poller.stop();
}

/** What this server serves: a folder as it is on disk, or the live release. */
function modeWords(state) {
  if (state.mode === 'folder') {
    return `Served from the folder ${state.folder} as it is on disk (hearth serve --hosting). Releases are served without --hosting: `
      + `those below, kept in ${state.releasesFolder}, are what a server started without it serves.`;
  }
  return `Serving the live release of those deployed to ${state.releasesFolder}. After a deploy or a rollback, the app switches `
    + 'on its next request.';
}

function fact(label, value, testid) {
  return h('div', {}, h('dt', {}, label), h('dd', { 'data-testid': testid }, value));
}

/** A release's files: how many, and a table of the first 2,000 by site and path. */
function fileList(release, { files, total }) {
  const note = files.length < total
    ? `Only the first ${files.length.toLocaleString()} of ${total.toLocaleString()} files are shown.`
    : `${counted(total, 'file')}, by site and path.`;
  return [
    h('p', { class: 'note', 'data-testid': 'release-files-note' }, note),
    files.length ? h('div', { class: 'table-wrap release-files-wrap', tabindex: 0, 'aria-label': `Files of release ${release.id}` },
      h('table', { class: 'release-files-table', 'data-testid': 'release-files-table' },
        h('caption', { class: 'visually-hidden' }, `Files of release ${release.id}`),
        h('thead', {}, h('tr', {}, ['Site', 'Path', 'Size'].map((title) => h('th', { scope: 'col' }, title)))),
        h('tbody', {}, files.map((file) => h('tr', { 'data-testid': 'release-file', 'data-site': file.site, 'data-path': file.path },
          h('td', { class: 'mono', 'data-label': 'Site' }, file.site),
          h('td', { class: 'mono release-file-path', 'data-label': 'Path' }, file.path),
          h('td', { 'data-label': 'Size' }, formatBytes(file.bytes))))))) : null,
  ];
}
