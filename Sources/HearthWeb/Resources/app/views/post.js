// #/post/<id> — one post, live (as PostDetailViewModel): its photos, likes and comments.
// The reader can comment and edit or delete their own comments, like, save, share,
// report the post or others' comments (once each), and delete the post if it is theirs. What
// the server's moderation changed says so ("Edited by moderation").
import { h, errorNote, confirmDialog, toast, busy, skeleton } from '/app/ui.js';
import { authorLine, photoURL, likeButton } from '/app/components.js';
import { openPhotoViewer } from '/app/photo-viewer.js';
import {
  MAX_COMMENT, addComment, deleteComment, deletePost, editComment, hasReportedComment, hasReportedPost, photosOf, postHeadline, reportComment,
  reportPost,
  setSaved, shareLink,
} from '/app/actions.js';
import { Subscriptions } from '/app/social.js';
import { PagedList, rememberedPages, loadOlderButton, syncChildren } from '/app/paging.js';
import { markPending } from '/app/pending.js';
import { mentionsIn, richText } from '/app/rich-text.js';
import { mentionSuggestions } from '/app/mentions.js';
import { icon } from '/app/icons.js';
import { likedBy } from '/app/liked-by.js';

/** Comments shown at first, and added by each "Show earlier comments". */
const COMMENT_PAGE = 20;

