// The Rules section: the database's rules document in an editor with line numbers; "Deploy"
// sends it, and the server validates it first: a refusal names a line and column, which the
// editor then shows and puts the caret at. A refused document changes nothing.

import { h } from '../dom.js';

const ERROR_POSITION = /^Line (\d+), column (\d+): ([\s\S]*)$/;

export function mount(container, { api }) {
  const gutter = h('div', { class: 'gutter', 'aria-hidden': 'true' });
  const editor = h('textarea', { id: 'rules-text', class: 'code', spellcheck: 'false', wrap: 'off', autocapitalize: 'off',
    autocomplete: 'off', 'data-testid': 'rules-editor', 'aria-describedby': 'rules-help rules-error', disabled: true });
  const error = h('p', { id: 'rules-error', class: 'error', role: 'alert', 'data-testid': 'rules-error', hidden: true });
  const status = h('p', { class: 'muted', role: 'status', 'data-testid': 'rules-status' }, 'Loading the rules…');
  const deploy = h('button', { type: 'submit', class: 'button primary', 'data-testid': 'rules-deploy',
    'aria-keyshortcuts': 'Control+S Meta+S', disabled: true }, 'Validate and deploy');
  const reload = h('button', { type: 'button', class: 'button', 'data-testid': 'rules-reload', 'on:click': () => load() },
    'Reload from server');
  let deployed = '';

  container.append(
    h('div', { class: 'section-head' }, h('h1', { id: 'section-title', tabindex: -1 }, 'Rules')),
    h('form', { class: 'rules-form', 'on:submit': (event) => { event.preventDefault(); send(); } },
      h('label', { for: 'rules-text', class: 'label' }, `Rules of database ${api.database ?? 'default'}`),
      h('p', { id: 'rules-help', class: 'muted' },
        'Deploying checks the document first; a document with an error is not deployed. Ctrl+S (⌘S) deploys.'),
      h('div', { class: 'button-row' }, deploy, reload, status),
      error,
      h('div', { class: 'code-editor' }, gutter, editor)));

  editor.addEventListener('input', () => {
    drawGutter();
    showStatus(editor.value === deployed ? 'Deployed.' : 'Changed, not deployed yet.');
  });
  editor.addEventListener('scroll', () => { gutter.scrollTop = editor.scrollTop; });
  editor.addEventListener('keydown', (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key === 's') {
      event.preventDefault();
      send();
    }
  });

  function drawGutter(errorLine = null) {
    const count = editor.value.split('\n').length;
    gutter.replaceChildren(...Array.from({ length: count }, (_, index) =>
      h('span', { class: index + 1 === errorLine ? 'error-line' : null }, String(index + 1))));
    gutter.scrollTop = editor.scrollTop;
  }

  function showStatus(text) {
    status.textContent = text;
  }

  async function load() {
    error.hidden = true;
    try {
      deployed = await (await api.request('GET', api.rulesUrl(), { as: 'response' })).text();
      editor.value = deployed;
      editor.disabled = false;
      deploy.disabled = false;
      drawGutter();
      showStatus('Deployed.');
    } catch (failure) {
      showStatus('');
      showError(`The rules could not be loaded: ${failure.message}`);
    }
  }

  async function send() {
    const text = editor.value;
    deploy.disabled = true;
    error.hidden = true;
    showStatus('Deploying…');
    try {
      await api.request('PUT', api.rulesUrl(), { body: text, headers: { 'Content-Type': 'application/json' } });
      deployed = text;
      drawGutter();
      showStatus(`Deployed at ${new Date().toLocaleTimeString()}.`);
    } catch (failure) {
      showStatus('Not deployed: the rules in force are unchanged.');
      const position = ERROR_POSITION.exec(failure.message);
      if (position) {
        const [line, column] = [Number(position[1]), Number(position[2])];
        showError(`Line ${line}, column ${column}: ${position[3]}`);
        placeCaret(line, column);
      } else {
        showError(failure.message);
      }
    } finally {
      deploy.disabled = false;
    }
  }

  function showError(text) {
    error.textContent = text;
    error.hidden = false;
  }

  /** Puts the caret at a 1-based line and column and scrolls the line into the middle. */
  function placeCaret(line, column) {
    const lines = editor.value.split('\n');
    const row = Math.min(Math.max(line, 1), lines.length);
    let offset = 0;
    for (let index = 0; index < row - 1; index += 1) offset += lines[index].length + 1;
    offset += Math.min(Math.max(column - 1, 0), lines[row - 1].length);
    drawGutter(row);
    editor.focus();
    editor.setSelectionRange(offset, offset);
    const lineHeight = parseFloat(getComputedStyle(editor).lineHeight) || 20;
    editor.scrollTop = Math.max(0, (row - 1) * lineHeight - editor.clientHeight / 2);
  }

  load();
  return () => {};
}
