"""Child events and every query form of the official Firebase JS SDK over the realtime protocol:
what another instance's listeners report for a scripted sequence of writes, the children each
query returns (from the server, and as the SDK itself computes them from complete data), and
limit windows that move as another instance adds and removes children."""

from __future__ import annotations

import pytest

from realtime_support import skip_without_sdk

skip_without_sdk()

CHILD_EVENTS = ["child_added", "child_changed", "child_removed", "child_moved", "value"]


def test_child_events_with_previous_keys_match_the_writers_own(page, ns):
    """Listeners of one instance on `scores` ordered by score, while another instance writes:
    the same child events, in the same order, with the same previous keys, as the writer's own
    listeners report for its writes, and as worked out by hand."""
    outcome = page.call("""async (ns, kinds) => {
      const writer = T.open(ns), reader = T.open(ns);
      await fb.set(writer.ref('scores'), { a: { score: 1 }, b: { score: 2 }, c: { score: 3 } });
      const byScore = (db) => fb.query(fb.ref(db, 'scores'), fb.orderByChild('score'));
      const remote = T.watch(byScore(reader.db), kinds);
      const local = T.watch(byScore(writer.db), kinds);
      await remote.until((events) => events.some((e) => e.kind === 'value'), 'the reader\\'s first value');
      await local.until((events) => events.some((e) => e.kind === 'value'), 'the writer\\'s first value');
      const steps = [
        () => fb.set(writer.ref('scores/d'), { score: 0 }),   // added first
        () => fb.set(writer.ref('scores/a/score'), 5),        // a moves to the end
        () => fb.remove(writer.ref('scores/b')),
        () => fb.update(writer.ref('scores/c'), { label: 'x' }),  // changed, not moved
        () => fb.setWithPriority(writer.ref('scores/e'), { score: 4 }, 7),
        () => fb.set(writer.ref('scores/c/score'), 9),        // c moves to the end
      ];
      const same = () => JSON.stringify(remote.last('value')) === JSON.stringify(local.last('value'));
      for (const [i, step] of steps.entries()) {
        await step();
        await remote.until(same, `the reader to show what the writer shows after write ${i}`);
      }
      return { remote: remote.childEvents(), local: local.childEvents(),
               remoteFinal: remote.last('value').keys, localFinal: local.last('value').keys };
    }""", ns, CHILD_EVENTS)
    expected = [
        ["child_added", "a", None], ["child_added", "b", "a"], ["child_added", "c", "b"],
        ["child_added", "d", None],
        ["child_moved", "a", "c"], ["child_changed", "a", "c"],
        ["child_removed", "b"],
        ["child_changed", "c", "d"],
        ["child_added", "e", "c"],
        ["child_moved", "c", "a"], ["child_changed", "c", "a"],
    ]
    assert outcome["remote"] == expected
    # The writer's own listeners see its writes at once (optimistically); the server's data for
    # them must come before the write's `ok`, or the SDK takes the write back and adds it again.
    assert outcome["local"] == expected, "the writer's own listener reported other events than its writes make"
    assert outcome["remoteFinal"] == ["d", "e", "a", "c"] == outcome["localFinal"]


PEOPLE = {
    "a1": {"name": "Ann", "age": 30, "tag": "x", ".priority": 3},
    "b2": {"name": "Bob", "age": 25, ".priority": 1},
    "c3": {"name": "Cid", "age": 35, "tag": "y", ".priority": 2},
    "d4": {"name": "Dee", "age": 25},
    "e5": {"name": "Eve", "age": 41, ".priority": "z"},
}
SCORES = {"a": 3, "b": 1, "c": 2, "d": "x", "e": True, "f": 2}

