"""More of the app as people use it every day (issue 35), each at desktop (1440×900, light) and
phone size (390×844, dark), with the accessibility audit on every new state:

- who liked a post: "Liked by Eli, Dot and 3 others" under its like button, live, newest first,
  nothing without likes; it opens a dialog listing them (links to their profiles) that Escape
  closes, giving focus back;
- notifications of one kind about one post are one entry ("Fay and Eve commented on your post
  “…”"), with the newest time, unread while any member is, and every member marked read;
- Notifications opens from the device's cache after a reload with the server stopped (never
  opened before going offline), says it is offline, and is live again once the server is back;
  with nothing cached on the device it says so instead of showing placeholders forever;
- an open conversation never says the other person is "Online" while the reader is offline
  (their connection closed, or the page reloaded with the server stopped), and says the truth
  again at once when the reader reconnects.

The likes and notifications of other people are written through the REST API as the app writes
them (with their own tokens, past the rules) or, for notifications alone, as the admin.
"""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser_support import close_tab, js_errors, launch_server, stop_server, wait_for, wait_until
from test_app_accessibility import audit, dismiss_toasts, report
from test_app_core import go, run_js, sign_up
from test_app_everyday import SIZE_IDS, SIZES, browser_for
from test_app_moderation import word
from test_app_notifications import TIMESTAMP, Person, badge_state, call, like_update, notification_items, person, publish

LIVE = 20
RECONNECT = 45  # the client retries after 1 s, doubling to 30 s
# A reload with the server stopped: the app waits up to 3 s for the remembered session, then
# draws from the device's cache; well under this.
OFFLINE_PAINT = 10


def accessible(driver, phone: bool, state: str):
    dismiss_toasts(driver)
    problems = audit(driver, phone)
    assert not problems, report([f"{state}: {p['rule']}: {p['selector']}: {p['detail']}" for p in problems])


def me_as_person(driver, name: str) -> Person:
    """The person signed in in `driver`, with their ID token, for REST calls as them."""
    uid = driver.execute_script("return window.hearth.auth.currentUser.uid")
    token = run_js(driver, "return await window.hearth.auth.getIdToken()")
    assert isinstance(token, str) and not token.startswith("error"), token
    return Person(uid=uid, token=token, name=name)


def like(server, post_id: str, author: Person, liker: Person, count: int):
    status, body = call(server, "", liker.token, "PATCH", like_update(post_id, author, liker, count))
    assert status == 200, body


def notify(server, uid: str, notification_id: str, kind: str, sender: Person, post_id: str | None = None):
    """A notification for `uid` as the app writes it, put by the admin (the kinds' other writes,
    a comment or a follow, are not what is tested here)."""
    value = {"type": kind, "from": sender.uid, "name": sender.name, "timestamp": TIMESTAMP, "read": False}
    if post_id:
        value["post"] = post_id
    status, body = call(server, f"notifications/{uid}/{notification_id}", None, "PUT", value)
    assert status == 200, body


def liked_by(driver) -> str | None:
    """The like line's words when it shows, else None."""
    return driver.execute_script("""
        const line = document.querySelector('[data-testid=liked-by]');
        return line && line.checkVisibility() ? line.textContent : null;""")


def dialog_state(driver) -> dict:
    """What is on the screen when the dialog is expected (for a failure's message)."""
    return driver.execute_script("""
        const dialog = document.querySelector('[data-testid=likers-dialog]');
        return { dialog: Boolean(dialog), open: dialog?.open ?? null, likers: document.querySelectorAll('[data-testid=liker]').length,
                 line: document.querySelector('[data-testid=liked-by]')?.textContent ?? null, focus: document.activeElement?.outerHTML.slice(0, 120),
                 toasts: [...document.querySelectorAll('#toasts > *')].map((toast) => toast.textContent) };""")


