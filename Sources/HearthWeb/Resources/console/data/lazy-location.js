// A location too big to stream, read on demand: each object is loaded a page of keys at a
// time from `GET /.hearth/data/children` (leaf values, and for objects only their child
// counts), never whole. Nothing here is live; `refresh()` reads again what was loaded.
//
// The value is a sparse copy the tree draws like a streamed one: an object holds the children
// loaded so far, and its size under the LAZY symbol (which Object.keys does not list), so
// `{ [LAZY]: { count: 12, loaded: false, more: true } }` is an object of 12 children not read yet.

import { isObject, valueAt } from './values.js';

export const LAZY = Symbol('lazy');
export const LAZY_PAGE = 100;
// The server's largest page: a refresh reads again what was loaded in pages this big.
const MAX_PAGE = 1_000;

/** The size record of an object read on demand, or null for a leaf or a whole (streamed) value. */
export function lazyInfo(value) {
  return isObject(value) ? value[LAZY] ?? null : null;
}

/** A stub for an object of `count` children whose keys are not read yet. */
export function lazyObject(count) {
  return { [LAZY]: { count, loaded: false, more: count > 0, last: null } };
}

export class LazyLocation {
  /**
   * @param {import('../api.js').AdminApi} api
   * @param {string[]} keys the location
   */
  constructor(api, keys) {
    Object.assign(this, { api, keys });
    this.value = null;
  }

  /** Reads the location's first page of keys afresh. */
  async load() {
    const root = lazyObject(0);
    await this.loadPage(root, this.keys, LAZY_PAGE);
    this.value = root[LAZY].count ? root : null;
  }

  /**
   * Reads the location again: the first page, then again each expanded object (`expanded`:
   * absolute paths as the tree formats them) as far as it had been read.
   */
  async refresh(expanded, formatPath) {
    const before = this.value;
    const root = lazyObject(0);
    await this.fill(root, this.keys, Object.keys(before ?? {}).length);
    const paths = [...expanded].map((path) => path.split('/').filter(Boolean))
      .filter((keys) => keys.length > this.keys.length && formatPath(keys.slice(0, this.keys.length)) === formatPath(this.keys))
      .sort((a, b) => a.length - b.length);
    for (const keys of paths) {
      const relative = keys.slice(this.keys.length);
      const node = valueAt(root, relative);
      if (!lazyInfo(node)) continue;
      await this.fill(node, keys, Object.keys(valueAt(before, relative) ?? {}).length);
    }
    this.value = root[LAZY].count ? root : null;
  }

  /** Reads pages into `node` until it holds `wanted` keys (at least one page) or all it has. */
  async fill(node, keys, wanted) {
    do {
      await this.loadPage(node, keys, Math.min(MAX_PAGE, Math.max(LAZY_PAGE, wanted - Object.keys(node).length)));
    } while (node[LAZY].more && Object.keys(node).length < wanted);
  }

  /** Reads the next page of the object at `keys` (absolute) into `node`, its stub. */
  async loadPage(node, keys, limit = LAZY_PAGE) {
    const info = node[LAZY];
    const params = { limit: String(limit) };
    if (info.last !== null) params.startAfter = info.last;
    const page = await this.api.dataChildren(keys.join('/'), params);
    for (const entry of page.keys) {
      node[entry.key] = 'value' in entry ? entry.value : lazyObject(entry.children);
    }
    Object.assign(info, {
      count: page.children,
      loaded: true,
      more: page.more,
      last: page.keys.length ? page.keys[page.keys.length - 1].key : info.last,
    });
  }

  /** Reads the next page of the object at `keys` (absolute), which must be in the loaded value. */
  async loadMore(keys) {
    const node = valueAt(this.value, keys.slice(this.keys.length));
    if (lazyInfo(node)) await this.loadPage(node, keys);
  }
}
