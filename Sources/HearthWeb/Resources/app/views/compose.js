// #/compose — a new post, as ComposeViewModel: up to three photos first (previews in the order
// chosen, each movable, removable and described by its own alt text), then a title and a body,
// both optional when there is a photo. Each photo's thumbnail is drawn here on a canvas; the
// full image and the thumbnail are uploaded with progress, then the post is published in one
// atomic multi-path write. Offline, a post with photos waits in the post queue (post-queue.js)
// and is sent when the connection is back.
import { h, errorNote, errorWords, signInPrompt, Problem } from '/app/ui.js';
import { icon } from '/app/icons.js';
import { ServerValue } from '/lib/hearth.js';
import { MAX_ALT, MAX_BODY, MAX_PHOTOS, MAX_TITLE, authorOf, publishPost } from '/app/actions.js';
import { photoPaths, publishedValue } from '/app/post-queue.js';
import { mentionSuggestions } from '/app/mentions.js';
import { mentionsIn } from '/app/rich-text.js';

/** The largest full image and thumbnail the storage rules accept. */
const MAX_FULL_BYTES = 5 * 1024 * 1024;
const MAX_THUMB_BYTES = 1024 * 1024;
/** Larger photos are scaled down to this many pixels on their long side. */
const FULL_SIDE = 2048;
const THUMB_SIDE = 640;

/**
 * Why the post cannot be sent yet (ComposeViewModel.problem's words), or null: with a photo,
 * title and body are optional; without one, both are needed.
 */
export function problem(title, body, photoCount = 0) {
  if (!photoCount && !title && !body) return 'Add a photo, or say something.';
  if (!photoCount && !title) return 'Add a title.';
  if (!photoCount && !body) return 'Say something in the post.';
  if ([...title].length > MAX_TITLE) return `The title is longer than ${MAX_TITLE} characters.`;
  if ([...body].length > MAX_BODY) return `The post is longer than ${MAX_BODY} characters.`;
  return null;
}

/** The image drawn at most `side` pixels on its long side, as a JPEG. */
async function encodeJPEG(bitmap, side, quality) {
  const scale = Math.min(1, side / Math.max(bitmap.width, bitmap.height));
  const canvas = document.createElement('canvas');
  canvas.width = Math.max(1, Math.round(bitmap.width * scale));
  canvas.height = Math.max(1, Math.round(bitmap.height * scale));
  const context = canvas.getContext('2d');
  // JPEG has no transparency: put transparent images on white rather than black.
  context.fillStyle = '#fff';
  context.fillRect(0, 0, canvas.width, canvas.height);
  context.drawImage(bitmap, 0, 0, canvas.width, canvas.height);
  return new Promise((resolve, reject) => {
    canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Problem('The image could not be encoded.'))), 'image/jpeg', quality);
  });
}

/**
 * A chosen file as a photo draft: the full image (the original JPEG when it is small enough,
 * otherwise re-encoded) and a thumbnail, both JPEG.
 */
async function preparePhoto(file) {
  if (!file.type.startsWith('image/')) throw new Problem('Only images can be added.');
  let bitmap;
  try {
    bitmap = await createImageBitmap(file, { imageOrientation: 'from-image' });
  } catch {
    throw new Problem('That image could not be read. Try a JPEG or PNG photo.');
  }
  try {
    const keepOriginal = file.type === 'image/jpeg' && file.size < MAX_FULL_BYTES && Math.max(bitmap.width, bitmap.height) <= FULL_SIDE;
    const full = keepOriginal ? file : await encodeJPEG(bitmap, FULL_SIDE, 0.85);
    const thumbnail = await encodeJPEG(bitmap, THUMB_SIDE, 0.8);
    if (full.size >= MAX_FULL_BYTES) throw new Problem('That photo is larger than 5 MB.');
    if (thumbnail.size >= MAX_THUMB_BYTES) throw new Problem('That thumbnail is larger than 1 MB.');
    return { full, thumbnail, contentType: 'image/jpeg', alt: '', preview: URL.createObjectURL(thumbnail) };
  } finally {
    bitmap.close();
  }
}

