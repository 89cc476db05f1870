// A post's photos full screen: one at a time in a modal dialog, with previous/next (buttons,
// arrow keys, a swipe), zoom (buttons, + and −, a double click or tap, a pinch, Ctrl and the
// wheel) and panning a zoomed photo by dragging. Escape or the close button ends it and gives
// focus back to the photo that opened it.
import { h } from '/app/ui.js';

const MAX_ZOOM = 4;
/** How far a finger must travel sideways, in CSS pixels, to count as a swipe. */
const SWIPE_DISTANCE = 50;

/**
 * Opens the viewer.
 * @param {Array<{src: string, alt: string}>} photos
 * @param {number} start the index shown first
 * @param {{opener?: HTMLElement, title?: string}} [options]
 * @returns {HTMLDialogElement} the open dialog (for tests)
 */
export function openPhotoViewer(photos, start, { opener, title = 'Photos' } = {}) {
  let index = Math.min(Math.max(0, start), photos.length - 1);
  const view = { scale: 1, x: 0, y: 0 };

  const image = h('img', { class: 'viewer-image', 'data-testid': 'viewer-image', draggable: 'false' });
  const stage = h('div', { class: 'viewer-stage', 'data-testid': 'viewer-stage' }, image);
  const counter = h('p', { class: 'viewer-counter', 'aria-live': 'polite', 'data-testid': 'viewer-counter' });
  const previous = h('button', { type: 'button', class: 'viewer-button viewer-previous', 'aria-label': 'Previous photo',
    'data-testid': 'viewer-previous', 'on:click': () => show(index - 1) }, '‹');
  const next = h('button', { type: 'button', class: 'viewer-button viewer-next', 'aria-label': 'Next photo',
    'data-testid': 'viewer-next', 'on:click': () => show(index + 1) }, '›');
  const zoomIn = h('button', { type: 'button', class: 'viewer-button', 'aria-label': 'Zoom in', 'data-testid': 'viewer-zoom-in',
    'on:click': () => zoomTo(view.scale * 1.5) }, '+');
  const zoomOut = h('button', { type: 'button', class: 'viewer-button', 'aria-label': 'Zoom out', 'data-testid': 'viewer-zoom-out',
    'on:click': () => zoomTo(view.scale / 1.5) }, '−');
  const close = h('button', { type: 'button', class: 'viewer-button viewer-close', 'aria-label': 'Close',
    'data-testid': 'viewer-close', 'on:click': () => dialog.close() }, '×');
  const heading = h('h2', { id: 'viewer-title', class: 'visually-hidden' }, title);
  const dialog = h('dialog', { class: 'photo-viewer', 'aria-labelledby': 'viewer-title', 'data-testid': 'photo-viewer' },
    heading,
    h('div', { class: 'viewer-bar' }, counter, h('div', { class: 'viewer-tools' }, zoomOut, zoomIn, close)),
    stage,
    photos.length > 1 ? [previous, next] : null);

  function apply() {
    image.style.transform = `translate(${view.x}px, ${view.y}px) scale(${view.scale})`;
    image.dataset.scale = String(Math.round(view.scale * 100) / 100);
    stage.classList.toggle('zoomed', view.scale > 1);
    zoomOut.disabled = view.scale <= 1;
    zoomIn.disabled = view.scale >= MAX_ZOOM;
  }

  function zoomTo(scale) {
    view.scale = Math.min(MAX_ZOOM, Math.max(1, scale));
    if (view.scale === 1) Object.assign(view, { x: 0, y: 0 });
    apply();
    if (document.activeElement?.disabled) close.focus();
  }

  function show(target) {
    if (target < 0 || target >= photos.length) return;
    index = target;
    Object.assign(view, { scale: 1, x: 0, y: 0 });
    image.src = photos[index].src;
    image.alt = photos[index].alt;
    counter.textContent = `Photo ${index + 1} of ${photos.length}`;
    previous.disabled = index === 0;
    next.disabled = index === photos.length - 1;
    apply();
    // A button that just became disabled would drop focus out of the dialog.
    if (document.activeElement?.disabled) (previous.disabled ? next : previous).focus();
  }

  dialog.addEventListener('keydown', (event) => {
    if (event.key === 'ArrowLeft') show(index - 1);
    else if (event.key === 'ArrowRight') show(index + 1);
    else if (event.key === '+' || event.key === '=') zoomTo(view.scale * 1.5);
    else if (event.key === '-') zoomTo(view.scale / 1.5);
    else if (event.key === '0') zoomTo(1);
    else return;
    event.preventDefault();
  });
  stage.addEventListener('dblclick', () => zoomTo(view.scale > 1 ? 1 : 2));
  stage.addEventListener('wheel', (event) => {
    if (!event.ctrlKey) return;
    event.preventDefault();
    zoomTo(view.scale * (event.deltaY < 0 ? 1.2 : 1 / 1.2));
  }, { passive: false });
  followPointers(stage, {
    pinch: (ratio) => zoomTo(view.scale * ratio),
    drag: (dx, dy) => {
      if (view.scale <= 1) return;
      view.x += dx;
      view.y += dy;
      apply();
    },
    swipe: (dx) => {
      if (view.scale > 1) return;
      show(dx < 0 ? index + 1 : index - 1);
    },
    tap: (() => {
      let last = 0;
      return (pointerType) => {
        // Touch has no dblclick: two taps close together zoom.
        if (pointerType !== 'touch') return;
        const now = performance.now();
        if (now - last < 300) zoomTo(view.scale > 1 ? 1 : 2);
        last = now;
      };
    })(),
  });

  dialog.addEventListener('close', () => {
    dialog.remove();
    opener?.focus();
  });
  document.body.append(dialog);
  show(index);
  dialog.showModal();
  close.focus();
  return dialog;
}

