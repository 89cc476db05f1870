// #/tag/<tag> — the posts with a hashtag: `hashtags/{tag}` lists their IDs (written with each
// post), newest first, a page at a time, each post read by ID. Cached ones show at once.
import { h, errorNote, viewStatus, emptyState, skeleton, showListError } from '/app/ui.js';
import { postCard } from '/app/components.js';
import { loadPosts } from '/app/social.js';
import { PagedList, rememberedPages, loadOlderButton, syncChildren } from '/app/paging.js';

const PAGE_SIZE = 10;
/** The tags actions.js `hashtags()` indexes. */
const TAG = /^[a-z0-9_]{1,50}$/;

export function mount(container, ctx, params) {
  const tag = String(params?.tag ?? '').toLowerCase();
  const { hearth } = ctx;
  const error = errorNote();
  const status = viewStatus(`Loading the posts tagged #${tag}…`);
  const list = h('div', { class: 'post-list', role: 'feed', 'data-testid': 'tag-list', 'aria-labelledby': 'tag-title', 'aria-busy': 'true' },
    skeleton('cards', 2));
  const more = loadOlderButton('Load older posts', () => index.loadOlder());
  container.replaceChildren(h('section', { class: 'page', 'aria-labelledby': 'tag-title' },
    h('div', { class: 'page-header' }, h('h1', { id: 'tag-title', 'data-testid': 'tag-title' }, `#${tag}`)),
    error.element, status.element, list, h('div', { class: 'list-footer' }, more)));

  if (!TAG.test(tag)) {
    list.removeAttribute('aria-busy');
    list.replaceChildren();
    more.hidden = true;
    status.empty(noPosts('That is not a hashtag', 'Hashtags are 1 to 50 letters a–z, digits or _.'));
    return () => {};
  }

  const cards = new Map();
  let run = 0;
  let stopped = false;
  // Post IDs are push IDs: by key is by time. Each older page ends before the oldest shown.
  const index = new PagedList({
    remembered: rememberedPages('tag'),
    pageSize: PAGE_SIZE,
    query: (cursor) => {
      const ordered = hearth.db.ref(`hashtags/${tag}`).orderByKey();
      return (cursor ? ordered.endBefore(...cursor) : ordered).limitToLast(PAGE_SIZE + 1);
    },
    compare: (a, b) => (a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0),
    cursorOf: ([id]) => [id],
    onChange: async ({ entries, hasMore, loaded }) => {
      const current = ++run;
      try {
        const { entries: posts } = await loadPosts(hearth, entries.map(([id]) => id));
        if (stopped || current !== run) return;
        list.removeAttribute('aria-busy');
        list.querySelectorAll(':scope > .skeleton').forEach((placeholder) => placeholder.remove());
        syncChildren(list, cards, posts, (id, post) => postCard(ctx, id, post), (card, post) => card.update(post));
        more.hidden = !hasMore;
        if (posts.length || loaded) {
          status.settle(posts.length > 0, () => noPosts(`No posts tagged #${tag} yet`, `Add #${tag} to a post and it shows up here.`));
        }
      } catch (caught) {
        if (current === run) failed(caught);
      }
    },
    onError: failed,
  });

  function noPosts(title, text) {
    const action = ctx.user
      ? h('a', { href: '#/compose', class: 'button primary', 'data-testid': 'empty-action' }, 'Write a post')
      : h('a', { href: '#/', class: 'button primary', 'data-testid': 'empty-action' }, 'Browse recent posts');
    return emptyState({ title, text, actions: [action] });
  }

  function failed(caught) {
    showListError({ status, list, error }, caught);
  }

  return () => {
    stopped = true;
    index.stop();
  };
}
