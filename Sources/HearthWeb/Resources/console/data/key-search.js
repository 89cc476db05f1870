// Finding keys among the children of the Data section's location: by prefix (which also finds
// the exact key), asked of the server's admin key listing (`/.hearth/data/children`) between
// `startAt=<prefix>` and `endAt=<prefix>\uf8ff` in key order, RESULTS_PAGE keys at a time and
// without their values (leaves come with theirs, objects with their child count), so it works
// on a location with a million children, each as big as it may be, without loading them.
// "More results" asks for the next page, after the last key listed. Results are buttons: Tab
// or the arrow keys move through them, Enter opens one (see `onOpen`).
//
// "Anywhere below" and "The whole database" search every location whose key contains the text
// (ignoring case), at any depth, on the server (`/.hearth/data/search`, admins only, bounded in
// results and nodes looked at; it says when it stopped early). Those results are links to the
// locations found.

import { encodePath } from '../api.js';
import { lazyInfo, lazyObject } from './lazy-location.js';
import { displayLeaf, isObject } from './values.js';
import { counted, h } from '../dom.js';

export const RESULTS_PAGE = 50;
export const TREE_RESULTS = 200;
const SCOPES = [['children', 'Children here (key starts with)'], ['below', 'Anywhere below here (key contains)'],
  ['root', 'The whole database (key contains)']];
