// #/notifications — what others did that concerns the signed-in user: liked their post,
// commented on it, followed them, or named them (a mention, written by the server).
// `notifications/{me}/{id}`, newest first, live, a page at a time; the same kind about the same
// post is one entry ("Carol, Bob and 2 others liked your post", notification-groups.js); the
// ones shown are marked read (one write) once the screen has been seen. Offline it shows what
// the client's cache holds (main.js keeps the newest page cached) and says so.
import { h, errorNote, signInPrompt, viewStatus, emptyState, skeleton, avatar, agoTime } from '/app/ui.js';
import { cachedOrRead } from '/app/social.js';
import { PagedList, rememberedPages, loadOlderButton, syncChildren } from '/app/paging.js';
import { groupNotifications, groupWords } from '/app/notification-groups.js';
import { notificationsPage, NOTIFICATIONS_PAGE } from '/app/notifications-sync.js';
import { watchConnection } from '/app/presence.js';

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
  // Offline: what the cache held is shown, and this says so (or that nothing was saved).
  const offlineNote = h('p', {
    class: 'offline-note', role: 'status', 'data-testid': 'notifications-offline', 'data-not-kept': true, hidden: true,
  });
  const list = h('ol', { class: 'notification-list', 'data-testid': 'notification-list', 'aria-busy': 'true', 'aria-labelledby': 'notifications-title' },
    skeleton('rows', 4).map((placeholder) => h('li', { class: 'skeleton-item' }, placeholder)));
  const older = loadOlderButton('Show older notifications', () => notifications.loadOlder(), 'load-older-notifications');
  container.replaceChildren(h('section', { class: 'page narrow social', 'aria-labelledby': 'notifications-title' },
    h('div', { class: 'row page-heading' }, h('h1', { id: 'notifications-title' }, 'Notifications'),
      h('a', { href: '#/settings/notifications', class: 'button secondary small', 'data-testid': 'notification-settings-link' }, 'Settings')),
    offlineNote, error.element, status.element, list, h('div', { class: 'row center' }, older)));

  /** The entries shown, by group key (a group is keyed by its oldest member). */
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
  let loaded = false;
  let connection = 'connecting';

  const notifications = new PagedList({
    remembered: rememberedPages('notifications'),
    pageSize: NOTIFICATIONS_PAGE,
    query: (cursor) => notificationsPage(hearth.db, me, cursor),
    compare,
    cursorOf: ([id, value]) => [value?.timestamp ?? 0, id],
    keep: ([, value]) => Boolean(value?.type && value?.from),
    onChange: show,
    onError: failed,
  });

  /** Ends the placeholders (the first answer, or none coming while offline). */
  function endPlaceholders() {
    if (!list.hasAttribute('aria-busy')) return;
    list.removeAttribute('aria-busy');
    list.replaceChildren();
  }

  function show({ entries, hasMore, loaded: pagesLoaded }) {
    if (!pagesLoaded && !entries.length) return;
    loaded = true;
    endPlaceholders();
    for (const [id, value] of entries) if (value.read === false && !marked.has(markKey(id, value))) fresh.add(id);
    const groups = groupNotifications(entries).map((group) => [group.key, group]);
    syncChildren(list, items, groups, item, (element, group) => element.update(group));
    older.hidden = !hasMore;
    status.settle(entries.length > 0, () => emptyState({
      title: 'No notifications yet',
      text: 'When someone likes or comments on your posts, or follows you, you will see it here.',
      actions: [h('a', { href: '#/compose', class: 'button primary', 'data-testid': 'empty-action' }, 'Write a post')],
    }));
    showConnection();
    markRead(entries);
  }

  /** Offline, the list is what was saved (or nothing, when the cache had none): it says so. */
  function showConnection() {
    const offline = connection === 'offline';
    if (offline && !loaded) {
      // No answer is coming: no endless placeholders.
      endPlaceholders();
      status.clear();
    }
    offlineNote.hidden = !offline;
    const words = !offline ? '' : loaded ? 'Offline — showing what was saved. New notifications come when the connection is back.'
      : 'Offline — no notifications were saved on this device. They will show when the connection is back.';
    if (offlineNote.textContent !== words) offlineNote.textContent = words;
  }
  const stopWatching = watchConnection(hearth, (state) => {
    connection = state;
    showConnection();
  });

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

  /** One entry: a notification, or several of one kind about one post (all their members). */
  function item(key, group) {
    const link = h('a', { class: 'notification-link', 'data-testid': 'notification-link' });
    const picture = h('span', { class: 'notification-avatar' });
    const words = h('span', { class: 'notification-words' });
    const when = h('span', { class: 'notification-time' });
    const element = h('li', { class: 'notification', 'data-testid': 'notification', 'data-notification-id': key }, link);
    link.append(picture, h('span', { class: 'notification-text' }, words, when));
    let shownPerson = null;
    element.update = (next) => {
      const [, newest] = next.members[0];
      const isNew = next.members.some(([id]) => fresh.has(id));
      element.classList.toggle('unread', isNew);
      element.dataset.type = next.type;
      element.dataset.count = String(next.members.length);
      element.dataset.members = next.members.map(([id]) => id).join(' ');
      link.href = next.type === 'follow' || !next.post
        ? `#/profile/${encodeURIComponent(newest.from)}`
        : `#/post/${encodeURIComponent(next.post)}`;
      // The newest person's picture (the names say who else).
      if (shownPerson !== newest.from) {
        shownPerson = newest.from;
        picture.replaceChildren(avatar({ uid: newest.from, full_name: newest.name }, 40));
      }
      const title = next.post ? titles.get(next.post) : null;
      const { who, what } = groupWords(next);
      words.replaceChildren(
        isNew ? h('span', { class: 'new-mark' }, h('span', { class: 'visually-hidden' }, 'New: ')) : '',
        h('strong', {}, who), ` ${what}`,
        title ? ` “${title}”` : '');
      when.replaceChildren(typeof newest.timestamp === 'number' ? agoTime(newest.timestamp, { class: 'muted small' }) : '');
      if (next.post && !titles.has(next.post)) {
        titles.set(next.post, null);
        // The post's title says which post (read once, from the cache when it has it).
        cachedOrRead(hearth, hearth.db.ref(`posts/${next.post}/title`)).then((snapshot) => {
          const text = snapshot.val();
          if (typeof text !== 'string' || stopped) return;
          titles.set(next.post, text);
          // Every entry about that post says it.
          for (const [, shown] of items) if (shown.group?.post === next.post) shown.update(shown.group);
        }, () => {});
      }
      element.group = next;
    };
    element.update(group);
    return element;
  }

  function failed(caught) {
    status.clear();
    endPlaceholders();
    error.show(caught);
  }

  return () => {
    stopped = true;
    stopWatching();
    document.removeEventListener('visibilitychange', onVisible);
    notifications.stop();
  };
}
