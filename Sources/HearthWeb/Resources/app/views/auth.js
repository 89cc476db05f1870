// #/signin, #/signup, #/forgot and #/account — as SessionViewModel: sign in (with a password or
// a provider the server offers), sign up with a name (which also writes the public profile),
// ask for a password reset email, browse without an account; on the account page, verify the
// email address, turn an anonymous account into a full one (keeping its posts), connect and
// disconnect providers, change one's name, sign out, and delete the account (as
// AccountDeletionViewModel).
import { h, errorNote, busy, toast, avatar, signInPrompt, Problem } from '/app/ui.js';
import { MAX_NAME, authorOf, browseAnonymously, nameProblem, signUp, updateProfile } from '/app/actions.js';
import { clearScreens } from '/app/screen-cache.js';

/** Where to go after signing in: the page that sent the visitor here, or the recent posts. */
function destination(params) {
  return typeof params.next === 'string' && params.next.startsWith('#/') ? params.next : '#/';
}

export function mount(container, ctx, params) {
  if (params.mode === 'account') return account(container, ctx);
  if (params.mode === 'forgot') return forgotPassword(container, ctx);
  const next = destination(params);
  const done = () => ctx.navigate(next);
  if (ctx.user && !ctx.user.isAnonymous) {
    // Already signed in: nothing to do here.
    container.replaceChildren(h('section', { class: 'page form-page empty' },
      h('h1', {}, 'You are signed in'),
      h('p', {}, `As ${ctx.user.displayName ?? ctx.user.email}.`),
      h('div', { class: 'row', style: { 'justify-content': 'center' } },
        h('a', { href: '#/', class: 'button primary' }, 'See recent posts'),
        h('a', { href: '#/account', class: 'button' }, 'Your account'))));
    return () => {};
  }
  // Switching between signing in and signing up keeps where to go afterwards.
  const withNext = (hash) => (next === '#/' ? hash : `${hash}?next=${encodeURIComponent(next)}`);
  return params.mode === 'signup' ? signUpForm(container, ctx, done, withNext, next) : signInForm(container, ctx, done, withNext, next);
}

function field(id, label, attrs, hint) {
  const input = h('input', { id, name: id, ...attrs });
  return { input, element: h('div', { class: 'field' }, h('label', { for: id }, label), input, hint ? h('span', { class: 'hint', id: `${id}-hint` }, hint) : null) };
}

/** Sends a form's work through `busy`, showing failures in `error`. */
function onSubmit(form, submit, error, work) {
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    error.clear();
    busy(submit, work, (failure) => error.show(failure));
  });
}

/** The sign-in or sign-up page: `form`, then browsing without an account, then `footer`. */
function authPage(container, ctx, done, { title, form, error, footer, next }) {
  const providers = h('div', { class: 'stack', 'data-testid': 'providers' });
  container.replaceChildren(h('section', { class: 'page form-page' },
    h('div', { class: 'form-card' },
      h('h1', {}, title),
      providers,
      form,
      ...browseOptions(ctx, error, done),
      h('p', { class: 'small' }, ...footer))));
  // Someone browsing anonymously keeps what they made: the provider joins their account.
  showProviders(providers, ctx, error, { next, link: Boolean(ctx.user?.isAnonymous) });
}

/** "Continue with <provider>" for each provider the server offers (none: nothing shown). */
async function showProviders(holder, ctx, error, { next = '#/', link = false } = {}) {
  let providers;
  try {
    providers = await ctx.hearth.auth.providers();
  } catch {
    return; // offline or an older server: passwords only
  }
  if (!providers.length || !holder.isConnected) return;
  const buttons = providers.map(({ providerId, displayName }) => {
    const button = h('button', { type: 'button', class: 'button wide provider', 'data-testid': `provider-${providerId}` },
      `Continue with ${displayName}`);
    button.addEventListener('click', () => busy(button, () => ctx.hearth.auth.signInWithProvider(providerId, { next, link }),
      (failure) => error.show(failure)));
    return button;
  });
  holder.replaceChildren(...buttons, h('div', { class: 'divider' }, 'or'));
}

