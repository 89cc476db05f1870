// The Functions section (`#/functions`, or `#/functions/<name>` with that function chosen): the
// functions `hearth serve --functions <folder>` runs, each with its trigger, where it runs, its
// process and what waits for it (GET /.hearth/functions); then, for the function chosen (or
// all), the latest delivery attempts and scheduled runs, the lines its process printed
// (GET /.hearth/functions/logs) and the events given up on, each of which can be replayed or
// discarded (/.hearth/functions/dead-letters). Read every two seconds while the page is
// visible, and at once after each replay or discard.

import { busy, confirmDialog, h, toast } from '../dom.js';
import {
  backlogWords, eventText, formatDuration, KIND_WORDS, latestInvocations, processWords, resultWords, runsInWords, triggerWords,
} from '../functions/words.js';
import { visiblePoller } from '../server/visible-poller.js';

const POLL_MS = 2000;

export function mount(container, { api }, route) {
  let chosen = route.rest[0] ? decodeURIComponent(route.rest[0]) : '';
  let functions = [];
  const drawn = {};

  const error = h('p', { class: 'error', role: 'alert', 'data-testid': 'functions-error', hidden: true });
  const empty = h('p', { class: 'note setup', 'data-testid': 'functions-empty', hidden: true },
    'This server runs no functions. Start it with hearth serve --functions <folder>, a folder holding a main.py written '
    + 'with Firebase\'s Python functions SDK or a webhooks.json (see docs/functions.md).');
  const functionRows = h('tbody', {});
  const picker = h('select', { id: 'functions-pick', 'data-testid': 'functions-pick', 'on:change': () => choose(picker.value) });
  const invocationRows = h('tbody', {});
  const invocationsEmpty = h('p', { class: 'muted', 'data-testid': 'invocations-empty', hidden: true });
  const linesTitle = h('h2', { id: 'function-lines-title' }, 'Log lines');
  const lines = h('ol', { class: 'log-lines', tabindex: 0, 'aria-labelledby': 'function-lines-title',
    'data-testid': 'function-lines', hidden: true });
  const linesNote = h('p', { class: 'muted', 'data-testid': 'function-lines-note' });
  const linesError = h('p', { class: 'error', role: 'alert', 'data-testid': 'function-lines-error', hidden: true });
  const deadTitle = h('h2', { id: 'dead-letters-title', tabindex: -1 }, 'Dead letters');
  const deadRows = h('tbody', {});
  const deadEmpty = h('p', { class: 'muted', 'data-testid': 'dead-letters-empty', hidden: true });
  const deadError = h('p', { class: 'error', role: 'alert', 'data-testid': 'dead-letters-error', hidden: true });
  const updated = h('p', { class: 'muted', 'data-testid': 'functions-updated' });

  const listing = h('div', { 'data-testid': 'functions-listing', hidden: true },
    h('section', { 'aria-labelledby': 'functions-list-title' },
      h('h2', { id: 'functions-list-title', class: 'visually-hidden' }, 'Functions and their triggers'),
      h('div', { class: 'table-wrap' },
        h('table', { class: 'functions-table', 'data-testid': 'functions-table' },
          h('caption', { class: 'visually-hidden' }, 'Functions and their triggers'),
          h('thead', {}, h('tr', {}, ['Function', 'Kind', 'Trigger', 'Runs in', 'Process', 'Waiting', 'Dropped', 'Activity']
            .map((title) => h('th', { scope: 'col' }, title)))),
          functionRows))),
    h('form', { class: 'toolbar', 'aria-label': 'Choose a function', 'on:submit': (event) => event.preventDefault() },
      h('div', { class: 'field' }, h('label', { for: 'functions-pick' }, 'Show the activity of'), picker)),
    h('section', { class: 'function-activity', 'aria-labelledby': 'invocations-title', 'data-testid': 'invocations' },
      h('h2', { id: 'invocations-title' }, 'Recent invocations'),
      h('p', { class: 'note' }, 'The latest 100 delivery attempts and scheduled runs, newest first.'),
      invocationsEmpty,
      h('div', { class: 'table-wrap' },
        h('table', { class: 'invocations-table', 'data-testid': 'invocations-table' },
          h('caption', { class: 'visually-hidden' }, 'Recent invocations, newest first'),
          h('thead', {}, h('tr', {}, ['Time', 'Function', 'Source', 'Result', 'Attempt', 'Duration', 'Reason']
            .map((title) => h('th', { scope: 'col' }, title)))),
          invocationRows))),
    h('section', { class: 'function-activity', 'aria-labelledby': 'function-lines-title' },
      linesTitle, linesNote, linesError, lines),
    h('section', { class: 'function-activity', 'aria-labelledby': 'dead-letters-title', 'data-testid': 'dead-letters' },
      deadTitle,
      h('p', { class: 'note' }, 'Events given up on after their last attempt. Replay puts one back at the end of its '
        + 'function\'s queue, with the same ID; Discard removes it for good.'),
      deadError,
      deadEmpty,
      h('div', { class: 'table-wrap' },
        h('table', { class: 'dead-letters-table', 'data-testid': 'dead-letters-table' },
          h('caption', { class: 'visually-hidden' }, 'Dead letters, oldest first'),
          h('thead', {}, h('tr', {}, ['Failed', 'Function', 'Event', 'Attempts', 'Last failure', 'Actions']
            .map((title) => h('th', { scope: 'col' }, title)))),
          deadRows))),
    updated);

  container.append(h('div', { class: 'section-head' }, h('h1', { id: 'section-title', tabindex: -1 }, 'Functions')),
    error, empty, listing);

  async function read(isAlive) {
    const name = chosen;
    const [list, letters, printed] = await Promise.allSettled([
      api.functions(), api.deadLetters(name || null), name ? api.functionLogs(name) : Promise.resolve(null)]);
    if (!isAlive() || name !== chosen) return;
    if (list.status === 'rejected') {
      error.textContent = `The functions could not be read: ${list.reason.message}`;
      error.hidden = false;
      return;
    }
    error.hidden = true;
    functions = list.value.functions;
    empty.hidden = functions.length > 0;
    listing.hidden = functions.length === 0;
    if (!functions.length) return;
    showFunctions();
    showInvocations(list.value.recent);
    showLines(printed);
    if (letters.status === 'fulfilled') {
      deadError.hidden = true;
      showDeadLetters(letters.value);
    } else {
      deadError.textContent = `The dead letters could not be read: ${letters.reason.message}`;
      deadError.hidden = false;
    }
    updated.textContent = `Updated at ${new Date().toLocaleTimeString()}; refreshed every ${POLL_MS / 1000} seconds while this page is visible.`;
  }

  /** Redraws `part` only when what it shows changed, so a reader's selection and focus stay. */
  function changed(part, value) {
    const signature = JSON.stringify(value);
    if (drawn[part] === signature) return false;
    drawn[part] = signature;
    return true;
  }

  function showFunctions() {
    if (!changed('functions', functions)) return;
    functionRows.replaceChildren(...functions.map((fn) => h('tr', { 'data-testid': 'function-row', 'data-name': fn.name },
      h('th', { scope: 'row', class: 'mono function-name', 'data-label': 'Function' }, fn.name),
      h('td', { 'data-label': 'Kind' }, KIND_WORDS[fn.kind] ?? fn.kind),
      h('td', { 'data-label': 'Trigger', class: 'function-trigger', 'data-testid': 'function-trigger', title: fn.trigger },
        triggerWords(fn)),
      h('td', { 'data-label': 'Runs in', 'data-testid': 'function-runs-in' }, runsInWords(fn)),
      h('td', { 'data-label': 'Process', 'data-testid': 'function-process' }, processWords(fn.process)),
      h('td', { 'data-label': 'Waiting', 'data-testid': 'function-waiting' }, backlogWords(fn.waiting)),
      h('td', { 'data-label': 'Dropped', 'data-testid': 'function-dropped' }, backlogWords(fn.dropped)),
      h('td', { 'data-label': 'Activity' }, h('button', { type: 'button', class: 'button', 'data-testid': 'function-show',
        'aria-label': `Show the activity of ${fn.name}`, 'on:click': () => {
          choose(fn.name);
          picker.focus();
        } }, 'Show')))));
    const names = functions.map((fn) => fn.name);
    if (chosen && !names.includes(chosen)) names.push(chosen);
    picker.replaceChildren(h('option', { value: '' }, 'All functions'), ...names.map((name) => h('option', { value: name }, name)));
    picker.value = chosen;
  }

  function showInvocations(recent) {
    const entries = latestInvocations(recent, chosen);
    if (!changed('invocations', [chosen, entries.length, entries[0] ?? null])) return;
    invocationsEmpty.hidden = entries.length > 0;
    invocationsEmpty.textContent = chosen ? `No recent invocation of ${chosen}.` : 'No invocations yet.';
    invocationRows.replaceChildren(...entries.map(invocationRow));
  }

  function showLines(printed) {
    const fn = functions.find((candidate) => candidate.name === chosen);
    linesTitle.textContent = chosen ? `Log lines of ${chosen}` : 'Log lines';
    linesError.hidden = true;
    if (!chosen) {
      showLinesNote('Choose a function above to see the latest lines its process printed.');
    } else if (fn && !fn.process) {
      showLinesNote(`${chosen} runs in ${runsInWords(fn).toLowerCase()}: there is no process of its own whose output to show.`);
    } else if (printed.status === 'rejected') {
      linesError.textContent = `The log lines could not be read: ${printed.reason.message}`;
      linesError.hidden = false;
    } else if (!printed.value.length) {
      showLinesNote(`${chosen}'s process has printed nothing yet.`);
    } else {
      linesNote.textContent = 'The latest lines its process printed (standard output and error), newest last.';
      lines.hidden = false;
      const shown = printed.value;
      if (!changed('lines', [chosen, shown.length, shown[shown.length - 1]])) return;
      const atEnd = lines.scrollHeight - lines.scrollTop - lines.clientHeight < 8;
      lines.replaceChildren(...shown.map(lineItem));
      // Follows new lines, unless the reader scrolled up to read older ones.
      if (atEnd || drawn.linesFor !== chosen) lines.scrollTop = lines.scrollHeight;
      drawn.linesFor = chosen;
    }
  }

  function showLinesNote(words) {
    linesNote.textContent = words;
    lines.hidden = true;
    drawn.lines = null;
  }

  function showDeadLetters(letters) {
    if (!changed('deadLetters', [chosen, letters.map((letter) => [letter.source, letter.sequence])])) return;
    deadEmpty.hidden = letters.length > 0;
    deadEmpty.textContent = chosen ? `No dead letters for ${chosen}.` : 'No dead letters.';
    deadRows.replaceChildren(...letters.map(deadLetterRow));
  }

  function deadLetterRow(letter) {
    const failed = new Date(letter.failedAt);
    const what = `event ${letter.id} of ${letter.function}`;
    const replay = h('button', { type: 'button', class: 'button', 'data-testid': 'dead-letter-replay',
      'aria-label': `Replay ${what}`, 'on:click': () => act(replay, letter, 'replay') }, 'Replay');
    const discard = h('button', { type: 'button', class: 'button danger', 'data-testid': 'dead-letter-discard',
      'aria-label': `Discard ${what}`, 'on:click': () => act(discard, letter, 'discard') }, 'Discard…');
    return h('tr', { 'data-testid': 'dead-letter-row', 'data-id': letter.id, 'data-sequence': letter.sequence },
      h('td', { 'data-label': 'Failed' }, h('time', { datetime: failed.toISOString(), title: failed.toLocaleString() },
        failed.toLocaleTimeString())),
      h('td', { 'data-label': 'Function', class: 'mono' }, letter.function),
      h('td', { 'data-label': 'Event', class: 'dead-letter-event' },
        h('details', {}, h('summary', { class: 'mono' }, letter.id),
          h('p', { class: 'muted' }, `${letter.source}, sequence ${letter.sequence}`),
          h('pre', { class: 'event-body', 'data-testid': 'dead-letter-event' }, eventText(letter.event)))),
      h('td', { 'data-label': 'Attempts', 'data-testid': 'dead-letter-attempts' }, String(letter.attempts)),
      h('td', { 'data-label': 'Last failure', class: 'failure-reason', 'data-testid': 'dead-letter-reason' }, letter.reason),
      h('td', { 'data-label': 'Actions' }, h('div', { class: 'button-row' }, replay, discard)));
  }

  async function act(button, letter, action) {
    const target = { source: letter.source, sequence: letter.sequence };
    if (action === 'discard') {
      const ok = await confirmDialog(`Discard event ${letter.id} of ${letter.function} for good? It will not be delivered.`,
        { confirm: 'Discard', danger: true });
      if (!ok) return;
    }
    const done = await busy(button, async () => {
      if (action === 'replay') {
        await api.replayDeadLetter(target);
        toast(`Event ${letter.id} is back in ${letter.function}'s queue.`, 'success');
      } else {
        await api.discardDeadLetter(target);
        toast(`Event ${letter.id} of ${letter.function} was discarded.`, 'success');
      }
    }, (failure) => toast(`${action === 'replay' ? 'Not replayed' : 'Not discarded'}: ${failure.message}`, 'error'));
    // Its row goes when the list is read again: focus moves to the list's heading rather than falling to the page.
    if (done) deadTitle.focus();
    poller.now();
  }

  function choose(name) {
    chosen = name;
    picker.value = name;
    history.replaceState(null, '', name ? `#/functions/${encodeURIComponent(name)}` : '#/functions');
    poller.now();
  }

  const poller = visiblePoller(read, POLL_MS);
  return () => poller.stop();
}

function invocationRow(entry) {
  const time = new Date(entry.time);
  const result = resultWords(entry.result);
  return h('tr', { 'data-testid': 'invocation-row', 'data-function': entry.function, 'data-result': entry.result },
    h('td', { 'data-label': 'Time' }, h('time', { datetime: time.toISOString(), title: time.toLocaleString() }, time.toLocaleTimeString())),
    h('td', { 'data-label': 'Function', class: 'mono' }, entry.function),
    h('td', { 'data-label': 'Source', class: 'mono' }, entry.source),
    h('td', { 'data-label': 'Result' }, h('span', { class: `check ${result.tone}`, 'data-testid': 'invocation-result' }, result.label)),
    h('td', { 'data-label': 'Attempt' }, String(entry.attempt)),
    h('td', { 'data-label': 'Duration', 'data-testid': 'invocation-duration' }, formatDuration(entry.durationMilliseconds)),
    h('td', { 'data-label': 'Reason', class: 'failure-reason' }, entry.reason ?? ''));
}

function lineItem(line) {
  const time = new Date(line.time);
  return h('li', { 'data-testid': 'function-line' },
    h('time', { datetime: time.toISOString(), class: 'muted' }, time.toLocaleTimeString()), ' ', line.text);
}
