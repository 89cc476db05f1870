// Small DOM helpers every view shares: element building, toasts, errors in words, times,
// avatars and a confirmation dialog.
import { icon } from '/app/icons.js';

/**
 * Creates an element. `attrs`: `class`, `on:<event>` handlers, `aria-*`/`data-*` and other
 * attributes; `true` sets a boolean attribute, `false`/null/undefined leave it out; `value`,
 * `checked` and `disabled` are set as properties; `style` is an object of CSS properties, set
 * through the CSSOM (the page's CSP refuses inline style attributes). Children: nodes, text,
 * arrays; null and false are skipped.
 */
export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (name.startsWith('on:')) {
      element.addEventListener(name.slice(3), value);
    } else if (name === 'style') {
      for (const [property, setting] of Object.entries(value ?? {})) element.style.setProperty(property, String(setting));
    } else if (name === 'value' || name === 'checked' || name === 'disabled') {
      element[name] = value;
    } else if (value === true) {
      element.setAttribute(name, '');
    } else if (value !== false && value !== null && value !== undefined) {
      element.setAttribute(name, String(value));
    }
  }
  append(element, children);
  return element;
}

function append(parent, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.append(child instanceof Node ? child : String(child));
  }
}

/**
 * Makes the page's skip link (`[data-skip-link]`) move focus to `#main` without changing the
 * address: the hash belongs to the router, which would take `#main` for a route.
 */
export function skipLinkFocusesMain() {
  document.querySelector('[data-skip-link]')?.addEventListener('click', (event) => {
    event.preventDefault();
    document.getElementById('main')?.focus();
  });
}

/** Toasts shown at once at most: older ones make way. */
const MAX_TOASTS = 3;
/** Elements toasts stay above (the phone's tab bar, a chat's message box): see `placeToasts`. */
const KEEP_CLEAR = '[data-keep-clear]';
/** What toasts stay below on wide screens, where they show at the top. */
const HEADER = '.app-header';

/**
 * How long a toast stays: long enough to read it at a slow pace, and errors (which may need
 * acting on) at least ten seconds.
 */
export function toastDuration(message, kind = 'info') {
  const reading = 3000 + String(message).length * 70;
  return Math.round(kind === 'error' ? Math.max(10_000, reading * 1.5) : Math.max(5000, reading));
}

/**
 * Shows `message` briefly; `kind` is 'info', 'success' or 'error'. Announced (a polite status,
 * or an alert for errors), dismissable with its button or Escape (the newest first), kept while
 * the pointer or focus is on it, placed above the tab bar and a chat's message box. `action`
 * ({ label, href, testId }) adds a link that goes there and dismisses it.
 * @returns {HTMLElement|null} the toast (with `dismiss()`)
 */
