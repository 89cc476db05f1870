// #/ (recent), #/top and #/mine — a live list of posts, as PostListViewModel: newest (or most
// starred) first, a page at a time ("Load older" asks for the page before the oldest shown).
// Changes to shown posts appear in place; posts that would appear above the ones shown wait
// behind a "N new posts" banner, so the list never jumps. Cached posts show at once.
import { h, errorNote, counted, signInPrompt, viewStatus, emptyState, skeleton } from '/app/ui.js';
import { postCard, queuedPosts } from '/app/components.js';
import { PagedList, rememberedPages, loadOlderButton, syncChildren } from '/app/paging.js';

const PAGE_SIZE = 10;

const KINDS = {
  recent: { title: 'Recent posts' },
  top: { title: 'Top posts' },
  mine: { title: 'My posts' },
};

/** What an empty list says, with the next step: writing a post (or signing up to). */
function emptyList(kind, ctx) {
  const write = ctx.user
    ? h('a', { href: '#/compose', class: 'button primary', 'data-testid': 'empty-action' }, kind === 'mine' ? 'Write your first post' : 'Write the first post')
    : h('a', { href: '#/signup', class: 'button primary', 'data-testid': 'empty-action' }, 'Sign up to post');
  return kind === 'mine'
    ? emptyState({ title: 'You have not posted anything yet', text: 'Share a photo or a few words: your posts show up here.', actions: [write] })
    : emptyState({ title: 'No posts yet', text: 'When someone shares a post, it shows up here.', actions: [write] });
}

/** Display order: newest first, or for top posts most stars first (then newest). */
function displayComparator(kind) {
  const byKeyDescending = (a, b) => (a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0);
  if (kind !== 'top') return byKeyDescending;
  return (a, b) => (b[1].starCount ?? 0) - (a[1].starCount ?? 0) || byKeyDescending(a, b);
}

export function mount(container, ctx, params) {
  const kind = KINDS[params.kind] ? params.kind : 'recent';
  const { title } = KINDS[kind];
  if (kind === 'mine' && !ctx.user) {
    container.replaceChildren(signInPrompt(title, 'see your posts'));
    return () => {};
  }

  const heading = h('h1', { id: 'list-title', tabindex: '-1' }, title);
  const header = h('div', { class: 'page-header' }, heading);

  const root = ctx.hearth.db.ref(kind === 'mine' ? `user-posts/${ctx.user.uid}` : 'posts');
  const error = errorNote();
  const status = viewStatus('Loading posts…');
  const banner = h('button', { type: 'button', class: 'new-posts-banner', 'data-testid': 'new-posts-banner', hidden: true });
  const list = h('div', { class: 'post-list', role: 'feed', 'data-testid': 'post-list', 'aria-labelledby': 'list-title', 'aria-busy': 'true' },
    skeleton('cards', 3));
  const more = loadOlderButton('Load older posts', () => posts.loadOlder());
  // One's own posts with photos made offline wait above the newest (not among the top ones).
  const queued = kind === 'top' ? null : queuedPosts(ctx);
  container.replaceChildren(h('section', { class: 'page' },
    header, error.element, queued?.element, h('div', { 'aria-live': 'polite' }, banner), status.element, list,
    h('div', { class: 'list-footer' }, more)));

  /** postId → card, in display order in `list`. */
  const cards = new Map();
  const byStars = kind === 'top';
  // Each page ends before the oldest post shown: by key, or for top posts by stars then key.
  const posts = new PagedList({
    remembered: rememberedPages(`posts-${kind}`),
    pageSize: PAGE_SIZE,
    query: (cursor) => {
      const ordered = byStars ? root.orderByChild('starCount') : root.orderByKey();
      return (cursor ? ordered.endBefore(...cursor) : ordered).limitToLast(PAGE_SIZE + 1);
    },
    compare: displayComparator(kind),
    cursorOf: ([id, post]) => (byStars ? [post.starCount ?? 0, id] : [id]),
    keep: ([, post]) => Boolean(post?.author),
    holdNewer: true,
    // One's own new posts show at once (offline too, and those sent from the post queue):
    // only other people's wait behind the banner.
    showAtOnce: ([id, post]) => ctx.hearth.db.pendingWriteCount(`posts/${id}/author`) > 0
      || (Boolean(ctx.user) && post?.author?.uid === ctx.user.uid),
    onChange: show,
    onError: (failure) => {
      status.clear();
      showLoaded();
      error.show(failure);
    },
  });

  /** The skeletons make way for what came (once). */
  function showLoaded() {
    if (!list.hasAttribute('aria-busy')) return;
    list.removeAttribute('aria-busy');
    list.replaceChildren();
  }

  function show({ entries, hasMore, waiting }) {
    error.clear();
    showLoaded();
    syncChildren(list, cards, entries, (id, post) => postCard(ctx, id, post), (card, post) => card.update(post));
    more.hidden = !hasMore;
    banner.hidden = waiting === 0;
    banner.textContent = byStars ? `Top posts changed (${waiting} new) — show` : `${counted(waiting, 'new post')} — show`;
    status.settle(entries.length > 0, () => emptyList(kind, ctx));
  }

  banner.addEventListener('click', () => {
    posts.showWaiting();
    window.scrollTo({ top: 0 });
    heading.focus();
  });

  return () => {
    posts.stop();
    queued?.stop();
  };
}
