// The Backups section: the backups in the server's backup folder (`--backup-dir`), each with
// its time, size and whether every file still matches its manifest; "Back up now" (the
// schedule's own backup, one at a time) with its progress; restoring one database's value at a
// path from a backup while the server runs (a preview of both sizes first, then one admin
// write that listeners see and point-in-time restore can undo); and the command that restores
// a whole server offline.

import { busy, confirmDialog, formatBytes, h, progressBar, toast } from '../dom.js';
import { formatPath, parsePath } from '../data/values.js';

const PROGRESS_POLL_MS = 500;

export function mount(container, { api }) {
  const note = h('p', { class: 'note', 'data-testid': 'backups-note' });
  const error = h('p', { class: 'error', role: 'alert', 'data-testid': 'backups-error', hidden: true });
  const body = h('tbody', {});
  const empty = h('p', { class: 'muted', 'data-testid': 'backups-empty', hidden: true }, 'No backups yet.');
  const progress = progressBar('Backup progress');
  const backUp = h('button', { type: 'button', class: 'button primary', 'data-testid': 'backup-now',
    'on:click': () => backUpNow() }, 'Back up now');
  const listing = h('div', { 'data-testid': 'backups-listing', hidden: true },
    h('div', { class: 'button-row' }, backUp),
    progress.element,
    h('div', { class: 'table-wrap' },
      h('table', { class: 'backups-table', 'data-testid': 'backups-table' },
        h('caption', { class: 'visually-hidden' }, 'Backups, newest first'),
        h('thead', {}, h('tr', {}, ['Backup', 'Made', 'Size', 'Databases', 'Check', 'Actions']
          .map((title) => h('th', { scope: 'col' }, title)))),
        body)),
    empty);

  // The restore of one path.
  const backupChoice = h('select', { id: 'restore-backup', 'data-testid': 'restore-backup', 'on:change': () => resetPreview() });
  const database = h('input', { id: 'restore-database', type: 'text', autocomplete: 'off', spellcheck: 'false',
    value: api.database ?? 'default', 'data-testid': 'restore-database', 'on:input': () => resetPreview() });
  const pathInput = h('input', { id: 'restore-path', type: 'text', autocomplete: 'off', spellcheck: 'false', value: '/',
    'data-testid': 'restore-path', 'on:input': () => resetPreview() });
  const previewButton = h('button', { class: 'button', 'data-testid': 'restore-preview' }, 'Preview');
  const preview = h('div', { class: 'restore-preview', 'data-testid': 'restore-preview-result', 'aria-live': 'polite' });
  const restoreButton = h('button', { type: 'button', class: 'button danger', hidden: true, 'data-testid': 'restore-confirm',
    'on:click': () => restore() }, 'Restore this path…');
  const restoreError = h('p', { class: 'error', role: 'alert', 'data-testid': 'restore-error', hidden: true });
  let previewed = null;
  const restoreForm = h('form', { class: 'card restore-form', 'aria-labelledby': 'restore-title', 'data-testid': 'restore-form',
    hidden: true, 'on:submit': (event) => {
      event.preventDefault();
      showPreview();
    } },
    h('h2', { id: 'restore-title' }, 'Restore a path from a backup'),
    h('p', { class: 'note' }, 'Puts one database\'s value at a path (/ for all of it) back as the backup holds it, while '
      + 'the server runs: one write, which open listeners see at once and which point-in-time restore can undo. Only '
      + 'backups whose files all match their manifest can be used.'),
    h('div', { class: 'form-grid' },
      h('div', { class: 'field' }, h('label', { for: 'restore-backup' }, 'Backup'), backupChoice),
      h('div', { class: 'field' }, h('label', { for: 'restore-database' }, 'Database'), database),
      h('div', { class: 'field' }, h('label', { for: 'restore-path' }, 'Path'), pathInput)),
    h('div', { class: 'button-row' }, previewButton, restoreButton),
    restoreError,
    preview);

  const command = h('code', { class: 'command', 'data-testid': 'restore-command' });
  const offline = h('section', { class: 'card offline-restore', 'aria-labelledby': 'offline-title', hidden: true },
    h('h2', { id: 'offline-title' }, 'Restore the whole server'),
    h('p', {}, 'A whole data folder (every database, the accounts and the files) is restored offline: stop the server, '
      + 'run this with the backup\'s name, and start it again. The current folder is moved aside, not deleted. '
      + 'A backup with the functions folder brings that back too (make its venv/ again before starting).'),
    h('pre', { class: 'command-block' }, command));

  container.append(
    h('div', { class: 'section-head' }, h('h1', { id: 'section-title', tabindex: -1 }, 'Backups')),
    note, error, listing, restoreForm, offline);

  let alive = true;
  let state = null;

  async function load() {
    try {
      state = await api.backups();
    } catch (failure) {
      if (!alive) return;
      error.textContent = `The backups could not be read: ${failure.message}`;
      error.hidden = false;
      return;
    }
    if (!alive) return;
    error.hidden = true;
    draw();
  }

  function draw() {
    if (!state.configured) {
      note.textContent = state.message;
      note.classList.add('setup');
      listing.hidden = restoreForm.hidden = offline.hidden = true;
      return;
    }
    note.textContent = `Backups in ${state.folder}, newest first. Each one's files are checked against its manifest (again whenever one of them changes).`;
    listing.hidden = restoreForm.hidden = offline.hidden = false;
    empty.hidden = state.backups.length > 0;
    body.replaceChildren(...state.backups.map(backupRow));
    const chosen = backupChoice.value;
    const usable = state.backups.filter((backup) => backup.verified);
    backupChoice.replaceChildren(...usable.map((backup) => h('option', { value: backup.name }, backup.name)));
    if (usable.some((backup) => backup.name === chosen)) backupChoice.value = chosen;
    previewButton.disabled = usable.length === 0;
    command.textContent = state.restoreCommand.replace('<backup>', usable[0]?.name ?? '<backup>');
    if (state.running) showProgress(state.running);
  }

  function backupRow(backup) {
    const made = backup.finishedAt ? new Date(backup.finishedAt) : null;
    const check = backup.verified
      ? h('span', { class: 'check ok', 'data-testid': 'backup-check' }, 'Verified')
      : h('span', { class: 'check bad', 'data-testid': 'backup-check' }, `Damaged: ${backup.problem}`);
    const use = h('button', { type: 'button', class: 'button', 'data-testid': 'backup-use', disabled: !backup.verified,
      'aria-label': `Restore a path from ${backup.name}`, 'on:click': () => {
        backupChoice.value = backup.name;
        command.textContent = state.restoreCommand.replace('<backup>', backup.name);
        resetPreview();
        pathInput.focus();
      } }, 'Restore a path…');
    return h('tr', { 'data-testid': 'backup-row', 'data-name': backup.name, 'data-verified': String(backup.verified) },
      h('th', { scope: 'row', class: 'mono backup-name', 'data-label': 'Backup' }, backup.name),
      h('td', { 'data-label': 'Made' }, made ? h('time', { datetime: made.toISOString() }, made.toLocaleString()) : '—'),
      h('td', { 'data-label': 'Size' }, formatBytes(backup.bytes)),
      h('td', { 'data-label': 'Databases' }, backup.databases.join(', ') || '—',
        backup.functions ? h('span', { class: 'note', 'data-testid': 'backup-functions' }, ' + functions folder') : null),
      h('td', { 'data-label': 'Check' }, check),
      h('td', { 'data-label': 'Actions' }, use));
  }

  async function backUpNow() {
    progress.update(null, 'Starting the backup…');
    let watching = true;
    // The request answers once the backup is written; meanwhile the list tells how far it is.
    const watch = async () => {
      while (watching && alive) {
        await new Promise((resolve) => setTimeout(resolve, PROGRESS_POLL_MS));
        if (!watching) return;
        try {
          const { running } = await api.backupProgress();
          if (running && watching) showProgress(running);
        } catch { /* the answer of the backup itself says what went wrong */ }
      }
    };
    await busy(backUp, async () => {
      watch();
      try {
        const { backup } = await api.backUpNow();
        toast(`Backup ${backup.name} written (${formatBytes(backup.bytes)}).`, 'success');
        progress.update(1, `Backup ${backup.name} written: ${formatBytes(backup.bytes)}.`);
      } finally {
        watching = false;
      }
      await load();
    }, (failure) => {
      progress.hide();
      toast(`No backup was made: ${failure.message}`, 'error');
    });
  }

  function showProgress(running) {
    const fraction = running.totalBytes > 0 ? running.doneBytes / running.totalBytes : null;
    progress.update(fraction, `Backing up… ${formatBytes(running.doneBytes)} of ${formatBytes(running.totalBytes)}`
      + (running.item ? ` (${running.item})` : ''));
  }

  function target() {
    return { backup: backupChoice.value, database: database.value.trim(), path: formatPath(parsePath(pathInput.value)) };
  }

  function resetPreview() {
    previewed = null;
    preview.replaceChildren();
    restoreButton.hidden = true;
    restoreError.hidden = true;
  }

  async function showPreview() {
    resetPreview();
    const wanted = target();
    if (!wanted.backup) {
      restoreError.textContent = 'Choose a verified backup first.';
      restoreError.hidden = false;
      return;
    }
    await busy(previewButton, async () => {
      const answer = await api.previewRestore(wanted);
      if (!alive) return;
      previewed = wanted;
      preview.replaceChildren(h('dl', { class: 'figures compare' },
        figure('Now', answer.current, 'preview-current'),
        figure(`In ${answer.backup}`, answer.backed, 'preview-backup')));
      restoreButton.hidden = false;
    }, (failure) => {
      restoreError.textContent = `No preview: ${failure.message}`;
      restoreError.hidden = false;
    });
  }

  async function restore() {
    if (!previewed) return;
    const chosen = previewed;
    const where = chosen.path === '/' ? `all of database ${chosen.database}` : `${chosen.path} in database ${chosen.database}`;
    const ok = await confirmDialog(`Replace ${where} with its value in ${chosen.backup}? Open clients see the change at once; `
      + 'hearth restore --to can take it back.', { confirm: 'Restore', danger: true });
    if (!ok) return;
    await busy(restoreButton, async () => {
      const answer = await api.restoreFromBackup(chosen);
      toast(`Restored ${answer.path} from ${answer.backup} (write ${answer.sequence.toLocaleString()}).`, 'success');
      resetPreview();
    }, (failure) => {
      restoreError.textContent = `Nothing was restored: ${failure.message}`;
      restoreError.hidden = false;
    });
  }

  load();
  return () => { alive = false; };
}

function figure(label, figures, testid) {
  const words = !figures.exists ? 'No data'
    : `${formatBytes(figures.bytes)}${figures.children ? `, ${figures.children.toLocaleString()} ${figures.children === 1 ? 'child' : 'children'}` : ''}`;
  return h('div', { class: 'figure card' }, h('dt', {}, label), h('dd', { 'data-testid': testid }, words));
}
