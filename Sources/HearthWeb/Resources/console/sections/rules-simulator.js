// The rules simulator of the Rules section: asks the server (`POST /.hearth/rules/simulate`)
// whether a read, set or update at a location would be allowed for someone signed out or
// signed in, by the deployed rules or the editor's draft, and shows the verdict and the rules
// evaluated (kind, location, expression, outcome), each with its line in the editor. Nothing is
// written: the server judges against the current data with the same code that enforces rules.
// The signed-in user is picked from the accounts (searched by email, name or uid with the Users
// page's admin API), which fills the uid, provider and claims; the verdict is shown beside the
// form on a wide screen, below it on a narrow one.

import { h } from '../dom.js';

const ERROR_POSITION = /^Line (\d+), column (\d+): ([\s\S]*)$/;
const PROVIDERS = ['password', 'anonymous', 'google.com', 'github.com', 'custom'];
const PICKER_RESULTS = 8;

/**
 * @param {object} options
 * @param {import('../api.js').AdminApi} options.api
 * @param {{ searchUsers: Function }} options.admin the accounts' admin API (the shared client's)
 * @param {() => string} options.draft the editor's text
 * @param {(marks: Map<number, {kind: string, title: string}>) => void} options.mark marks gutter lines
 * @param {(line: number, column: number, isError: boolean) => void} options.showLine puts the caret on a line
 */