# (location, query constraints as JS, the keys in the query's order)
QUERIES = [
    ("people", "orderByChild('age')", ["b2", "d4", "a1", "c3", "e5"]),
    ("people", "orderByChild('age'), startAt(30)", ["a1", "c3", "e5"]),
    ("people", "orderByChild('age'), endAt(30)", ["b2", "d4", "a1"]),
    ("people", "orderByChild('age'), equalTo(25)", ["b2", "d4"]),
    ("people", "orderByChild('age'), startAfter(30)", ["c3", "e5"]),
    ("people", "orderByChild('age'), endBefore(30)", ["b2", "d4"]),
    ("people", "orderByChild('age'), startAt(25, 'd4')", ["d4", "a1", "c3", "e5"]),
    ("people", "orderByChild('age'), endAt(25, 'b2')", ["b2"]),
    ("people", "orderByChild('age'), startAfter(25, 'b2')", ["d4", "a1", "c3", "e5"]),
    ("people", "orderByChild('age'), endBefore(35, 'c3')", ["b2", "d4", "a1"]),
    ("people", "orderByChild('age'), limitToFirst(2)", ["b2", "d4"]),
    ("people", "orderByChild('age'), limitToLast(2)", ["c3", "e5"]),
    ("people", "orderByChild('age'), startAt(26), limitToFirst(2)", ["a1", "c3"]),
    ("people", "orderByChild('age'), endAt(35), limitToLast(2)", ["a1", "c3"]),
    ("people", "orderByChild('age'), startAfter(25), endBefore(41)", ["a1", "c3"]),
    ("people", "orderByChild('tag')", ["b2", "d4", "e5", "a1", "c3"]),
    ("people", "orderByChild('tag'), startAt('x')", ["a1", "c3"]),
    ("people", "orderByChild('tag'), equalTo(null)", ["b2", "d4", "e5"]),
    ("people", "orderByChild('tag'), limitToLast(1)", ["c3"]),
    ("people", "orderByChild('name'), startAt('B'), endAt('Dee')", ["b2", "c3", "d4"]),
    ("people", "orderByKey()", ["a1", "b2", "c3", "d4", "e5"]),
    ("people", "orderByKey(), startAt('b2'), endAt('d4')", ["b2", "c3", "d4"]),
    ("people", "orderByKey(), startAfter('b2')", ["c3", "d4", "e5"]),
    ("people", "orderByKey(), endBefore('c3')", ["a1", "b2"]),
    ("people", "orderByKey(), equalTo('c3')", ["c3"]),
    ("people", "orderByKey(), limitToLast(1)", ["e5"]),
    ("people", "orderByKey(), startAt('c'), limitToFirst(2)", ["c3", "d4"]),
    ("people", "orderByPriority()", ["d4", "b2", "c3", "a1", "e5"]),
    ("people", "orderByPriority(), startAt(2)", ["c3", "a1", "e5"]),
    ("people", "orderByPriority(), endAt(2)", ["d4", "b2", "c3"]),
    ("people", "orderByPriority(), equalTo('z')", ["e5"]),
    ("people", "orderByPriority(), startAt(1), endAt(3), limitToFirst(2)", ["b2", "c3"]),
    ("people", "orderByPriority(), startAfter(1)", ["c3", "a1", "e5"]),
    ("people", "orderByPriority(), endBefore(3)", ["d4", "b2", "c3"]),
    ("people", "limitToFirst(2)", ["d4", "b2"]),
    ("people", "limitToLast(2)", ["a1", "e5"]),
    ("scores", "orderByValue()", ["e", "b", "c", "f", "a", "d"]),
    ("scores", "orderByValue(), startAt(2)", ["c", "f", "a", "d"]),
    ("scores", "orderByValue(), endBefore(3)", ["e", "b", "c", "f"]),
    ("scores", "orderByValue(), equalTo(2)", ["c", "f"]),
    ("scores", "orderByValue(), limitToLast(2)", ["a", "d"]),
    ("scores", "orderByValue(), startAfter(2, 'c')", ["f", "a", "d"]),
    ("scores", "orderByValue(), endAt(2, 'c')", ["e", "b", "c"]),
    ("scores", "orderByValue(), equalTo(true)", ["e"]),
]
INDEXED_RULES = {"rules": {".read": True, ".write": True,
                           "people": {".indexOn": ["age", "tag", "name"]}, "scores": {".indexOn": ".value"}}}