/** #/forgot: asks for the address and emails a link to choose a new password. */
function forgotPassword(container, ctx) {
  const error = errorNote();
  const email = field('forgot-email', 'Email', { type: 'email', autocomplete: 'email', required: true, 'data-testid': 'forgot-email' });
  const submit = h('button', { type: 'submit', class: 'button primary wide', 'data-testid': 'forgot-submit' }, 'Email me a link');
  const form = h('form', { class: 'stack' }, email.element, error.element, submit);
  onSubmit(form, submit, error, async () => {
    const address = email.input.value.trim();
    await ctx.hearth.auth.sendPasswordResetEmail(address);
    container.replaceChildren(h('section', { class: 'page form-page' },
      h('div', { class: 'form-card stack' },
        h('h1', {}, 'Check your email'),
        h('p', { 'data-testid': 'forgot-sent' }, `We sent a link to ${address}. Open it to choose a new password.`),
        h('p', { class: 'small muted' }, 'No email? Look in your spam folder, or ', h('a', { href: '#/forgot' }, 'try again'), '.'))));
  });
  container.replaceChildren(h('section', { class: 'page form-page' },
    h('div', { class: 'form-card' },
      h('h1', {}, 'Forgot your password?'),
      h('p', {}, 'Enter the email address of your account and we will send you a link to choose a new password.'),
      form,
      h('p', { class: 'small' }, h('a', { href: '#/signin' }, 'Back to sign in')))));
  email.input.focus();
  return () => {};
}

/** "Browse without an account": an anonymous account (or simply reading, signed out). */
function browseOptions(ctx, error, done) {
  const anonymous = h('button', { type: 'button', class: 'button secondary wide', 'data-testid': 'browse-anonymously' }, 'Continue without an account');
  anonymous.addEventListener('click', () => busy(anonymous, async () => {
    await browseAnonymously(ctx.hearth);
    done();
  }, (failure) => error.show(failure)));
  return [
    h('div', { class: 'divider' }, 'or'),
    anonymous,
    h('p', { class: 'small muted' }, 'You can comment and like as “Anonymous”, or just ', h('a', { href: '#/' }, 'look around'), ' without signing in.'),
  ];
}

function signInForm(container, ctx, done, withNext, next) {
  const error = errorNote();
  const email = field('signin-email', 'Email', { type: 'email', autocomplete: 'email', required: true, 'data-testid': 'signin-email' });
  const password = field('signin-password', 'Password', { type: 'password', autocomplete: 'current-password', required: true, 'data-testid': 'signin-password' });
  const submit = h('button', { type: 'submit', class: 'button primary wide', 'data-testid': 'signin-submit' }, 'Sign in');
  const form = h('form', { class: 'stack' }, email.element, password.element, error.element, submit);
  onSubmit(form, submit, error, async () => {
    await ctx.hearth.auth.signIn(email.input.value.trim(), password.input.value);
    // No toast: the header shows who is signed in, and the next screen has the focus.
    done();
  });
  authPage(container, ctx, done, {
    title: 'Sign in', form, error, next,
    footer: [
      h('a', { href: '#/forgot', 'data-testid': 'to-forgot' }, 'Forgot your password?'), ' · New here? ',
      h('a', { href: withNext('#/signup'), 'data-testid': 'to-signup' }, 'Create an account'), '.'],
  });
  email.input.focus();
  return () => {};
}

function signUpForm(container, ctx, done, withNext, next) {
  const { form, error, focus } = accountForm(ctx, 'signup', 'Create account', () => done());
  authPage(container, ctx, done, {
    title: 'Create an account', form, error, next,
    footer: ['Have an account? ', h('a', { href: withNext('#/signin') }, 'Sign in'), '.'],
  });
  focus();
  return () => {};
}

/**
 * A name, email and password form that makes the account (or gives an anonymous one the
 * email and password, keeping its uid), then calls `signedUp(name)`. Its fields' IDs and test
 * IDs start with `prefix`.
 */
