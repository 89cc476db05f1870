"""Reading and writing with the official Firebase JS SDK over the realtime protocol: which
transport the SDK uses, set/get/onValue round trips, multi-path updates seen atomically,
server values, and values larger than one WebSocket frame (16,384 characters)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from realtime_support import skip_without_sdk

skip_without_sdk()


def test_the_sdk_connects_the_way_the_mode_says(page, ns):
    """websocket: a WebSocket at /.ws?v=5&ns=…, no long-polling. long-polling: the first request
    is /.lp?start=t…; the SDK then upgrades to a WebSocket of the same session (s=…) and, once
    the server ends the long-poll side, sends and receives on the WebSocket alone.
    long-polling-only: /.lp throughout."""
    outcome = page.call("""async (ns) => {
      const a = T.open(ns), b = T.open(ns);
      await T.connected(a.db);
      await fb.set(a.ref('hello'), 'world');
      const seen = await T.firstValue(b.ref('hello'), 'the value from the other instance');
      if (T.transport === 'long-polling') {
        await T.until(() => T.transportOf(a.db).upgraded, 'the upgrade from long-polling to a WebSocket to finish', 20000);
        await fb.set(a.ref('after'), 'upgrade');
        const after = await T.firstValue(b.ref('after'), 'a value written after the upgrade');
        if (after.val !== 'upgrade') throw new Error('after the upgrade: ' + JSON.stringify(after.val));
      }
      return { seen: seen.val, transport: T.transportOf(a.db),
               flag: localStorage.getItem('firebase:previous_websocket_failure') };
    }""", ns)
    assert outcome["seen"] == "world"
    requests = page.network()
    assert requests, "the browser made no realtime request at all"
    kind, first_url = requests[0]
    query = parse_qs(urlsplit(first_url).query)
    assert query.get("ns") == [ns], first_url
    assert query.get("v") == ["5"], first_url
    websockets = [url for kind, url in requests if kind == "ws"]
    polls = [url for kind, url in requests if kind == "lp"]
    if page.transport == "websocket":
        assert kind == "ws" and urlsplit(first_url).path == "/.ws", requests[:3]
        assert polls == [], f"a fresh browser should not long-poll: {polls[:3]}"
        assert outcome["transport"] == {"longPolled": False, "webSocket": True, "upgraded": False}, outcome
        assert outcome["flag"] is None, "the SDK still remembers a failed WebSocket"
    elif page.transport == "long-polling":
        assert kind == "lp" and urlsplit(first_url).path == "/.lp" and query.get("start") == ["t"], requests[:3]
        upgrade = [url for url in websockets if "s" in parse_qs(urlsplit(url).query)]
        assert upgrade, f"no WebSocket upgrade with the long-polling session (s=…): {websockets}"
        assert outcome["transport"] == {"longPolled": True, "webSocket": True, "upgraded": True}, outcome
        assert outcome["flag"] is None, "a healthy WebSocket should clear firebase:previous_websocket_failure"
    else:
        assert kind == "lp" and query.get("start") == ["t"], requests[:3]
        assert websockets == []
        assert outcome["transport"] == {"longPolled": True, "webSocket": False, "upgraded": False}, outcome


PROFILE = {
    "name": "Ada", "age": 36, "ratio": 0.25, "admin": False, "big": 9007199254740991, "small": -0.0125,
    "tags": ["a", "b", "c"],
    "settings": {"theme": {"dark": True, "accent": "blue"}, "lang": "en"},
    "text": 'héllo € "quoted" \\ / \n\t end',
}


def test_set_then_listeners_and_get_see_the_value(page, hearth, ns):
    outcome = page.call("""async (ns, profile) => {
      const writer = T.open(ns), reader = T.open(ns), fresh = T.open(ns);
      const whole = T.watch(reader.ref('profile'));
      const deep = T.watch(reader.ref('profile/settings/theme'));
      const empty = T.watch(reader.ref('nothing/here'));
      for (const [w, what] of [[whole, '/profile'], [deep, '/profile/settings/theme'], [empty, '/nothing/here']]) {
        await w.until((events) => events.length >= 1, 'the first value of ' + what);
      }
      await fb.set(writer.ref('profile'), profile);
      await whole.untilValue((v) => v && v.name === 'Ada', 'the profile at the other instance');
      await deep.untilValue((v) => v && v.accent === 'blue', 'the nested theme at the other instance');
      await fb.set(writer.ref('profile/settings/theme/accent'), 'green');
      await whole.untilValue((v) => v.settings.theme.accent === 'green', 'the nested change in /profile');
      await deep.untilValue((v) => v.accent === 'green', 'the nested change in the theme');
      const got = await fb.get(fresh.ref('profile'));
      const part = await fb.get(fresh.ref('profile/settings'));
      const missing = await fb.get(fresh.ref('profile/absent'));
      await fb.remove(writer.ref('profile/settings'));
      await whole.untilValue((v) => !('settings' in v), 'the removal of /profile/settings');
      await deep.untilValue((v) => v === null, 'the theme gone');
      return { whole: whole.values(), deep: deep.values(), empty: empty.events,
               got: got.val(), gotKey: got.key, part: part.val(), missing: missing.exists(), missingVal: missing.val() };
    }""", ns, PROFILE)
    changed = {**PROFILE, "settings": {"theme": {"dark": True, "accent": "green"}, "lang": "en"}}
    removed = {key: value for key, value in changed.items() if key != "settings"}
    assert outcome["whole"] == [None, PROFILE, changed, removed]
    assert outcome["deep"] == [None, {"dark": True, "accent": "blue"}, {"dark": True, "accent": "green"}, None]
    assert [(event["val"], event["exists"]) for event in outcome["empty"]] == [(None, False)]
    assert outcome["got"] == changed and outcome["gotKey"] == "profile"
    assert outcome["part"] == changed["settings"]
    assert outcome["missing"] is False and outcome["missingVal"] is None
    assert hearth.get("profile", ns) == removed


def test_a_multi_path_update_reaches_a_listener_as_one_event(page, hearth, ns):
    values = page.call("""async (ns) => {
      const writer = T.open(ns), reader = T.open(ns);
      await fb.set(writer.ref('bank'), { alice: { balance: 100 }, bob: { balance: 100 }, log: { count: 0 } });
      const bank = T.watch(reader.ref('bank'));
      await bank.untilValue((v) => v && v.alice.balance === 100, 'the first balances');
      await fb.update(writer.ref('bank'), { 'alice/balance': 70, 'bob/balance': 130, 'log/count': 1 });
      await bank.untilValue((v) => v.log && v.log.count === 1, 'the update of three paths');
      await fb.update(fb.ref(writer.db), { 'bank/alice/balance': 20, 'bank/bob/balance': 180, 'bank/log': null });
      await bank.untilValue((v) => !v.log, 'the update from the root with a delete');
      return bank.values();
    }""", ns)
    assert values == [
        {"alice": {"balance": 100}, "bob": {"balance": 100}, "log": {"count": 0}},
        {"alice": {"balance": 70}, "bob": {"balance": 130}, "log": {"count": 1}},
        {"alice": {"balance": 20}, "bob": {"balance": 180}},
    ], "each update should arrive as one change (no half-applied state in between)"
    assert hearth.get("bank", ns) == values[-1]


def test_server_timestamp_and_increment(page, hearth, ns):
    outcome = page.call("""async (ns) => {
      const a = T.open(ns), b = T.open(ns), c = T.open(ns);
      const stamp = T.watch(b.ref('stamp'));
      await stamp.until((events) => events.length >= 1, 'the first value of /stamp');
      const before = Date.now();
      await fb.set(a.ref('stamp'), { at: fb.serverTimestamp(), by: 'a' });
      const seen = await stamp.untilValue((v) => v && typeof v.at === 'number', 'the resolved timestamp');
      const after = Date.now();
      // 3 instances × 5 increments, all at once
      await Promise.all([a, b, c].flatMap((x) => [1, 2, 3, 4, 5].map(() => fb.set(x.ref('counter'), fb.increment(1)))));
      // increments in updates, on values that do not exist yet, with fractions, and a timestamp beside them
      await fb.update(fb.ref(a.db), { 'stats/likes': fb.increment(2), 'stats/score': fb.increment(0.5) });
      await fb.update(fb.ref(b.db), { 'stats/likes': fb.increment(3), 'stats/score': fb.increment(0.25), 'stats/when': fb.serverTimestamp() });
      const reader = T.open(ns);
      return { before, after, seen: stamp.values(), counter: (await fb.get(reader.ref('counter'))).val(),
               stats: (await fb.get(reader.ref('stats'))).val() };
    }""", ns)
    first, resolved = outcome["seen"]
    assert first is None and resolved["by"] == "a"
    assert outcome["before"] - 5000 <= resolved["at"] <= outcome["after"] + 5000, outcome
    assert outcome["counter"] == 15
    stats = outcome["stats"]
    assert stats["likes"] == 5 and stats["score"] == 0.75, stats
    assert isinstance(stats["when"], int) and stats["when"] >= resolved["at"], stats
    assert hearth.get("counter", ns) == 15
    assert hearth.get("stamp", ns) == resolved


def test_values_larger_than_a_frame_travel_both_ways(page, hearth, ns):
    """A 100 KB string (the SDK splits frames at 16,384 characters, and long-polling sends in
    small URL segments) written by one instance and seen by another's listener; a 2,000-child
    object written and read back with get(); a 100 KB value written over REST and listened to."""
    outcome = page.call("""async (ns) => {
      const a = T.open(ns), b = T.open(ns);
      const text = T.bigString(100000, 1);
      const big = T.watch(b.ref('big'));
      await big.until((events) => events.length >= 1, 'the first value of /big');
      await fb.set(a.ref('big/text'), text);
      const seen = await big.untilValue((v) => v && v.text && v.text.length === text.length, 'the 100 KB string at the other instance');
      const many = {};
      for (let i = 0; i < 2000; i++) many['k' + String(i).padStart(4, '0')] = { n: i, s: T.bigString(40, i) };
      await fb.set(b.ref('many'), many);
      const got = (await fb.get(T.open(ns).ref('many'))).val();
      const mismatched = Object.keys(many).filter((key) => JSON.stringify(got[key]) !== JSON.stringify(many[key]));
      return { same: seen.val.text === text, length: seen.val.text.length, text,
               manyCount: Object.keys(got || {}).length, mismatched: mismatched.slice(0, 5) };
    }""", ns)
    assert outcome["length"] == 100000 and outcome["same"], "the 100 KB string changed on the way"
    assert outcome["manyCount"] == 2000 and outcome["mismatched"] == [], outcome["mismatched"]
    assert hearth.get("big/text", ns) == outcome["text"], "the server holds another string than was written"

    # server → client: a value written over REST, larger than a frame, reaches a listener
    page.call("""async (ns) => {
      T.store.rest = T.watch(T.open(ns).ref('fromrest'));
      await T.store.rest.until((events) => events.length >= 1, 'the first value of /fromrest');
    }""", ns)
    text = "".join("abcdefghijklmnopqrstuvwxyzé€0123456789"[(i * 7 + 3) % 38] for i in range(120000))
    hearth.put("fromrest", ns, {"text": text})
    length = page.call("""async (expected) => {
      const seen = await T.store.rest.untilValue((v) => v && v.text && v.text.length === expected.length, 'the 120 KB REST write');
      if (seen.val.text !== expected) throw new Error('the REST value arrived changed');
      return seen.val.text.length;
    }""", text)
    assert length == 120000
