// #/moderation — the admins' moderation queue (as ModerationQueueViewModel): what people
// reported, live, most reported first, then the latest. Each entry links to the post, says whose
// it is, how many people reported it and what it says, and has the admins' actions, each
// confirmed first: remove it (the server takes everything pointing at it too), dismiss its
// reports, suspend its author (or reinstate them). An action is a request the server carries
// out (`adminRequests/`); the entry leaves the queue, live, once it is done. The rules let only
// admins (the ID token's `admin` claim) read the queue: anyone else is told this screen is not
// for them.
import {
  h, agoTime, busy, confirmDialog, counted, emptyState, errorNote, signInPrompt, skeleton, toast, viewStatus,
} from '/app/ui.js';
import { adminRequest } from '/app/actions.js';
import { Subscriptions, profileReader } from '/app/social.js';
import { syncChildren } from '/app/paging.js';

/** Most reported first, then the most recently reported; the same by key, so the order is stable. */
function compare([keyA, a], [keyB, b]) {
  return (b.count ?? 0) - (a.count ?? 0) || (b.updated ?? 0) - (a.updated ?? 0) || (keyA < keyB ? -1 : keyA > keyB ? 1 : 0);
}

/** What each kind of entry is called, and what removing it and dismissing its reports say. */
const KINDS = {
  post: {
    name: 'Post', removeLabel: 'Remove post',
    removeQuestion: 'Remove this post, with its photos, comments and likes, for everyone? This cannot be undone.',
    removed: 'The post was removed.',
  },
  comment: {
    name: 'Comment', removeLabel: 'Remove comment',
    removeQuestion: 'Remove this comment for everyone? This cannot be undone.',
    removed: 'The comment was removed.',
  },
};

