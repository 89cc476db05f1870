"""The database and file storage on both SDK generations (issue 31), each scenario written once
against the adapter: the realtime transport each combination is meant to use, data without an
account, database rules that read `auth` (the owner allowed; others refused with the SDK's
PERMISSION_DENIED, nothing written), transactions, onDisconnect (presence), storage rules that read `auth` (the SDK's
storage/unauthorized), and storage metadata where `null` deletes a property (issue 31 item 3).
What the SDK reports is checked against what the server holds (REST as the admin).
"""

from __future__ import annotations

import requests

from generations_support import TIMEOUT, skip_without_sdks, unique_email

skip_without_sdks()


def test_the_transport_and_data_without_an_account(page, ns, hearth, combination):
    outcome = page.run("ns", """
      const a = A.open(ns);
      const watch = T.watch(a, 'public/board');
      await watch.untilValue((v) => v === null, 'the first (empty) value');
      await a.set('public/board', { title: 'Hello', count: 1 });
      await a.update('public/board', { count: 2 });
      await watch.untilValue((v) => v && v.count === 2, 'the update');
      const counted = await a.transaction('public/visits', (current) => (current || 0) + 1);
      const again = await a.transaction('public/visits', (current) => (current || 0) + 1);
      // run first on the SDK's cache (nothing yet), then again on the server's value: abort there
      const aborted = await a.transaction('public/visits', (current) => (current === null ? 0 : undefined));
      const b = A.open(ns);
      const fromB = await b.get('public/board');
      const refused = await T.rejection(a.set('users/somebody', { name: 'x' }), 'a write by nobody to a user');
      const listen = T.watch(a, 'members');
      const cancel = await listen.untilCancelled();
      return { transport: T.transportOf(a.connectionId()), values: watch.values(), counted, again, aborted, fromB,
               refused, cancel };
    """, ns)
    # The page's first connection starts as the combination says (the SDK's log tells).
    assert outcome["transport"]["longPolled"] is (combination.transport == "long-polling"), outcome["transport"]
    if combination.transport == "websocket":
        assert outcome["transport"]["webSocket"] is True, outcome["transport"]
    assert outcome["values"] == [None, {"title": "Hello", "count": 1}, {"title": "Hello", "count": 2}]
    assert (outcome["counted"], outcome["again"]) == ({"committed": True, "value": 1}, {"committed": True, "value": 2})
    assert outcome["aborted"] == {"committed": False, "value": 2}
    assert outcome["fromB"] == {"title": "Hello", "count": 2}
    assert outcome["refused"]["code"] == "PERMISSION_DENIED", outcome["refused"]
    assert outcome["cancel"]["code"] == "PERMISSION_DENIED", outcome["cancel"]
    assert hearth.get("public", ns) == {"board": {"title": "Hello", "count": 2}, "visits": 2}
    assert hearth.get("users", ns) is None


def test_database_rules_read_auth(page, ns, hearth):
    outcome = page.run("ns, emails", """
      const a = A.open(ns);
      const refusedBefore = await T.rejection(a.set('members/early', true), 'a write by nobody to /members');
      const owner = (await a.signUp(emails[0], 'owner-password-1')).user;
      // the SDK authenticates the open connection with the new user's ID token
      await a.set(`users/${owner.uid}`, { name: 'Owner' });
      const own = T.watch(a, `users/${owner.uid}`);
      await own.untilValue((v) => v && v.name === 'Owner', "the owner's own data");
      await a.set(`members/${owner.uid}`, true);
      const counted = await a.transaction(`counters/${owner.uid}`, (current) => (current || 0) + 1);
      const invalid = await T.rejection(a.transaction(`counters/${owner.uid}`, () => 'text'), 'a transaction writing text');

      const b = A.open(ns);
      const other = (await b.signUp(emails[1], 'other-password-2')).user;
      const otherWrite = await T.rejection(b.set(`users/${owner.uid}/name`, 'Mallory'), "a write to the owner's data");
      const otherGet = await T.rejection(b.get(`users/${owner.uid}`), "a read of the owner's data");
      const otherListen = T.watch(b, `users/${owner.uid}`);
      const otherCancel = await otherListen.untilCancelled();
      const otherTransaction = await T.rejection(b.transaction(`counters/${owner.uid}`, (current) => (current || 0) + 100),
                                                 "a transaction on the owner's counter");
      const members = await b.get('members');
      const nobody = await T.rejection(A.open(ns).get(`users/${owner.uid}`), 'a read by nobody');
      return { owner: owner.uid, other: other.uid, refusedBefore, counted, invalid, otherWrite, otherGet, otherCancel,
               otherTransaction, members, nobody, ownValues: own.values() };
    """, ns, [unique_email("owner"), unique_email("other")])
    owner = outcome["owner"]
    assert outcome["refusedBefore"]["code"] == "PERMISSION_DENIED", outcome["refusedBefore"]
    assert outcome["counted"] == {"committed": True, "value": 1}
    assert outcome["invalid"]["code"] == "PERMISSION_DENIED" or "permission" in outcome["invalid"]["message"].lower(), \
        outcome["invalid"]
    for name in ("otherWrite", "otherCancel"):
        assert outcome[name]["code"] == "PERMISSION_DENIED", (name, outcome[name])
    for name in ("otherGet", "nobody", "otherTransaction"):
        assert "permission" in (outcome[name]["message"] + str(outcome[name]["code"])).lower(), (name, outcome[name])
    assert outcome["members"] == {owner: True}
    assert outcome["ownValues"] == [{"name": "Owner"}], "a refused write showed in the owner's listener"
    assert hearth.get(f"users/{owner}", ns) == {"name": "Owner"}
    assert hearth.get(f"counters/{owner}", ns) == 1, "a refused transaction changed the counter"
    assert hearth.get(f"users/{outcome['other']}", ns) is None


