// Push notifications on this device (Web Push): the browser subscribes with the server's
// public VAPID key (`pushConfig/vapidPublicKey`) and the app stores the subscription at
// `pushSubscriptions/{uid}/{id}`; the server's functions then push the person's notifications
// and direct messages to it (Sources/HearthSocialServer/PushDelivery.swift), and /sw.js shows
// them. One browser receives one person's notifications: the one who turned them on here.
// Signing out takes this browser's subscription away first, so the next person on it never
// sees the previous one's.
import { ServerValue } from '/lib/hearth.js';

/** The kinds a person may turn off, in the settings screen's order (as the Swift app's). */
export const PUSH_KINDS = [
  { kind: 'follow', label: 'New followers' },
  { kind: 'like', label: 'Likes of your posts' },
  { kind: 'comment', label: 'Comments on your posts' },
  { kind: 'mention', label: 'Mentions of you' },
  { kind: 'message', label: 'Direct messages' },
];

/** Who turned push on in this browser (their uid), kept across visits. */
const OWNER_KEY = 'hearth-push-owner';
/** How long signing out waits for the subscription's record to be removed. */
const LEAVE_WAIT_MS = 3000;

/** Base64url without padding, as Web Push writes keys. */
export function base64URL(bytes) {
  let text = '';
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

/** The bytes of a base64url text (padded or not); throws on anything else. */
export function bytesOfBase64URL(text) {
  if (typeof text !== 'string' || !/^[A-Za-z0-9_-]*={0,2}$/.test(text)) throw new Error('not base64url');
  const plain = atob(text.replace(/=+$/, '').replaceAll('-', '+').replaceAll('_', '/'));
  return Uint8Array.from(plain, (character) => character.charCodeAt(0));
}

/**
 * The key a subscription is stored under: the first 16 bytes of the SHA-256 of its endpoint,
 * base64url (22 characters) — what the server checks it against.
 */
export async function subscriptionId(endpoint, subtle = globalThis.crypto.subtle) {
  const digest = await subtle.digest('SHA-256', new TextEncoder().encode(endpoint));
  return base64URL(new Uint8Array(digest).slice(0, 16));
}

/**
 * What is stored for a subscription (`PushSubscription.toJSON()`'s endpoint and keys, and
 * when), or an Error saying what is wrong with it.
 */
export function subscriptionRecord(json) {
  const endpoint = json?.endpoint;
  const p256dh = json?.keys?.p256dh;
  const auth = json?.keys?.auth;
  if (typeof endpoint !== 'string' || typeof p256dh !== 'string' || typeof auth !== 'string') {
    return new Error('The browser gave a push subscription without an endpoint or keys.');
  }
  return { endpoint, keys: { p256dh, auth }, created: ServerValue.TIMESTAMP };
}

/** Whether two keys (bytes or ArrayBuffers) are the same bytes. */
function sameKey(first, second) {
  if (!first || !second) return false;
  const a = new Uint8Array(first);
  const b = new Uint8Array(second);
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}

/**
 * This browser's push for the signed-in person. `env` holds the browser's parts (tests give
 * their own): `navigator`, `Notification`, `storage` (localStorage), `PushManager`.
 */
export class DevicePush {
  constructor(hearth, env = globalThis) {
    this.hearth = hearth;
    this.navigator = env.navigator;
    this.Notification = env.Notification;
    this.storage = env.localStorage;
    this.supported = Boolean(env.navigator?.serviceWorker && env.PushManager && env.Notification);
  }

  /** 'granted', 'denied' or 'default'; 'unsupported' where this browser has no push. */
  get permission() {
    return this.supported ? this.Notification.permission : 'unsupported';
  }

  /** The uid push was turned on for in this browser, or null. */
  get owner() {
    try {
      return this.storage?.getItem(OWNER_KEY) ?? null;
    } catch {
      return null;
    }
  }

  set owner(uid) {
    try {
      if (uid) this.storage?.setItem(OWNER_KEY, uid);
      else this.storage?.removeItem(OWNER_KEY);
    } catch {
      // Storage refused (private mode): push still works for this visit.
    }
  }

  /** The browser's current subscription, or null. */
  async subscription() {
    if (!this.supported) return null;
    const registration = await this.navigator.serviceWorker.ready;
    return registration.pushManager.getSubscription();
  }

  /** Whether `uid` receives push in this browser now. */
  async isOn(uid) {
    if (!uid || this.owner !== uid || this.permission !== 'granted') return false;
    return Boolean(await this.subscription());
  }

  /** The server's public key, or an Error saying the server does not push. */
  async serverKey() {
    const snapshot = await this.hearth.db.ref('pushConfig/vapidPublicKey').get();
    const key = snapshot.val();
    try {
      return bytesOfBase64URL(key);
    } catch {
      return new Error('This server does not send push notifications.');
    }
  }

  /**
   * Turns push on for `uid` here: asks the person's permission, subscribes the browser (again,
   * when it was subscribed with another server key) and stores the subscription.
   * @throws {Error} in words for the person when any step is refused
   */
  async enable(uid) {
    if (!this.supported) throw new Error('This browser cannot show push notifications.');
    const key = await this.serverKey();
    if (key instanceof Error) throw key;
    const permission = await this.Notification.requestPermission();
    if (permission !== 'granted') {
      throw new Error('Notifications are blocked for this site: allow them in your browser’s site settings, then try again.');
    }
    const registration = await this.navigator.serviceWorker.ready;
    let subscription = await registration.pushManager.getSubscription();
    if (subscription && !sameKey(subscription.options?.applicationServerKey, key)) {
      await subscription.unsubscribe();
      subscription = null;
    }
    if (!subscription) {
      try {
        subscription = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
      } catch (error) {
        throw new Error(`Your browser’s push service could not be reached (${error?.message ?? error}).`);
      }
    }
    await this.store(uid, subscription);
    this.owner = uid;
  }

  /** Stores `subscription` as `uid`'s (the same endpoint keeps its key, so storing again is harmless). */
  async store(uid, subscription) {
    const record = subscriptionRecord(subscription.toJSON());
    if (record instanceof Error) throw record;
    const id = await subscriptionId(record.endpoint);
    await this.hearth.db.ref(`pushSubscriptions/${uid}/${id}`).set(record);
  }

  /** Turns push off for `uid` here: the stored subscription goes, then the browser's. */
  async disable(uid) {
    const subscription = await this.subscription();
    if (subscription && uid) {
      const id = await subscriptionId(subscription.endpoint);
      await this.hearth.db.ref(`pushSubscriptions/${uid}/${id}`).remove();
    }
    this.owner = null;
    await subscription?.unsubscribe();
  }

  /**
   * Before `uid` signs out (or after their account was deleted, `stored: false`: the server
   * removed the record): this browser stops receiving their notifications. Never throws, so
   * signing out cannot be held up; a record left behind offline is dropped by the server at
   * the first push, as the push service then says the subscription is gone.
   */
  async leave(uid, { stored = true } = {}) {
    if (!this.supported || !uid || this.owner !== uid) return;
    this.owner = null;
    try {
      const subscription = await this.subscription();
      if (subscription && stored) {
        const id = await subscriptionId(subscription.endpoint);
        const removal = this.hearth.db.ref(`pushSubscriptions/${uid}/${id}`).remove();
        // Offline, the removal would wait for the connection: signing out does not.
        await Promise.race([removal, new Promise((resolve) => setTimeout(resolve, LEAVE_WAIT_MS))]);
      }
      await subscription?.unsubscribe();
    } catch {
      // Refused or offline: the server drops the record at the first push, as above.
    }
  }

  /**
   * After sign-in: when `uid` turned push on here, the subscription is stored again (the browser
   * may have renewed it meanwhile); a browser left subscribed by someone else is unsubscribed.
   */
  async follow(uid) {
    if (!this.supported || !uid) return;
    const owner = this.owner;
    if (owner && owner !== uid) {
      // Their record is theirs to remove (the rules let only them); the server drops it at the
      // first push, when the push service says the subscription is gone.
      this.owner = null;
      await (await this.subscription())?.unsubscribe();
      return;
    }
    if (owner !== uid || this.permission !== 'granted') return;
    const subscription = await this.subscription();
    if (subscription) await this.store(uid, subscription);
    else this.owner = null;
  }
}