export function mount(container, ctx) {
  if (!ctx.user) {
    container.replaceChildren(signInPrompt('Moderation', 'see the moderation queue'));
    return () => {};
  }
  const { hearth, user } = ctx;
  const db = hearth.db;
  const personOf = profileReader(hearth);
  const subscriptions = new Subscriptions();
  let stopped = false;

  const heading = h('h1', { id: 'moderation-title', tabindex: '-1' }, 'Moderation');
  const intro = h('p', { class: 'muted' }, 'What people reported, most reported first. The post or comment stays until you remove it.');
  const error = errorNote();
  const status = viewStatus('Loading the reports…');
  const list = h('ol', {
    class: 'report-list', 'data-testid': 'report-list', 'aria-labelledby': 'moderation-title', 'aria-busy': 'true',
  }, skeleton('rows', 3).map((placeholder) => h('li', { class: 'skeleton-item' }, placeholder)));
  container.replaceChildren(h('section', { class: 'page narrow social moderation', 'aria-labelledby': 'moderation-title' },
    heading, intro, error.element, status.element, list));

  /** The queue's two halves as they came: reported posts and reported comments. */
  const queue = { posts: null, comments: null };
  /** key → the entry's element, in display order in `list`. */
  const items = new Map();
  /** What was asked about an entry, said when it leaves the queue (key → words). */
  const asked = new Map();
  /** Accounts suspended from this screen: their entries offer to reinstate them. */
  const suspended = new Set();
  /** The entry an action was last started on: focus goes to its neighbour when it leaves. */
  let actedOn = null;
  let refused = false;

  function listen(path, half) {
    subscriptions.on(db.ref(path), 'value', (snapshot) => {
      queue[half] = snapshot;
      show();
    }, (failure) => {
      if (failure?.code === 'permission-denied') notAllowed();
      else failed(failure);
    });
  }

  // A claim given since the last token is only in a new one (the screen is drawn again when it
  // changes who may see it); offline, the token at hand does.
  hearth.auth.getIdToken(true).catch(() => {}).then(() => {
    if (stopped) return;
    listen('reports/posts', 'posts');
    listen('reports/comments', 'comments');
  });

  /** The entries, from both halves: [key, { kind, post, comment?, author, count, text, updated }]. */
  function entries() {
    const found = [];
    const add = (key, fields, snapshot) => {
      const value = snapshot.val();
      if (typeof value?.author === 'string') found.push([key, { ...fields, ...value }]);
    };
    queue.posts?.forEach((post) => {
      add(`post/${post.key}`, { kind: 'post', post: post.key }, post);
    });
    queue.comments?.forEach((post) => {
      post.forEach((comment) => {
        add(`comment/${post.key}/${comment.key}`, { kind: 'comment', post: post.key, comment: comment.key }, comment);
      });
    });
    return found.sort(compare);
  }

  function show() {
    if (stopped || refused || !queue.posts || !queue.comments) return;
    if (list.hasAttribute('aria-busy')) {
      list.removeAttribute('aria-busy');
      list.replaceChildren();
    }
    const before = [...items.keys()];
    const shown = entries();
    syncChildren(list, items, shown, item, (element, value) => element.update(value));
    // Entries that left: what was asked about them is done.
    for (const key of before) {
      if (items.has(key)) continue;
      const words = asked.get(key);
      asked.delete(key);
      if (words) toast(words, 'success');
      if (key === actedOn) keepFocus(before, key, shown);
    }
    status.settle(shown.length > 0, () => emptyState({
      title: 'Nothing to review',
      text: 'When people report a post or a comment, it shows up here.',
      actions: [h('a', { href: '#/', class: 'button', 'data-testid': 'empty-action' }, 'See recent posts')],
    }));
  }

  /**
   * The entry acted on left the queue: focus, if it was there (or fell to the page when its
   * button was busy), goes to the entry that took its place, or the one before, or the heading.
   */
  function keepFocus(before, key, shown) {
    actedOn = null;
    const active = document.activeElement;
    if (active && active !== document.body && active !== document.getElementById('main') && active.isConnected) return;
    const index = before.indexOf(key);
    const remaining = new Set(shown.map(([id]) => id));
    const next = before.slice(index + 1).find((id) => remaining.has(id)) ?? before.slice(0, index).reverse().find((id) => remaining.has(id));
    const target = next ? items.get(next)?.querySelector('.report-link') : heading;
    target?.focus();
  }

  function notAllowed() {
    if (refused) return;
    refused = true;
    subscriptions.offAll();
    list.remove();
    intro.remove();
    status.empty(emptyState({
      title: 'Only admins can see this',
      text: 'The moderation queue is for the people who look after this Hearth. If you should be one, ask its operator.',
      actions: [h('a', { href: '#/', class: 'button', 'data-testid': 'empty-action' }, 'See recent posts')],
      testId: 'not-admin',
    }));
  }

  function failed(failure) {
    status.clear();
    if (list.hasAttribute('aria-busy')) {
      list.removeAttribute('aria-busy');
      list.replaceChildren();
    }
    error.show(failure);
  }

  /** One entry: what it is (a link to the post), whose, how often reported, and the actions. */
  function item(key, entry) {
    const titleId = `report-${key.replace(/[^A-Za-z0-9_-]/g, '_')}`;
    const kind = KINDS[entry.kind];
    let current = entry;
    let authorName = 'its author';

    const link = h('a', { class: 'report-link', id: titleId, 'data-testid': 'report-link' });
    const count = h('span', { class: 'report-count', 'data-testid': 'report-count' });
    const when = h('span', { class: 'muted' });
    const author = h('a', { class: 'report-author', 'data-testid': 'report-author' });
    const note = h('p', { class: 'report-note muted small', 'data-testid': 'report-note', hidden: true });
    const remove = h('button', { type: 'button', class: 'button small danger-quiet', 'data-testid': 'report-remove' }, kind.removeLabel);
    const dismiss = h('button', { type: 'button', class: 'button small secondary', 'data-testid': 'report-dismiss' }, 'Dismiss reports');
    const suspend = h('button', { type: 'button', class: 'button small danger-quiet', 'data-testid': 'report-suspend' }, 'Suspend author');
    const reinstate = h('button', { type: 'button', class: 'button small secondary', 'data-testid': 'report-reinstate', hidden: true }, 'Reinstate author');
    const actions = h('div', { class: 'report-actions', role: 'group', 'aria-labelledby': titleId }, remove, dismiss, suspend, reinstate);
    const element = h('li', {
      class: 'report', 'data-testid': 'report', 'data-kind': entry.kind, 'data-post-id': entry.post, 'data-comment-id': entry.comment ?? null,
    },
    h('h2', { class: 'report-title' }, link),
    h('p', { class: 'report-meta small' }, count, ' · ', when),
    h('p', { class: 'report-by small' }, 'By ', author),
    note, actions);

    /** Asks, then sends the request; `done` is said when the entry leaves (or at once, `now`). */
    const act = async (button, { question, confirm, danger = false, request, done, now = null }) => {
      if (!await confirmDialog(question, { confirm, danger })) return;
      actedOn = key;
      if (done) asked.set(key, done);
      const sent = await busy(button, async () => {
        error.clear();
        await adminRequest(hearth, request());
      }, (failure) => {
        asked.delete(key);
        error.show(failure);
      });
      if (!sent || stopped) return;
      if (done && items.has(key)) {
        // Sent: the server carries it out, and the entry leaves the queue then.
        note.textContent = 'Done — leaving the queue…';
        note.hidden = false;
      }
      now?.();
    };
    const target = () => (current.kind === 'comment' ? { post: current.post, comment: current.comment } : { post: current.post });

    remove.addEventListener('click', () => act(remove, {
      question: kind.removeQuestion, confirm: kind.removeLabel, danger: true,
      request: () => ({ action: current.kind === 'comment' ? 'removeComment' : 'removePost', ...target() }),
      done: kind.removed,
    }));
    dismiss.addEventListener('click', () => act(dismiss, {
      question: `Dismiss the reports of this ${kind.name.toLowerCase()}? It stays as it is.`, confirm: 'Dismiss reports',
      request: () => ({ action: 'dismiss', ...target() }),
      done: 'The reports were dismissed.',
    }));
    suspend.addEventListener('click', () => act(suspend, {
      question: `Suspend ${authorName}'s account? They are signed out everywhere and cannot sign in until reinstated. What they wrote stays.`,
      confirm: 'Suspend', danger: true,
      request: () => ({ action: 'suspend', uid: current.author }),
      now: () => {
        suspended.add(current.author);
        toast(`${authorName} was suspended.`, 'success');
        showAll();
        reinstate.focus();
      },
    }));
    reinstate.addEventListener('click', () => act(reinstate, {
      question: `Reinstate ${authorName}'s account? They can sign in again.`, confirm: 'Reinstate',
      request: () => ({ action: 'reinstate', uid: current.author }),
      now: () => {
        suspended.delete(current.author);
        toast(`${authorName} was reinstated.`, 'success');
        showAll();
        suspend.focus();
      },
    }));

    element.update = (next) => {
      current = next;
      link.href = `#/post/${encodeURIComponent(next.post)}`;
      link.textContent = `${kind.name}: “${next.text || 'Untitled'}”`;
      count.textContent = `Reported by ${counted(next.count ?? 0, 'person', 'people')}`;
      element.dataset.count = String(next.count ?? 0);
      when.replaceChildren(typeof next.updated === 'number' ? agoTime(next.updated) : '');
      author.href = `#/profile/${encodeURIComponent(next.author)}`;
      if (!author.textContent) author.textContent = 'Loading the name…';
      personOf(next.author).then((person) => {
        if (current.author !== next.author) return;
        authorName = person.full_name;
        author.textContent = person.full_name;
      });
      // Admins do not suspend themselves (the rules refuse it).
      const own = next.author === user.uid;
      suspend.hidden = own || suspended.has(next.author);
      reinstate.hidden = own || !suspended.has(next.author);
    };
    element.update(entry);
    return element;
  }

  /** Every entry again (a suspension shows on all of that author's entries). */
  function showAll() {
    for (const [key, value] of entries()) items.get(key)?.update(value);
  }

  return () => {
    stopped = true;
    subscriptions.offAll();
  };
}
