// What outlives the page, in IndexedDB: the pending writes (until the server acknowledges
// them) and the server's data at complete locations and of complete filtered queries. One
// IndexedDB database per server, database name and signed-in user, so people who share a
// browser never see each other's cache.
//
// Several tabs may open the same database. Each tab owns the writes it made (a Web Lock held
// for its lifetime names it); a tab takes over only writes whose owner is gone, so no write is
// sent by two tabs.

const VERSION = 1;
const WRITES = 'writes';
const NODES = 'nodes';
const QUERIES = 'queries';

function promised(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

function randomId() {
  return Array.from(crypto.getRandomValues(new Uint8Array(12)), (byte) => byte.toString(36).padStart(2, '0')).join('');
}

/// One IndexedDB database of the sync engine.
export class Persistence {
  /// Opens (creating) the database `name`; null where IndexedDB cannot be used (private
  /// windows of some browsers, no storage permission).
  static async open(name) {
    if (typeof indexedDB === 'undefined') return null;
    try {
      const request = indexedDB.open(name, VERSION);
      request.onupgradeneeded = () => {
        const db = request.result;
        if (!db.objectStoreNames.contains(WRITES)) db.createObjectStore(WRITES, { keyPath: 'key' });
        if (!db.objectStoreNames.contains(NODES)) db.createObjectStore(NODES, { keyPath: 'key' });
        if (!db.objectStoreNames.contains(QUERIES)) db.createObjectStore(QUERIES, { keyPath: 'key' });
      };
      const db = await promised(request);
      const persistence = new Persistence(db, name);
      await persistence._holdOwnerLock();
      return persistence;
    } catch (error) {
      console.warn(`Hearth: the offline cache is not available (${error?.message ?? error}).`);
      return null;
    }
  }

  constructor(db, name) {
    this.name = name;
    this.owner = randomId();
    this._db = db;
    this._closed = false;
    this._warned = false;
    /// Changes handed to IndexedDB and not yet committed (or failed).
    this._unsettled = new Set();
    // Another version of the page wants to change the database: let it.
    db.onversionchange = () => this.close();
  }

  get _lockName() { return `hearth-writes:${this.name}:${this.owner}`; }

  /// Holds this tab's lock until the page goes: other tabs see its writes are owned.
  async _holdOwnerLock() {
    if (typeof navigator === 'undefined' || !navigator.locks) return;
    await new Promise((granted) => {
      navigator.locks.request(this._lockName, () => {
        granted();
        return new Promise((release) => { this._releaseLock = release; });
      }).catch(() => granted());
    });
  }

  /// Everything stored: { writes (in order), nodes, queries }. Writes of other live tabs are
  /// left to them; writes whose tab is gone become this tab's.
  async load() {
    const [writes, nodes, queries] = await Promise.all([this._all(WRITES), this._all(NODES), this._all(QUERIES)]);
    return { writes: await this.adoptOrphans(writes), nodes, queries };
  }

  /// The stored writes this tab may send: its own and those whose owner is gone (taken over).
  /// With `writes` omitted, reads them.
  async adoptOrphans(writes) {
    const all = writes ?? await this._all(WRITES);
    let alive = null;
    if (typeof navigator !== 'undefined' && navigator.locks?.query) {
      try {
        const { held = [] } = await navigator.locks.query();
        alive = new Set(held.map((lock) => lock.name));
      } catch {
        alive = null;
      }
    }
    const mine = [];
    for (const write of all) {
      if (write.owner === this.owner) {
        mine.push(write);
      } else if (!alive || !alive.has(`hearth-writes:${this.name}:${write.owner}`)) {
        write.owner = this.owner;
        this.putWrite(write);
        mine.push(write);
      } else {
        this._awaitOwner(write.owner);
      }
    }
    return mine.sort((a, b) => a.id - b.id);
  }

  /// Calls `onOwnerGone` as soon as the tab `owner` lets its lock go (it closed, or it is the
  /// page this one replaced, whose lock is released just after this one loads): its writes
  /// are then taken over at once, not at the next check.
  _awaitOwner(owner) {
    if (typeof navigator === 'undefined' || !navigator.locks) return;
    this._awaited ??= new Set();
    if (this._awaited.has(owner)) return;
    this._awaited.add(owner);
    navigator.locks.request(`hearth-writes:${this.name}:${owner}`, () => {
      this._awaited.delete(owner);
      if (!this._closed) queueMicrotask(() => this.onOwnerGone?.());
    }).catch(() => this._awaited.delete(owner));
  }

  putWrite(record) { this._put(WRITES, { ...record, owner: this.owner }); }
  deleteWrite(id) { this._delete(WRITES, id); }
  putNode(record) { this._put(NODES, record); }
  deleteNode(key) { this._delete(NODES, key); }
  putQuery(record) { this._put(QUERIES, record); }
  deleteQuery(key) { this._delete(QUERIES, key); }

  /// Resolves once every change made so far is committed (or has failed).
  async whenIdle() {
    while (this._unsettled.size > 0) await Promise.all([...this._unsettled]);
  }

  close() {
    if (this._closed) return;
    this._closed = true;
    this._db.close();
    this._releaseLock?.();
  }

  async _all(store) {
    if (this._closed) return [];
    return promised(this._db.transaction(store).objectStore(store).getAll());
  }

  // Each change is a transaction of its own; IndexedDB runs them in the order they were made.
  _put(store, record) { this._change(store, (objects) => objects.put(record)); }
  _delete(store, key) { this._change(store, (objects) => objects.delete(key)); }

  _change(store, operation) {
    if (this._closed) return;
    try {
      const transaction = this._db.transaction(store, 'readwrite');
      operation(transaction.objectStore(store));
      const settled = new Promise((resolve) => {
        transaction.oncomplete = resolve;
        transaction.onabort = resolve;
      });
      this._unsettled.add(settled);
      settled.then(() => this._unsettled.delete(settled));
      transaction.onerror = (event) => {
        event.preventDefault();
        this._warn(transaction.error);
      };
    } catch (error) {
      this._warn(error);
    }
  }

  _warn(error) {
    if (this._warned) return;
    this._warned = true;
    console.warn(`Hearth: could not save to the offline cache (${error?.message ?? error}).`);
  }
}
