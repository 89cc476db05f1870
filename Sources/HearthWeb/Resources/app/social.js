// What the social views (feed, profile, search, chat, saved) share: listener bookkeeping,
// reading posts and profiles by ID, and conversation IDs.

/**
 * The database listeners a view holds, so its cleanup can remove every one with `offAll()`.
 * `on` answers a function that removes just that listener (for listeners that come and go).
 */
export class Subscriptions {
  #offs = new Set();

  on(query, event, callback, onError) {
    const registered = query.on(event, callback, onError);
    const off = () => {
      if (this.#offs.delete(off)) query.off(event, registered);
    };
    this.#offs.add(off);
    return off;
  }

  /** Adds a cleanup of another kind (a paged list's `stop`) that `offAll()` runs too. */
  add(stop) {
    const off = () => {
      if (this.#offs.delete(off)) stop();
    };
    this.#offs.add(off);
    return off;
  }

  offAll() {
    for (const off of [...this.#offs]) off();
  }
}

/**
 * The posts that exist among `ids`, in the order given, read in parallel (as PostLoader does),
 * cached ones at once.
 * Answers `{ entries: [[id, post]…], missing: [id…] }`; `missing` are IDs whose post is gone.
 */
export async function loadPosts(hearth, ids) {
  const snapshots = await Promise.all(ids.map((id) => cachedOrRead(hearth, hearth.db.ref(`posts/${id}`))));
  const entries = [];
  const missing = [];
  snapshots.forEach((snapshot, index) => {
    const post = snapshot.val();
    if (post && typeof post === 'object' && post.author) entries.push([ids[index], post]);
    else missing.push(ids[index]);
  });
  return { entries, missing };
}

/**
 * The first value of `query`: at once when the local cache has it (offline too), else when
 * the server answers. (`once('value')` asks the server first.) The listener is one of
 * `subscriptions`, so leaving the view stops the wait.
 */
export function firstValue(subscriptions, query) {
  return new Promise((resolve, reject) => {
    let got = false;
    let off = null;
    // Cached data comes inside `on`, before `off` is assigned.
    off = subscriptions.on(query, 'value', (snapshot) => {
      got = true;
      off?.();
      resolve(snapshot);
    }, reject);
    if (got) off();
  });
}

/** The child keys of a snapshot, in its (query) order. */
export function childKeys(snapshot) {
  const keys = [];
  snapshot.forEach((child) => {
    keys.push(child.key);
  });
  return keys;
}

/** The conversation between two users: the same ID from either side (`{smaller}_{larger}`). */
export function conversationId(first, second) {
  return [first, second].sort().join('_');
}

/** The other member of a conversation, or null when `me` is not in it. */
export function otherMember(conversation, me) {
  if (conversation.startsWith(`${me}_`)) return conversation.slice(me.length + 1);
  if (conversation.endsWith(`_${me}`)) return conversation.slice(0, -(me.length + 1));
  return null;
}

/** A person as the avatar helper and author lines expect them. */
export function personOf(uid, profile) {
  return {
    uid,
    full_name: profile?.full_name || 'Someone',
    profile_picture: profile?.profile_picture,
  };
}

/**
 * The value at `ref` from the local cache when it holds it (no wait, offline too), else read
 * as `once('value')` does (from the server; offline, after a wait, whatever is cached).
 */
export async function cachedOrRead(hearth, ref) {
  await hearth.db.ready();
  let cached = null;
  // A listener gets what is cached at once, inside `on`.
  const take = (snapshot) => { cached ??= snapshot; };
  ref.on('value', take);
  ref.off('value', take);
  return cached ?? ref.once('value');
}

/** Reads public profiles once each (a view's names and pictures), by uid; cached ones at once. */
export function profileReader(hearth) {
  const cache = new Map();
  return (uid) => {
    if (!cache.has(uid)) {
      const read = cachedOrRead(hearth, hearth.db.ref(`people/${uid}`))
        .then((snapshot) => personOf(uid, snapshot.val()))
        .catch(() => personOf(uid, null));
      cache.set(uid, read);
    }
    return cache.get(uid);
  };
}