export function toast(message, kind = 'info', { duration = toastDuration(message, kind), action = null } = {}) {
  const region = document.getElementById('toasts');
  if (!region) return null;
  listenForEscape();
  const close = h('button', { type: 'button', class: 'toast-close', 'aria-label': 'Dismiss', 'data-testid': 'toast-close' }, icon('close', 18));
  const item = h('div', {
    class: `toast toast-${kind}`,
    role: kind === 'error' ? 'alert' : 'status',
    'data-testid': kind === 'error' ? 'error' : 'toast',
  }, h('p', { class: 'toast-text' }, message),
  action ? h('a', { href: action.href, class: 'button small toast-action', 'data-testid': action.testId ?? 'toast-action' }, action.label) : null,
  close);
  item.querySelector('.toast-action')?.addEventListener('click', () => item.dismiss());

  let remaining = duration;
  let started = 0;
  let timer = null;
  const holds = new Set();
  const run = () => {
    started = Date.now();
    timer = setTimeout(dismiss, remaining);
  };
  const hold = (reason) => {
    if (!holds.size) {
      clearTimeout(timer);
      remaining -= Date.now() - started;
    }
    holds.add(reason);
  };
  const release = (reason) => {
    if (!holds.delete(reason) || holds.size) return;
    // Time to read it again once let go.
    remaining = Math.max(remaining, 2000);
    run();
  };
  function dismiss() {
    clearTimeout(timer);
    if (!item.isConnected) return;
    const hadFocus = item.contains(document.activeElement);
    item.remove();
    keepScrolledClear(region);
    // Focus does not fall to the page's start: to the next toast, or the content.
    if (hadFocus) (region.lastElementChild?.querySelector('.toast-close') ?? document.getElementById('main'))?.focus({ preventScroll: true });
  }
  item.dismiss = dismiss;
  close.addEventListener('click', dismiss);
  // Held while the pointer moves over it (one that was resting where it appeared does not hold it).
  let entered = null;
  item.addEventListener('pointerenter', (event) => {
    entered = [event.clientX, event.clientY];
  });
  item.addEventListener('pointermove', (event) => {
    if (!entered || event.clientX !== entered[0] || event.clientY !== entered[1]) hold('pointer');
  });
  item.addEventListener('pointerleave', () => {
    entered = null;
    release('pointer');
  });
  item.addEventListener('focusin', () => hold('focus'));
  item.addEventListener('focusout', (event) => {
    if (!item.contains(event.relatedTarget)) release('focus');
  });

  placeToasts(region);
  region.append(item);
  while (region.children.length > MAX_TOASTS) region.firstElementChild.dismiss?.() ?? region.firstElementChild.remove();
  keepScrolledClear(region);
  run();
  return item;
}

/**
 * While toasts show, what focus or a link scrolls to stops above them (the page's
 * scroll-padding-bottom, in app.css, adds `--toasts-height`).
 */
function keepScrolledClear(region) {
  const height = region.childElementCount ? Math.ceil(region.getBoundingClientRect().height) + 16 : 0;
  document.documentElement.style.setProperty('--toasts-height', `${height}px`);
}

/**
 * Keeps the toasts above what sits at the bottom of the screen and must stay usable (elements
 * marked `data-keep-clear`: the phone's tab bar, a chat's message box) and, where they show at
 * the top (wide screens, see app.css), below the header.
 */
function placeToasts(region) {
  const header = document.querySelector(HEADER)?.getBoundingClientRect();
  if (header) region.style.setProperty('--toasts-top', `${Math.ceil(Math.max(header.bottom, 0)) + 12}px`);
  let floor = innerHeight;
  for (const element of document.querySelectorAll(KEEP_CLEAR)) {
    if (!element.checkVisibility()) continue;
    const { top, height } = element.getBoundingClientRect();
    if (height > 0 && top > innerHeight / 2 && top < floor) floor = top;
  }
  if (floor < innerHeight) region.style.setProperty('--toasts-bottom', `${Math.ceil(innerHeight - floor)}px`);
  else region.style.removeProperty('--toasts-bottom');
}

let escapeListened = false;

/** Escape dismisses the newest toast (unless a dialog or menu took it). */
function listenForEscape() {
  if (escapeListened) return;
  escapeListened = true;
  document.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape' || event.defaultPrevented || document.querySelector('dialog[open]')) return;
    document.getElementById('toasts')?.lastElementChild?.dismiss?.();
  });
  window.addEventListener('resize', () => {
    const region = document.getElementById('toasts');
    if (region?.childElementCount) placeToasts(region);
  });
}

/**
 * A problem with what a person typed or chose, already in words for them ("Enter your name."):
 * `errorWords` shows its message as it is.
 */
export class Problem extends Error {
  constructor(message) {
    super(message);
    this.name = 'Problem';
  }
}

/**
 * Any error, in words for a person: a HearthError's or a Problem's message as it is; other
 * failures say that something unexpected happened, what, and what to do.
 */