function accountForm(ctx, prefix, label, signedUp) {
  const error = errorNote();
  const name = field(`${prefix}-name`, 'Your name', { type: 'text', autocomplete: 'name', required: true, maxlength: MAX_NAME, 'data-testid': `${prefix}-name` }, 'Shown with your posts and comments.');
  const email = field(`${prefix}-email`, 'Email', { type: 'email', autocomplete: 'email', required: true, 'data-testid': `${prefix}-email` });
  const password = field(`${prefix}-password`, 'Password', {
    type: 'password', autocomplete: 'new-password', required: true, minlength: 6, 'data-testid': `${prefix}-password`, 'aria-describedby': `${prefix}-password-hint`,
  }, 'At least 6 characters.');
  const submit = h('button', { type: 'submit', class: 'button primary wide', 'data-testid': `${prefix}-submit` }, label);
  const form = h('form', { class: 'stack', novalidate: true }, name.element, email.element, password.element, error.element, submit);
  onSubmit(form, submit, error, async () => {
    const displayName = name.input.value.trim();
    const why = nameProblem(displayName);
    if (why) throw new Problem(why);
    await signUp(ctx.hearth, { name: displayName, email: email.input.value, password: password.input.value });
    signedUp(displayName);
  });
  return { form, error, focus: () => name.input.focus() };
}

function account(container, ctx) {
  const { user } = ctx;
  if (!user) {
    container.replaceChildren(signInPrompt('You are signed out', 'see your account'));
    return () => {};
  }
  const error = errorNote();
  const name = field('profile-name', 'Display name', {
    type: 'text', autocomplete: 'name', required: true, maxlength: MAX_NAME, value: user.displayName ?? '', 'data-testid': 'profile-name',
  });
  const save = h('button', { type: 'submit', class: 'button primary', 'data-testid': 'profile-save' }, 'Save');
  const form = h('form', { class: 'stack' }, name.element, h('div', { class: 'row end' }, save));
  onSubmit(form, save, error, async () => {
    const displayName = name.input.value.trim();
    if (!displayName || [...displayName].length > MAX_NAME) throw new Problem('Enter a name of 1 to 100 characters.');
    await updateProfile(ctx.hearth, { name: displayName });
    toast('Your name was saved.', 'success');
  });
  const signOut = h('button', { type: 'button', class: 'button', 'data-testid': 'sign-out' }, 'Sign out');
  signOut.addEventListener('click', async () => {
    // Offline first, while the token still allows it; the server's revocation need not hold
    // up the page. This browser stops receiving the person's push notifications too.
    await ctx.push?.leave(user.uid);
    await ctx.presence?.signOut();
    ctx.hearth.auth.signOut();
    toast('Signed out.');
    ctx.navigate('#/');
  });
  const who = user.isAnonymous ? 'You are browsing without an account.' : `Signed in as ${user.email ?? user.displayName ?? 'you'}.`;
  const extras = h('div', { class: 'stack' });
  container.replaceChildren(h('section', { class: 'page form-page' },
    h('div', { class: 'form-card stack' },
      h('div', { class: 'row' }, avatar(authorOf(user), 56),
        h('div', {}, h('h1', { style: { margin: '0' } }, user.displayName ?? 'Anonymous'), h('p', { class: 'muted small', style: { margin: '0' } }, who))),
      extras,
      h('p', {}, h('a', { href: `#/profile/${encodeURIComponent(user.uid)}` }, 'See your public profile')),
      h('p', {}, h('a', { href: '#/settings/notifications', 'data-testid': 'account-notification-settings' }, 'Notification settings')),
      form,
      error.element,
      h('hr', { class: 'separator' }),
      h('div', { class: 'row' }, signOut),
      deleteAccountSection(ctx, user))));
  if (user.isAnonymous) keepWhatYouMade(extras, ctx);
  else accountMethods(extras, ctx, error);
  return () => {};
}

/** What the person types to confirm a deletion (AccountDeletionViewModel.confirmationWord). */
const CONFIRMATION_WORD = 'DELETE';

/**
 * "Delete my account", as AccountDeletionViewModel: a button that opens a form saying what
 * goes, asking for the confirmation word and, for an account with a password, the password
 * (a deletion needs a recent sign-in, so the person signs in again). Refused while writes wait
 * to be sent. The account is deleted (the server then removes everything the person made),
 * and the person signed out here and sent to the sign-in page.
 */