def test_presence_with_on_disconnect_under_rules_that_read_auth(page, ns, hearth):
    """The presence pattern: a user queues onDisconnect writes to their own node (checked
    against the rules when queued: another user's node is refused), and when the connection
    goes they are applied and the other instances see them."""
    outcome = page.run("ns, emails", """
      const a = A.open(ns);
      const owner = (await a.signUp(emails[0], 'presence-password-1')).user;
      await a.set(`users/${owner.uid}`, { online: true });
      await a.onDisconnectSet(`users/${owner.uid}/online`, false);
      const refused = await T.rejection(a.onDisconnectSet('users/someone-else/online', false), "an onDisconnect on another user's node");
      const b = A.open(ns);
      await b.signIn(emails[0], 'presence-password-1');
      const watch = T.watch(b, `users/${owner.uid}`);
      await watch.untilValue((v) => v && v.online === true, 'the user online');
      a.goOffline();
      await watch.untilValue((v) => v && v.online === false, 'the onDisconnect write once the connection is gone');
      return { owner: owner.uid, refused, values: watch.values() };
    """, ns, [unique_email("presence")])
    assert outcome["refused"]["code"] == "PERMISSION_DENIED", outcome["refused"]
    assert outcome["values"] == [{"online": True}, {"online": False}]
    assert hearth.get(f"users/{outcome['owner']}", ns) == {"online": False}
    assert hearth.get("users/someone-else", ns) is None


def test_storage_without_an_account(page, ns, hearth):
    path = f"public/{ns}/note.txt"
    outcome = page.run("ns, path", """
      const a = A.open(ns);
      const uploaded = await a.upload(path, 'hello, storage', { contentType: 'text/plain', customMetadata: { by: 'nobody' } });
      const url = await a.downloadURL(path);
      const text = await (await fetch(url)).text();
      const fetched = await a.getMetadata(path);
      const refused = await T.rejection(a.upload('users/somebody/note.txt', 'x', { contentType: 'text/plain' }), "an upload to a user's folder");
      await a.deleteObject(path);
      const gone = await T.rejection(a.getMetadata(path), 'the metadata of a deleted file');
      return { uploaded, text, fetched, refused, gone };
    """, ns, path)
    uploaded = outcome["uploaded"]
    assert (uploaded["fullPath"], uploaded["size"], uploaded["contentType"]) == (path, 14, "text/plain")
    assert uploaded["customMetadata"] == {"by": "nobody"}
    assert uploaded["bucket"] == "hearth.appspot.com"
    assert outcome["text"] == "hello, storage"
    assert outcome["fetched"]["generation"] == uploaded["generation"]
    assert outcome["refused"]["code"] == "storage/unauthorized", outcome["refused"]
    assert outcome["gone"]["code"] == "storage/object-not-found", outcome["gone"]
    assert storage_object(hearth, path).status_code == 404


def test_a_large_upload_goes_through_the_resumable_protocol(page, ns, hearth):
    """Both SDKs upload a blob over 256 KiB with the resumable protocol (start, upload and
    finalize at the X-Goog-Upload-URL) instead of one multipart request."""
    outcome = page.run("ns, email", """
      const a = A.open(ns);
      const owner = (await a.signUp(email, 'large-password-1')).user;
      const path = `users/${owner.uid}/large.bin`;
      const text = T.bigString(300 * 1024);
      const uploaded = await a.upload(path, text, { contentType: 'application/octet-stream', customMetadata: { kind: 'large' } });
      const back = await (await fetch(await a.downloadURL(path))).text();
      return { path, uploaded, same: back === text, length: back.length };
    """, ns, unique_email("large"))
    uploaded = outcome["uploaded"]
    assert uploaded["size"] == 300 * 1024 and uploaded["customMetadata"] == {"kind": "large"}, uploaded
    assert outcome["same"] is True, f"the download differs from the upload ({outcome['length']} characters)"
    held = storage_object(hearth, outcome["path"]).json()
    assert held["size"] == str(300 * 1024), held


def storage_object(hearth, path: str) -> requests.Response:
    """The object's metadata as the admin sees it (REST, `Bearer owner`)."""
    return requests.get(f"{hearth.url}/v0/b/hearth.appspot.com/o/{requests.utils.quote(path, safe='')}",
                        headers={"Authorization": "Bearer owner"}, timeout=TIMEOUT)


