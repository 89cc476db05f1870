// SDK 9.8.1, the modular API (ES modules, as Tests/Realtime loads it): window.A, the same
// operations as adapter8.js over the namespaced SDK 8.10.1. Every operation returns plain
// values (T.profile, T.metadata) or rejects with the SDK's own error (its `code`).

import * as appSDK from '/sdk9/firebase-app.js';
import * as authSDK from '/sdk9/firebase-auth.js';
import * as databaseSDK from '/sdk9/firebase-database.js';
import * as storageSDK from '/sdk9/firebase-storage.js';
import * as functionsSDK from '/sdk9/firebase-functions.js';

// (database and storage both export `ref`: each module keeps its own name)
const fb = { ...appSDK, ...authSDK };
const database = databaseSDK;
const st = storageSDK;
const fn = functionsSDK;
window.fb = { ...fb, database, storage: st, functions: fn };
database.enableLogging((message) => T.log(message));

let count = 0;

// What both generations report for a sign-in: the user, whether the account is new, the
// provider and the operation.
function credential(result) {
  const info = fb.getAdditionalUserInfo(result);
  return { user: T.profile(result.user), isNewUser: info ? info.isNewUser : null,
           providerId: result.providerId || (info && info.providerId) || null, operationType: result.operationType };
}

// A new app instance on database `ns`. Its account lives in memory unless `persistent` names
// it: then it is kept in the browser (IndexedDB, as getAuth does) under that app name, and a
// page loaded later that opens the same name finds the user again.
function open(ns, { persistent = null } = {}) {
  count += 1;
  const name = persistent || `sdk9-${count}-${Math.random().toString(36).slice(2, 8)}`;
  const app = fb.initializeApp(T.config(ns), name);
  const auth = fb.initializeAuth(app, {
    persistence: persistent ? [fb.indexedDBLocalPersistence, fb.browserLocalPersistence] : fb.inMemoryPersistence });
  fb.connectAuthEmulator(auth, `http://127.0.0.1:${T.port}`, { disableWarnings: true });
  const db = database.getDatabase(app);
  database.connectDatabaseEmulator(db, '127.0.0.1', T.port);
  const storage = st.getStorage(app);
  st.connectStorageEmulator(storage, '127.0.0.1', T.port);
  const ref = (path) => database.ref(db, path);
  const file = (path) => st.ref(storage, path);
  // One Functions instance per region of this app (so calls carry its user's ID token), each
  // pointed at the server once.
  const regions = {};
  const functionsIn = (region) => {
    if (!regions[region]) {
      regions[region] = fn.getFunctions(app, region);
      fn.connectFunctionsEmulator(regions[region], '127.0.0.1', T.port);
    }
    return regions[region];
  };
  const current = () => {
    if (!auth.currentUser) throw new Error('no user is signed in');
    return auth.currentUser;
  };
  const a = {
    generation: 9, name, app, auth, db, storage,

    // Accounts
    signUp: async (email, password) => credential(await fb.createUserWithEmailAndPassword(auth, email, password)),
    signIn: async (email, password) => credential(await fb.signInWithEmailAndPassword(auth, email, password)),
    signInAnonymously: async () => credential(await fb.signInAnonymously(auth)),
    signInWithCustomToken: async (token) => credential(await fb.signInWithCustomToken(auth, token)),
    signInWithEmailLink: async (email, link) => credential(await fb.signInWithEmailLink(auth, email, link)),
    isSignInWithEmailLink: (link) => fb.isSignInWithEmailLink(auth, link),
    sendSignInLinkToEmail: (email, settings) => fb.sendSignInLinkToEmail(auth, email, settings),
    sendPasswordResetEmail: (email, settings) => fb.sendPasswordResetEmail(auth, email, settings),
    verifyPasswordResetCode: (code) => fb.verifyPasswordResetCode(auth, code),
    confirmPasswordReset: (code, password) => fb.confirmPasswordReset(auth, code, password),
    sendEmailVerification: (settings) => fb.sendEmailVerification(current(), settings),
    applyActionCode: (code) => fb.applyActionCode(auth, code),
    updateProfile: (fields) => fb.updateProfile(current(), fields),
    reload: async () => { await fb.reload(current()); return T.profile(auth.currentUser); },
    linkWithPassword: async (email, password) =>
      credential(await fb.linkWithCredential(current(), fb.EmailAuthProvider.credential(email, password))),
    linkWithEmailLink: async (email, link) =>
      credential(await fb.linkWithCredential(current(), fb.EmailAuthProvider.credentialWithLink(email, link))),
    reauthenticate: async (email, password) =>
      credential(await fb.reauthenticateWithCredential(current(), fb.EmailAuthProvider.credential(email, password))),
    unlink: async (providerId) => T.profile(await fb.unlink(current(), providerId)),
    updatePassword: (password) => fb.updatePassword(current(), password),
    updateEmail: (email) => fb.updateEmail(current(), email),
    verifyBeforeUpdateEmail: (email) => fb.verifyBeforeUpdateEmail(current(), email),
    fetchSignInMethods: (email) => fb.fetchSignInMethodsForEmail(auth, email),
    checkActionCode: async (code) => T.actionCodeInfo(await fb.checkActionCode(auth, code)),
    deleteUser: () => fb.deleteUser(current()),
    signOut: () => fb.signOut(auth),
    user: () => T.profile(auth.currentUser),
    // The user once the SDK has read its persistence (the first onAuthStateChanged call).
    restored: () => new Promise((resolve) => {
      const unsubscribe = fb.onAuthStateChanged(auth, (user) => { unsubscribe(); resolve(T.profile(user)); });
    }),
    setLanguage: (code) => { auth.languageCode = code; },
    idToken: (forceRefresh = false) => fb.getIdToken(current(), forceRefresh),
    tokenResult: async (forceRefresh = false) => {
      const result = await fb.getIdTokenResult(current(), forceRefresh);
      return { claims: result.claims, signInProvider: result.signInProvider, token: result.token };
    },
    // Starts recording onAuthStateChanged and onIdTokenChanged: the uid (or null) of each call.
    recordAuth: () => {
      const events = { auth: [], token: [] };
      fb.onAuthStateChanged(auth, (user) => events.auth.push(user ? user.uid : null));
      fb.onIdTokenChanged(auth, (user) => events.token.push(user ? user.uid : null));
      a.authEvents = events;
      return events;
    },

    // Database
    set: (path, value) => database.set(ref(path), value),
    update: (path, values) => database.update(ref(path), values),
    get: async (path) => (await database.get(ref(path))).val(),
    onValue: (path, callback, cancel) => database.onValue(ref(path), (snapshot) => callback(snapshot.val()), cancel),
    transaction: async (path, update) => {
      const result = await database.runTransaction(ref(path), update);
      return { committed: result.committed, value: result.snapshot.val() };
    },
    onDisconnectSet: (path, value) => database.onDisconnect(ref(path)).set(value),
    goOffline: () => database.goOffline(db),
    connectionId: () => db._repoInternal.persistentConnection_.id,

    // Storage
    // An upload task, as SDK 8's put: one multipart request up to 256 KiB, the resumable
    // protocol above (uploadBytes would always send one multipart request).
    upload: async (path, text, metadata) =>
      T.metadata((await st.uploadBytesResumable(file(path), new Blob([text]), metadata)).metadata),
    getMetadata: async (path) => T.metadata(await st.getMetadata(file(path))),
    updateMetadata: async (path, metadata) => T.metadata(await st.updateMetadata(file(path), metadata)),
    downloadURL: (path) => st.getDownloadURL(file(path)),
    deleteObject: (path) => st.deleteObject(file(path)),
    listAll: async (path) => {
      const result = await st.listAll(file(path));
      return { items: result.items.map((item) => item.name), prefixes: result.prefixes.map((prefix) => prefix.name) };
    },

    // Functions: a callable's result (its `data`), or the SDK's FunctionsError (code, message, details).
    call: async (name, data, { region = 'us-central1' } = {}) =>
      (await fn.httpsCallable(functionsIn(region), name)(data)).data,
  };
  return a;
}

window.A = { generation: 9, open };
window.harnessReady = true;