function deleteAccountSection(ctx, user) {
  const { hearth } = ctx;
  const error = errorNote();
  // An account with an email signs in with its password (a provider-only one has none: see below).
  let needsPassword = !user.isAnonymous && Boolean(user.email);
  const open = h('button', {
    type: 'button', class: 'button danger-quiet', 'data-testid': 'delete-account-open',
    'aria-expanded': 'false', 'aria-controls': 'delete-account-form',
  }, 'Delete my account');
  const confirmation = field('delete-confirmation', `Type ${CONFIRMATION_WORD} to confirm`, {
    type: 'text', autocomplete: 'off', autocapitalize: 'characters', spellcheck: 'false', required: true,
    'data-testid': 'delete-confirmation', 'aria-describedby': 'delete-account-what',
  });
  const password = field('delete-password', 'Your password', {
    type: 'password', autocomplete: 'current-password', required: true, 'data-testid': 'delete-password',
    'aria-describedby': 'delete-password-hint',
  }, 'For your safety, enter your password again.');
  password.element.hidden = !needsPassword;
  const cancel = h('button', { type: 'button', class: 'button secondary', 'data-testid': 'delete-account-cancel' }, 'Cancel');
  const submit = h('button', { type: 'submit', class: 'button danger', 'data-testid': 'delete-account-submit' }, 'Delete my account forever');
  const form = h('form', { id: 'delete-account-form', class: 'stack', novalidate: true, hidden: true, 'data-testid': 'delete-account-form' },
    h('p', { id: 'delete-account-what', 'data-testid': 'delete-account-what' },
      'This deletes your account and everything you made here, for everyone: your profile, your posts and their photos, ',
      'your comments and likes, who you follow and who follows you, your notifications, and your conversations ',
      '(the people you talked with lose them too). ', h('strong', {}, 'It cannot be undone.')),
    confirmation.element, password.element, error.element,
    h('div', { class: 'row end' }, cancel, submit));

  const show = (shown) => {
    form.hidden = !shown;
    open.setAttribute('aria-expanded', String(shown));
    if (shown) {
      confirmation.input.focus();
      return;
    }
    error.clear();
    confirmation.input.value = '';
    password.input.value = '';
    open.focus();
  };
  open.addEventListener('click', () => show(form.hidden));
  cancel.addEventListener('click', () => show(false));
  form.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape') return;
    event.preventDefault();
    show(false);
  });
  // A provider-only account has no password to give: it deletes with its sign-in as it is (an
  // old one is refused by the server, and the words say to sign in again).
  if (needsPassword) {
    hearth.auth.accountInfo().then((info) => {
      const methods = info?.providerUserInfo ?? [];
      if (methods.length && !methods.some((method) => method.providerId === 'password')) {
        needsPassword = false;
        password.element.hidden = true;
      }
    }, () => {}); // offline: the password is asked for, as for most accounts
  }

  onSubmit(form, submit, error, async () => {
    if (confirmation.input.value.trim() !== CONFIRMATION_WORD) {
      confirmation.input.focus();
      throw new Problem(`Type ${CONFIRMATION_WORD} to confirm.`);
    }
    if (needsPassword && !password.input.value) {
      password.input.focus();
      throw new Problem('Enter your password.');
    }
    // Writes still on their way would land after the server's clean-up began.
    if (hearth.db.pendingWriteCount() > 0) {
      throw new Problem('Some of your changes are still being sent. Try again once you are online. Nothing was deleted.');
    }
    const current = hearth.auth.currentUser;
    if (current?.uid !== user.uid) throw new Problem('You are no longer signed in as this account. Nothing was deleted.');
    if (needsPassword) {
      let again;
      try {
        again = await hearth.auth.signIn(user.email, password.input.value);
      } catch (failure) {
        if (['auth/INVALID_LOGIN_CREDENTIALS', 'auth/INVALID_PASSWORD'].includes(failure?.code)) {
          password.input.select();
          throw new Problem('That is not your password. Nothing was deleted.');
        }
        throw failure;
      }
      if (again.uid !== user.uid) throw new Problem('That is another account’s password. Nothing was deleted.');
    }
    // Offline now, and nothing left for the connection's end to write back once the
    // server's clean-up has removed the status.
    await ctx.presence?.signOut();
    try {
      await hearth.auth.deleteAccount();
    } catch (failure) {
      ctx.presence?.follow(hearth.auth.currentUser);
      if (failure?.code === 'auth/CREDENTIAL_TOO_OLD_LOGIN_AGAIN') {
        throw new Problem('For your safety, sign out and sign in again, then delete your account. Nothing was deleted.');
      }
      throw failure;
    }
    password.input.value = '';
    // The server removed the push subscriptions with the rest: the browser's goes too.
    await ctx.push?.leave(user.uid, { stored: false });
    // Nothing of the account's screens is painted at the next start.
    clearScreens();
    toast('Your account was deleted.', 'success');
    ctx.navigate('#/signin');
  });

  return h('section', { class: 'danger-zone stack', 'aria-labelledby': 'delete-account-title', 'data-testid': 'delete-account' },
    h('h2', { id: 'delete-account-title' }, 'Delete my account'),
    h('p', { class: 'small muted' }, 'Remove your account and everything you made here.'),
    h('div', { class: 'row' }, open),
    form);
}

