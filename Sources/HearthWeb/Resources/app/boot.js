// Starts the app. First it paints the screen this address showed last time, from this
// browser's own copy, and lets the browser show it before the app's modules run (they take most
// of a start-up: dozens of files to fetch, compile and run; <link rel=modulepreload> fetches
// them meanwhile). The copy is the signed-in person's own (kept by /app/screen-cache.js, cleared
// at sign-out). It is marked busy and inert — its buttons do nothing yet — until the app has
// drawn the live screen over it. A classic script, not a module, so it runs as it is parsed.
(function start() {
  'use strict';
  /** The app's whole module graph, asked for at once rather than level by level as imports are found. */
  var MODULES = [
    '/app/main.js',
    '/app/ui.js',
    '/app/icons.js',
    '/app/actions.js',
    '/app/presence.js',
    '/app/components.js',
    '/app/rich-text.js',
    '/app/social.js',
    '/app/paging.js',
    '/app/pending.js',
    '/app/screen-cache.js',
    '/app/screen-place.js',
    '/app/connection-state.js',
    '/app/notifications-sync.js',
    '/app/post-queue.js',
    '/app/push.js',
    '/lib/hearth.js',
    '/lib/hearth-error.js',
    '/lib/database/database.js',
    '/lib/database/path.js',
    '/lib/database/node.js',
    '/lib/database/sha1.js',
    '/lib/database/reference.js',
    '/lib/database/on-disconnect.js',
    '/lib/database/push-id.js',
    '/lib/database/query.js',
    '/lib/database/index.js',
    '/lib/database/query-params.js',
    '/lib/database/server-values.js',
    '/lib/database/sync-engine.js',
    '/lib/database/connection.js',
    '/lib/database/long-poll-transport.js',
    '/lib/database/websocket-transport.js',
    '/lib/database/frames.js',
    '/lib/database/data-snapshot.js',
    '/lib/database/pending-writes.js',
    '/lib/database/persistence.js',
    '/lib/database/server-cache.js',
    '/lib/database/path-tree.js',
    '/lib/database/transaction-queue.js',
    '/lib/database/view.js',
    '/lib/database/cache-records.js',
    '/lib/database/connection-auth.js',
    '/lib/database/offline-cache.js',
    '/lib/database/sync-core.js',
  ];
  MODULES.forEach(function (href) {
    var link = document.createElement('link');
    link.rel = 'modulepreload';
    link.href = href;
    document.head.appendChild(link);
  });
  function runApp() {
    import('/app/main.js').catch(function (error) {
      var main = document.getElementById('main');
      if (main) main.textContent = 'Hearth could not start: ' + error.message + ' Reload the page to try again.';
    });
  }
  if (paintLastScreen()) {
    // After the next frame, so the copy is on screen before the modules take the thread.
    requestAnimationFrame(function () { setTimeout(runApp, 0); });
  } else {
    runApp();
  }
}());

/** Paints the kept copy of this address's screen; true when there was one. */
function paintLastScreen() {
  'use strict';
  var KEY = 'hearth:screens';
  var main = document.getElementById('main');
  if (!main) return false;
  var saved;
  try {
    saved = JSON.parse(localStorage.getItem(KEY) || 'null');
  } catch (error) {
    return false;
  }
  var screen = saved && saved.screens && saved.screens[location.hash || '#/'];
  if (!screen || typeof screen.main !== 'string') return false;
  main.innerHTML = screen.main;
  main.setAttribute('aria-busy', 'true');
  main.inert = true;
  main.setAttribute('data-cached-paint', 'true');
  var nav = document.getElementById('nav');
  var account = document.getElementById('account');
  if (nav && typeof screen.nav === 'string') nav.innerHTML = screen.nav;
  if (account && typeof screen.account === 'string') account.innerHTML = screen.account;
  // Style attributes were kept aside (the page's CSP refuses them in parsed HTML).
  var styled = document.querySelectorAll('[data-kept-style]');
  for (var index = 0; index < styled.length; index++) {
    styled[index].style.cssText = styled[index].getAttribute('data-kept-style');
    styled[index].removeAttribute('data-kept-style');
  }
  return true;
}