export function simulator({ api, admin, draft, mark, showLine }) {
  const field = (id, label, control, hint = null) => h('div', { class: 'field' },
    h('label', { for: id }, label), hint ? h('p', { id: `${id}-hint`, class: 'hint muted' }, hint) : null, control);

  const operation = h('select', { id: 'sim-operation', 'data-testid': 'sim-operation', 'on:change': () => showFields() },
    h('option', { value: 'read' }, 'Read'), h('option', { value: 'set' }, 'Set'), h('option', { value: 'update' }, 'Update'));
  const path = h('input', { type: 'text', id: 'sim-path', 'data-testid': 'sim-path', value: '/', spellcheck: 'false',
    autocapitalize: 'off', autocomplete: 'off' });
  const query = h('input', { type: 'text', id: 'sim-query', class: 'code', 'data-testid': 'sim-query', spellcheck: 'false',
    autocapitalize: 'off', autocomplete: 'off', placeholder: 'orderBy="timestamp"&limitToLast=10', 'aria-describedby': 'sim-query-hint' });
  const queryField = field('sim-query', 'Query (optional)', query,
    'As in a REST URL. Rules see it as query.orderByChild, query.limitToLast, …; empty for a plain read.');
  const data = h('textarea', { id: 'sim-data', class: 'code', 'data-testid': 'sim-data', rows: 4, spellcheck: 'false',
    'aria-describedby': 'sim-data-hint' }, '');
  const dataField = field('sim-data', 'Data (JSON)', data,
    'For an update: an object of child paths and values. {".sv": "timestamp"} is the server time.');
  const who = h('select', { id: 'sim-who', 'data-testid': 'sim-who', 'on:change': () => showFields() },
    h('option', { value: 'out' }, 'Signed out'), h('option', { value: 'in' }, 'Signed in'));
  const uid = h('input', { type: 'text', id: 'sim-uid', 'data-testid': 'sim-uid', value: 'user-1', spellcheck: 'false',
    autocapitalize: 'off', autocomplete: 'off' });
  const provider = h('select', { id: 'sim-provider', 'data-testid': 'sim-provider' },
    ...PROVIDERS.map((name) => h('option', { value: name }, name)));
  const claims = h('textarea', { id: 'sim-claims', class: 'code', 'data-testid': 'sim-claims', rows: 2, spellcheck: 'false',
    'aria-describedby': 'sim-claims-hint' }, '');
  const picker = userPicker(admin, (user) => {
    uid.value = user.uid;
    provider.value = PROVIDERS.includes(user.providers?.[0]) ? user.providers[0] : user.providers?.length ? 'custom' : 'anonymous';
    claims.value = user.customClaims && Object.keys(user.customClaims).length ? JSON.stringify(user.customClaims) : '';
  });
  const userFields = h('div', { class: 'sim-user' },
    picker.element,
    field('sim-uid', 'User ID (auth.uid)', uid),
    field('sim-provider', 'Provider (auth.provider)', provider),
    field('sim-claims', 'Token claims (JSON)', claims, 'Extra auth.token claims, e.g. {"admin": true, "email_verified": true}.'));
  const source = h('select', { id: 'sim-source', 'data-testid': 'sim-source' },
    h('option', { value: 'deployed' }, 'Deployed rules'), h('option', { value: 'draft' }, 'Draft in the editor'));
  const run = h('button', { type: 'submit', class: 'button primary', 'data-testid': 'sim-run' }, 'Run');
  const problem = h('p', { class: 'error', role: 'alert', 'data-testid': 'sim-error', hidden: true });
  const verdict = h('p', { class: 'sim-verdict', role: 'status', 'data-testid': 'sim-verdict' });
  const trace = h('ol', { class: 'sim-trace', 'data-testid': 'sim-trace', 'aria-label': 'Rules evaluated' });
  const waiting = h('p', { class: 'muted sim-waiting' }, 'The verdict and the rules evaluated show here.');

  const element = h('section', { class: 'card simulator', 'aria-labelledby': 'sim-title', 'data-testid': 'rules-simulator' },
    h('h2', { id: 'sim-title' }, 'Rules simulator'),
    h('p', { class: 'hint muted' }, 'Judges an operation against the current data without changing anything.'),
    h('div', { class: 'sim-body' },
    h('form', { class: 'sim-form', 'data-testid': 'sim-form', 'on:submit': (event) => { event.preventDefault(); simulate(); } },
      h('div', { class: 'sim-row' }, field('sim-operation', 'Operation', operation), field('sim-source', 'Rules', source)),
      field('sim-path', 'Location', path),
      queryField,
      dataField,
      field('sim-who', 'Who asks', who),
      userFields,
      h('div', { class: 'button-row' }, run)),
    h('div', { class: 'sim-result', 'data-testid': 'sim-result', 'aria-live': 'polite' }, waiting, problem, verdict, trace)));

  function showFields() {
    dataField.hidden = operation.value === 'read';
    queryField.hidden = operation.value !== 'read';
    userFields.hidden = who.value !== 'in';
  }
  showFields();

  function fail(text) {
    problem.textContent = text;
    problem.hidden = false;
  }

  /** Parses a JSON field, or says which one is not JSON. */
  function parsed(textarea, name, empty) {
    const text = textarea.value.trim();
    if (!text) return empty;
    try {
      return JSON.parse(text);
    } catch {
      throw new Error(`${name} is not valid JSON.`);
    }
  }

  async function simulate() {
    waiting.hidden = true;
    problem.hidden = true;
    verdict.textContent = '';
    verdict.className = 'sim-verdict';
    trace.replaceChildren();
    mark(new Map());
    let body;
    try {
      body = { operation: operation.value, path: path.value.trim() || '/', auth: null };
      if (operation.value === 'read' && query.value.trim()) body.query = query.value.trim();
      if (operation.value !== 'read') body.data = parsed(data, 'The data', undefined);
      if (operation.value !== 'read' && body.data === undefined) throw new Error('Enter the data to write, as JSON.');
      if (who.value === 'in') {
        const extra = parsed(claims, 'The token claims', {});
        if (extra === null || typeof extra !== 'object' || Array.isArray(extra)) {
          throw new Error('The token claims must be a JSON object such as {"admin": true}.');
        }
        body.auth = { uid: uid.value.trim(), provider: provider.value, claims: extra };
        if (!body.auth.uid) throw new Error('Enter the user ID of the signed-in user.');
      }
      if (source.value === 'draft') body.rules = draft();
    } catch (error) {
      fail(error.message);
      return;
    }
    run.disabled = true;
    verdict.textContent = 'Simulating…';
    try {
      const url = new URL(`${api.origin}/.hearth/rules/simulate`);
      if (api.database) url.searchParams.set('ns', api.database);
      show(await api.request('POST', url.toString(), { body }));
    } catch (failure) {
      verdict.textContent = '';
      const position = ERROR_POSITION.exec(failure.message);
      if (position) {
        fail(`The draft has an error at line ${position[1]}, column ${position[2]}: ${position[3]}`);
        showLine(Number(position[1]), Number(position[2]), true);
      } else {
        fail(failure.message);
      }
    } finally {
      run.disabled = false;
    }
  }

  /** The verdict, the trace, and the deciding lines marked in the gutter. */
  function show(answer) {
    verdict.textContent = answer.allowed ? `✓ Allowed` : `✗ Denied${answer.reason ? `: ${answer.reason}` : ''}`;
    verdict.classList.add(answer.allowed ? 'allowed' : 'denied');
    const deciding = decidingSteps(answer);
    const marks = new Map();
    trace.replaceChildren(...answer.trace.map((step, index) => {
      const decided = deciding.has(index);
      const kind = decided ? (step.result ? 'allow' : 'deny') : 'evaluated';
      // A line may hold several rules: the deciding one's mark wins.
      if (decided || !marks.has(step.line)) {
        marks.set(step.line, { kind, title: `${step.kind} at ${step.path}: ${step.result}` });
      }
      return h('li', { class: `sim-step sim-${kind}`, 'data-testid': 'sim-step', 'data-line': step.line,
        'data-result': String(step.result), 'data-deciding': String(decided) },
        h('button', { type: 'button', class: 'sim-line', 'on:click': () => showLine(step.line, step.column, false),
          'aria-label': `Show line ${step.line} in the editor` }, `Line ${step.line}`),
        h('span', { class: 'sim-outcome' }, step.result ? 'true' : 'false'),
        h('code', { class: 'sim-kind' }, `${step.kind} at ${step.path}`),
        h('code', { class: 'sim-expression' }, step.expression),
        step.error ? h('span', { class: 'sim-step-error' }, step.error) : null);
    }));
    if (!answer.trace.length) trace.append(h('li', { class: 'muted' }, 'No rule applies here: denied by default.'));
    mark(marks);
  }

  return { element };
}

