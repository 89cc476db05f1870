// The offline cache of one database as the sync core drives it: which IndexedDB database is in
// use (one per signed-in user), reading it when it opens, carrying out the core's `store`
// effects, saving a little after changes (not on every push), taking over the writes of tabs
// that closed, and telling when what was changed has been saved (`whenSaved`).

import { Persistence } from './persistence.js';

const SAVE_DELAY_MS = 500;
/// A tab that was closing as this one loaded may have held writes: look again this much later.
const ADOPTION_RECHECK_MS = 1500;

/// The IndexedDB side of one SyncEngine.
export class OfflineCache {
  /// @param {object} options
  /// @param {boolean} options.enabled whether anything is kept (off: every call does nothing)
  /// @param {(user: string) => string} options.nameFor the IndexedDB database of a user
  /// @param {{opened: (store: number, loaded: object) => void, adoptionBegan: () => void,
  ///   adoptionEnded: (records: object[]|null) => void, save: () => void}} options.delegate
  ///   the sync core's side: a store opened and read; a read of other tabs' writes began and
  ///   ended; the time to save came
  constructor({ enabled, nameFor, delegate }) {
    this._enabled = enabled;
    this._nameFor = nameFor;
    this._delegate = delegate;
    /// The store in use (a Persistence), and the ID the core knows it by.
    this.store = null;
    this.storeId = null;
    this._nextStoreId = 1;
    this._user = null;
    this._saveTimer = null;
    this._saveWaiters = [];
  }

  /// Opens `user`'s store and reports it read (unless another user signed in meanwhile).
  async open(user) {
    this._user = user;
    if (!this._enabled) return;
    const store = await Persistence.open(this._nameFor(user));
    if (!store) return;
    if (this._user !== user) {
      store.close();
      return;
    }
    let loaded;
    try {
      loaded = await store.load();
    } catch (error) {
      console.warn(`Hearth: the offline cache could not be read (${error?.message ?? error}).`);
      return;
    }
    if (this._user !== user) {
      store.close();
      return;
    }
    this.store = store;
    this.storeId = this._nextStoreId++;
    store.onOwnerGone = () => this.adoptOrphans();
    this._delegate.opened(this.storeId, loaded);
    setTimeout(() => this.adoptOrphans(), ADOPTION_RECHECK_MS);
  }

  /// Closes the store in use (another user signed in; theirs opens next).
  close() {
    this.cancelSave();
    this.store?.close();
    this.store = null;
    this.storeId = null;
  }

  /// Carries out one `store` effect of the core. One for a store no longer in use is dropped
  /// (it was closed; its records stay for when its user signs in again).
  apply({ store, op, record, key }) {
    if (store !== this.storeId || !this.store) return;
    this.store[op](record ?? key);
  }

  /// Saves in a moment (the core asked: `scheduleSave`).
  scheduleSave() {
    if (!this.store || this._saveTimer) return;
    this._saveTimer = setTimeout(() => {
      this._saveTimer = null;
      this._delegate.save();
    }, SAVE_DELAY_MS);
  }

  cancelSave() {
    clearTimeout(this._saveTimer);
    this._saveTimer = null;
    const waiters = this._saveWaiters;
    this._saveWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /// Resolves once everything changed so far is in IndexedDB: after the save that is scheduled
  /// (if any) and every change already handed to IndexedDB have been committed.
  async whenSaved() {
    if (this._saveTimer) await new Promise((resolve) => this._saveWaiters.push(resolve));
    await this.store?.whenIdle();
  }

  /// Takes over the stored writes of tabs that are gone.
  async adoptOrphans() {
    const store = this.store;
    if (!store) return;
    this._delegate.adoptionBegan();
    let records;
    try {
      records = await store.adoptOrphans();
    } catch {
      records = null;
    }
    this._delegate.adoptionEnded(records && store === this.store ? records : null);
  }
}