def has_no_likes(driver, post_id: str) -> bool:
    """Whether the server says the post has no likes (asked after the page's own listener was
    made, on the same connection: its answer has come too)."""
    return run_js(driver, f"return (await window.hearth.db.ref('likes/{post_id}').get()).exists() === false") is True


# MARK: Who liked a post


@pytest.mark.parametrize("phone,dark", SIZES, ids=SIZE_IDS)
def test_who_liked_a_post_shows_under_its_like_button_and_opens_a_list(server, browser_factory, screenshot, phone, dark):
    family = word()
    author = person(server, f"Ann {family}")
    post_id = publish(server, author, "Liked by many")
    reader = browser_for(browser_factory, phone, dark)
    reader_uid = sign_up(reader, server, f"Rea {family}")
    go(reader, f"#/post/{post_id}")
    wait_for(reader, "[data-testid=post-title]", LIVE)
    # No likes: no line (the likes are read by then: the line's listener was first).
    assert has_no_likes(reader, post_id)
    assert liked_by(reader) is None

    # Five people like it, one after the other: the line follows live, newest first.
    likers = [person(server, f"{first} {family}") for first in ("Ada", "Ben", "Cy", "Dot", "Eli")]
    expected = [f"Liked by Ada {family}", f"Liked by Ben {family} and Ada {family}",
                f"Liked by Cy {family}, Ben {family} and Ada {family}", f"Liked by Dot {family}, Cy {family} and 2 others",
                f"Liked by Eli {family}, Dot {family} and 3 others"]
    for count, (liker, words) in enumerate(zip(likers, expected), start=1):
        like(server, post_id, author, liker, count)
        wait_until(reader, lambda d: liked_by(d) == words, LIVE, f"the line did not become {words!r} (it says {liked_by(reader)!r})")
    line = reader.find_element(By.CSS_SELECTOR, "[data-testid=liked-by]")
    box = line.rect
    assert box["height"] >= 44, box
    # Under the like button.
    assert box["y"] >= reader.find_element(By.CSS_SELECTOR, "[data-testid=like-button]").rect["y"] + 20, box
    accessible(reader, phone, "the like line")
    screenshot(reader, f"liked-by-{'phone-dark' if phone else 'desktop'}")

    # Opened: a dialog naming all five, newest first, each a link to their profile.
    dismiss_toasts(reader)
    line.click()
    dialog = wait_for(reader, "[data-testid=likers-dialog]", LIVE)
    wait_until(reader, lambda d: len(d.find_elements(By.CSS_SELECTOR, "[data-testid=liker]")) == 5, LIVE, "the dialog does not list five")
    listed = reader.execute_script("""
        return [...document.querySelectorAll('[data-testid=liker]')].map((link) => [link.querySelector('.liker-name').textContent, link.getAttribute('href')]);""")
    assert listed == [[liker.name, f"#/profile/{liker.uid}"] for liker in reversed(likers)], listed
    assert reader.execute_script("return document.querySelector('[data-testid=likers-dialog]').open") is True
    assert dialog.get_attribute("aria-labelledby") == "likers-title"
    assert reader.find_element(By.ID, "likers-title").text == "Liked by"
    close = reader.find_element(By.CSS_SELECTOR, "[data-testid=likers-close]").rect
    assert close["width"] >= 44 and close["height"] >= 44, close
    accessible(reader, phone, "the likers dialog")
    screenshot(reader, f"likers-dialog-{'phone-dark' if phone else 'desktop'}")
    # Escape closes it, and focus is back on the line.
    reader.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait_until(reader, lambda d: not d.find_elements(By.CSS_SELECTOR, "[data-testid=likers-dialog]"), LIVE, "Escape did not close the dialog")
    wait_until(reader, lambda d: d.execute_script("return document.activeElement?.dataset.testid") == "liked-by", 5,
               "focus did not return to the line")

    # The reader's own like is "you", first; taken back, the line is as before.
    reader.find_element(By.CSS_SELECTOR, "[data-testid=like-button]").click()
    wait_until(reader, lambda d: liked_by(d) == f"Liked by you, Eli {family} and 4 others", LIVE, f"not 'you': {liked_by(reader)!r}")
    wait_until(reader, lambda d: d.execute_script("return window.hearth.db.pendingWriteCount()") == 0, LIVE)
    reader.find_element(By.CSS_SELECTOR, "[data-testid=like-button][aria-pressed=true]").click()
    wait_until(reader, lambda d: liked_by(d) == expected[-1], LIVE, "taking the like back did not show")
    # (Sent: the like button's "not sent" mark is gone, and the line stays where it is.)
    wait_until(reader, lambda d: d.execute_script("return window.hearth.db.pendingWriteCount()") == 0, LIVE)
    # A liker's name opens their profile (and closes the dialog).
    dismiss_toasts(reader)
    line.click()
    wait_until(reader, lambda d: len(d.find_elements(By.CSS_SELECTOR, "[data-testid=liker]")) == 5, LIVE,
               f"the dialog did not open again: {dialog_state(reader)}")
    reader.find_elements(By.CSS_SELECTOR, "[data-testid=liker]")[0].click()
    wait_until(reader, lambda d: d.execute_script("return decodeURIComponent(location.hash)") == f"#/profile/{likers[-1].uid}", LIVE)
    assert not reader.find_elements(By.CSS_SELECTOR, "[data-testid=likers-dialog]"), "the dialog stayed over the profile"
    assert reader_uid and js_errors(reader) == []


