// The Rules section: the database's rules document in an editor with line numbers; "Deploy"
// sends it, and the server validates it first: a refusal names a line and column, which the
// editor then shows and puts the caret at. A refused document changes nothing.
//
// Beside it, the rules simulator (as Firebase's Rules Playground): a read, set or update at a
// location, as someone signed out or signed in (uid, provider, token claims), judged by the
// server against the current data, without writing, by the deployed rules or the draft in the
// editor. The rules it evaluated are listed, and their lines marked in the editor's gutter.

import { h } from '../dom.js';
import { simulator } from './rules-simulator.js';

const ERROR_POSITION = /^Line (\d+), column (\d+): ([\s\S]*)$/;

export function mount(container, { api, hearth }) {
  const gutter = h('div', { class: 'gutter', 'aria-hidden': 'true' });
  const editor = h('textarea', { id: 'rules-text', class: 'code', spellcheck: 'false', wrap: 'off', autocapitalize: 'off',
    autocomplete: 'off', 'data-testid': 'rules-editor', 'aria-describedby': 'rules-help rules-error', disabled: true });
  const error = h('p', { id: 'rules-error', class: 'error', role: 'alert', 'data-testid': 'rules-error', hidden: true });
  const status = h('p', { class: 'muted', role: 'status', 'data-testid': 'rules-status' }, 'Loading the rules…');
  const deploy = h('button', { type: 'submit', class: 'button primary', 'data-testid': 'rules-deploy',
    'aria-keyshortcuts': 'Control+S Meta+S', disabled: true }, 'Validate and deploy');
  const reload = h('button', { type: 'button', class: 'button', 'data-testid': 'rules-reload', 'on:click': () => load() },
    'Reload from server');
  // Bands behind the text on the lines a simulation marked (the textarea is transparent).
  const bands = h('div', { class: 'code-bands', 'aria-hidden': 'true' });
  let deployed = '';

  const simulation = simulator({ api, admin: hearth.admin, draft: () => editor.value, mark: (marks) => drawGutter(null, marks),
    showLine: (line, column, isError) => placeCaret(line, column, isError) });
  container.append(
    h('div', { class: 'section-head' }, h('h1', { id: 'section-title', tabindex: -1 }, 'Rules')),
    h('div', { class: 'rules-layout' }, h('form', { class: 'rules-form', 'on:submit': (event) => { event.preventDefault(); send(); } },
      h('label', { for: 'rules-text', class: 'label' }, `Rules of database ${api.database ?? 'default'}`),
      h('p', { id: 'rules-help', class: 'muted' },
        'Deploying checks the document first; a document with an error is not deployed. Ctrl+S (⌘S) deploys.'),
      h('div', { class: 'button-row' }, deploy, reload, status),
      error,
      h('div', { class: 'code-editor' }, gutter, h('div', { class: 'code-area' }, bands, editor))), simulation.element));

  editor.addEventListener('input', () => {
    // Lines may have moved: the simulator's marks no longer say where.
    drawGutter();
    showStatus(editor.value === deployed ? 'Deployed.' : 'Changed, not deployed yet.');
  });
  editor.addEventListener('scroll', () => {
    gutter.scrollTop = editor.scrollTop;
    bands.style.transform = `translateY(${-editor.scrollTop}px)`;
  });
  editor.addEventListener('keydown', (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key === 's') {
      event.preventDefault();
      send();
    }
  });

  /** Line numbers; `errorLine` in red, and `marks` (line → {kind, title}) from a simulation. */
  function drawGutter(errorLine = null, marks = new Map()) {
    const count = editor.value.split('\n').length;
    gutter.replaceChildren(...Array.from({ length: count }, (_, index) => {
      const mark = marks.get(index + 1);
      if (index + 1 === errorLine) return h('span', { class: 'error-line' }, String(index + 1));
      if (!mark) return h('span', {}, String(index + 1));
      return h('span', { class: `trace-line trace-${mark.kind}`, title: mark.title, 'data-testid': `gutter-line-${index + 1}` },
        String(index + 1));
    }));
    gutter.scrollTop = editor.scrollTop;
    drawBands(marks);
  }

  /** A band across the text of each marked line, and the first deciding line scrolled into view. */
  function drawBands(marks) {
    const style = getComputedStyle(editor);
    const lineHeight = parseFloat(style.lineHeight) || 20;
    const top = parseFloat(style.paddingTop) || 0;
    bands.replaceChildren(...[...marks].map(([line, mark]) => h('div', {
      class: `code-band band-${mark.kind}`, 'data-testid': `band-line-${line}`,
      style: { top: `${top + (line - 1) * lineHeight}px`, height: `${lineHeight}px` },
    })));
    const deciding = [...marks].filter(([, mark]) => mark.kind !== 'evaluated').map(([line]) => line);
    if (deciding.length) {
      const y = top + (Math.min(...deciding) - 1) * lineHeight;
      if (y < editor.scrollTop || y + lineHeight > editor.scrollTop + editor.clientHeight) {
        editor.scrollTop = Math.max(0, y - editor.clientHeight / 3);
      }
    }
    bands.style.transform = `translateY(${-editor.scrollTop}px)`;
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
  function placeCaret(line, column, isError = true) {
    const lines = editor.value.split('\n');
    const row = Math.min(Math.max(line, 1), lines.length);
    let offset = 0;
    for (let index = 0; index < row - 1; index += 1) offset += lines[index].length + 1;
    offset += Math.min(Math.max(column - 1, 0), lines[row - 1].length);
    if (isError) drawGutter(row);
    editor.focus();
    editor.setSelectionRange(offset, offset);
    const lineHeight = parseFloat(getComputedStyle(editor).lineHeight) || 20;
    editor.scrollTop = Math.max(0, (row - 1) * lineHeight - editor.clientHeight / 2);
  }

  load();
  return () => {};
}
