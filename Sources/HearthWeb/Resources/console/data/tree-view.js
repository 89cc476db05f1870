// The data tree: an ARIA tree of rows for one location, drawn lazily (only expanded nodes
// have child rows, and at most `shown` of them, PAGE_SIZE more per "Show more"), redrawn in
// place from the changed path down, with a highlight on what a write changed. A location too
// big to stream is drawn the same way from a sparse value read on demand (data/lazy-location.js):
// its objects say how many children they have, and "Show more" asks for the next page.

import { counted, h } from '../dom.js';
import { lazyInfo } from './lazy-location.js';
import { childCount, compareKeys, displayLeaf, formatPath, isObject, valueAt } from './values.js';

export const PAGE_SIZE = 100;

let lineIds = 0;

export class TreeView {
  /**
   * @param {object} options
   * @param {(keys: string[], value: any) => void} options.onSelect the selected node changed
   * @param {() => void} options.onWiden the location is a window of a huge one and more of it is wanted
   * @param {(keys: string[]) => void} [options.onLoad] an object read on demand was expanded, or
   *   more of it is wanted: read its next page, then call `redraw(keys)`
   */
  constructor({ onSelect, onWiden, onLoad = () => {} }) {
    this.onSelect = onSelect;
    this.onWiden = onWiden;
    this.onLoad = onLoad;
    this.element = h('ul', { class: 'tree', role: 'tree', 'aria-label': 'Data', 'data-testid': 'data-tree',
      'on:keydown': (event) => this.keydown(event), 'on:click': (event) => this.click(event) });
    this.expanded = new Set();
    this.shown = new Map();
    this.rows = new Map();
    this.selectedKeys = null;
  }

  /**
   * Draws the location `rootKeys` afresh. `total`: the location's child count when `value`
   * holds only a window of its children, else null.
   */
  show(rootKeys, value, total = null) {
    this.rootKeys = rootKeys;
    this.value = value;
    this.total = total;
    this.rows.clear();
    this.expanded.add(formatPath(rootKeys));
    this.root = this.createRow(rootKeys, 1);
    this.root.li.tabIndex = 0;
    this.element.replaceChildren(this.root.li);
    this.reconcile(this.root, value, false);
    this.select(this.selectedRow() ?? this.root, false);
  }

  /** Redraws after a write at `changedKeys` (absolute); `value` is the location's new value. */
  update(value, changedKeys, total = this.total) {
    this.value = value;
    this.total = total;
    for (let keys = changedKeys; keys.length >= this.rootKeys.length; keys = keys.slice(0, -1)) {
      let row = this.rows.get(formatPath(keys));
      if (!row) continue;
      // A node that went away is removed by its parent.
      if (row !== this.root && this.valueOf(row.keys) === null) row = this.rows.get(formatPath(keys.slice(0, -1)));
      this.reconcile(row, this.valueOf(row.keys), true);
      break;
    }
    // The selection may be a node the write just deleted: the panel says so.
    if (this.selectedKeys) this.onSelect(this.selectedKeys, this.valueOf(this.selectedKeys));
  }

  /** Draws the node at `keys` again, once more of its children were read on demand. */
  redraw(keys) {
    const row = this.rows.get(formatPath(keys));
    if (row) this.reconcile(row, this.valueOf(row.keys), false);
  }

  valueOf(keys) {
    return valueAt(this.value, keys.slice(this.rootKeys.length));
  }

  // MARK: Rows

  createRow(keys, level) {
    const lineId = `tree-line-${++lineIds}`;
    const label = level === 1 ? formatPath(keys) : keys[keys.length - 1];
    const valueElement = h('span', { class: 'value', 'data-testid': 'tree-value' });
    const line = h('div', { class: 'line', id: lineId },
      h('span', { class: 'twisty', 'aria-hidden': 'true' }),
      h('span', { class: 'key' }, label),
      valueElement);
    const li = h('li', { role: 'treeitem', 'data-testid': 'tree-node', 'data-path': formatPath(keys),
      'aria-level': level, 'aria-labelledby': lineId, 'aria-selected': 'false', tabindex: -1 }, line);
    const row = { keys, path: formatPath(keys), level, li, line, valueElement, kind: null, text: null, group: null,
      children: new Map(), more: null };
    li.row = row;
    this.rows.set(row.path, row);
    return row;
  }