# MARK: Grouped notifications


def group_items(driver) -> list[dict]:
    return driver.execute_script("""
        return [...document.querySelectorAll('[data-testid=notification]')].map((item) => ({
          type: item.dataset.type, count: Number(item.dataset.count), text: item.querySelector('.notification-words').textContent,
          unread: item.classList.contains('unread'), time: item.querySelector('time')?.dataset.ago ?? null }));""")


@pytest.mark.parametrize("phone,dark", SIZES, ids=SIZE_IDS)
def test_notifications_of_one_kind_on_one_post_are_one_entry(server, browser_factory, screenshot, phone, dark):
    family = word()
    driver = browser_for(browser_factory, phone, dark)
    name = f"Nora {family}"
    sign_up(driver, server, name)
    author = me_as_person(driver, name)
    post_id = publish(server, author, "Grouped")
    go(driver, "#/")
    wait_for(driver, "[data-testid=post-card]", LIVE)

    # Four like it, two comment on it, and one follows her.
    likers = [person(server, f"{first} {family}") for first in ("Ada", "Ben", "Cy", "Dot")]
    for count, liker in enumerate(likers, start=1):
        like(server, post_id, author, liker, count)
    eve, fay = person(server, f"Eve {family}"), person(server, f"Fay {family}")
    notify(server, author.uid, "comment_eve", "comment", eve, post_id)
    notify(server, author.uid, "comment_fay", "comment", fay, post_id)
    notify(server, author.uid, f"follow_{likers[0].uid}", "follow", likers[0])
    wait_until(driver, lambda d: badge_state(d)["link"] == "Notifications, 7 unread", LIVE, "the seven did not arrive")

    dismiss_toasts(driver)
    go(driver, "#/notifications")
    wait_until(driver, lambda d: len(group_items(d)) == 3 and all("“Grouped”" in item["text"] for item in group_items(d)[1:]), LIVE,
               "not three entries with the post's title")
    items = group_items(driver)
    assert [(item["type"], item["count"]) for item in items] == [("follow", 1), ("comment", 2), ("like", 4)], items
    assert [item["text"].replace("New: ", "", 1) for item in items] == [
        f"Ada {family} started following you",
        f"Fay {family} and Eve {family} commented on your post “Grouped”",
        f"Dot {family}, Cy {family} and 2 others liked your post “Grouped”",
    ]
    # Each new, with its newest member's time (newest first).
    assert all(item["unread"] and item["text"].startswith("New: ") for item in items), items
    times = [int(item["time"]) for item in items]
    assert times == sorted(times, reverse=True), times
    stored = call(server, f"notifications/{author.uid}", None)[1]
    assert int(items[2]["time"]) == max(value["timestamp"] for value in stored.values() if value["type"] == "like")
    # Seen: every member is marked read, and the badge clears.
    wait_until(driver, lambda d: all(value["read"] is True for value in call(server, f"notifications/{author.uid}", None)[1].values()), LIVE,
               "not every member was marked read")
    wait_until(driver, lambda d: badge_state(d)["badge"] == [], LIVE, "the badge did not clear")
    accessible(driver, phone, "grouped notifications")
    screenshot(driver, f"notifications-grouped-{'phone-dark' if phone else 'desktop'}")
    assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")

    # One more like while the screen is open: the same entry, one more person, new again, and
    # first now (its newest time is the newest).
    gus = person(server, f"Gus {family}")
    like(server, post_id, author, gus, 5)
    wait_until(driver, lambda d: [(item["type"], item["count"]) for item in group_items(d)] == [("like", 5), ("follow", 1), ("comment", 2)],
               LIVE, f"the like did not join its group: {group_items(driver)}")
    item = group_items(driver)[0]
    assert item["text"] == f"New: Gus {family}, Dot {family} and 3 others liked your post “Grouped”", item
    assert item["unread"] is True
    wait_until(driver, lambda d: call(server, f"notifications/{author.uid}/like_{post_id}_{gus.uid}", None)[1]["read"] is True, LIVE,
               "the new member was not marked read")
    # The entry opens the post.
    driver.find_element(By.CSS_SELECTOR, "[data-testid=notification][data-type=like] a").click()
    wait_until(driver, lambda d: d.execute_script("return decodeURIComponent(location.hash)") == f"#/post/{post_id}", LIVE)
    assert js_errors(driver) == []