export function mount(container, ctx, params) {
  const postId = params.id;
  const { hearth, user } = ctx;
  const db = hearth.db;
  // Failures show next to what failed: the post's actions, or the comments.
  const error = errorNote();
  const commentError = errorNote();
  const runShowing = (note) => (button, work) => busy(button, async () => {
    note.clear();
    await work();
  }, (failure) => note.show(failure));
  const run = runShowing(error);
  const runComment = runShowing(commentError);

  /** For signed-out readers: actions that need an account send them to sign in. */
  const needsAccount = (purpose) => {
    if (user) return false;
    ctx.requireSignIn(purpose);
    return true;
  };

  // Until the post comes: its shape in grey, and "Loading…" said once.
  const status = h('div', { role: 'status' }, h('span', { class: 'visually-hidden' }, 'Loading the post…'), skeleton('post'));
  // The error note is on the page from the start: a refused read of the post must show.
  const page = h('article', { class: 'page narrow post-detail', 'aria-labelledby': 'post-title' },
    backLink(ctx), status, error.element);
  container.replaceChildren(page);

  let post = null;
  let view = null;
  let deleting = false;
  const subscriptions = new Subscriptions();
  const listen = (query, event, callback) => subscriptions.on(query, event, callback, (failure) => {
    status.hidden = true;
    error.show(failure);
  });

  listen(db.ref(`posts/${postId}`), 'value', (snapshot) => {
    const next = snapshot.val();
    if (!next?.author) {
      if (!deleting) showMissing(post !== null);
      return;
    }
    post = next;
    view ??= build();
    view.update(post);
  });

  function showMissing(wasThere) {
    subscriptions.offAll();
    view = null;
    page.replaceChildren(
      backLink(ctx),
      h('div', { class: 'empty', 'data-testid': 'post-missing' },
        h('h1', { id: 'post-title' }, wasThere ? 'This post was deleted' : 'This post is not there'),
        h('p', {}, 'It may have been deleted by its author, or removed by a moderator.'),
        h('a', { href: '#/', class: 'button' }, 'See recent posts')));
  }

  /** The post's page, built at its first value and updated in place after. */
  function build() {
    const authorBox = h('div');
    const title = h('h1', { id: 'post-title', class: 'post-title', 'data-testid': 'post-title' });
    const photos = h('div', { class: 'photos' });
    const body = h('p', { class: 'post-body', 'data-testid': 'post-body' });
    // The server's moderation changed the title or text (the original is kept for admins).
    const moderated = moderatedNote('post-moderated');
    const like = likeButton(ctx, postId, post);
    const save = h('button', { type: 'button', class: 'chip', 'data-testid': 'save-button', 'aria-pressed': 'false' }, 'Save');
    const share = h('button', { type: 'button', class: 'chip', 'data-testid': 'share-button' }, 'Share');
    const report = h('button', { type: 'button', class: 'chip', 'data-testid': 'report-button' }, 'Report');
    const remove = h('button', { type: 'button', class: 'chip danger', 'data-testid': 'delete-post' }, 'Delete post');
    const shareBox = h('div', { class: 'share-field', hidden: true });
    const actions = h('div', { class: 'post-actions', role: 'group', 'aria-label': 'Post actions' }, like, save, share, report, remove);
    // Who liked it, under the like button (live; nothing without likes).
    const likers = likedBy(ctx, postId);
    subscriptions.add(() => likers.stop());
    const comments = commentsSection();

    let saved = false;
    let shownPhotos = '';
    const showSaved = (value) => {
      saved = value;
      save.setAttribute('aria-pressed', String(saved));
      save.textContent = saved ? 'Saved' : 'Save';
    };

    save.addEventListener('click', () => {
      if (!needsAccount('save posts')) run(save, async () => {
        await setSaved(hearth, postId, !saved);
        showSaved(!saved);
      });
    });
    share.addEventListener('click', () => sharePost(shareBox));
    // Once per reader: reported, it says so and is not reported again.
    report.addEventListener('click', async () => {
      if (needsAccount('report posts')) return;
      if (report.getAttribute('aria-disabled') === 'true') {
        toast('You have reported this post already.');
        return;
      }
      if (!await confirmDialog('Report this post to the moderators?', { confirm: 'Report' })) return;
      if (await run(report, () => reportPost(hearth, postId))) {
        showReported(report);
        toast('Thank you. The post was reported.', 'success');
      }
    });
    remove.addEventListener('click', async () => {
      if (!await confirmDialog('Delete this post, its photos and its comments? This cannot be undone.', { confirm: 'Delete', danger: true })) return;
      // The post disappearing is expected now: leave rather than say it is gone.
      deleting = true;
      if (await run(remove, () => deletePost(hearth, postId, post))) {
        toast('Your post was deleted.', 'success');
        ctx.navigate('#/mine');
      }
      deleting = false;
    });

    // Only the reader changes their saved posts: read once rather than hold a stream open.
    if (user) {
      db.ref(`saved/${user.uid}/${postId}`).get().then((snapshot) => showSaved(snapshot.exists()), (failure) => error.show(failure));
      // Whether the reader reported it already (their own report, which only they may read).
      if (user.uid !== post.author.uid) {
        hasReportedPost(hearth, postId).then((reported) => reported && showReported(report), () => {});
      }
    }

    // A post written here and not on the server yet says so under its title.
    const pendingSlot = h('div', { class: 'post-pending' });
    markPending(hearth, title, `posts/${postId}/author`, { slot: pendingSlot });
    page.replaceChildren(
      backLink(ctx),
      authorBox, title, pendingSlot, moderated, photos, body, error.element, actions, likers.element, shareBox, comments.element);

    return {
      update(next) {
        authorBox.replaceChildren(authorLine(next.author, next.timestamp, 40));
        // Without a title (a photo is a post by itself) the heading stays for screen readers only.
        title.replaceChildren(next.title ? richText(next.title, next.mentions) : postHeadline(next));
        title.classList.toggle('visually-hidden', !next.title);
        body.replaceChildren(richText(next.body ?? '', next.mentions));
        moderated.hidden = next.moderated !== true;
        const list = photosOf(next);
        const key = JSON.stringify(list.map((photo) => [photo.full, photo.alt]));
        if (key !== shownPhotos) {
          shownPhotos = key;
          const shown = list.map((photo, index) => ({
            src: photoURL(ctx, photo.full), alt: photo.alt || `Photo ${index + 1} of ${list.length} in “${postHeadline(next)}”` }));
          photos.replaceChildren(...shown.map((photo, index) => h('button', {
            type: 'button', class: 'photo-button', 'aria-label': `${photo.alt}, open full screen`,
            'on:click': (event) => openPhotoViewer(shown, index, { opener: event.currentTarget, title: postHeadline(next) }),
          }, h('img', { src: photo.src, alt: photo.alt, 'data-testid': 'post-photo' }))));
        }
        photos.hidden = list.length === 0;
        // On a wide screen the photos take the left and the rest sits beside them (app.css).
        page.classList.toggle('with-photos', list.length > 0);
        like.update(next);
        const own = user?.uid === next.author.uid;
        remove.hidden = !own;
        report.hidden = own;
      },
    };
  }

  async function sharePost(shareBox) {
    const link = shareLink(postId);
    try {
      await navigator.clipboard.writeText(link);
      toast('Link copied.', 'success');
      return;
    } catch {
      // No clipboard (an insecure origin, or refused): show the link to copy by hand.
    }
    const field = h('input', { type: 'text', readonly: true, value: link, 'aria-label': 'Link to this post', 'data-testid': 'share-link' });
    shareBox.replaceChildren(field);
    shareBox.hidden = false;
    field.focus();
    field.select();
    toast('Copy the link shown.');
  }

  /**
   * The comments, oldest first, live: the latest page, and earlier ones a page at a time
   * ("Show earlier comments" asks for the page before the oldest shown).
   */
  function commentsSection() {
    const count = h('span', { 'data-testid': 'comment-count' }, '0');
    const list = h('ol', { class: 'comment-list', 'data-testid': 'comment-list' });
    const items = new Map();
    // Comments arriving after the first load are read out; the ones already there are not.
    const announcer = h('p', { class: 'visually-hidden', 'aria-live': 'polite', 'data-testid': 'comment-announcer' });
    const earlier = loadOlderButton('Show earlier comments', () => comments.loadOlder(), 'load-older-comments');
    let loaded = false;

    const byKeyDescending = (a, b) => (a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0);
    const comments = new PagedList({
      remembered: rememberedPages('comments'),
      pageSize: COMMENT_PAGE,
      query: (cursor) => {
        const ordered = db.ref(`comments/${postId}`).orderByKey();
        return (cursor ? ordered.endBefore(...cursor) : ordered).limitToLast(COMMENT_PAGE + 1);
      },
      compare: byKeyDescending,
      cursorOf: ([id]) => [id],
      onChange: ({ entries, hasMore }) => {
        const oldestFirst = [...entries].reverse();
        const newestBefore = [...items.keys()].sort().pop() ?? '';
        const fresh = oldestFirst.filter(([id]) => !items.has(id));
        syncChildren(list, items, oldestFirst, (id, comment) => commentItem(id, comment), (item, comment) => item.update(comment));
        count.textContent = `${entries.length}${hasMore ? '+' : ''}`;
        earlier.hidden = !hasMore;
        const newest = fresh[fresh.length - 1];
        if (loaded && newest && newest[0] > newestBefore && newest[1]?.author?.uid !== user?.uid) {
          announcer.textContent = `New comment from ${newest[1]?.author?.full_name || 'Anonymous'}: ${newest[1]?.text ?? ''}`;
        }
        loaded = true;
      },
      onError: (failure) => {
        status.hidden = true;
        error.show(failure);
      },
    });
    subscriptions.add(() => comments.stop());

    const element = h('section', { class: 'comments', 'aria-labelledby': 'comments-title' },
      h('h2', { id: 'comments-title' }, 'Comments (', count, ')'),
      announcer,
      h('div', { class: 'list-footer' }, earlier),
      list,
      commentError.element,
      user ? commentForm() : h('p', { class: 'muted' }, h('a', { href: `#/signin?next=${encodeURIComponent(`#/post/${postId}`)}` }, 'Sign in'), ' to comment.'));
    return { element };
  }

  function commentForm() {
    const input = h('textarea', { id: 'comment-input', 'data-testid': 'comment-input', maxlength: MAX_COMMENT, rows: 3, required: true });
    const mentions = mentionSuggestions(hearth, input, { me: user.uid });
    const submit = h('button', { type: 'submit', class: 'button primary', 'data-testid': 'comment-submit' }, 'Comment');
    const form = h('form', { class: 'comment-form' },
      h('label', { for: 'comment-input' }, 'Add a comment'), input, mentions.element, h('div', { class: 'row end' }, submit));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const text = input.value.trim();
      if (!text) return commentError.show('Write something first.');
      if ([...text].length > MAX_COMMENT) return commentError.show('The comment is too long.');
      // Shown at once (marked until the server has it, offline too); a refusal puts the text back.
      commentError.clear();
      const named = mentionsIn(text, mentions.chosen());
      input.value = '';
      mentions.reset();
      addComment(hearth, postId, text, { postAuthor: post?.author?.uid, mentions: named }).catch((failure) => {
        commentError.show(failure);
        if (!input.value) input.value = text;
      });
    });
    return form;
  }

  function commentItem(commentId, comment) {
    const text = h('p', { class: 'comment-text', 'data-testid': 'comment-text' });
    const header = h('div');
    const moderated = moderatedNote('comment-moderated');
    const tools = h('div', { class: 'comment-tools' });
    const item = h('li', { class: 'comment', 'data-testid': 'comment', 'data-comment-id': commentId }, header, text, moderated, tools);
    let current = comment;

    const edit = h('button', { type: 'button', class: 'link-button', 'data-testid': 'edit-comment' }, 'Edit');
    const remove = h('button', { type: 'button', class: 'link-button danger', 'data-testid': 'delete-comment' }, 'Delete');
    // Others' comments can be reported, once per reader.
    const report = h('button', { type: 'button', class: 'link-button', 'data-testid': 'report-comment' }, 'Report');
    report.addEventListener('click', async () => {
      if (needsAccount('report comments')) return;
      let already = report.getAttribute('aria-disabled') === 'true';
      if (!already) {
        try {
          already = await hasReportedComment(hearth, postId, commentId);
        } catch (failure) {
          commentError.show(failure);
          return;
        }
      }
      if (already) {
        showReported(report);
        toast('You have reported this comment already.');
        return;
      }
      const by = current.author?.full_name || 'Anonymous';
      if (!await confirmDialog(`Report this comment by ${by} to the moderators?`, { confirm: 'Report' })) return;
      if (await runComment(report, () => reportComment(hearth, postId, commentId))) {
        showReported(report);
        toast('Thank you. The comment was reported.', 'success');
      }
    });
    edit.addEventListener('click', () => startEditing());
    remove.addEventListener('click', async () => {
      if (await confirmDialog('Delete your comment?', { confirm: 'Delete', danger: true })) {
        runComment(remove, () => deleteComment(hearth, postId, commentId, { postAuthor: post?.author?.uid }));
      }
    });

    function startEditing() {
      const field = h('textarea', { id: `edit-comment-${commentId}`, 'aria-label': 'Edit your comment', 'data-testid': 'edit-comment-input',
        maxlength: MAX_COMMENT, value: current.text });
      // The people it already names stay named while their names are in the text; more can be added.
      const named = mentionSuggestions(hearth, field, { me: user.uid, known: current.mentions ?? {} });
      const saveButton = h('button', { type: 'submit', class: 'button primary small', 'data-testid': 'save-comment' }, 'Save');
      const form = h('form', { class: 'comment-form' }, field, named.element,
        h('div', { class: 'row end' },
          h('button', { type: 'button', class: 'button secondary small', 'on:click': () => form.replaceWith(text) }, 'Cancel'), saveButton));
      form.addEventListener('submit', async (event) => {
        event.preventDefault();
        const trimmed = field.value.trim();
        if (!trimmed || [...trimmed].length > MAX_COMMENT) return commentError.show('Write 1 to 2000 characters.');
        if (await runComment(saveButton, () => editComment(hearth, postId, commentId, trimmed, named.chosen()))) form.replaceWith(text);
      });
      text.replaceWith(form);
      field.focus();
    }

    item.update = (next) => {
      current = next;
      header.replaceChildren(authorLine(next.author, next.timestamp, 28));
      text.replaceChildren(richText(next.text ?? '', next.mentions));
      moderated.hidden = next.moderated !== true;
      tools.replaceChildren(...(user?.uid === next.author?.uid ? [edit, remove] : [report]));
    };
    item.update(comment);
    // Written here and not on the server yet.
    return markPending(hearth, item, `comments/${postId}/${commentId}`);
  }

  return () => subscriptions.offAll();
}

/** "Edited by moderation": shown (not hidden) when the server's moderation changed the text. */
function moderatedNote(testId) {
  return h('p', { class: 'moderated-note', 'data-testid': testId, hidden: true },
    icon('shield', 16), h('span', {}, 'Edited by moderation'));
}

/** A report button once the reader has reported: it says so, and reports nothing more. */
function showReported(button) {
  button.textContent = 'Reported';
  button.setAttribute('aria-disabled', 'true');
}

/**
 * Back where the reader came from (the feed, a profile, a tag: Back, which keeps its place), or
 * to the recent posts when the post was opened directly.
 */
function backLink(ctx) {
  if (!ctx.cameFromApp) return h('a', { href: '#/', class: 'small back-link', 'data-testid': 'back-link' }, '← All posts');
  return h('a', {
    href: ctx.cameFromApp, class: 'small back-link', 'data-testid': 'back-link',
    'on:click': (event) => {
      event.preventDefault();
      history.back();
    },
  }, '← Back');
}
