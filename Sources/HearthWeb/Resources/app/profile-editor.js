// Editing one's own profile on its page: the name, a short bio and the photo. A chosen photo is
// cropped square here (see /app/cropper.js), drawn at two sizes on a canvas — the picture and a
// small thumbnail — and uploaded by saveProfile in actions.js. Bad input (not an image, too
// large, a bio too long) is said in words and changes nothing.
import { h, errorNote, errorWords, Problem, busy } from '/app/ui.js';
import { MAX_BIO, MAX_NAME, bioProblem, nameProblem, saveProfile } from '/app/actions.js';
import { cropper } from '/app/cropper.js';

/** The profile picture and its thumbnail, in pixels per side. */
export const PICTURE_SIDE = 512;
export const THUMB_SIDE = 128;
/** The largest file one may pick (it is made smaller before uploading). */
const MAX_SOURCE_BYTES = 15 * 1024 * 1024;
/** What the storage rules accept for `{uid}/avatar/` files. */
const MAX_UPLOAD_BYTES = 1024 * 1024;

function jpeg(canvas, quality) {
  return new Promise((resolve, reject) => {
    canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Problem('The photo could not be made.'))), 'image/jpeg', quality);
  });
}

/** A chosen file as a bitmap, or a Problem saying why not. */
async function readImage(file) {
  if (!file.type.startsWith('image/')) throw new Problem('That file is not an image. Choose a JPEG or PNG photo.');
  if (file.size > MAX_SOURCE_BYTES) throw new Problem('That image is larger than 15 MB. Choose a smaller photo.');
  try {
    return await createImageBitmap(file, { imageOrientation: 'from-image' });
  } catch {
    throw new Problem('That image could not be read. Try a JPEG or PNG photo.');
  }
}

/**
 * The editor for `ctx.user`'s profile. `profile()` answers the profile as last read (for the
 * bio and the previous picture). Answers `{ element, open(), close() }`; `onClose` is told when
 * it closes (to move focus back).
 */
export function profileEditor(ctx, { profile, onClose }) {
  const { hearth } = ctx;
  const error = errorNote();
  const name = h('input', { type: 'text', id: 'edit-name', autocomplete: 'name', maxlength: MAX_NAME, required: true, 'data-testid': 'edit-name' });
  const bio = h('textarea', { id: 'edit-bio', rows: 3, maxlength: MAX_BIO, 'aria-describedby': 'edit-bio-counter', 'data-testid': 'edit-bio' });
  const counter = h('span', { id: 'edit-bio-counter', class: 'counter' });
  const file = h('input', { type: 'file', id: 'edit-photo', accept: 'image/*', 'data-testid': 'edit-photo' });
  const cropHolder = h('div', { class: 'crop-holder', 'data-testid': 'crop-holder', hidden: true });
  const save = h('button', { type: 'submit', class: 'button primary', 'data-testid': 'edit-save' }, 'Save profile');
  const cancel = h('button', { type: 'button', class: 'button secondary', 'data-testid': 'edit-cancel' }, 'Cancel');
  const form = h('form', { class: 'form-card stack profile-editor', novalidate: true, 'aria-labelledby': 'edit-title', 'data-testid': 'profile-editor' },
    h('h2', { id: 'edit-title' }, 'Edit your profile'),
    h('div', { class: 'field' }, h('label', { for: 'edit-name' }, 'Name'), name),
    h('div', { class: 'field' }, h('label', { for: 'edit-bio' }, 'Bio'), bio, counter),
    h('div', { class: 'field' }, h('label', { for: 'edit-photo' }, 'Profile photo'), file,
      h('span', { class: 'hint' }, 'JPEG or PNG, up to 15 MB; it is cropped square and made smaller here.')),
    cropHolder,
    error.element,
    h('div', { class: 'row end' }, cancel, save));
  const element = h('div', { id: 'profile-editor', hidden: true }, form);

  let crop = null;
  let bitmap = null;
  const showCount = () => { counter.textContent = `${[...bio.value].length} / ${MAX_BIO}`; };
  bio.addEventListener('input', showCount);

  function dropPhoto() {
    crop = null;
    bitmap?.close();
    bitmap = null;
    cropHolder.replaceChildren();
    cropHolder.hidden = true;
  }

  file.addEventListener('change', async () => {
    error.clear();
    const chosen = file.files[0];
    if (!chosen) return;
    try {
      const next = await readImage(chosen);
      dropPhoto();
      bitmap = next;
      crop = cropper(bitmap, { idPrefix: 'edit-crop' });
      cropHolder.replaceChildren(
        h('p', { class: 'small', id: 'edit-crop-title' }, 'Choose the part of the photo to show'),
        crop.element,
        h('button', { type: 'button', class: 'link-button', 'data-testid': 'edit-photo-remove', 'on:click': () => {
          dropPhoto();
          file.value = '';
          file.focus();
        } }, 'Keep the current photo'));
      cropHolder.hidden = false;
    } catch (failure) {
      // A refused file changes nothing: the photo chosen before (if any) stays.
      file.value = '';
      error.show(failure.message);
    }
  });

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    busy(save, async () => {
      error.clear();
      const newName = name.value.trim();
      const newBio = bio.value.trim();
      const why = nameProblem(newName) ?? bioProblem(newBio);
      if (why) throw new Problem(why);
      let photo = null;
      if (crop) {
        const picture = await jpeg(crop.square(PICTURE_SIDE), 0.85);
        const thumbnail = await jpeg(crop.square(THUMB_SIDE), 0.8);
        if (picture.size >= MAX_UPLOAD_BYTES || thumbnail.size >= MAX_UPLOAD_BYTES) throw new Problem('That photo is too large even when made smaller.');
        photo = { picture, thumbnail };
      }
      await saveProfile(hearth, { name: newName, bio: newBio, photo, previousPicture: profile()?.profile_picture ?? null });
      ctx.toast('Your profile was saved.', 'success');
      close();
    }, (failure) => error.show(errorWords(failure)));
  });
  cancel.addEventListener('click', () => close());
  form.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && event.target !== file) {
      event.preventDefault();
      close();
    }
  });

  function open() {
    const current = profile();
    name.value = ctx.user?.displayName ?? current?.full_name ?? '';
    bio.value = current?.bio ?? '';
    showCount();
    file.value = '';
    dropPhoto();
    error.clear();
    element.hidden = false;
    name.focus();
  }

  function close() {
    dropPhoto();
    element.hidden = true;
    onClose?.();
  }

  return { element, open, close, get isOpen() { return !element.hidden; } };
}
