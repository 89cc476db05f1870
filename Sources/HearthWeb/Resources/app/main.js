// The app shell: connects to the server, keeps the session, draws the navigation, and maps
// the address's hash to a view module, mounting it and cleaning the previous one up.
import { Hearth } from '/lib/hearth.js';
import { h, avatar, toast, errorWords, skipLinkFocusesMain, refreshTimes, useCurrentPictures, refreshAvatars } from '/app/ui.js';
import { cachedOrRead } from '/app/social.js';
import { authorOf } from '/app/actions.js';
import { Presence } from '/app/presence.js';
import { DevicePush } from '/app/push.js';
import { PostQueue } from '/app/post-queue.js';
import { icon } from '/app/icons.js';
import { saveScreen, clearScreens, hasSettled, screensOwner } from '/app/screen-cache.js';
import { keepNotificationsSynced } from '/app/notifications-sync.js';
import { placeOf, scrollFor } from '/app/screen-place.js';

/** How long the copy of the last screen (see /app/boot.js) may wait for the live one to load. */
const CACHED_PAINT_MS = 1500;

/**
 * Hash routes → view modules (`/app/views/<module>.js`). `:name` segments become params;
 * `params` are fixed ones; `?q=…` query parameters are added too.
 */
const ROUTES = [
  { path: '', module: 'posts', params: { kind: 'recent' }, title: 'Recent posts' },
  { path: 'top', module: 'posts', params: { kind: 'top' }, title: 'Top posts' },
  { path: 'mine', module: 'posts', params: { kind: 'mine' }, title: 'My posts' },
  { path: 'post/:id', module: 'post', title: 'Post' },
  { path: 'compose', module: 'compose', title: 'New post' },
  { path: 'signin', module: 'auth', params: { mode: 'signin' }, title: 'Sign in' },
  { path: 'signup', module: 'auth', params: { mode: 'signup' }, title: 'Create an account' },
  { path: 'account', module: 'auth', params: { mode: 'account' }, title: 'Your account' },
  { path: 'forgot', module: 'auth', params: { mode: 'forgot' }, title: 'Forgot your password?' },
  { path: 'feed', module: 'feed', title: 'Home feed' },
  { path: 'profile/:uid', module: 'profile', title: 'Profile' },
  { path: 'search', module: 'search', title: 'Search' },
  { path: 'tag/:tag', module: 'tag', title: 'Hashtag' },
  { path: 'chats', module: 'chat', title: 'Chats' },
  { path: 'chat/with/:uid', module: 'chat', title: 'Chat' },
  { path: 'chat/:conversationId', module: 'chat', title: 'Chat' },
  { path: 'saved', module: 'saved', title: 'Saved posts' },
  { path: 'notifications', module: 'notifications', title: 'Notifications' },
  { path: 'settings/notifications', module: 'notification-settings', title: 'Notification settings' },
  { path: 'moderation', module: 'moderation', title: 'Moderation' },
];

/**
 * The navigation, in order. `who`: shown to everyone ('all'), to people signed in ('user'), or
 * to admins ('admin': the ID token's `admin` claim, which the rules judge by too).
 * On phones it is a tab bar at the bottom; when there are more destinations than fit, those
 * marked `more` are under its "More" button.
 */
const NAV = [
  { hash: '#/', label: 'Recent', icon: 'recent', who: 'all' },
  { hash: '#/top', label: 'Top', icon: 'top', who: 'all', more: true },
  { hash: '#/feed', label: 'Feed', icon: 'feed', who: 'user' },
  { hash: '#/search', label: 'Search', icon: 'search', who: 'all' },
  { hash: '#/chats', label: 'Chats', icon: 'chats', who: 'user', unread: 'chats' },
  { hash: '#/saved', label: 'Saved', icon: 'saved', who: 'user', more: true },
  { hash: '#/mine', label: 'My posts', icon: 'mine', who: 'user', more: true },
  { hash: '#/notifications', label: 'Notifications', icon: 'bell', who: 'user', more: true, unread: 'notifications' },
  { hash: '#/moderation', label: 'Moderation', icon: 'shield', who: 'admin', more: true },
];
/** How often, at most, a change of `admins/{me}` is looked for in a new ID token (see watchAdmin). */
const ADMIN_CLAIM_ATTEMPTS = 7;
/** Tabs a phone's bar holds (the last may be "More"). */
const MAX_TABS = 5;
/** Phones get the tab bar (app.css draws it at the same width). */
const PHONE = matchMedia('(max-width: 600px)');

