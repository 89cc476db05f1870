// Small DOM helpers every view shares: element building, toasts, errors in words, times,
// avatars and a confirmation dialog.

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

/** Announces `message` briefly; `kind` is 'info', 'success' or 'error'. */
export function toast(message, kind = 'info') {
  const region = document.getElementById('toasts');
  if (!region) return;
  const item = h('div', {
    class: `toast toast-${kind}`,
    role: kind === 'error' ? 'alert' : 'status',
    'data-testid': kind === 'error' ? 'error' : 'toast',
  }, message);
  region.append(item);
  // A few at a time: older ones make way.
  while (region.children.length > 3) region.firstElementChild.remove();
  setTimeout(() => item.remove(), kind === 'error' ? 8000 : 4000);
}

/** Any error, in words for a person (HearthError messages already are). */
export function errorWords(error) {
  if (!error) return 'Something went wrong.';
  if (typeof error === 'string') return error;
  if (error.name === 'HearthError' && error.message) return error.message;
  return `Something went wrong: ${error.message || error}`;
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

/**
 * A round picture of `author` ({ uid, full_name, profile_picture }): their photo, or their
 * initials on a colour derived from their uid. Decorative: the name is always shown next to it.
 */
export function avatar(author, size = 40) {
  const name = author?.full_name || 'Anonymous';
  const style = { width: `${size}px`, height: `${size}px`, 'font-size': `${Math.round(size * 0.4)}px` };
  if (author?.profile_picture) {
    return h('img', { class: 'avatar', src: author.profile_picture, alt: '', width: size, height: size, style, loading: 'lazy' });
  }
  const initials = name.split(/\s+/).filter(Boolean).slice(0, 2).map((word) => word[0].toUpperCase()).join('') || '?';
  let hash = 0;
  for (const character of author?.uid ?? name) hash = (hash * 31 + character.charCodeAt(0)) % 360;
  return h('span', { class: 'avatar', 'aria-hidden': 'true', style: { ...style, '--avatar-hue': hash } }, initials);
}

/** What a signed-out visitor sees on a page that needs an account; signing in comes back here. */
export function signInPrompt(title, purpose) {
  return h('section', { class: 'page empty' },
    h('h1', {}, title),
    h('p', {}, `Sign in to ${purpose}.`),
    h('p', {}, h('a', { href: `#/signin?next=${encodeURIComponent(location.hash || '#/')}`, class: 'button primary' }, 'Sign in')));
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
