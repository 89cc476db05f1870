"""One like per post in both reference data shapes, and notifications (issue 20).

The rules, through the REST API with real users' tokens: a like is one write to the
Quickstart's shape (``starCount`` and ``stars/{uid}`` in ``posts/`` and ``user-posts/``) and to
FriendlyPix's (``likes/{postId}/{uid}``), and every hand-written write that would let the two
disagree, or forge a notification, is refused and changes nothing.

The app, with two browsers as two people: A likes B's post, comments on it and follows B; B's
unread badge rises live; B opens the notifications and sees the three, and the badge clears; A
unlikes, and the count and both shapes go back. At desktop size in the light theme and at a
360 px phone in the dark one.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By

from browser_support import js_errors, wait_for, wait_until
from test_app_accessibility import audit, browser_at, dismiss_toasts, report
from test_app_core import emulate_dark, go, run_js, sign_up

LIVE = 20
TIMESTAMP = {".sv": "timestamp"}


# MARK: REST helpers


@dataclass
class Person:
    uid: str
    token: str
    name: str


def call(server, path: str, token: str | None, method: str = "GET", value=None):
    """(HTTP status, parsed body) of a database REST request as `token`'s user (the admin's when None)."""
    request = urllib.request.Request(
        f"{server.url}/{path}.json", method=method, data=None if value is None and method == "GET" else json.dumps(value).encode(),
        headers={"Authorization": f"Bearer {token or server.admin_token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def admin_get(server, path: str):
    status, body = call(server, path, None)
    assert status == 200, body
    return body


def person(server, name: str) -> Person:
    """A new account named `name` (its ID token carries the name), with its public profile."""
    email = f"{name.split()[0].lower()}-{uuid.uuid4().hex[:8]}@example.com"
    request = urllib.request.Request(
        f"{server.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=x", method="POST",
        data=json.dumps({"email": email, "password": "correct-horse-7", "displayName": name, "returnSecureToken": True}).encode(),
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        body = json.loads(response.read())
    someone = Person(uid=body["localId"], token=body["idToken"], name=name)
    assert call(server, f"people/{someone.uid}", someone.token, "PATCH", {"full_name": name})[0] == 200
    return someone


def publish(server, author: Person, title: str) -> str:
    post_id = f"-rules{uuid.uuid4().hex[:12]}"
    post = {"author": {"uid": author.uid, "full_name": author.name}, "title": title, "body": "Checking the rules.",
            "timestamp": TIMESTAMP, "starCount": 0}
    status, body = call(server, "", author.token, "PATCH", {
        f"posts/{post_id}": post, f"user-posts/{author.uid}/{post_id}": post,
        f"people/{author.uid}/posts/{post_id}": True, f"feed/{author.uid}/{post_id}": True})
    assert status == 200, body
    return post_id


def like_update(post_id: str, author: Person, liker: Person, count: int, liked: bool = True, notify: bool = True) -> dict:
    """The app's like (or unlike) write, as actions.js makes it."""
    star = True if liked else None
    update = {
        f"posts/{post_id}/starCount": count, f"posts/{post_id}/stars/{liker.uid}": star,
        f"user-posts/{author.uid}/{post_id}/starCount": count, f"user-posts/{author.uid}/{post_id}/stars/{liker.uid}": star,
        f"likes/{post_id}/{liker.uid}": TIMESTAMP if liked else None,
    }
    if notify:
        update[f"notifications/{author.uid}/like_{post_id}_{liker.uid}"] = (
            {"type": "like", "from": liker.uid, "name": liker.name, "post": post_id, "timestamp": TIMESTAMP, "read": False}
            if liked else None)
    return update


def shapes(server, post_id: str, author: Person) -> dict:
    """Both data shapes of a post's likes, and its author's notifications, as the admin reads them."""
    post = admin_get(server, f"posts/{post_id}") or {}
    copy = admin_get(server, f"user-posts/{author.uid}/{post_id}") or {}
    return {
        "count": post.get("starCount"), "stars": sorted(post.get("stars") or {}),
        "copyCount": copy.get("starCount"), "copyStars": sorted(copy.get("stars") or {}),
        "likes": sorted(admin_get(server, f"likes/{post_id}") or {}),
        "notifications": admin_get(server, f"notifications/{author.uid}") or {},
    }


def assert_refused(server, who: Person, update: dict, path: str = ""):
    status, body = call(server, path, who.token, "PATCH", update)
    assert status in (401, 403), (status, body, update)
    assert "error" in body


