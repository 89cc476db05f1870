// What the console says about backups on every screen, from `GET /.hearth/backups?progress`
// ({ configured, schedule, last: { lastFinished, lastFailed, lastError } }): nothing while
// scheduled backups are on and the last one did not fail; a warning when they are off, when
// the last one failed, or when none finished for twice the interval. Pure: the shell draws it.

/**
 * @param {object} status the server's answer
 * @param {number} now milliseconds since 1970
 * @param {number} startedAt when the server started (ms), to tell "none yet" from "overdue"
 * @returns {{ text: string, level: 'warning'|'error' } | null}
 */
export function backupWarning(status, now, startedAt = now) {
  if (!status) return null;
  if (!status.configured || !status.schedule) {
    return {
      level: 'warning',
      text: 'Backups are off: nothing copies this server\'s data. Start it without --no-backups (daily backups beside the data folder), or with --backup-every.',
    };
  }
  const last = status.last ?? {};
  if (last.lastFailed && (!last.lastFinished || last.lastFailed > last.lastFinished)) {
    return { level: 'error', text: `The last backup failed: ${last.lastError ?? 'no reason given'}.` };
  }
  const every = status.schedule.everyMilliseconds;
  const since = last.lastFinished ?? startedAt;
  if (every > 0 && now - since > 2 * every) {
    return { level: 'warning', text: 'No backup has finished for more than twice the backup interval.' };
  }
  return null;
}
