// The app's writes, each in the shape the rules require — the same as HearthSocial's
// PostActions, SessionViewModel and PostDetailViewModel, so web and Swift clients agree.
import { HearthError, ServerValue } from '/lib/hearth.js';

export const MAX_PHOTOS = 3;
export const MAX_TITLE = 200;
export const MAX_BODY = 2000;
export const MAX_COMMENT = 2000;
export const MAX_NAME = 100;
export const MAX_BIO = 300;
/** The longest description (alt text) of a photo the rules accept. */
export const MAX_ALT = 1000;

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
 * The notification for `to` that the signed-in user just did something (`like`, `comment` or
 * `follow`), as the rules require it: from the writer, under their token's name, unread, at
 * the server's time. Null for one's own post (nobody is notified about themselves).
 */
export function notification(user, to, type, { post = null, comment = null } = {}) {
  if (!to || to === user.uid) return null;
  const value = { type, from: user.uid, name: user.displayName ?? 'Anonymous', timestamp: ServerValue.TIMESTAMP, read: false };
  if (post) value.post = post;
  if (comment) value.comment = comment;
  return value;
}

/** Where the notification about one like, comment or follow lives (one each, no repeats). */
export function notificationPath(to, type, { post = '', comment = '', from = '' } = {}) {
  if (type === 'like') return `notifications/${to}/like_${post}_${from}`;
  if (type === 'comment') return `notifications/${to}/comment_${comment}`;
  return `notifications/${to}/follow_${from}`;
}

/**
 * Likes or unlikes a post: ONE write to both reference data shapes — the Quickstart's
 * `starCount` and `stars/{uid}` in `posts/` and `user-posts/`, and FriendlyPix's
 * `likes/{postId}/{uid}` (the server's time) — with the author's notification. The rules
 * accept the count only if it moves by one from the current value, so a denial means someone
 * else liked in between: read again and retry. `known` is the post as this reader sees it
 * (with their own pending writes), to start from without a round trip: offline, the like is
 * shown at once and sent when the connection is back. The promise settles when the server
 * has it.
 * @returns {Promise<{liked: boolean, count: number}>}
 */
export async function toggleLike(hearth, postId, { known = null, attempts = 10 } = {}) {
  const user = requireUser(hearth);
  for (let attempt = 1; attempt <= attempts; attempt += 1) {
    const post = attempt === 1 && known?.author ? known : (await hearth.db.ref(`posts/${postId}`).get()).val();
    if (!post?.author) throw new HearthError('not-found', 'That post is not there any more.');
    const liked = post.stars?.[user.uid] === true;
    const count = (post.starCount ?? 0) + (liked ? -1 : 1);
    const star = liked ? null : true;
    const author = post.author.uid;
    const updates = {
      [`posts/${postId}/starCount`]: count,
      [`posts/${postId}/stars/${user.uid}`]: star,
      [`user-posts/${author}/${postId}/starCount`]: count,
      [`user-posts/${author}/${postId}/stars/${user.uid}`]: star,
      [`likes/${postId}/${user.uid}`]: liked ? null : ServerValue.TIMESTAMP,
    };
    if (author !== user.uid) {
      updates[notificationPath(author, 'like', { post: postId, from: user.uid })] = liked ? null : notification(user, author, 'like', { post: postId });
    }
    try {
      await hearth.db.ref().update(updates);
      return { liked: !liked, count };
    } catch (error) {
      if (error.code !== 'permission-denied' || attempt === attempts) throw error;
      await sleep(5 + Math.random() * 35);
    }
  }
  throw new HearthError('conflict', 'Too many people at once. Try again.');
}

export async function setSaved(hearth, postId, saved) {
  const entry = hearth.db.ref(`saved/${requireUser(hearth).uid}/${postId}`);
  if (saved) await entry.set(ServerValue.TIMESTAMP);
  else await entry.remove();
}

/** Reports a post to the admins: `postFlags/{post}/{me}` (one per reader; the server queues it). */
export async function reportPost(hearth, postId) {
  await hearth.db.ref(`postFlags/${postId}/${requireUser(hearth).uid}`).set(true);
}

/** Whether the signed-in reader has reported the post (only they may read their report). */
export async function hasReportedPost(hearth, postId) {
  return (await hearth.db.ref(`postFlags/${postId}/${requireUser(hearth).uid}`).get()).val() === true;
}

/** Reports a comment to the admins: `commentFlags/{post}/{comment}/{me}`, as PostActions does. */
export async function reportComment(hearth, postId, commentId) {
  await hearth.db.ref(`commentFlags/${postId}/${commentId}/${requireUser(hearth).uid}`).set(true);
}

/** Whether the signed-in reader has reported the comment. */
export async function hasReportedComment(hearth, postId, commentId) {
  return (await hearth.db.ref(`commentFlags/${postId}/${commentId}/${requireUser(hearth).uid}`).get()).val() === true;
}

