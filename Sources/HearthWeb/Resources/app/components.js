// Pieces of post lists shared by the views: a post card (with a working like button), a
// grid of post tiles, and an author line.
import { h, avatar, agoTime, toast, errorWords, counted } from '/app/ui.js';
import { toggleLike, photosOf, postHeadline } from '/app/actions.js';
import { icon } from '/app/icons.js';
import { markPending } from '/app/pending.js';

/** The URL of a photo stored at `path` (the app's photos are public to read). */
export function photoURL(ctx, path) {
  return ctx.hearth.storage.ref(path).mediaURL();
}

/** The author's picture and name (linking to their profile) and, optionally, when they wrote. */
export function authorLine(author, timestamp, size = 32) {
  return h('div', { class: 'author-line' },
    avatar(author, size),
    h('span', { class: 'author-text' },
      h('a', { href: `#/profile/${encodeURIComponent(author?.uid ?? '')}`, class: 'author-name' }, author?.full_name || 'Anonymous'),
      typeof timestamp === 'number' ? agoTime(timestamp, { class: 'muted' }) : null));
}

/**
 * A post's one like toggle (a heart, its count, pressed when the reader likes it).
 * `update(post)` shows a newer version of the post (live counts); a click likes or unlikes it
 * at once in both data shapes (shown while it waits to be sent, offline too; retried if
 * someone else liked in between, as PostActions does).
 */
export function likeButton(ctx, postId, post) {
  const count = h('span', { class: 'count', 'data-testid': 'like-count' });
  const button = h('button', { type: 'button', class: 'chip like', 'data-testid': 'like-button' }, icon('heart', 18), count);
  let current = post;
  let waiting = false;
  const show = () => {
    const liked = current?.stars?.[ctx.user?.uid] === true;
    const likes = current?.starCount ?? 0;
    button.setAttribute('aria-pressed', String(liked));
    // Named after its post: a list of cards is not a list of identical "Like" buttons.
    const title = current ? `“${postHeadline(current)}”` : 'this post';
    button.setAttribute('aria-label', `Like ${title} (${counted(likes, 'like')})${waiting ? ', waiting to be sent' : ''}`);
    count.textContent = String(likes);
  };
  const update = (next) => {
    current = next;
    show();
  };
  button.addEventListener('click', async () => {
    if (!ctx.user) {
      ctx.requireSignIn('like posts');
      return;
    }
    try {
      // The post as shown (with this reader's own pending likes) is where the toggle starts.
      await toggleLike(ctx.hearth, postId, { known: current });
    } catch (error) {
      toast(errorWords(error), 'error');
    }
  });
  if (ctx.user) {
    markPending(ctx.hearth, button, `posts/${postId}/stars/${ctx.user.uid}`, {
      label: 'not sent',
      onChange: (pending) => {
        waiting = pending;
        show();
      },
    });
  }
  update(post);
  button.update = update;
  return button;
}

/**
 * A post in a list: photo thumbnail, title, start of the text (and "Edited by moderation" when
 * the server's moderation changed it), author, time and like button.
 * `card.update(post)` shows a newer version in place (the list's live updates).
 */