export function errorWords(error) {
  if (!error) return 'Something went wrong. Try again.';
  if (typeof error === 'string') return error;
  if ((error.name === 'HearthError' || error.name === 'Problem') && error.message) return error.message;
  if (error.name === 'TypeError' && /fetch|network|load failed/i.test(error.message)) {
    return 'Hearth could not be reached. Check your connection and try again.';
  }
  const detail = String(error.message || error).trim().replace(/[.\s]+$/, '');
  return `Something went wrong (${detail}). Try again, or reload the page.`;
}

const UNITS = [
  [60, 'second'],
  [60, 'minute'],
  [24, 'hour'],
  [7, 'day'],
];

/** "just now", "5 minutes ago", "3 days ago", or the date for older times. */
export function timeAgo(ms) {
  if (typeof ms !== 'number') return '';
  let amount = Math.max(0, (Date.now() - ms) / 1000);
  if (amount < 45) return 'just now';
  for (const [size, unit] of UNITS) {
    if (amount < size) {
      const whole = Math.round(amount);
      return `${whole} ${unit}${whole === 1 ? '' : 's'} ago`;
    }
    amount /= size;
  }
  return new Date(ms).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
}

/** "1 post", "2 posts", "1,200 children". */
export function counted(count, singular, plural = `${singular}s`) {
  // Small counts skip the locale's number format, whose first use costs ~15 ms at start-up.
  const number = Math.abs(count) < 1000 ? String(count) : count.toLocaleString();
  return `${number} ${count === 1 ? singular : plural}`;
}

/**
 * A `<time>` saying how long ago `ms` was ("5 minutes ago"), with the full time as its title.
 * `refreshTimes` keeps its words current while the screen stays open.
 */
export function agoTime(ms, attrs = {}) {
  const element = h('time', { datetime: new Date(ms).toISOString(), 'data-ago': ms, ...attrs }, timeAgo(ms));
  // The full time is formatted when it is first wanted: the locale's date format costs a few
  // milliseconds at its first use, which would delay the first screen.
  const addTitle = () => {
    if (!element.title) element.title = fullTime(ms);
  };
  element.addEventListener('pointerenter', addTitle, { once: true });
  element.addEventListener('focus', addTitle, { once: true });
  return element;
}

/** Brings the words of every `agoTime` under `root` up to date. */
export function refreshTimes(root = document) {
  for (const element of root.querySelectorAll('time[data-ago]')) {
    const words = timeAgo(Number(element.dataset.ago));
    if (element.textContent !== words) element.textContent = words;
  }
}

/** The full date and time, for a `title` or `<time datetime>`. */
export function fullTime(ms) {
  return typeof ms === 'number' ? new Date(ms).toLocaleString() : '';
}

/** Where avatars learn a person's current picture (see `useCurrentPictures`); null: they do not. */
let currentPicture = null;

/**
 * Lets avatars show each person's current profile picture, whatever copy of their profile a
 * post or comment was written with: `lookup(uid)` answers a promise of the picture's URL, or of
 * null when they have none.
 */
export function useCurrentPictures(lookup) {
  currentPicture = lookup;
}

/**
 * A round picture of `author` ({ uid, full_name, profile_picture }): their photo, or their
 * initials on a colour derived from their uid. Decorative: the name is always shown next to it.
 * Drawn at once from what it is given, then brought up to date with the person's current
 * picture (`useCurrentPictures`).
 */
export function avatar(author, size = 40) {
  const element = avatarElement(author, size);
  if (currentPicture && author?.uid) {
    currentPicture(author.uid).then((url) => {
      if ((url ?? null) !== (author.profile_picture ?? null)) replacePlaced(element, () => avatarElement({ ...author, profile_picture: url }, size));
    }, () => {});
  }
  return element;
}

/** Every avatar of `uid` on the page, drawn again with `url` (their picture just changed). */
export function refreshAvatars(uid, url) {
  for (const element of document.querySelectorAll('[data-avatar-uid]')) {
    if (element.dataset.avatarUid !== uid) continue;
    const author = { uid, full_name: element.dataset.avatarName, profile_picture: url };
    element.replaceWith(avatarElement(author, Number(element.dataset.avatarSize) || 40));
  }
}

