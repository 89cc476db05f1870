"""Security rules over the realtime protocol, seen through the official Firebase JS SDK: denied
reads cancel listeners, denied writes reject (and the SDK takes its optimistic value back), a
rules deploy revokes a listen that was allowed, and Hearth's own accounts (firebase-auth with
connectAuthEmulator) decide what `auth` is in the rules."""

from __future__ import annotations

from realtime_support import skip_without_sdk

skip_without_sdk()

RULES = {"rules": {
    # (a .write granted higher up cannot be taken back below, so each writable child is named)
    "public": {".read": True, "open": {".write": True}, "fine": {".write": True}, "locked": {".write": False}},
    "secret": {".read": False, ".write": False},
    "checked": {".read": True, ".write": True, ".validate": "newData.isNumber()"},
}}


def test_denied_reads_cancel_listeners_and_denied_writes_reject(page, hearth, ns):
    hearth.deploy_rules(ns, RULES)
    outcome = page.call("""async (ns) => {
      const a = T.open(ns);
      const secret = T.watch(a.ref('secret'));
      const secretCancel = await T.until(() => secret.cancelled(), 'the listener on /secret to be cancelled');
      const root = T.watch(fb.ref(a.db));
      const rootCancel = await T.until(() => root.cancelled(), 'the listener on / to be cancelled');
      const pub = T.watch(a.ref('public'));
      await pub.until((events) => events.some((e) => e.kind === 'value'), 'the first value of /public');
      await fb.set(a.ref('public/open'), 1);
      await pub.untilValue((v) => v && v.open === 1, 'the write to /public/open');
      const before = pub.values().length;
      const locked = await T.rejection(fb.set(a.ref('public/locked'), 'x'), 'a write to /public/locked');
      await pub.untilValue((v) => v && !('locked' in v), 'the optimistic /public/locked to be taken back');
      const pubValues = pub.values().slice(before);
      const denied = await T.rejection(fb.set(a.ref('secret/x'), 1), 'a write to /secret');
      const invalid = await T.rejection(fb.set(a.ref('checked'), 'text'), 'a string at /checked');
      await fb.set(a.ref('checked'), 42);
      const deniedUpdate = await T.rejection(fb.update(fb.ref(a.db), { 'public/fine': 1, 'secret/y': 2 }), 'an update touching /secret');
      await pub.untilValue((v) => v && !('fine' in v), 'the optimistic /public/fine to be taken back');
      const getDenied = await T.rejection(fb.get(T.open(ns).ref('secret')), 'a get of /secret');
      return { secretCancel, rootCancel, secretValues: secret.values(), pubValues,
               locked, denied, invalid, deniedUpdate, getDenied };
    }""", ns)
    for name in ("secretCancel", "rootCancel"):
        assert outcome[name]["code"] == "PERMISSION_DENIED", outcome[name]
    assert outcome["secretValues"] == [], "a denied listener got data"
    for name in ("locked", "denied", "invalid", "deniedUpdate"):
        assert outcome[name]["code"] == "PERMISSION_DENIED", (name, outcome[name])
    assert "permission" in outcome["getDenied"]["message"].lower(), outcome["getDenied"]
    assert outcome["pubValues"] == [{"open": 1, "locked": "x"}, {"open": 1}], "the refused write should show, then be taken back"

    assert hearth.get("public", ns) == {"open": 1}, "a refused update wrote part of itself"
    assert hearth.get("secret", ns) is None
    assert hearth.get("checked", ns) == 42


def test_a_rules_deploy_revokes_a_listen_that_was_allowed(page, hearth, ns):
    hearth.deploy_rules(ns, {"rules": {"feed": {".read": True, ".write": True}, "other": {".read": True, ".write": True}}})
    page.call("""async (ns) => {
      T.store.a = T.open(ns);
      await fb.set(T.store.a.ref('feed/first'), 1);
      T.store.feed = T.watch(T.store.a.ref('feed'));
      await T.store.feed.untilValue((v) => v && v.first === 1, 'the first value of /feed');
    }""", ns)
    hearth.deploy_rules(ns, {"rules": {"feed": {".read": False, ".write": True}, "other": {".read": True, ".write": True}}})
    outcome = page.call("""async () => {
      const { a, feed } = T.store;
      const cancel = await T.until(() => feed.cancelled(), 'the listener on /feed to be revoked', 10000);
      await fb.set(a.ref('other/x'), 1);  // the connection itself still works
      const again = T.watch(a.ref('feed'));
      const refused = await T.until(() => again.cancelled(), 'a new listener on /feed to be refused');
      return { cancel, refused, values: feed.values() };
    }""")
    assert outcome["cancel"]["code"] == "PERMISSION_DENIED", outcome
    assert outcome["refused"]["code"] == "PERMISSION_DENIED", outcome
    assert outcome["values"] == [{"first": 1}]