/** The route for a hash like `#/post/abc?x=1`, with its params; null when none matches. */
export function matchRoute(hash) {
  const [pathPart, queryPart = ''] = hash.replace(/^#\/?/, '').split('?');
  const segments = pathPart.split('/').filter(Boolean).map((segment) => {
    try {
      return decodeURIComponent(segment);
    } catch {
      return segment;
    }
  });
  for (const route of ROUTES) {
    const pattern = route.path.split('/').filter(Boolean);
    if (pattern.length !== segments.length) continue;
    const params = { ...Object.fromEntries(new URLSearchParams(queryPart)), ...route.params };
    const matches = pattern.every((part, index) => {
      if (part.startsWith(':')) {
        params[part.slice(1)] = segments[index];
        return true;
      }
      return part === segments[index];
    });
    if (matches) return { route, params };
  }
  return null;
}

class App {
  constructor(hearth) {
    this.hearth = hearth;
    this.user = hearth.auth.currentUser;
    this.main = document.getElementById('main');
    this.nav = document.getElementById('nav');
    this.account = document.getElementById('account');
    this.offline = document.getElementById('offline');
    this.cleanup = null;
    this.mountCount = 0;
    /** The hash of the live screen shown, kept as the screen's copy when it is left. */
    this.shownHash = null;
    this.presence = new Presence(hearth);
    /** Push notifications in this browser (app/push.js). */
    this.push = new DevicePush(hearth);
    /** Posts with photos made offline, sent when the connection is back (app/post-queue.js). */
    this.postQueue = new PostQueue(hearth, {
      onSent: () => toast('Your post waiting to be sent is published.', 'success'),
      onRefused: (entry, error) => toast(`A post waiting to be sent was refused: ${errorWords(error)}`, 'error'),
    });
    /**
     * People's current profile pictures, by uid, read once each (posts and comments keep the
     * one their author had then); one's own is followed live (see followOwnPicture).
     */
    this.pictures = new Map();
    this.ownPicture = null;
    useCurrentPictures((uid) => {
      if (!this.pictures.has(uid)) this.pictures.set(uid, currentPicture(hearth, uid));
      return this.pictures.get(uid);
    });
    /**
     * The signed-in person's unread notifications and direct messages, live, for the badges
     * and the title; and the listeners that count them.
     */
    this.unread = { notifications: 0, chats: 0 };
    this.unreadWatch = null;
    this.chatWatch = null;
    /** The screen's own title, before the unread count. */
    this.baseTitle = document.title;
    /** Whether the signed-in person is an admin (their ID token's claim); and the watch of their `admins/` entry. */
    this.admin = hearth.auth.currentUser?.claims?.admin === true;
    this.adminWatch = null;
  }

  start() {
    window.addEventListener('hashchange', () => {
      // Where the reader comes from, for a "← Back" that keeps its place.
      this.cameFromApp = this.shownHash;
      this.render({ focus: true });
    });
    this.keepScrollPositions();
    // The screen's copy for the next start: kept when the page goes away or out of sight.
    window.addEventListener('pagehide', () => this.saveShown());
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'hidden') this.saveShown();
    });
    skipLinkFocusesMain();
    // The phone's "More" sheet closes when focus or a tap goes elsewhere.
    this.nav.addEventListener('focusout', (event) => {
      if (event.relatedTarget && !this.nav.contains(event.relatedTarget)) this.showMore?.(false);
    });
    document.addEventListener('pointerdown', (event) => {
      if (!this.nav.contains(event.target)) this.showMore?.(false);
    });
    PHONE.addEventListener('change', () => this.drawNav());
    this.hearth.auth.onAuthStateChanged((user) => {
      const changed = user?.uid !== this.user?.uid || user?.displayName !== this.user?.displayName;
      // Signed out by the server (the account disabled or deleted, its sessions revoked),
      // here or while the page loaded: say so, once.
      const endedBy = this.hearth.auth.sessionEndedBy;
      if (!user && endedBy && endedBy !== this.endedByShown) {
        this.endedByShown = endedBy;
        toast(`You have been signed out. ${errorWords(endedBy)}`, 'error');
      }
      // Screens kept for someone else are never painted for this person.
      const owner = screensOwner();
      if (owner !== undefined && owner !== (user?.uid ?? null)) clearScreens();
      this.user = user;
      this.admin = user?.claims?.admin === true;
      this.presence.follow(user);
      this.push.follow(user?.uid ?? null).catch((error) => console.warn(`Hearth: push notifications: ${error.message}`));
      this.postQueue.follow(user?.uid ?? null);
      this.followOwnPicture(user);
      this.watchUnread();
      this.watchAdmin();
      this.drawChrome();
      // Views show who is signed in: draw the current one again for the new user.
      if (changed) this.render({ focus: false });
    });
    // A new ID token of the same person (a refresh) may give or take the admin claim: the
    // navigation follows, and the moderation screen is drawn again for it. (Another person's
    // token is onAuthStateChanged's business, above.)
    this.hearth.auth.onIdTokenChanged((user) => {
      if (!user || user.uid !== this.user?.uid) return;
      const admin = user.claims?.admin === true;
      if (admin === this.admin) return;
      this.admin = admin;
      this.drawNav();
      if (matchRoute(location.hash || '#/')?.route.module === 'moderation') this.render({ focus: false });
    });
    this.watchConnection();
    this.watchUnread();
    this.watchAdmin();
    this.drawChrome();
    this.render({ focus: false });
  }

  /**
   * Follows the signed-in person's entry in FriendlyPix's `admins/` list (which the operator
   * writes and they may read): the server gives or takes the `admin` claim from it, and a claim
   * is only in a new ID token, so when the entry changes (or says admin while the token does
   * not) a new token is asked for — again, a little later each time, until it agrees (the server
   * sets the claim just after the entry is written). The database connection signs in again
   * with it, and onIdTokenChanged above shows or hides the moderation screen: no signing out.
   */
  watchAdmin() {
    const uid = this.user?.uid ?? null;
    if (this.adminWatch?.uid === uid) return;
    if (this.adminWatch) {
      this.adminWatch.ref.off('value', this.adminWatch.listener);
      clearTimeout(this.adminWatch.timer);
    }
    this.adminWatch = null;
    if (!uid) return;
    const watch = { uid, ref: this.hearth.db.ref(`admins/${uid}`), listed: null, timer: null };
    watch.listener = (snapshot) => {
      const listed = snapshot.val() === true;
      // At first, only a listing the token lacks is news (a claim set in the console, without
      // an entry, is not taken away); after that, any change is.
      const follow = watch.listed === null ? listed && !this.admin : listed !== watch.listed;
      watch.listed = listed;
      if (follow) this.followAdminClaim(watch, 0);
    };
    this.adminWatch = watch;
    watch.ref.on('value', watch.listener, () => {});
  }

  /** Asks for a new ID token until its admin claim agrees with the `admins/` entry (or gives up). */
  followAdminClaim(watch, attempt) {
    clearTimeout(watch.timer);
    this.hearth.auth.getIdTokenResult(true).then((result) => {
      if (this.adminWatch !== watch || !result) return;
      if ((result.claims.admin === true) === watch.listed || attempt + 1 >= ADMIN_CLAIM_ATTEMPTS) return;
      watch.timer = setTimeout(() => this.followAdminClaim(watch, attempt + 1), 250 * 2 ** attempt);
    }, () => {
      // Offline or signed out: the next change of the entry, or the next start, tries again.
    });
  }

  /**
   * The "Offline — changes will sync" banner, from `.info/connected`. Not connected yet at
   * start is not offline: the banner waits for a failed attempt, a lost connection, or two
   * seconds without one. It counts the writes waiting to be sent.
   */
  watchConnection() {
    const db = this.hearth.db;
    let connected = false;
    let patient = true;
    const show = () => {
      const offline = !connected && (!patient || !this.hearth.isOnline);
      this.offline.hidden = !offline;
      if (!offline) return;
      const waiting = db.pendingWriteCount();
      const words = waiting ? ` ${waiting === 1 ? '1 change is' : `${waiting} changes are`} waiting to be sent.` : '';
      const text = `Offline — changes will sync when the connection is back.${words}`;
      if (this.offline.textContent !== text) this.offline.textContent = text;
    };
    let lost = false;
    db.ref('.info/connected').on('value', (snapshot) => {
      const now = snapshot.val() === true;
      // Back after being cut off: the server may have been updated meanwhile.
      if (now && lost) navigator.serviceWorker?.controller?.postMessage({ type: 'hearth-shell-check' });
      // Connected (again, or at last after an offline start): photos that failed load now.
      if (now && !connected) retryBrokenImages();
      lost ||= connected && !now;
      if (now) lost = false;
      connected = now;
      show();
    });
    this.hearth.onConnectionChange(show);
    db.onPendingWritesChange(show);
    setTimeout(() => {
      patient = false;
      show();
    }, 2000);
  }

  /**
   * Counts the signed-in person's unread notifications, live (the rules let only them read
   * theirs), for the badge in the navigation.
   */
  watchUnread() {
    const uid = this.user?.uid ?? null;
    if (this.unreadWatch?.uid === uid) return;
    if (this.unreadWatch) this.unreadWatch.query.off('value', this.unreadWatch.listener);
    if (this.chatWatch) this.chatWatch.query.off('value', this.chatWatch.listener);
    this.unreadWatch?.stopKeeping();
    this.unreadWatch = null;
    this.chatWatch = null;
    this.unread = { notifications: 0, chats: 0 };
    this.showUnread();
    if (!uid) return;
    const query = this.hearth.db.ref(`notifications/${uid}`).orderByChild('read').equalTo(false);
    const listener = (snapshot) => {
      this.unread.notifications = snapshot.numChildren();
      this.showUnread();
    };
    // The screen's newest page is kept too: cached, Notifications opens offline (as Chats).
    this.unreadWatch = { uid, query, listener, stopKeeping: keepNotificationsSynced(this.hearth.db, uid) };
    query.on('value', listener, () => {});
    this.watchChats(uid);
  }

  /**
   * The person's conversations (`user-chats/{uid}`: each with its unread count and last
   * message), live: the unread messages count on Chats, and a new message in a conversation
   * that is not on screen shows a toast that opens it.
   */
  watchChats(uid) {
    const query = this.hearth.db.ref(`user-chats/${uid}`);
    const watch = { uid, query, seen: null };
    watch.listener = (snapshot) => {
      const now = new Map();
      let total = 0;
      snapshot.forEach((child) => {
        const chat = child.val();
        now.set(child.key, chat);
        total += Number.isFinite(chat?.unread) ? Math.max(0, chat.unread) : 0;
      });
      // The first answer is what was there already: only later ones are news.
      if (watch.seen) {
        for (const [id, chat] of now) {
          const before = watch.seen.get(id);
          const arrived = (chat?.unread ?? 0) > (before?.unread ?? 0) && (chat?.updated ?? 0) > (before?.updated ?? 0);
          if (arrived && !this.showsConversation(id, chat?.with)) this.announceMessage(id, chat);
        }
      }
      watch.seen = now;
      this.unread.chats = total;
      this.showUnread();
    };
    this.chatWatch = watch;
    query.on('value', watch.listener, () => {});
  }

  showsConversation(id, other) {
    const hash = decodeURIComponent((location.hash || '#/').split('?')[0]);
    return hash === `#/chat/${id}` || (other && hash === `#/chat/with/${other}`);
  }

  /** "Bob: Coffee?", with a link to the conversation. */
  async announceMessage(id, chat) {
    const name = chat?.with
      ? await cachedOrRead(this.hearth, this.hearth.db.ref(`people/${chat.with}/full_name`)).then((s) => s.val(), () => null)
      : null;
    const text = typeof chat?.lastMessage === 'string' ? chat.lastMessage : '';
    toast(`${name || 'Someone'}: ${text.length > 120 ? `${text.slice(0, 119)}…` : text}`, 'info',
      { action: { label: 'Open', href: `#/chat/${encodeURIComponent(id)}`, testId: 'message-toast-open' } });
  }

  /** The unread counts on Notifications and Chats (and on "More" for those in it), and in the title. */
  showUnread() {
    const counts = this.unread;
    const words = (count) => (count ? `, ${count} unread` : '');
    const badgeText = (count) => (count > 99 ? '99+' : String(count));
    for (const badge of [...this.nav.querySelectorAll('[data-unread-badge]'), ...this.account.querySelectorAll('[data-unread-badge]')]) {
      const kinds = badge.dataset.unreadBadge.split(' ');
      const count = kinds.reduce((sum, kind) => sum + (counts[kind] ?? 0), 0);
      badge.textContent = badgeText(count);
      badge.hidden = count === 0;
    }
    for (const link of [...this.nav.querySelectorAll('a[href="#/notifications"]'), ...this.account.querySelectorAll('a[href="#/notifications"]')]) {
      link.setAttribute('aria-label', `Notifications${words(counts.notifications)}`);
    }
    for (const link of this.nav.querySelectorAll('a[href="#/chats"]')) {
      link.setAttribute('aria-label', `Chats${words(counts.chats)}`);
    }
    const more = this.nav.querySelector('.more-button.holds-unread');
    if (more) {
      const inside = more.querySelector('[data-unread-badge]')?.dataset.unreadBadge.split(' ') ?? [];
      const count = inside.reduce((sum, kind) => sum + (counts[kind] ?? 0), 0);
      const what = inside.length === 1 ? { notifications: ' notifications', chats: ' messages' }[inside[0]] ?? '' : '';
      more.setAttribute('aria-label', count ? `More, ${count} unread${what}` : 'More');
    }
    const total = counts.notifications + counts.chats;
    document.title = total ? `(${badgeText(total)}) ${this.baseTitle}` : this.baseTitle;
  }

  /** A new profile picture of one's own shows at once on every avatar of theirs on the page. */
  followOwnPicture(user) {
    if (this.ownPicture?.uid === user?.uid) return;
    if (this.ownPicture) this.ownPicture.ref.off('value', this.ownPicture.callback);
    this.ownPicture = null;
    if (!user) return;
    const ref = this.hearth.db.ref(`people/${user.uid}`);
    const callback = ref.on('value', (snapshot) => {
      const url = pictureOf(snapshot);
      const before = this.pictures.get(user.uid);
      this.pictures.set(user.uid, Promise.resolve(url));
      if (before) before.then((previous) => { if (previous !== url) refreshAvatars(user.uid, url); });
    }, () => {});
    this.ownPicture = { uid: user.uid, ref, callback };
  }

  get context() {
    const navigate = (hash) => {
      if (location.hash === hash) this.render({ focus: true });
      else location.hash = hash;
    };
    return {
      hearth: this.hearth,
      user: this.user,
      presence: this.presence,
      push: this.push,
      postQueue: this.postQueue,
      /** The screen shown before this one (in this page), or null: a "← Back" goes there. */
      cameFromApp: this.cameFromApp ?? null,
      bucket: this.hearth.bucket,
      toast,
      navigate,
      /** Sends a signed-out visitor to sign in, then back here. */
      requireSignIn: (purpose) => {
        toast(`Sign in to ${purpose}.`);
        navigate(`#/signin?next=${encodeURIComponent(location.hash || '#/')}`);
      },
    };
  }

  drawChrome() {
    this.drawNav();
    const signedIn = Boolean(this.user);
    const author = this.user && authorOf(this.user);
    this.account.replaceChildren(signedIn
      ? h('div', { class: 'row' },
        // On phones Notifications are under "More": the bell is one tap away in the header.
        h('a', { href: '#/notifications', class: 'header-bell', 'data-testid': 'header-notifications', 'aria-label': 'Notifications' },
          icon('bell', 22), h('span', {
            class: 'unread-badge', 'data-unread-badge': 'notifications', 'data-testid': 'header-unread-badge', 'aria-hidden': 'true', hidden: true,
          })),
        h('a', { href: '#/compose', class: 'button primary compose-link', 'data-testid': 'compose-link' },
          h('span', { 'aria-hidden': 'true' }, '+'), h('span', { class: 'label' }, ' New post')),
        h('a', { href: '#/account', class: 'account-link', 'data-testid': 'account-link', title: 'Your account' },
          avatar(author, 32), h('span', { class: 'visually-hidden' }, `Your account (${author.full_name})`)))
      : h('div', { class: 'row' },
        h('a', { href: '#/signin', class: 'button secondary', 'data-testid': 'signin-link' }, 'Sign in'),
        h('a', { href: '#/signup', class: 'button primary', 'data-testid': 'signup-link' }, 'Sign up')));
    this.showUnread();
  }

  /**
   * The navigation: a row of links at the top on wider screens; on phones a tab bar at the
   * bottom, with icons and words, whose "More" opens a sheet of the other destinations.
   */
  drawNav() {
    this.showMore = null;
    const current = (location.hash || '#/').split('?')[0];
    const shown = NAV.filter((item) => item.who === 'all' || (item.who === 'user' && this.user)
      || (item.who === 'admin' && this.user && this.admin));
    const badge = (kinds) => h('span', {
      class: 'unread-badge', 'data-unread-badge': kinds, 'data-testid': kinds === 'chats' ? 'unread-badge-chats' : 'unread-badge', 'aria-hidden': 'true', hidden: true,
    });
    const link = (item, className) => h('a', {
      href: item.hash, class: className, 'aria-current': current === item.hash ? 'page' : null,
    }, icon(item.icon, 22), h('span', { class: 'nav-label' }, item.label), item.unread ? badge(item.unread) : null);
    // The same list on every screen (app.css makes it a tab bar on phones, as index.html's first
    // paint is); on a phone with too many for the bar, the first ones not marked `more` are
    // tabs and the rest go under "More".
    const crowded = PHONE.matches && shown.length > MAX_TABS;
    const tabs = crowded ? shown.filter((item) => !item.more).slice(0, MAX_TABS - 1) : shown;
    const more = shown.filter((item) => !tabs.includes(item));
    const items = tabs.map((item) => h('li', {}, link(item, 'nav-link')));
    if (more.length) {
      const sheet = h('div', { id: 'nav-more', class: 'more-sheet', hidden: true, 'data-testid': 'more-sheet' },
        h('ul', { class: 'more-list', role: 'list' }, more.map((item) => h('li', {}, link(item, 'more-link')))));
      const unreadInside = more.filter((item) => item.unread).map((item) => item.unread).join(' ');
      const holdsUnread = Boolean(unreadInside);
      const button = h('button', {
        type: 'button',
        class: `nav-link more-button${more.some((item) => item.hash === current) ? ' holds-current' : ''}${holdsUnread ? ' holds-unread' : ''}`,
        'aria-expanded': 'false', 'aria-controls': 'nav-more', 'data-testid': 'more-button',
      }, icon('more', 22), h('span', { class: 'nav-label' }, 'More'), holdsUnread ? badge(unreadInside) : null);
      const show = (open) => {
        sheet.hidden = !open;
        button.setAttribute('aria-expanded', String(open));
      };
      button.addEventListener('click', () => show(sheet.hidden));
      // Escape, a tap elsewhere or focus moving away closes it.
      sheet.addEventListener('keydown', (event) => {
        if (event.key !== 'Escape') return;
        event.preventDefault();
        show(false);
        button.focus();
      });
      button.addEventListener('keydown', (event) => {
        if (event.key === 'Escape' && !sheet.hidden) {
          event.preventDefault();
          show(false);
        }
      });
      this.showMore = show;
      items.push(h('li', {}, button));
      this.nav.replaceChildren(h('ul', { class: 'nav-list', role: 'list' }, items), sheet);
      this.showUnread();
      return;
    }
    this.nav.replaceChildren(h('ul', { class: 'nav-list', role: 'list' }, items));
    this.showUnread();
  }

  /** Keeps the live screen's look for the next start (see /app/screen-cache.js). */
  saveShown() {
    if (!this.shownHash || this.main.dataset.cachedPaint) return;
    saveScreen(this.shownHash, this.user?.uid ?? null, { main: this.main, nav: this.nav, account: this.account });
  }

  /** Ends the painted copy of the last screen: what is shown from now on is live. */
  showLive() {
    if (!this.main.dataset.cachedPaint) return;
    delete this.main.dataset.cachedPaint;
    this.main.inert = false;
    this.main.removeAttribute('aria-busy');
  }

  /**
   * Puts the live screen in place. Over a painted copy of the last screen, the view is drawn
   * out of sight first and swapped in once it has loaded (or after CACHED_PAINT_MS), so the
   * screen does not blink through "Loading…".
   */
  place(container, mount) {
    if (!this.main.dataset.cachedPaint) {
      this.main.replaceChildren(container);
      return;
    }
    const holder = h('div', { hidden: true });
    holder.append(container);
    this.main.append(holder);
    const started = performance.now();
    const swap = () => {
      if (mount !== this.mountCount || !this.main.dataset.cachedPaint) return;
      if (!hasSettled(container) && performance.now() - started < CACHED_PAINT_MS) {
        requestAnimationFrame(swap);
        return;
      }
      this.main.replaceChildren(container);
      this.showLive();
    };
    swap();
  }

  async render({ focus }) {
    this.saveShown();
    this.cleanup?.();
    this.cleanup = null;
    const mount = ++this.mountCount;
    this.restoringScroll = null;
    // Only the first screen may be drawn over a painted copy.
    if (mount > 1) this.showLive();
    this.drawChrome();
    const match = matchRoute(location.hash || '#/');
    this.shownHash = null;
    if (!match) {
      this.showLive();
      this.baseTitle = 'Not found · Hearth';
      this.showUnread();
      this.main.replaceChildren(h('section', { class: 'page empty' },
        h('h1', {}, 'Page not found'), h('p', {}, h('a', { href: '#/' }, 'Go to recent posts'))));
      return;
    }
    this.baseTitle = `${match.route.title} · Hearth`;
    this.showUnread();
    let view;
    try {
      view = await import(`/app/views/${match.route.module}.js`);
    } catch (error) {
      if (mount !== this.mountCount) return;
      this.showLive();
      this.main.replaceChildren(h('section', { class: 'page empty' },
        h('h1', {}, 'This page could not be loaded'),
        h('p', { class: 'error', role: 'alert', 'data-testid': 'error' }, errorWords(error))));
      return;
    }
    // Another navigation happened while the module loaded.
    if (mount !== this.mountCount) return;
    const container = h('div', { class: 'view', 'data-view': match.route.module });
    this.place(container, mount);
    this.shownHash = location.hash || '#/';
    try {
      this.cleanup = view.mount(container, this.context, match.params) ?? null;
    } catch (error) {
      container.replaceChildren(h('p', { class: 'error', role: 'alert', 'data-testid': 'error' }, errorWords(error)));
    }
    if (focus) {
      // Back (or Forward) to a screen seen before: where it was left; a new one: its top.
      const saved = history.state;
      if (saved?.scroll > 0) this.restoreScroll({ scroll: saved.scroll, item: saved.item ?? null }, mount);
      else window.scrollTo(0, 0);
      // Screen readers start at the new content, unless the view focused a field itself.
      if (!container.contains(document.activeElement)) this.main.focus({ preventScroll: true });
    }
  }

  /**
   * Each screen's place is kept in its own history entry (as the browser does for pages, which
   * it cannot do here: screens draw after their data comes), saved once scrolling stops (the
   * browser limits how often an entry may change): see screen-place.js.
   */
  keepScrollPositions() {
    if ('scrollRestoration' in history) history.scrollRestoration = 'manual';
    let timer = null;
    const save = (event) => {
      clearTimeout(timer);
      // While a screen is brought back to its place, its entry already holds that place; the
      // positions it passes through (a list still loading) are not the person's.
      if (this.restoringScroll) return;
      const { scroll, item } = placeOf(this.main, event?.target);
      history.replaceState({ ...(history.state ?? {}), scroll, item }, '');
    };
    window.addEventListener('scroll', () => {
      clearTimeout(timer);
      timer = setTimeout(save, 120);
    }, { passive: true });
    // A tap on a link leaves the screen at once: its position is saved first (capture runs
    // before the link changes the address), and a save still waiting would land on the next.
    document.addEventListener('click', save, { capture: true });
    window.addEventListener('hashchange', () => clearTimeout(timer));
  }

  /**
   * Scrolls back to `place` (see screen-place.js) once the screen is tall enough (its data may
   * still be coming, and a list drawn again may briefly be shorter, which moves the page up),
   * and holds it there until it has stayed for half a second. The person's own scrolling, a
   * tap or a key ends it at once; after 10 s it goes as far as the screen reaches.
   */
  restoreScroll(place, mount) {
    const until = performance.now() + 10_000;
    let heldSince = null;
    let done = false;
    const restoring = {};
    this.restoringScroll = restoring;
    const inputs = ['wheel', 'touchstart', 'pointerdown', 'keydown'];
    const finish = () => {
      done = true;
      if (this.restoringScroll === restoring) this.restoringScroll = null;
      for (const type of inputs) window.removeEventListener(type, finish, true);
    };
    for (const type of inputs) window.addEventListener(type, finish, { capture: true, passive: true });
    const step = () => {
      if (done || mount !== this.mountCount) return finish();
      const now = performance.now();
      const y = scrollFor(this.main, place);
      const reachable = document.documentElement.scrollHeight - window.innerHeight;
      if (now > until) {
        if (Math.abs(window.scrollY - y) > 1) window.scrollTo(0, Math.min(y, Math.max(0, reachable)));
        return finish();
      }
      if (reachable >= y && Math.abs(window.scrollY - y) > 1) {
        window.scrollTo(0, y);
        heldSince = null;
      } else if (reachable >= y) {
        heldSince ??= now;
        if (now - heldSince >= 500) return finish();
      }
      requestAnimationFrame(step);
    };
    step();
  }
}