# MARK: The rules


def test_a_like_is_one_write_to_both_shapes_and_hand_written_writes_are_refused(server):
    ann, bob, carol = person(server, "Ann Rules"), person(server, "Bob Rules"), person(server, "Carol Rules")
    post = publish(server, ann, "Rules post")
    empty = shapes(server, post, ann)
    assert empty == {"count": 0, "stars": [], "copyCount": 0, "copyStars": [], "likes": [], "notifications": {}}

    full = like_update(post, ann, bob, 1)
    without = lambda *keys: {path: value for path, value in full.items() if not any(path.startswith(key) for key in keys)}
    refused = {
        "a like without the star and the count": {f"likes/{post}/{bob.uid}": TIMESTAMP},
        "a like and star without the count": {f"likes/{post}/{bob.uid}": TIMESTAMP, f"posts/{post}/stars/{bob.uid}": True},
        "the star and count without the like": without("likes/", "notifications/"),
        "a like without the copy in user-posts": without("user-posts/"),
        "the count moved by two": {**full, f"posts/{post}/starCount": 2, f"user-posts/{ann.uid}/{post}/starCount": 2},
        "a like in someone else's name": {**like_update(post, ann, carol, 1, notify=False)},
        "a notification from someone else": {**full, f"notifications/{ann.uid}/like_{post}_{bob.uid}": {
            **full[f"notifications/{ann.uid}/like_{post}_{bob.uid}"], "from": carol.uid}},
        "a notification with a forged name": {**full, f"notifications/{ann.uid}/like_{post}_{bob.uid}": {
            **full[f"notifications/{ann.uid}/like_{post}_{bob.uid}"], "name": "Ann Rules"}},
        "a notification already read": {**full, f"notifications/{ann.uid}/like_{post}_{bob.uid}": {
            **full[f"notifications/{ann.uid}/like_{post}_{bob.uid}"], "read": True}},
        "a notification under another ID": {**without("notifications/"), f"notifications/{ann.uid}/like_{post}_x": {
            **full[f"notifications/{ann.uid}/like_{post}_{bob.uid}"]}},
        "a notification about a like that does not exist": {
            f"notifications/{ann.uid}/like_{post}_{bob.uid}": full[f"notifications/{ann.uid}/like_{post}_{bob.uid}"]},
        "a follow notification without the follow": {f"notifications/{ann.uid}/follow_{bob.uid}": {
            "type": "follow", "from": bob.uid, "name": bob.name, "timestamp": TIMESTAMP, "read": False}},
        "a comment notification about a comment that does not exist": {f"notifications/{ann.uid}/comment_-nothing": {
            "type": "comment", "from": bob.uid, "name": bob.name, "post": post, "comment": "-nothing", "timestamp": TIMESTAMP, "read": False}},
    }
    for words, update in refused.items():
        status, body = call(server, "", bob.token, "PATCH", update)
        assert status in (401, 403), f"{words} was accepted"
        assert shapes(server, post, ann) == empty, f"{words} changed something"

    # Notifying oneself: Ann liking her own post may not tell her about it.
    assert_refused(server, ann, {**like_update(post, ann, ann, 1, notify=False), f"notifications/{ann.uid}/like_{post}_{ann.uid}": {
        "type": "like", "from": ann.uid, "name": ann.name, "post": post, "timestamp": TIMESTAMP, "read": False}})
    # A comment notification for Carol's comment, written by Bob, is refused too.
    comment = f"-c{uuid.uuid4().hex[:10]}"
    assert call(server, f"comments/{post}/{comment}", carol.token, "PUT",
                {"author": {"uid": carol.uid, "full_name": carol.name}, "text": "Nice", "timestamp": TIMESTAMP})[0] == 200
    assert_refused(server, bob, {f"notifications/{ann.uid}/comment_{comment}": {
        "type": "comment", "from": bob.uid, "name": bob.name, "post": post, "comment": comment, "timestamp": TIMESTAMP, "read": False}})
    assert shapes(server, post, ann) == empty

    # The app's write is accepted: both shapes agree, and Ann is told.
    status, body = call(server, "", bob.token, "PATCH", full)
    assert status == 200, body
    liked = shapes(server, post, ann)
    notice_id = f"like_{post}_{bob.uid}"
    assert {key: value for key, value in liked.items() if key != "notifications"} == {
        "count": 1, "stars": [bob.uid], "copyCount": 1, "copyStars": [bob.uid], "likes": [bob.uid]}
    notice = liked["notifications"][notice_id]
    assert notice["from"] == bob.uid and notice["name"] == bob.name and notice["read"] is False and isinstance(notice["timestamp"], int)

    # Liking twice, or unliking in one shape only, is refused.
    assert_refused(server, bob, like_update(post, ann, bob, 2, notify=False))
    assert_refused(server, bob, {f"likes/{post}/{bob.uid}": None})
    assert_refused(server, bob, {f"posts/{post}/starCount": 0, f"posts/{post}/stars/{bob.uid}": None,
                                 f"user-posts/{ann.uid}/{post}/starCount": 0, f"user-posts/{ann.uid}/{post}/stars/{bob.uid}": None})
    # Ann, the author, cannot drop Bob's star or like from her own post either.
    assert_refused(server, ann, {f"posts/{post}/stars/{bob.uid}": None})
    assert_refused(server, ann, {f"likes/{post}/{bob.uid}": None})
    assert shapes(server, post, ann) == liked

    # Only Ann reads her notifications; only she marks them read (and only read), or deletes them.
    assert call(server, f"notifications/{ann.uid}", ann.token)[0] == 200
    for other in (bob, carol):
        assert call(server, f"notifications/{ann.uid}", other.token)[0] in (401, 403)
        assert call(server, f"notifications/{ann.uid}/{notice_id}", other.token)[0] in (401, 403)
    assert_refused(server, carol, {f"{notice_id}/read": True}, f"notifications/{ann.uid}")
    assert_refused(server, carol, {notice_id: None}, f"notifications/{ann.uid}")
    assert_refused(server, bob, {f"{notice_id}/read": True}, f"notifications/{ann.uid}")
    assert_refused(server, ann, {f"{notice_id}/name": "Someone else"}, f"notifications/{ann.uid}")
    assert_refused(server, ann, {f"{notice_id}/read": "yes"}, f"notifications/{ann.uid}")
    assert shapes(server, post, ann) == liked
    assert call(server, f"notifications/{ann.uid}", ann.token, "PATCH", {f"{notice_id}/read": True})[0] == 200
    assert admin_get(server, f"notifications/{ann.uid}/{notice_id}/read") is True
    assert_refused(server, ann, {f"{notice_id}/read": False}, f"notifications/{ann.uid}")

    # Unliking takes it back from both shapes, with the notification.
    status, body = call(server, "", bob.token, "PATCH", like_update(post, ann, bob, 0, liked=False))
    assert status == 200, body
    assert shapes(server, post, ann) == empty

    # Deleting the post cleans both shapes.
    assert call(server, "", carol.token, "PATCH", like_update(post, ann, carol, 1))[0] == 200
    status, body = call(server, "", ann.token, "PATCH", {
        f"posts/{post}": None, f"user-posts/{ann.uid}/{post}": None, f"comments/{post}": None, f"likes/{post}": None,
        f"people/{ann.uid}/posts/{post}": None, f"feed/{ann.uid}/{post}": None})
    assert status == 200, body
    assert admin_get(server, f"posts/{post}") is None and admin_get(server, f"likes/{post}") is None
    assert admin_get(server, f"user-posts/{ann.uid}/{post}") is None
    # And the notification may be deleted by its recipient.
    assert call(server, f"notifications/{ann.uid}/like_{post}_{carol.uid}", ann.token, "DELETE")[0] == 200
    assert admin_get(server, f"notifications/{ann.uid}") is None


