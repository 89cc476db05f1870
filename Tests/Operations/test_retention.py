"""Retention on the demo social app's server, on a real schedule: `hearth serve --demo` with
`social.retention` in its settings file (posts kept 30 days, accounts unused for 90 days
deleted, checked every minute), against a real server process.

Ann posts twice with photos; Bob likes and comments on both. One of Ann's posts is then made 40
days old (its time rewritten as the admin, in both its copies). Sam's account is imported with
a sign-up and a last sign-in 100 days ago (Firebase's `accounts:batchCreate`, as the Admin SDK's
importUsers sends it), with a profile and a post of his own. Within the next runs of the
schedule (a minute apart): the old post is gone with everything pointing at it (its copy, likes,
comments, notifications, feed and hashtag entries, its photos in storage), Sam's account is
gone and, through the account-deleted trigger, everything he made; Ann's recent post, its like
and comment, and Ann's and Bob's accounts stay, and every like count agrees.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import harness
from harness.social_data import like_disagreements, places_of
from operations_support import launch, stop
from test_account_deletion import ADMIN, IDENTITY, Person, call, comment, like, publish, push_id, sign_up, stored_names, whole_tree

DAY_MS = 86_400_000
# Two runs of an every-minute schedule, and the work of a debug build.
RETENTION_SECONDS = 200


def now_ms() -> int:
    return int(time.time() * 1000)


@pytest.fixture
def retention_server(tmp_path: Path):
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"social": {"retention": {"postDays": 30, "inactiveAccountDays": 90, "schedule": "every 1 minutes"}}}))
    served = launch(tmp_path / "data", "--settings", str(settings), demo=True)
    yield served
    stop(served)


def admin_patch(served, path: str, update: dict):
    status, answer = call(served, "PATCH", f"/{path}.json", update, ADMIN)
    assert status == 200, (status, answer)


def account_exists(served, uid: str) -> bool:
    status, answer = call(served, "POST", f"{IDENTITY}/accounts:lookup", {"localId": [uid]}, ADMIN)
    assert status == 200, (status, answer)
    return bool(answer.get("users"))


def test_old_posts_and_unused_accounts_go_on_the_schedule(retention_server):
    served = retention_server
    ann, bob = sign_up(served, "Ann Retention"), sign_up(served, "Bob Retention")
    recent = publish(served, ann, "Fresh #today", "Posted now", photo=True)
    old = publish(served, ann, "Ancient #history", "Posted long ago", photo=True)
    for post_id in (recent, old):
        like(served, bob, post_id)
        comment(served, bob, post_id, "Nice")
    # Forty days old, in both copies (the rules keep a post's time; the admin is past them).
    long_ago = now_ms() - 40 * DAY_MS
    admin_patch(served, "", {f"posts/{old}/timestamp": long_ago, f"user-posts/{ann.uid}/{old}/timestamp": long_ago})

    # Sam signed up and was last seen 100 days ago; his profile and a post of his are recent.
    sam_uid = f"sam-{push_id().lower()}"
    unused_since = now_ms() - 100 * DAY_MS
    status, answer = call(served, "POST", f"{IDENTITY}/projects/any/accounts:batchCreate", {"users": [{
        "localId": sam_uid, "email": f"{sam_uid}@example.com", "displayName": "Sam Sleeper",
        "createdAt": str(unused_since), "lastLoginAt": str(unused_since),
    }]}, ADMIN)
    assert status == 200 and not answer.get("error"), (status, answer)
    sam_post = push_id()
    sam = Person(uid=sam_uid, name="Sam Sleeper", email="", token="", refresh_token="")
    admin_patch(served, "", {
        f"people/{sam_uid}/full_name": sam.name, f"people/{sam_uid}/posts/{sam_post}": True,
        f"posts/{sam_post}": {"author": {"uid": sam_uid, "full_name": sam.name}, "title": "Hello", "body": "Still here?",
                              "timestamp": now_ms(), "starCount": 0},
        f"user-posts/{sam_uid}/{sam_post}": {"author": {"uid": sam_uid, "full_name": sam.name}, "title": "Hello",
                                             "body": "Still here?", "timestamp": now_ms(), "starCount": 0},
    })
    assert account_exists(served, sam_uid)
    other_posts = set(whole_tree(served)["posts"]) - {old, sam_post}

    def retained():
        tree = whole_tree(served)
        return (not places_of(tree, old) and not places_of(tree, sam_uid) and not account_exists(served, sam_uid)
                and not stored_names(served, f"{ann.uid}/full/{old}/") and not stored_names(served, f"{ann.uid}/thumb/{old}/")) and tree

    tree = harness.wait_until(retained, RETENTION_SECONDS, "the old post and the unused account to go", interval=1.0)

    # What is recent stays, whole.
    assert set(tree["posts"]) == other_posts
    assert tree["posts"][recent]["starCount"] == 1 and tree["posts"][recent]["stars"] == {bob.uid: True}
    assert len(tree["comments"][recent]) == 1
    assert tree["user-posts"][ann.uid][recent]["starCount"] == 1
    assert stored_names(served, f"{ann.uid}/full/{recent}/") == [f"{ann.uid}/full/{recent}/a.jpg"]
    assert account_exists(served, ann.uid) and account_exists(served, bob.uid)
    assert like_disagreements(tree) == []
    assert "removed posts past the retention period" in "".join(served.lines)
    assert "deleted accounts unused past the retention period" in "".join(served.lines)