# Runs every query three ways: listened to by one fresh instance (each query its own listen, so
# the data comes from the server per query), fetched with get() by another fresh instance, and
# listened to by an instance that listens to the whole locations first (the SDK then filters its
# complete copy itself: the reference for the expected lists).
RUN_QUERIES = """async (ns, queries) => {
  const build = (db, location, constraints) => fb.query(fb.ref(db, location),
    ...new Function(...Object.keys(fb), `return [${constraints}];`)(...Object.values(fb)));
  const listener = T.open(ns), getter = T.open(ns), reference = T.open(ns);
  const wholes = ['people', 'scores'].map((location) => T.watch(fb.ref(reference.db, location)));
  for (const whole of wholes) await whole.until((events) => events.length >= 1, 'the whole location');
  const watches = queries.map(([location, constraints]) => T.watch(build(listener.db, location, constraints)));
  const results = [];
  for (const [i, [location, constraints]] of queries.entries()) {
    const first = await watches[i].until((events) => events.find((e) => e.kind === 'value'), `the first value of ${constraints}`)
      .then(() => watches[i].of('value')[0], (error) => ({ error: String(error.message) }));
    let got;
    try { const snapshot = await fb.get(build(getter.db, location, constraints)); got = { keys: T.keys(snapshot), val: snapshot.val() }; }
    catch (error) { got = { error: String(error.message) }; }
    const local = await T.firstValue(build(reference.db, location, constraints), 'the local result');
    results.push({ location, constraints, listened: first.error ? first : { keys: first.keys, val: first.val },
                   got, local: local.keys, events: watches[i].of('value').length });
  }
  return results;
}"""


def _without_priorities(value):
    if isinstance(value, dict):
        return {key: _without_priorities(child) for key, child in value.items() if key != ".priority"}
    return value


def test_every_query_form_returns_the_children_it_should(page, hearth, ns):
    hearth.deploy_rules(ns, INDEXED_RULES)
    hearth.put("people", ns, PEOPLE)
    hearth.put("scores", ns, SCORES)
    results = page.call(RUN_QUERIES, ns, [[location, constraints] for location, constraints, _ in QUERIES])
    wrong = []
    data = {"people": _without_priorities(PEOPLE), "scores": SCORES}
    for (location, constraints, expected), result in zip(QUERIES, results):
        assert result["local"] == expected, f"the SDK's own filtering of {constraints} gives {result['local']} (the table is wrong)"
        expected_val = {key: data[location][key] for key in expected}
        for how in ("listened", "got"):
            answer = result[how]
            if "error" in answer:
                wrong.append(f"{location} {constraints} ({how}): {answer['error']}")
            elif answer["keys"] != expected or answer["val"] != expected_val:
                wrong.append(f"{location} {constraints} ({how}): {answer['keys']} instead of {expected}"
                             + ("" if answer["keys"] != expected else f" (values {answer['val']})"))
    assert not wrong, f"{len(wrong)} of {2 * len(QUERIES)} query answers are wrong:\n" + "\n".join(wrong)


def test_a_listen_on_a_child_without_an_index_still_answers(page, hearth, ns):
    """Firebase answers a listen ordered by an unindexed child (with the `no_index` warning, the
    SDK then filters on its side): the result must be right. A get() of such a query is refused
    with Firebase's "Index not defined" message, as over REST."""
    hearth.put("people", ns, PEOPLE)
    results = page.call(RUN_QUERIES, ns, [["people", "orderByChild('age'), startAt(30)"],
                                          ["people", "orderByChild('name'), limitToFirst(2)"]])
    assert [result["listened"].get("keys") for result in results] == [["a1", "c3", "e5"], ["a1", "b2"]], results
    for result, child in zip(results, ("age", "name")):
        assert f'Index not defined, add ".indexOn": "{child}", for path "/people", to the rules' in result["got"].get("error", ""), result


