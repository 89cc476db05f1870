// SDK 8.10.1, the namespaced API (`firebase.auth()`, `firebase.database().ref()`,
// `firebase.storage().ref()`, loaded with <script> tags by sdk8.html): window.A, the same
// operations as adapter9.js over the modular SDK 9.8.1. Every operation returns plain values
// (T.profile, T.metadata) or rejects with the SDK's own error (its `code`).
'use strict';

(function () {
  firebase.database.enableLogging((message) => T.log(message));
  let count = 0;

  // What both generations report for a sign-in: the user, whether the account is new, the
  // provider and the operation.
  function credential(result) {
    const info = result.additionalUserInfo;
    return { user: T.profile(result.user), isNewUser: info ? info.isNewUser : null,
             providerId: (result.credential && result.credential.providerId) || (info && info.providerId) || null,
             operationType: result.operationType };
  }

  // A new app instance on database `ns`. Its account lives in memory unless `persistent` names
  // it: then it is kept in the browser (the SDK's default, LOCAL) under that app name, and a
  // page loaded later that opens the same name finds the user again.
  function open(ns, { persistent = null } = {}) {
    count += 1;
    const name = persistent || `sdk8-${count}-${Math.random().toString(36).slice(2, 8)}`;
    const app = firebase.initializeApp(T.config(ns), name);
    const auth = app.auth();
    auth.useEmulator(`http://127.0.0.1:${T.port}`, { disableWarnings: true });
    // In memory, as adapter9.js's inMemoryPersistence (no account survives the page).
    const persisted = persistent ? Promise.resolve() : auth.setPersistence(firebase.auth.Auth.Persistence.NONE);
    const db = app.database();
    db.useEmulator('127.0.0.1', T.port);
    const storage = app.storage();
    storage.useEmulator('127.0.0.1', T.port);
    const ref = (path) => db.ref(path);
    const file = (path) => storage.ref(path);
    // One Functions instance per region of this app (so calls carry its user's ID token),
    // each pointed at the server.
    const regions = {};
    const functionsIn = (region) => {
      if (!regions[region]) {
        regions[region] = app.functions(region);
        regions[region].useEmulator('127.0.0.1', T.port);
      }
      return regions[region];
    };
    const current = () => {
      if (!auth.currentUser) throw new Error('no user is signed in');
      return auth.currentUser;
    };
    const signedIn = async (promise) => credential(await promise);
    const a = {
      generation: 8, name, app, auth, db, storage,

      // Accounts
      signUp: async (email, password) => { await persisted; return signedIn(auth.createUserWithEmailAndPassword(email, password)); },
      signIn: async (email, password) => { await persisted; return signedIn(auth.signInWithEmailAndPassword(email, password)); },
      signInAnonymously: async () => { await persisted; return signedIn(auth.signInAnonymously()); },
      signInWithCustomToken: async (token) => { await persisted; return signedIn(auth.signInWithCustomToken(token)); },
      signInWithEmailLink: async (email, link) => { await persisted; return signedIn(auth.signInWithEmailLink(email, link)); },
      isSignInWithEmailLink: (link) => auth.isSignInWithEmailLink(link),
      sendSignInLinkToEmail: (email, settings) => auth.sendSignInLinkToEmail(email, settings),
      sendPasswordResetEmail: (email, settings) => auth.sendPasswordResetEmail(email, settings),
      verifyPasswordResetCode: (code) => auth.verifyPasswordResetCode(code),
      confirmPasswordReset: (code, password) => auth.confirmPasswordReset(code, password),
      sendEmailVerification: (settings) => current().sendEmailVerification(settings),
      applyActionCode: (code) => auth.applyActionCode(code),
      updateProfile: (fields) => current().updateProfile(fields),
      reload: async () => { await current().reload(); return T.profile(auth.currentUser); },
      linkWithPassword: (email, password) =>
        signedIn(current().linkWithCredential(firebase.auth.EmailAuthProvider.credential(email, password))),
      linkWithEmailLink: (email, link) =>
        signedIn(current().linkWithCredential(firebase.auth.EmailAuthProvider.credentialWithLink(email, link))),
      reauthenticate: (email, password) =>
        signedIn(current().reauthenticateWithCredential(firebase.auth.EmailAuthProvider.credential(email, password))),
      unlink: async (providerId) => T.profile(await current().unlink(providerId)),
      updatePassword: (password) => current().updatePassword(password),
      updateEmail: (email) => current().updateEmail(email),
      verifyBeforeUpdateEmail: (email) => current().verifyBeforeUpdateEmail(email),
      fetchSignInMethods: (email) => auth.fetchSignInMethodsForEmail(email),
      checkActionCode: async (code) => T.actionCodeInfo(await auth.checkActionCode(code)),
      deleteUser: () => current().delete(),
      signOut: () => auth.signOut(),
      user: () => T.profile(auth.currentUser),
      // The user once the SDK has read its persistence (the first onAuthStateChanged call).
      restored: () => new Promise((resolve) => {
        const unsubscribe = auth.onAuthStateChanged((user) => { unsubscribe(); resolve(T.profile(user)); });
      }),
      setLanguage: (code) => { auth.languageCode = code; },
      idToken: (forceRefresh = false) => current().getIdToken(forceRefresh),
      tokenResult: async (forceRefresh = false) => {
        const result = await current().getIdTokenResult(forceRefresh);
        return { claims: result.claims, signInProvider: result.signInProvider, token: result.token };
      },
      // Starts recording onAuthStateChanged and onIdTokenChanged: the uid (or null) of each call.
      recordAuth: () => {
        const events = { auth: [], token: [] };
        auth.onAuthStateChanged((user) => events.auth.push(user ? user.uid : null));
        auth.onIdTokenChanged((user) => events.token.push(user ? user.uid : null));
        a.authEvents = events;
        return events;
      },

      // Database
      set: (path, value) => ref(path).set(value),
      update: (path, values) => ref(path).update(values),
      get: async (path) => (await ref(path).get()).val(),
      onValue: (path, callback, cancel) => {
        const listener = ref(path).on('value', (snapshot) => callback(snapshot.val()), cancel);
        return () => ref(path).off('value', listener);
      },
      transaction: async (path, update) => {
        const result = await ref(path).transaction(update);
        return { committed: result.committed, value: result.snapshot.val() };
      },
      onDisconnectSet: (path, value) => ref(path).onDisconnect().set(value),
      goOffline: () => db.goOffline(),
      connectionId: () => db._delegate._repoInternal.persistentConnection_.id,

      // Storage
      upload: async (path, text, metadata) => T.metadata((await file(path).put(new Blob([text]), metadata)).metadata),
      getMetadata: async (path) => T.metadata(await file(path).getMetadata()),
      updateMetadata: async (path, metadata) => T.metadata(await file(path).updateMetadata(metadata)),
      downloadURL: (path) => file(path).getDownloadURL(),
      deleteObject: (path) => file(path).delete(),
      listAll: async (path) => {
        const result = await file(path).listAll();
        return { items: result.items.map((item) => item.name), prefixes: result.prefixes.map((prefix) => prefix.name) };
      },

      // Functions: a callable's result (its `data`), or the SDK's HttpsError (code, message, details).
      call: async (name, data, { region = 'us-central1' } = {}) =>
        (await functionsIn(region).httpsCallable(name)(data)).data,
    };
    return a;
  }

  window.A = { generation: 8, open };
  window.harnessReady = true;
})();