  reconcile(row, value, flash) {
    if (!isObject(value)) {
      this.removeGroup(row);
      const text = displayLeaf(value);
      if (row.kind !== 'leaf' || row.text !== text) {
        const changed = row.kind !== null;
        row.kind = 'leaf';
        row.text = text;
        row.valueElement.textContent = text;
        row.valueElement.className = `value value-${value === null ? 'null' : typeof value}`;
        row.li.removeAttribute('aria-expanded');
        if (flash && changed) highlight(row.line, 'flash-changed');
      }
      return;
    }
    // A windowed location, or an object read on demand, holds part of its children: it says how many it has in all.
    const lazy = lazyInfo(value);
    const count = lazy ? lazy.count : row === this.root && this.total !== null ? this.total : childCount(value);
    const wasLeaf = row.kind === 'leaf';
    row.kind = 'object';
    row.text = null;
    row.valueElement.className = 'value value-object';
    row.valueElement.textContent = counted(count, 'child', 'children');
    if (flash && wasLeaf) highlight(row.line, 'flash-changed');
    const open = this.expanded.has(row.path);
    row.li.setAttribute('aria-expanded', String(open));
    if (!open) {
      this.removeGroup(row);
      return;
    }
    if (!row.group) {
      row.group = h('ul', { role: 'group' });
      row.li.append(row.group);
    }
    this.reconcileChildren(row, value, flash);
  }

  reconcileChildren(row, value, flash) {
    const keys = Object.keys(value).sort(compareKeys);
    // A windowed location, or an object read on demand, shows all it has; the rest comes from
    // the server on "Show more".
    const lazy = lazyInfo(value);
    if (lazy && !lazy.loaded) this.onLoad(row.keys);
    const windowed = lazy !== null || (row === this.root && this.total !== null);
    const visible = windowed ? keys : keys.slice(0, this.shown.get(row.path) ?? PAGE_SIZE);
    const wanted = new Set(visible);
    for (const [key, child] of row.children) {
      if (wanted.has(key)) continue;
      row.children.delete(key);
      this.removeRow(child, flash && !(key in value));
    }
    let previous = null;
    for (const key of visible) {
      let child = row.children.get(key);
      if (child) {
        this.reconcile(child, value[key], flash);
      } else {
        child = this.createRow([...row.keys, key], row.level + 1);
        row.children.set(key, child);
        if (previous) previous.li.after(child.li);
        else row.group.prepend(child.li);
        this.reconcile(child, value[key], false);
        if (flash) highlight(child.line, 'flash-added');
      }
      previous = child;
    }
    const hidden = (lazy ? lazy.count : windowed ? this.total : keys.length) - visible.length;
    if (lazy && !lazy.loaded) this.showLoading(row);
    else this.updateMore(row, hidden, visible.length);
  }

  updateMore(row, hidden, visibleCount) {
    if (hidden <= 0) {
      row.more?.remove();
      row.more = null;
      return;
    }
    if (!row.more?.querySelector('button')) {
      row.more?.remove();
      row.more = h('li', { role: 'none', class: 'more' },
        h('button', { type: 'button', class: 'link-button', 'data-testid': 'tree-show-more',
          'on:click': () => this.showMore(row) }));
    }
    row.more.firstChild.textContent =
      `Show ${Math.min(hidden, PAGE_SIZE).toLocaleString()} more (${visibleCount.toLocaleString()} of ${(visibleCount + hidden).toLocaleString()} shown)`;
    // Moving the button, even to where it is, would take the keyboard's focus off it.
    if (row.group.lastChild !== row.more) row.group.append(row.more);
  }

  showLoading(row) {
    row.more?.remove();
    row.more = h('li', { role: 'none', class: 'more muted' }, 'Loading…');
    row.group.append(row.more);
  }

