// A button that opens a menu of actions (the WAI-ARIA menu button pattern): the button says
// aria-haspopup and aria-expanded; the menu opens below it (above when there is no room), placed
// over the page so a table's scrolling wrapper does not clip it; the arrow keys, Home and End
// move through the items, Escape closes it and gives the focus back to the button, and a click
// outside, Tab, or scrolling the page closes it.

import { h } from './dom.js';

let menus = 0;

/**
 * @param {object} options
 * @param {string} options.label the button's accessible name, e.g. "Actions for ann@example.com"
 * @param {string} [options.text] the button's visible words
 * @param {string} [options.testid] the button's data-testid
 * @param {{ label: string, testid?: string, danger?: boolean, onSelect: (button: HTMLButtonElement) => void }[]} options.items
 *   `onSelect` is given the menu's button (to show it busy), after the menu closed
 * @returns {HTMLElement}
 */
export function actionMenu({ label, text = 'Actions', testid = 'row-menu', items }) {
  const id = `action-menu-${++menus}`;
  const entries = items.map((item) => h('button', { type: 'button', role: 'menuitem', tabindex: -1,
    class: `menu-item${item.danger ? ' danger' : ''}`, 'data-testid': item.testid ?? null,
    'on:click': () => {
      close(true);
      item.onSelect(button);
    } }, item.label));
  const menu = h('div', { id, role: 'menu', class: 'menu', 'aria-label': label, hidden: true, 'data-testid': `${testid}-items`,
    'on:keydown': (event) => keydown(event) }, entries);
  const button = h('button', { type: 'button', class: 'button menu-button', 'aria-haspopup': 'menu', 'aria-expanded': 'false',
    'aria-controls': id, 'aria-label': label, 'data-testid': testid,
    'on:click': () => (menu.hidden ? open(0) : close(true)),
    'on:keydown': (event) => {
      if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
        event.preventDefault();
        open(event.key === 'ArrowDown' ? 0 : entries.length - 1);
      }
    } }, text, h('span', { class: 'menu-caret', 'aria-hidden': 'true' }, ' ▾'));
  const element = h('div', { class: 'menu-wrap' }, button, menu);

  function open(index) {
    menu.hidden = false;
    button.setAttribute('aria-expanded', 'true');
    place();
    entries[index]?.focus();
    document.addEventListener('pointerdown', outside, true);
    window.addEventListener('scroll', onScroll, true);
    window.addEventListener('resize', onScroll);
  }

  function close(focusButton) {
    if (menu.hidden) return;
    menu.hidden = true;
    button.setAttribute('aria-expanded', 'false');
    document.removeEventListener('pointerdown', outside, true);
    window.removeEventListener('scroll', onScroll, true);
    window.removeEventListener('resize', onScroll);
    if (focusButton) button.focus();
  }

  /** Fixed under the button's right edge, kept inside the window. */
  function place() {
    const anchor = button.getBoundingClientRect();
    const width = menu.offsetWidth;
    const height = menu.offsetHeight;
    const left = Math.max(8, Math.min(anchor.right - width, window.innerWidth - width - 8));
    const below = anchor.bottom + 4;
    const top = below + height > window.innerHeight - 8 && anchor.top - height - 4 >= 8 ? anchor.top - height - 4 : below;
    menu.style.setProperty('left', `${left}px`);
    menu.style.setProperty('top', `${top}px`);
  }

  function outside(event) {
    if (!element.contains(event.target)) close(false);
  }

  function onScroll(event) {
    if (event?.target instanceof Node && menu.contains(event.target)) return;
    close(false);
  }

  function keydown(event) {
    const index = entries.indexOf(document.activeElement);
    const last = entries.length - 1;
    const moves = { ArrowDown: index >= last ? 0 : index + 1, ArrowUp: index <= 0 ? last : index - 1, Home: 0, End: last };
    if (event.key in moves) {
      event.preventDefault();
      entries[moves[event.key]].focus();
    } else if (event.key === 'Escape') {
      event.preventDefault();
      close(true);
    } else if (event.key === 'Tab') {
      // The focus goes back to the button first, so Tab moves on from there.
      close(true);
    }
  }

  return element;
}