function avatarElement(author, size) {
  const name = author?.full_name || 'Anonymous';
  const style = { width: `${size}px`, height: `${size}px`, 'font-size': `${Math.round(size * 0.4)}px` };
  const data = { 'data-avatar-uid': author?.uid, 'data-avatar-name': name, 'data-avatar-size': size };
  if (author?.profile_picture) {
    // A picture that is gone (replaced by a newer profile photo) falls back to the initials.
    return h('img', {
      class: 'avatar', src: author.profile_picture, alt: '', width: size, height: size, style, loading: 'lazy', ...data,
      'on:error': (event) => event.currentTarget.replaceWith(avatarElement({ ...author, profile_picture: null }, size)),
    });
  }
  const initials = name.split(/\s+/).filter(Boolean).slice(0, 2).map((word) => word[0].toUpperCase()).join('') || '?';
  let hash = 0;
  for (const character of author?.uid ?? name) hash = (hash * 31 + character.charCodeAt(0)) % 360;
  return h('span', { class: 'avatar', 'aria-hidden': 'true', style: { ...style, '--avatar-hue': hash }, ...data }, initials);
}

/** Replaces `element` with `make()` once it is in the page (a view may place it a little later). */
function replacePlaced(element, make, frames = 10) {
  if (element.parentNode) element.replaceWith(make());
  else if (frames > 0) requestAnimationFrame(() => replacePlaced(element, make, frames - 1));
}

/** What a signed-out visitor sees on a page that needs an account; signing in comes back here. */
export function signInPrompt(title, purpose) {
  return h('section', { class: 'page empty' },
    h('h1', {}, title),
    h('p', {}, `Sign in to ${purpose}.`),
    h('p', {}, h('a', { href: `#/signin?next=${encodeURIComponent(location.hash || '#/')}`, class: 'button primary' }, 'Sign in')));
}

/**
 * A view's status: one polite `role=status` region. While loading it says so to screen readers
 * only (skeletons, hidden from them, show it on screen); then it is empty and hidden, or shows
 * an empty state. `loading(words)`, `empty(element)`, `clear()`.
 */
export function viewStatus(words = 'Loading…') {
  const element = h('div', { class: 'view-status', role: 'status', 'data-testid': 'view-status' });
  const status = {
    element,
    loading(text = words) {
      element.hidden = false;
      element.dataset.state = 'loading';
      element.replaceChildren(h('span', { class: 'visually-hidden' }, text));
    },
    empty(content) {
      element.hidden = false;
      element.dataset.state = 'empty';
      element.replaceChildren(content);
    },
    clear() {
      element.hidden = true;
      delete element.dataset.state;
      element.replaceChildren();
    },
    /**
     * After new content: clears the status if there is some, or else shows what `makeEmpty()`
     * builds (built once: an empty state already shown stays, so focus and reading stay put).
     */
    settle(hasContent, makeEmpty) {
      if (hasContent) status.clear();
      else if (element.dataset.state !== 'empty') status.empty(makeEmpty());
    },
  };
  status.loading();
  return status;
}

/** A list could not be loaded: its status and skeleton placeholders go, and the error shows. */
export function showListError({ status, list, error }, caught) {
  status.clear();
  list.removeAttribute('aria-busy');
  list.querySelectorAll(':scope > .skeleton').forEach((placeholder) => placeholder.remove());
  error.show(caught);
}

/**
 * What an empty screen says, and what to do next: a title, a sentence, and links (or buttons).
 * @param {{title: string, text?: string, actions?: Node[], testId?: string}} options
 */
export function emptyState({ title, text, actions = [], testId = 'empty-state' }) {
  return h('div', { class: 'empty-state', 'data-testid': testId },
    h('h2', { class: 'empty-title' }, title),
    text ? h('p', {}, text) : null,
    actions.length ? h('div', { class: 'row empty-actions' }, actions) : null);
}