  showMore(row) {
    if (lazyInfo(this.valueOf(row.keys))) {
      this.onLoad(row.keys);
      return;
    }
    if (row === this.root && this.total !== null) {
      this.onWiden();
      return;
    }
    this.shown.set(row.path, (this.shown.get(row.path) ?? PAGE_SIZE) + PAGE_SIZE);
    this.reconcile(row, this.valueOf(row.keys), false);
  }

  removeGroup(row) {
    if (!row.group) return;
    for (const child of row.children.values()) this.forget(child);
    row.children.clear();
    row.group.remove();
    row.group = null;
    row.more = null;
  }

  /** Takes a row out of the tree, fading it out first when a write deleted it. */
  removeRow(row, flash) {
    this.forget(row);
    if (row.li.contains(document.activeElement)) this.focusRow(this.rows.get(formatPath(row.keys.slice(0, -1))));
    if (!flash) {
      row.li.remove();
      return;
    }
    row.li.classList.add('removing');
    row.li.setAttribute('aria-hidden', 'true');
    row.li.removeAttribute('role');
    row.li.addEventListener('animationend', () => row.li.remove(), { once: true });
    highlight(row.line, 'flash-removed');
  }

  forget(row) {
    this.rows.delete(row.path);
    for (const child of row.children.values()) this.forget(child);
  }

  // MARK: Expanding, selection, keyboard

  toggle(row, open = !this.expanded.has(row.path)) {
    if (row.kind !== 'object' || row === this.root) return;
    if (open) this.expanded.add(row.path);
    else this.expanded.delete(row.path);
    this.reconcile(row, this.valueOf(row.keys), false);
  }

  /** Expands the ancestors of `keys`, so the node shows once it exists. */
  reveal(keys) {
    for (let length = this.rootKeys.length + 1; length < keys.length; length += 1) {
      this.expanded.add(formatPath(keys.slice(0, length)));
    }
    this.reconcile(this.root, this.value, false);
  }

  selectedRow() {
    return this.selectedKeys ? this.rows.get(formatPath(this.selectedKeys)) : null;
  }

  select(row, focus = true) {
    this.selectedRow()?.li.setAttribute('aria-selected', 'false');
    this.selectedKeys = row.keys;
    row.li.setAttribute('aria-selected', 'true');
    if (focus) this.focusRow(row);
    this.onSelect(row.keys, this.valueOf(row.keys));
  }

  focusRow(row) {
    if (!row) return;
    for (const item of this.element.querySelectorAll('[role=treeitem][tabindex="0"]')) item.tabIndex = -1;
    row.li.tabIndex = 0;
    row.li.focus();
  }

  click(event) {
    if (event.target.closest('.more')) return;
    const li = event.target.closest('[role=treeitem]');
    if (!li?.row) return;
    if (event.target.closest('.twisty') || event.detail === 2) this.toggle(li.row);
    this.select(li.row);
  }

  keydown(event) {
    const li = event.target.closest('[role=treeitem]');
    if (!li?.row || event.target !== li) return;
    const row = li.row;
    const items = [...this.element.querySelectorAll('[role=treeitem]')];
    const index = items.indexOf(li);
    const move = (item) => item && this.select(item.row);
    switch (event.key) {
      case 'ArrowDown': move(items[index + 1]); break;
      case 'ArrowUp': move(items[index - 1]); break;
      case 'Home': move(items[0]); break;
      case 'End': move(items[items.length - 1]); break;
      case 'ArrowRight':
        if (row.kind === 'object' && !this.expanded.has(row.path)) this.toggle(row, true);
        else if (row.children.size) move(row.group.querySelector('[role=treeitem]'));
        break;
      case 'ArrowLeft':
        if (row.kind === 'object' && this.expanded.has(row.path) && row !== this.root) this.toggle(row, false);
        else move(this.rows.get(formatPath(row.keys.slice(0, -1)))?.li);
        break;
      case 'Enter':
      case ' ':
        this.toggle(row);
        break;
      default:
        return;
    }
    event.preventDefault();
  }
}

/** Restarts a short CSS highlight animation on `element`. */
function highlight(element, className) {
  element.classList.remove('flash-added', 'flash-changed', 'flash-removed');
  void element.offsetWidth; // a reflow, so the same animation can start again
  element.classList.add(className);
}
