// Notifications of one kind about one post as one entry (app/notification-groups.js).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GROUP_WINDOW_MS, groupNotifications, groupWords } from '../../Sources/HearthWeb/Resources/app/notification-groups.js';

const HOUR = 60 * 60 * 1000;
const T = 1_800_000_000_000;

function note(id, type, from, name, post, timestamp, read = true) {
  return [id, { type, from, name, ...(post ? { post } : {}), timestamp, read }];
}

const summary = (groups) => groups.map((group) => ({
  key: group.key, type: group.type, post: group.post, members: group.members.map(([id]) => id),
  who: groupWords(group).who, what: groupWords(group).what, timestamp: group.timestamp, unread: group.unread,
}));

test('likes and comments on one post group, in the list\'s order, with the newest time', () => {
  const entries = [
    note('l-carol', 'like', 'carol', 'Carol', 'p1', T + 50),
    note('c-dan', 'comment', 'dan', 'Dan', 'p1', T + 40),
    note('l-bob', 'like', 'bob', 'Bob', 'p1', T + 30),
    note('f-eve', 'follow', 'eve', 'Eve', null, T + 20),
    note('c-ann', 'comment', 'ann', 'Ann', 'p1', T + 10),
    note('l-x', 'like', 'x', 'Xena', 'p2', T + 5),
  ];
  assert.deepEqual(summary(groupNotifications(entries)), [
    { key: 'l-bob', type: 'like', post: 'p1', members: ['l-carol', 'l-bob'], who: 'Carol and Bob', what: 'liked your post', timestamp: T + 50, unread: false },
    { key: 'c-ann', type: 'comment', post: 'p1', members: ['c-dan', 'c-ann'], who: 'Dan and Ann', what: 'commented on your post', timestamp: T + 40, unread: false },
    { key: 'f-eve', type: 'follow', post: null, members: ['f-eve'], who: 'Eve', what: 'started following you', timestamp: T + 20, unread: false },
    { key: 'l-x', type: 'like', post: 'p2', members: ['l-x'], who: 'Xena', what: 'liked your post', timestamp: T + 5, unread: false },
  ]);
});

test('more than three are counted; one person twice is named once', () => {
  const entries = ['Carol', 'Bob', 'Dan', 'Eve'].map((name, index) => note(`c${index}`, 'comment', name.toLowerCase(), name, 'p', T - index));
  entries.push(note('c-again', 'comment', 'carol', 'Carol', 'p', T - 10));
  const [group] = groupNotifications(entries);
  assert.equal(groupWords(group).who, 'Carol, Bob and 2 others');
  assert.equal(group.members.length, 5);
  assert.deepEqual(group.people.map((person) => person.uid), ['carol', 'bob', 'dan', 'eve']);
});

test('a group is unread when any member is', () => {
  const groups = groupNotifications([
    note('a', 'like', 'a', 'A', 'p', T + 2, true), note('b', 'like', 'b', 'B', 'p', T + 1, false), note('c', 'like', 'c', 'C', 'q', T, true),
  ]);
  assert.deepEqual(groups.map((group) => group.unread), [true, false]);
});

test('follows are never grouped: each follower is news of their own', () => {
  const groups = groupNotifications([note('f1', 'follow', 'a', 'A', null, T + 1), note('f2', 'follow', 'b', 'B', null, T)]);
  assert.deepEqual(groups.map((group) => group.key), ['f1', 'f2']);
});

test('notifications further apart than the window are separate news', () => {
  const groups = groupNotifications([
    note('new', 'like', 'a', 'A', 'p', T),
    note('hour', 'like', 'b', 'B', 'p', T - HOUR),
    note('old', 'like', 'c', 'C', 'p', T - GROUP_WINDOW_MS - 1),
  ]);
  assert.deepEqual(summary(groups).map((group) => group.members), [['new', 'hour'], ['old']]);
  assert.deepEqual(summary(groupNotifications(groups.flatMap((group) => group.members), { window: HOUR - 1 })).map((group) => group.members),
    [['new'], ['hour'], ['old']]);
});

test('a newer member joining keeps the group\'s key (its element stays on screen)', () => {
  const before = groupNotifications([note('b', 'like', 'b', 'B', 'p', T)]);
  const after = groupNotifications([note('c', 'like', 'c', 'C', 'p', T + 1), note('b', 'like', 'b', 'B', 'p', T)]);
  assert.equal(before[0].key, 'b');
  assert.equal(after[0].key, 'b');
  assert.equal(groupWords(after[0]).who, 'C and B');
});

test('mentions about one post group; unknown kinds and missing names still read', () => {
  const groups = groupNotifications([
    note('m1', 'mention', 'a', 'Ann', 'p', T + 1), note('m2', 'mention', 'b', '', 'p', T), note('z', 'zap', 'c', 'C', 'p', T - 1),
  ]);
  assert.deepEqual(summary(groups).map(({ who, what }) => `${who} ${what}`), ['Ann and Someone mentioned you', 'C did something']);
  assert.deepEqual(groupNotifications([]), []);
});
