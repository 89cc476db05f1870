// Accessibility checks of the rendered page, for Tests/Browser/test_app_accessibility.py
// (axe-core is not available here). Each check reads what the browser computed — colours,
// boxes, names, landmarks, focus — and reports what fails as { rule, selector, detail }.
//
// `hearthAudit({ overflow })` runs the page checks: contrast, names, landmarks and (with
// `overflow`) content that sticks out sideways. `hearthTabbables()` lists what Tab should reach,
// in order; `hearthFocusCheck()` checks the focused element's indicator;
// `hearthFocusEach()` focuses every tabbable element in turn and checks each.

/* eslint-disable no-unused-vars */

/** A short CSS selector that finds `element` (for reading a report). */
function hearthSelector(element) {
  if (!(element instanceof Element)) return String(element);
  const parts = [];
  for (let node = element; node && node.nodeType === 1 && parts.length < 5; node = node.parentElement) {
    if (node.id) {
      parts.unshift(`#${CSS.escape(node.id)}`);
      break;
    }
    let part = node.localName;
    const testId = node.getAttribute('data-testid');
    if (testId) part += `[data-testid="${testId}"]`;
    else if (node.classList.length) part += `.${[...node.classList].slice(0, 2).map((name) => CSS.escape(name)).join('.')}`;
    const parent = node.parentElement;
    if (parent && !testId) {
      const same = [...parent.children].filter((child) => child.localName === node.localName);
      if (same.length > 1) part += `:nth-of-type(${same.indexOf(node) + 1})`;
    }
    parts.unshift(part);
  }
  return parts.join(' > ');
}

// MARK: Colours

/** Parses a computed colour: `rgb()`/`rgba()` or `color(srgb …)` (what color-mix() computes to). */
function hearthParseColor(text) {
  if (!text || text === 'transparent') return { r: 0, g: 0, b: 0, a: 0 };
  let match = text.match(/^rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)(?:\s*[,/]\s*([\d.]+%?))?\s*\)$/);
  if (match) {
    const alpha = match[4] === undefined ? 1 : match[4].endsWith('%') ? parseFloat(match[4]) / 100 : parseFloat(match[4]);
    return { r: +match[1], g: +match[2], b: +match[3], a: alpha };
  }
  match = text.match(/^color\(srgb\s+([\d.e-]+)\s+([\d.e-]+)\s+([\d.e-]+)(?:\s*\/\s*([\d.]+%?))?\s*\)$/);
  if (match) {
    const alpha = match[4] === undefined ? 1 : match[4].endsWith('%') ? parseFloat(match[4]) / 100 : parseFloat(match[4]);
    return { r: +match[1] * 255, g: +match[2] * 255, b: +match[3] * 255, a: alpha };
  }
  return null;
}

/** The colours named in a background-image's gradients (null for a picture: unknown). */
function hearthGradientColors(image) {
  if (/url\(/.test(image)) return null;
  const found = image.match(/rgba?\([^)]*\)|color\(srgb[^)]*\)/g) ?? [];
  return found.map(hearthParseColor).filter(Boolean);
}

/** `top` (with its alpha) over the opaque `bottom`. */
function hearthOver(top, bottom) {
  const a = top.a;
  return { r: top.r * a + bottom.r * (1 - a), g: top.g * a + bottom.g * (1 - a), b: top.b * a + bottom.b * (1 - a), a: 1 };
}

