// Posts with photos written while the server cannot be reached. The database keeps a post's
// write offline by itself, but its photos are files: the post and the bytes of its photos are
// kept here, in IndexedDB (one store per signed-in person, as the database's own cache), and
// sent when the connection is back — the photos first, then the post in its one atomic write,
// so nobody ever sees a post whose photos are not there yet.
//
// A post's ID is chosen when it is queued and its files' paths follow from it, so sending again
// after an interruption (a reload, the connection lost mid-way) uploads the same files and
// finds the post already written rather than writing it twice. One send runs at a time.
import { publishPost } from '/app/actions.js';

/** At most this many posts wait (each up to three photos of up to 5 MB). */
export const MAX_QUEUED_POSTS = 10;
const STORE = 'posts';

function promised(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

/** Where photo `index` of post `id` by `uid` is kept in file storage (full image and thumbnail). */
export function photoPaths(uid, id, index) {
  return { full: `${uid}/full/${id}/${index}.jpg`, thumb: `${uid}/thumb/${id}/${index}.jpg` };
}

/** The post's value as published: the photos' paths (and alt text) in the order chosen. */
export function publishedValue(entry) {
  const value = { ...entry.value };
  if (entry.photos.length) {
    value.photos = entry.photos.map((photo, index) => {
      const stored = photoPaths(entry.uid, entry.id, index);
      if (photo.alt) stored.alt = photo.alt;
      return stored;
    });
  }
  return value;
}

/**
 * The queue of the signed-in person's posts waiting for the server.
 * `onChange(entries)` is told whenever it changes; `onSent(entry)` when a post is published;
 * `onRefused(entry, error)` when the server refuses one (it is then dropped, and its files
 * removed).
 */
export class PostQueue {
  constructor(hearth, { onSent = () => {}, onRefused = () => {} } = {}) {
    this.hearth = hearth;
    this.onSent = onSent;
    this.onRefused = onRefused;
    this.uid = null;
    this.db = null;
    this.entries = [];
    this.observers = new Set();
    this.sending = null;
    hearth.onConnectionChange((online) => { if (online) this.send(); });
  }

  /** Opens the queue of `uid` (null: signed out) and sends what waits there. */
  async follow(uid) {
    if (uid === this.uid) return;
    this.db?.close();
    this.uid = uid;
    this.db = null;
    this.entries = [];
    if (uid && typeof indexedDB !== 'undefined') {
      try {
        const request = indexedDB.open(`hearth-post-queue:${location.host}:${uid}`, 1);
        request.onupgradeneeded = () => request.result.createObjectStore(STORE, { keyPath: 'id' });
        const db = await promised(request);
        if (this.uid !== uid) return db.close();
        this.db = db;
        this.entries = (await this.all()).sort((a, b) => a.queuedAt - b.queuedAt);
      } catch (error) {
        console.warn(`Hearth: posts cannot wait offline here (${error?.message ?? error}).`);
      }
    }
    this.changed();
    this.send();
  }

  /** Whether posts can wait here (IndexedDB is open for someone signed in). */
  get available() { return this.db !== null; }

  /** Calls `callback(entries)` now and at every change; answers the unsubscribe. */
  observe(callback) {
    this.observers.add(callback);
    callback(this.entries);
    return () => this.observers.delete(callback);
  }

  /**
   * Keeps a post to send later: `value` as publishPost takes it (without photos), `photos` as
   * `{ full: Blob, thumbnail: Blob, alt }` in order. Answers the entry.
   */
  async add(id, value, photos) {
    if (!this.db) throw new Error('Posts cannot wait offline in this browser. Try again when the connection is back.');
    if (this.entries.length >= MAX_QUEUED_POSTS) {
      throw new Error(`${MAX_QUEUED_POSTS} posts are already waiting to be sent. Try again when the connection is back.`);
    }
    const entry = { id, uid: this.uid, value, photos: photos.map(({ full, thumbnail, alt }) => ({ full, thumbnail, alt: alt || '' })), queuedAt: Date.now() };
    await this.write((store) => store.put(entry));
    this.entries = [...this.entries, entry];
    this.changed();
    return entry;
  }

  /** Gives up on a waiting post (its files, if some were sent, are removed). */
  async cancel(id) {
    const entry = this.entries.find((candidate) => candidate.id === id);
    if (!entry) return;
    await this.drop(entry);
    await this.removeFiles(entry);
  }

  /** Sends what waits, in order, while the server can be reached. */
  send() {
    if (!this.sending) {
      this.sending = this.sendAll().finally(() => { this.sending = null; });
    }
    return this.sending;
  }

  async sendAll() {
    while (this.db && this.hearth.isOnline) {
      const entry = this.entries[0];
      if (!entry) return;
      try {
        await this.sendOne(entry);
        await this.drop(entry);
        this.onSent(entry);
      } catch (error) {
        // Not reachable: it waits for the next connection. Anything else is the server's no.
        if (error?.code === 'network' || !this.hearth.isOnline) return;
        await this.drop(entry);
        await this.removeFiles(entry);
        this.onRefused(entry, error);
      }
    }
  }

  async sendOne(entry) {
    for (const [index, photo] of entry.photos.entries()) {
      const paths = photoPaths(entry.uid, entry.id, index);
      await this.hearth.storage.ref(paths.full).put(photo.full, { contentType: 'image/jpeg' });
      await this.hearth.storage.ref(paths.thumb).put(photo.thumbnail, { contentType: 'image/jpeg' });
    }
    try {
      await publishPost(this.hearth, entry.id, publishedValue(entry));
    } catch (error) {
      // Written by an earlier send whose answer was lost: that is sent.
      const author = await this.hearth.db.ref(`posts/${entry.id}/author/uid`).get().then((snapshot) => snapshot.val(), () => null);
      if (author !== entry.uid) throw error;
    }
  }

  async drop(entry) {
    this.entries = this.entries.filter((candidate) => candidate.id !== entry.id);
    await this.write((store) => store.delete(entry.id)).catch(() => {});
    this.changed();
  }

  async removeFiles(entry) {
    const paths = entry.photos.flatMap((_, index) => Object.values(photoPaths(entry.uid, entry.id, index)));
    await Promise.allSettled(paths.map((path) => this.hearth.storage.ref(path).delete()));
  }

  async all() {
    const transaction = this.db.transaction(STORE, 'readonly');
    return promised(transaction.objectStore(STORE).getAll());
  }

  async write(change) {
    const transaction = this.db.transaction(STORE, 'readwrite');
    change(transaction.objectStore(STORE));
    await new Promise((resolve, reject) => {
      transaction.oncomplete = resolve;
      transaction.onerror = () => reject(transaction.error);
      transaction.onabort = () => reject(transaction.error ?? new Error('The post could not be kept.'));
    });
  }

  changed() {
    for (const observer of this.observers) observer(this.entries);
  }
}
