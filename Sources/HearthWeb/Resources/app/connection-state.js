// Whether this page is connected to the server, in the three states screens speak of, and what
// a chat's presence line may say in each. Pure: no DOM, no database (unit-tested in
// Tests/WebUnit/connection-state.test.mjs); presence.js's `watchConnection` feeds it.

/**
 * How long a page that has never connected is "connecting" rather than offline: as long as the
 * app's offline banner waits (main.js), so the two agree.
 */
export const CONNECT_PATIENCE_MS = 2000;

/**
 * 'online', 'connecting' (just started, no answer yet: nothing to say) or 'offline' (the
 * connection was lost, an attempt failed, or it has been waited for long enough).
 * @param {{connected: boolean, everConnected: boolean, reachable: boolean, waitedMs: number}} facts
 *   `reachable`: the client's own view (false once an attempt failed)
 */
export function connectionState({ connected, everConnected, reachable, waitedMs }) {
  if (connected) return 'online';
  if (everConnected || !reachable || waitedMs >= CONNECT_PATIENCE_MS) return 'offline';
  return 'connecting';
}

/**
 * A conversation's presence line. The other person's status is only known while this page is
 * connected: offline, the cached "online" is stale (and their onDisconnect may have run
 * meanwhile), so it says the reader is offline instead; while connecting it says nothing.
 * @returns {{text: string, online: boolean}}
 */
export function presenceLine(status, connection, now = Date.now()) {
  if (connection === 'offline') return { text: 'You are offline', online: false };
  if (connection !== 'online') return { text: '', online: false };
  return { text: presenceText(status, now), online: status?.state === 'online' };
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
