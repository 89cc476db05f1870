// Who is online (Firebase's presence pattern): while a signed-in person has the app open,
// `status/{uid}` reads `online`; when the page's connection to the server ends (a closed tab,
// a lost network), the server writes `offline` with the time, through onDisconnect. The
// registration belongs to one connection, so it is made again whenever `.info/connected`
// turns true.
import { ServerValue } from '/lib/hearth.js';

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

/** What a status reads as: "Online", "Last seen 5 min ago", or nothing when unknown. */
export function presenceText(status, now = Date.now()) {
  if (status?.state === 'online') return 'Online';
  if (typeof status?.lastChanged !== 'number') return '';
  const minutes = Math.max(0, Math.round((now - status.lastChanged) / 60000));
  if (minutes < 1) return 'Last seen just now';
  if (minutes < 60) return `Last seen ${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `Last seen ${hours} h ago`;
  return `Last seen ${new Date(status.lastChanged).toLocaleDateString()}`;
}
