"""Deleting an account on the demo social app's server (`hearth serve --demo`), against real
server processes: when an account goes, the server's `deleteUserData` function
(Sources/HearthSocialServer/AccountCleanup.swift) takes away everything the person made and
leaves everybody else's data consistent.

- The admin API deletes a person who posted (with a photo), liked, commented, followed and
  chatted: nothing holding their uid is left in the database or in storage, the other person's
  like count agrees in all its shapes and went down by one, and nothing else changed.
- `hearth users delete` on a running server's data folder: the same outcome is expected
  (marked xfail while the command line records no account-deleted event, see the test).
- The server is killed with SIGKILL right after it answers the deletion of a person with a lot
  of data, started again on the same folder, killed again once the redelivered cleanup has
  visibly removed some of it, and started again: the deletion stays, the cleanup is finished,
  and everybody else's data is consistent. Where each kill landed (before, during or after the
  cleanup) is read from the killed server's folder with `hearth export` and recorded in the
  run's report; the test passes wherever it landed.
- Refused deletions change nothing: invalid, forged, foreign and revoked ID tokens, and an ID
  token whose sign-in is older than the recent-sign-in window (five minutes: that test waits
  for it, overlapping the other tests).

Every write a person makes goes through the REST API with their own ID token, so the demo's
rules (Sources/HearthSocial/Resources/rules/database.rules.json) check it; the shapes are the web
app's (Sources/HearthWeb/Resources/app/actions.js, views/profile.js, views/chat.js). The bulk
data of the crash test is written as the admin, past the rules, in those same shapes.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import shutil
import signal
import string
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

import harness
from harness.social_data import like_disagreements, places_of
from operations_support import ADMIN_TOKEN, Served, hearth, launch, stop

BUCKET = "hearth.appspot.com"
IDENTITY = "/identitytoolkit.googleapis.com/v1"
TIMESTAMP = {".sv": "timestamp"}
PASSWORD = "correct-horse-7"
DEMO = harness.REPO / "Sources" / "HearthSocial" / "Resources" / "demo"
PHOTO, THUMBNAIL = (DEMO / "beach.jpg").read_bytes(), (DEMO / "beach-thumb.jpg").read_bytes()
# How long a small cleanup may take (it takes well under a second).
CLEANUP_SECONDS = 60
# A large one, after a restart (15 to 25 s for the crash test's data with a debug build).
LARGE_CLEANUP_SECONDS = 240
# AuthService.Policy.recentSignInSeconds: an owner's deletion needs a sign-in this recent.
RECENT_SIGN_IN_SECONDS = 300
# The crash test's person: their own posts, and likes (each taken back with one write of its
# own) and comments on other people's posts: enough for the cleanup to take seconds.
OWN_POSTS = 400
LIKED_POSTS = 1000
SECTION = "account deletion"


# MARK: - HTTP


def call(served: Served, method: str, path: str, body=None, headers: dict | None = None, timeout: float = 60):
    """(status, parsed JSON body, or the text when it is not JSON) of one request; errors are answers too."""
    headers = dict(headers or {})
    if body is None or isinstance(body, bytes):
        data = body
    else:
        data = json.dumps(body).encode()
        headers.setdefault("Content-Type", "application/json")
    request = urllib.request.Request(f"{served.url}{path}", data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
            status = response.status
    except urllib.error.HTTPError as error:
        raw, status = error.read(), error.code
    try:
        return status, json.loads(raw or b"null")
    except ValueError:
        return status, raw.decode(errors="replace")


ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def auth_call(served: Served, endpoint: str, body: dict, headers: dict | None = None):
    return call(served, "POST", f"{IDENTITY}/{endpoint}?key=hearth", body, headers)


def error_of(answer) -> str | None:
    return answer.get("error", {}).get("message") if isinstance(answer, dict) else None


def assert_firebase_error(status: int, answer, code: str):
    """An Identity Toolkit refusal in Firebase's shape: 400 with the code in `message` and in `errors`."""
    assert status == 400, (status, answer)
    assert isinstance(answer, dict) and set(answer) == {"error"}, answer
    error = answer["error"]
    assert error["code"] == 400 and error["message"] == code, answer
    assert [entry["message"] for entry in error["errors"]] == [code], answer


# MARK: - People and what they write (as the web app writes it)


@dataclass
class Person:
    uid: str
    name: str
    email: str
    token: str
    refresh_token: str


def word() -> str:
    """A made-up word, so each test's people and posts are its own."""
    return secrets.choice(string.ascii_uppercase) + "".join(secrets.choice(string.ascii_lowercase) for _ in range(6))


def push_id() -> str:
    """A key in the manner of a push ID: time-ordered, unique."""
    return f"-{time.time_ns():x}{secrets.token_hex(4)}"