/** For an anonymous account: become a full account (password or provider), keeping the uid. */
function keepWhatYouMade(holder, ctx) {
  const { form, error } = accountForm(ctx, 'keep', 'Create my account', () => {
    toast('Your account is ready, and everything you made is still yours.', 'success');
    ctx.navigate('#/account');
  });
  const providers = h('div', { class: 'stack' });
  holder.replaceChildren(h('div', { class: 'notice stack', 'data-testid': 'keep-what-you-made' },
    h('h2', {}, 'Keep what you made'),
    h('p', { class: 'small' }, 'Create an account to keep your posts, comments and likes and to sign in from anywhere.'),
    providers, form));
  showProviders(providers, ctx, error, { next: '#/account', link: true });
}

/** The email's verification and the ways of signing in, with connect and disconnect. */
async function accountMethods(holder, ctx, error) {
  let info;
  try {
    info = await ctx.hearth.auth.accountInfo();
  } catch {
    return; // offline: the rest of the page still works
  }
  if (!info || !holder.isConnected) return;
  const parts = [];
  if (info.email && !info.emailVerified) {
    const send = h('button', { type: 'button', class: 'button', 'data-testid': 'send-verification' }, 'Send me a link');
    send.addEventListener('click', () => busy(send, async () => {
      await ctx.hearth.auth.sendEmailVerification();
      toast(`We sent a link to ${info.email}.`, 'success');
    }, (failure) => error.show(failure)));
    parts.push(h('div', { class: 'notice row', 'data-testid': 'verify-email' },
      h('span', {}, `Verify your email address ${info.email} so you can always get back into your account.`), send));
  }
  const linked = (info.providerUserInfo ?? []).filter((entry) => entry.providerId !== 'phone');
  let offered = [];
  try {
    offered = await ctx.hearth.auth.providers();
  } catch {
    offered = [];
  }
  const rows = linked.map((entry) => {
    const label = entry.providerId === 'password' ? `Email and password (${entry.email})`
      : `${offered.find((provider) => provider.providerId === entry.providerId)?.displayName ?? entry.providerId}${entry.email ? ` (${entry.email})` : ''}`;
    const row = h('li', { class: 'row', 'data-testid': `method-${entry.providerId}` }, h('span', {}, label));
    if (entry.providerId !== 'password' && linked.length > 1) {
      const remove = h('button', { type: 'button', class: 'button small', 'data-testid': `unlink-${entry.providerId}` }, 'Disconnect');
      remove.addEventListener('click', () => busy(remove, async () => {
        await ctx.hearth.auth.unlink(entry.providerId);
        toast('Disconnected.');
        accountMethods(holder, ctx, error);
      }, (failure) => error.show(failure)));
      row.append(remove);
    }
    return row;
  });
  const connect = offered.filter((provider) => !linked.some((entry) => entry.providerId === provider.providerId))
    .map(({ providerId, displayName }) => {
      const button = h('button', { type: 'button', class: 'button small', 'data-testid': `link-${providerId}` }, `Connect ${displayName}`);
      button.addEventListener('click', () => busy(button, () => ctx.hearth.auth.signInWithProvider(providerId, { next: '#/account', link: true }),
        (failure) => error.show(failure)));
      return button;
    });
  parts.push(h('div', { class: 'stack' }, h('h2', {}, 'Ways to sign in'), h('ul', { class: 'plain stack' }, ...rows),
    connect.length ? h('div', { class: 'row' }, ...connect) : null));
  holder.replaceChildren(...parts);
}
