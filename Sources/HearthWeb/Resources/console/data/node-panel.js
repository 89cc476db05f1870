// The panel beside the tree for the selected node: edit its value (or paste JSON over it),
// add a child, import a JSON file into it, export it, delete it. An object of a location read
// on demand (too big to stream) comes without its value: the panel asks the server for its
// size, and reads the value itself only when it is small enough to edit.

import { confirmDialog, counted, formatBytes, h, progressBar, saveBlob, toast } from '../dom.js';
import { lazyInfo } from './lazy-location.js';
import { childCount, formatPath, hasAtMostNodes, isObject, normalize } from './values.js';
import { valueField } from './value-field.js';

// Past this many nodes, an object is not put in the editor (it would be slow and unreadable).
const EDITABLE_NODES = 2_000;
// How far the size of an object read on demand is counted (the server stops counting there).
const SIZE_CAP = 100_000;

export class NodePanel {
  /**
   * @param {object} options
   * @param {import('../api.js').AdminApi} options.api
   * @param {(keys: string[]) => void} options.onOpen make this node the tree's location
   * @param {(keys: string[]) => void} options.onReveal show this (new) node in the tree
   * @param {() => void} options.onClose the panel was dismissed (phones)
   * @param {() => void} [options.onWritten] the panel wrote to the server (the tree may not be live)
   */
  constructor({ api, onOpen, onReveal, onClose, onWritten = () => {} }) {
    Object.assign(this, { api, onOpen, onReveal, onWritten });
    this.shownValue = undefined;
    this.measures = 0;
    this.keys = null;
    this.count = 0;
    this.title = h('h2', { id: 'node-panel-title', class: 'panel-title' });
    this.summary = h('p', { class: 'muted', 'aria-live': 'polite' });
    this.note = h('p', { class: 'note', role: 'status' });
    this.editor = valueField('value');
    this.childKey = h('input', { id: 'child-key', type: 'text', 'data-testid': 'child-key', autocomplete: 'off',
      spellcheck: 'false', placeholder: 'empty: a new push ID' });
    this.childValue = valueField('child', 'Child value');
    this.progress = progressBar('Transfer progress');
    this.fileInput = h('input', { type: 'file', class: 'visually-hidden', accept: '.json,application/json',
      'data-testid': 'import-file', 'on:change': () => this.importFile() });
    this.openButton = h('button', { type: 'button', class: 'button', 'data-testid': 'node-open',
      'on:click': () => this.onOpen(this.keys) }, 'Open here');
    this.element = h('section', { class: 'node-panel', 'aria-labelledby': 'node-panel-title', 'data-testid': 'node-panel' },
      h('div', { class: 'panel-head' },
        this.title,
        h('button', { type: 'button', class: 'icon-button close-panel', 'aria-label': 'Close the node panel',
          'on:click': onClose }, '×')),
      this.summary,
      h('div', { class: 'button-row' },
        this.openButton,
        h('button', { type: 'button', class: 'button', 'data-testid': 'node-export', 'on:click': () => this.exportNode() }, 'Export JSON'),
        h('label', { class: 'button file-button' }, 'Import JSON file…', this.fileInput),
        h('button', { type: 'button', class: 'button danger', 'data-testid': 'node-delete', 'on:click': () => this.deleteNode() }, 'Delete')),
      this.progress.element,
      h('form', { class: 'panel-form', 'data-testid': 'value-form', 'on:submit': (event) => this.saveValue(event) },
        h('h3', {}, 'Value'),
        h('p', { class: 'muted hint' }, 'Pick JSON to paste a whole object over this node.'),
        this.editor.element,
        this.note,
        h('button', { class: 'button primary', 'data-testid': 'value-save' }, 'Save value')),
      h('form', { class: 'panel-form', 'on:submit': (event) => this.addChild(event) },
        h('h3', {}, 'Add a child'),
        h('div', { class: 'field' }, h('label', { for: 'child-key' }, 'Key'), this.childKey),
        this.childValue.element,
        h('button', { class: 'button', 'data-testid': 'child-add' }, 'Add child')));
  }

  get path() { return formatPath(this.keys); }

  /**
   * Shows `keys` with its current `value`; `location` is the tree's location (no "Open here"
   * for it). `total`: the node's child count when `value` holds only a window of its children.
   */
  show(keys, value, location, total = null) {
    const same = this.keys && formatPath(keys) === this.path;
    const lazy = lazyInfo(value);
    const fresh = !same || value !== this.shownValue;
    this.shownValue = value;
    this.keys = keys;
    this.count = lazy ? lazy.count : total ?? childCount(value);
    this.title.textContent = this.path;
    this.openButton.hidden = formatPath(location) === this.path || !isObject(value);
    const children = counted(this.count, 'child', 'children');
    if (lazy) {
      if (fresh) this.measure(keys, children, same);
      return;
    }
    this.measures += 1;
    const summary = value === null ? 'No data here.'
      : total !== null ? `An object with ${children}; the first ${childCount(value).toLocaleString()} are loaded.`
      : isObject(value) ? `An object with ${children}.`
      : `A ${typeof value}.`;
    // A live region: only a real change is worth announcing.
    if (this.summary.textContent !== summary) this.summary.textContent = summary;
    if (!same) this.note.textContent = '';
    // Live changes refill the editor unless the operator has started editing.
    if (!same || !this.editor.dirty) {
      this.fillEditor(value, total === null);
    } else {
      this.note.textContent = 'This value changed on the server since you started editing.';
    }
  }