function hearthLuminance({ r, g, b }) {
  const channel = (value) => {
    const c = value / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
}

function hearthContrast(one, two) {
  const [light, dark] = [hearthLuminance(one), hearthLuminance(two)].sort((x, y) => y - x);
  return (light + 0.05) / (dark + 0.05);
}

/**
 * The opaque colours that may be behind `element`: its own and its ancestors' backgrounds,
 * composited from the first opaque one up. A gradient gives each of its colours; a picture
 * gives black and white (the worst cases).
 */
function hearthBackdrops(element) {
  const layers = [];
  for (let node = element; node; node = node.parentElement) {
    const style = getComputedStyle(node);
    const color = hearthParseColor(style.backgroundColor) ?? { r: 0, g: 0, b: 0, a: 0 };
    const image = style.backgroundImage !== 'none' ? hearthGradientColors(style.backgroundImage) : undefined;
    layers.push({ color, image });
    if (color.a >= 1 || (image && image.length && image.every((stop) => stop.a >= 1)) || image === null) break;
  }
  let candidates = [{ r: 255, g: 255, b: 255, a: 1 }];
  for (const { color, image } of layers.reverse()) {
    if (image === null) {
      candidates = [{ r: 0, g: 0, b: 0, a: 1 }, { r: 255, g: 255, b: 255, a: 1 }];
    } else if (image && image.length) {
      candidates = candidates.flatMap((under) => image.map((stop) => hearthOver(stop, under)));
    }
    if (color.a > 0) candidates = candidates.map((under) => hearthOver(color, under));
  }
  return candidates;
}

/** The product of the opacities of `element` and its ancestors. */
function hearthOpacity(element) {
  let opacity = 1;
  for (let node = element; node; node = node.parentElement) opacity *= parseFloat(getComputedStyle(node).opacity);
  return opacity;
}

/** The worst contrast of `color` (seen through `opacity`) on any of `backdrops`. */
function hearthWorstContrast(color, opacity, backdrops) {
  let worst = Infinity;
  for (const backdrop of backdrops) {
    const seen = hearthOver({ ...color, a: color.a * opacity }, backdrop);
    worst = Math.min(worst, hearthContrast(seen, backdrop));
  }
  return worst;
}

const hearthHex = ({ r, g, b }) => `#${[r, g, b].map((value) => Math.round(value).toString(16).padStart(2, '0')).join('')}`;

// MARK: Visibility

/** Whether `element` is rendered and seen (not display:none, invisible, transparent, or a 1px clip). */
function hearthShown(element) {
  if (!element.checkVisibility({ opacityProperty: true, visibilityProperty: true, contentVisibilityAuto: true })) return false;
  const box = element.getBoundingClientRect();
  if (box.width < 2 && box.height < 2) return false;
  for (let node = element; node; node = node.parentElement) {
    const style = getComputedStyle(node);
    if (style.clip === 'rect(0px, 0px, 0px, 0px)' || style.clipPath === 'inset(50%)') return false;
    if (node.inert) return false;
  }
  return true;
}

/** Whether a person reaches `element` with assistive technology at all. */
function hearthExposed(element) {
  if (!element.checkVisibility({ visibilityProperty: true })) return false;
  return !element.closest('[aria-hidden="true"], [inert]');
}

function hearthIsLarge(style) {
  const size = parseFloat(style.fontSize);
  const bold = parseInt(style.fontWeight, 10) >= 700;
  return size >= 24 || (bold && size >= 18.66);
}

// MARK: Names

/** The accessible name of `element`, as browsers compute it for the cases this app uses. */
function hearthName(element) {
  const labelledBy = element.getAttribute('aria-labelledby');
  if (labelledBy) {
    const text = labelledBy.split(/\s+/).map((id) => document.getElementById(id)?.textContent ?? '').join(' ').trim();
    if (text) return text;
  }
  const label = element.getAttribute('aria-label');
  if (label && label.trim()) return label.trim();
  const tag = element.localName;
  if (tag === 'img' || (tag === 'input' && element.type === 'image')) return element.getAttribute('alt') ?? '';
  if (['input', 'textarea', 'select'].includes(tag)) {
    const labels = [...(element.labels ?? [])].map((each) => hearthSubtreeText(each)).join(' ').trim();
    if (labels) return labels;
    if (tag === 'input' && ['submit', 'button', 'reset'].includes(element.type)) return element.value;
    return element.getAttribute('title') ?? '';
  }
  const text = hearthSubtreeText(element).trim();
  return text || (element.getAttribute('title') ?? '');
}

/** The text of `node`'s subtree that is not hidden from assistive technology. */
function hearthSubtreeText(node) {
  let text = '';
  for (const child of node.childNodes) {
    if (child.nodeType === Node.TEXT_NODE) {
      text += child.data;
    } else if (child.nodeType === Node.ELEMENT_NODE) {
      if (child.getAttribute('aria-hidden') === 'true' || child.hidden || getComputedStyle(child).display === 'none') continue;
      if (child.localName === 'img') text += ` ${child.getAttribute('alt') ?? ''} `;
      else if (child.localName === 'svg') text += ` ${child.querySelector('title')?.textContent ?? ''} `;
      else text += ` ${child.getAttribute('aria-label') ?? hearthSubtreeText(child)} `;
    }
  }
  return text.replace(/\s+/g, ' ');
}

const HEARTH_INTERACTIVE = 'a[href], button, input:not([type="hidden"]), select, textarea, [role="button"], [role="link"], '
  + '[role="checkbox"], [role="tab"], [role="menuitem"], [tabindex]:not([tabindex="-1"])';

// MARK: Focus

/**
 * What Tab reaches, in order (positive tabindex values first, which the checks refuse anyway).
 * With a modal dialog open, only what is inside it: the rest of the page is inert.
 */
function hearthTabbables() {
  const modal = document.querySelector('dialog:modal');
  const candidates = [...document.querySelectorAll(`${HEARTH_INTERACTIVE}, summary`)];
  // Chromium also stops at a scrolling box that holds nothing focusable.
  for (const element of document.querySelectorAll('body *')) {
    const style = getComputedStyle(element);
    const scrolls = (/(auto|scroll)/.test(style.overflowY) && element.scrollHeight > element.clientHeight + 1)
      || (/(auto|scroll)/.test(style.overflowX) && element.scrollWidth > element.clientWidth + 1);
    if (scrolls && !candidates.includes(element) && !element.querySelector(HEARTH_INTERACTIVE)) candidates.push(element);
  }
  const position = (a, b) => (a === b ? 0 : a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1);
  return candidates
    .filter((element) => element.tabIndex >= 0 && !element.disabled && !element.closest('[inert]') && (!modal || modal.contains(element))
      && element.checkVisibility({ visibilityProperty: true }) && !element.closest('details:not([open]) > :not(summary)'))
    .sort((a, b) => (a.tabIndex || Infinity) - (b.tabIndex || Infinity) || position(a, b));
}

/**
 * The focused element's indicator: an outline (or a box-shadow ring) that contrasts 3:1 with
 * what is around it, not cut off by a box that clips its overflow, and the element not hidden
 * under something else (a sticky header, the tab bar).
 */
function hearthFocusCheck() {
  const focused = document.activeElement;
  const problems = [];
  if (!focused || focused === document.body) return { selector: 'body', problems: ['nothing is focused'] };
  if (!focused.matches(':focus-visible')) problems.push('does not match :focus-visible');
  // A visually hidden control (a file input inside its label, which is the button people see)
  // shows its focus on that label: the ring checked is the label's.
  const hidden = focused.getBoundingClientRect();
  const label = hidden.width <= 1 && hidden.height <= 1 ? focused.closest('label') : null;
  const element = label ?? focused;
  const style = getComputedStyle(element);
  const box = element.getBoundingClientRect();
  const outlined = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2;
  const ringed = style.boxShadow !== 'none' && /(\d+(\.\d+)?)px(?![^(]*\))/.test(style.boxShadow);
  let reach = 0;
  if (outlined) {
    reach = parseFloat(style.outlineOffset) + parseFloat(style.outlineWidth);
    // An outline drawn outside is seen on what is around the element; one drawn inside, on it.
    const around = parseFloat(style.outlineOffset) >= 0 ? (element.parentElement ?? element) : element;
    const color = hearthParseColor(style.outlineColor);
    const contrast = color ? hearthWorstContrast(color, hearthOpacity(element), hearthBackdrops(around)) : 0;
    if (contrast < 3) problems.push(`its outline ${style.outlineColor} contrasts ${contrast.toFixed(2)}:1 with what is around it (3:1 needed)`);
  } else if (ringed) {
    const spreads = [...style.boxShadow.matchAll(/(-?[\d.]+)px\s+(-?[\d.]+)px\s+(-?[\d.]+)px\s+(-?[\d.]+)px/g)].map((match) => +match[4]);
    reach = Math.max(0, ...spreads);
    if (/inset/.test(style.boxShadow)) reach = 0;
  } else {
    problems.push('no visible focus indicator (no outline, no box-shadow ring)');
  }
  if (box.width === 0 || box.height === 0) problems.push('the focused element has no size');
  const ring = { left: box.left - reach, top: box.top - reach, right: box.right + reach, bottom: box.bottom + reach };
  for (let node = element.parentElement; node && node !== document.documentElement; node = node.parentElement) {
    const nodeStyle = getComputedStyle(node);
    const clipsX = nodeStyle.overflowX !== 'visible';
    const clipsY = nodeStyle.overflowY !== 'visible';
    if (!clipsX && !clipsY) continue;
    const outer = node.getBoundingClientRect();
    const inner = {
      left: outer.left + node.clientLeft, top: outer.top + node.clientTop,
      right: outer.left + node.clientLeft + node.clientWidth, bottom: outer.top + node.clientTop + node.clientHeight,
    };
    const cut = (clipsX && (ring.left < inner.left - 0.5 || ring.right > inner.right + 0.5))
      || (clipsY && (ring.top < inner.top - 0.5 || ring.bottom > inner.bottom + 0.5));
    if (cut) problems.push(`its focus ring is cut off by ${hearthSelector(node)} (overflow ${nodeStyle.overflowX}/${nodeStyle.overflowY})`);
    if (nodeStyle.position === 'fixed') break;
  }
  if (ring.left < -0.5 || ring.right > document.documentElement.clientWidth + 0.5) problems.push('its focus ring is outside the viewport');
  // Seen: what is drawn at its middle is it (or inside it).
  const x = Math.min(Math.max(box.left + box.width / 2, 0), innerWidth - 1);
  const y = Math.min(Math.max(box.top + Math.min(box.height / 2, 10), 0), innerHeight - 1);
  const top = document.elementFromPoint(x, y);
  if (top && !element.contains(top) && !top.contains(element) && !element.labels?.length) {
    problems.push(`it is hidden under ${hearthSelector(top)}`);
  }
  return { selector: hearthSelector(focused), problems };
}

/** Focuses each tabbable element in turn (after keyboard use) and checks its indicator. */
function hearthFocusEach() {
  const results = [];
  for (const element of hearthTabbables()) {
    element.focus();
    const result = hearthFocusCheck();
    if (result.problems.length) results.push(result);
  }
  document.activeElement?.blur?.();
  return results;
}

// MARK: The page checks

function hearthAudit(options = {}) {
  const violations = [];
  const report = (rule, element, detail) => violations.push({ rule, selector: hearthSelector(element), detail });

  // Contrast of every piece of text seen, and of what is typed or shown as a hint in fields.
  const checked = new Set();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const element = node.parentElement;
    if (!node.data.trim() || !element || checked.has(element)) continue;
    checked.add(element);
    if (['script', 'style', 'noscript', 'option', 'title'].includes(element.localName) || !hearthShown(element)) continue;
    if (element.closest('button:disabled, [aria-disabled="true"], input:disabled')) continue;
    const style = getComputedStyle(element);
    const color = hearthParseColor(style.color);
    if (!color) continue;
    const needed = hearthIsLarge(style) ? 3 : 4.5;
    const contrast = hearthWorstContrast(color, hearthOpacity(element), hearthBackdrops(element));
    if (contrast < needed - 0.005) {
      const backdrop = hearthBackdrops(element).map(hearthHex).join('/');
      report('contrast', element, `"${node.data.trim().slice(0, 40)}": ${style.color} on ${backdrop} is ${contrast.toFixed(2)}:1 (${needed}:1 needed)`);
    }
  }
  for (const field of document.querySelectorAll('input:not([type="hidden"]):not([type="file"]):not([type="checkbox"]):not([type="radio"]), textarea')) {
    if (!hearthShown(field) || field.disabled) continue;
    const shown = field.value ? getComputedStyle(field) : field.placeholder ? getComputedStyle(field, '::placeholder') : null;
    if (!shown) continue;
    const color = hearthParseColor(shown.color);
    const contrast = hearthWorstContrast(color, hearthOpacity(field), hearthBackdrops(field));
    if (contrast < 4.5) report('contrast', field, `${field.value ? 'its text' : 'its placeholder'} ${shown.color} is ${contrast.toFixed(2)}:1 (4.5:1 needed)`);
  }

  // Tap targets (with `targets`, for screens used with a finger): what is operated on its own,
  // not a link inside a sentence, is at least 44 px each way.
  if (options.targets) {
    const standalone = 'button, [role="button"], select, a.button, a.chip, a[class*="nav-link"], [role="menuitem"], [role="tab"], summary';
    for (const element of document.querySelectorAll(standalone)) {
      if (!hearthShown(element) || element.closest('[hidden], [inert]') || element.disabled) continue;
      const box = element.getBoundingClientRect();
      if (box.width < 43.5 || box.height < 43.5) {
        report('target', element, `${Math.round(box.width)}×${Math.round(box.height)} px (44×44 needed)`);
      }
    }
  }

  // Names: everything one can operate, and every picture.
  for (const element of document.querySelectorAll(HEARTH_INTERACTIVE)) {
    if (!hearthExposed(element) || element.closest('[hidden]')) continue;
    if (!hearthName(element).trim()) report('name', element, `a ${element.localName} without an accessible name`);
  }
  for (const image of document.querySelectorAll('img, [role="img"]')) {
    if (!hearthExposed(image) || image.getAttribute('role') === 'presentation') continue;
    if (image.localName === 'img' && !image.hasAttribute('alt')) report('name', image, 'an image without alt (alt="" if it is decorative)');
    if (image.localName !== 'img' && !hearthName(image)) report('name', image, 'role=img without a name');
  }
  for (const svg of document.querySelectorAll('svg')) {
    if (hearthExposed(svg) && svg.getAttribute('role') !== 'img') report('name', svg, 'an svg that is neither aria-hidden nor a named role=img');
    if (svg.getAttribute('role') === 'img' && !hearthName(svg) && !svg.querySelector('title')) report('name', svg, 'a role=img svg without a name');
  }
  for (const hiddenPart of document.querySelectorAll('[aria-hidden="true"]')) {
    for (const focusable of hiddenPart.querySelectorAll(HEARTH_INTERACTIVE)) {
      if (focusable.tabIndex >= 0 && !focusable.disabled && focusable.checkVisibility()) {
        report('name', focusable, 'Tab reaches it inside aria-hidden (a screen reader would hear nothing)');
      }
    }
  }
  // Menu buttons say that they open a menu and whether it is open; a shown menu has items.
  for (const button of document.querySelectorAll('[aria-haspopup="menu"], [aria-haspopup="true"]')) {
    if (!hearthExposed(button)) continue;
    if (!['true', 'false'].includes(button.getAttribute('aria-expanded'))) report('menu', button, 'a menu button without aria-expanded');
    const menu = document.getElementById(button.getAttribute('aria-controls') ?? '');
    if (!menu || menu.getAttribute('role') !== 'menu') report('menu', button, 'a menu button that controls no role=menu');
    else if ((button.getAttribute('aria-expanded') === 'true') !== menu.checkVisibility()) {
      report('menu', button, `aria-expanded=${button.getAttribute('aria-expanded')} but the menu is ${menu.checkVisibility() ? 'shown' : 'hidden'}`);
    }
  }
  for (const menu of document.querySelectorAll('[role="menu"]')) {
    if (menu.checkVisibility() && !menu.querySelector('[role="menuitem"], [role="menuitemcheckbox"], [role="menuitemradio"]')) {
      report('menu', menu, 'a shown menu without menu items');
    }
  }
  // Text cut short with an ellipsis in a table can be read whole: its title (a tooltip) holds it.
  for (const element of checked) {
    if (!hearthShown(element) || !element.closest('td, th')) continue;
    const style = getComputedStyle(element);
    if (style.textOverflow !== 'ellipsis' || element.scrollWidth <= element.clientWidth + 1) continue;
    const titled = element.closest('[title]');
    if (!titled || !titled.getAttribute('title').includes(element.textContent.trim())) {
      report('truncation', element, `"${element.textContent.trim().slice(0, 40)}" is cut short with no title holding it whole`);
    }
  }
  for (const element of document.querySelectorAll('[tabindex]')) {
    if (element.tabIndex > 0) report('focus-order', element, `tabindex=${element.tabIndex} changes the order from the document's`);
  }

  // Landmarks, headings, language, title.
  const shownAll = (selector) => [...document.querySelectorAll(selector)].filter((element) => element.checkVisibility());
  const mains = shownAll('main, [role="main"]');
  if (mains.length !== 1) report('landmarks', document.body, `${mains.length} main landmarks (one needed)`);
  const navs = shownAll('nav, [role="navigation"]');
  if (!navs.length) report('landmarks', document.body, 'no nav landmark');
  const navLabels = navs.map((nav) => (nav.getAttribute('aria-label') || nav.getAttribute('aria-labelledby') ? hearthName(nav) : ''));
  navs.forEach((nav, index) => {
    if (!navLabels[index]) report('landmarks', nav, 'a nav without a label');
    else if (navLabels.indexOf(navLabels[index]) !== index) report('landmarks', nav, `two navs labelled "${navLabels[index]}"`);
  });
  const banners = shownAll('header, [role="banner"]').filter((element) =>
    element.getAttribute('role') === 'banner' || !element.parentElement.closest('article, aside, main, nav, section, [role="main"], [role="region"]'));
  if (banners.length !== 1) report('landmarks', document.body, `${banners.length} banner landmarks (one header outside the content needed)`);
  const h1s = shownAll('h1');
  if (h1s.length !== 1) report('headings', document.body, `${h1s.length} visible h1 headings (one needed)`);
  if (!document.documentElement.lang) report('landmarks', document.documentElement, 'the page has no lang');
  if (!document.title.trim()) report('landmarks', document.documentElement, 'the page has no title');
  const ids = new Map();
  for (const element of document.querySelectorAll('[id]')) ids.set(element.id, (ids.get(element.id) ?? 0) + 1);
  for (const [id, count] of ids) if (count > 1) report('ids', document.getElementById(id), `the id "${id}" is used ${count} times`);
  // Every piece of text seen is inside a landmark (live regions and the skip link excepted).
  const regions = 'main, [role="main"], nav, header, footer, aside, [role="region"], dialog, [aria-live], [role="status"], [role="alert"], .skip-link';
  for (const element of checked) {
    if (hearthShown(element) && !element.closest(regions)) report('landmarks', element, `text outside every landmark: "${element.textContent.trim().slice(0, 40)}"`);
  }

  // Nothing sticks out sideways (phones).
  if (options.overflow) {
    const width = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth > width) {
      report('overflow', document.documentElement, `the page is ${document.documentElement.scrollWidth}px wide in a ${width}px viewport`);
    }
    const sticking = [];
    for (const element of document.querySelectorAll('body *')) {
      if (!element.checkVisibility() || sticking.some((outer) => outer.contains(element))) continue;
      const box = element.getBoundingClientRect();
      if (box.width === 0 || (box.right <= width + 1 && box.left >= -1)) continue;
      // Inside a box that clips or scrolls sideways, and that box fits: not sticking out.
      let clipped = false;
      for (let node = element.parentElement; node && node !== document.body; node = node.parentElement) {
        if (getComputedStyle(node).overflowX !== 'visible') {
          clipped = true;
          break;
        }
      }
      if (clipped || element.matches('.skip-link, .visually-hidden') || element.closest('.visually-hidden')) continue;
      sticking.push(element);
      report('overflow', element, `spans ${Math.round(box.left)}…${Math.round(box.right)}px in a ${width}px viewport`);
    }
  }
  return violations;
}
