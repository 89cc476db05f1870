// #/feed — the home feed, FriendlyPix's way (as FeedViewModel.swift): `feed/{me}` lists the IDs
// of posts by the people one follows (and one's own). On opening, the reader's own client adds
// what the followed people posted meanwhile — lazily: after a first full catch-up it remembers
// (in this browser) whom it followed and when, and later visits ask only for posts written
// since, writing only the entries that are new; while open, it adds their new posts as they
// appear. New posts wait behind a "N new posts" banner instead of pushing the list down.
// What the local cache holds shows at once (offline too); older posts come a page at a time.
import { h, errorNote, counted, signInPrompt, viewStatus, emptyState, skeleton, avatar } from '/app/ui.js';
import { postCard } from '/app/components.js';
import { Subscriptions, cachedOrRead, childKeys, firstValue, personOf } from '/app/social.js';
import { PagedList, rememberedPages, syncChildren } from '/app/paging.js';

const PAGE_SIZE = 10;
/** How many of everyone's newest posts are watched for new posts by the people followed. */
const NEWEST_WATCHED = 5;
/** Posts are asked for from this long before the last catch-up (a post's time is its commit's). */
const MARGIN_MS = 10_000;

/** The last catch-up of `uid`'s feed in this browser: `{ following: [uid…], since: ms }`, or null. */
export function feedMarker(uid) {
  try {
    const marker = JSON.parse(localStorage.getItem(`hearth.feed-caught-up:${uid}`) ?? 'null');
    return Array.isArray(marker?.following) && Number.isFinite(marker?.since) ? marker : null;
  } catch {
    return null;
  }
}

function keepFeedMarker(uid, marker) {
  try {
    localStorage.setItem(`hearth.feed-caught-up:${uid}`, JSON.stringify(marker));
  } catch {
    // No storage (private mode): the next visit catches up in full.
  }
}

