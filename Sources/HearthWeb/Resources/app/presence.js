// Who is online (Firebase's presence pattern): while a signed-in person has the app open,
// `status/{uid}` reads `online`; when the page's connection to the server ends (a closed tab,
// a lost network), the server writes `offline` with the time, through onDisconnect. The
// registration belongs to one connection, so it is made again whenever `.info/connected`
// turns true.
import { ServerValue } from '/lib/hearth.js';
import { connectionState, CONNECT_PATIENCE_MS } from '/app/connection-state.js';

// What a status reads as (kept where the other pure presence words are).
export { presenceText } from '/app/connection-state.js';

export class Presence {
  constructor(hearth) {
    this.hearth = hearth;
    this.uid = null;
    this.connected = false;
    this.observing = false;
  }

  /** Follows who is signed in: their status is kept from now on. */
  follow(user) {
    const uid = user && !user.isAnonymous ? user.uid : null;
    if (uid === this.uid) return;
    this.uid = uid;
    if (uid && !this.observing) {
      this.observing = true;
      this.hearth.db.ref('.info/connected').on('value', (snapshot) => {
        this.connected = snapshot.val() === true;
        this.announce();
      });
    }
    this.announce();
  }

  /** Before signing out: offline now, and nothing left for the connection's end. */
  async signOut() {
    const uid = this.uid;
    this.uid = null;
    if (!uid || !this.connected) return;
    const status = this.hearth.db.ref(`status/${uid}`);
    try {
      await status.onDisconnect().cancel();
      await status.set({ state: 'offline', lastChanged: ServerValue.TIMESTAMP });
    } catch {
      // Offline already: the server's onDisconnect says so when the connection ends.
    }
  }

  async announce() {
    const uid = this.uid;
    if (!uid || !this.connected) return;
    const status = this.hearth.db.ref(`status/${uid}`);
    try {
      await status.onDisconnect().set({ state: 'offline', lastChanged: ServerValue.TIMESTAMP });
      if (this.uid === uid) await status.set({ state: 'online', lastChanged: ServerValue.TIMESTAMP });
    } catch {
      // The connection went again: announced once it is back.
    }
  }
}

/**
 * This page's connection as 'online', 'connecting' or 'offline' (connection-state.js), told to
 * `callback` at once and at every change. Answers a function that stops watching.
 */
export function watchConnection(hearth, callback) {
  let connected = false;
  let everConnected = false;
  let last = null;
  const report = () => {
    const state = connectionState({ connected, everConnected, reachable: hearth.isOnline !== false, waitedMs: performance.now() });
    if (state === last) return;
    last = state;
    callback(state);
  };
  const ref = hearth.db.ref('.info/connected');
  const listener = ref.on('value', (snapshot) => {
    connected = snapshot.val() === true;
    everConnected ||= connected;
    report();
  });
  const stopObserving = hearth.onConnectionChange(report);
  // A page that never connects turns offline once it has waited long enough.
  const timer = setTimeout(report, Math.max(0, CONNECT_PATIENCE_MS - performance.now()) + 50);
  report();
  return () => {
    ref.off('value', listener);
    stopObserving?.();
    clearTimeout(timer);
  };
}
