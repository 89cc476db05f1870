// The app's line icons, drawn as inline SVG with DOM APIs (the page's CSP allows no inline
// markup from strings). They are decorative: what they stand for is always said in words next
// to them, so each is hidden from screen readers.

const SVG = 'http://www.w3.org/2000/svg';

/**
 * Each icon: the parts of a 24×24 drawing, as [element, attributes]. Lines are drawn with the
 * current text colour; `fill` parts are filled with it.
 */
const DRAWINGS = {
  recent: [['circle', { cx: 12, cy: 12, r: 9 }], ['path', { d: 'M12 7v5l3.5 2' }]],
  top: [['path', { d: 'M12 3.5l2.6 5.3 5.9.9-4.3 4.1 1 5.8-5.2-2.7-5.2 2.7 1-5.8-4.3-4.1 5.9-.9z' }]],
  feed: [['path', { d: 'M3.5 10.5 12 3.5l8.5 7V20a1 1 0 0 1-1 1H15v-6H9v6H4.5a1 1 0 0 1-1-1z' }]],
  search: [['circle', { cx: 11, cy: 11, r: 6.5 }], ['path', { d: 'm16 16 4.5 4.5' }]],
  chats: [['path', { d: 'M20.5 11.5a8 8 0 0 1-11.7 7.1L3.5 20l1.4-4.9a8 8 0 1 1 15.6-3.6z' }]],
  saved: [['path', { d: 'M6.5 3.5h11v17l-5.5-4-5.5 4z' }]],
  mine: [['rect', { x: 3.5, y: 3.5, width: 17, height: 17, rx: 2.5 }], ['circle', { cx: 9, cy: 9, r: 1.8 }], ['path', { d: 'm20.5 15-4.5-4.5L5 20.5' }]],
  more: [['circle', { cx: 5.5, cy: 12, r: 1.6, fill: true }], ['circle', { cx: 12, cy: 12, r: 1.6, fill: true }], ['circle', { cx: 18.5, cy: 12, r: 1.6, fill: true }]],
  close: [['path', { d: 'M6 6l12 12M18 6 6 18' }]],
  heart: [['path', { d: 'M12 20s-7.5-4.6-7.5-10.1A4.4 4.4 0 0 1 12 7.2a4.4 4.4 0 0 1 7.5 2.7C19.5 15.4 12 20 12 20z' }]],
  shield: [['path', { d: 'M12 3.5 19 6v5.5c0 4.3-3 7.7-7 9-4-1.3-7-4.7-7-9V6z' }], ['path', { d: 'm9 12 2.2 2.2L15.5 10' }]],
  camera: [['path', { d: 'M4 8h3l1.5-2.5h7L17 8h3a1 1 0 0 1 1 1v9.5a1 1 0 0 1-1 1H4a1 1 0 0 1-1-1V9a1 1 0 0 1 1-1z' }], ['circle', { cx: 12, cy: 13.5, r: 3.5 }]],
  bell: [['path', { d: 'M6 16.5V11a6 6 0 0 1 12 0v5.5l1.5 2h-15z' }], ['path', { d: 'M10 20.5a2 2 0 0 0 4 0' }]],
};

/**
 * An icon (`recent`, `top`, `feed`, `search`, `chats`, `saved`, `mine`, `more`, `close`, `heart`, `bell`, `shield`, `camera`),
 * `size` pixels square, hidden from screen readers.
 * @returns {SVGSVGElement}
 */
export function icon(name, size = 24) {
  const svg = document.createElementNS(SVG, 'svg');
  for (const [attribute, value] of Object.entries({
    viewBox: '0 0 24 24', width: size, height: size, fill: 'none', stroke: 'currentColor', 'stroke-width': 1.8,
    'stroke-linecap': 'round', 'stroke-linejoin': 'round', 'aria-hidden': 'true', focusable: 'false', class: 'icon',
  })) svg.setAttribute(attribute, String(value));
  for (const [tag, attributes] of DRAWINGS[name] ?? []) {
    const part = document.createElementNS(SVG, tag);
    for (const [attribute, value] of Object.entries(attributes)) {
      if (attribute === 'fill') part.setAttribute('fill', 'currentColor');
      else part.setAttribute(attribute, String(value));
    }
    svg.append(part);
  }
  return svg;
}