def test_storage_rules_read_auth(page, ns, hearth):
    outcome = page.run("ns, emails", """
      const a = A.open(ns);
      const nobody = await T.rejection(a.upload('users/x/early.txt', 'x', { contentType: 'text/plain' }), 'an upload by nobody');
      const owner = (await a.signUp(emails[0], 'owner-password-1')).user;
      const path = `users/${owner.uid}/diary.txt`;
      const uploaded = await a.upload(path, 'dear diary', { contentType: 'text/plain' });
      const text = await (await fetch(await a.downloadURL(path))).text();
      const listed = await a.listAll(`users/${owner.uid}`);

      const b = A.open(ns);
      await b.signUp(emails[1], 'other-password-2');
      const refusals = {
        upload: await T.rejection(b.upload(path, 'overwritten', { contentType: 'text/plain' }), "an upload over the owner's file"),
        metadata: await T.rejection(b.getMetadata(path), "the owner's file's metadata"),
        update: await T.rejection(b.updateMetadata(path, { cacheControl: 'no-store' }), "an update of the owner's metadata"),
        url: await T.rejection(b.downloadURL(path), "the owner's file's download URL"),
        remove: await T.rejection(b.deleteObject(path), "a delete of the owner's file"),
        list: await T.rejection(b.listAll(`users/${owner.uid}`), "a listing of the owner's folder"),
        nobody,
      };
      const after = await a.getMetadata(path);
      const textAfter = await (await fetch(await a.downloadURL(path))).text();
      return { path, uploaded, text, listed, refusals, after, textAfter };
    """, ns, [unique_email("files"), unique_email("intruder")])
    for name, refusal in outcome["refusals"].items():
        assert refusal["code"] == "storage/unauthorized", (name, refusal)
    assert outcome["text"] == outcome["textAfter"] == "dear diary"
    assert outcome["listed"] == {"items": ["diary.txt"], "prefixes": []}
    assert outcome["after"]["generation"] == outcome["uploaded"]["generation"], "a refused upload replaced the file"
    assert outcome["after"]["metageneration"] == outcome["uploaded"]["metageneration"], "a refused update changed the metadata"
    assert outcome["after"]["cacheControl"] is None
    held = storage_object(hearth, outcome["path"])
    assert held.status_code == 200 and held.json()["size"] == "10", held.text


def test_storage_metadata_null_deletes_a_property(page, ns, hearth):
    """`updateMetadata` with a property set to null deletes it ("You can delete a metadata
    property by setting it to null"): cacheControl, contentDisposition, contentEncoding,
    contentLanguage, custom keys; contentType falls back to the default; absent properties
    stay as they are."""
    outcome = page.run("ns, email", """
      const a = A.open(ns);
      const owner = (await a.signUp(email, 'metadata-password-1')).user;
      const path = `users/${owner.uid}/report.txt`;
      const uploaded = await a.upload(path, 'quarterly figures', {
        contentType: 'text/plain', cacheControl: 'public, max-age=60', contentDisposition: 'inline; filename="q3.txt"',
        contentEncoding: 'gzip', contentLanguage: 'en', customMetadata: { keep: '1', drop: '2' } });
      const cleared = await a.updateMetadata(path, {
        cacheControl: null, contentDisposition: null, contentEncoding: null, contentLanguage: null, contentType: null,
        customMetadata: { drop: null } });
      const fetched = await a.getMetadata(path);
      // absent leaves a property as it is
      await a.updateMetadata(path, { cacheControl: 'no-store' });
      const kept = await a.updateMetadata(path, { contentLanguage: 'fr' });
      return { path, uploaded, cleared, fetched, kept };
    """, ns, unique_email("metadata"))
    uploaded, cleared = outcome["uploaded"], outcome["cleared"]
    assert (uploaded["cacheControl"], uploaded["contentLanguage"], uploaded["contentEncoding"]) == \
        ("public, max-age=60", "en", "gzip")
    assert uploaded["contentDisposition"] == 'inline; filename="q3.txt"'
    assert uploaded["customMetadata"] == {"keep": "1", "drop": "2"}
    for metadata in (cleared, outcome["fetched"]):
        assert metadata["cacheControl"] is None, metadata
        assert metadata["contentLanguage"] is None, metadata
        assert metadata["contentType"] == "application/octet-stream", metadata
        assert metadata["contentEncoding"] in (None, "identity"), metadata
        # what downloads get now (not what was set)
        assert "q3.txt" not in (metadata["contentDisposition"] or ""), metadata
        assert metadata["customMetadata"] == {"keep": "1"}, metadata
        assert metadata["size"] == uploaded["size"] and metadata["generation"] == uploaded["generation"], metadata
    kept = outcome["kept"]
    assert (kept["cacheControl"], kept["contentLanguage"]) == ("no-store", "fr")
    assert kept["customMetadata"] == {"keep": "1"}
    held = storage_object(hearth, outcome["path"]).json()
    assert held.get("cacheControl") == "no-store" and held.get("contentLanguage") == "fr", held
    assert held.get("contentType") == "application/octet-stream" and held.get("metadata") == {"keep": "1"}, held
