// A square crop of a picture, chosen in the browser: the picture fills a square frame; drag it
// (or use the arrow keys) to move it, and the zoom slider (or + and −) to enlarge it. A small
// live preview shows the result. `square(side)` draws the chosen square at `side` pixels.
import { h } from '/app/ui.js';

const FRAME = 240;
const PREVIEW = 64;
const MAX_ZOOM = 4;
/** Arrow keys move the picture this many frame pixels (with Shift, five times as far). */
const KEY_STEP = 8;

/** The largest zoom that still fills the frame, and where the window is, as a pure function. */
export function clampView({ width, height }, { zoom, x, y }) {
  const z = Math.min(MAX_ZOOM, Math.max(1, zoom));
  // The window's side in image pixels: the short side at zoom 1.
  const side = Math.min(width, height) / z;
  return {
    zoom: z,
    side,
    x: Math.min(width - side, Math.max(0, x)),
    y: Math.min(height - side, Math.max(0, y)),
  };
}

/**
 * The crop UI for `bitmap` (an ImageBitmap). Answers `{ element, square(side) → canvas }`.
 * @param {ImageBitmap} bitmap
 * @param {{ idPrefix?: string }} [options]
 */
export function cropper(bitmap, { idPrefix = 'crop' } = {}) {
  const size = { width: bitmap.width, height: bitmap.height };
  // Centred, zoom 1: the largest square in the middle.
  let view = clampView(size, { zoom: 1, x: (size.width - Math.min(size.width, size.height)) / 2, y: (size.height - Math.min(size.width, size.height)) / 2 });
  const ratio = Math.max(1, Math.min(3, window.devicePixelRatio || 1));
  const frame = h('canvas', { class: 'crop-canvas', width: FRAME * ratio, height: FRAME * ratio, 'aria-hidden': 'true' });
  const preview = h('canvas', { class: 'crop-preview', width: PREVIEW * ratio, height: PREVIEW * ratio, 'data-testid': 'crop-preview', 'aria-hidden': 'true' });
  const helpId = `${idPrefix}-help`;
  const area = h('div', {
    class: 'crop-area', tabindex: '0', role: 'group', 'aria-roledescription': 'crop area', 'aria-label': 'Move the picture',
    'aria-describedby': helpId, 'data-testid': 'crop-area',
  }, frame);
  const zoom = h('input', {
    type: 'range', id: `${idPrefix}-zoom`, min: '1', max: String(MAX_ZOOM), step: '0.01', value: '1', 'data-testid': 'crop-zoom',
  });
  const element = h('div', { class: 'cropper' },
    area,
    h('div', { class: 'crop-side stack' },
      h('div', { class: 'field' }, h('label', { for: `${idPrefix}-zoom` }, 'Zoom'), zoom),
      h('div', { class: 'crop-preview-box' }, preview, h('span', { class: 'small muted' }, 'Preview')),
      h('p', { id: helpId, class: 'small muted' }, 'Drag the picture, or use the arrow keys, to move it; the slider, or + and −, to zoom.')));

  function draw() {
    for (const [canvas, side] of [[frame, FRAME * ratio], [preview, PREVIEW * ratio]]) {
      const context = canvas.getContext('2d');
      context.imageSmoothingQuality = 'high';
      context.drawImage(bitmap, view.x, view.y, view.side, view.side, 0, 0, side, side);
    }
    area.dataset.view = `${Math.round(view.x)},${Math.round(view.y)},${Math.round(view.side)}`;
  }

  /** Zooms about the window's centre. */
  function setZoom(next) {
    const centreX = view.x + view.side / 2;
    const centreY = view.y + view.side / 2;
    const side = Math.min(size.width, size.height) / Math.min(MAX_ZOOM, Math.max(1, next));
    view = clampView(size, { zoom: next, x: centreX - side / 2, y: centreY - side / 2 });
    zoom.value = String(view.zoom);
    draw();
  }

  /** Moves the picture by frame pixels (the window the other way). */
  function move(dx, dy) {
    const scale = view.side / FRAME;
    view = clampView(size, { zoom: view.zoom, x: view.x - dx * scale, y: view.y - dy * scale });
    draw();
  }

  zoom.addEventListener('input', () => setZoom(Number(zoom.value)));
  let dragging = null;
  area.addEventListener('pointerdown', (event) => {
    dragging = { x: event.clientX, y: event.clientY };
    area.setPointerCapture(event.pointerId);
    area.classList.add('dragging');
  });
  area.addEventListener('pointermove', (event) => {
    if (!dragging) return;
    move(event.clientX - dragging.x, event.clientY - dragging.y);
    dragging = { x: event.clientX, y: event.clientY };
  });
  const stop = () => {
    dragging = null;
    area.classList.remove('dragging');
  };
  area.addEventListener('pointerup', stop);
  area.addEventListener('pointercancel', stop);
  area.addEventListener('wheel', (event) => {
    event.preventDefault();
    setZoom(view.zoom * (event.deltaY < 0 ? 1.1 : 1 / 1.1));
  }, { passive: false });
  area.addEventListener('keydown', (event) => {
    const step = KEY_STEP * (event.shiftKey ? 5 : 1);
    const moves = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] };
    if (moves[event.key]) {
      event.preventDefault();
      move(...moves[event.key]);
    } else if (event.key === '+' || event.key === '=') {
      event.preventDefault();
      setZoom(view.zoom * 1.1);
    } else if (event.key === '-' || event.key === '−') {
      event.preventDefault();
      setZoom(view.zoom / 1.1);
    }
  });
  draw();

  return {
    element,
    /** The chosen square, `side` pixels on each side, on white (for JPEG). */
    square(side) {
      const canvas = document.createElement('canvas');
      canvas.width = side;
      canvas.height = side;
      const context = canvas.getContext('2d');
      context.fillStyle = '#fff';
      context.fillRect(0, 0, side, side);
      context.imageSmoothingQuality = 'high';
      context.drawImage(bitmap, view.x, view.y, view.side, view.side, 0, 0, side, side);
      return canvas;
    },
  };
}
