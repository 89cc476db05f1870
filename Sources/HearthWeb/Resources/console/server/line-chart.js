// A small line chart over a rolling time window, drawn as SVG: one line per series, a legend
// that gives each series' current value in text (the lines are decoration for sighted users;
// the words carry the figures), and the scale in words. Colours and dash patterns come from
// console.css (.series-N), so the chart follows the light and dark themes and two series can be
// told apart without colour.

import { h } from '../dom.js';

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 300;
const HEIGHT = 90;

/**
 * @typedef {{ time: number, values: Record<string, number | null> }} Point
 *   `time` in milliseconds (performance.now()); a null value is a gap (not measured yet)
 */

/**
 * Makes a chart.
 * @param {object} options
 * @param {string} options.id names the test IDs: `graph-<id>` and `graph-<id>-<series key>`
 * @param {string} options.title the heading
 * @param {{ key: string, label: string }[]} options.series in legend order
 * @param {(value: number) => string} options.format a value in words, e.g. "3.2/s"
 * @param {number} options.windowMs how much time the chart spans
 * @param {number} options.gapMs points further apart than this are not joined (the page was hidden)
 * @param {number} [options.minimumScale] the least top of the scale, so noise stays flat
 * @param {number} [options.scaleUnit] the scale's top is a round number of these (e.g. 1,048,576 for MB)
 * @returns {{ element: HTMLElement, update: (points: Point[], now: number, span?: { windowMs?: number, gapMs?: number }) => void }}
 *   `update` may be given another window and gap (the page's time range changed).
 */
export function lineChart({ id, title, series, format, windowMs, gapMs, minimumScale = 1, scaleUnit = 1 }) {
  const headingId = `graph-${id}-title`;
  const values = new Map(series.map((item) => [item.key,
    h('dd', { 'data-testid': `graph-${id}-${item.key}`, 'data-value': '' }, '…')]));
  const legend = h('dl', { class: 'legend' }, series.map((item, index) => h('div', {},
    h('dt', {}, swatch(index), item.label), values.get(item.key))));
  const scale = h('p', { class: 'graph-scale muted' });
  const svg = svgElement('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, preserveAspectRatio: 'none', 'aria-hidden': 'true',
    focusable: 'false' });
  const grid = [0, 0.5, 1].map((fraction) => svgElement('line', { class: 'grid', x1: 0, x2: WIDTH,
    y1: y(fraction), y2: y(fraction) }));
  const lines = series.map((_, index) => svgElement('path', { class: `series series-${index}`, d: '' }));
  svg.append(...grid, ...lines);
  const element = h('section', { class: 'graph card', 'aria-labelledby': headingId, 'data-testid': `graph-${id}`,
    'data-points': 0 },
    h('h3', { id: headingId }, title), legend, svg, scale);

  function update(points, now, span = {}) {
    windowMs = span.windowMs ?? windowMs;
    gapMs = span.gapMs ?? gapMs;
    const shown = points.filter((point) => point.time >= now - windowMs);
    const peak = Math.max(0, ...shown.flatMap((point) => series.map((item) => point.values[item.key] ?? 0))
      .filter(Number.isFinite));
    const top = niceCeiling(Math.max(peak, minimumScale) / scaleUnit) * scaleUnit;
    series.forEach((item, index) => {
      lines[index].setAttribute('d', pathOf(shown, item.key, now, top));
      const current = shown.length ? shown[shown.length - 1].values[item.key] : null;
      const value = values.get(item.key);
      value.textContent = current === null || current === undefined ? '…' : format(current);
      value.dataset.value = current === null || current === undefined ? '' : String(current);
    });
    element.dataset.points = String(shown.length);
    scale.textContent = `Scale 0 to ${format(top)}; last ${spanWords(windowMs)}.`;
  }

  /** The series as SVG path data: a new stroke after a gap or a missing value. */
  function pathOf(points, key, now, top) {
    let path = '';
    let previous = null;
    for (const point of points) {
      const value = point.values[key];
      if (value === null || value === undefined || !Number.isFinite(value)) {
        previous = null;
        continue;
      }
      const x = ((point.time - (now - windowMs)) / windowMs) * WIDTH;
      const joined = previous !== null && point.time - previous <= gapMs;
      path += `${joined ? 'L' : 'M'}${x.toFixed(1)},${y(value / top).toFixed(1)} `;
      previous = point.time;
    }
    return path.trim();
  }

  return { element, update };
}

/** "5 minutes", "1 hour", "6 hours". */
function spanWords(ms) {
  const minutes = Math.round(ms / 60_000);
  if (minutes < 60) return `${minutes} minutes`;
  const hours = Math.round(minutes / 60);
  return hours === 1 ? '1 hour' : `${hours} hours`;
}

/** The y coordinate of a fraction of the scale (0 at the bottom), inside a 2-unit margin. */
function y(fraction) {
  return HEIGHT - 2 - Math.min(Math.max(fraction, 0), 1) * (HEIGHT - 4);
}

/** The smallest 1, 2 or 5 times a power of ten that is at least `value`. */
function niceCeiling(value) {
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 5, 10].map((step) => step * power).find((candidate) => candidate >= value * (1 - 1e-9));
}

/** A short stretch of the series' line, for the legend. */
function swatch(index) {
  const svg = svgElement('svg', { class: 'swatch', viewBox: '0 0 24 8', 'aria-hidden': 'true', focusable: 'false' });
  svg.append(svgElement('line', { class: `series series-${index}`, x1: 0, x2: 24, y1: 4, y2: 4 }));
  return svg;
}

function svgElement(tag, attributes) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  return element;
}