async function start() {
  const main = document.getElementById('main');
  // The first screen's module loads while the client starts (the router's import finds it ready).
  const first = matchRoute(location.hash || '#/');
  if (first) import(`/app/views/${first.route.module}.js`).catch(() => {});
  try {
    const hearth = await Hearth.connect({ startDatabase: true });
    new App(hearth).start();
    // "just now" becomes "1 minute ago" without a reload.
    setInterval(() => refreshTimes(), 30_000);
    // Tests and the console reach the client from the page.
    window.hearth = hearth;
    keepShellOffline();
  } catch (error) {
    delete main.dataset.cachedPaint;
    main.inert = false;
    main.removeAttribute('aria-busy');
    main.replaceChildren(h('section', { class: 'page empty' },
      h('h1', {}, 'Hearth is not reachable'),
      h('p', { class: 'error', role: 'alert', 'data-testid': 'error' }, errorWords(error)),
      h('p', {}, h('button', { type: 'button', class: 'button', 'on:click': () => location.reload() }, 'Try again'))));
  }
}

/** Loads again every image that failed (the server was out of reach), each from its address. */
function retryBrokenImages() {
  for (const image of document.querySelectorAll('img')) {
    if (!image.complete || image.naturalWidth > 0 || !image.getAttribute('src')) continue;
    const source = image.getAttribute('src');
    image.removeAttribute('src');
    image.setAttribute('src', source);
  }
}

