// @mention suggestions for a text field: typing `@` and the start of a name lists the people
// the search index finds (as #/search does), and choosing one puts `@Full Name ` in the text.
// The field is an ARIA combobox: arrows move through the list, Enter or Tab choose, Escape
// closes it. `chosen()` answers the people picked ({uid: "Full Name"}) whose names are still in
// the text, to record with the post.
import { h } from '/app/ui.js';
import { mentionsIn } from '/app/rich-text.js';

const SUGGESTED = 5;
/** `@` at the start or after a space, then up to three words of a name, up to the caret. */
const TYPED = /(^|\s)@([\p{L}\p{N}_'-]+(?: [\p{L}\p{N}_'-]*){0,2})$/u;

/** The `@` query just before the caret, or null: `{ start, query }` (start: the `@`'s index). */
export function typedMention(text, caret) {
  const found = TYPED.exec(text.slice(0, caret));
  if (!found) return null;
  return { start: caret - found[2].length - 1, query: found[2] };
}

/**
 * Adds suggestions to `field` (an input or textarea with an id). Answers `{ element, chosen,
 * reset }`: the list to put after the field, the people picked still in the text, and a reset
 * for after sending. `known` are people already named in the text (editing a comment).
 */
export function mentionSuggestions(hearth, field, { me = null, known = {} } = {}) {
  const listId = `${field.id}-mentions`;
  const list = h('ul', { id: listId, class: 'mention-suggestions', role: 'listbox', 'aria-label': 'People to mention', hidden: true, 'data-testid': 'mention-suggestions' });
  const hint = h('span', { id: `${field.id}-mention-hint`, class: 'visually-hidden' }, 'Type @ and a name to mention someone.');
  field.setAttribute('role', 'combobox');
  field.setAttribute('aria-autocomplete', 'list');
  field.setAttribute('aria-controls', listId);
  field.setAttribute('aria-expanded', 'false');
  field.setAttribute('aria-describedby', [field.getAttribute('aria-describedby'), hint.id].filter(Boolean).join(' '));
  let picked = { ...known };
  let people = [];
  let active = -1;
  let typed = null;
  let asked = 0;

  function close() {
    list.hidden = true;
    list.replaceChildren();
    people = [];
    active = -1;
    field.setAttribute('aria-expanded', 'false');
    field.removeAttribute('aria-activedescendant');
  }

  function draw() {
    list.replaceChildren(...people.map((person, index) => h('li', {
      id: `${listId}-${index}`, role: 'option', class: 'mention-option', 'aria-selected': String(index === active), 'data-testid': 'mention-option',
      // Chosen on pointerdown, before the field's blur closes the list.
      'on:pointerdown': (event) => {
        event.preventDefault();
        choose(index);
      },
    }, person.full_name)));
    list.hidden = people.length === 0;
    field.setAttribute('aria-expanded', String(!list.hidden));
    if (active >= 0) field.setAttribute('aria-activedescendant', `${listId}-${active}`);
    else field.removeAttribute('aria-activedescendant');
  }

  async function suggest() {
    typed = typedMention(field.value, field.selectionStart ?? field.value.length);
    if (!typed) return close();
    const prefix = typed.query.toLowerCase();
    const ask = ++asked;
    try {
      const reads = ['_search_index/full_name', '_search_index/reversed_full_name'].map((index) =>
        hearth.db.ref('people').orderByChild(index).startAt(prefix).endAt(`${prefix}\uf8ff`).limitToFirst(SUGGESTED).once('value'));
      const found = new Map();
      for (const snapshot of await Promise.all(reads)) {
        snapshot.forEach((child) => {
          const name = child.child('full_name').val();
          if (child.key !== me && typeof name === 'string' && name !== 'Anonymous') found.set(child.key, name);
        });
      }
      if (ask !== asked) return undefined;
      people = [...found].slice(0, SUGGESTED).map(([uid, full_name]) => ({ uid, full_name }));
      active = people.length ? 0 : -1;
      draw();
    } catch {
      // Suggestions are a help: typing goes on without them.
      close();
    }
    return undefined;
  }

  function choose(index) {
    const person = people[index];
    if (!person || !typed) return;
    const caret = field.selectionStart ?? field.value.length;
    const before = field.value.slice(0, typed.start);
    const after = field.value.slice(caret);
    const inserted = `@${person.full_name} `;
    field.value = `${before}${inserted}${after.replace(/^ /, '')}`;
    const position = before.length + inserted.length;
    field.setSelectionRange(position, position);
    picked = { ...picked, [person.uid]: person.full_name };
    close();
    // Others listening (a character counter) hear of the change; the list stays closed.
    quiet = true;
    field.dispatchEvent(new Event('input', { bubbles: true }));
    quiet = false;
    field.focus();
  }

  let quiet = false;
  field.addEventListener('input', () => {
    if (!quiet) suggest();
  });
  field.addEventListener('keydown', (event) => {
    if (list.hidden) return;
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      const step = event.key === 'ArrowDown' ? 1 : -1;
      active = (active + step + people.length) % people.length;
      draw();
    } else if (event.key === 'Enter' || event.key === 'Tab') {
      if (active < 0) return;
      event.preventDefault();
      choose(active);
    } else if (event.key === 'Escape') {
      event.preventDefault();
      close();
    }
  });
  field.addEventListener('blur', () => close());

  return {
    element: h('div', { class: 'mention-box' }, hint, list),
    chosen: () => mentionsIn(field.value, picked),
    reset: () => {
      picked = {};
      close();
    },
  };
}
