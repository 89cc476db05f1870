// Notifications of the same kind about the same post, one entry on the Notifications screen:
// "Carol and Bob liked your post", "Carol, Bob and 2 others commented on your post". Pure: no
// DOM, no database (unit-tested in Tests/WebUnit/notification-groups.test.mjs).
import { namesPhrase } from './people-words.js';

/**
 * How far apart in time notifications of one group may be: a like today and one last month
 * are two pieces of news, not one.
 */
export const GROUP_WINDOW_MS = 24 * 60 * 60 * 1000;

/** Kinds that are grouped (a follow is about no post: each follower is news of their own). */
const GROUPED = new Set(['like', 'comment', 'mention']);

/** What each kind says after the names. */
const WORDS = {
  like: 'liked your post',
  comment: 'commented on your post',
  follow: 'started following you',
  mention: 'mentioned you',
};

/**
 * Groups notifications (`[id, {type, from, name, post, timestamp, read}]`, newest first, as the
 * screen lists them). A notification joins the group of its kind and post whose newest member
 * is at most `window` newer than it; else it starts one. Groups keep the list's order (by
 * their newest member); a group is unread when any member is.
 * @param {Array<[string, object]>} entries newest first
 * @param {{window?: number}} [options]
 * @returns {Array<{key: string, type: string, post: string|null, members: Array<[string, object]>,
 *   people: Array<{uid: string, name: string}>, timestamp: number, unread: boolean}>}
 */
export function groupNotifications(entries, { window = GROUP_WINDOW_MS } = {}) {
  const groups = [];
  /** The open group of each kind and post (the one a still older notification may join). */
  const open = new Map();
  for (const entry of entries) {
    const [id, value] = entry;
    const time = typeof value?.timestamp === 'number' ? value.timestamp : 0;
    const groupable = GROUPED.has(value?.type) && typeof value?.post === 'string';
    const topic = groupable ? `${value.type}\u0000${value.post}` : null;
    let group = topic ? open.get(topic) : null;
    if (group && group.newest - time > window) group = null;
    if (!group) {
      group = { key: id, type: value?.type, post: groupable ? value.post : (value?.post ?? null), members: [], people: [], newest: time, timestamp: time, unread: false };
      groups.push(group);
      if (topic) open.set(topic, group);
    }
    group.members.push(entry);
    group.unread ||= value?.read === false;
    // One person twice (two comments) is named once.
    if (!group.people.some((person) => person.uid === value?.from)) group.people.push({ uid: value?.from, name: value?.name || 'Someone' });
  }
  for (const group of groups) {
    // Keyed by its oldest member, which newer ones joining do not change: the element stays.
    group.key = group.members[group.members.length - 1][0];
    delete group.newest;
  }
  return groups;
}

/**
 * A group's sentence in parts: who ("Carol, Bob and 2 others") and what they did ("liked your
 * post"); the screen adds the post's title.
 */
export function groupWords(group) {
  return {
    who: namesPhrase(group.people.map((person) => person.name), group.people.length),
    what: WORDS[group.type] ?? 'did something',
  };
}