# MARK: Notifications offline


def kept_screen(driver, hash_: str) -> str | None:
    """The copy of the screen at `hash_` kept for the next start (screen-cache.js), or None."""
    return driver.execute_script(
        "return JSON.parse(localStorage.getItem('hearth:screens') || 'null')?.screens?.[arguments[0]]?.main ?? null", hash_)


@pytest.mark.parametrize("phone,dark", SIZES, ids=SIZE_IDS)
def test_notifications_render_from_the_cache_after_a_reload_with_the_server_stopped(browser_factory, tmp_path, screenshot, phone, dark):
    from test_app_offline import flush_cache, reload, shell_ready

    server = launch_server(tmp_path / "data")
    port = int(server.url.rsplit(":", 1)[1])
    try:
        family = word()
        driver = browser_for(browser_factory, phone, dark)
        name = f"Olga {family}"
        sign_up(driver, server, name)
        author = me_as_person(driver, name)
        post_id = publish(server, author, "Seen offline")
        go(driver, "#/")
        wait_for(driver, "[data-testid=post-card]", LIVE)
        # Two like her post and one follows her, while she is on Recent: she never opens
        # Notifications before going offline.
        ada, ben = person(server, f"Ada {family}"), person(server, f"Ben {family}")
        like(server, post_id, author, ada, 1)
        like(server, post_id, author, ben, 2)
        notify(server, author.uid, f"follow_{ada.uid}", "follow", ada)
        wait_until(driver, lambda d: badge_state(d)["link"] == "Notifications, 3 unread", LIVE, "the notifications did not arrive")
        # Ada has the app open (her status, as her app writes it): her conversation says so.
        status, body = call(server, f"status/{ada.uid}", None, "PUT", {"state": "online", "lastChanged": TIMESTAMP})
        assert status == 200, body
        go(driver, f"#/chat/with/{ada.uid}")
        wait_until(driver, lambda d: presence_text(d) == "Online", LIVE, "Ada is not shown online")
        # The post's title, for the entry (the cache holds what was read).
        go(driver, f"#/post/{post_id}")
        wait_for(driver, "[data-testid=post-title]", LIVE)
        go(driver, "#/")
        wait_for(driver, "[data-testid=post-card]", LIVE)
        shell_ready(driver)
        flush_cache(driver)

        stop_server(server)
        reload(driver, server.url, "#/notifications")
        wait_until(driver, lambda d: len(group_items(d)) == 2, OFFLINE_PAINT, "the saved notifications did not show")
        assert [item["text"].replace("New: ", "", 1) for item in group_items(driver)] == [
            f"Ada {family} started following you", f"Ben {family} and Ada {family} liked your post “Seen offline”"]
        note = wait_for(driver, "[data-testid=notifications-offline]", OFFLINE_PAINT)
        assert note.text.startswith("Offline — showing what was saved"), note.text
        assert note.get_attribute("role") == "status"
        assert not driver.find_elements(By.CSS_SELECTOR, "#main .skeleton"), "placeholders are still shown"
        accessible(driver, phone, "notifications offline")
        screenshot(driver, f"notifications-offline-{'phone-dark' if phone else 'desktop'}")
        # The screen's copy kept for the next start has the notifications, not the note (only
        # true now).
        go(driver, "#/")
        wait_until(driver, lambda d: "notification-list" in (kept_screen(d, "#/notifications") or ""), LIVE, "the screen was not kept")
        assert "notifications-offline" not in kept_screen(driver, "#/notifications")
        go(driver, "#/notifications")
        wait_until(driver, lambda d: len(group_items(d)) == 2 and d.find_element(By.CSS_SELECTOR, "[data-testid=notifications-offline]").is_displayed(),
                   LIVE, "back on the screen offline, it is not as before")

        # Her conversation with Ada, opened offline: the cached "Online" is never said.
        driver.execute_script(RECORD_PRESENCE)
        go(driver, f"#/chat/with/{ada.uid}")
        wait_until(driver, lambda d: presence_text(d) == "You are offline", LIVE, f"it says {presence_text(driver)!r}")
        assert "Online" not in driver.execute_script("return window.__presenceSaid"), driver.execute_script("return window.__presenceSaid")
        accessible(driver, phone, "a conversation offline")

        # The server is back: the conversation says what it knows again, the note goes, and the
        # screen is live again.
        server = launch_server(tmp_path / "data", port)
        wait_until(driver, lambda d: presence_text(d) == "Online", RECONNECT, f"not online again: {presence_text(driver)!r}")
        go(driver, "#/notifications")
        wait_until(driver, lambda d: not d.find_element(By.CSS_SELECTOR, "[data-testid=notifications-offline]").is_displayed(), RECONNECT,
                   "the offline note stayed")
        cy = person(server, f"Cy {family}")
        notify(server, author.uid, f"follow_{cy.uid}", "follow", cy)
        wait_until(driver, lambda d: len(group_items(d)) == 3, LIVE, "a new notification did not come once back online")
        assert group_items(driver)[0]["text"].endswith(f"Cy {family} started following you")
    finally:
        stop_server(server)


