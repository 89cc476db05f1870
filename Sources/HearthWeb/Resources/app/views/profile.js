// #/profile/<uid> — a person's profile, live (as ProfileViewModel.swift): name and picture,
// counts of posts, followers and following, a grid of their posts, and for someone else's
// profile follow/unfollow (one multi-path write), block/unblock and a way to message them.
// Cached data shows at once; older posts come a page at a time.
import { h, errorNote, avatar, confirmDialog, counted, emptyState, skeleton, viewStatus } from '/app/ui.js';
import { postGrid } from '/app/components.js';
import { Subscriptions, childKeys, personOf } from '/app/social.js';
import { notification, notificationPath } from '/app/actions.js';
import { PagedList, rememberedPages } from '/app/paging.js';
import { profileEditor } from '/app/profile-editor.js';
import { richText } from '/app/rich-text.js';

const PAGE_SIZE = 12;

export function mount(container, ctx, params) {
  const uid = params?.uid;
  const { hearth } = ctx;
  const me = ctx.user?.uid ?? null;
  const isOwn = me === uid;
  const subscriptions = new Subscriptions();
  const error = errorNote();
  const state = { profile: null, loaded: false, posts: null, isFollowing: false, isBlocked: false, busy: false };

  // Until the profile comes: grey shapes, and "Loading…" said once (by the status).
  const status = viewStatus('Loading the profile…');
  const picture = h('div', { class: 'profile-picture' },
    h('span', { class: 'skeleton skeleton-circle profile-skeleton', 'aria-hidden': 'true' }));
  const name = h('h1', { id: 'profile-name', class: 'profile-name', 'data-testid': 'profile-heading' },
    h('span', { class: 'visually-hidden' }, 'Profile'),
    h('span', { class: 'skeleton skeleton-title profile-name-skeleton', 'aria-hidden': 'true' }));
  const postCount = h('span', { 'data-testid': 'post-count' });
  const followerCount = h('span', { 'data-testid': 'follower-count' });
  const followingCount = h('span', { 'data-testid': 'following-count' });
  const bio = h('p', { class: 'profile-bio', 'data-testid': 'profile-bio', hidden: true });
  const actions = h('div', { class: 'profile-actions' });
  const grid = h('div', { class: 'profile-posts' }, skeleton('tiles', 6));
  const more = h('div', { class: 'list-footer', hidden: true },
    h('button', { type: 'button', class: 'button', 'data-testid': 'load-more', 'on:click': loadMore }, 'Show older posts'));

  const followButton = h('button', { type: 'button', class: 'button primary', 'data-testid': 'follow-button', 'on:click': toggleFollow });
  const blockButton = h('button', { type: 'button', class: 'button', 'data-testid': 'block-button', 'on:click': toggleBlock });
  // One's own profile is edited here: name, bio and photo (the account page has the rest).
  const editButton = h('button', {
    type: 'button', class: 'button', 'data-testid': 'edit-profile', 'aria-expanded': 'false', 'aria-controls': 'profile-editor',
  }, 'Edit profile');
  const editor = isOwn ? profileEditor(ctx, {
    profile: () => state.profile,
    onClose: () => {
      editButton.setAttribute('aria-expanded', 'false');
      editButton.focus();
    },
  }) : null;
  editButton.addEventListener('click', () => {
    if (editor.isOpen) return editor.close();
    editButton.setAttribute('aria-expanded', 'true');
    return editor.open();
  });
  if (isOwn) {
    actions.append(editButton, h('a', { href: '#/account', class: 'button secondary', 'data-testid': 'account-settings' }, 'Account'));
  } else {
    actions.append(followButton,
      h('a', { href: `#/chat/with/${encodeURIComponent(uid)}`, class: 'button', 'data-testid': 'message-button' }, 'Message'),
      blockButton);
  }

  container.replaceChildren(h('section', { class: 'page social profile', 'aria-labelledby': 'profile-name' },
    h('header', { class: 'profile-header' },
      picture,
      h('div', { class: 'profile-summary' },
        name,
        bio,
        h('ul', { class: 'profile-counts', 'aria-label': 'Counts' },
          h('li', {}, postCount), h('li', {}, followerCount), h('li', {}, followingCount)),
        actions)),
    editor?.element,
    error.element,
    h('h2', { class: 'visually-hidden' }, 'Posts'),
    status.element,
    grid,
    more));

  /** A failed read: said in words, and the grey shapes go (nothing more is coming). */
  function failed(caught) {
    for (const shape of container.querySelectorAll('.skeleton')) shape.remove();
    status.clear();
    error.show(caught);
  }

  if (!uid) {
    failed('There is no such profile.');
    return () => {};
  }

  subscriptions.on(hearth.db.ref(`people/${uid}`), 'value', (snapshot) => {
    state.profile = snapshot.val();
    state.loaded = true;
    const person = personOf(uid, state.profile);
    name.textContent = state.profile ? person.full_name : 'No such person';
    // Nobody to follow, message or block: a link to an account that never was, or is gone.
    actions.hidden = isMissing();
    if (isMissing()) {
      grid.replaceChildren();
      more.hidden = true;
      status.empty(emptyState({
        title: 'No such person',
        text: 'There is no profile here: the link may be mistyped, or the account was deleted.',
        actions: [h('a', { href: '#/', class: 'button primary', 'data-testid': 'empty-action' }, 'Go to recent posts')],
        testId: 'no-such-person',
      }));
    } else if (state.posts) {
      showPosts(state.posts);
    }
    picture.replaceChildren(avatar(person, 96));
    const about = typeof state.profile?.bio === 'string' ? state.profile.bio : '';
    bio.replaceChildren(richText(about));
    bio.hidden = !about;
    postCount.textContent = counted(snapshot.child('posts').numChildren(), 'post');
    followingCount.textContent = `${snapshot.child('following').numChildren()} following`;
  }, failed);

  subscriptions.on(hearth.db.ref(`followers/${uid}`), 'value', (snapshot) => {
    followerCount.textContent = counted(snapshot.numChildren(), 'follower');
    state.isFollowing = me ? snapshot.hasChild(me) : false;
    showButtons();
  }, (caught) => error.show(caught));

  // Read once rather than watched: only this user changes it, and streams are few (six
  // connections per server in a browser).
  if (me && !isOwn) {
    hearth.db.ref(`blocking/${me}/${uid}`).once('value').then((snapshot) => {
      state.isBlocked = snapshot.exists();
      showButtons();
    }, (caught) => error.show(caught));
  }

  // Their posts, newest first, a page at a time: each older page ends before the oldest shown.
  const posts = new PagedList({
    remembered: rememberedPages('profile-posts'),
    pageSize: PAGE_SIZE,
    query: (cursor) => {
      const ordered = hearth.db.ref(`user-posts/${uid}`).orderByKey();
      return (cursor ? ordered.endBefore(...cursor) : ordered).limitToLast(PAGE_SIZE + 1);
    },
    compare: (a, b) => (a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0),
    cursorOf: ([id]) => [id],
    keep: ([, post]) => Boolean(post && typeof post === 'object'),
    onChange: (page) => {
      state.posts = page;
      if (!isMissing()) showPosts(page);
    },
    onError: failed,
  });
  subscriptions.add(() => posts.stop());

  function showPosts({ entries, hasMore }) {
    grid.replaceChildren(entries.length ? postGrid(ctx, entries) : '');
    // A profile written after all (a new account's): its posts replace "No such person".
    if (status.element.querySelector('[data-testid=no-such-person]')) status.clear();
    status.settle(entries.length > 0, noPosts);
    more.hidden = !hasMore;
  }

  /** Loaded, and nobody there (one's own profile, not yet written, is still one's own). */
  function isMissing() {
    return state.loaded && !state.profile && !isOwn;
  }

  function loadMore() {
    posts.loadOlder();
  }

  /** An empty grid: one's own says how to post; someone else's, that nothing is there yet. */
  function noPosts() {
    return isOwn
      ? emptyState({
        title: 'You have not posted anything yet',
        text: 'Your posts show up here, for everyone who visits your profile.',
        actions: [h('a', { href: '#/compose', class: 'button primary', 'data-testid': 'empty-action' }, 'Write your first post')],
      })
      : emptyState({ title: 'No posts yet', text: `When ${personOf(uid, state.profile).full_name} posts, it shows up here.` });
  }

  function showButtons() {
    followButton.textContent = state.isFollowing ? 'Unfollow' : 'Follow';
    followButton.setAttribute('aria-pressed', String(state.isFollowing));
    followButton.disabled = state.busy || state.isBlocked;
    blockButton.textContent = state.isBlocked ? 'Unblock' : 'Block';
    blockButton.setAttribute('aria-pressed', String(state.isBlocked));
    blockButton.disabled = state.busy;
  }
  showButtons();

  /** Runs one action at a time, with its error shown in words. */
  async function perform(work) {
    if (!me) return ctx.requireSignIn('follow or block people');
    if (state.busy) return undefined;
    state.busy = true;
    showButtons();
    error.clear();
    try {
      await work();
    } catch (caught) {
      error.show(caught);
    } finally {
      state.busy = false;
      showButtons();
    }
    return undefined;
  }

  /**
   * Both sides of the follow, the feed entries for all their posts and their notification
   * (removed again on unfollowing), in one write.
   */
  function toggleFollow() {
    return perform(async () => {
      const follow = !state.isFollowing;
      const value = follow ? true : null;
      const updates = {
        [`followers/${uid}/${me}`]: value,
        [`people/${me}/following/${uid}`]: value,
        [notificationPath(uid, 'follow', { from: me })]: follow ? notification(ctx.user, uid, 'follow') : null,
      };
      for (const postId of childKeys(await hearth.db.ref(`people/${uid}/posts`).once('value'))) {
        updates[`feed/${me}/${postId}`] = value;
      }
      await hearth.db.ref().update(updates);
      state.isFollowing = follow;
    });
  }

  /** Blocks (which also unfollows, as in FriendlyPix) or unblocks: both sides in one write. */
  function toggleBlock() {
    return perform(async () => {
      const block = !state.isBlocked;
      const person = personOf(uid, state.profile).full_name;
      if (block && !(await confirmDialog(`Block ${person}? You will stop following them.`))) return;
      const value = block ? true : null;
      const updates = {
        [`blocking/${me}/${uid}`]: value,
        [`blocked/${uid}/${me}`]: value,
      };
      if (block && state.isFollowing) {
        updates[`followers/${uid}/${me}`] = null;
        updates[`people/${me}/following/${uid}`] = null;
        updates[notificationPath(uid, 'follow', { from: me })] = null;
      }
      await hearth.db.ref().update(updates);
      state.isBlocked = block;
      ctx.toast(block ? `You blocked ${person}.` : `You unblocked ${person}.`);
    });
  }

  return () => subscriptions.offAll();
}
