// Loaded first, as a plain script, on both pages (sdk8.html, sdk9.html), before any SDK: picks
// the transport (the SDKs read `firebase:previous_websocket_failure` when they start), records
// the page's uncaught errors, and defines T, the helpers the scenarios use whatever the
// generation. Each generation's adapter (adapter8.js, adapter9.js) then defines window.A, the
// same operations over its own SDK, and sets window.harnessReady.
'use strict';

(function () {
  const params = new URLSearchParams(location.search);
  const transport = params.get('transport');
  // websocket     a fresh browser: the database SDK opens a WebSocket at /.ws
  // long-polling  a browser whose WebSocket failed before: the SDK reads this key and starts
  //               with long-polling at /.lp (JSONP script tags), then upgrades
  if (transport === 'long-polling') {
    localStorage.setItem('firebase:previous_websocket_failure', 'true');
  } else {
    localStorage.removeItem('firebase:previous_websocket_failure');
  }
  window.harnessErrors = [];
  window.addEventListener('error', (event) => window.harnessErrors.push(String(event.message)));
  window.addEventListener('unhandledrejection', (event) =>
    window.harnessErrors.push('unhandled rejection: ' + String((event.reason && event.reason.message) || event.reason)));

  const sdkLog = [];

  const T = {
    port: Number(params.get('port')),
    transport,
    project: params.get('project') || 'hearth',
    store: {},
    sdkLog,

    // The SDK's database log, kept short, for a failed test's report.
    log(message) {
      sdkLog.push(new Date().toISOString().slice(11, 23) + ' ' + (message.length > 400 ? message.slice(0, 400) + '…' : message));
      if (sdkLog.length > 3000) sdkLog.splice(0, 1000);
    },

    // The app options both generations get (the server's --project is the same ID).
    config(ns) {
      return {
        apiKey: 'hearth-test-key', projectId: T.project, appId: '1:1:web:1',
        databaseURL: `http://127.0.0.1:${T.port}?ns=${ns}`,
        storageBucket: `${T.project}.appspot.com`,
      };
    },

    // Resolves with check()'s value once it is truthy (checked every 25 ms); rejects after `ms`.
    until(check, what = 'a condition', ms = 20000) {
      return new Promise((resolve, reject) => {
        const started = Date.now();
        const tick = () => {
          let value;
          try { value = check(); } catch (error) { reject(error); return; }
          if (value) { resolve(value); return; }
          if (Date.now() - started > ms) { reject(new Error(`timed out after ${ms} ms waiting for ${what}`)); return; }
          setTimeout(tick, 25);
        };
        tick();
      });
    },

    // Resolves with the value of `operation()` (an async function) once it resolves, calling it
    // again after each rejection (for what the server changes after the SDK's own signal, such as
    // a database connection re-authenticated with a new token); rejects with the last error after `ms`.
    async eventually(operation, what = 'an operation to succeed', ms = 20000) {
      const started = Date.now();
      for (;;) {
        try { return await operation(); } catch (error) {
          if (Date.now() - started > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}: ${error.code || ''} ${error.message || error}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },

    // The outcome of a promise that should reject: {code, message}; throws if it resolves.
    async rejection(promise, what = 'the operation') {
      let value;
      try {
        value = await promise;
      } catch (error) {
        return { code: error.code || null, message: String(error.message || error) };
      }
      throw new Error(`${what} succeeded (${JSON.stringify(value)}) but should have been refused`);
    },

    // 'resolved', or the error's code (or message): for outcomes compared all at once.
    async settle(promise) {
      try { await promise; return 'resolved'; } catch (error) { return error.code || String(error.message || error); }
    },

    // Records the value events of `path` on instance `a` (the adapter's onValue): {values(),
    // last(), cancelled(), untilValue(check, what), off()}.
    watch(a, path) {
      const events = [];
      let cancel = null;
      const off = a.onValue(path, (value) => events.push({ value }), (error) => {
        if (!cancel) cancel = { code: error.code || null, message: String(error.message || error) };
      });
      const watcher = {
        events,
        values: () => events.map((event) => event.value),
        last: () => events[events.length - 1],
        cancelled: () => cancel,
        untilValue: (check, what, ms) => T.until(() => {
          if (cancel) throw new Error(`listener on ${path} was cancelled (${cancel.code}: ${cancel.message}) while waiting for ${what}`);
          const last = watcher.last();
          return last !== undefined && check(last.value) ? last : false;
        }, what, ms),
        untilCancelled: (what, ms) => T.until(() => cancel, what || `the listener on ${path} to be cancelled`, ms),
        off,
      };
      return watcher;
    },
  };

  // What the SDK's log says about an instance's realtime connection (its id prefixes its
  // lines, e.g. "c:3:7:0 Websocket connected."): whether it long-polled, opened a WebSocket.
  T.transportOf = (connectionId) => {
    const lines = sdkLog.filter((line) => line.includes(` c:${connectionId}:`));
    return {
      longPolled: lines.some((line) => line.includes('Connecting via long-poll')),
      webSocket: lines.some((line) => line.includes('Websocket connected.')),
    };
  };

  // `length` ASCII characters (so as many bytes), the same on every call.
  T.bigString = (length) => {
    const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_';
    const parts = [];
    for (let i = 0; i < length; i++) parts.push(alphabet[(i * 7) % alphabet.length]);
    return parts.join('');
  };

  // The user as both generations describe it (the same fields of User).
  T.profile = (user) => user && ({
    uid: user.uid, email: user.email || null, emailVerified: user.emailVerified, isAnonymous: user.isAnonymous,
    displayName: user.displayName || null, photoURL: user.photoURL || null,
    providers: user.providerData.map((p) => ({ providerId: p.providerId, uid: p.uid, email: p.email || null })),
  });

  // What checkActionCode tells about a code (SDK 8 also calls the previous address fromEmail).
  T.actionCodeInfo = (info) => ({
    operation: info.operation, email: (info.data && info.data.email) || null,
    previousEmail: (info.data && (info.data.previousEmail || info.data.fromEmail)) || null,
  });

  // A storage object's metadata as a plain object (the same fields in both generations).
  T.metadata = (m) => ({
    name: m.name, fullPath: m.fullPath, bucket: m.bucket, size: m.size, contentType: m.contentType || null,
    cacheControl: m.cacheControl || null, contentDisposition: m.contentDisposition || null,
    contentEncoding: m.contentEncoding || null, contentLanguage: m.contentLanguage || null,
    customMetadata: m.customMetadata || null, generation: m.generation, metageneration: m.metageneration,
  });

  window.T = T;
})();