def claims(token: str) -> dict:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def refreshed(served: Served, refresh_token: str) -> tuple[str, str]:
    """A new ID token (and refresh token) for a session, from the Secure Token API."""
    status, answer = call(served, "POST", "/securetoken.googleapis.com/v1/token?key=hearth",
                          urllib.parse.urlencode({"grant_type": "refresh_token", "refresh_token": refresh_token}).encode(),
                          {"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 200, (status, answer)
    return answer["id_token"], answer["refresh_token"]


def sign_up(served: Served, name: str) -> Person:
    """A new password account named `name`, as the SDKs make one: `accounts:signUp`, then
    `accounts:update` with the display name, then a refreshed token (which carries the name the
    rules compare), and its public profile (actions.js writeProfile)."""
    email = f"{name.split()[0].lower()}-{secrets.token_hex(5)}@example.com"
    status, made = auth_call(served, "accounts:signUp", {"email": email, "password": PASSWORD, "returnSecureToken": True})
    assert status == 200, (status, made)
    status, updated = auth_call(served, "accounts:update", {"idToken": made["idToken"], "displayName": name, "returnSecureToken": True})
    assert status == 200 and updated["displayName"] == name, (status, updated)
    token, refresh_token = refreshed(served, made["refreshToken"])
    assert claims(token)["name"] == name, claims(token)
    person = Person(uid=made["localId"], name=name, email=email, token=token, refresh_token=refresh_token)
    lower = name.lower()
    write(served, person, {"full_name": name, "_search_index/full_name": lower,
                           "_search_index/reversed_full_name": " ".join(reversed(lower.split()))}, f"people/{person.uid}")
    return person


def signed_in(served: Served, person: Person) -> Person:
    """The same person after a new password sign-in (a new session, a fresh auth_time)."""
    status, answer = auth_call(served, "accounts:signInWithPassword", {"email": person.email, "password": PASSWORD, "returnSecureToken": True})
    assert status == 200, (status, answer)
    return Person(uid=person.uid, name=person.name, email=person.email, token=answer["idToken"], refresh_token=answer["refreshToken"])


def sign_in_error(served: Served, email: str) -> tuple[int, str | None]:
    status, answer = auth_call(served, "accounts:signInWithPassword", {"email": email, "password": PASSWORD, "returnSecureToken": True})
    return status, error_of(answer)


def read(served: Served, person: Person, path: str):
    status, value = call(served, "GET", f"/{path}.json", headers={"Authorization": f"Bearer {person.token}"})
    assert status == 200, (path, status, value)
    return value


def write(served: Served, person: Person, update: dict, path: str = ""):
    """One multi-path update with `person`'s ID token: the rules must accept it."""
    status, answer = call(served, "PATCH", f"/{path}.json", update, {"Authorization": f"Bearer {person.token}"})
    assert status == 200, (status, answer, update)


def upload(served: Served, person: Person, name: str, body: bytes):
    """A photo uploaded as its owner (Firebase Storage's REST upload), as image/jpeg."""
    status, answer = call(served, "POST", f"/v0/b/{BUCKET}/o?uploadType=media&name={urllib.parse.quote(name, safe='')}", body,
                          {"Authorization": f"Firebase {person.token}", "Content-Type": "image/jpeg"})
    assert status == 200 and answer["name"] == name and answer["contentType"] == "image/jpeg", (status, answer)


def hashtags(text: str) -> list[str]:
    """The hashtags the app indexes (actions.js hashtags), for the ASCII texts of these tests."""
    tags = []
    for part in text.split("#")[1:]:
        tag = "".join(character for character in part.split(" ")[0].lower() if character.isalnum() or character == "_")
        if tag and tag not in tags:
            tags.append(tag)
    return tags


def post_value(author: Person, title: str, body: str) -> dict:
    return {"author": {"uid": author.uid, "full_name": author.name}, "title": title, "body": body, "timestamp": TIMESTAMP,
            "starCount": 0}


def publish_update(author_uid: str, post_id: str, post: dict) -> dict:
    """actions.js publishPost: the post, its copy, the author's index and feed entries, its hashtags."""
    update = {f"posts/{post_id}": post, f"user-posts/{author_uid}/{post_id}": post, f"people/{author_uid}/posts/{post_id}": True,
              f"feed/{author_uid}/{post_id}": True}
    for tag in hashtags(f"{post['title']} {post['body']}"):
        update[f"hashtags/{tag}/{post_id}"] = True
    return update


def publish(served: Served, author: Person, title: str, body: str, photo: bool = False) -> str:
    """A post as the compose screen makes it: its photo and thumbnail uploaded first."""
    post_id = push_id()
    post = post_value(author, title, body)
    if photo:
        full, thumb = f"{author.uid}/full/{post_id}/a.jpg", f"{author.uid}/thumb/{post_id}/a.jpg"
        upload(served, author, full, PHOTO)
        upload(served, author, thumb, THUMBNAIL)
        post["photos"] = [{"full": full, "thumb": thumb}]
    write(served, author, publish_update(author.uid, post_id, post))
    return post_id


def notification(sender: Person, kind: str, post: str | None = None, comment: str | None = None) -> dict:
    value = {"type": kind, "from": sender.uid, "name": sender.name, "timestamp": TIMESTAMP, "read": False}
    if post:
        value["post"] = post
    if comment:
        value["comment"] = comment
    return value


def like(served: Served, liker: Person, post_id: str):
    """actions.js toggleLike (a like): both shapes, the copy, the count up by one, the notification."""
    post = read(served, liker, f"posts/{post_id}")
    count, author = post.get("starCount", 0) + 1, post["author"]["uid"]
    update = {
        f"posts/{post_id}/starCount": count, f"posts/{post_id}/stars/{liker.uid}": True,
        f"user-posts/{author}/{post_id}/starCount": count, f"user-posts/{author}/{post_id}/stars/{liker.uid}": True,
        f"likes/{post_id}/{liker.uid}": TIMESTAMP,
    }
    if author != liker.uid:
        update[f"notifications/{author}/like_{post_id}_{liker.uid}"] = notification(liker, "like", post=post_id)
    write(served, liker, update)


def comment(served: Served, writer: Person, post_id: str, text: str) -> str:
    """actions.js addComment: the comment and the post's author's notification in one write."""
    comment_id = push_id()
    author = read(served, writer, f"posts/{post_id}/author/uid")
    update = {f"comments/{post_id}/{comment_id}": {"author": {"uid": writer.uid, "full_name": writer.name}, "text": text,
                                                   "timestamp": TIMESTAMP}}
    if author != writer.uid:
        update[f"notifications/{author}/comment_{comment_id}"] = notification(writer, "comment", post=post_id, comment=comment_id)
    write(served, writer, update)
    return comment_id


def follow(served: Served, follower: Person, followed: Person):
    """views/profile.js toggleFollow: both sides, the feed entries of their posts, the notification."""
    update = {f"followers/{followed.uid}/{follower.uid}": True, f"people/{follower.uid}/following/{followed.uid}": True,
              f"notifications/{followed.uid}/follow_{follower.uid}": notification(follower, "follow")}
    for post_id in read(served, follower, f"people/{followed.uid}/posts") or {}:
        update[f"feed/{follower.uid}/{post_id}"] = True
    write(served, follower, update)


def conversation_of(a: str, b: str) -> str:
    return "_".join(sorted([a, b]))


def message(served: Served, sender: Person, to: Person, text: str):
    """views/chat.js send: the message and both members' summaries; the other's unread count up by one."""
    conversation = conversation_of(sender.uid, to.uid)
    write(served, sender, {
        f"messages/{conversation}/{push_id()}": {"from": sender.uid, "text": text, "timestamp": TIMESTAMP},
        f"user-chats/{sender.uid}/{conversation}": {"with": to.uid, "lastMessage": text, "updated": TIMESTAMP, "unread": 0},
        f"user-chats/{to.uid}/{conversation}": {"with": sender.uid, "lastMessage": text, "updated": TIMESTAMP,
                                                 "unread": {".sv": {"increment": 1}}},
    })


# MARK: - What is stored


def whole_tree(served: Served):
    """The whole database, read as the admin with the token in the address."""
    status, tree = call(served, "GET", f"/.json?auth={urllib.parse.quote(ADMIN_TOKEN)}", timeout=120)
    assert status == 200, (status, str(tree)[:500])
    return tree or {}


def described(places: list[tuple[str, object]], limit: int = 40) -> str:
    lines = [f"{place} = {json.dumps(value)[:160]}" for place, value in places[:limit]]
    if len(places) > limit:
        lines.append(f"… and {len(places) - limit} more")
    return "\n".join(lines)


def stored_names(served: Served, prefix: str = "") -> list[str]:
    """Every stored file's name under `prefix`, listed as the admin (Firebase Storage's REST list)."""
    names, page = [], None
    while True:
        query = urllib.parse.urlencode({"prefix": prefix, **({"pageToken": page} if page else {})})
        status, listing = call(served, "GET", f"/v0/b/{BUCKET}/o?{query}", headers=ADMIN)
        assert status == 200, (status, listing)
        names += [item["name"] for item in listing.get("items", [])]
        names += [f"{folder} (folder)" for folder in listing.get("prefixes", [])]
        page = listing.get("nextPageToken")
        if not page:
            return sorted(names)


def leaves(value, path: tuple = ()) -> dict[tuple, object]:
    """The tree's values by path (arrays as objects keyed by index)."""
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = ((str(index), child) for index, child in enumerate(value) if child is not None)
    else:
        return {path: value}
    found = {}
    for key, child in items:
        found.update(leaves(child, (*path, key)))
    return found


def parts_of(text: str) -> list[str]:
    """A key or string cut at "_" and "/": the IDs it is made of (`like_<post>_<uid>`,
    `<uid>_<uid>`, `<uid>/full/<post>/a.jpg`). The IDs these tests make (``push_id``) and
    uids have neither character."""
    return text.replace("/", "_").split("_")


def unexplained_changes(before: dict, after: dict, uid: str, ids: set[str] = frozenset(), unliked: set[str] = frozenset()) -> list[str]:
    """What changed between two whole trees other than the deleted person's traces: every value
    whose path has no key holding their `uid` (their conversations' IDs hold it too) or one of
    `ids` (their posts' and comments' IDs) must be as it was, except the like counts of the
    posts in `unliked` (which they liked), each down by exactly one, in posts/ and user-posts/;
    and the comment counts of posts they commented on, which the server keeps equal to the
    comments left (none: no count)."""
    old, new = leaves(before), leaves(after)
    problems = []
    for path in sorted(set(old) | set(new)):
        was, now = old.get(path), new.get(path)
        if was == now or any(uid in key or not ids.isdisjoint(parts_of(key)) for key in path):
            continue
        in_a_post = (path[0], len(path)) in (("posts", 3), ("user-posts", 4))
        counted = path[-1] == "starCount" and in_a_post and path[-2] in unliked
        if counted and isinstance(was, int) and now == was - 1:
            continue
        if path[-1] == "commentCount" and in_a_post:
            left = len((after.get("comments") or {}).get(path[-2]) or {})
            if now == (left or None) and isinstance(was, int) and was > left:
                continue
        problems.append(f"/{'/'.join(path)}: {json.dumps(was)} -> {json.dumps(now)}")
    return problems


def mentioned_ids(tree, ids: set[str]) -> set[str]:
    """Which of `ids` some key or string of the tree holds (as one of its parts)."""
    found: set[str] = set()

    def walk(value):
        if isinstance(value, dict):
            for key, child in value.items():
                found.update(ids.intersection(parts_of(key)))
                walk(child)
        elif isinstance(value, list):
            for child in value:
                walk(child)
        elif isinstance(value, str):
            found.update(ids.intersection(parts_of(value)))

    walk(tree)
    return found


def traces(served: Served, uid: str) -> tuple[list, list[str]]:
    return places_of(whole_tree(served), uid), stored_names(served, f"{uid}/")


class LeftBehind(AssertionError):
    """A deleted person's data still there after the deadline."""


def wait_until_gone(served: Served, uid: str, timeout: float) -> float:
    """Polls until no key or string in the database holds `uid` and storage lists nothing under
    `uid/`; answers the seconds it took. Raises ``LeftBehind`` with what is left after `timeout`."""
    started = time.monotonic()
    left: tuple[list, list[str]] = ([], [])
    while time.monotonic() - started < timeout:
        left = traces(served, uid)
        if left == ([], []):
            return time.monotonic() - started
        time.sleep(0.1)
    places, files = left
    raise LeftBehind(f"{uid}'s data is still there after {timeout} s: {len(places)} places, {len(files)} files\n"
                     f"{described(places)}\n{files[:20]}")


def admin_delete(served: Served, uid: str):
    """`accounts:delete` with the admin token and a `localId` (what firebase-admin's deleteUser sends)."""
    status, answer = call(served, "POST", f"{IDENTITY}/accounts:delete", {"localId": uid}, ADMIN)
    assert status == 200 and answer == {"kind": "identitytoolkit#DeleteAccountResponse"}, (status, answer)


def functions_listing(served: Served) -> dict:
    status, listing = call(served, "GET", "/.hearth/functions", headers=ADMIN)
    assert status == 200, (status, listing)
    return listing


def functions_idle(served: Served) -> bool:
    return all(count == 0 for function in functions_listing(served)["functions"] for count in function["waiting"].values())


def comments_counted(tree) -> bool:
    """Whether every post's `commentCount` (kept by the server) is the number of its comments
    (none: no count): the last bulk write's counts have landed."""
    comments = tree.get("comments") or {}
    return all((post or {}).get("commentCount") == (len(comments.get(post_id) or {}) or None)
               for post_id, post in (tree.get("posts") or {}).items())


def cleanup_events(served: Served) -> set[str]:
    """The events of deleteUserData among the latest delivery attempts."""
    return {entry.get("eventID") for entry in functions_listing(served)["recent"] if entry["function"] == "deleteUserData"}


CLEANED_UP = "removed a deleted account's data"


def cleanup_log_lines(served: Served) -> list[str]:
    """The lines deleteUserData logs at the end of each finished run (with what it removed)."""
    return [line.strip().split(" info hearth: ", 1)[-1] for line in served.lines if CLEANED_UP in line]


# MARK: - Fixtures


@pytest.fixture(scope="module")
def server():
    """One demo server for the tests that do not restart it, with a person whose sign-in the
    last test makes old."""
    folder = Path(tempfile.mkdtemp(prefix="hearth-account-deletion-"))
    try:
        served = launch(folder / "data", demo=True)
        try:
            long_ago = sign_up(served, f"Lena {word()}")
            served.signed_in_long_ago = long_ago
            served.long_ago_post = publish(served, long_ago, f"Old news {word()}", "Written a while ago.", photo=True)
            yield served
        finally:
            stop(served)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def folder():
    path = Path(tempfile.mkdtemp(prefix="hearth-account-deletion-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


# MARK: - Deletion through the admin API and the command line


@dataclass
class Pair:
    """Two people who did everything with each other; `x` is the one to delete."""
    x: Person
    y: Person
    x_post: str
    y_post: str
    x_comment: str
    y_comment: str
    y_own_comment: str


def two_people_who_did_everything(served: Served) -> Pair:
    tag = word()
    x, y = sign_up(served, f"Xena {tag}"), sign_up(served, f"Yuri {tag}")
    x_post = publish(served, x, f"Dunes {tag}", f"Sand and sky. #dunes{tag.lower()}", photo=True)
    y_post = publish(served, y, f"Harbour {tag}", "Gulls everywhere.", photo=True)
    like(served, y, x_post)
    y_comment = comment(served, y, x_post, "Lovely dunes!")
    like(served, x, y_post)
    x_comment = comment(served, x, y_post, "Noisy gulls.")
    # Yuri likes and comments on his own post too: the count goes from 2 to 1, not to nothing.
    like(served, y, y_post)
    y_own_comment = comment(served, y, y_post, "Thanks for looking.")
    follow(served, x, y)
    follow(served, y, x)
    message(served, x, y, "Hi Yuri, it is Xena.")
    message(served, y, x, "Hello Xena!")
    return Pair(x, y, x_post, y_post, x_comment, y_comment, y_own_comment)


def check_everything_of_x_went(served: Served, pair: Pair, before: dict, files_before: list[str]):
    """After `pair.x`'s deletion: what else must hold once their traces are gone."""
    x, y = pair.x, pair.y
    after = whole_tree(served)
    # Nothing points at their post any more (Yuri's feed, the hashtag index, their own lists).
    assert places_of(after, pair.x_post) == [], described(places_of(after, pair.x_post))
    # Everything else is as it was, but Yuri's post's like count, down by one.
    assert unexplained_changes(before, after, x.uid, {pair.x_post, pair.x_comment}, unliked={pair.y_post}) == []
    # The likes agree in every shape on every post; Yuri's post keeps only his own.
    assert like_disagreements(after) == []
    post, copy = after["posts"][pair.y_post], after["user-posts"][y.uid][pair.y_post]
    assert before["posts"][pair.y_post]["starCount"] == 2
    assert post["starCount"] == copy["starCount"] == 1
    assert set(post["stars"]) == set(copy["stars"]) == set(after["likes"][pair.y_post]) == {y.uid}
    # Yuri's own data: profile, post with its photo, his comment on his own post.
    assert after["people"][y.uid]["full_name"] == y.name
    assert set(after["people"][y.uid]["posts"]) == {pair.y_post} and "following" not in after["people"][y.uid]
    assert post["photos"] == before["posts"][pair.y_post]["photos"]
    assert list(after["comments"][pair.y_post]) == [pair.y_own_comment]
    assert pair.y_comment not in json.dumps(after), "Yuri's comment on the deleted post went with it"
    # Their conversation goes from Yuri's side too (it is kept under both members' IDs).
    conversation = conversation_of(x.uid, y.uid)
    assert conversation not in (after.get("messages") or {}) and conversation not in (after["user-chats"].get(y.uid) or {})
    # Storage: their folder is gone, everything else stays.
    assert stored_names(served) == [name for name in files_before if not name.startswith(f"{x.uid}/")]
    assert any(name.startswith(f"{y.uid}/full/{pair.y_post}/") for name in files_before)
    # The account is gone; Yuri's is not.
    status, code = sign_in_error(served, x.email)
    assert status == 400 and code in ("INVALID_LOGIN_CREDENTIALS", "EMAIL_NOT_FOUND"), (status, code)
    assert sign_in_error(served, y.email) == (200, None)


def test_the_admin_api_deletes_an_account_and_the_server_removes_the_person_everywhere(server):
    pair = two_people_who_did_everything(server)
    x = pair.x
    before = whole_tree(server)
    files_before = stored_names(server)
    # They are all over the data, and their photos are stored: what must go.
    roots = {place.split("/")[1] for place, _ in places_of(before, x.uid)}
    assert {"people", "posts", "user-posts", "likes", "comments", "followers", "notifications", "messages", "user-chats",
            "feed"} <= roots, sorted(roots)
    assert {place.split("/")[1] for place, _ in places_of(before, pair.x_post)} >= {"hashtags", "feed", "people"}
    assert len(stored_names(server, f"{x.uid}/")) == 2, "the post's photo and thumbnail are stored"

    admin_delete(server, x.uid)
    took = wait_until_gone(server, x.uid, CLEANUP_SECONDS)
    harness.record(SECTION, f"admin API deletion: the person's data was gone {took:.2f} s after accounts:delete answered")
    check_everything_of_x_went(server, pair, before, files_before)


def test_hearth_users_delete_on_a_running_server_removes_the_person_everywhere(server):
    # `hearth users` works on a data folder while its server runs (Sources/hearth/Users.swift): it
    # records the account-deleted event, which the server finds within its look for other
    # processes' events (FunctionsRunner.otherProcessesInterval, 10 s).
    pair = two_people_who_did_everything(server)
    x = pair.x
    before = whole_tree(server)
    files_before = stored_names(server)

    done = hearth("users", "delete", x.uid, "--data", str(server.data))
    assert done.stdout.strip() == f"deleted {x.uid}", done.stdout
    # The deletion itself took: the running server no longer signs them in.
    status, code = sign_in_error(server, x.email)
    assert status == 400 and code in ("INVALID_LOGIN_CREDENTIALS", "EMAIL_NOT_FOUND"), (status, code)

    took = wait_until_gone(server, x.uid, CLEANUP_SECONDS)
    harness.record(SECTION, f"hearth users delete: the person's data was gone {took:.2f} s after the command ended")
    check_everything_of_x_went(server, pair, before, files_before)


# MARK: - A crash in the middle of a cleanup


@dataclass
class Crowd:
    x: Person
    y: Person
    z: Person
    own_posts: list[str]
    liked_posts: list[str]
    x_comments: list[str]


def a_person_with_a_lot_of_data(served: Served) -> Crowd:
    """Xavier, followed by and following Yara and Zeno, with `OWN_POSTS` posts (a third liked by
    Yara, a third commented on by Zeno, all in both followers' feeds, some saved by Yara), a like
    on each of `LIKED_POSTS` posts of Yara's and Zeno's (each liked by the other of them too,
    some commented on by Xavier, some saved by him) and conversations with both. A few things
    through the app's own writes; the bulk as the admin in the app's shapes."""
    tag = word()
    x, y, z = sign_up(served, f"Xavier {tag}"), sign_up(served, f"Yara {tag}"), sign_up(served, f"Zeno {tag}")
    for follower, followed in ((x, y), (x, z), (y, x), (z, x)):
        follow(served, follower, followed)
    first = publish(served, x, f"First light {tag}", "Early start.", photo=True)
    message(served, x, y, "Hi Yara.")
    message(served, y, x, "Hi Xavier!")
    message(served, z, x, "Hello from Zeno.")
    # Photos of more posts: the cleanup lists and deletes every name under the person's folder.
    own_posts = [first] + [push_id() for _ in range(OWN_POSTS - 1)]
    for post_id in own_posts[1:11]:
        upload(served, x, f"{x.uid}/full/{post_id}/0.jpg", PHOTO)
        upload(served, x, f"{x.uid}/thumb/{post_id}/0.jpg", THUMBNAIL)

    now = int(time.time() * 1000)

    def note(sender: Person, kind: str, **fields) -> dict:
        return {**notification(sender, kind, **fields), "timestamp": now}

    updates: dict = {}
    for index, post_id in enumerate(own_posts[1:], start=1):
        post = {**post_value(x, f"Walk {index} {tag}", f"Notes from the walk. #walk{tag.lower()}"), "timestamp": now}
        if index <= 10:
            post["photos"] = [{"full": f"{x.uid}/full/{post_id}/0.jpg", "thumb": f"{x.uid}/thumb/{post_id}/0.jpg"}]
        if index % 3 == 0:
            post.update(starCount=1, stars={y.uid: True})
            updates[f"likes/{post_id}/{y.uid}"] = now
            updates[f"notifications/{x.uid}/like_{post_id}_{y.uid}"] = note(y, "like", post=post_id)
        updates.update(publish_update(x.uid, post_id, post))
        for follower in (y, z):
            updates[f"feed/{follower.uid}/{post_id}"] = True
        if index % 3 == 1:
            comment_id = push_id()
            updates[f"comments/{post_id}/{comment_id}"] = {"author": {"uid": z.uid, "full_name": z.name}, "text": "Nice walk.",
                                                           "timestamp": now}
            updates[f"notifications/{x.uid}/comment_{comment_id}"] = note(z, "comment", post=post_id, comment=comment_id)
        if index % 10 == 0:
            updates[f"saved/{y.uid}/{post_id}"] = now
    liked_posts, x_comments = [], []
    for index in range(LIKED_POSTS):
        author, other = (y, z) if index % 2 == 0 else (z, y)
        post_id = push_id()
        liked_posts.append(post_id)
        post = {**post_value(author, f"View {index} {tag}", "Out of the window."), "timestamp": now, "starCount": 2,
                "stars": {x.uid: True, other.uid: True}}
        updates.update(publish_update(author.uid, post_id, post))
        updates[f"likes/{post_id}"] = {x.uid: now, other.uid: now}
        for liker in (x, other):
            updates[f"notifications/{author.uid}/like_{post_id}_{liker.uid}"] = note(liker, "like", post=post_id)
        updates[f"feed/{x.uid}/{post_id}"] = updates[f"feed/{other.uid}/{post_id}"] = True
        if index % 4 == 0:
            comment_id = push_id()
            x_comments.append(comment_id)
            updates[f"comments/{post_id}/{comment_id}"] = {"author": {"uid": x.uid, "full_name": x.name}, "text": "Great view.",
                                                           "timestamp": now}
            updates[f"notifications/{author.uid}/comment_{comment_id}"] = note(x, "comment", post=post_id, comment=comment_id)
        if index % 10 == 0:
            updates[f"saved/{x.uid}/{post_id}"] = now
    for other in (y, z):
        conversation = conversation_of(x.uid, other.uid)
        for index in range(50):
            sender = x if index % 2 == 0 else other
            updates[f"messages/{conversation}/{push_id()}"] = {"from": sender.uid, "text": f"Message {index}", "timestamp": now}

    # Posts before what points at them (the order of one multi-path update does not matter, but
    # the chunks are separate writes).
    paths = sorted(updates, key=lambda path: (not path.startswith(("posts/", "user-posts/", "people/")), path))
    for start in range(0, len(paths), 4000):
        chunk = {path: updates[path] for path in paths[start:start + 4000]}
        status, answer = call(served, "PATCH", "/.json", chunk, ADMIN, timeout=120)
        assert status == 200, (status, str(answer)[:500])
    return Crowd(x, y, z, own_posts, liked_posts, x_comments)


def kill(served: Served):
    """SIGKILL, and the process is confirmed gone."""
    pid = served.process.pid
    served.process.send_signal(signal.SIGKILL)
    assert served.process.wait(timeout=10) == -signal.SIGKILL, "hearth died of the SIGKILL"
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def left_at_kill(folder: Path, data: Path, uid: str, at_start: int, name: str) -> str:
    """What a killed server left of `uid`, read from its folder with `hearth export` before
    anything runs on it again: when the kill landed, in words."""
    export = folder / f"at-{name}-kill.json"
    hearth("export", "--data", str(data), "--output", str(export))
    tree = json.loads(export.read_text()) or {}
    export.unlink()
    left = len(places_of(tree, uid))
    profile = ((tree.get("people") or {}).get(uid) or {})
    if left == 0:
        when = "after the cleanup had finished"
    elif "full_name" in profile and left >= at_start:
        when = "before the cleanup's first write"
    else:
        when = "in the middle of the cleanup"
    return f"{left} of {at_start} places left (profile name {'still there' if 'full_name' in profile else 'gone'}): it landed {when}"


def test_a_cleanup_cut_short_by_sigkill_is_finished_after_a_restart(folder):
    data = folder / "data"
    served = launch(data, demo=True)
    restarted = None
    try:
        started = time.monotonic()
        crowd = a_person_with_a_lot_of_data(served)
        x = crowd.x
        # The functions the bulk writes set off (moderation of each new post and comment) run first.
        harness.wait_until(lambda: functions_idle(served) and comments_counted(whole_tree(served)), 300,
                           "the functions to catch up with the bulk writes", interval=0.2)
        before = whole_tree(served)
        files_before = stored_names(served)
        in_database = len(places_of(before, x.uid))
        assert in_database > OWN_POSTS + LIKED_POSTS, in_database
        assert len(stored_names(served, f"{x.uid}/")) == 22
        harness.record(SECTION, f"crash test: {in_database} places in the database hold the person's uid, 22 files; "
                                f"made in {time.monotonic() - started:.1f} s")

        # First kill: right after the deletion is answered (it is durable, with its event, by
        # then), before the cleanup has done much, or anything.
        admin_delete(served, x.uid)
        deleted_at = time.monotonic()
        kill(served)
        killed_after = time.monotonic() - deleted_at
        first = left_at_kill(folder, data, x.uid, in_database, "first")
        harness.record(SECTION, f"crash test, first SIGKILL {killed_after:.3f} s after accounts:delete answered: {first}")

        # Second kill: the same folder again (a new port); as soon as the redelivered cleanup is
        # seen to have removed some of the person's posts, the server is killed again.
        restart_started = time.monotonic()
        restarted = launch(data, demo=True)
        progress = None
        while time.monotonic() - restart_started < 120:
            status, posts = call(restarted, "GET", f"/user-posts/{x.uid}.json?shallow=true&auth={ADMIN_TOKEN}")
            if status == 200 and len(posts or {}) < OWN_POSTS:
                progress = len(posts or {})
                break
            time.sleep(0.005)
        seen = time.monotonic() - restart_started
        kill(restarted)
        killed_after = time.monotonic() - restart_started
        second = left_at_kill(folder, data, x.uid, in_database, "second")
        harness.record(SECTION, f"crash test, second SIGKILL {killed_after:.3f} s after the restart began "
                                f"({'no progress seen' if progress is None else f'{progress} of {OWN_POSTS} posts left after {seen:.3f} s'}): "
                                f"{second}; the server had logged: {cleanup_log_lines(restarted) or 'no finished cleanup'}")

        # Third start: the cleanup is finished.
        restart_started = time.monotonic()
        restarted = launch(data, demo=True)
        right_after = places_of(whole_tree(restarted), x.uid)
        took = wait_until_gone(restarted, x.uid, LARGE_CLEANUP_SECONDS)
        if right_after:
            # The cleanup that finished is the one redelivered from the outbox after the kill.
            restarted.log.wait_for(CLEANED_UP, 30, "the restarted server's cleanup to log its end")
        harness.record(SECTION, f"crash test, third start: {len(right_after)} places were left when it first answered; all gone "
                                f"{time.monotonic() - restart_started:.2f} s after it began ({took:.2f} s of waiting); "
                                f"it logged: {cleanup_log_lines(restarted) or 'no cleanup (nothing was left)'}")

        status, code = sign_in_error(restarted, x.email)
        assert status == 400 and code in ("INVALID_LOGIN_CREDENTIALS", "EMAIL_NOT_FOUND"), (status, code)
        for other in (crowd.y, crowd.z):
            assert sign_in_error(restarted, other.email) == (200, None)

        # Everybody else's data is as it was, but the counts of the posts they liked (2 -> 1).
        after = whole_tree(restarted)
        changes = unexplained_changes(before, after, x.uid, {*crowd.own_posts, *crowd.x_comments}, unliked=set(crowd.liked_posts))
        assert changes == [], "\n".join(changes[:40])
        assert like_disagreements(after) == []
        for post_id in crowd.liked_posts:
            post = after["posts"][post_id]
            assert post["starCount"] == 1 and len(post["stars"]) == 1, (post_id, post)
        assert mentioned_ids(before, set(crowd.own_posts)) == set(crowd.own_posts)
        assert mentioned_ids(after, set(crowd.own_posts)) == set(), "nothing points at the person's posts any more"
        assert stored_names(restarted) == [name for name in files_before if not name.startswith(f"{x.uid}/")]
        listing = functions_listing(restarted)
        cleanup = next(function for function in listing["functions"] if function["name"] == "deleteUserData")
        assert cleanup["waiting"].get("accounts", 0) == 0 and not cleanup["dropped"], cleanup
        status, dead = call(restarted, "GET", "/.hearth/functions/dead-letters?function=deleteUserData", headers=ADMIN)
        assert status == 200 and not dead.get("deadLetters"), dead
    finally:
        for running in (served, restarted):
            if running is not None:
                stop(running)


# MARK: - Refusals


def test_deletions_with_bad_id_tokens_are_refused_and_change_nothing(server, folder):
    tag = word()
    rhea, other = sign_up(server, f"Rhea {tag}"), sign_up(server, f"Otis {tag}")
    rhea_post = publish(server, rhea, f"Orchard {tag}", "Apples.", photo=True)
    other_post = publish(server, other, f"Meadow {tag}", "Grass.")
    like(server, rhea, other_post)
    comment(server, rhea, other_post, "Green!")
    follow(server, rhea, other)
    message(server, rhea, other, "Hello Otis.")
    before, files_before = whole_tree(server), stored_names(server)
    assert len(stored_names(server, f"{rhea.uid}/")) == 2
    cleanups_before = cleanup_events(server)

    header, payload, signature = rhea.token.split(".")
    forged_payload = base64.urlsafe_b64encode(json.dumps({**claims(rhea.token), "sub": other.uid, "user_id": other.uid})
                                              .encode()).rstrip(b"=").decode()
    flipped = signature[:-4] + ("AAAA" if signature[-4:] != "AAAA" else "BBBB")

    # A genuine ID token for the same uid and email, signed by another Hearth (another data
    # folder's key): a token from a server that is not this one.
    foreign_server = launch(folder / "other")
    try:
        status, made = call(foreign_server, "POST", f"{IDENTITY}/projects/hearth/accounts",
                            {"localId": rhea.uid, "email": rhea.email, "password": PASSWORD, "displayName": rhea.name}, ADMIN)
        assert status == 200 and made["localId"] == rhea.uid, (status, made)
        foreign = signed_in(foreign_server, rhea).token
    finally:
        stop(foreign_server)
    assert claims(foreign)["sub"] == rhea.uid

    refusals = {
        "no token": (None, "INVALID_ID_TOKEN"),
        "an empty token": ("", "INVALID_ID_TOKEN"),
        "not a token": ("not-a-token", "INVALID_ID_TOKEN"),
        "a token with its signature altered": (f"{header}.{payload}.{flipped}", "INVALID_ID_TOKEN"),
        "a token whose uid was changed": (f"{header}.{forged_payload}.{signature}", "INVALID_ID_TOKEN"),
        "a token signed by another server": (foreign, "INVALID_ID_TOKEN"),
    }
    for what, (token, code) in refusals.items():
        body = {} if token is None else {"idToken": token}
        status, answer = auth_call(server, "accounts:delete", body)
        assert_firebase_error(status, answer, code)
        assert sign_in_error(server, rhea.email) == (200, None), f"{what}: the account is still there"

    # A token of a session that was revoked (the admin API's validSince, as revokeRefreshTokens
    # sets it): TOKEN_EXPIRED, as Firebase answers.
    harness.wait_past_second(claims(rhea.token)["iat"])
    revoked_at = int(time.time())
    status, answer = call(server, "POST", f"{IDENTITY}/projects/hearth/accounts:update",
                          {"localId": rhea.uid, "validSince": str(revoked_at)}, ADMIN)
    assert status == 200, (status, answer)
    status, answer = auth_call(server, "accounts:delete", {"idToken": rhea.token})
    assert_firebase_error(status, answer, "TOKEN_EXPIRED")

    # Nothing changed: the account signs in, the database and storage are exactly as they were,
    # and no account-deleted event is waiting.
    assert sign_in_error(server, rhea.email) == (200, None)
    assert whole_tree(server) == before
    assert stored_names(server) == files_before
    cleanup = next(function for function in functions_listing(server)["functions"] if function["name"] == "deleteUserData")
    assert cleanup["waiting"].get("accounts", 0) == 0, cleanup
    assert cleanup_events(server) <= cleanups_before, "no cleanup ran"

    # The owner, signed in again, deletes the account: then everything goes.
    rhea = signed_in(server, rhea)
    status, answer = auth_call(server, "accounts:delete", {"idToken": rhea.token})
    assert status == 200 and answer.get("kind") == "identitytoolkit#DeleteAccountResponse", (status, answer)
    wait_until_gone(server, rhea.uid, CLEANUP_SECONDS)
    assert places_of(whole_tree(server), rhea_post) == []
    assert like_disagreements(whole_tree(server)) == []


def test_an_owner_signed_in_more_than_five_minutes_ago_must_sign_in_again_to_delete(server):
    # AuthService.delete(idToken:): a password account's owner needs a sign-in (the token's
    # auth_time) at most Policy.recentSignInSeconds (300 s) old. Rather than wait, the test signs
    # what the server would have issued then: the same claims, an auth_time ten minutes back,
    # with the server's own key (the data folder's auth/signing-key.pem) and key ID.
    import jwt

    lena = server.signed_in_long_ago
    header = jwt.get_unverified_header(lena.token)
    issued = claims(lena.token)
    now = int(time.time())
    old = dict(issued, auth_time=now - RECENT_SIGN_IN_SECONDS - 300, iat=now - 60, exp=now + 3000)
    # The account as it would be had it been made before that sign-in (tokens from before an
    # account's validSince are refused as revoked).
    status, answer = auth_call(server, "accounts:update", {"localId": lena.uid, "validSince": str(old["auth_time"] - 60)},
                               headers=ADMIN)
    assert status == 200, (status, answer)
    key = (server.data / "auth" / "signing-key.pem").read_bytes()
    stale_token = jwt.encode(old, key, algorithm=header["alg"], headers={"kid": header["kid"]})
    # A genuine token of the same sign-in is accepted (the forged-looking one above is not a forgery).
    status, answer = auth_call(server, "accounts:lookup", {"idToken": stale_token})
    assert status == 200 and answer["users"][0]["localId"] == lena.uid, (status, answer)
    before, files_before = whole_tree(server), stored_names(server)

    status, answer = auth_call(server, "accounts:delete", {"idToken": stale_token})
    assert_firebase_error(status, answer, "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
    assert sign_in_error(server, lena.email) == (200, None)
    assert whole_tree(server) == before
    assert stored_names(server) == files_before

    # Signed in again, the owner deletes the account, and their data goes.
    again = signed_in(server, lena)
    status, answer = auth_call(server, "accounts:delete", {"idToken": again.token})
    assert status == 200 and answer.get("kind") == "identitytoolkit#DeleteAccountResponse", (status, answer)
    wait_until_gone(server, lena.uid, CLEANUP_SECONDS)
    assert places_of(whole_tree(server), server.long_ago_post) == []
    status, code = sign_in_error(server, lena.email)
    assert status == 400 and code in ("INVALID_LOGIN_CREDENTIALS", "EMAIL_NOT_FOUND"), (status, code)
