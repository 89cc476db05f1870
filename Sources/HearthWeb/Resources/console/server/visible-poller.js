// Reads something every few seconds while the page is visible, never twice at once. Hiding
// the page stops the timer (a read under way finishes); showing it again reads at once; a read
// asked for while one runs (a filter just changed) follows right after it rather than being lost.

/**
 * Starts reading at once.
 * @param {(isAlive: () => boolean) => Promise<void>} read  one round of reading and showing;
 *   after an await, it should check `isAlive()` before touching the page.
 * @param {number} intervalMs  the pause between the end of one read and the next
 * @returns {{ now: () => void, stop: () => void }}  `now` reads again at once; `stop` ends it all
 */
export function visiblePoller(read, intervalMs) {
  let timer = null;
  let running = false;
  let again = false;
  let alive = true;
  const isAlive = () => alive;

  async function now() {
    if (!alive) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    clearTimeout(timer);
    try {
      await read(isAlive);
    } finally {
      running = false;
    }
    if (again) {
      again = false;
      now();
    } else {
      schedule();
    }
  }

  function schedule() {
    clearTimeout(timer);
    timer = alive && document.visibilityState === 'visible' ? setTimeout(now, intervalMs) : null;
  }

  const visibility = () => (document.visibilityState === 'visible' ? now() : schedule());
  document.addEventListener('visibilitychange', visibility);
  now();
  return {
    now,
    stop() {
      alive = false;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', visibility);
    },
  };
}
