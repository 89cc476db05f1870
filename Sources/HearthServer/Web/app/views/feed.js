// #/feed — the home feed, FriendlyPix's way (as FeedViewModel.swift): `feed/{me}` lists the IDs
// of posts by the people one follows (and one's own). On opening, the reader's own client adds
// what the followed people posted meanwhile; while open, it adds their new posts as they
// appear. New posts wait behind a "N new posts" banner instead of pushing the list down.
import { h, errorNote, counted, signInPrompt } from '/app/ui.js';
import { postCard } from '/app/components.js';
import { Subscriptions, childKeys, loadPosts } from '/app/social.js';

const PAGE_SIZE = 10;
/** How many of everyone's newest posts are watched for new posts by the people followed. */
const NEWEST_WATCHED = 5;

export function mount(container, ctx) {
  const me = ctx.user?.uid;
  if (!me) {
    container.replaceChildren(signInPrompt('Home feed', 'see the posts of the people you follow'));
    return () => {};
  }

  const { hearth } = ctx;
  const subscriptions = new Subscriptions();
  const error = errorNote();
  const status = h('p', { class: 'muted', role: 'status' }, 'Loading your feed…');
  // The banner is a plain button; the hidden live region says that posts came in.
  const banner = h('button', {
    type: 'button', class: 'new-posts-banner', 'data-testid': 'new-posts-banner', hidden: true, 'on:click': showNewPosts,
  });
  const announcer = h('p', { class: 'visually-hidden', 'aria-live': 'polite' });
  const list = h('div', { class: 'post-list', 'data-testid': 'feed-list' });
  const more = h('div', { class: 'list-footer', hidden: true },
    h('button', { type: 'button', class: 'button', 'on:click': loadMore }, 'Show older posts'));
  container.replaceChildren(h('section', { class: 'page social', 'aria-labelledby': 'feed-title' },
    h('h1', { id: 'feed-title' }, 'Home feed'),
    error.element,
    banner,
    announcer,
    status,
    list,
    more));

  let limit = PAGE_SIZE;
  let stopFeed = null;
  /** The newest-first IDs of the latest value of the feed page, and whether more exist. */
  let latest = { ids: [], hasMore: false };
  /** The IDs on screen, newest first (null before the first render). */
  let shown = null;
  let renderRun = 0;
  let stopped = false;
  /** Feed entries known to exist, so the live fan-out writes only what is new. */
  const inFeed = new Set();
  const cards = new Map();

  start();

  async function start() {
    try {
      await catchUp();
    } catch (caught) {
      error.show(caught);
    }
    if (stopped) return;
    listenToFeed();
    listenToFollowedPeople();
  }

  /** Adds to `feed/{me}` every post of the followed people that is not there yet (one write). */
  async function catchUp() {
    const [following, present] = await Promise.all([
      hearth.db.ref(`people/${me}/following`).once('value'),
      hearth.db.ref(`feed/${me}`).once('value'),
    ]);
    for (const id of childKeys(present)) inFeed.add(id);
    const theirPosts = await Promise.all(childKeys(following).map((uid) => hearth.db.ref(`people/${uid}/posts`).once('value')));
    const updates = {};
    for (const posts of theirPosts) {
      for (const id of childKeys(posts)) {
        if (!inFeed.has(id)) updates[`feed/${me}/${id}`] = true;
      }
    }
    await hearth.db.ref().update(updates);
    for (const path of Object.keys(updates)) inFeed.add(path.split('/').pop());
  }

  /** The newest `limit` entries, live; one more is asked for to tell whether a next page exists. */
  function listenToFeed() {
    stopFeed?.();
    const query = hearth.db.ref(`feed/${me}`).orderByKey().limitToLast(limit + 1);
    stopFeed = subscriptions.on(query, 'value', (snapshot) => {
      const ids = childKeys(snapshot);
      for (const id of ids) inFeed.add(id);
      const hasMore = ids.length > limit;
      latest = { ids: ids.slice(hasMore ? ids.length - limit : 0).reverse(), hasMore };
      render();
    }, (caught) => error.show(caught));
  }

  /**
   * New posts of the followed people go into the feed as they are published. FeedViewModel
   * listens to each followed person's `people/{uid}/posts`; a browser has only six connections
   * per server (HTTP/1.1), so this watches the newest few posts of everyone in one stream and
   * keeps those by the people followed (the same writes, one stream however many one follows).
   */
  function listenToFollowedPeople() {
    let following = new Set();
    subscriptions.on(hearth.db.ref(`people/${me}/following`), 'value', (snapshot) => {
      following = new Set(childKeys(snapshot));
    }, (caught) => error.show(caught));
    subscriptions.on(hearth.db.ref('posts').orderByKey().limitToLast(NEWEST_WATCHED), 'child_added', (added) => {
      const id = added.key;
      if (inFeed.has(id) || !following.has(added.child('author/uid').val())) return;
      inFeed.add(id);
      hearth.db.ref(`feed/${me}/${id}`).set(true).catch((caught) => {
        inFeed.delete(id);
        error.show(caught);
      });
    }, (caught) => error.show(caught));
  }

  /**
   * Shows the latest page. Posts newer than the newest on screen are held back behind the
   * banner (unless nothing is on screen yet), so what the reader is looking at stays put.
   */
  async function render() {
    const run = ++renderRun;
    const newest = shown?.[0];
    const waiting = shown && newest ? latest.ids.filter((id) => id > newest && !shown.includes(id)) : [];
    const ids = latest.ids.filter((id) => !waiting.includes(id));
    let loaded;
    try {
      loaded = await loadPosts(hearth, ids);
    } catch (caught) {
      if (run === renderRun) error.show(caught);
      return;
    }
    if (run !== renderRun || stopped) return;
    showBanner(waiting.length);
    shown = loaded.entries.map(([id]) => id);
    list.replaceChildren(...loaded.entries.map(([id, post]) => card(id, post)));
    for (const id of cards.keys()) if (!shown.includes(id)) cards.delete(id);
    more.hidden = !latest.hasMore;
    status.textContent = shown.length || waiting.length ? '' : 'Your feed is empty. Follow people to see their posts here.';
    status.hidden = !status.textContent;
    if (!status.hidden) status.append(' ', h('a', { href: '#/search' }, 'Find people'), ' or browse ', h('a', { href: '#/' }, 'recent posts'), '.');
    removeStale(loaded.missing);
  }

  /** A card per post, made once and then brought up to date, so re-renders do not flicker. */
  function card(id, post) {
    if (cards.has(id)) cards.get(id).update(post);
    else cards.set(id, postCard(ctx, id, post));
    return cards.get(id);
  }

  function showBanner(count) {
    const words = count ? counted(count, 'new post') : '';
    if (words && banner.textContent !== words) announcer.textContent = words;
    banner.hidden = count === 0;
    banner.textContent = words;
  }

  function showNewPosts() {
    shown = null;
    render().then(() => list.querySelector('a, button')?.focus());
  }

  function loadMore() {
    limit += PAGE_SIZE;
    listenToFeed();
  }

  /** Feed entries whose post was deleted are removed (the next value re-renders the page). */
  function removeStale(ids) {
    if (!ids.length) return;
    const updates = Object.fromEntries(ids.map((id) => [`feed/${me}/${id}`, null]));
    hearth.db.ref().update(updates).catch((caught) => error.show(caught));
  }

  return () => {
    stopped = true;
    subscriptions.offAll();
  };
}
