// #/compose — a new post, as ComposeViewModel: a title, a body and up to three photos. Each
// photo's thumbnail is drawn here on a canvas; the full image and the thumbnail are uploaded
// with progress, then the post is published in one atomic multi-path write.
import { h, errorNote, errorWords, signInPrompt, Problem } from '/app/ui.js';
import { ServerValue } from '/lib/hearth.js';
import { MAX_BODY, MAX_PHOTOS, MAX_TITLE, authorOf, publishPost } from '/app/actions.js';
import { mentionSuggestions } from '/app/mentions.js';
import { mentionsIn } from '/app/rich-text.js';

/** The largest full image and thumbnail the storage rules accept. */
const MAX_FULL_BYTES = 5 * 1024 * 1024;
const MAX_THUMB_BYTES = 1024 * 1024;
/** Larger photos are scaled down to this many pixels on their long side. */
const FULL_SIDE = 2048;
const THUMB_SIDE = 640;

/** Why the post cannot be sent yet (ComposeViewModel.problem's words), or null. */
function problem(title, body) {
  if (!title) return 'Add a title.';
  if (!body) return 'Say something in the post.';
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
    return { full, thumbnail, contentType: 'image/jpeg', preview: URL.createObjectURL(thumbnail) };
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
  const title = h('input', { type: 'text', id: 'compose-title', 'data-testid': 'compose-title', maxlength: MAX_TITLE, required: true, autocomplete: 'off' });
  const body = h('textarea', { id: 'compose-body', 'data-testid': 'compose-body', maxlength: MAX_BODY, rows: 6, required: true });
  const bodyCounter = h('span', { class: 'counter', 'aria-live': 'off' }, `0 / ${MAX_BODY}`);
  const mentions = mentionSuggestions(hearth, body, { me: user.uid });
  const fileInput = h('input', { type: 'file', id: 'compose-photos', 'data-testid': 'compose-photos', accept: 'image/*', multiple: true });
  const previews = h('ul', { class: 'photo-previews', 'aria-label': 'Chosen photos' });
  const progress = h('progress', { max: 1, value: 0, 'data-testid': 'compose-progress', 'aria-labelledby': 'compose-progress-label' });
  const progressLabel = h('span', { id: 'compose-progress-label', class: 'small muted' }, 'Uploading photos…');
  const progressBox = h('div', { class: 'stack', hidden: true, role: 'status' }, progressLabel, progress);
  const submit = h('button', { type: 'submit', class: 'button primary', 'data-testid': 'compose-submit' }, 'Post');
  const form = h('form', { class: 'form-card stack', novalidate: true },
    h('div', { class: 'field' }, h('label', { for: 'compose-title' }, 'Title'), title),
    h('div', { class: 'field' }, h('label', { for: 'compose-body' }, 'What is it about?'), body, mentions.element, bodyCounter,
      h('span', { class: 'hint' }, 'Tag it with #hashtags to make it easy to find; type @ to mention someone.')),
    h('div', { class: 'field' },
      h('label', { for: 'compose-photos' }, `Photos (up to ${MAX_PHOTOS})`), fileInput,
      h('span', { class: 'hint' }, 'JPEG or PNG; large photos are made smaller before uploading.')),
    previews, error.element, progressBox,
    h('div', { class: 'row end' }, h('a', { href: '#/', class: 'button secondary' }, 'Cancel'), submit));
  container.replaceChildren(h('section', { class: 'page narrow' }, h('h1', {}, 'New post'), form));

  body.addEventListener('input', () => { bodyCounter.textContent = `${[...body.value].length} / ${MAX_BODY}`; });

  function drawPreviews() {
    previews.replaceChildren(...photos.map((photo, index) => h('li', { class: 'photo-preview', 'data-testid': 'photo-preview' },
      h('img', { src: photo.preview, alt: `Photo ${index + 1}` }),
      h('button', { type: 'button', 'aria-label': `Remove photo ${index + 1}`, 'on:click': () => {
        URL.revokeObjectURL(photos[index].preview);
        photos.splice(index, 1);
        drawPreviews();
      } }, 'Remove'))));
    fileInput.disabled = photos.length >= MAX_PHOTOS;
  }

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
    const why = problem(trimmedTitle, trimmedBody);
    if (why) {
      error.show(why);
      (trimmedTitle ? body : title).focus();
      return;
    }
    error.clear();
    submit.disabled = true;
    submit.setAttribute('aria-busy', 'true');
    try {
      const id = await post(trimmedTitle, trimmedBody);
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
   * refuses it, that is said and the uploaded photos are removed.
   */
  async function post(postTitle, postBody) {
    const author = authorOf(user);
    const id = hearth.db.ref('posts').push().key;
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
      const stored = [];
      for (const [index, photo] of photos.entries()) {
        const full = `${author.uid}/full/${id}/${index}.jpg`;
        const thumb = `${author.uid}/thumb/${id}/${index}.jpg`;
        await upload(full, photo.full);
        await upload(thumb, photo.thumbnail);
        stored.push({ full, thumb });
      }
      const value = { author, title: postTitle, body: postBody, timestamp: ServerValue.TIMESTAMP, starCount: 0 };
      // The people chosen from the suggestions whose "@Full Name" is still in the post.
      const named = mentionsIn(`${postTitle} ${postBody}`, mentions.chosen());
      if (Object.keys(named).length) value.mentions = named;
      if (stored.length) value.photos = stored;
      publishPost(hearth, id, value).catch(async (failure) => {
        ctx.toast(errorWords(failure), 'error');
        await Promise.allSettled(uploaded.map((path) => hearth.storage.ref(path).delete()));
      });
      return id;
    } catch (failure) {
      // Nothing points at the uploaded files: remove them.
      await Promise.allSettled(uploaded.map((path) => hearth.storage.ref(path).delete()));
      progressBox.hidden = true;
      throw failure;
    }
  }

  return () => {
    mounted = false;
    for (const photo of photos) URL.revokeObjectURL(photo.preview);
  };
}
