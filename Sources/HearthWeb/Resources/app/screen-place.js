// Where a screen was left, kept in its history entry so Back can bring it back: the window's
// scroll position, and an item of its list with its distance from the window's top. The item
// is what counts: the content above it may be taller or shorter when the screen is drawn again
// (a line about who liked a post, a photo, a page still loading), which moves the scroll
// position it is at, not the item the person was looking at.

/** The attributes that name a list's items. */
const ITEM_KEYS = ['data-post-id', 'data-comment-id', 'data-notification-id'];
const ITEMS = ITEM_KEYS.map((key) => `[${key}]`).join(', ');

/**
 * Where `main`'s screen is now: `{ scroll, item }`, `item` being `{ key, id, top }` for the item
 * `target` is in (the one tapped to leave), else the first item on screen, else null.
 */
export function placeOf(main, target = null) {
  let element = target instanceof Element ? target.closest(ITEMS) : null;
  if (element && !main.contains(element)) element = null;
  element ??= [...main.querySelectorAll(ITEMS)].find((candidate) => candidate.getBoundingClientRect().bottom > 0) ?? null;
  const scroll = Math.round(window.scrollY);
  if (!element) return { scroll, item: null };
  const key = ITEM_KEYS.find((name) => element.hasAttribute(name));
  return { scroll, item: { key, id: element.getAttribute(key), top: Math.round(element.getBoundingClientRect().top) } };
}

/**
 * The scroll position that puts `place` back: its item where it was on screen once the item is
 * drawn, else the scroll position it was at.
 */
export function scrollFor(main, place) {
  const { item } = place;
  if (item && ITEM_KEYS.includes(item.key)) {
    const element = main.querySelector(`[${item.key}="${CSS.escape(String(item.id))}"]`);
    if (element) return Math.max(0, Math.round(window.scrollY + element.getBoundingClientRect().top - item.top));
  }
  return place.scroll;
}
