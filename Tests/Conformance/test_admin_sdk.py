"""The firebase-admin `db` module against Hearth: the scenarios of its own integration tests (`integration/test_db.py`)."""
import collections
import threading
import time

import pytest
from firebase_admin import db, exceptions

ROOT = "_adminsdk/python"


@pytest.fixture(scope="module")
def ref(app, rules, dinos):
    dinodb = db.reference(f"{ROOT}/dinodb", app=app)
    dinodb.set(dinos)
    return dinodb


# Reads ----------------------------------------------------------------------------------------

def test_full_value(ref, dinos):
    assert ref.get() == dinos


def test_get_with_etag(ref, dinos):
    value, etag = ref.get(etag=True)
    assert value == dinos
    assert isinstance(etag, str) and etag


def test_shallow(ref):
    assert ref.get(shallow=True) == {"dinosaurs": True, "scores": True}


def test_get_if_changed(ref, dinos):
    changed, value, etag = ref.get_if_changed("wrong_etag")
    assert changed is True
    assert value == dinos
    assert isinstance(etag, str)
    assert ref.get_if_changed(etag) == (False, None, None)


def test_child_and_grandchild(ref, dinos):
    assert ref.child("dinosaurs").get() == dinos["dinosaurs"]
    assert ref.child("dinosaurs/triceratops/height").get() == 3
    assert ref.child("scores").child("linhenykus").get() == 80


def test_missing_child_is_none(ref):
    assert ref.child("nope/not/here").get() is None


# Writes ---------------------------------------------------------------------------------------

@pytest.fixture
def users(app):
    users = db.reference(f"{ROOT}/users", app=app)
    yield users
    users.delete()


def test_push_without_value(users):
    child = users.push()
    assert child.path == f"/{ROOT}/users/{child.key}"
    assert len(child.key) == 20
    assert child.get() == ""


def test_push_with_value(users):
    value = {"name": "Luis Alvarez", "since": 1911}
    child = users.push(value)
    assert child.get() == value


def test_push_ids_increase(users):
    keys = [users.push(index).key for index in range(20)]
    assert keys == sorted(keys)


def test_set_primitive_and_dict(users):
    edward = users.push()
    edward.set("Edward Cope")
    assert edward.get() == "Edward Cope"
    edward.set({"name": "Edward Cope", "since": 1800})
    assert edward.get() == {"name": "Edward Cope", "since": 1800}


def test_update_new_and_existing(users):
    new = users.push()
    new.update({"name": "Mary Anning", "since": 1799})
    assert new.get() == {"name": "Mary Anning", "since": 1799}
    new.update({"since": 1800, "temp": True})
    assert new.get() == {"name": "Mary Anning", "since": 1800, "temp": True}
    new.update({"temp": None})
    assert new.get() == {"name": "Mary Anning", "since": 1800}


def test_nested_multi_path_update(users):
    first = users.push({"name": "Edward Cope", "since": 1800})
    second = users.push({"name": "Othniel Marsh", "since": 1800})
    users.update({f"{first.key}/since": 1840, f"{second.key}/since": 1946})
    assert first.child("since").get() == 1840
    assert second.child("since").get() == 1946


def test_set_if_unchanged(users):
    edward = users.push({"name": "Edward Cope", "since": 1800})
    success, value, etag = edward.set_if_unchanged("invalid-etag", {"name": "Mallory"})
    assert success is False
    assert value == {"name": "Edward Cope", "since": 1800}
    assert isinstance(etag, str)
    success, value, new_etag = edward.set_if_unchanged(etag, {"name": "Edward Cope", "since": 1801})
    assert success is True
    assert value == {"name": "Edward Cope", "since": 1801}
    assert new_etag != etag
    assert edward.get() == {"name": "Edward Cope", "since": 1801}


def test_transaction_on_dict(users):
    owen = users.push({"name": "Richard", "since": 1800})

    def update(data):
        data["name"] = data["name"] + " Owen"
        data["since"] = 1804
        return data

    assert owen.transaction(update) == {"name": "Richard Owen", "since": 1804}
    assert owen.get() == {"name": "Richard Owen", "since": 1804}


def test_transaction_on_scalar(users):
    counter = users.child("counter")
    counter.set(42)
    assert counter.transaction(lambda value: value + 1) == 43
    assert counter.get() == 43


