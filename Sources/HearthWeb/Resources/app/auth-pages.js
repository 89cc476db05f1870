// The pages Firebase Hosting keeps under /__/auth/: `handler`, where a sign-in provider sends
// the browser back, and `action`, which emailed links open (mode resetPassword, verifyEmail,
// recoverEmail or signIn, with an oobCode). Plain pages, no routing: each does its one job
// and sends the person on to the app.
import { Hearth } from '/lib/hearth.js';

const page = document.getElementById('auth-page');
const params = new URLSearchParams(location.search);

function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === true) element.setAttribute(name, '');
    else if (value !== false && value != null) element.setAttribute(name, value);
  }
  element.append(...children.filter((child) => child != null));
  return element;
}

function show(title, ...content) {
  document.title = `${title} · Hearth`;
  page.replaceChildren(h('h1', { id: 'auth-title' }, title), ...content);
}

/** Where to go afterwards: the app page named, only ever on this site. */
function onward(target) {
  try {
    const url = new URL(target, location.origin);
    if (url.origin === location.origin) return url.pathname === '/' ? `/${url.hash || '#/'}` : url.href;
  } catch {
    // Not a URL: the app's start page.
  }
  return '/#/';
}

function failed(title, error, again = '/#/signin', againText = 'Back to sign in') {
  show(title,
    h('p', { role: 'alert', class: 'error-note', 'data-testid': 'auth-error' }, error?.message ?? String(error)),
    h('p', {}, h('a', { href: again, class: 'button' }, againText)));
}

async function providerReturn(hearth) {
  show('Signing you in…');
  try {
    const { next } = await hearth.auth.completeProviderSignIn();
    location.replace(`/${next.startsWith('#') ? next : '#/'}`);
  } catch (error) {
    failed('Sign-in did not finish', error);
  }
}

async function resetPassword(hearth, code) {
  let email;
  try {
    email = await hearth.auth.verifyPasswordResetCode(code);
  } catch (error) {
    return failed('This link does not work', error, '/#/forgot', 'Ask for a new link');
  }
  const input = h('input', { id: 'new-password', type: 'password', autocomplete: 'new-password', required: true, minlength: '6', 'data-testid': 'new-password', 'aria-describedby': 'new-password-hint' });
  const note = h('p', { role: 'alert', class: 'error-note', hidden: true, 'data-testid': 'auth-error' });
  const submit = h('button', { type: 'submit', class: 'button primary wide', 'data-testid': 'reset-submit' }, 'Save new password');
  const form = h('form', { class: 'stack' },
    h('div', { class: 'field' }, h('label', { for: 'new-password' }, 'New password'), input,
      h('span', { class: 'hint', id: 'new-password-hint' }, 'At least 6 characters.')),
    note, submit);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    note.hidden = true;
    submit.disabled = true;
    try {
      await hearth.auth.confirmPasswordReset(code, input.value);
      show('Your password is changed',
        h('p', { 'data-testid': 'auth-done' }, `You can now sign in as ${email} with your new password.`),
        h('p', {}, h('a', { href: `/#/signin`, class: 'button primary' }, 'Sign in')));
    } catch (error) {
      note.textContent = error.message;
      note.hidden = false;
      submit.disabled = false;
    }
  });
  show('Choose a new password', h('p', {}, `For ${email}.`), form);
  input.focus();
}

async function applyCode(hearth, code, mode) {
  try {
    await hearth.auth.applyActionCode(code);
  } catch (error) {
    return failed(mode === 'recoverEmail' ? 'This link does not work' : 'Your email could not be verified', error, '/#/account', 'Your account');
  }
  const titles = {
    verifyEmail: ['Your email address is verified', 'Thank you.'],
    verifyAndChangeEmail: ['Your new email address is verified', 'Sign in with it from now on.'],
    recoverEmail: ['Your email address was changed back', 'Consider changing your password too.'],
  };
  const [title, words] = titles[mode];
  show(title,
    h('p', { 'data-testid': 'auth-done' }, words),
    h('p', {}, h('a', { href: onward(params.get('continueUrl') ?? '/#/'), class: 'button primary' }, 'Continue')));
}

async function emailLinkSignIn(hearth, code) {
  const input = h('input', { id: 'link-email', type: 'email', autocomplete: 'email', required: true, 'data-testid': 'link-email' });
  const note = h('p', { role: 'alert', class: 'error-note', hidden: true, 'data-testid': 'auth-error' });
  const submit = h('button', { type: 'submit', class: 'button primary wide' }, 'Sign in');
  const form = h('form', { class: 'stack' },
    h('div', { class: 'field' }, h('label', { for: 'link-email' }, 'Your email address'), input), note, submit);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    submit.disabled = true;
    try {
      await hearth.auth.signInWithEmailLink(input.value.trim(), code);
      location.replace(onward(params.get('continueUrl') ?? '/#/'));
    } catch (error) {
      note.textContent = error.message;
      note.hidden = false;
      submit.disabled = false;
    }
  });
  show('Sign in with your email link', h('p', {}, 'Confirm the address this link was sent to.'), form);
  input.focus();
}

async function start() {
  let hearth;
  try {
    hearth = await Hearth.connect();
    await hearth.auth.ready;
  } catch (error) {
    return failed('Hearth is not reachable', error, '/', 'Try the app');
  }
  if (location.pathname.startsWith('/__/auth/handler')) return providerReturn(hearth);
  const code = params.get('oobCode');
  const mode = params.get('mode');
  if (!code) return failed('This link is incomplete', new Error('The link has no code. Copy the whole link from the email.'), '/#/', 'Go to the app');
  switch (mode) {
    case 'resetPassword': return resetPassword(hearth, code);
    case 'verifyEmail':
    case 'verifyAndChangeEmail':
    case 'recoverEmail': return applyCode(hearth, code, mode);
    case 'signIn': return emailLinkSignIn(hearth, code);
    default: return failed('This link is not understood', new Error(`Unknown action “${mode}”.`), '/#/', 'Go to the app');
  }
}

start();