/**
 * A search box for the accounts: what is typed is looked up (email, name, uid or phone) as the
 * Users page does, and the matches are listed as buttons; choosing one calls `onChoose`.
 * @returns {{ element: HTMLElement }}
 */
function userPicker(admin, onChoose) {
  let timer = null;
  let runs = 0;
  const input = h('input', { type: 'search', id: 'sim-user-search', 'data-testid': 'sim-user-search', autocomplete: 'off',
    spellcheck: 'false', placeholder: 'Email, name or UID', 'aria-describedby': 'sim-user-search-hint',
    'aria-controls': 'sim-user-results',
    'on:input': () => {
      clearTimeout(timer);
      timer = setTimeout(find, 250);
    },
    'on:keydown': (event) => {
      if (event.key === 'ArrowDown' && list.firstElementChild) {
        event.preventDefault();
        list.querySelector('button')?.focus();
      }
    } });
  const status = h('p', { class: 'hint muted', role: 'status', 'data-testid': 'sim-user-status' });
  const chosen = h('p', { class: 'hint sim-chosen', 'data-testid': 'sim-user-chosen', hidden: true });
  const list = h('ul', { id: 'sim-user-results', class: 'sim-user-results', 'aria-label': 'Matching users',
    'data-testid': 'sim-user-results', 'on:keydown': (event) => {
      if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return;
      const buttons = [...list.querySelectorAll('button')];
      const index = buttons.indexOf(document.activeElement);
      event.preventDefault();
      if (index === 0 && event.key === 'ArrowUp') input.focus();
      else buttons[Math.max(0, Math.min(buttons.length - 1, index + (event.key === 'ArrowDown' ? 1 : -1)))]?.focus();
    } });

  async function find() {
    const text = input.value.trim();
    const run = ++runs;
    list.replaceChildren();
    if (!text) {
      status.textContent = '';
      return;
    }
    status.textContent = 'Searching…';
    let users;
    try {
      ({ users } = await admin.searchUsers({ search: text, limit: PICKER_RESULTS }));
    } catch (failure) {
      if (run === runs) status.textContent = `The users could not be searched: ${failure.message}`;
      return;
    }
    if (run !== runs) return;
    status.textContent = users.length ? `${users.length}${users.length === PICKER_RESULTS ? '+' : ''} found; choose one.`
      : 'No user matches.';
    list.replaceChildren(...users.map((user) => h('li', {},
      h('button', { type: 'button', class: 'sim-user-option', 'data-testid': 'sim-user-option', 'data-uid': user.uid,
        'on:click': () => {
          onChoose(user);
          chosen.textContent = `Simulating as ${describe(user)}.`;
          chosen.hidden = false;
          list.replaceChildren();
          status.textContent = '';
          input.value = '';
          document.getElementById('sim-uid')?.focus();
        } },
        h('span', { class: 'sim-user-name' }, user.email ?? user.displayName ?? user.phoneNumber ?? 'anonymous'),
        h('code', { class: 'muted' }, user.uid)))));
  }

  const element = h('div', { class: 'field sim-picker' },
    h('label', { for: 'sim-user-search' }, 'Find a user'),
    h('p', { id: 'sim-user-search-hint', class: 'hint muted' }, 'Fills the user ID, provider and claims from their account.'),
    input, status, list, chosen);
  return { element };
}

function describe(user) {
  const name = user.email ?? user.displayName ?? user.phoneNumber;
  return name ? `${name} (${user.uid})` : user.uid;
}

/**
 * The steps that decided: the granting `.read`/`.write` when allowed; the failed `.validate`
 * when that refused; else every `.read`/`.write` that was false (none granted).
 */
function decidingSteps(answer) {
  const steps = answer.trace;
  const deciding = new Set();
  if (answer.allowed) {
    steps.forEach((step, index) => { if (step.result && step.kind !== '.validate') deciding.add(index); });
  } else if (steps.length && steps[steps.length - 1].kind === '.validate' && !steps[steps.length - 1].result) {
    deciding.add(steps.length - 1);
  } else {
    steps.forEach((step, index) => { if (!step.result && step.kind !== '.validate') deciding.add(index); });
  }
  return deciding;
}