def test_likes_from_before_the_shapes_were_one_come_right_at_the_next_toggle(server):
    """Data written when a like and a star were two things (a like without its star, a star
    without its like): the app's next like or unlike makes both shapes agree."""
    ann, carol, dave = person(server, "Ann Old"), person(server, "Carol Old"), person(server, "Dave Old")
    post = publish(server, ann, "Old data")
    assert call(server, "", None, "PATCH", {
        f"likes/{post}/{carol.uid}": 1_600_000_000_000,
        f"posts/{post}/starCount": 1, f"posts/{post}/stars/{dave.uid}": True,
        f"user-posts/{ann.uid}/{post}/starCount": 1, f"user-posts/{ann.uid}/{post}/stars/{dave.uid}": True})[0] == 200
    # Carol (liked, not starred) likes: her star joins her like, and the count moves by one.
    status, body = call(server, "", carol.token, "PATCH", like_update(post, ann, carol, 2))
    assert status == 200, body
    # Dave (starred, not liked) unlikes: his star goes, and the count with it.
    status, body = call(server, "", dave.token, "PATCH", like_update(post, ann, dave, 1, liked=False))
    assert status == 200, body
    now = shapes(server, post, ann)
    assert {key: value for key, value in now.items() if key != "notifications"} == {
        "count": 1, "stars": [carol.uid], "copyCount": 1, "copyStars": [carol.uid], "likes": [carol.uid]}
    assert list(now["notifications"]) == [f"like_{post}_{carol.uid}"]