export function mount(container, ctx) {
  const { hearth, user } = ctx;
  if (!user) {
    container.replaceChildren(signInPrompt('New post', 'write a post'));
    return () => {};
  }

  const photos = [];
  let mounted = true;
  const error = errorNote();
  const title = h('input', { type: 'text', id: 'compose-title', 'data-testid': 'compose-title', maxlength: MAX_TITLE, autocomplete: 'off' });
  const body = h('textarea', { id: 'compose-body', 'data-testid': 'compose-body', maxlength: MAX_BODY, rows: 5 });
  const titleLabel = h('label', { for: 'compose-title' });
  const bodyLabel = h('label', { for: 'compose-body' });
  const bodyCounter = h('span', { class: 'counter', 'aria-live': 'off' }, `0 / ${MAX_BODY}`);
  const mentions = mentionSuggestions(hearth, body, { me: user.uid });
  const fileInput = h('input', { type: 'file', id: 'compose-photos', 'data-testid': 'compose-photos', accept: 'image/*', multiple: true,
    class: 'photo-picker-input' });
  const pickerLabel = h('span', { class: 'photo-picker-words' });
  const picker = h('div', { class: 'photo-picker', 'data-testid': 'compose-picker' },
    h('label', { for: 'compose-photos', class: 'photo-picker-label' }, icon('camera', 28), pickerLabel), fileInput);
  const previews = h('ol', { class: 'photo-previews', 'aria-label': 'Chosen photos', 'data-testid': 'photo-previews' });
  // Moves and removals are said out loud: the focus stays on a button of the photo that moved.
  const announcer = h('p', { class: 'visually-hidden', 'aria-live': 'polite' });
  const progress = h('progress', { max: 1, value: 0, 'data-testid': 'compose-progress', 'aria-labelledby': 'compose-progress-label' });
  const progressLabel = h('span', { id: 'compose-progress-label', class: 'small muted' }, 'Uploading photos…');
  const progressBox = h('div', { class: 'stack', hidden: true, role: 'status' }, progressLabel, progress);
  const submit = h('button', { type: 'submit', class: 'button primary', 'data-testid': 'compose-submit' }, 'Post');
  const form = h('form', { class: 'form-card stack compose-form', novalidate: true },
    h('div', { class: 'field' }, picker,
      h('span', { class: 'hint' }, `Up to ${MAX_PHOTOS}, JPEG or PNG; large photos are made smaller before uploading.`)),
    previews, announcer,
    h('div', { class: 'field' }, titleLabel, title),
    h('div', { class: 'field' }, bodyLabel, body, mentions.element, bodyCounter,
      h('span', { class: 'hint' }, 'Tag it with #hashtags to make it easy to find; type @ to mention someone.')),
    error.element, progressBox,
    h('div', { class: 'row end' }, h('a', { href: '#/', class: 'button secondary' }, 'Cancel'), submit));
  container.replaceChildren(h('section', { class: 'page narrow' }, h('h1', {}, 'New post'), form));

  body.addEventListener('input', () => { bodyCounter.textContent = `${[...body.value].length} / ${MAX_BODY}`; });

  /** Moves photo `index` by `step` (−1 earlier, +1 later), keeping the focus on the same button. */
  function move(index, step, focusKey) {
    const target = index + step;
    if (target < 0 || target >= photos.length) return;
    photos.splice(target, 0, photos.splice(index, 1)[0]);
    drawPreviews();
    announcer.textContent = `Photo moved to position ${target + 1} of ${photos.length}.`;
    const button = previews.children[target]?.querySelector(`[data-action="${focusKey}"]:not(:disabled)`)
      ?? previews.children[target]?.querySelector('[data-action]:not(:disabled)');
    button?.focus();
  }

  function remove(index) {
    URL.revokeObjectURL(photos[index].preview);
    photos.splice(index, 1);
    drawPreviews();
    announcer.textContent = `Photo removed; ${photos.length} left.`;
    (previews.children[Math.min(index, photos.length - 1)]?.querySelector('[data-action="remove"]') ?? fileInput).focus();
  }

  function drawPreviews() {
    previews.replaceChildren(...photos.map((photo, index) => {
      const number = index + 1;
      const altId = `compose-alt-${index}`;
      const alt = h('textarea', { id: altId, rows: 2, maxlength: MAX_ALT, 'data-testid': 'photo-alt',
        placeholder: 'What is in the photo?', 'on:input': () => { photo.alt = alt.value; image.alt = altText(photo, index); } });
      alt.value = photo.alt;
      const image = h('img', { src: photo.preview, alt: altText(photo, index) });
      const button = (action, label, words, disabled, onClick) => h('button', { type: 'button', class: 'button secondary small',
        'data-action': action, 'data-testid': `photo-${action}`, 'aria-label': label, disabled, 'on:click': onClick }, words);
      return h('li', { class: 'photo-preview', 'data-testid': 'photo-preview' },
        h('div', { class: 'photo-preview-image' }, image, h('span', { class: 'photo-number', 'aria-hidden': 'true' }, String(number))),
        h('div', { class: 'photo-preview-edit stack' },
          h('div', { class: 'field' }, h('label', { for: altId }, `Describe photo ${number} (alt text, optional)`), alt),
          h('div', { class: 'row wrap' },
            button('earlier', `Move photo ${number} earlier`, '← Earlier', index === 0, () => move(index, -1, 'earlier')),
            button('later', `Move photo ${number} later`, 'Later →', index === photos.length - 1, () => move(index, 1, 'later')),
            button('remove', `Remove photo ${number}`, 'Remove', false, () => remove(index)))));
    }));
    previews.hidden = photos.length === 0;
    fileInput.disabled = photos.length >= MAX_PHOTOS;
    picker.classList.toggle('full', photos.length >= MAX_PHOTOS);
    pickerLabel.textContent = photos.length >= MAX_PHOTOS ? `${MAX_PHOTOS} photos chosen (the most a post has)`
      : photos.length ? `Add another photo (${photos.length} of ${MAX_PHOTOS})` : `Add photos (up to ${MAX_PHOTOS})`;
    // A photo is a post by itself: the words become optional.
    titleLabel.textContent = photos.length ? 'Title (optional)' : 'Title';
    bodyLabel.textContent = photos.length ? 'Say something (optional)' : 'What is it about?';
  }
  drawPreviews();

  fileInput.addEventListener('change', async () => {
    error.clear();
    const files = [...fileInput.files];
    fileInput.value = '';
    for (const file of files) {
      if (photos.length >= MAX_PHOTOS) {
        error.show(`A post has at most ${MAX_PHOTOS} photos.`);
        break;
      }
      try {
        const photo = await preparePhoto(file);
        // Left the page, or another choice filled the post meanwhile: drop it.
        if (!mounted || photos.length >= MAX_PHOTOS) {
          URL.revokeObjectURL(photo.preview);
          if (mounted) error.show(`A post has at most ${MAX_PHOTOS} photos.`);
          break;
        }
        photos.push(photo);
        drawPreviews();
      } catch (failure) {
        error.show(failure.message);
      }
    }
  });

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const trimmedTitle = title.value.trim();
    const trimmedBody = body.value.trim();
    const why = problem(trimmedTitle, trimmedBody, photos.length);
    if (why) {
      error.show(why);
      (photos.length || trimmedTitle || trimmedBody ? (trimmedTitle ? body : title) : fileInput).focus();
      return;
    }
    error.clear();
    submit.disabled = true;
    submit.setAttribute('aria-busy', 'true');
    try {
      const { id, queued } = await post(trimmedTitle, trimmedBody);
      if (queued) {
        ctx.toast('Saved. It will be posted with its photos when the connection is back.', 'success');
        if (mounted) ctx.navigate('#/');
        return;
      }
      // Offline the post is kept and shown as waiting; it is sent when the connection is back.
      ctx.toast(hearth.isOnline ? 'Posted.' : 'Saved. It will be posted when the connection is back.', 'success');
      // Someone who went elsewhere while it uploaded stays where they are.
      if (mounted) ctx.navigate(`#/post/${id}`);
    } catch (failure) {
      error.show(errorWords(failure));
      submit.disabled = false;
      submit.removeAttribute('aria-busy');
    }
  });

  /**
   * Uploads the photos and publishes the post, answering its ID once the post is written here
   * (shown at once; the server gets it now, or when the connection is back). If the server
   * refuses it, that is said and the uploaded photos are removed. A post with photos that
   * cannot reach the server waits in the post queue instead (`queued`).
   */
  async function post(postTitle, postBody) {
    const author = authorOf(user);
    const id = hearth.db.ref('posts').push().key;
    const value = { author, title: postTitle, body: postBody, timestamp: ServerValue.TIMESTAMP, starCount: 0 };
    // The people chosen from the suggestions whose "@Full Name" is still in the post.
    const named = mentionsIn(`${postTitle} ${postBody}`, mentions.chosen());
    if (Object.keys(named).length) value.mentions = named;
    const entry = { id, uid: author.uid, value, photos: photos.map(({ full, thumbnail, alt }) => ({ full, thumbnail, alt: alt.trim() })) };
    const queue = async () => {
      await ctx.postQueue.add(id, value, entry.photos);
      return { id, queued: true };
    };
    if (photos.length && !hearth.isOnline && ctx.postQueue?.available) return queue();

    const total = photos.reduce((sum, photo) => sum + photo.full.size + photo.thumbnail.size, 0);
    let done = 0;
    const uploaded = [];
    const upload = async (path, blob) => {
      await hearth.storage.ref(path).put(blob, { contentType: 'image/jpeg' }, (fraction) => {
        progress.value = total ? (done + fraction * blob.size) / total : 1;
        progressLabel.textContent = `Uploading photos… ${Math.round(progress.value * 100)}%`;
      });
      uploaded.push(path);
      done += blob.size;
    };
    progressBox.hidden = photos.length === 0;
    try {
      for (const [index, photo] of photos.entries()) {
        const paths = photoPaths(author.uid, id, index);
        await upload(paths.full, photo.full);
        await upload(paths.thumb, photo.thumbnail);
      }
      publishPost(hearth, id, publishedValue(entry)).catch(async (failure) => {
        ctx.toast(errorWords(failure), 'error');
        await Promise.allSettled(uploaded.map((path) => hearth.storage.ref(path).delete()));
      });
      return { id, queued: false };
    } catch (failure) {
      progressBox.hidden = true;
      // The connection went while uploading: the post waits, and the queue sends it all again.
      if (failure?.code === 'network' && ctx.postQueue?.available) return queue();
      // Nothing points at the uploaded files: remove them.
      await Promise.allSettled(uploaded.map((path) => hearth.storage.ref(path).delete()));
      throw failure;
    }
  }

  return () => {
    mounted = false;
    for (const photo of photos) URL.revokeObjectURL(photo.preview);
  };
}

/** A chosen photo's alt text: what was written, or its number until then. */
function altText(photo, index) {
  return photo.alt.trim() || `Photo ${index + 1}`;
}
