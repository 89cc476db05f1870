// The Users section: the accounts a page at a time, one line each, searched (uid, email, name or
// phone) and filtered (enabled or disabled); creating one (in a dialog opened by "New user");
// for each, in its row's Actions menu: disabling or enabling it, emailing a password reset link,
// ending its sessions, editing custom claims (the JSON that shows up as auth.token.<claim> in the
// rules) and deleting it. Below, the sign-in providers: adding an OpenID Connect provider or
// GitHub, turning one off and on, removing one.

import { HearthError } from '/lib/hearth.js';
import { busy, confirmDialog, errorWords, h, toast } from '../dom.js';
import { actionMenu } from '../menu.js';

const PAGE_SIZE = 50;

export function mount(container, { hearth }) {
  const admin = hearth.admin;
  // pageStarts[i] is the uid page i starts after; page 0 starts at the beginning.
  let pageStarts = [null];
  let page = 0;
  let alive = true;
  let searchTimer = null;
  const search = h('input', { id: 'user-search', type: 'search', autocomplete: 'off', placeholder: 'Email, name, UID or phone',
    'data-testid': 'users-search', 'on:input': () => {
      clearTimeout(searchTimer);
      searchTimer = setTimeout(restart, 250);
    } });
  const filter = h('select', { id: 'user-filter', 'data-testid': 'users-filter', 'on:change': () => restart() },
    h('option', { value: 'all' }, 'All users'), h('option', { value: 'enabled' }, 'Enabled'), h('option', { value: 'disabled' }, 'Disabled'));
  function restart() {
    pageStarts = [null];
    show(0);
  }

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
  const createProblem = h('p', { class: 'error', role: 'alert', 'data-testid': 'new-user-error', hidden: true });
  // The form waits in a dialog: the list of users gets the screen.
  const createDialog = h('dialog', { class: 'dialog', 'aria-labelledby': 'create-user-title', 'data-testid': 'new-user-dialog' },
    h('form', { class: 'create-user', 'on:submit': (event) => {
      event.preventDefault();
      createProblem.hidden = true;
      busy(create, async () => {
        const user = await admin.createUser({ email: fields.email.value.trim(), password: fields.password.value,
          displayName: fields.displayName.value.trim() });
        toast(`Created ${user.email}.`, 'success');
        event.target.reset();
        createDialog.close();
        await show(page);
      }, (failure) => {
        // Said in the dialog, beside the fields, which keep what was typed.
        createProblem.textContent = `The user was not created: ${accountWords(failure)}`;
        createProblem.hidden = false;
      });
    } },
      h('h2', { id: 'create-user-title' }, 'New user'),
      h('div', { class: 'field' }, h('label', { for: 'new-email' }, 'Email'), fields.email),
      h('div', { class: 'field' }, h('label', { for: 'new-password' }, 'Password (6 characters or more)'), fields.password),
      h('div', { class: 'field' }, h('label', { for: 'new-name' }, 'Display name (optional)'), fields.displayName),
      createProblem,
      h('div', { class: 'dialog-actions' },
        h('button', { type: 'button', class: 'button', 'data-testid': 'new-user-cancel', 'on:click': () => createDialog.close() },
          'Cancel'),
        create)));
  const openCreate = h('button', { type: 'button', class: 'button primary', 'data-testid': 'new-user-open',
    'aria-haspopup': 'dialog', 'on:click': () => {
      createProblem.hidden = true;
      createDialog.showModal();
      fields.email.focus();
    } }, 'New user');

  container.append(
    h('div', { class: 'section-head' }, h('h1', { id: 'section-title', tabindex: -1 }, 'Users'), openCreate),
    createDialog,
    h('div', { class: 'toolbar', role: 'search' },
      h('div', { class: 'field' }, h('label', { for: 'user-search' }, 'Search users'), search),
      h('div', { class: 'field' }, h('label', { for: 'user-filter' }, 'Show'), filter)),
    error,
    h('div', { class: 'table-wrap' },
      h('table', { class: 'users-table', 'data-testid': 'users-table' },
        h('caption', { class: 'visually-hidden' }, 'Users'),
        h('thead', {}, h('tr', {}, ['Email', 'Name', 'UID', 'Sign-in', 'Created', 'Last sign-in', 'Custom claims', 'Actions']
          .map((title) => h('th', { scope: 'col' }, title)))),
        body)),
    h('div', { class: 'pager' }, previous, pageLabel, next));
  const providers = providerSection(admin);
  container.append(providers.element);

  async function show(index) {
    error.hidden = true;
    try {
      const disabled = filter.value === 'all' ? null : filter.value === 'disabled';
      const { users, last } = await admin.searchUsers({ search: search.value.trim(), disabled, after: pageStarts[index], limit: PAGE_SIZE });
      if (!alive) return;
      page = index;
      pageStarts[index + 1] = last;
      body.replaceChildren(...users.map(userRow));
      if (!users.length) {
        const words = search.value.trim() || disabled !== null ? 'No users match.' : 'No users on this page.';
        body.append(h('tr', {}, h('td', { colspan: 8, class: 'muted' }, words)));
      }
      previous.disabled = page === 0;
      next.disabled = !last;
      pageLabel.textContent = `Page ${page + 1}`;
    } catch (failure) {
      error.textContent = `The users could not be listed: ${accountWords(failure)}`;
      error.hidden = false;
    }
  }

  function userRow(user) {
    const claims = user.customClaims ? JSON.stringify(user.customClaims) : '';
    const cell = (label, content, attrs = {}) => h('td', { 'data-label': label, ...attrs }, content);
    const name = user.email ?? user.uid;
    return h('tr', { 'data-testid': 'user-row', 'data-uid': user.uid, class: user.disabled ? 'disabled-user' : null },
      cell('Email', [
        h('span', { class: 'user-email', 'data-testid': 'user-email', title: user.email ?? null },
          user.email ?? h('span', { class: 'muted' }, user.phoneNumber ?? 'anonymous')),
        user.disabled ? h('span', { class: 'badge danger', 'data-testid': 'user-disabled' }, 'Disabled') : null,
        user.email && !user.emailVerified ? h('span', { class: 'badge muted' }, 'unverified') : null]),
      cell('Name', user.displayName ? h('span', { class: 'user-name', title: user.displayName }, user.displayName) : ''),
      cell('UID', h('code', { title: user.uid }, user.uid), { class: 'user-uid' }),
      cell('Sign-in', user.providers.length
        ? h('span', { class: 'user-providers', title: user.providers.join(', ') }, user.providers.join(', '))
        : h('span', { class: 'muted' }, 'anonymous or custom')),
      cell('Created', formatTime(user.createdAt)),
      cell('Last sign-in', formatTime(user.lastLoginAt)),
      cell('Custom claims', claims ? h('code', { class: 'claims', title: claims }, claims) : h('span', { class: 'muted' }, 'none')),
      cell('Actions', actionMenu({ label: `Actions for ${name}`, testid: 'user-actions', items: [
        { label: user.disabled ? 'Enable' : 'Disable', testid: 'user-toggle-disabled',
          onSelect: (button) => setDisabled(user, !user.disabled, button) },
        user.email ? { label: 'Email a password reset link', testid: 'user-reset', onSelect: (button) => sendReset(user, button) } : null,
        { label: 'Revoke sessions…', testid: 'user-revoke', onSelect: () => revoke(user) },
        { label: 'Edit custom claims…', testid: 'user-claims', onSelect: () => editClaims(user) },
        { label: 'Delete…', testid: 'user-delete', danger: true, onSelect: () => remove(user) },
      ].filter(Boolean) }), { class: 'actions-cell' }));
  }

  async function setDisabled(user, disabled, button) {
    const name = user.email ?? user.uid;
    if (disabled && !(await confirmDialog(
      `Disable ${name}? Their open sessions end now: the database and storage refuse their sign-in at once, and they cannot sign in again until enabled.`,
      { confirm: 'Disable', danger: true }))) return;
    await busy(button, async () => {
      await admin.setDisabled(user.uid, disabled);
      toast(disabled ? `Disabled ${name}: their sessions ended, and they cannot sign in.` : `Enabled ${name}.`, 'success');
      await show(page);
    }, (failure) => toast(accountWords(failure), 'error'));
  }

  async function sendReset(user, button) {
    await busy(button, async () => {
      await admin.sendPasswordReset(user.email);
      toast(`Emailed ${user.email} a link to choose a new password.`, 'success');
    }, (failure) => toast(`The email was not sent: ${accountWords(failure)}`, 'error'));
  }

  async function revoke(user) {
    const name = user.email ?? user.uid;
    if (!(await confirmDialog(`End every session of ${name}? They must sign in again on every device.`, { confirm: 'Revoke sessions', danger: true }))) return;
    try {
      await admin.revokeSessions(user.uid);
      toast(`Ended every session of ${name}.`, 'success');
    } catch (failure) {
      toast(accountWords(failure), 'error');
    }
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

/** The sign-in providers people can use, with adding, turning off and on, and removing. */
function providerSection(admin) {
  const list = h('ul', { class: 'provider-list', 'data-testid': 'providers-list' });
  const note = h('p', { class: 'error', role: 'alert', hidden: true });
  const kind = h('select', { id: 'provider-kind', 'data-testid': 'provider-kind', 'on:change': () => {
    issuerField.hidden = kind.value !== 'oidc';
    nameField.hidden = kind.value !== 'oidc';
  } }, h('option', { value: 'oidc' }, 'OpenID Connect'), h('option', { value: 'github.com' }, 'GitHub'));
  const inputs = {
    name: h('input', { id: 'provider-name', pattern: '[A-Za-z0-9_-]+', autocomplete: 'off', 'data-testid': 'provider-name' }),
    displayName: h('input', { id: 'provider-display', autocomplete: 'off', 'data-testid': 'provider-display' }),
    issuer: h('input', { id: 'provider-issuer', type: 'url', autocomplete: 'off', 'data-testid': 'provider-issuer' }),
    clientId: h('input', { id: 'provider-client', required: true, autocomplete: 'off', 'data-testid': 'provider-client' }),
    clientSecret: h('input', { id: 'provider-secret', type: 'password', required: true, autocomplete: 'off', 'data-testid': 'provider-secret' }),
  };
  const nameField = h('div', { class: 'field' }, h('label', { for: 'provider-name' }, 'ID (oidc.<name>)'), inputs.name);
  const issuerField = h('div', { class: 'field' }, h('label', { for: 'provider-issuer' }, 'Issuer URL'), inputs.issuer);
  const add = h('button', { class: 'button primary', 'data-testid': 'provider-add' }, 'Add provider');
  const form = h('form', { class: 'card', 'aria-labelledby': 'providers-title', 'on:submit': (event) => {
    event.preventDefault();
    const oidc = kind.value === 'oidc';
    const id = oidc ? `oidc.${inputs.name.value.trim()}` : kind.value;
    busy(add, async () => {
      await admin.addProvider({ id, displayName: inputs.displayName.value.trim(), issuer: inputs.issuer.value.trim(),
        clientId: inputs.clientId.value.trim(), clientSecret: inputs.clientSecret.value });
      toast(`Added ${id}. Give the provider the redirect address ${location.origin}/__/auth/handler.`, 'success');
      event.target.reset();
      await refresh();
    }, (failure) => toast(`The provider was not added: ${accountWords(failure)}`, 'error'));
  } },
    h('h2', { id: 'providers-title' }, 'Sign-in providers'),
    h('p', { class: 'muted' }, 'People see “Continue with …” for each enabled provider. Register ',
      h('code', {}, `${location.origin}/__/auth/handler`), ' as the redirect address at the provider.'),
    list, note,
    h('div', { class: 'form-grid' },
      h('div', { class: 'field' }, h('label', { for: 'provider-kind' }, 'Kind'), kind),
      nameField,
      h('div', { class: 'field' }, h('label', { for: 'provider-display' }, 'Shown as'), inputs.displayName),
      issuerField,
      h('div', { class: 'field' }, h('label', { for: 'provider-client' }, 'Client ID'), inputs.clientId),
      h('div', { class: 'field' }, h('label', { for: 'provider-secret' }, 'Client secret'), inputs.clientSecret)),
    add);

  async function refresh() {
    note.hidden = true;
    let providers;
    try {
      providers = await admin.listProviders();
    } catch (failure) {
      note.textContent = `The providers could not be listed: ${accountWords(failure)}`;
      note.hidden = false;
      return;
    }
    list.replaceChildren(...providers.map((provider) => h('li', { class: 'row', 'data-testid': 'provider-row', 'data-id': provider.id },
      h('span', {}, h('strong', {}, provider.displayName ?? provider.id), ' ', h('code', {}, provider.id),
        provider.issuer ? h('span', { class: 'muted' }, ` ${provider.issuer}`) : null,
        provider.enabled ? null : h('span', { class: 'badge danger' }, 'Off')),
      h('span', { class: 'button-row' },
        h('button', { type: 'button', class: 'button', 'data-testid': 'provider-toggle', 'on:click': (event) =>
          busy(event.currentTarget, async () => {
            await admin.setProviderEnabled(provider.id, !provider.enabled);
            await refresh();
          }, (failure) => toast(accountWords(failure), 'error')) }, provider.enabled ? 'Turn off' : 'Turn on'),
        h('button', { type: 'button', class: 'button danger', 'data-testid': 'provider-delete', 'on:click': async () => {
          if (!(await confirmDialog(`Remove ${provider.id}? People who signed in with it keep their accounts but cannot use it to sign in.`,
            { confirm: 'Remove', danger: true }))) return;
          try {
            await admin.deleteProvider(provider.id);
            await refresh();
          } catch (failure) {
            toast(accountWords(failure), 'error');
          }
        } }, 'Remove')))));
    if (!providers.length) list.append(h('li', { class: 'muted' }, 'None yet: people sign in with an email and password.'));
  }

  refresh();
  return { element: form };
}

/**
 * Words for a failed account call. The client reports the admin endpoints' Firebase codes
 * (EMAIL_EXISTS, WEAK_PASSWORD…) as bare text, so they are put in words as sign-in codes are.
 */
function accountWords(error) {
  return /^[A-Z_]+\b/.test(error?.detail ?? '') ? HearthError.auth(error.detail).message : errorWords(error);
}

/** A short date and time (the full one in the title), so a row stays one line. */
function formatTime(ms) {
  if (!ms) return '';
  const date = new Date(ms);
  return h('time', { datetime: date.toISOString(), title: date.toLocaleString() },
    date.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'short' }));
}
