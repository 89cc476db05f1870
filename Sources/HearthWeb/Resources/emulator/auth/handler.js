// The emulator's sign-in page, opened by Firebase's SDKs (connectAuthEmulator) for
// signInWithPopup / signInWithRedirect in place of the provider. It makes a fake credential
// (the claims as JSON, which Hearth's signInWithIdp accepts in emulator mode) and hands the SDK
// an auth event the way Firebase's emulator does: for a popup, to the emulator iframe in the
// opener's page (same origin as this page); for a redirect, in this origin's sessionStorage
// (which that iframe reads once the app's page loads again), then back to redirectUrl.

const query = new URLSearchParams(location.search);
const apiKey = query.get('apiKey') || '';
const appName = query.get('appName') || '';
const authType = query.get('authType') || '';
const providerId = query.get('providerId') || '';
const redirectUrl = query.get('redirectUrl') || '';
const eventId = query.get('eventId');
const tenantId = query.get('tid');
const storageKey = apiKey + ':' + appName;

const $ = (id) => document.getElementById(id);

function fail(message) {
  const problem = $('problem');
  problem.textContent = message;
  problem.hidden = false;
  $('choose').hidden = true;
  $('new-account').hidden = true;
}

function providerName(id) {
  const known = { 'google.com': 'Google', 'github.com': 'GitHub', 'apple.com': 'Apple', 'microsoft.com': 'Microsoft',
    'yahoo.com': 'Yahoo', 'facebook.com': 'Facebook', 'twitter.com': 'Twitter' };
  return known[id] || id;
}

// A provider user ID no real provider would give (40 random digits).
function randomRawId() {
  const digits = new Uint8Array(40);
  crypto.getRandomValues(digits);
  return Array.from(digits, (d) => String(d % 10)).join('');
}

function randomId() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

// The claims of the fake id_token; undefined fields drop out of the JSON.
function claimsFor(account) {
  return {
    sub: account.rawId, iss: '', aud: '', exp: 0, iat: 0,
    name: account.displayName || undefined, screen_name: account.screenName || undefined,
    email: account.email || undefined, email_verified: true, picture: account.photoUrl || undefined,
  };
}

// The auth event the SDK turns into signInWithIdp: its requestUri (urlResponse) is this page's
// address with the provider and the fake id_token in the query.
function authEventFor(account) {
  const response = new URL(location.origin + location.pathname);
  response.searchParams.set('providerId', providerId);
  response.searchParams.set('id_token', JSON.stringify(claimsFor(account)));
  return {
    type: authType, eventId: eventId, urlResponse: response.href, sessionId: randomId(), postBody: null,
    tenantId: tenantId, error: null,
  };
}

// The emulator iframe of the app that opened this popup: same origin as this page, so its
// address can be read (frames of other origins throw and are skipped).
function openersIframe() {
  if (!window.opener) return null;
  for (let i = 0; i < window.opener.frames.length; i++) {
    try {
      const frame = window.opener.frames[i];
      if (frame.location.origin !== location.origin || frame.location.pathname !== '/emulator/auth/iframe') continue;
      const params = new URLSearchParams(frame.location.search);
      if (params.get('apiKey') === apiKey && params.get('appName') === appName) return frame;
    } catch (_) {
      // Another origin's frame.
    }
  }
  return null;
}

function finish(account) {
  const event = authEventFor(account);
  if (/popup/i.test(authType)) {
    const frame = openersIframe();
    if (!frame) return fail('The page that opened this popup has no emulator iframe for this app; sign in again from the app.');
    frame.postMessage({ type: 'hearth:authEvent', storageKey: storageKey, authEvent: event }, location.origin);
    document.body.dataset.finished = 'popup';
    // The SDK closes the popup once it has the event.
    return;
  }
  let target;
  try {
    target = new URL(redirectUrl);
  } catch (_) {
    return fail('There is no page to go back to (redirectUrl); use signInWithCredential instead.');
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return fail('redirectUrl must be an http(s) address.');
  sessionStorage.setItem('firebase:redirectEvent:' + storageKey, JSON.stringify(event));
  document.body.dataset.finished = 'redirect';
  location.assign(target.href);
}

function showForm(show) {
  $('new-account').hidden = !show;
  $('choose').hidden = show;
  if (show) $('email').focus();
}

function emailProblem() {
  const email = $('email').value.trim();
  if (!email) return 'Email required';
  if (email.indexOf('@') < 1 || email.indexOf('@') === email.length - 1) return 'Not an email address';
  return '';
}

function renderAccounts(accounts) {
  const list = $('accounts');
  list.replaceChildren();
  for (const account of accounts) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'account';
    if (account.photoUrl && /^https?:/i.test(account.photoUrl)) {
      const photo = document.createElement('img');
      photo.alt = '';
      photo.src = account.photoUrl;
      button.append(photo);
    } else {
      const avatar = document.createElement('span');
      avatar.className = 'avatar';
      button.append(avatar);
    }
    const text = document.createElement('span');
    const name = document.createElement('span');
    name.className = 'name';
    name.textContent = account.displayName || '(No display name)';
    const email = document.createElement('span');
    email.className = 'email';
    email.textContent = account.email || '';
    text.append(name, email);
    button.append(text);
    button.addEventListener('click', () => finish(account));
    const item = document.createElement('li');
    item.append(button);
    list.append(item);
  }
  $('no-accounts').hidden = accounts.length > 0;
}

async function start() {
  const name = providerName(providerId);
  $('provider').textContent = name;
  for (const element of document.querySelectorAll('.provider-name')) element.textContent = name;
  document.title = 'Sign in with ' + name + ' (Hearth emulator)';
  if (!providerId || !apiKey) return fail('This page needs the apiKey and providerId the SDK puts in its address.');
  if (!appName) return fail('This page needs the appName the SDK puts in its address.');

  $('add-account').addEventListener('click', () => showForm(true));
  $('back').addEventListener('click', () => showForm(false));
  $('email').addEventListener('input', () => { $('email-error').textContent = emailProblem(); });
  $('autofill').addEventListener('click', () => {
    const words = ['otter', 'maple', 'comet', 'heron', 'pebble', 'cedar', 'lark', 'fern'];
    const pick = () => words[Math.floor(Math.random() * words.length)];
    const given = pick();
    const family = pick();
    $('email').value = given + '.' + family + '.' + Math.floor(Math.random() * 1000) + '@example.com';
    $('display-name').value = given[0].toUpperCase() + given.slice(1) + ' ' + family[0].toUpperCase() + family.slice(1);
    $('screen-name').value = family + '_' + given;
    $('email-error').textContent = '';
  });
  $('new-account').addEventListener('submit', (event) => {
    event.preventDefault();
    const problem = emailProblem();
    $('email-error').textContent = problem;
    if (problem) return;
    finish({
      rawId: randomRawId(), email: $('email').value.trim(), displayName: $('display-name').value.trim(),
      screenName: $('screen-name').value.trim(), photoUrl: $('photo-url').value.trim(),
    });
  });

  try {
    const response = await fetch('accounts?providerId=' + encodeURIComponent(providerId), { credentials: 'omit' });
    const answer = await response.json();
    if (!response.ok) throw new Error(answer.error ? answer.error.message : String(response.status));
    renderAccounts(answer.accounts || []);
  } catch (error) {
    renderAccounts([]);
    $('problem').textContent = 'Could not list the accounts: ' + error.message;
    $('problem').hidden = false;
  }
  document.body.dataset.ready = 'true';
}

start();
