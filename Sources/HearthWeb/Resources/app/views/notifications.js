// #/notifications — what others did that concerns the signed-in user: liked their post,
// commented on it, followed them, or named them (a mention, written by the server). `notifications/{me}/{id}`, newest first, live, a page at a
// time; the ones shown are marked read (one write) once the screen has been seen.
import { h, errorNote, signInPrompt, viewStatus, emptyState, skeleton, avatar, agoTime } from '/app/ui.js';
import { cachedOrRead } from '/app/social.js';
import { PagedList, loadOlderButton, syncChildren } from '/app/paging.js';

const PAGE_SIZE = 20;

/** What each kind of notification says after the person's name. */
const WORDS = {
  like: 'liked your post',
  comment: 'commented on your post',
  follow: 'started following you',
  mention: 'mentioned you',
};

/** Newest first; the same time by ID, so the order is stable. */
function compare(a, b) {
  return (b[1]?.timestamp ?? 0) - (a[1]?.timestamp ?? 0) || (a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0);
}

export function mount(container, ctx) {
  const me = ctx.user?.uid;
  if (!me) {
    container.replaceChildren(signInPrompt('Notifications', 'see who liked, commented on or followed'));
    return () => {};
  }
  const { hearth } = ctx;
  const root = hearth.db.ref(`notifications/${me}`);
  const error = errorNote();
  const status = viewStatus('Loading your notifications…');
  const list = h('ol', { class: 'notification-list', 'data-testid': 'notification-list', 'aria-busy': 'true', 'aria-labelledby': 'notifications-title' },
    skeleton('rows', 4).map((placeholder) => h('li', { class: 'skeleton-item' }, placeholder)));
  const older = loadOlderButton('Show older notifications', () => notifications.loadOlder(), 'load-older-notifications');
  container.replaceChildren(h('section', { class: 'page narrow social', 'aria-labelledby': 'notifications-title' },
    h('div', { class: 'row page-heading' }, h('h1', { id: 'notifications-title' }, 'Notifications'),
      h('a', { href: '#/settings/notifications', class: 'button secondary small', 'data-testid': 'notification-settings-link' }, 'Settings')),
    error.element, status.element, list, h('div', { class: 'row center' }, older)));

  const items = new Map();
  /** Shown as new on this visit (they are marked read on the server meanwhile). */
  const fresh = new Set();
  /**
   * Asked to be marked read already, by ID and time: a like taken back and given again comes
   * back under the same ID, unread, and is marked again.
   */
  const marked = new Set();
  const markKey = (id, value) => `${id}@${value?.timestamp}`;
  const titles = new Map();
  let stopped = false;

  const notifications = new PagedList({
    pageSize: PAGE_SIZE,
    query: (cursor) => {
      const ordered = root.orderByChild('timestamp');
      return (cursor ? ordered.endBefore(...cursor) : ordered).limitToLast(PAGE_SIZE + 1);
    },
    compare,
    cursorOf: ([id, value]) => [value?.timestamp ?? 0, id],
    keep: ([, value]) => Boolean(value?.type && value?.from),
    onChange: show,
    onError: failed,
  });

  function show({ entries, hasMore, loaded }) {
    if (!loaded && !entries.length) return;
    if (list.hasAttribute('aria-busy')) {
      list.removeAttribute('aria-busy');
      list.replaceChildren();
    }
    for (const [id, value] of entries) if (value.read === false && !marked.has(markKey(id, value))) fresh.add(id);
    syncChildren(list, items, entries, item, (element, value) => element.update(value));
    older.hidden = !hasMore;
    status.settle(entries.length > 0, () => emptyState({
      title: 'No notifications yet',
      text: 'When someone likes or comments on your posts, or follows you, you will see it here.',
      actions: [h('a', { href: '#/compose', class: 'button primary', 'data-testid': 'empty-action' }, 'Write a post')],
    }));
    markRead(entries);
  }

  /** The unread ones shown are read now that they are on screen (once the page is seen). */
  function markRead(entries) {
    if (stopped || document.visibilityState !== 'visible') return;
    const updates = {};
    for (const [id, value] of entries) {
      if (value.read === false && !marked.has(markKey(id, value))) {
        marked.add(markKey(id, value));
        updates[`${id}/read`] = true;
      }
    }
    if (Object.keys(updates).length) root.update(updates).catch(failed);
  }
  const onVisible = () => markRead(notifications.entries());
  document.addEventListener('visibilitychange', onVisible);

  function item(id, value) {
    const person = { uid: value.from, full_name: value.name };
    const link = h('a', { class: 'notification-link', 'data-testid': 'notification-link' });
    const words = h('span', { class: 'notification-words' });
    const when = h('span', { class: 'notification-time' });
    const element = h('li', { class: 'notification', 'data-testid': 'notification', 'data-notification-id': id },
      link);
    link.append(avatar(person, 40), h('span', { class: 'notification-text' }, words, when));
    element.update = (next) => {
      const isNew = fresh.has(id);
      element.classList.toggle('unread', isNew);
      element.dataset.type = next.type;
      link.href = next.type === 'follow' || !next.post
        ? `#/profile/${encodeURIComponent(next.from)}`
        : `#/post/${encodeURIComponent(next.post)}`;
      const title = next.post ? titles.get(next.post) : null;
      words.replaceChildren(
        isNew ? h('span', { class: 'new-mark' }, h('span', { class: 'visually-hidden' }, 'New: ')) : '',
        h('strong', {}, next.name || 'Someone'), ` ${WORDS[next.type] ?? 'did something'}`,
        title ? ` “${title}”` : '');
      when.replaceChildren(typeof next.timestamp === 'number' ? agoTime(next.timestamp, { class: 'muted small' }) : '');
      if (next.post && !titles.has(next.post)) {
        titles.set(next.post, null);
        // The post's title says which post (read once, from the cache when it has it).
        cachedOrRead(hearth, hearth.db.ref(`posts/${next.post}/title`)).then((snapshot) => {
          const text = snapshot.val();
          if (typeof text !== 'string' || stopped) return;
          titles.set(next.post, text);
          // Every notification about that post says it.
          for (const [shownId, shownValue] of notifications.shown) {
            if (shownValue?.post === next.post) items.get(shownId)?.update(shownValue);
          }
        }, () => {});
      }
    };
    element.update(value);
    return element;
  }

  function failed(caught) {
    status.clear();
    if (list.hasAttribute('aria-busy')) {
      list.removeAttribute('aria-busy');
      list.replaceChildren();
    }
    error.show(caught);
  }

  return () => {
    stopped = true;
    document.removeEventListener('visibilitychange', onVisible);
    notifications.stop();
  };
}
