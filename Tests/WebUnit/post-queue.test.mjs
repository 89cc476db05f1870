// The post queue (app/post-queue.js): posts with photos made offline, kept with their photos'
// bytes and sent when the connection is back, photos first and the post last, once. Here with
// stand-ins for IndexedDB, file storage and the database; the whole way in Chromium with a
// stopped and restarted server is Tests/Browser/test_app_everyday.py
// (test_a_post_with_photos_made_offline_waits_and_is_sent_when_back).

import assert from 'node:assert/strict';
import { register } from 'node:module';
import { test } from 'node:test';

register('./site-paths.mjs', import.meta.url);
const { PostQueue, MAX_QUEUED_POSTS, photoPaths, publishedValue } = await import('../../Sources/HearthWeb/Resources/app/post-queue.js');
const { postHeadline } = await import('../../Sources/HearthWeb/Resources/app/actions.js');

/** An IndexedDB database of one object store, enough for the queue's reads and writes. */
function fakeDatabase() {
  const rows = new Map();
  return {
    rows,
    close() {},
    transaction() {
      const transaction = {
        objectStore: () => ({
          put: (row) => rows.set(row.id, row),
          delete: (id) => rows.delete(id),
          getAll: () => {
            const request = {};
            setTimeout(() => request.onsuccess?.(), 0);
            Object.defineProperty(request, 'result', { get: () => [...rows.values()] });
            return request;
          },
        }),
      };
      setTimeout(() => transaction.oncomplete?.(), 0);
      return transaction;
    },
  };
}

class NetworkError extends Error {
  constructor() {
    super('The server could not be reached.');
    this.code = 'network';
  }
}

/** A stand-in Hearth: what was uploaded, published and deleted, in order; `online` settable. */
function fakeHearth() {
  const hearth = {
    online: false,
    log: [],
    posts: new Map(),
    failNextPublish: null,
    failUpload: null,
    observers: [],
    get isOnline() { return this.online; },
    onConnectionChange(callback) { this.observers.push(callback); return () => {}; },
    storage: {
      ref: (path) => ({
        put: async () => {
          if (!hearth.online || hearth.failUpload === path) throw new NetworkError();
          hearth.log.push(`put ${path}`);
        },
        delete: async () => { hearth.log.push(`delete ${path}`); },
      }),
    },
    db: {
      ref: (path = '') => ({
        update: async (updates) => {
          if (!hearth.online) throw new NetworkError();
          if (hearth.failNextPublish) {
            const failure = hearth.failNextPublish;
            hearth.failNextPublish = null;
            throw failure;
          }
          hearth.log.push(`update ${Object.keys(updates).filter((key) => key.startsWith('posts/')).join(',')}`);
          for (const [key, value] of Object.entries(updates)) if (key.startsWith('posts/')) hearth.posts.set(key.slice(6), value);
        },
        get: async () => {
          const [, id] = path.split('/');
          const post = hearth.posts.get(id);
          return { val: () => (path.endsWith('/author/uid') ? post?.author?.uid ?? null : post ?? null) };
        },
      }),
    },
    goOnline() {
      this.online = true;
      for (const observer of this.observers) observer(true);
    },
  };
  return hearth;
}

function openQueue(hearth, events = []) {
  const queue = new PostQueue(hearth, {
    onSent: (entry) => events.push(`sent ${entry.id}`),
    onRefused: (entry, error) => events.push(`refused ${entry.id}: ${error.code}`),
  });
  queue.uid = 'ann';
  queue.db = fakeDatabase();
  return queue;
}

const value = (title) => ({ author: { uid: 'ann', full_name: 'Ann' }, title, body: '', timestamp: { '.sv': 'timestamp' }, starCount: 0 });
const photo = (alt = '') => ({ full: new Blob(['full']), thumbnail: new Blob(['thumb']), alt });

test('a queued post is published with its photos’ paths in order, alt text only where given', () => {
  assert.deepEqual(photoPaths('ann', 'p1', 2), { full: 'ann/full/p1/2.jpg', thumb: 'ann/thumb/p1/2.jpg' });
  const published = publishedValue({ id: 'p1', uid: 'ann', value: value(''), photos: [photo('A window'), photo()] });
  assert.deepEqual(published.photos, [
    { full: 'ann/full/p1/0.jpg', thumb: 'ann/thumb/p1/0.jpg', alt: 'A window' },
    { full: 'ann/full/p1/1.jpg', thumb: 'ann/thumb/p1/1.jpg' },
  ]);
  assert.equal(published.title, '');
});