def test_concurrent_transactions_count_exactly(users):
    counter = users.child("concurrent-counter")
    counter.set(0)
    failures = []

    aborted = []

    def worker():
        try:
            for _ in range(50):
                # Under heavy contention the SDK gives up after 25 tries; an aborted transaction
                # wrote nothing, so the app tries again, as real apps do.
                while True:
                    try:
                        counter.transaction(lambda value: (value or 0) + 1)
                        break
                    except db.TransactionAbortedError:
                        aborted.append(1)
        except Exception as error:  # noqa: BLE001 - reported below
            failures.append(error)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    # No increment is lost and none is applied twice.
    assert counter.get() == 400
    assert len(aborted) < 20, f"{len(aborted)} transactions ran out of retries"


def test_delete(users):
    gone = users.push({"name": "Gone"})
    gone.delete()
    assert gone.get() is None


def test_server_values(users):
    before = int(time.time() * 1000)
    stamp = users.child("stamp")
    stamp.set({"at": {".sv": "timestamp"}, "n": {".sv": {"increment": 2}}})
    value = stamp.get()
    assert before - 1000 <= value["at"] <= int(time.time() * 1000) + 1000
    assert value["n"] == 2
    stamp.update({"n": {".sv": {"increment": 3.5}}})
    assert stamp.child("n").get() == 5.5


# Listening ------------------------------------------------------------------------------------

def test_listen_receives_initial_and_later_events(app, ref):
    events = []
    arrived = threading.Condition()

    def callback(event):
        with arrived:
            events.append(event)
            arrived.notify_all()

    root = db.reference(ROOT, app=app)
    registration = root.listen(callback)
    try:
        with arrived:
            assert arrived.wait_for(lambda: len(events) >= 1, timeout=5)
        assert events[0].event_type == "put"
        assert events[0].path == "/"
        assert "dinodb" in events[0].data

        pushed = db.reference(f"{ROOT}/users", app=app).push()
        with arrived:
            assert arrived.wait_for(lambda: len(events) >= 2, timeout=5)
        assert events[1].event_type == "put"
        assert events[1].path == f"/users/{pushed.key}"
        assert events[1].data == ""

        db.reference(ROOT, app=app).update({f"users/{pushed.key}": "changed", "extra/x": 1})
        with arrived:
            assert arrived.wait_for(lambda: len(events) >= 3, timeout=5)
        assert events[2].event_type == "patch"
        assert events[2].path == "/"
        assert events[2].data == {f"users/{pushed.key}": "changed", "extra/x": 1}
    finally:
        registration.close()
        db.reference(f"{ROOT}/users", app=app).delete()
        db.reference(f"{ROOT}/extra", app=app).delete()


# Queries --------------------------------------------------------------------------------------

def keys(result):
    assert isinstance(result, collections.OrderedDict)
    return list(result.keys())


def test_order_by_key(ref):
    result = ref.child("dinosaurs").order_by_key().get()
    assert keys(result) == ["bruhathkayosaurus", "lambeosaurus", "linhenykus", "pterodactyl", "stegosaurus", "triceratops"]


def test_order_by_value(ref):
    result = ref.child("scores").order_by_value().get()
    assert list(result.items()) == [
        ("stegosaurus", 5), ("lambeosaurus", 21), ("triceratops", 22),
        ("bruhathkayosaurus", 55), ("linhenykus", 80), ("pterodactyl", 93),
    ]


def test_order_by_child(ref):
    result = ref.child("dinosaurs").order_by_child("height").get()
    assert keys(result) == ["linhenykus", "pterodactyl", "lambeosaurus", "triceratops", "stegosaurus", "bruhathkayosaurus"]


def test_limits(ref):
    dinosaurs = ref.child("dinosaurs")
    assert keys(dinosaurs.order_by_child("height").limit_to_first(2).get()) == ["linhenykus", "pterodactyl"]
    assert len(dinosaurs.order_by_child("height").limit_to_first(10).get()) == 6
    assert keys(dinosaurs.order_by_child("height").limit_to_last(2).get()) == ["stegosaurus", "bruhathkayosaurus"]
    assert len(dinosaurs.order_by_child("height").limit_to_last(10).get()) == 6


