// How a list of people reads in a sentence ("Carol, Bob and 3 others"), and who liked a post
// (FriendlyPix's `likes/{postId}` = {uid: time}), newest first. Pure: no DOM, no database
// (unit-tested in Tests/WebUnit/people-words.test.mjs).

/** Names spelled out before the rest are counted ("Carol, Bob and 3 others"). */
const NAMED = 2;

/**
 * `names` (the first ones, newest first) of `total` people, as a sentence says them:
 * "Carol", "Carol and Bob", "Carol, Bob and Dan", "Carol, Bob and 2 others". Three are named
 * rather than "and 1 other", which says less in as many words.
 * @param {string[]} names at least min(total, 3) of them
 * @param {number} [total]
 */
export function namesPhrase(names, total = names.length) {
  const shown = names.slice(0, total <= NAMED + 1 ? total : NAMED).map((name) => name || 'Someone');
  const rest = total - shown.length;
  if (rest > 0) return `${shown.join(', ')} and ${rest} ${rest === 1 ? 'other' : 'others'}`;
  if (shown.length <= 1) return shown[0] ?? '';
  return `${shown.slice(0, -1).join(', ')} and ${shown[shown.length - 1]}`;
}

/**
 * The uids in a post's `likes/{postId}` value, newest like first (the same time: by uid, so
 * the order is stable). Entries that are not a time are skipped.
 * @param {Record<string, number>|null} likes
 * @returns {string[]}
 */
export function likersOf(likes) {
  if (!likes || typeof likes !== 'object') return [];
  return Object.entries(likes)
    .filter(([, time]) => typeof time === 'number')
    .sort(([a, first], [b, second]) => second - first || (a < b ? -1 : a > b ? 1 : 0))
    .map(([uid]) => uid);
}

/**
 * The line under a post's like button: "Liked by Carol, Bob and 3 others"; empty when nobody
 * likes it. The reader's own like reads "you" (and comes first, as they know about it).
 * @param {string[]} uids likers, newest first
 * @param {(uid: string) => string} nameOf
 * @param {string|null} [me] the reader
 */
export function likedByWords(uids, nameOf, me = null) {
  if (!uids.length) return '';
  const ordered = me && uids.includes(me) ? [me, ...uids.filter((uid) => uid !== me)] : uids;
  const names = ordered.slice(0, NAMED + 1).map((uid) => (uid === me ? 'you' : nameOf(uid)));
  return `Liked by ${namesPhrase(names, ordered.length)}`;
}
