// DOM helpers for the console: the app's shared ones (element building, toasts, the confirm
// dialog, busy buttons), plus progress bars, byte counts and file saving.

import { h } from '/app/ui.js';

export { busy, confirmDialog, counted, errorWords, h, skipLinkFocusesMain, toast } from '/app/ui.js';

/** A <progress> with a text label that says the same for screen readers and sighted users. */
export function progressBar(label) {
  const bar = h('progress', { max: 1, 'aria-label': label });
  const text = h('span', { class: 'progress-text', 'aria-live': 'polite' });
  const element = h('div', { class: 'progress', hidden: true }, bar, text);
  return {
    element,
    /** `fraction` in 0…1, or null when the total is unknown (indeterminate). */
    update(fraction, detail) {
      element.hidden = false;
      if (fraction === null) bar.removeAttribute('value');
      else bar.value = fraction;
      text.textContent = detail;
    },
    hide() { element.hidden = true; },
  };
}

/** "1.5 MB" for a byte count. */
export function formatBytes(bytes) {
  if (!Number.isFinite(bytes)) return '';
  const units = ['bytes', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
  return unit === 0 ? `${value} ${value === 1 ? 'byte' : 'bytes'}` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** Saves a Blob as a file through a temporary download link. */
export function saveBlob(blob, filename) {
  const url = URL.createObjectURL(blob);
  const link = h('a', { href: url, download: filename, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/**
 * A breadcrumb trail for `parts` (a path): links to `hashFor(parts.slice(0, n))`, the first
 * named `rootLabel`; the last is marked as the current location.
 */
export function breadcrumbs(parts, hashFor, rootLabel, navLabel) {
  const crumbs = [[], ...parts.map((_, index) => parts.slice(0, index + 1))].map((prefix) =>
    h('li', {}, h('a', { href: hashFor(prefix), 'aria-current': prefix.length === parts.length ? 'location' : null },
      prefix.length ? prefix[prefix.length - 1] : rootLabel)));
  return h('nav', { class: 'breadcrumbs', 'aria-label': navLabel }, h('ol', {}, crumbs));
}