@pytest.mark.parametrize("phone,dark", SIZES, ids=SIZE_IDS)
def test_notifications_offline_with_nothing_saved_say_so_instead_of_placeholders(browser_factory, tmp_path, phone, dark):
    from test_app_offline import reload, shell_ready

    server = launch_server(tmp_path / "data")
    port = int(server.url.rsplit(":", 1)[1])
    try:
        driver = browser_for(browser_factory, phone, dark)
        name = f"Pia {word()}"
        sign_up(driver, server, name)
        author = me_as_person(driver, name)
        ada = person(server, f"Ada {word()}")
        notify(server, author.uid, f"follow_{ada.uid}", "follow", ada)
        wait_until(driver, lambda d: badge_state(d)["link"] == "Notifications, 1 unread", LIVE, "the notification did not arrive")
        shell_ready(driver)
        stop_server(server)
        # This device's data cache is gone (as on a first start here); the app's files are kept.
        driver.get("about:blank")
        driver.execute_cdp_cmd("Storage.clearDataForOrigin", {"origin": server.url, "storageTypes": "indexeddb"})

        reload(driver, server.url, "#/notifications")
        note = wait_for(driver, "[data-testid=notifications-offline]", OFFLINE_PAINT)
        assert note.text.startswith("Offline — no notifications were saved on this device"), note.text
        wait_until(driver, lambda d: not d.find_elements(By.CSS_SELECTOR, "#main .skeleton"), OFFLINE_PAINT, "placeholders are still shown")
        assert driver.find_element(By.CSS_SELECTOR, "[data-testid=notification-list]").get_attribute("aria-busy") is None
        accessible(driver, phone, "notifications offline with nothing saved")

        # Back: the note goes and the notification comes.
        server = launch_server(tmp_path / "data", port)
        wait_until(driver, lambda d: len(group_items(d)) == 1, RECONNECT, "the notification did not come once back online")
        assert not driver.find_element(By.CSS_SELECTOR, "[data-testid=notifications-offline]").is_displayed()
        assert group_items(driver)[0]["text"].endswith(f"{ada.name} started following you")
    finally:
        stop_server(server)


