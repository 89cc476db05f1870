// #/ (recent), #/top and #/mine — a live list of posts, as PostListViewModel: newest (or most
// starred) first, a page at a time. Changes to shown posts appear in place; posts that would
// appear above the ones shown wait behind a "N new posts" banner, so the list never jumps.
import { h, errorNote, counted, signInPrompt } from '/app/ui.js';
import { postCard } from '/app/components.js';

const PAGE_SIZE = 10;

const KINDS = {
  recent: { title: 'Recent posts', empty: 'No posts yet.' },
  top: { title: 'Top posts', empty: 'No posts yet.' },
  mine: { title: 'My posts', empty: 'You have not posted anything yet.' },
};

/** Display order: newest first, or for top posts most stars first (then newest). */
function displayComparator(kind) {
  const byKeyDescending = (a, b) => (a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0);
  if (kind !== 'top') return byKeyDescending;
  return (a, b) => (b[1].starCount ?? 0) - (a[1].starCount ?? 0) || byKeyDescending(a, b);
}

export function mount(container, ctx, params) {
  const kind = KINDS[params.kind] ? params.kind : 'recent';
  const { title, empty } = KINDS[kind];
  if (kind === 'mine' && !ctx.user) {
    container.replaceChildren(signInPrompt(title, 'see your posts'));
    return () => {};
  }

  const heading = h('h1', { id: 'list-title', tabindex: '-1' }, title);
  const header = h('div', { class: 'page-header' }, heading);

  const root = ctx.hearth.db.ref(kind === 'mine' ? `user-posts/${ctx.user.uid}` : 'posts');
  const error = errorNote();
  const status = h('p', { class: 'muted', role: 'status' }, 'Loading…');
  const banner = h('button', { type: 'button', class: 'new-posts-banner', 'data-testid': 'new-posts-banner', hidden: true });
  const list = h('div', { class: 'post-list', role: 'feed', 'data-testid': 'post-list', 'aria-labelledby': 'list-title' });
  const more = h('button', { type: 'button', class: 'button', 'data-testid': 'load-more', hidden: true }, 'Load more');
  container.replaceChildren(h('section', { class: 'page' },
    header, error.element, h('div', { 'aria-live': 'polite' }, banner), status, list, h('div', { class: 'list-footer' }, more)));

  const compare = displayComparator(kind);
  /** What is shown: postId → card, in display order in `list`. */
  const shown = new Map();
  let latest = []; // the newest result, [postId, post] in display order
  let pending = 0;
  let limit = PAGE_SIZE;
  let query = null;

  function listen() {
    query?.off('value', onValue);
    // One more than shown: whether it comes tells whether there is another page.
    const ordered = kind === 'top' ? root.orderByChild('starCount') : root.orderByKey();
    query = ordered.limitToLast(limit + 1);
    query.on('value', onValue, (failure) => {
      status.hidden = true;
      error.show(failure);
    });
  }

  function onValue(snapshot) {
    const entries = [];
    snapshot.forEach((child) => {
      const post = child.val();
      if (post?.author) entries.push([child.key, post]);
    });
    entries.sort(compare);
    const hasMore = entries.length > limit;
    latest = entries.slice(0, limit);
    error.clear();
    status.hidden = true;
    more.hidden = !hasMore;
    if (shown.size === 0) showAll();
    else reconcile(entries, hasMore);
  }

  function showAll() {
    shown.clear();
    list.replaceChildren(...latest.map(([id, post]) => {
      const card = postCard(ctx, id, post);
      shown.set(id, card);
      return card;
    }));
    pending = 0;
    banner.hidden = true;
    status.hidden = latest.length > 0;
    status.textContent = latest.length ? '' : empty;
  }

  /** Applies a new result to what is shown without moving it. */
  function reconcile(entries, windowIsFull) {
    const byId = new Map(entries);
    const oldest = entries[entries.length - 1];
    for (const [id, card] of shown) {
      if (byId.has(id)) {
        card.update(byId.get(id));
      } else if (!windowIsFull || kind === 'top' || id > oldest[0]) {
        // Gone from inside the window: deleted. (Below it, it only scrolled out of the query.)
        card.remove();
        shown.delete(id);
      }
    }
    const lastShown = [...shown.keys()].pop();
    const bottom = lastShown ? [lastShown, latest.find(([id]) => id === lastShown)?.[1] ?? {}] : null;
    pending = 0;
    for (const entry of latest) {
      if (shown.has(entry[0])) continue;
      if (!bottom || compare(entry, bottom) > 0) {
        // Belongs below everything shown (an older page): add it at the end.
        const card = postCard(ctx, entry[0], entry[1]);
        shown.set(entry[0], card);
        list.append(card);
      } else {
        pending += 1;
      }
    }
    banner.hidden = pending === 0;
    banner.textContent = kind === 'top'
      ? `Top posts changed (${pending} new) — show`
      : `${counted(pending, 'new post')} — show`;
    status.hidden = shown.size > 0;
    status.textContent = shown.size ? '' : empty;
  }

  banner.addEventListener('click', () => {
    showAll();
    window.scrollTo({ top: 0 });
    heading.focus();
  });
  more.addEventListener('click', () => {
    limit += PAGE_SIZE;
    listen();
  });

  listen();
  return () => query?.off('value', onValue);
}
