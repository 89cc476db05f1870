// The app's writes, each in the shape the rules require — the same as HearthSocial's
// PostActions, SessionViewModel and PostDetailViewModel, so web and Swift clients agree.
import { HearthError, ServerValue } from '/lib/hearth.js';

export const MAX_PHOTOS = 3;
export const MAX_TITLE = 200;
export const MAX_BODY = 2000;
export const MAX_COMMENT = 2000;
export const MAX_NAME = 100;

function requireUser(hearth) {
  const user = hearth.auth.currentUser;
  if (!user) throw new HearthError('auth/NOT_SIGNED_IN', 'Sign in first.');
  return user;
}

/** The signed-in user as a post's or comment's author: the token's name, or "Anonymous". */
export function authorOf(user) {
  const author = { uid: user.uid, full_name: user.displayName ?? 'Anonymous' };
  if (user.photoURL) author.profile_picture = user.photoURL;
  return author;
}

/**
 * The hashtags in a text (`#sunset` → `sunset`), lowercased, each once, as Post.hashtags: only
 * tags the rules accept as keys (1–50 of a-z, 0-9 and _) are indexed; `#café` stays plain text.
 */
export function hashtags(text) {
  const tags = [];
  let current = null;
  for (const character of `${text} `) {
    if (character === '#') {
      current = '';
    } else if (current !== null) {
      if (/[\p{L}\p{N}_]/u.test(character)) {
        current += character.toLowerCase();
      } else {
        if (/^[a-z0-9_]{1,50}$/.test(current) && !tags.includes(current)) tags.push(current);
        current = null;
      }
    }
  }
  return tags;
}

function postTags(post) {
  return hashtags(`${post.title} ${post.body}`);
}

/**
 * Publishes a post: `posts/{id}`, its copy in `user-posts/{uid}/{id}`, the author's
 * `people/{uid}/posts/{id}` and `feed/{uid}/{id}`, and its hashtags, in one write.
 */