test('offline the post waits; back online its photos go up first, then the post, once', async () => {
  const hearth = fakeHearth();
  const events = [];
  const queue = openQueue(hearth, events);
  await queue.add('p1', value('From the mountain'), [photo('Snow'), photo()]);
  await queue.send();
  assert.equal(queue.entries.length, 1, 'offline: still waiting');
  assert.deepEqual(hearth.log, []);
  hearth.goOnline();
  await queue.send();
  assert.deepEqual(hearth.log, [
    'put ann/full/p1/0.jpg', 'put ann/thumb/p1/0.jpg', 'put ann/full/p1/1.jpg', 'put ann/thumb/p1/1.jpg', 'update posts/p1',
  ]);
  assert.deepEqual(events, ['sent p1']);
  assert.deepEqual(queue.entries, []);
  assert.equal(queue.db.rows.size, 0);
  assert.equal(hearth.posts.get('p1').photos[0].alt, 'Snow');
});

test('the connection lost mid-upload keeps the post for the next connection', async () => {
  const hearth = fakeHearth();
  const events = [];
  const queue = openQueue(hearth, events);
  hearth.online = true;
  hearth.failUpload = 'ann/thumb/p1/0.jpg';
  await queue.add('p1', value('Half way'), [photo()]);
  await queue.send();
  assert.deepEqual(events, []);
  assert.equal(queue.entries.length, 1);
  assert.ok(!hearth.log.some((line) => line.startsWith('update')), 'no post without its photos');
  hearth.failUpload = null;
  await queue.send();
  assert.deepEqual(events, ['sent p1']);
});

test('a post written by an earlier send whose answer was lost counts as sent, not as refused', async () => {
  const hearth = fakeHearth();
  const events = [];
  const queue = openQueue(hearth, events);
  hearth.online = true;
  hearth.posts.set('p1', { author: { uid: 'ann' } });
  hearth.failNextPublish = Object.assign(new Error('Permission denied'), { code: 'permission-denied' });
  await queue.add('p1', value('Again'), [photo()]);
  await queue.send();
  assert.deepEqual(events, ['sent p1']);
});

test('a post the server refuses is dropped and its uploaded photos removed', async () => {
  const hearth = fakeHearth();
  const events = [];
  const queue = openQueue(hearth, events);
  hearth.online = true;
  hearth.failNextPublish = Object.assign(new Error('Permission denied'), { code: 'permission-denied' });
  await queue.add('p2', value('Refused'), [photo()]);
  await queue.add('p3', value('Next'), [photo()]);
  await queue.send();
  assert.deepEqual(events, ['refused p2: permission-denied', 'sent p3']);
  assert.ok(hearth.log.includes('delete ann/full/p2/0.jpg') && hearth.log.includes('delete ann/thumb/p2/0.jpg'));
  assert.ok(!hearth.posts.has('p2'));
});

test('at most so many posts wait, and a cancelled one is never sent', async () => {
  const hearth = fakeHearth();
  const events = [];
  const queue = openQueue(hearth, events);
  for (let index = 0; index < MAX_QUEUED_POSTS; index += 1) await queue.add(`p${index}`, value(`Post ${index}`), [photo()]);
  await assert.rejects(queue.add('one-more', value('One more'), [photo()]), /already waiting/);
  await queue.cancel('p0');
  assert.equal(queue.entries.length, MAX_QUEUED_POSTS - 1);
  hearth.goOnline();
  await queue.send();
  assert.ok(!events.includes('sent p0'));
  assert.equal(events.length, MAX_QUEUED_POSTS - 1);
});

test('without IndexedDB (signed out, or a private window) nothing is kept and it says so', async () => {
  const queue = new PostQueue(fakeHearth());
  await queue.follow(null);
  assert.equal(queue.available, false);
  await assert.rejects(queue.add('p1', value('x'), [photo()]), /cannot wait offline/);
});

test('a post is named by its title, else its first line, else as its author’s photo', () => {
  const author = { uid: 'ann', full_name: 'Ann' };
  const photos = [{ full: 'f', thumb: 't' }];
  assert.equal(postHeadline({ author, title: 'Sunset', body: 'x' }), 'Sunset');
  assert.equal(postHeadline({ author, title: '', body: '\n  First line \nsecond' }), 'First line');
  assert.equal(postHeadline({ author, title: '', body: '', photos }), 'Photo by Ann');
  assert.equal(postHeadline({ author, title: '', body: '' }), 'Untitled');
  assert.equal([...postHeadline({ author, title: '', body: 'é'.repeat(100) })].length, 80);
});
