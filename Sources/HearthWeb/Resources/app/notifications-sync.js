// The newest page of the signed-in person's notifications, one query for the Notifications
// screen and for the app, which keeps it listened to while they are signed in (main.js): the
// client's offline cache then holds it, so the screen opens offline too (as Chats does, whose
// list main.js keeps for the unread count), even if it was not opened before going offline.

/** Notifications on a page (the query asks for one more: its arrival says older ones exist). */
export const NOTIFICATIONS_PAGE = 20;

/**
 * The page of `uid`'s notifications ending before `cursor` ([timestamp, id]; null: the newest),
 * newest last, as the client orders them. Equal queries share one listen and one cache entry.
 */
export function notificationsPage(db, uid, cursor = null) {
  const ordered = db.ref(`notifications/${uid}`).orderByChild('timestamp');
  return (cursor ? ordered.endBefore(...cursor) : ordered).limitToLast(NOTIFICATIONS_PAGE + 1);
}

/** Keeps `uid`'s newest page listened to (so cached) until the answered function is called. */
export function keepNotificationsSynced(db, uid) {
  const query = notificationsPage(db, uid);
  const listener = query.on('value', () => {}, () => {});
  return () => query.off('value', listener);
}
