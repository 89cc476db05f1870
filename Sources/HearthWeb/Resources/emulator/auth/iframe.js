// The hidden iframe Firebase's SDKs embed from an Auth emulator (emulator/auth/iframe?apiKey=…
// &appName=…&v=…). The SDK speaks to it through Google's gapi.iframes (loaded from
// apis.google.com by the SDK and by this page): it asks "webStorageSupport" and expects an
// "authEvent" message carrying the result of a popup or a redirect, answering it with ACK.
// Events come from the emulator's sign-in page (handler.js): a popup's by postMessage from the
// same origin, a redirect's from this origin's sessionStorage.

const query = new URLSearchParams(location.search);
const storageKey = (query.get('apiKey') || '') + ':' + (query.get('appName') || '');
const redirectKey = 'firebase:redirectEvent:' + storageKey;
const noEvent = { type: 'unknown', error: { code: 'auth/no-auth-event' } };
let sdkFrame = null;

function report(message) {
  document.body.textContent = message;
  console.error('Hearth emulator iframe: ' + message);
}

function send(authEvent) {
  sdkFrame.send('authEvent', { type: 'authEvent', authEvent: authEvent || noEvent }, (responses) => {
    const last = responses && responses[responses.length - 1];
    if (!last || last.status !== 'ACK') report('the SDK did not take the auth event');
  }, gapi.iframes.CROSS_ORIGIN_IFRAMES_FILTER);
}

// A popup's event, from the handler page on this origin.
window.addEventListener('message', (message) => {
  if (message.origin !== location.origin || !message.data || message.data.type !== 'hearth:authEvent') return;
  if (message.data.storageKey !== storageKey) return;
  if (sdkFrame) {
    send(message.data.authEvent);
  } else {
    sessionStorage.setItem(redirectKey, JSON.stringify(message.data.authEvent));
  }
});

function connect() {
  sdkFrame = gapi.iframes.getContext().getParentIframe();
  // The SDK waits for this answer before it goes on with a popup.
  sdkFrame.register('webStorageSupport', () => ({ status: 'ACK', webStorageSupport: true }),
    gapi.iframes.CROSS_ORIGIN_IFRAMES_FILTER);
  let stored = null;
  try {
    stored = JSON.parse(sessionStorage.getItem(redirectKey) || 'null');
  } catch (_) {
    stored = null;
  }
  sessionStorage.removeItem(redirectKey);
  // A redirect's result, or "no event" so getRedirectResult resolves with null.
  send(stored);
}

window.hearthEmulatorGapiLoaded = () => {
  gapi.load('gapi.iframes', {
    callback: connect,
    timeout: 10000,
    ontimeout: () => report('gapi.iframes did not load from apis.google.com (is there internet access?)'),
  });
};

const loader = document.createElement('script');
loader.src = 'https://apis.google.com/js/api.js?onload=hearthEmulatorGapiLoaded';
loader.onerror = () => report('https://apis.google.com/js/api.js could not be loaded: popups and redirects need it');
document.head.append(loader);