def test_limit_windows_move_as_another_instance_adds_and_removes(page, ns):
    """limitToLast(2) on a list of push IDs, and limitToFirst(2) by score, while another
    instance pushes, removes and re-scores: each window holds the right children after every
    write (the server refills a window when a child leaves it), and child events say so."""
    outcome = page.call("""async (ns) => {
      const writer = T.open(ns), reader = T.open(ns);
      const k = [];
      for (let i = 0; i < 3; i++) k.push((await fb.push(writer.ref('feed'), { n: i })).key);
      const last2 = T.watch(fb.query(reader.ref('feed'), fb.limitToLast(2)), ['child_added', 'child_removed', 'value']);
      const windows = [];
      const expect = async (keys, what) => {
        await last2.until(() => { const v = last2.last('value'); return v && JSON.stringify(v.keys) === JSON.stringify(keys); },
          `the window ${what}: ${JSON.stringify(keys)} (now ${JSON.stringify((last2.last('value') || {}).keys)})`);
        windows.push(keys);
      };
      await expect([k[1], k[2]], 'at first');
      k.push((await fb.push(writer.ref('feed'), { n: 3 })).key);
      await expect([k[2], k[3]], 'after a push');
      await fb.remove(writer.ref('feed/' + k[3]));
      await expect([k[1], k[2]], 'after removing the newest');
      await fb.remove(writer.ref('feed/' + k[2]));
      await expect([k[0], k[1]], 'after removing another');
      k.push((await fb.push(writer.ref('feed'), { n: 4 })).key);
      await expect([k[1], k[4]], 'after another push');

      await fb.set(writer.ref('board'), { p: { score: 10 }, q: { score: 20 }, r: { score: 30 }, s: { score: 40 } });
      const top2 = T.watch(fb.query(reader.ref('board'), fb.orderByChild('score'), fb.limitToFirst(2)), ['child_added', 'child_removed', 'value']);
      const board = [];
      const expectBoard = async (keys, what) => {
        await top2.until(() => { const v = top2.last('value'); return v && JSON.stringify(v.keys) === JSON.stringify(keys); },
          `the board ${what}: ${JSON.stringify(keys)} (now ${JSON.stringify((top2.last('value') || {}).keys)})`);
        board.push(keys);
      };
      await expectBoard(['p', 'q'], 'at first');
      await fb.set(writer.ref('board/p/score'), 35);    // p leaves, r comes in
      await expectBoard(['q', 'r'], 'after p scores 35');
      await fb.set(writer.ref('board/s/score'), 5);     // s comes in first, r leaves
      await expectBoard(['s', 'q'], 'after s scores 5');
      await fb.remove(writer.ref('board/q'));           // r comes back
      await expectBoard(['s', 'r'], 'after q is removed');
      return { k, windows, feedValues: last2.of('value').map((e) => e.keys), feedEvents: last2.childEvents(),
               board, boardValues: top2.of('value').map((e) => e.keys), boardEvents: top2.childEvents() };
    }""", ns)
    k = outcome["k"]
    assert outcome["feedEvents"] == [
        ["child_added", k[1], None], ["child_added", k[2], k[1]],
        ["child_removed", k[1]], ["child_added", k[3], k[2]],
        ["child_removed", k[3]], ["child_added", k[1], None],
        ["child_removed", k[2]], ["child_added", k[0], None],
        ["child_removed", k[0]], ["child_added", k[4], k[1]],
    ]
    assert outcome["feedValues"] == outcome["windows"], "a window showed a state between two of the writer's writes"
    assert outcome["boardEvents"] == [
        ["child_added", "p", None], ["child_added", "q", "p"],
        ["child_removed", "p"], ["child_added", "r", "q"],
        ["child_removed", "r"], ["child_added", "s", None],
        ["child_removed", "q"], ["child_added", "r", "s"],
    ]
    assert outcome["boardValues"] == outcome["board"], "the board showed a state between two of the writer's writes"


@pytest.mark.parametrize("constraints, expected", [
    ("orderByChild('age'), equalTo(25)", ["b2", "d4"]),
    ("orderByKey(), limitToLast(2)", ["d4", "e5"]),
], ids=["equalTo", "limitToLast"])
def test_a_query_follows_changes_made_by_another_instance(page, hearth, ns, constraints, expected):
    """A query listener keeps up as children enter and leave its range through writes of
    another instance."""
    hearth.deploy_rules(ns, INDEXED_RULES)
    hearth.put("people", ns, PEOPLE)
    outcome = page.call("""async (ns, constraints, expected) => {
      const writer = T.open(ns), reader = T.open(ns);
      const q = fb.query(reader.ref('people'), ...new Function(...Object.keys(fb), `return [${constraints}];`)(...Object.values(fb)));
      const w = T.watch(q, ['value']);
      const keysAre = (keys, what) => w.until(() => { const v = w.last(); return v && JSON.stringify(v.keys) === JSON.stringify(keys); },
        `${what}: ${JSON.stringify(keys)} (now ${JSON.stringify((w.last() || {}).keys)})`);
      await keysAre(expected, 'the first answer');
      await fb.set(writer.ref('people/f6'), { name: 'Fay', age: 25 });
      const afterAdd = constraints.includes('equalTo') ? [...expected, 'f6'] : [expected[1], 'f6'];
      await keysAre(afterAdd, 'after f6 is added');
      await fb.remove(writer.ref('people/f6'));
      await keysAre(expected, 'after f6 is removed');
      return w.of('value').map((e) => e.keys);
    }""", ns, constraints, expected)
    assert len(outcome) == 3, outcome