def test_top_posts_still_order_by_the_like_count(server):
    ann, bob, carol = person(server, "Ann Top"), person(server, "Bob Top"), person(server, "Carol Top")
    first, second = publish(server, ann, "Top one"), publish(server, ann, "Top two")
    for liker, count in ((bob, 1), (carol, 2)):
        assert call(server, "", liker.token, "PATCH", like_update(second, ann, liker, count))[0] == 200
    assert call(server, "", bob.token, "PATCH", like_update(first, ann, bob, 1))[0] == 200
    # The most liked first, as the Top screen asks (ordered by starCount, the last ones).
    for path in (f"user-posts/{ann.uid}", "posts"):
        request = urllib.request.Request(f"{server.url}/{path}.json?orderBy=%22starCount%22&limitToLast=1",
                                         headers={"Authorization": f"Bearer {ann.token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            top = json.loads(response.read())
        assert len(top) == 1 and next(iter(top.values()))["starCount"] >= 2
        if path != "posts":
            assert list(top) == [second]


# MARK: The app, with two people


def publish_in_page(driver, title: str) -> str:
    post_id = run_js(driver, f"""
        const {{ publishPost, authorOf }} = await import('/app/actions.js');
        const {{ ServerValue }} = await import('/lib/hearth.js');
        const id = window.hearth.db.ref('posts').push().key;
        await publishPost(window.hearth, id, {{ author: authorOf(window.hearth.auth.currentUser), title: {json.dumps(title)},
          body: 'Waiting for likes.', timestamp: ServerValue.TIMESTAMP, starCount: 0 }});
        return id;""")
    assert not str(post_id).startswith("error"), post_id
    return post_id


def sign_up_in(driver, server, name: str) -> str:
    """Signs up in the page, and waits until the account and profile are written (the app
    draws the screen again when the token's name arrives)."""
    uid = sign_up(driver, server, name)
    dismiss_toasts(driver)
    return uid


def click(driver, css: str, timeout: float = LIVE):
    """Clicks the first visible match of `css`, looking again if the view redrew it meanwhile."""
    def clicked(current):
        try:
            wait_for(current, css, timeout).click()
            return True
        except StaleElementReferenceException:
            return False
    wait_until(driver, clicked, timeout, f"could not click {css}")


def notification_items(driver) -> list[dict]:
    """The notifications listed, read in the page at once (the list may redraw between reads)."""
    return driver.execute_script("""
        return [...document.querySelectorAll('[data-testid=notification]')].map((item) => ({
          type: item.dataset.type, text: item.querySelector('.notification-words').textContent,
          name: item.querySelector('.notification-words strong').textContent,
          href: item.querySelector('a').getAttribute('href'), unread: item.classList.contains('unread') }));""")


def badge_state(driver) -> dict:
    """What the navigation says about unread notifications: the visible badge's text, and the
    accessible names that carry the count (the link, and "More" when the link is under it)."""
    return driver.execute_script("""
        const visible = [...document.querySelectorAll('#nav [data-testid=unread-badge]')]
          .filter((badge) => !badge.hidden && badge.getClientRects().length > 0);
        return {
          badge: visible.map((badge) => badge.textContent),
          link: document.querySelector('#nav a[href="#/notifications"]')?.getAttribute('aria-label') ?? null,
          more: document.querySelector('#nav [data-testid=more-button]')?.getAttribute('aria-label') ?? null,
        };""")


@pytest.mark.parametrize("phone,dark", [(False, False), (True, True)], ids=["desktop-light", "phone-360-dark"])
def test_likes_comments_and_follows_notify_live_and_the_screen_marks_them_read(server, browser_factory, screenshot, phone, dark):
    liker = browser_at(browser_factory, phone)
    author = browser_at(browser_factory, phone)
    liker_uid = sign_up_in(liker, server, "Alma Liker")
    author_uid = sign_up_in(author, server, "Benno Author")
    for driver in (liker, author):
        emulate_dark(driver, dark)
    post_id = publish_in_page(author, "Notify me")
    go(author, "#/")
    wait_for(author, "[data-testid=post-card]", LIVE)
    assert badge_state(author)["badge"] == []

    # The liker likes the post, comments on it and follows its author.
    go(liker, f"#/post/{post_id}")
    assert wait_for(liker, "[data-testid=like-button]", LIVE).get_attribute("aria-pressed") == "false"
    click(liker, "[data-testid=like-button]")
    wait_until(liker, lambda d: d.find_element(By.CSS_SELECTOR, "[data-testid=like-button]").get_attribute("aria-pressed") == "true")
    assert "1 like" in liker.find_element(By.CSS_SELECTOR, "[data-testid=like-button]").get_attribute("aria-label")
    liker.find_element(By.CSS_SELECTOR, "[data-testid=comment-input]").send_keys("What a view!")
    liker.find_element(By.CSS_SELECTOR, "[data-testid=comment-submit]").click()
    wait_until(liker, lambda d: d.execute_script("return !document.querySelector('[data-testid=comment][data-pending]')"
                                                 " && document.querySelectorAll('[data-testid=comment]').length === 1"), LIVE)
    go(liker, f"#/profile/{author_uid}")
    click(liker, "[data-testid=follow-button]")
    wait_until(liker, lambda d: "Unfollow" in d.find_element(By.CSS_SELECTOR, "[data-testid=follow-button]").text, LIVE)

    # The author's badge rises without a reload, and says what it counts.
    author.execute_script("window.__notReloaded = true")
    wait_until(author, lambda d: badge_state(d)["badge"] == ["3"], LIVE, "the badge did not rise to 3")
    state = badge_state(author)
    assert state["link"] == "Notifications, 3 unread"
    if phone:
        assert state["more"] == "More, 3 unread notifications"
    assert author.execute_script("return window.__notReloaded") is True
    screenshot(author, f"notifications-badge-{'phone-dark' if phone else 'desktop'}")

    # The author opens the screen (on a phone, through "More"): the three, newest first.
    if phone:
        click(author, "[data-testid=more-button]")
        click(author, "[data-testid=more-sheet] a[href='#/notifications']")
    else:
        click(author, "#nav a[href='#/notifications']")
    wait_until(author, lambda d: len(notification_items(d)) == 3, LIVE)
    # Each says who did what (the post's title comes once read), newest first, and links to it.
    wait_until(author, lambda d: all("“Notify me”" in item["text"] for item in notification_items(d)[1:]), LIVE)
    items = notification_items(author)
    assert [item["type"] for item in items] == ["follow", "comment", "like"]
    assert [item["text"].replace("New: ", "") for item in items] == [
        "Alma Liker started following you", "Alma Liker commented on your post “Notify me”", "Alma Liker liked your post “Notify me”"]
    assert [item["href"] for item in items] == [f"#/profile/{liker_uid}", f"#/post/{post_id}", f"#/post/{post_id}"]
    # New on this visit: marked as such (in words for screen readers too).
    assert all(item["unread"] for item in items) and all(item["text"].startswith("New: ") for item in items)
    # Seen: they are marked read, and the badge clears.
    wait_until(author, lambda d: badge_state(d)["badge"] == [], LIVE, "the badge did not clear")
    assert badge_state(author)["link"] == "Notifications"
    stored = admin_get(server, f"notifications/{author_uid}")
    assert sorted(stored) == sorted([f"like_{post_id}_{liker_uid}", f"follow_{liker_uid}", next(k for k in stored if k.startswith("comment_"))])
    assert all(notice["read"] is True for notice in stored.values())
    problems = audit(author, phone)
    assert not problems, report([f"{p['rule']}: {p['selector']}: {p['detail']}" for p in problems])
    assert author.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")
    screenshot(author, f"notifications-{'phone-dark' if phone else 'desktop'}")

    # A notification opens what it is about.
    click(author, "[data-testid=notification][data-type=like] a")
    wait_until(author, lambda d: d.execute_script("return location.hash") == f"#/post/{post_id}", 5)
    wait_until(author, lambda d: d.find_element(By.CSS_SELECTOR, "[data-testid=like-count]").text == "1", LIVE)

    # The liker unlikes: the count goes back on the author's screen, both shapes agree, and
    # the like's notification goes.
    go(liker, f"#/post/{post_id}")
    click(liker, "[data-testid=like-button][aria-pressed=true]")
    wait_until(author, lambda d: d.find_element(By.CSS_SELECTOR, "[data-testid=like-count]").text == "0", LIVE,
               "the author did not see the unlike")
    wait_until(liker, lambda d: d.execute_script("return window.hearth.db.pendingWriteCount() === 0"), LIVE)
    post = admin_get(server, f"posts/{post_id}")
    copy = admin_get(server, f"user-posts/{author_uid}/{post_id}")
    assert post["starCount"] == 0 and not post.get("stars")
    assert copy["starCount"] == 0 and not copy.get("stars")
    assert admin_get(server, f"likes/{post_id}") is None
    assert f"like_{post_id}_{liker_uid}" not in admin_get(server, f"notifications/{author_uid}")

    # With the notifications screen open, a like given, taken back and given again (the same
    # notification ID each time) is marked read each time, and the badge stays clear.
    go(author, "#/notifications")
    wait_until(author, lambda d: len(notification_items(d)) == 2, LIVE, "the follow and the comment are not listed")
    like_path = f"notifications/{author_uid}/like_{post_id}_{liker_uid}"
    for round in (1, 2):
        click(liker, "[data-testid=like-button][aria-pressed=false]")
        wait_until(author, lambda d: (admin_get(server, like_path) or {}).get("read") is True, LIVE,
                   f"like {round}, on screen, was not marked read")
        wait_until(author, lambda d: badge_state(d)["badge"] == [], LIVE, f"the badge counts like {round}, seen on screen")
        click(liker, "[data-testid=like-button][aria-pressed=true]")
        wait_until(author, lambda d: admin_get(server, like_path) is None, LIVE, f"unlike {round} left its notification")

    # The author deletes the post: its comment's notification goes with it; the follow stays.
    go(author, f"#/post/{post_id}")
    click(author, "[data-testid=delete-post]")
    click(author, "[data-testid=confirm-ok]")
    wait_until(author, lambda d: d.execute_script("return location.hash") == "#/mine", LIVE, "the post was not deleted")
    assert list(admin_get(server, f"notifications/{author_uid}")) == [f"follow_{liker_uid}"]
    assert admin_get(server, f"posts/{post_id}") is None and admin_get(server, f"comments/{post_id}") is None

    for driver in (liker, author):
        assert js_errors(driver) == []


def test_the_notifications_screen_pages_and_says_what_to_do_when_empty(server, browser_factory):
    reader = browser_factory()
    uid = sign_up_in(reader, server, "Nina Many")
    go(reader, "#/notifications")
    empty = wait_for(reader, "[data-testid=empty-state]", LIVE)
    assert "No notifications yet" in empty.text
    assert empty.find_element(By.CSS_SELECTOR, "[data-testid=empty-action]").get_attribute("href").endswith("#/compose")
    # 25 people follow her (as the admin writes them, past the rules): a page of 20, then the rest.
    updates = {}
    for index in range(25):
        follower = f"follower{index:02d}"
        updates[f"followers/{uid}/{follower}"] = True
        updates[f"people/{follower}/following/{uid}"] = True
        updates[f"notifications/{uid}/follow_{follower}"] = {
            "type": "follow", "from": follower, "name": f"Follower {index:02d}", "timestamp": 1_700_000_000_000 + index, "read": False}
    assert call(server, "", None, "PATCH", updates)[0] == 200
    wait_until(reader, lambda d: len(notification_items(d)) == 20, LIVE)
    names = [item["name"] for item in notification_items(reader)]
    assert names == [f"Follower {index:02d}" for index in range(24, 4, -1)], names
    click(reader, "[data-testid=load-older-notifications]")
    wait_until(reader, lambda d: len(notification_items(d)) == 25, LIVE)
    assert [item["name"] for item in notification_items(reader)][20:] == [f"Follower {index:02d}" for index in range(4, -1, -1)]
    assert not reader.find_element(By.CSS_SELECTOR, "[data-testid=load-older-notifications]").is_displayed()
    wait_until(reader, lambda d: all(n["read"] for n in admin_get(server, f"notifications/{uid}").values()), LIVE,
               "the notifications shown were not marked read")
    assert js_errors(reader) == []
