// What this client wrote that the server has not acknowledged yet: marked "Waiting to send"
// where it is shown (a post, a comment, a star, a message), and unmarked once the server has
// it. One observer of the database's pending writes serves every mark on the page.
import { h } from '/app/ui.js';

/** element → { path, slot, label, since } */
const marked = new Map();
let observed = null;

/**
 * Marks `element` while writes at, above or below `path` wait to be sent: the `pending`
 * class, `data-pending`, and a "Waiting to send" badge appended to `slot`; `onChange(pending)`
 * is told too (for words the badge cannot give, such as an aria-label). Marks of elements
 * that left the page are dropped.
 */
export function markPending(hearth, element, path, { slot = element, label = 'Waiting to send', onChange } = {}) {
  if (observed !== hearth) {
    observed = hearth;
    hearth.db.onPendingWritesChange(() => refreshMarks(hearth));
  }
  marked.set(element, { path, slot, label, onChange, since: Date.now() });
  show(hearth, element);
  return element;
}

function show(hearth, element) {
  const { path, slot, label, onChange } = marked.get(element);
  const pending = hearth.db.pendingWriteCount(path) > 0;
  if (element.hasAttribute('data-pending') !== pending) onChange?.(pending);
  element.classList.toggle('pending', pending);
  element.toggleAttribute('data-pending', pending);
  const badge = [...slot.children].find((child) => child.classList.contains('pending-badge'));
  if (pending && !badge) slot.append(h('span', { class: 'pending-badge', 'data-testid': 'pending-badge' }, label));
  if (!pending && badge) badge.remove();
}

function refreshMarks(hearth) {
  for (const [element, mark] of marked) {
    // Just made and not on the page yet: kept a moment; gone for good: forgotten.
    if (!element.isConnected && Date.now() - mark.since > 1000) marked.delete(element);
    else show(hearth, element);
  }
}