ACCOUNT_RULES = {"rules": {
    "users": {"$uid": {".read": "auth != null && auth.uid === $uid", ".write": "auth != null && auth.uid === $uid"}},
    "members": {".read": "auth != null", ".write": "auth != null"},
}}


def test_accounts_decide_what_auth_is_in_the_rules(page, hearth, ns):
    hearth.deploy_rules(ns, ACCOUNT_RULES)
    outcome = page.call("""async (ns) => {
      const a = T.open(ns, { auth: true });
      // connected as nobody first
      const anonymous = T.watch(a.ref('members'));
      const anonymousCancel = await T.until(() => anonymous.cancelled(), 'the refusal of /members to nobody');
      const email = `rt-${Math.random().toString(36).slice(2)}@example.com`;
      const { user } = await fb.createUserWithEmailAndPassword(a.auth, email, 'correct-horse-7');
      // the SDK now authenticates the open connection with the new user's ID token
      await fb.set(a.ref(`users/${user.uid}/name`), 'Me');
      const own = T.watch(a.ref(`users/${user.uid}`));
      await own.untilValue((v) => v && v.name === 'Me', 'the user\\'s own data');
      const otherWrite = await T.rejection(fb.set(a.ref('users/someone-else/name'), 'Mallory'), 'a write to another user');
      const otherRead = T.watch(a.ref('users/someone-else'));
      const otherCancel = await T.until(() => otherRead.cancelled(), 'the refusal of another user\\'s data');
      await fb.set(a.ref(`members/${user.uid}`), true);
      const members = T.watch(a.ref('members'));
      await members.untilValue((v) => v && v[user.uid] === true, 'the members list');

      // the same account, signed in on another instance
      const b = T.open(ns, { auth: true });
      const signedIn = (await fb.signInWithEmailAndPassword(b.auth, email, 'correct-horse-7')).user;
      const fromB = (await fb.get(b.ref(`users/${user.uid}`))).val();
      // another account
      const c = T.open(ns, { auth: true });
      const second = (await fb.createUserWithEmailAndPassword(c.auth, 'second-' + email, 'correct-horse-7')).user;
      const cDenied = await T.rejection(fb.get(c.ref(`users/${user.uid}`)), 'a read of the first user by the second');
      await fb.set(c.ref(`users/${second.uid}`), { name: 'Second' });
      // nobody at all
      const nobody = T.open(ns);
      const nobodyDenied = await T.rejection(fb.set(nobody.ref(`users/${user.uid}/name`), 'x'), 'a write by nobody');
      return { uid: user.uid, secondUid: second.uid, signedInUid: signedIn.uid, anonymousCancel, otherWrite, otherCancel,
               fromB, cDenied, nobodyDenied, ownValues: own.values() };
    }""", ns)
    assert outcome["anonymousCancel"]["code"] == "PERMISSION_DENIED"
    assert outcome["signedInUid"] == outcome["uid"]
    assert outcome["otherWrite"]["code"] == "PERMISSION_DENIED"
    assert outcome["otherCancel"]["code"] == "PERMISSION_DENIED"
    assert outcome["fromB"] == {"name": "Me"}
    assert "permission" in outcome["cDenied"]["message"].lower(), outcome["cDenied"]
    assert outcome["nobodyDenied"]["code"] == "PERMISSION_DENIED"
    assert hearth.get(f"users/{outcome['uid']}", ns) == {"name": "Me"}
    assert hearth.get(f"users/{outcome['secondUid']}", ns) == {"name": "Second"}
    assert hearth.get("users/someone-else", ns) is None


def test_signing_out_revokes_what_only_the_user_could_read(page, hearth, ns):
    """After signOut the SDK sends `unauth` on the open connection; listens the rules no longer
    allow are cancelled, and writes as the user are refused."""
    hearth.deploy_rules(ns, ACCOUNT_RULES)
    outcome = page.call("""async (ns) => {
      const a = T.open(ns, { auth: true });
      const { user } = await fb.createUserWithEmailAndPassword(a.auth, `rt-${Math.random().toString(36).slice(2)}@example.com`, 'correct-horse-7');
      await fb.set(a.ref(`users/${user.uid}`), { name: 'Me' });
      const own = T.watch(a.ref(`users/${user.uid}`));
      await own.untilValue((v) => v && v.name === 'Me', 'the user\\'s own data');
      await fb.signOut(a.auth);
      const cancel = await T.until(() => own.cancelled(), 'the listener on the user\\'s data to be revoked after signOut', 10000);
      const write = await T.rejection(fb.set(a.ref(`users/${user.uid}/name`), 'x'), 'a write after signOut');
      return { cancel, write };
    }""", ns)
    assert outcome["cancel"]["code"] == "PERMISSION_DENIED"
    assert outcome["write"]["code"] == "PERMISSION_DENIED"
