// Long lists a page at a time, by cursor: the newest page is live, and each "Load older" adds
// the page that ends just before the oldest entry shown (`endBefore` its key, or its value and
// key, with `limitToLast`), also live. Every page asks for one entry more than it shows: its
// arrival says whether older ones exist. Entries keep their place once shown; newer ones can
// be held back (behind a "N new posts" banner) so the list never jumps under the reader.
import { h } from '/app/ui.js';

export class PagedList {
  /**
   * @param {object} options
   * @param {(cursor: Array|null) => import('/lib/hearth.js').Query} options.query the page
   *   ending before `cursor` (null: the newest page), already limited to `pageSize + 1`
   * @param {number} options.pageSize
   * @param {(a: [string, *], b: [string, *]) => number} options.compare display order, newest first
   * @param {(entry: [string, *]) => Array} options.cursorOf the `endBefore` arguments for an entry
   * @param {(entry: [string, *]) => boolean} [options.keep] entries to show (others are skipped)
   * @param {boolean} [options.holdNewer] hold entries that would appear above the newest page's
   *   shown ones until `showWaiting()`
   * @param {(entry: [string, *]) => boolean} [options.showAtOnce] entries never held (the
   *   reader's own, just written)
   * @param {(state: {entries: Array<[string, *]>, hasMore: boolean, waiting: number, loaded: boolean, restored: boolean}) => void} options.onChange
   *   told after every change (the first time possibly inside the constructor, from the cache);
   *   `restored`: every page loaded again at the start has come (or the list ended before)
   * @param {(error: Error) => void} [options.onError]
   * @param {{get: () => number, set: (count: number) => void}} [options.remembered] where the
   *   number of pages loaded is kept (see rememberedPages): as many are loaded again at the start
   */
  constructor({
    query, pageSize, compare, cursorOf, keep = () => true, holdNewer = false, showAtOnce = () => false, onChange, onError, remembered = null,
  }) {
    Object.assign(this, { makeQuery: query, pageSize, compare, cursorOf, keep, holdNewer, showAtOnce, onChange, onError, remembered });
    /** Pages to load again before the reader asks (Back to a list that had loaded more). */
    this.restoring = Math.max(1, Math.min(MAX_RESTORED_PAGES, remembered?.get() ?? 1));
    /** id → value of what is shown. */
    this.shown = new Map();
    /** id → value of newer entries held back. */
    this.waiting = new Map();
    this.pages = [];
    this.stopped = false;
    this.openPage(null);
  }

  /** Whether a value has arrived for every page (older ones may still be loading). */
  get loaded() { return this.pages.every((page) => page.loaded); }

  /** Whether the oldest page said there is more. */
  get hasMore() { return this.pages.length > 0 && this.pages[this.pages.length - 1].hasMore; }

  /** What is shown, in display order. */
  entries() { return [...this.shown].sort(this.compare); }

  /** Adds the page just older than the oldest entry shown. */
  loadOlder() {
    const oldest = this.entries().pop();
    if (!oldest || !this.hasMore) return;
    this.openPage(this.cursorOf(oldest));
    this.remembered?.set(this.pages.length);
  }

  /** Shows the held-back entries (and only the newest page: the reader starts over at the top). */
  showWaiting() {
    const [newest] = this.pages;
    for (const page of this.pages.slice(1)) page.query.off('value', page.listener);
    this.pages = [newest];
    this.restoring = 1;
    this.remembered?.set(1);
    this.shown.clear();
    this.waiting.clear();
    newest.ids.clear();
    newest.loaded = false;
    if (newest.last) this.apply(newest, newest.last);
  }

  stop() {
    this.stopped = true;
    for (const page of this.pages) page.query.off('value', page.listener);
  }

  openPage(cursor) {
    const page = { query: this.makeQuery(cursor), ids: new Set(), hasMore: false, loaded: false, last: null, newest: cursor === null };
    page.listener = (snapshot) => {
      page.last = snapshot;
      this.apply(page, snapshot);
    };
    this.pages.push(page);
    page.query.on('value', page.listener, (error) => this.onError?.(error));
  }