# MARK: Presence while offline


def presence_text(driver) -> str:
    return driver.execute_script("return document.querySelector('[data-testid=chat-presence]')?.textContent ?? null")


# Records every text the chat's presence line shows from now on (in window.__presenceSaid).
RECORD_PRESENCE = """
    window.__presenceSaid = [];
    const note = () => {
      const text = document.querySelector('[data-testid=chat-presence]')?.textContent;
      if (text !== undefined && window.__presenceSaid[window.__presenceSaid.length - 1] !== text) window.__presenceSaid.push(text);
    };
    new MutationObserver(note).observe(document.body, { subtree: true, childList: true, characterData: true });
"""


def connected(driver):
    return driver.execute_script("return [window.hearth.isOnline, window.hearth.db._engine.core?.isOffline]")


@pytest.mark.parametrize("phone,dark", SIZES, ids=SIZE_IDS)
def test_a_conversation_does_not_say_online_while_the_reader_is_offline(server, browser_factory, phone, dark):
    family = word()
    viewer, friend = browser_for(browser_factory, phone, dark), browser_for(browser_factory, phone, dark)
    sign_up(viewer, server, f"Vic {family}")
    friend_uid = sign_up(friend, server, f"Fen {family}")
    go(viewer, f"#/chat/with/{friend_uid}")
    wait_until(viewer, lambda d: presence_text(d) == "Online", LIVE, "the friend is not shown online")

    # The viewer's connection goes: no claim that the friend is online.
    viewer.execute_script("window.hearth.db.goOffline()")
    wait_until(viewer, lambda d: presence_text(d) == "You are offline", 5, f"it says {presence_text(viewer)!r}")
    assert "online" not in viewer.find_element(By.CSS_SELECTOR, "[data-testid=chat-presence]").get_attribute("class").split()
    accessible(viewer, phone, "presence while offline")
    # Back: online again, at once.
    viewer.execute_script("window.hearth.db.goOnline()")
    wait_until(viewer, lambda d: presence_text(d) == "Online", LIVE, f"not online again: {presence_text(viewer)!r}")

    # Offline again, and meanwhile the friend leaves: the cached "Online" is never shown; on
    # reconnecting the viewer sees the truth.
    viewer.execute_script("window.hearth.db.goOffline()")
    wait_until(viewer, lambda d: presence_text(d) == "You are offline", 5)
    # (Its tab closed: the connection just ends, and the server's onDisconnect says offline.)
    close_tab(friend)
    viewer.execute_script("window.hearth.db.goOnline()")
    wait_until(viewer, lambda d: (presence_text(d) or "").startswith("Last seen"), LIVE, f"the friend's leaving is not shown: {presence_text(viewer)!r}, connected: {connected(viewer)}")
    assert js_errors(viewer) == []