/**
 * Grey shapes standing in for content while it loads — `cards` (post cards), `tiles` (a
 * profile's grid), `rows` (people or conversations), `post` (a post's page), `bubbles` (chat
 * messages) — hidden from screen readers (a `viewStatus` says "Loading…" once). Each has the
 * class `skeleton`, which /app/screen-cache.js reads as "not loaded yet".
 * @returns {HTMLElement[]}
 */
export function skeleton(shape, count = 3) {
  const bar = (width, kind = 'line') => h('span', { class: `skeleton-${kind}`, style: { width } });
  const hidden = (tag, className, ...children) => h(tag, { class: `skeleton ${className}`, 'aria-hidden': 'true', 'data-testid': 'skeleton' }, ...children);
  const widths = ['72%', '55%', '64%', '48%', '80%'];
  const many = (make) => Array.from({ length: count }, (_, index) => make(index));
  switch (shape) {
    case 'cards':
      return many((index) => hidden('div', 'card skeleton-card',
        h('span', { class: 'skeleton-media' }),
        h('span', { class: 'skeleton-body' }, bar(widths[index % widths.length], 'title'), bar('90%'), bar('60%'),
          h('span', { class: 'skeleton-author' }, bar('28px', 'circle'), bar('40%')))));
    case 'tiles':
      return [hidden('div', 'post-grid skeleton-tiles', many(() => h('span', { class: 'skeleton-tile' })))];
    case 'rows':
      return [hidden('div', 'skeleton-rows', many((index) => h('span', { class: 'skeleton-row' },
        bar('44px', 'circle'), h('span', { class: 'skeleton-row-text' }, bar(widths[index % widths.length], 'title'), bar('70%')))))];
    case 'bubbles':
      return [hidden('div', 'skeleton-bubbles', many((index) => bar(widths[index % widths.length], index % 2 ? 'bubble mine' : 'bubble')))];
    case 'post':
      return [hidden('div', 'skeleton-post',
        h('span', { class: 'skeleton-author' }, bar('40px', 'circle'), bar('30%')),
        bar('65%', 'heading'), h('span', { class: 'skeleton-photo' }), bar('95%'), bar('88%'), bar('50%'))];
    default:
      return [];
  }
}

/**
 * Asks a yes/no question in a modal dialog.
 * @returns {Promise<boolean>} true when confirmed
 */
export function confirmDialog(text, { confirm = 'OK', cancel = 'Cancel', danger = false } = {}) {
  return new Promise((resolve) => {
    const message = h('p', { id: 'confirm-text' }, text);
    const dialog = h('dialog', { class: 'dialog', 'aria-labelledby': 'confirm-text' },
      h('form', { method: 'dialog' },
        message,
        h('div', { class: 'row end' },
          h('button', { value: 'cancel', class: 'button secondary', 'data-testid': 'confirm-cancel' }, cancel),
          h('button', { value: 'ok', class: `button${danger ? ' danger' : ''}`, 'data-testid': 'confirm-ok' }, confirm))));
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'ok');
      dialog.remove();
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

/** A paragraph for a view's errors: hidden until `show(error)`, announced when shown. */
export function errorNote() {
  const element = h('p', { class: 'error', role: 'alert', 'data-testid': 'error', hidden: true });
  return {
    element,
    show(error) {
      element.textContent = errorWords(error);
      element.hidden = false;
    },
    clear() {
      element.textContent = '';
      element.hidden = true;
    },
  };
}

/**
 * Runs `work` with `button` disabled (and busy) meanwhile; a failure goes to `onError`.
 * @returns {Promise<boolean>} true when it succeeded
 */
export async function busy(button, work, onError) {
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  try {
    await work();
    return true;
  } catch (error) {
    (onError ?? ((failure) => toast(errorWords(failure), 'error')))(error);
    return false;
  } finally {
    button.disabled = false;
    button.removeAttribute('aria-busy');
  }
}