def test_ranges(ref):
    dinosaurs = ref.child("dinosaurs")
    assert keys(dinosaurs.order_by_child("height").start_at(3.5).get()) == ["stegosaurus", "bruhathkayosaurus"]
    assert keys(dinosaurs.order_by_child("height").end_at(3.5).get()) == ["linhenykus", "pterodactyl", "lambeosaurus", "triceratops"]
    assert keys(dinosaurs.order_by_child("height").start_at(2.5).end_at(5).get()) == ["triceratops", "stegosaurus"]
    assert keys(dinosaurs.order_by_child("height").equal_to(0.6).get()) == ["linhenykus", "pterodactyl"]


def test_nested_child_path(ref):
    result = ref.child("dinosaurs").order_by_child("ratings/pos").start_at(4).get()
    assert set(result.keys()) == {"pterodactyl", "stegosaurus", "triceratops"}


def test_key_and_value_limits(ref):
    assert keys(ref.child("dinosaurs").order_by_key().limit_to_first(2).get()) == ["bruhathkayosaurus", "lambeosaurus"]
    assert keys(ref.child("scores").order_by_value().limit_to_last(2).get()) == ["linhenykus", "pterodactyl"]


def test_key_ranges(ref):
    result = ref.child("dinosaurs").order_by_key().start_at("l").end_at("o").get()
    assert keys(result) == ["lambeosaurus", "linhenykus"]


# Errors ---------------------------------------------------------------------------------------

def test_unindexed_query_is_invalid_argument(ref):
    with pytest.raises(exceptions.InvalidArgumentError) as caught:
        ref.child("dinosaurs").order_by_child("weight").get()
    assert str(caught.value) == (
        'Index not defined, add ".indexOn": "weight", for path "/_adminsdk/python/dinodb/dinosaurs", to the rules'
    )


def test_bad_value_is_invalid_argument(app):
    # A key the SDK does not check itself, but the server refuses.
    with pytest.raises(exceptions.InvalidArgumentError) as caught:
        db.reference(f"{ROOT}/bad", app=app).set({"a.b": 1})
    assert "Key value can't be empty or contain" in str(caught.value)
    assert db.reference(f"{ROOT}/bad", app=app).get() is None


# Auth override (rules judge the admin as the given `auth`) -------------------------------------

def override_app(server, override, name):
    """An app whose requests carry `auth_variable_override`, as the SDK's own tests make."""
    import firebase_admin

    from conformance_support import NAMESPACE

    options = {"databaseURL": f"https://{NAMESPACE}.firebaseio.com", "projectId": NAMESPACE,
               "databaseAuthVariableOverride": override}
    return firebase_admin.initialize_app(options=options, name=name)


@pytest.fixture(scope="module")
def user1_app(server, app, rules):
    import firebase_admin

    for key in ("admin", "protected/user1", "protected/user2", "public"):
        db.reference(f"{ROOT}/{key}", app=app).set("test")
    made = override_app(server, {"uid": "user1"}, "user1")
    yield made
    firebase_admin.delete_app(made)


@pytest.fixture(scope="module")
def nobody_app(server, user1_app):
    import firebase_admin

    made = override_app(server, None, "nobody")
    yield made
    firebase_admin.delete_app(made)


def assert_denied(action):
    with pytest.raises(exceptions.UnauthenticatedError) as caught:
        action()
    assert str(caught.value) == "Permission denied"


def test_override_user_cannot_touch_admin(user1_app):
    ref = db.reference(f"{ROOT}/admin", app=user1_app)
    assert_denied(ref.get)
    assert_denied(lambda: ref.set("changed"))


def test_override_user_reads_but_cannot_write_another_users_node(user1_app, app):
    ref = db.reference(f"{ROOT}/protected/user2", app=user1_app)
    assert ref.get() == "test"
    assert_denied(lambda: ref.set("changed"))
    assert db.reference(f"{ROOT}/protected/user2", app=app).get() == "test"


def test_override_user_reads_and_writes_own_node(user1_app):
    ref = db.reference(f"{ROOT}/protected/user1", app=user1_app)
    assert ref.get() == "test"
    ref.set("written by user1")
    assert ref.get() == "written by user1"


def test_override_user_query_is_denied_because_rules_are_not_filters(user1_app):
    ref = db.reference(f"{ROOT}/protected", app=user1_app)
    assert_denied(lambda: ref.order_by_key().limit_to_first(2).get())


def test_override_none_is_signed_out(nobody_app):
    assert db.reference(f"{ROOT}/public", app=nobody_app).get() == "test"
    for key in ("protected/user1", "protected/user2", "admin"):
        assert_denied(db.reference(f"{ROOT}/{key}", app=nobody_app).get)