  /**
   * Asks the server how big the object at `keys` is (its value was not read), says it, and
   * reads the value into the editor only when it is small enough to edit.
   */
  async measure(keys, children, same) {
    const run = ++this.measures;
    const path = formatPath(keys);
    this.setSummary(`An object with ${children}.`);
    if (!same) this.note.textContent = '';
    if (!same || !this.editor.dirty) this.editor.set(null);
    let size;
    try {
      size = await this.api.dataSummary(keys.join('/'), SIZE_CAP);
    } catch (error) {
      if (run === this.measures) this.note.textContent = `Its size could not be read: ${error.message}`;
      return;
    }
    if (run !== this.measures) return;
    const nodes = size.more ? `more than ${SIZE_CAP.toLocaleString()} nodes` : counted(size.nodes, 'node', 'nodes');
    this.setSummary(`An object with ${counted(size.children, 'child', 'children')} and ${nodes}; not live.`);
    this.count = size.children;
    if (size.more || size.nodes > EDITABLE_NODES) {
      if (!this.editor.dirty) this.fillEditor(null, false);
      return;
    }
    try {
      const value = normalize(await this.api.request('GET', this.api.dbUrl(keys.join('/'))));
      if (run !== this.measures || path !== this.path) return;
      if (!same || !this.editor.dirty) this.fillEditor(value, true);
      else this.note.textContent = 'This value changed on the server since you started editing.';
    } catch (error) {
      if (run === this.measures) this.note.textContent = `Its value could not be read: ${error.message}`;
    }
  }

  setSummary(words) {
    // A live region: only a real change is worth announcing.
    if (this.summary.textContent !== words) this.summary.textContent = words;
  }

  fillEditor(value, whole) {
    if (!whole || (isObject(value) && !hasAtMostNodes(value, EDITABLE_NODES))) {
      this.editor.set(null);
      this.note.textContent = 'Too large to edit here: export it, or paste or import JSON to replace it.';
      return;
    }
    this.editor.set(value);
  }

  async write(method, keys, value) {
    return this.api.request(method, this.api.dbUrl(formatPath(keys)), { body: JSON.stringify(value) });
  }

  async saveValue(event) {
    event.preventDefault();
    try {
      const value = this.editor.value();
      if (this.count > 1 && !(await confirmDialog(
        `Replace ${this.path} and its ${this.count.toLocaleString()} children with this value?`, { confirm: 'Replace', danger: true }))) return;
      await this.write('PUT', this.keys, value);
      this.editor.dirty = false;
      this.note.textContent = '';
      this.onWritten();
      toast(`Saved ${this.path}.`, 'success');
    } catch (error) {
      toast(error.message, 'error');
    }
  }

  async addChild(event) {
    event.preventDefault();
    const key = this.childKey.value.trim();
    try {
      if (/[.#$\[\]]/.test(key)) throw new Error('A key cannot contain . # $ [ or ].');
      const value = this.childValue.value();
      let childKeys = [...this.keys, ...key.split('/').filter(Boolean)];
      if (key) {
        await this.write('PUT', childKeys, value);
      } else {
        const { name } = await this.write('POST', this.keys, value);
        childKeys = [...this.keys, name];
      }
      this.childKey.value = '';
      this.onReveal(childKeys);
      toast(`Added ${formatPath(childKeys)}.`, 'success');
    } catch (error) {
      toast(error.message, 'error');
    }
  }

  async deleteNode() {
    const what = this.keys.length ? `${this.path} and everything under it` : 'the whole database';
    if (!(await confirmDialog(`Delete ${what}? This cannot be undone.`, { confirm: 'Delete', danger: true }))) return;
    try {
      await this.api.request('DELETE', this.api.dbUrl(this.path));
      toast(`Deleted ${this.path}.`, 'success');
      this.onWritten();
    } catch (error) {
      toast(error.message, 'error');
    }
  }

  async importFile() {
    const file = this.fileInput.files[0];
    this.fileInput.value = '';
    if (!file) return;
    const question = `Replace ${this.path} with the contents of ${file.name} (${formatBytes(file.size)})?`;
    if (!(await confirmDialog(question, { confirm: 'Import' }))) return;
    try {
      await this.api.upload('PUT', this.api.dbUrl(this.path), file, {
        contentType: 'application/json',
        onProgress: (sent, total) => this.progress.update(total ? sent / total : null,
          `Uploading ${file.name}: ${formatBytes(sent)}${total ? ` of ${formatBytes(total)}` : ''}`),
      });
      this.progress.update(1, `Imported ${file.name} into ${this.path}.`);
      toast(`Imported ${file.name}.`, 'success');
      this.onWritten();
    } catch (error) {
      this.progress.hide();
      toast(`Import failed: ${error.message}`, 'error');
    }
  }

  async exportNode() {
    const name = `${this.keys[this.keys.length - 1] ?? this.api.database ?? 'database'}.json`;
    try {
      const blob = await this.api.download(this.api.dbUrl(this.path), {
        type: 'application/json',
        onProgress: (received, total) => this.progress.update(total ? received / total : null,
          `Downloading ${name}: ${formatBytes(received)}${total ? ` of ${formatBytes(total)}` : ''}`),
      });
      this.progress.update(1, `Exported ${this.path} (${formatBytes(blob.size)}).`);
      saveBlob(blob, name);
    } catch (error) {
      this.progress.hide();
      toast(`Export failed: ${error.message}`, 'error');
    }
  }
}
