// The admin token: asked for on the sign-in screen, checked against the server, kept for this
// browser tab only (sessionStorage), so closing the tab signs out.

import { AdminApi, ConsoleError } from './api.js';
import { h } from './dom.js';

const TOKEN_KEY = 'hearth.console.adminToken';

export function storedToken() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function forgetToken() {
  sessionStorage.removeItem(TOKEN_KEY);
}

/**
 * Resolves when `token` is an admin token, else rejects with words. The rules document is
 * admin-only, so reading it is the cheapest proof.
 */
export async function checkToken(token) {
  const api = new AdminApi({ origin: location.origin, token });
  try {
    await api.request('GET', api.rulesUrl());
  } catch (error) {
    if (error instanceof ConsoleError && (error.status === 401 || error.status === 403)) {
      throw new ConsoleError('That admin token was refused. The server prints it when it first starts, '
        + 'and keeps it in the file admin-token in its data folder.', error.status);
    }
    throw error;
  }
}

/**
 * Draws the sign-in screen in `root`; resolves with a checked token once one is entered.
 * `reason` explains why the screen is shown (e.g. a stored token that stopped working).
 */
export function askForToken(root, reason = '') {
  return new Promise((resolve) => {
    const input = h('input', { id: 'admin-token', type: 'password', required: true, autocomplete: 'off',
      spellcheck: 'false', 'data-testid': 'admin-token-input', 'aria-describedby': 'token-help token-error' });
    const error = h('p', { id: 'token-error', class: 'error', role: 'alert', 'data-testid': 'signin-error',
      hidden: !reason }, reason);
    const submit = h('button', { class: 'button primary', 'data-testid': 'admin-token-submit' }, 'Sign in');
    const form = h('form', { class: 'signin card', 'aria-labelledby': 'signin-title', 'on:submit': async (event) => {
      event.preventDefault();
      submit.disabled = true;
      error.hidden = true;
      const token = input.value.trim();
      try {
        await checkToken(token);
        sessionStorage.setItem(TOKEN_KEY, token);
        resolve(token);
      } catch (failure) {
        error.textContent = failure.message;
        error.hidden = false;
        input.focus();
        input.select();
      } finally {
        submit.disabled = false;
      }
    } },
      h('h1', { id: 'signin-title' }, 'Hearth console'),
      h('p', { id: 'token-help', class: 'muted' },
        'For the server\'s administrators. Paste the admin token that ', h('code', {}, 'hearth serve'),
        ' printed at its first start (also in ', h('code', {}, '<data folder>/admin-token'), ').'),
      h('div', { class: 'field' }, h('label', { for: 'admin-token' }, 'Admin token'), input),
      error,
      submit);
    root.replaceChildren(h('main', { id: 'main', class: 'signin-page', tabindex: -1 }, form));
    input.focus();
  });
}