export async function publishPost(hearth, id, post) {
  const uid = post.author.uid;
  const updates = {
    [`posts/${id}`]: post,
    [`user-posts/${uid}/${id}`]: post,
    [`people/${uid}/posts/${id}`]: true,
    [`feed/${uid}/${id}`]: true,
  };
  for (const tag of postTags(post)) updates[`hashtags/${tag}/${id}`] = true;
  await hearth.db.ref().update(updates);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Stars or unstars a post in `posts/` and `user-posts/` at once. The rules accept the count
 * only if it moves by one from the current value, so a denial means someone else starred in
 * between: read again and retry. `known` is the post as this reader sees it (with their own
 * pending writes), to start from without a round trip: offline, the star is shown at once and
 * sent when the connection is back. The promise settles when the server has it.
 * @returns {Promise<{starred: boolean, count: number}>}
 */
export async function toggleStar(hearth, postId, { known = null, attempts = 10 } = {}) {
  const user = requireUser(hearth);
  for (let attempt = 1; attempt <= attempts; attempt += 1) {
    const post = attempt === 1 && known?.author ? known : (await hearth.db.ref(`posts/${postId}`).get()).val();
    if (!post?.author) throw new HearthError('not-found', 'That post is not there any more.');
    const starred = post.stars?.[user.uid] === true;
    const count = (post.starCount ?? 0) + (starred ? -1 : 1);
    const star = starred ? null : true;
    try {
      await hearth.db.ref().update({
        [`posts/${postId}/starCount`]: count,
        [`posts/${postId}/stars/${user.uid}`]: star,
        [`user-posts/${post.author.uid}/${postId}/starCount`]: count,
        [`user-posts/${post.author.uid}/${postId}/stars/${user.uid}`]: star,
      });
      return { starred: !starred, count };
    } catch (error) {
      if (error.code !== 'permission-denied' || attempt === attempts) throw error;
      await sleep(5 + Math.random() * 35);
    }
  }
  throw new HearthError('conflict', 'Too many people at once. Try again.');
}

/** Likes (one entry per user, stamped with the server's time) or unlikes. */
export async function setLiked(hearth, postId, liked) {
  const like = hearth.db.ref(`likes/${postId}/${requireUser(hearth).uid}`);
  if (liked) await like.set(ServerValue.TIMESTAMP);
  else await like.remove();
}

export async function setSaved(hearth, postId, saved) {
  const entry = hearth.db.ref(`saved/${requireUser(hearth).uid}/${postId}`);
  if (saved) await entry.set(ServerValue.TIMESTAMP);
  else await entry.remove();
}

export async function reportPost(hearth, postId) {
  await hearth.db.ref(`postFlags/${postId}/${requireUser(hearth).uid}`).set(true);
}

/**
 * Deletes one's own post with everything that hangs off it (one write), then its files:
 * files go last, so a failure leaves no post pointing at nothing.
 */
export async function deletePost(hearth, id, post) {
  const user = requireUser(hearth);
  if (user.uid !== post.author.uid) throw new HearthError('permission-denied', 'Only its author can delete a post.');
  const uid = post.author.uid;
  const updates = {
    [`posts/${id}`]: null,
    [`user-posts/${uid}/${id}`]: null,
    [`comments/${id}`]: null,
    [`likes/${id}`]: null,
    [`people/${uid}/posts/${id}`]: null,
    [`feed/${uid}/${id}`]: null,
  };
  for (const tag of postTags(post)) updates[`hashtags/${tag}/${id}`] = null;
  await hearth.db.ref().update(updates);
  for (const photo of photosOf(post)) {
    await Promise.allSettled([hearth.storage.ref(photo.full).delete(), hearth.storage.ref(photo.thumb).delete()]);
  }
}

/** A post's photos as a list (the database may hand them back as an array or an object). */
export function photosOf(post) {
  const photos = post?.photos;
  if (!photos) return [];
  return (Array.isArray(photos) ? photos : Object.values(photos)).filter((photo) => photo?.full && photo?.thumb);
}

/** A link to a post in this web app. */
export function shareLink(postId) {
  return `${location.origin}/#/post/${encodeURIComponent(postId)}`;
}

// MARK: - Comments

/**
 * Adds a comment. It shows at once (offline too); the promise settles when the server has it.
 */
export async function addComment(hearth, postId, text) {
  const user = requireUser(hearth);
  await hearth.db.ref(`comments/${postId}`).push({ author: authorOf(user), text, timestamp: ServerValue.TIMESTAMP });
}

export async function editComment(hearth, postId, commentId, text) {
  await hearth.db.ref(`comments/${postId}/${commentId}`).update({ text, timestamp: ServerValue.TIMESTAMP });
}

export async function deleteComment(hearth, postId, commentId) {
  await hearth.db.ref(`comments/${postId}/${commentId}`).remove();
}

// MARK: - Profiles

/** "Ann Lee" is found by "ann" and by "lee": the name lowercased, and its words reversed. */
export function searchIndex(name) {
  const lower = name.toLowerCase().trim();
  return { full_name: lower, reversed_full_name: lower.split(' ').filter(Boolean).reverse().join(' ') };
}

/** `people/{uid}`: the name the rules compare with the token, and the search index. */
export async function writeProfile(hearth, name, picture) {
  const user = requireUser(hearth);
  const updates = { full_name: name };
  // Anonymous visitors are not searchable.
  if (!user.isAnonymous) {
    const index = searchIndex(name);
    updates['_search_index/full_name'] = index.full_name;
    updates['_search_index/reversed_full_name'] = index.reversed_full_name;
  }
  if (picture) updates.profile_picture = picture;
  await hearth.db.ref(`people/${user.uid}`).update(updates);
}

/**
 * Makes an account with a name, and its public profile. Someone browsing anonymously keeps
 * their uid, and with it everything they posted, starred and wrote: their account gains the
 * email and password instead of a new one being made.
 */
export async function signUp(hearth, { name, email, password }) {
  if (hearth.auth.currentUser?.isAnonymous) {
    await hearth.auth.linkWithPassword(email.trim(), password);
    await hearth.auth.updateProfile({ displayName: name });
  } else {
    await hearth.auth.signUp(email.trim(), password, name);
  }
  await writeProfile(hearth, name, null);
}

/** Browses without an account (an anonymous one), shown as "Anonymous". */
export async function browseAnonymously(hearth) {
  await hearth.auth.signInAnonymously();
  await writeProfile(hearth, 'Anonymous', null);
}

/** Changes the display name in the account (so the token carries it) and in the profile. */
export async function updateProfile(hearth, { name }) {
  const updated = await hearth.auth.updateProfile({ displayName: name });
  await writeProfile(hearth, updated.displayName ?? 'Anonymous', updated.photoURL);
}

/** The validation texts SessionViewModel shows. */
export function nameProblem(name) {
  if (!name) return 'Enter your name.';
  if ([...name].length > MAX_NAME) return 'The name is too long.';
  return null;
}