const FORBIDDEN = /[.$#[\]/]/;

export class KeySearch {
  /**
   * @param {object} options
   * @param {import('../api.js').AdminApi} options.api
   * @param {string[]} options.location the keys of the location searched
   * @param {(key: string, value: any) => void} options.onOpen a result was chosen
   */
  constructor({ api, location, onOpen }) {
    Object.assign(this, { api, location, onOpen });
    this.input = h('input', { id: 'key-search', type: 'search', autocomplete: 'off', spellcheck: 'false',
      placeholder: 'Key, or part of one', 'data-testid': 'key-search-input' });
    this.scope = h('select', { id: 'key-search-scope', 'data-testid': 'key-search-scope' },
      SCOPES.map(([value, label]) => h('option', { value }, label)));
    this.status = h('p', { class: 'muted key-search-status', role: 'status', 'data-testid': 'key-search-status' });
    this.error = h('p', { class: 'error', role: 'alert', 'data-testid': 'key-search-error', hidden: true });
    this.list = h('ul', { class: 'key-results', 'aria-label': 'Keys found', 'data-testid': 'key-results',
      'on:keydown': (event) => this.keydown(event) });
    this.more = h('button', { type: 'button', class: 'button', hidden: true, 'data-testid': 'key-search-more',
      'on:click': () => this.page() }, 'More results');
    this.clearButton = h('button', { type: 'button', class: 'button quiet', hidden: true, 'data-testid': 'key-search-clear',
      'on:click': () => this.clear() }, 'Clear');
    this.form = h('form', { class: 'inline-form key-search', role: 'search', 'aria-label': 'Find keys here',
      'on:submit': (event) => {
        event.preventDefault();
        this.search();
      } },
      h('label', { for: 'key-search' }, 'Find keys'), this.input,
      h('label', { for: 'key-search-scope', class: 'visually-hidden' }, 'Where'), this.scope,
      h('button', { class: 'button', 'data-testid': 'key-search-submit' }, 'Find'), this.clearButton);
    this.results = h('section', { class: 'key-search-results card', 'aria-label': 'Keys found', hidden: true,
      'data-testid': 'key-search-results' }, this.status, this.error, this.list, this.more);
    this.prefix = '';
    this.found = 0;
    this.lastKey = null;
    this.runs = 0;
  }

  clear() {
    this.runs += 1;
    this.input.value = '';
    this.results.hidden = true;
    this.clearButton.hidden = true;
    this.list.replaceChildren();
    this.input.focus();
  }

  /** Starts a search for the input's text. */
  async search() {
    const prefix = this.input.value;
    this.list.replaceChildren();
    this.more.hidden = true;
    this.error.hidden = true;
    this.results.hidden = false;
    this.clearButton.hidden = false;
    this.found = 0;
    this.lastKey = null;
    if (!prefix) {
      this.fail('Type a key, or the first characters of keys, to find.');
      return;
    }
    if (FORBIDDEN.test(prefix)) {
      this.fail('Keys cannot contain . $ # [ ] or /: nothing can match this.');
      return;
    }
    this.prefix = prefix;
    if (this.scope.value === 'children') await this.page();
    else await this.searchTree(prefix, this.scope.value === 'root' ? [] : this.location);
  }

  /** Every location under `under` whose key contains `text`, from the server's bounded walk. */
  async searchTree(text, under) {
    const run = ++this.runs;
    this.status.textContent = 'Searching…';
    let answer;
    try {
      answer = await this.api.searchKeys(under.join('/'), text, { limit: String(TREE_RESULTS) });
    } catch (error) {
      if (run === this.runs) this.fail(`The search failed: ${error.message}`);
      return;
    }
    if (run !== this.runs) return;
    const where = under.length ? `under /${under.join('/')}` : 'in the whole database';
    this.list.replaceChildren(...answer.matches.map((match) => this.pathItem(match)));
    const found = counted(answer.matches.length, 'location', 'locations');
    const early = answer.stoppedAt === 'results'
      ? ` The search stopped at the first ${TREE_RESULTS}: make the text longer to narrow it.`
      : answer.stoppedAt === 'nodes'
        ? ` The search stopped after looking at ${answer.visited.toLocaleString()} nodes: start from a smaller location to look further.`
        : '';
    this.results.dataset.complete = String(answer.complete);
    this.status.textContent = answer.matches.length
      ? `${found} ${where} with a key containing “${text}”.${early}`
      : `No key ${where} contains “${text}”.${early}`;
  }

  /** A found location: a link that opens it. */
  pathItem(match) {
    const keys = match.path.split('/').filter(Boolean);
    const summary = 'children' in match ? counted(match.children, 'child', 'children') : displayLeaf(match.value);
    return h('li', {},
      h('a', { class: 'key-result', href: `#/data/${encodePath(keys.join('/'))}`, 'data-testid': 'key-path-result',
        'data-path': match.path },
        h('span', { class: 'key' }, match.path),
        h('span', { class: `value ${'children' in match ? 'value-object' : ''}`, title: summary }, summary)));
  }

  /** Reads the next page of keys starting with the prefix. */
  async page() {
    const run = ++this.runs;
    const prefix = this.prefix;
    this.status.textContent = 'Searching…';
    this.more.disabled = true;
    // Keys in key order between the prefix and the prefix followed by U+F8FF; integer keys
    // sort first, so not every key listed starts with the prefix.
    const after = this.lastKey;
    const params = { endAt: `${prefix}\uf8ff`, limit: String(RESULTS_PAGE) };
    if (after === null) params.startAt = prefix;
    else params.startAfter = after;
    let answer;
    try {
      answer = await this.api.dataChildren(this.location.join('/'), params);
    } catch (error) {
      if (run === this.runs) this.fail(`The search failed: ${error.message}`);
      return;
    } finally {
      this.more.disabled = false;
    }
    if (run !== this.runs) return;
    const page = answer.keys;
    const found = page.filter((entry) => entry.key.startsWith(prefix));
    const first = this.list.children.length;
    for (const entry of found) {
      this.list.append(this.resultItem(entry.key, 'value' in entry ? entry.value : lazyObject(entry.children)));
    }
    this.found += found.length;
    if (page.length) this.lastKey = page[page.length - 1].key;
    const more = answer.more;
    this.more.hidden = !more;
    this.status.textContent = this.found
      ? `${counted(this.found, 'key', 'keys')} starting with “${prefix}”${more ? ' so far' : ''}.`
      : `No child of ${'/' + this.location.join('/')} has a key starting with “${prefix}”: the search looks among the children of the location shown.`;
    // Continuing the list keeps the keyboard where it was: on the first new result.
    if (first > 0) this.list.children[first]?.querySelector('button')?.focus();
  }

  fail(words) {
    this.error.textContent = words;
    this.error.hidden = false;
    this.status.textContent = '';
    this.more.hidden = true;
  }

  resultItem(key, value) {
    const summary = isObject(value) ? counted(lazyInfo(value)?.count ?? Object.keys(value).length, 'child', 'children')
      : displayLeaf(value);
    const exact = key === this.prefix;
    return h('li', {},
      h('button', { type: 'button', class: 'key-result', 'data-testid': 'key-result', 'data-key': key,
        'on:click': () => this.onOpen(key, value) },
        h('span', { class: 'key' }, key),
        h('span', { class: `value ${isObject(value) ? 'value-object' : ''}`, title: summary }, summary),
        exact ? h('span', { class: 'badge' }, 'exact') : null));
  }

  keydown(event) {
    if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return;
    const buttons = [...this.list.querySelectorAll('button, a')];
    const index = buttons.indexOf(document.activeElement);
    if (index < 0) return;
    buttons[Math.max(0, Math.min(buttons.length - 1, index + (event.key === 'ArrowDown' ? 1 : -1)))].focus();
    event.preventDefault();
  }
}
