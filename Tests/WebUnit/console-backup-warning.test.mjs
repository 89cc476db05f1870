// The console's warning about backups (console/backup-warning.js): off, failing, overdue, fine.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backupWarning } from '../../Sources/HearthWeb/Resources/console/backup-warning.js';

const DAY = 86_400_000;
const NOW = 1_800_000_000_000;
const scheduled = (last = {}) => ({ configured: true, schedule: { everyMilliseconds: DAY, keep: 7 }, last });

test('no backups at all, or only from the console, is a warning', () => {
  assert.equal(backupWarning({ configured: false, last: {} }, NOW).level, 'warning');
  assert.match(backupWarning({ configured: true, schedule: null, last: {} }, NOW).text, /Backups are off/);
});

test('a last backup that failed is an error, with its reason', () => {
  const warning = backupWarning(scheduled({ lastFinished: NOW - DAY, lastFailed: NOW - 1000, lastError: 'disk full' }), NOW);
  assert.deepEqual(warning, { level: 'error', text: 'The last backup failed: disk full.' });
  // One that finished after the failure clears it.
  assert.equal(backupWarning(scheduled({ lastFinished: NOW - 10, lastFailed: NOW - 1000, lastError: 'x' }), NOW), null);
});

test('none finished for more than two intervals is a warning; a new server is not overdue', () => {
  assert.equal(backupWarning(scheduled({ lastFinished: NOW - 3 * DAY }), NOW).level, 'warning');
  assert.equal(backupWarning(scheduled({ lastFinished: NOW - DAY }), NOW), null);
  assert.equal(backupWarning(scheduled({}), NOW, NOW - DAY), null);
  assert.equal(backupWarning(null, NOW), null);
});
