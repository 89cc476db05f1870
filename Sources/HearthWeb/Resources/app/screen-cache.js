// The last look of each screen, kept in localStorage so that /app/boot.js can paint it at the
// next start before the app's modules have loaded. Only screens that show data are kept (not
// forms), only once they have finished loading, and only for the person signed in: a change of
// person clears them all.

const KEY = 'hearth:screens';
/** Screens kept at most, and the largest copy of one. */
const MAX_SCREENS = 12;
const MAX_SCREEN_CHARS = 400_000;
/** Routes whose screens are forms (what is typed there is never kept). */
const FORMS = new Set(['signin', 'signup', 'account', 'forgot', 'compose']);

function read() {
  try {
    return JSON.parse(localStorage.getItem(KEY) || 'null');
  } catch {
    return null;
  }
}

/**
 * Whether a view has finished its first load: it shows something, no skeleton (ui.js's
 * `skeleton`, class `skeleton`) and no "Loading…" text (a `viewStatus` says it while loading).
 * @param {Element} element
 */
export function hasSettled(element) {
  if (!element.firstElementChild || element.querySelector('.skeleton')) return false;
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.data.trim().startsWith('Loading')) return false;
  }
  return true;
}

/**
 * Keeps how the screen at `hash` looks now.
 * @param {string} hash the address's hash (`#/`, `#/feed`, …)
 * @param {string|null} uid who is signed in (null: nobody)
 * @param {{main: Element, nav: Element, account: Element}} parts
 */
export function saveScreen(hash, uid, { main, nav, account }) {
  const route = hash.replace(/^#\/?/, '').split(/[/?]/)[0];
  if (FORMS.has(route) || !hasSettled(main)) return;
  const copy = main.cloneNode(true);
  // Object URLs (photos not yet uploaded) do not outlive the page.
  for (const image of copy.querySelectorAll('img[src^="blob:"]')) image.removeAttribute('src');
  // What is only true now (an "Offline — showing what was saved" note) is not painted at the next start.
  for (const element of copy.querySelectorAll('[data-not-kept]')) element.remove();
  // The page's CSP refuses style attributes in parsed HTML: boot.js sets them back through the
  // CSSOM (as the app draws them).
  const html = keptHTML(copy);
  if (html.length > MAX_SCREEN_CHARS) return;
  const saved = read();
  const screens = saved?.uid === uid ? { ...saved.screens } : {};
  delete screens[hash];
  screens[hash] = { main: html, nav: keptHTML(nav), account: keptHTML(account), at: Date.now() };
  const names = Object.keys(screens);
  for (const name of names.slice(0, Math.max(0, names.length - MAX_SCREENS))) delete screens[name];
  try {
    localStorage.setItem(KEY, JSON.stringify({ uid, screens }));
  } catch {
    // Full or unavailable: start-up simply draws without a copy.
    clearScreens();
  }
}

/** An element's inner HTML with style attributes kept aside, as `saveScreen` keeps them. */
function keptHTML(element) {
  const copy = element.cloneNode(true);
  for (const styled of copy.querySelectorAll('[style]')) {
    styled.setAttribute('data-kept-style', styled.getAttribute('style'));
    styled.removeAttribute('style');
  }
  return copy.innerHTML;
}

/** Forgets every kept screen (at sign-out, or when another person signs in). */
export function clearScreens() {
  try {
    localStorage.removeItem(KEY);
  } catch {
    // Unavailable storage holds nothing to clear.
  }
  // The photos the service worker kept for offline (sw.js) were this person's screens' too.
  globalThis.caches?.delete(PHOTOS_CACHE).catch(() => {});
}

/** The service worker's cache of photos seen (sw.js's PHOTOS). */
const PHOTOS_CACHE = 'hearth-photos';

/** Who the kept screens belong to (undefined when none are kept). */
export function screensOwner() {
  return read()?.uid;
}
