// Who liked a post, under its like button: "Liked by Carol, Bob and 3 others", live from
// FriendlyPix's `likes/{postId}` ({uid: time}), newest first; activating it opens a dialog
// listing everyone (avatars, names linking to their profiles). Nothing shows without likes.
import { h, avatar } from '/app/ui.js';
import { cachedOrRead } from '/app/social.js';
import { likedByWords, likersOf } from '/app/people-words.js';
import { icon } from '/app/icons.js';

/** People listed in the dialog at most (a very popular post says how many more). */
const MAX_LISTED = 200;

/**
 * The line and its dialog for `postId`, live until `stop()`.
 * @returns {{element: HTMLElement, stop: () => void}}
 */
export function likedBy(ctx, postId) {
  const { hearth } = ctx;
  const me = ctx.user?.uid ?? null;
  const button = h('button', {
    type: 'button', class: 'liked-by', 'data-testid': 'liked-by', 'aria-haspopup': 'dialog',
  });
  const element = h('p', { class: 'liked-by-line', hidden: true }, button);
  /** Names by uid (`people/{uid}/full_name`, read once each, from the cache when it has it). */
  const names = new Map();
  let likers = [];
  let dialog = null;
  let stopped = false;
  let run = 0;

  const nameOf = (uid) => names.get(uid) || 'Someone';
  const readNames = (uids) => Promise.all(uids.filter((uid) => !names.has(uid)).map((uid) =>
    cachedOrRead(hearth, hearth.db.ref(`people/${uid}/full_name`)).then((snapshot) => {
      const name = snapshot.val();
      names.set(uid, typeof name === 'string' && name ? name : 'Someone');
    }, () => names.set(uid, 'Someone'))));

  async function show() {
    const current = ++run;
    // The line names three at most (the reader's own like reads "you").
    await readNames(likers.filter((uid) => uid !== me).slice(0, 3));
    if (stopped || current !== run) return;
    const words = likedByWords(likers, nameOf, me);
    element.hidden = !words;
    if (button.textContent !== words) button.textContent = words;
    if (dialog) fillDialog();
  }

  const ref = hearth.db.ref(`likes/${postId}`);
  const listener = ref.on('value', (snapshot) => {
    likers = likersOf(snapshot.val());
    show();
  }, () => {
    // Not readable (or gone with its post): the line just does not show.
    element.hidden = true;
  });

  const list = h('ul', { class: 'likers-list', role: 'list', 'data-testid': 'likers-list' });
  const more = h('p', { class: 'muted small', hidden: true });
  async function fillDialog() {
    const shown = likers.slice(0, MAX_LISTED);
    await readNames(shown);
    if (!dialog || stopped) return;
    list.replaceChildren(...shown.map((uid) => h('li', {},
      h('a', { href: `#/profile/${encodeURIComponent(uid)}`, class: 'liker', 'data-testid': 'liker', 'on:click': () => closeDialog(false) },
        avatar({ uid, full_name: nameOf(uid) }, 36), h('span', { class: 'liker-name' }, uid === me ? `${nameOf(uid)} (you)` : nameOf(uid))))));
    more.hidden = likers.length <= MAX_LISTED;
    more.textContent = `and ${likers.length - MAX_LISTED} more`;
  }

  /**
   * Closes and removes the dialog now (its `close` event comes later); focus goes back to the
   * line that opened it, unless a link in it leads elsewhere.
   */
  function closeDialog(refocus = true) {
    if (!dialog) return;
    const closing = dialog;
    dialog = null;
    if (closing.open) closing.close();
    closing.remove();
    list.replaceChildren();
    if (refocus && button.isConnected) button.focus();
  }

  button.addEventListener('click', () => {
    if (dialog || !likers.length) return;
    const close = h('button', { type: 'button', class: 'icon-button likers-close', 'aria-label': 'Close', 'data-testid': 'likers-close',
      'on:click': () => closeDialog() }, icon('close', 20));
    const opened = h('dialog', { class: 'dialog likers-dialog', 'aria-labelledby': 'likers-title', 'data-testid': 'likers-dialog' },
      h('div', { class: 'row likers-heading' }, h('h2', { id: 'likers-title' }, 'Liked by'), close), list, more);
    // Escape closes it too (the dialog's own cancel, then this).
    opened.addEventListener('close', () => {
      if (dialog === opened) closeDialog();
    });
    dialog = opened;
    document.body.append(opened);
    opened.showModal();
    fillDialog();
  });

  return {
    element,
    stop() {
      stopped = true;
      ref.off('value', listener);
      closeDialog(false);
    },
  };
}
