// Text people wrote, with its #hashtags, @mentions and web addresses as links. `segments` is
// the pure part (text in, pieces out); `richText` builds DOM nodes from the pieces, so what
// someone typed is only ever text (never parsed as HTML).
import { h } from '/app/ui.js';

/** What links may be: letters, digits and the URL punctuation, up to a space or a quote. */
const URL_START = /https?:\/\/[^\s<>"'`]+/y;
/** Taken off the end of an address: sentence punctuation that is rarely part of one. */
const TRAILING = /[.,;:!?'")\]}]+$/;
const TAG_CHARACTER = /[\p{L}\p{N}_]/u;
const INDEXED_TAG = /^[a-z0-9_]{1,50}$/;

/**
 * A text as pieces, in order: `{ type: 'text', text }`, `{ type: 'tag', text: '#Sunset', tag:
 * 'sunset' }`, `{ type: 'mention', text: '@Ann Lee', uid }` and `{ type: 'link', text, url }`.
 * Tags are those actions.js `hashtags()` indexes (a `#` then 1–50 of a-z, 0-9 and _, ended by
 * anything but a letter, digit, `_` or another `#`); mentions are the `@Full Name` texts of
 * `mentions` ({uid: "Full Name"}, the ones the post recorded), longest names first, not followed
 * by a letter or digit; links are http(s) addresses without trailing punctuation.
 * @param {string} text
 * @param {Object<string, string>} [mentions]
 * @returns {Array<{type: string, text: string, tag?: string, uid?: string, url?: string}>}
 */
export function segments(text, mentions = {}) {
  const source = String(text ?? '');
  const names = Object.entries(mentions ?? {})
    .filter(([uid, name]) => uid && typeof name === 'string' && name.length > 0)
    .sort(([, a], [, b]) => b.length - a.length);
  const pieces = [];
  let plain = '';
  const push = (piece) => {
    if (plain) pieces.push({ type: 'text', text: plain });
    plain = '';
    pieces.push(piece);
  };
  let index = 0;
  while (index < source.length) {
    const character = source[index];
    if (character === 'h') {
      URL_START.lastIndex = index;
      const found = URL_START.exec(source);
      const before = index === 0 ? '' : source[index - 1];
      if (found && !/[\p{L}\p{N}]/u.test(before)) {
        const url = found[0].replace(TRAILING, '');
        if (isWebAddress(url)) {
          push({ type: 'link', text: url, url });
          index += url.length;
          continue;
        }
      }
    } else if (character === '#') {
      let end = index + 1;
      while (end < source.length && TAG_CHARACTER.test(source[end])) end += 1;
      const word = source.slice(index + 1, end);
      // hashtags() drops a tag that runs into another '#' ("#a#b" indexes only "b").
      if (source[end] !== '#' && INDEXED_TAG.test(word.toLowerCase())) {
        push({ type: 'tag', text: `#${word}`, tag: word.toLowerCase() });
        index = end;
        continue;
      }
    } else if (character === '@') {
      const match = names.find(([, name]) => source.startsWith(name, index + 1)
        && !/[\p{L}\p{N}_]/u.test(source[index + 1 + name.length] ?? ''));
      if (match) {
        const [uid, name] = match;
        push({ type: 'mention', text: `@${name}`, uid });
        index += 1 + name.length;
        continue;
      }
    }
    plain += character;
    index += 1;
  }
  if (plain) pieces.push({ type: 'text', text: plain });
  return pieces;
}

function isWebAddress(candidate) {
  try {
    const url = new URL(candidate);
    return (url.protocol === 'http:' || url.protocol === 'https:') && Boolean(url.hostname);
  } catch {
    return false;
  }
}

/** The people whose `@Full Name` is still in `text`, of those chosen while writing it. */
export function mentionsIn(text, chosen) {
  const kept = {};
  for (const piece of segments(text, chosen)) {
    if (piece.type === 'mention') kept[piece.uid] = piece.text.slice(1);
  }
  return kept;
}

/**
 * The text as DOM nodes: plain text as text nodes, tags linking to their page, mentions to the
 * person's profile, addresses opening in a new tab (no referrer, not endorsed).
 * @returns {DocumentFragment}
 */
export function richText(text, mentions = {}) {
  const fragment = document.createDocumentFragment();
  for (const piece of segments(text, mentions)) {
    if (piece.type === 'tag') {
      fragment.append(h('a', { href: `#/tag/${encodeURIComponent(piece.tag)}`, class: 'tag-link', 'data-testid': 'tag-link' }, piece.text));
    } else if (piece.type === 'mention') {
      fragment.append(h('a', { href: `#/profile/${encodeURIComponent(piece.uid)}`, class: 'mention-link', 'data-testid': 'mention-link' }, piece.text));
    } else if (piece.type === 'link') {
      fragment.append(h('a', {
        href: piece.url, class: 'text-link', target: '_blank', rel: 'noopener noreferrer nofollow ugc', 'data-testid': 'text-link',
      }, piece.text));
    } else {
      fragment.append(document.createTextNode(piece.text));
    }
  }
  return fragment;
}