/**
 * Turns pointer events on `element` into gestures: one pointer dragging (`drag` with each
 * move's distance), a quick sideways one (`swipe`), two pointers moving apart or together
 * (`pinch` with the ratio of their distances), and a tap.
 */
function followPointers(element, { pinch, drag, swipe, tap }) {
  const pointers = new Map();
  let start = null;
  let spread = 0;
  const distance = () => {
    const [a, b] = [...pointers.values()];
    return Math.hypot(a.x - b.x, a.y - b.y);
  };
  element.addEventListener('pointerdown', (event) => {
    try {
      element.setPointerCapture(event.pointerId);
    } catch {
      // A pointer the browser no longer tracks: follow it without capture.
    }
    pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
    if (pointers.size === 1) start = { x: event.clientX, y: event.clientY, type: event.pointerType, moved: false };
    if (pointers.size === 2) spread = distance();
  });
  element.addEventListener('pointermove', (event) => {
    const last = pointers.get(event.pointerId);
    if (!last) return;
    const dx = event.clientX - last.x;
    const dy = event.clientY - last.y;
    pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
    if (pointers.size === 2) {
      const now = distance();
      if (spread > 0) pinch(now / spread);
      spread = now;
      if (start) Object.assign(start, { moved: true, pinched: true });
    } else if (pointers.size === 1) {
      if (start && Math.hypot(event.clientX - start.x, event.clientY - start.y) > 8) start.moved = true;
      drag(dx, dy);
    }
  });
  const end = (event) => {
    if (!pointers.delete(event.pointerId)) return;
    if (pointers.size === 0 && start) {
      const dx = event.clientX - start.x;
      const dy = event.clientY - start.y;
      if (!start.pinched && Math.abs(dx) >= SWIPE_DISTANCE && Math.abs(dx) > Math.abs(dy) * 1.5) swipe(dx);
      else if (!start.moved) tap(start.type);
      start = null;
    }
    if (pointers.size < 2) spread = 0;
  };
  element.addEventListener('pointerup', end);
  element.addEventListener('pointercancel', end);
}