export function postCard(ctx, postId, post) {
  const link = `#/post/${encodeURIComponent(postId)}`;
  const like = likeButton(ctx, postId, post);
  const media = h('a', { href: link, class: 'card-media', tabindex: '-1', 'aria-hidden': 'true' });
  const title = h('a', { href: link, class: 'card-title' });
  const excerpt = h('p', { class: 'card-excerpt' });
  const moderated = h('p', { class: 'moderated-note', 'data-testid': 'card-moderated', hidden: true },
    icon('shield', 16), h('span', {}, 'Edited by moderation'));
  const author = h('div', { class: 'card-author' });
  // How many comments (kept by the server in the post), opening the post's talk.
  const commentCount = h('span', { class: 'count', 'data-testid': 'comment-count' });
  const comments = h('a', { href: link, class: 'chip comments-link', 'data-testid': 'comments-link' }, icon('chats', 18), commentCount);
  const card = h('article', { class: 'card post-card', 'data-testid': 'post-card', 'data-post-id': postId },
    media,
    h('div', { class: 'card-body' },
      h('h2', { class: 'card-heading' }, title),
      moderated,
      excerpt,
      h('div', { class: 'card-footer' }, author, h('div', { class: 'card-actions' }, comments, like))));
  // A post written here and not yet on the server (its creation, not its likes).
  markPending(ctx.hearth, card, `posts/${postId}/author`, { slot: card.querySelector('.card-body') });

  card.update = (next) => {
    const thumb = photosOf(next)[0]?.thumb;
    const current = media.querySelector('img');
    if (thumb && current?.dataset.path !== thumb) {
      media.replaceChildren(h('img', { src: photoURL(ctx, thumb), alt: '', loading: 'lazy', 'data-path': thumb }));
    } else if (!thumb) {
      // Without a photo, the text itself fills the picture's place.
      media.replaceChildren(h('span', {}, next.body ?? ''));
    }
    media.classList.toggle('text-only', !thumb);
    // The excerpt repeats nothing: a post without a title is named by its body's first line.
    excerpt.hidden = !thumb || !next.title;
    title.textContent = postHeadline(next);
    moderated.hidden = next.moderated !== true;
    // The excerpt is clipped to a few lines: links in it could be focused out of sight, so it
    // stays plain text (the post's page has the links).
    excerpt.textContent = next.body ?? '';
    author.replaceChildren(authorLine(next.author, next.timestamp, 28));
    const count = Number.isInteger(next.commentCount) && next.commentCount > 0 ? next.commentCount : 0;
    commentCount.textContent = String(count);
    comments.setAttribute('aria-label', `${counted(count, 'comment')} on “${postHeadline(next)}”`);
    like.update(next);
  };
  card.update(post);
  return card;
}

/**
 * A grid of square tiles (a profile's posts): the thumbnail, or the title for posts without
 * photos, each linking to the post, with its like count.
 * @param {Array<[string, object]>} entries [postId, post] pairs in display order
 */
export function postGrid(ctx, entries) {
  return h('ul', { class: 'post-grid', role: 'list' },
    entries.map(([postId, post]) => {
      const thumb = photosOf(post)[0]?.thumb;
      const likes = post.starCount ?? 0;
      return h('li', {},
        h('a', { href: `#/post/${encodeURIComponent(postId)}`, class: 'tile', 'data-testid': 'post-tile',
          'aria-label': `${postHeadline(post)}, ${counted(likes, 'like')}` },
          thumb ? h('img', { src: photoURL(ctx, thumb), alt: '', loading: 'lazy' }) : h('span', { class: 'tile-title' }, postHeadline(post)),
          h('span', { class: 'tile-stars', 'aria-hidden': 'true' }, `♥ ${likes}`)));
    }));
}

/**
 * The signed-in person's posts with photos made offline and waiting for the connection (the
 * post queue), above a list of posts: each with its first photo, "Waiting to send" and Cancel.
 * Answers `{ element, stop }`.
 */
export function queuedPosts(ctx) {
  const list = h('ul', { class: 'queued-posts', 'aria-label': 'Posts waiting to be sent', 'data-testid': 'queued-posts', hidden: true });
  let previews = [];
  const forget = () => {
    for (const url of previews) URL.revokeObjectURL(url);
    previews = [];
  };
  const stop = ctx.postQueue?.observe((entries) => {
    forget();
    list.hidden = entries.length === 0;
    list.replaceChildren(...entries.map((entry) => {
      const first = entry.photos[0]?.thumbnail;
      const url = first ? URL.createObjectURL(first) : null;
      if (url) previews.push(url);
      const name = postHeadline({ ...entry.value, photos: entry.photos.map(() => ({ full: 'x', thumb: 'x' })) });
      return h('li', { class: 'queued-post card', 'data-testid': 'queued-post' },
        url ? h('img', { src: url, alt: entry.photos[0].alt || '' }) : null,
        h('div', { class: 'stack' },
          h('strong', {}, name),
          h('span', { class: 'pending-note' }, `Waiting to send, with ${counted(entry.photos.length, 'photo')}: it is posted when the connection is back.`)),
        h('button', { type: 'button', class: 'button secondary small', 'data-testid': 'queued-post-cancel',
          'aria-label': `Cancel the post “${name}”`, 'on:click': () => ctx.postQueue.cancel(entry.id) }, 'Cancel'));
    }));
  }) ?? (() => {});
  return { element: list, stop: () => { stop(); forget(); } };
}