/** A profile's picture for avatars: its thumbnail, else the picture, else null. */
function pictureOf(profile) {
  for (const field of ['profile_thumbnail', 'profile_picture']) {
    const value = profile.child(field).val();
    if (typeof value === 'string' && value) return value;
  }
  return null;
}

/** `uid`'s current picture for avatars, read once (from the cache when it has it). */
async function currentPicture(hearth, uid) {
  const [thumbnail, picture] = await Promise.all(['profile_thumbnail', 'profile_picture']
    .map((field) => cachedOrRead(hearth, hearth.db.ref(`people/${uid}/${field}`)).then((snapshot) => snapshot.val(), () => null)));
  return [thumbnail, picture].find((value) => typeof value === 'string' && value) ?? null;
}

/**
 * Registers the service worker that keeps the app's files for offline use (/sw.js, whose
 * scope is the whole origin: the app is at /). It says when a new version is ready.
 */
function keepShellOffline() {
  if (!('serviceWorker' in navigator)) return;
  navigator.serviceWorker.addEventListener('message', (event) => {
    if (event.data?.type === 'hearth-shell-updated') toast('A new version of Hearth is ready: reload the page to use it.');
    // A push notification was clicked while the app was open: show what it is about.
    if (event.data?.type === 'hearth-open' && typeof event.data.hash === 'string' && event.data.hash.startsWith('#/')) {
      location.hash = event.data.hash;
    }
  });
  navigator.serviceWorker.register('/sw.js').catch((error) => {
    // Without it the app still works online; only opening it offline needs it.
    console.warn(`Hearth: the offline app shell is not available (${error.message}).`);
  });
}

start();