export function mount(container, ctx) {
  const me = ctx.user?.uid;
  if (!me) {
    container.replaceChildren(signInPrompt('Home feed', 'see the posts of the people you follow'));
    return () => {};
  }

  const { hearth } = ctx;
  const subscriptions = new Subscriptions();
  const error = errorNote();
  const status = viewStatus('Loading your feed…');
  // The banner is a plain button; the hidden live region says that posts came in.
  const banner = h('button', {
    type: 'button', class: 'new-posts-banner', 'data-testid': 'new-posts-banner', hidden: true, 'on:click': showNewPosts,
  });
  const announcer = h('p', { class: 'visually-hidden', 'aria-live': 'polite' });
  const list = h('div', { class: 'post-list', 'data-testid': 'feed-list', 'aria-busy': 'true' }, skeleton('cards', 3));
  const more = h('div', { class: 'list-footer', hidden: true },
    h('button', { type: 'button', class: 'button', 'data-testid': 'load-more', 'on:click': loadMore }, 'Show older posts'));
  container.replaceChildren(h('section', { class: 'page social', 'aria-labelledby': 'feed-title' },
    h('h1', { id: 'feed-title' }, 'Home feed'),
    error.element,
    banner,
    announcer,
    status.element,
    list,
    more));

  /** postId → the post (null: gone), read live for every feed entry shown. */
  const posts = new Map();
  const postListeners = new Map();
  const cards = new Map();
  /** Feed entries known to exist, so the live fan-out writes only what is new. */
  const inFeed = new Set();
  /**
   * Entries added for posts written before this visit (by the catch-up, or by the live watcher
   * for a post it saw first): they were written while one was away, so they are not "new posts".
   */
  const caughtUpIds = new Set();
  /** When this visit began, in the server's time (set by the catch-up). */
  let visitStartedAt = Infinity;
  let state = { entries: [], hasMore: false, waiting: 0, loaded: false };
  let stopped = false;

  // The feed's entries, newest first, a page at a time: each older page ends before the
  // oldest entry shown. Shown from the local cache at once; the catch-up runs behind.
  const feed = new PagedList({
    remembered: rememberedPages('feed'),
    pageSize: PAGE_SIZE,
    query: (cursor) => {
      const ordered = hearth.db.ref(`feed/${me}`).orderByKey();
      return (cursor ? ordered.endBefore(...cursor) : ordered).limitToLast(PAGE_SIZE + 1);
    },
    compare: (a, b) => (a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0),
    cursorOf: ([id]) => [id],
    holdNewer: true,
    // One's own new post, not on the server yet, shows at once (offline too), and so do the
    // posts the catch-up adds: they were written before this visit, so they are not "new posts".
    showAtOnce: ([id]) => caughtUpIds.has(id) || hearth.db.pendingWriteCount(`posts/${id}/author`) > 0,
    onChange: (next) => {
      state = next;
      for (const [id] of next.entries) {
        inFeed.add(id);
        readPost(id);
      }
      draw();
    },
    onError: (caught) => error.show(caught),
  });
  subscriptions.add(() => feed.stop());
  // The list says when the catch-up is done (tests and the benchmark wait on it).
  const caughtUp = catchUp().then((written) => {
    list.dataset.caughtUp = String(written);
  }, (caught) => {
    if (!stopped) error.show(caught);
  });
  listenToFollowedPeople();

  /** Each shown entry's post, live (cached ones at once). */
  function readPost(id) {
    if (postListeners.has(id)) return;
    postListeners.set(id, subscriptions.on(hearth.db.ref(`posts/${id}`), 'value', (snapshot) => {
      const post = snapshot.val();
      posts.set(id, post?.author ? post : null);
      // Entries whose post was deleted are removed (the next value draws the page again).
      if (!post?.author) hearth.db.ref(`feed/${me}/${id}`).remove().catch((caught) => error.show(caught));
      draw();
    }, (caught) => error.show(caught)));
  }

  /** Shows the posts read so far, in the feed's order; posts not read yet come as they arrive. */
  function draw() {
    if (stopped) return;
    const shownIds = new Set(state.entries.map(([id]) => id));
    for (const [id, off] of postListeners) {
      if (!shownIds.has(id)) {
        off();
        postListeners.delete(id);
        posts.delete(id);
      }
    }
    const ready = state.entries.filter(([id]) => posts.get(id)).map(([id]) => [id, posts.get(id)]);
    syncChildren(list, cards, ready, (id, post) => postCard(ctx, id, post), (card, post) => card.update(post));
    showBanner(state.waiting);
    more.hidden = !state.hasMore;
    const reading = state.entries.some(([id]) => !posts.has(id));
    const loading = !ready.length && !state.waiting && (!state.loaded || reading);
    // The skeletons stay until there is something to show or nothing to wait for.
    if (!loading && list.hasAttribute('aria-busy')) {
      list.removeAttribute('aria-busy');
      for (const placeholder of list.querySelectorAll(':scope > .skeleton')) placeholder.remove();
    }
    const hasContent = ready.length > 0 || state.waiting > 0;
    if (hasContent || !loading) status.settle(hasContent, emptyFeed);
  }

  /** An empty feed says how to fill it: people to follow, search, or everyone's recent posts. */
  function emptyFeed() {
    const suggestions = h('div', { class: 'suggestions', hidden: true },
      h('h3', { id: 'suggestions-title' }, 'People you could follow'),
      h('ul', { class: 'people-list', 'aria-labelledby': 'suggestions-title', 'data-testid': 'suggested-people' }));
    suggestPeople(suggestions);
    return h('div', {}, emptyState({
      title: 'Your feed is empty',
      text: 'Follow people to see their posts here.',
      actions: [
        h('a', { href: '#/search', class: 'button primary', 'data-testid': 'empty-action' }, 'Find people'),
        h('a', { href: '#/', class: 'button' }, 'Browse recent posts'),
      ],
    }), suggestions);
  }

  /** A few people one does not follow yet, each linking to their profile (where Follow is). */
  async function suggestPeople(holder) {
    try {
      const [people, following, blockers] = await Promise.all([
        hearth.db.ref('people').orderByKey().limitToFirst(20).once('value'),
        hearth.db.ref(`people/${me}/following`).once('value'),
        hearth.db.ref(`blocked/${me}`).once('value'),
      ]);
      // Not the people followed already, nor those who blocked me (as search leaves them out).
      const followed = new Set([...childKeys(following), ...childKeys(blockers)]);
      const found = [];
      people.forEach((child) => {
        if (child.key !== me && !followed.has(child.key) && child.child('full_name').val()) found.push(personOf(child.key, child.val()));
      });
      if (stopped || !found.length) return;
      holder.querySelector('ul').replaceChildren(...found.slice(0, 5).map((person) => h('li', {},
        h('a', { href: `#/profile/${encodeURIComponent(person.uid)}`, class: 'person-row', 'data-testid': 'suggested-person' },
          avatar(person, 40), h('span', { class: 'person-name' }, person.full_name)))));
      holder.hidden = false;
    } catch {
      // Suggestions are a nicety: the links above still lead on.
    }
  }

  /**
   * Adds to `feed/{me}` the posts of the followed people that are not there yet (one write),
   * answering how many. The first time in this browser, and whenever whom one follows changed,
   * it reads all their posts and the whole feed; otherwise only the posts written since the
   * last catch-up (one query by time) and, if any are by people followed, the feed from the
   * oldest of them on. The feed on screen does not wait for it.
   */
  async function catchUp() {
    const [following, offset] = await Promise.all([
      firstValue(subscriptions, hearth.db.ref(`people/${me}/following`)),
      firstValue(subscriptions, hearth.db.ref('.info/serverTimeOffset')),
    ]);
    const followed = childKeys(following).sort();
    const startedAt = Date.now() + (offset.val() ?? 0);
    visitStartedAt = startedAt;
    const marker = feedMarker(me);
    const candidates = [];
    if (marker && marker.following.join(',') === followed.join(',')) {
      const recent = await hearth.db.ref('posts').orderByChild('timestamp').startAt(marker.since - MARGIN_MS).once('value');
      const people = new Set(followed);
      recent.forEach((post) => {
        if (people.has(post.child('author/uid').val()) && !inFeed.has(post.key)) candidates.push(post.key);
      });
      if (candidates.length) {
        const oldest = [...candidates].sort()[0];
        const present = await hearth.db.ref(`feed/${me}`).orderByKey().startAt(oldest).once('value');
        for (const id of childKeys(present)) inFeed.add(id);
      }
    } else {
      // From the server (a cached copy may be old, and the marker will trust this read).
      const [present, ...theirPosts] = await Promise.all([
        hearth.db.ref(`feed/${me}`).orderByKey().once('value'),
        ...followed.map((uid) => hearth.db.ref(`people/${uid}/posts`).once('value')),
      ]);
      for (const id of childKeys(present)) inFeed.add(id);
      for (const theirs of theirPosts) candidates.push(...childKeys(theirs));
    }
    const updates = {};
    for (const id of candidates) {
      if (!inFeed.has(id)) updates[`feed/${me}/${id}`] = true;
    }
    if (stopped) return 0;
    const written = Object.keys(updates).length;
    if (written) {
      for (const path of Object.keys(updates)) {
        inFeed.add(path.split('/').pop());
        caughtUpIds.add(path.split('/').pop());
      }
      await hearth.db.ref().update(updates);
    }
    keepFeedMarker(me, { following: followed, since: startedAt });
    return written;
  }

  /**
   * New posts of the followed people go into the feed as they are published. FeedViewModel
   * listens to each followed person's `people/{uid}/posts`; this watches the newest few posts
   * of everyone and keeps those by the people followed (the same writes, with one listener
   * however many one follows).
   */
  function listenToFollowedPeople() {
    let following = new Set();
    subscriptions.on(hearth.db.ref(`people/${me}/following`), 'value', (snapshot) => {
      following = new Set(childKeys(snapshot));
    }, (caught) => error.show(caught));
    // Newest by time, not by key: a post written under a key of its own (not a push ID) would
    // otherwise sort after every new post for good and hide them from this window.
    subscriptions.on(hearth.db.ref('posts').orderByChild('timestamp').limitToLast(NEWEST_WATCHED), 'child_added', async (added) => {
      const id = added.key;
      if (inFeed.has(id) || !following.has(added.child('author/uid').val())) return;
      // After the catch-up (which knows what is there), and only if the entry is still missing:
      // a visit with nothing new writes nothing.
      await caughtUp;
      if (stopped || inFeed.has(id)) return;
      inFeed.add(id);
      if (added.child('timestamp').val() < visitStartedAt) caughtUpIds.add(id);
      try {
        if ((await cachedOrRead(hearth, hearth.db.ref(`feed/${me}/${id}`))).exists() || stopped) return;
        await hearth.db.ref(`feed/${me}/${id}`).set(true);
      } catch (caught) {
        inFeed.delete(id);
        error.show(caught);
      }
    }, (caught) => error.show(caught));
  }

  function showBanner(count) {
    const words = count ? counted(count, 'new post') : '';
    if (words && banner.textContent !== words) announcer.textContent = words;
    banner.hidden = count === 0;
    banner.textContent = words;
  }

  function showNewPosts() {
    feed.showWaiting();
    list.querySelector('a, button')?.focus();
  }

  function loadMore() {
    feed.loadOlder();
  }

  return () => {
    stopped = true;
    subscriptions.offAll();
  };
}