// MARK: - Moderation (admins)

/**
 * What an admin asks the server to do (`adminRequests/{id}`, as ModerationQueueViewModel):
 * `{ action: 'removePost', post }`, `{ action: 'removeComment', post, comment }`,
 * `{ action: 'dismiss', post, comment? }` or `{ action: 'suspend' | 'reinstate', uid }`, signed
 * with the admin's uid and the server's time. The rules accept it only from an admin and about
 * something that exists; the server carries it out and deletes it.
 */
export async function adminRequest(hearth, request) {
  const user = requireUser(hearth);
  const fields = { ...request, by: user.uid, timestamp: ServerValue.TIMESTAMP };
  for (const [key, value] of Object.entries(fields)) if (value === undefined || value === null) delete fields[key];
  await hearth.db.ref('adminRequests').push().set(fields);
}

/**
 * Deletes one's own post with everything that hangs off it (one write: both like shapes, the
 * comments, the indexes, and the author's notifications about it), then its files: files go
 * last, so a failure leaves no post pointing at nothing.
 */
export async function deletePost(hearth, id, post) {
  const user = requireUser(hearth);
  if (user.uid !== post.author.uid) throw new HearthError('permission-denied', 'Only its author can delete a post.');
  const uid = post.author.uid;
  const comments = await hearth.db.ref(`comments/${id}`).get();
  const updates = {
    [`posts/${id}`]: null,
    [`user-posts/${uid}/${id}`]: null,
    [`comments/${id}`]: null,
    [`likes/${id}`]: null,
    [`people/${uid}/posts/${id}`]: null,
    [`feed/${uid}/${id}`]: null,
  };
  for (const tag of postTags(post)) updates[`hashtags/${tag}/${id}`] = null;
  for (const liker of Object.keys(post.stars ?? {})) updates[notificationPath(uid, 'like', { post: id, from: liker })] = null;
  comments.forEach((comment) => {
    updates[notificationPath(uid, 'comment', { comment: comment.key })] = null;
  });
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

/**
 * What names a post in a sentence or a link: its title, else the first line of its body, else
 * (a photo-only post) "Photo by <author>" — or null with `photoFallback: false`.
 */
export function postHeadline(post, { photoFallback = true } = {}) {
  if (post?.title) return post.title;
  const firstLine = (post?.body ?? '').split('\n').find((line) => line.trim())?.trim() ?? '';
  if (firstLine) return [...firstLine].length > 80 ? `${[...firstLine].slice(0, 79).join('')}…` : firstLine;
  if (!photoFallback) return null;
  return photosOf(post).length ? `Photo by ${post?.author?.full_name || 'Anonymous'}` : 'Untitled';
}

/** A link to a post in this web app. */
export function shareLink(postId) {
  return `${location.origin}/#/post/${encodeURIComponent(postId)}`;
}

// MARK: - Comments

/**
 * Adds a comment. It shows at once (offline too); the promise settles when the server has it.
 */
export async function addComment(hearth, postId, text, { postAuthor = null, mentions = null } = {}) {
  const user = requireUser(hearth);
  const id = hearth.db.ref(`comments/${postId}`).push().key;
  const comment = { author: authorOf(user), text, timestamp: ServerValue.TIMESTAMP };
  // The people named with @ ({uid: "Full Name"}), as a post records them.
  if (mentions && Object.keys(mentions).length) comment.mentions = mentions;
  const updates = { [`comments/${postId}/${id}`]: comment };
  // The post's author hears of it in the same write.
  const notice = notification(user, postAuthor, 'comment', { post: postId, comment: id });
  if (notice) updates[notificationPath(postAuthor, 'comment', { comment: id })] = notice;
  await hearth.db.ref().update(updates);
}

/** Changes a comment's text and the people it names (`{uid: "Full Name"}`; none removes them). */
export async function editComment(hearth, postId, commentId, text, mentions = {}) {
  await hearth.db.ref(`comments/${postId}/${commentId}`).update({
    text, timestamp: ServerValue.TIMESTAMP, mentions: Object.keys(mentions).length ? mentions : null,
  });
}

export async function deleteComment(hearth, postId, commentId, { postAuthor = null } = {}) {
  const user = requireUser(hearth);
  const updates = { [`comments/${postId}/${commentId}`]: null };
  // Its notification goes with it (nothing is said about a comment that is gone).
  if (postAuthor && postAuthor !== user.uid) updates[notificationPath(postAuthor, 'comment', { comment: commentId })] = null;
  await hearth.db.ref().update(updates);
}

// MARK: - Profiles

/** "Ann Lee" is found by "ann" and by "lee": the name lowercased, and its words reversed. */
export function searchIndex(name) {
  const lower = name.toLowerCase().trim();
  return { full_name: lower, reversed_full_name: lower.split(' ').filter(Boolean).reverse().join(' ') };
}

/** `people/{uid}`: the name the rules compare with the token, and the search index. */
export async function writeProfile(hearth, name, picture, bio = undefined, thumbnail = undefined) {
  const user = requireUser(hearth);
  const updates = { full_name: name };
  // Anonymous visitors are not searchable.
  if (!user.isAnonymous) {
    const index = searchIndex(name);
    updates['_search_index/full_name'] = index.full_name;
    updates['_search_index/reversed_full_name'] = index.reversed_full_name;
  }
  if (picture) {
    updates.profile_picture = picture;
    // Avatars in lists show the small copy; a picture without one (written elsewhere) has none.
    updates.profile_thumbnail = thumbnail ?? null;
  }
  // A bio of '' removes it; undefined leaves it as it is.
  if (bio !== undefined) updates.bio = bio || null;
  await hearth.db.ref(`people/${user.uid}`).update(updates);
}

/**
 * Makes an account with a name, and its public profile. Someone browsing anonymously keeps
 * their uid, and with it everything they posted, starred and wrote: their account gains the
 * email and password instead of a new one being made.
 */
export async function signUp(hearth, { name, email, password }) {
  if (hearth.auth.currentUser?.isAnonymous) {
    await hearth.auth.linkWithPassword(email.trim(), password, name);
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
  // The profile's picture stays (it is the larger one of a profile photo; see saveProfile).
  await writeProfile(hearth, updated.displayName ?? 'Anonymous', null);
}

/** Why a bio cannot be saved, or null. */
export function bioProblem(bio) {
  if ([...bio].length > MAX_BIO) return `The bio is longer than ${MAX_BIO} characters.`;
  return null;
}

/** The storage path of a file by its media URL (`…/o/<path>?alt=media`), or null. */
export function storagePathOf(url) {
  const found = /\/o\/([^?#]+)/.exec(String(url ?? ''));
  if (!found) return null;
  try {
    return decodeURIComponent(found[1]);
  } catch {
    return null;
  }
}

/**
 * Saves one's profile: the name and bio, and a new photo when `photo` ({ picture, thumbnail }
 * JPEG blobs) is given. The photo's files go to `{uid}/avatar/` (the storage rules let only
 * the owner write there); the account's photoURL becomes the thumbnail (shown in the header and
 * on what one writes afterwards), `people/{uid}/profile_picture` the picture and
 * `profile_thumbnail` the thumbnail (avatars everywhere show the current one); then the previous
 * picture is deleted. The previous thumbnail stays: posts and comments keep a copy of their
 * author's photo address from when they were written (as FriendlyPix's do), which clients that
 * do not look the current one up still show. New files that end up unused are deleted on a failure.
 */
export async function saveProfile(hearth, { name, bio, photo = null, previousPicture = null }) {
  const user = requireUser(hearth);
  let photoURL;
  let picture = null;
  const uploaded = [];
  if (photo) {
    const stamp = Date.now().toString(36);
    const picturePath = `${user.uid}/avatar/${stamp}.jpg`;
    const thumbPath = `${user.uid}/avatar/${stamp}-thumb.jpg`;
    try {
      for (const [path, blob] of [[picturePath, photo.picture], [thumbPath, photo.thumbnail]]) {
        await hearth.storage.ref(path).put(blob, { contentType: 'image/jpeg' });
        uploaded.push(path);
      }
    } catch (error) {
      await Promise.allSettled(uploaded.map((path) => hearth.storage.ref(path).delete()));
      throw error;
    }
    picture = hearth.storage.ref(picturePath).mediaURL();
    photoURL = hearth.storage.ref(thumbPath).mediaURL();
  }
  const keptThumbnail = storagePathOf(user.photoURL);
  const previous = [previousPicture].map(storagePathOf)
    .filter((path) => path?.startsWith(`${user.uid}/avatar/`) && !uploaded.includes(path) && path !== keptThumbnail);
  try {
    const changes = {};
    if (name !== user.displayName) changes.displayName = name;
    if (photoURL) changes.photoURL = photoURL;
    const updated = Object.keys(changes).length ? await hearth.auth.updateProfile(changes) : user;
    await writeProfile(hearth, updated.displayName ?? 'Anonymous', picture, bio, photoURL);
  } catch (error) {
    await Promise.allSettled(uploaded.map((path) => hearth.storage.ref(path).delete()));
    throw error;
  }
  if (photo) await Promise.allSettled([...new Set(previous)].map((path) => hearth.storage.ref(path).delete()));
}

/** The validation texts SessionViewModel shows. */
export function nameProblem(name) {
  if (!name) return 'Enter your name.';
  if ([...name].length > MAX_NAME) return 'The name is too long.';
  return null;
}