  apply(page, snapshot) {
    if (this.stopped) return;
    const all = [];
    snapshot.forEach((child) => {
      const entry = [child.key, child.val()];
      if (this.keep(entry)) all.push(entry);
    });
    all.sort(this.compare);
    page.hasMore = all.length > this.pageSize;
    const result = all.slice(0, this.pageSize);
    const byId = new Map(all);
    const oldest = result[result.length - 1];
    // Shown entries of this page: updated, or removed when gone from inside its window (only
    // scrolled out of it otherwise: a newer entry pushed it below, where it stays shown).
    for (const id of [...page.ids]) {
      if (byId.has(id)) {
        this.shown.set(id, byId.get(id));
      } else if (!page.hasMore || !oldest || this.compare([id, this.shown.get(id)], oldest) < 0) {
        page.ids.delete(id);
        this.shown.delete(id);
      }
    }
    for (const id of [...this.waiting.keys()]) if (page.newest && !byId.has(id)) this.waiting.delete(id);
    const bottom = page.newest ? [...page.ids].map((id) => [id, this.shown.get(id)]).sort(this.compare).pop() : null;
    for (const entry of result) {
      const [id, value] = entry;
      if (this.shown.has(id)) {
        this.shown.set(id, value);
      } else if (page.newest && this.holdNewer && page.loaded && bottom && this.compare(entry, bottom) < 0 && !this.showAtOnce(entry)) {
        this.waiting.set(id, value);
      } else {
        this.shown.set(id, value);
        page.ids.add(id);
      }
    }
    const first = !page.loaded;
    page.loaded = true;
    const restored = this.loaded && (this.pages.length >= this.restoring || !this.hasMore);
    this.onChange({ entries: this.entries(), hasMore: this.hasMore, waiting: this.waiting.size, loaded: this.loaded, restored });
    // Back to a list that had loaded more: the next page, once this one (the oldest) came.
    if (first && page === this.pages[this.pages.length - 1] && this.pages.length < this.restoring && page.hasMore) this.loadOlder();
  }
}

/** At most this many pages are loaded again on Back (a list read far down starts closer). */
const MAX_RESTORED_PAGES = 20;

/**
 * Where a list keeps how many pages it loaded: the screen's history entry, beside its scroll
 * position (main.js), so Back to the list loads as many again and the place it was left can
 * be scrolled to. `key` tells a screen's lists apart.
 */
export function rememberedPages(key) {
  return {
    get: () => history.state?.pages?.[key] ?? 1,
    set: (count) => history.replaceState({ ...(history.state ?? {}), pages: { ...(history.state?.pages ?? {}), [key]: count } }, ''),
  };
}

/**
 * Brings `container`'s children in line with `entries` ([id, value] in order), keeping the
 * element of each id: `make(id, value)` makes a new one, `update(element, value)` refreshes a
 * kept one. Elements are moved only when out of place, so focus and scroll stay.
 */
export function syncChildren(container, elements, entries, make, update) {
  const ids = new Set(entries.map(([id]) => id));
  for (const [id, element] of [...elements]) {
    if (!ids.has(id)) {
      element.remove();
      elements.delete(id);
    }
  }
  let previous = null;
  for (const [id, value] of entries) {
    let element = elements.get(id);
    if (element) update(element, value);
    else {
      element = make(id, value);
      elements.set(id, element);
    }
    const expected = previous ? previous.nextElementSibling : container.firstElementChild;
    if (expected !== element) {
      if (previous) previous.after(element);
      else container.prepend(element);
    }
    previous = element;
  }
}

/** A "Load older" button (`data-testid=load-older`) that calls `load()`. */
export function loadOlderButton(label, load, testId = 'load-more') {
  return h('button', { type: 'button', class: 'button', 'data-testid': testId, hidden: true, 'on:click': load }, label);
}
