// The Users section: the accounts a page at a time, creating one, deleting one, and editing
// custom claims (the JSON that shows up as auth.token.<claim> in the rules).

import { HearthError } from '/lib/hearth.js';
import { busy, confirmDialog, errorWords, h, toast } from '../dom.js';

const PAGE_SIZE = 25;

export function mount(container, { hearth }) {
  const admin = hearth.admin;
  // pageTokens[i] opens page i; page 0 needs none.
  const pageTokens = [null];
  let page = 0;
  let alive = true;

  const body = h('tbody', {});
  const pageLabel = h('span', { class: 'muted', 'aria-live': 'polite' });
  const previous = h('button', { type: 'button', class: 'button', 'data-testid': 'users-previous',
    'on:click': () => show(page - 1) }, 'Previous page');
  const next = h('button', { type: 'button', class: 'button', 'data-testid': 'users-next',
    'on:click': () => show(page + 1) }, 'Next page');
  const error = h('p', { class: 'error', role: 'alert', 'data-testid': 'users-error', hidden: true });

  const fields = {
    email: h('input', { id: 'new-email', type: 'email', required: true, autocomplete: 'off', 'data-testid': 'new-user-email' }),
    password: h('input', { id: 'new-password', type: 'password', required: true, minlength: 6, autocomplete: 'new-password',
      'data-testid': 'new-user-password' }),
    displayName: h('input', { id: 'new-name', type: 'text', autocomplete: 'off', 'data-testid': 'new-user-name' }),
  };
  const create = h('button', { class: 'button primary', 'data-testid': 'new-user-submit' }, 'Create user');

  container.append(
    h('div', { class: 'section-head' }, h('h1', { id: 'section-title', tabindex: -1 }, 'Users')),
    h('form', { class: 'card create-user', 'aria-labelledby': 'create-user-title', 'on:submit': (event) => {
      event.preventDefault();
      busy(create, async () => {
        const user = await admin.createUser({ email: fields.email.value.trim(), password: fields.password.value,
          displayName: fields.displayName.value.trim() });
        toast(`Created ${user.email}.`, 'success');
        event.target.reset();
        await show(page);
      }, (failure) => toast(`The user was not created: ${accountWords(failure)}`, 'error'));
    } },
      h('h2', { id: 'create-user-title' }, 'New user'),
      h('div', { class: 'form-grid' },
        h('div', { class: 'field' }, h('label', { for: 'new-email' }, 'Email'), fields.email),
        h('div', { class: 'field' }, h('label', { for: 'new-password' }, 'Password (6 characters or more)'), fields.password),
        h('div', { class: 'field' }, h('label', { for: 'new-name' }, 'Display name (optional)'), fields.displayName)),
      create),
    error,
    h('div', { class: 'table-wrap' },
      h('table', { class: 'users-table', 'data-testid': 'users-table' },
        h('caption', { class: 'visually-hidden' }, 'Users'),
        h('thead', {}, h('tr', {}, ['Email', 'Name', 'UID', 'Created', 'Last sign-in', 'Custom claims', 'Actions']
          .map((title) => h('th', { scope: 'col' }, title)))),
        body)),
    h('div', { class: 'pager' }, previous, pageLabel, next));

  async function show(index) {
    error.hidden = true;
    try {
      const { users, nextPageToken } = await admin.listUsers(pageTokens[index], PAGE_SIZE);
      if (!alive) return;
      page = index;
      pageTokens[index + 1] = nextPageToken;
      body.replaceChildren(...users.map(userRow));
      if (!users.length) body.append(h('tr', {}, h('td', { colspan: 7, class: 'muted' }, 'No users on this page.')));
      previous.disabled = page === 0;
      next.disabled = !nextPageToken;
      pageLabel.textContent = `Page ${page + 1}`;
    } catch (failure) {
      error.textContent = `The users could not be listed: ${accountWords(failure)}`;
      error.hidden = false;
    }
  }

  function userRow(user) {
    const claims = user.customClaims ? JSON.stringify(user.customClaims) : '';
    const cell = (label, content, attrs = {}) => h('td', { 'data-label': label, ...attrs }, content);
    return h('tr', { 'data-testid': 'user-row', 'data-uid': user.uid },
      cell('Email', user.email ?? h('span', { class: 'muted' }, 'anonymous'), { 'data-testid': 'user-email' }),
      cell('Name', user.displayName ?? ''),
      cell('UID', h('code', {}, user.uid)),
      cell('Created', formatTime(user.createdAt)),
      cell('Last sign-in', formatTime(user.lastLoginAt)),
      cell('Custom claims', claims ? h('code', { class: 'claims' }, claims) : h('span', { class: 'muted' }, 'none')),
      cell('Actions', h('div', { class: 'button-row' },
        h('button', { type: 'button', class: 'button', 'data-testid': 'user-claims',
          'aria-label': `Edit the custom claims of ${user.email ?? user.uid}`, 'on:click': () => editClaims(user) }, 'Claims…'),
        h('button', { type: 'button', class: 'button danger', 'data-testid': 'user-delete',
          'aria-label': `Delete ${user.email ?? user.uid}`, 'on:click': () => remove(user) }, 'Delete'))));
  }

  async function remove(user) {
    const name = user.email ?? user.uid;
    if (!(await confirmDialog(`Delete the user ${name}? They can no longer sign in.`, { confirm: 'Delete', danger: true }))) return;
    try {
      await admin.deleteUser(user.uid);
      toast(`Deleted ${name}.`, 'success');
      await show(page);
    } catch (failure) {
      toast(accountWords(failure), 'error');
    }
  }

  function editClaims(user) {
    const input = h('textarea', { id: 'claims-text', class: 'code', rows: 8, spellcheck: 'false', 'data-testid': 'claims-input',
      'aria-describedby': 'claims-help claims-error' }, JSON.stringify(user.customClaims ?? {}, null, 2));
    const problem = h('p', { id: 'claims-error', class: 'error', role: 'alert', hidden: true });
    const save = h('button', { class: 'button primary', 'data-testid': 'claims-save' }, 'Save claims');
    const dialog = h('dialog', { class: 'dialog', 'aria-labelledby': 'claims-title' },
      h('form', { 'on:submit': async (event) => {
        event.preventDefault();
        let claims;
        try {
          claims = JSON.parse(input.value || '{}');
          if (claims === null || typeof claims !== 'object' || Array.isArray(claims)) throw new Error('not an object');
        } catch {
          problem.textContent = 'The claims must be a JSON object, such as {"admin": true}.';
          problem.hidden = false;
          return;
        }
        const saved = await busy(save, () => admin.setCustomClaims(user.uid, claims), (failure) => {
          problem.textContent = accountWords(failure);
          problem.hidden = false;
        });
        if (!saved) return;
        dialog.close();
        toast(`Saved the claims of ${user.email ?? user.uid}; they apply from the user's next ID token.`, 'success');
        await show(page);
      } },
        h('h2', { id: 'claims-title' }, `Custom claims of ${user.email ?? user.uid}`),
        h('label', { for: 'claims-text' }, 'Claims (JSON object)'),
        h('p', { id: 'claims-help', class: 'muted' }, 'Rules read them as auth.token.<name>. An empty object removes them.'),
        input,
        problem,
        h('div', { class: 'dialog-actions' },
          h('button', { type: 'button', class: 'button', 'on:click': () => dialog.close() }, 'Cancel'),
          save)));
    dialog.addEventListener('close', () => dialog.remove());
    document.body.append(dialog);
    dialog.showModal();
  }

  show(0);
  return () => { alive = false; };
}

/**
 * Words for a failed account call. The client reports the admin endpoints' Firebase codes
 * (EMAIL_EXISTS, WEAK_PASSWORD…) as bare text, so they are put in words as sign-in codes are.
 */
function accountWords(error) {
  return /^[A-Z_]+\b/.test(error?.detail ?? '') ? HearthError.auth(error.detail).message : errorWords(error);
}

function formatTime(ms) {
  return ms ? h('time', { datetime: new Date(ms).toISOString() }, new Date(ms).toLocaleString()) : '';
}
