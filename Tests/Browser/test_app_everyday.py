"""The app as people use it every day (issue 35), at desktop (1440×900) and phone size, light and
dark: the photo viewer fits the screen; profiles agree (a new profile photo shows on what the
person wrote before it, their own screens change at once, the picture stays round beside a bio);
and a link to a profile that does not exist says so instead of offering to follow nobody.
"""

from __future__ import annotations

import base64
import json
import urllib.request
from urllib.parse import quote

import pytest
from selenium.webdriver.common.by import By

from app_actions import comment, open_post, publish
from browser_support import launch_server, stop_server, tap, wait_for, wait_until
from test_app_accessibility import dismiss_toasts
from test_app_account_deletion import admin_get
from test_app_core import go, run_js, sign_up
from test_app_moderation import word

LIVE = 20
SIZES = [(False, False), (True, True)]
SIZE_IDS = ["desktop-light", "phone-dark"]


def browser_for(browser_factory, phone: bool, dark: bool):
    driver = browser_factory(phone=phone)
    if not phone:
        driver.set_window_size(1440, 900)
    if dark:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    return driver


def audited(driver, label: str, phone: bool):
    """The accessibility checks (accessibility_audit.js and a walk with Tab) pass on the screen
    shown, in both themes."""
    from test_app_accessibility import check_screen, report

    dismiss_toasts(driver)
    problems = check_screen(driver, f"{label} ({'phone' if phone else 'desktop'})", phone, targets=phone)
    assert not problems, report(problems)


def made_photo(driver, tmp_path, width: int, height: int):
    """A JPEG of `width`×`height` drawn by the browser (a gradient), saved for the file picker."""
    data = run_js(driver, f"""
        const canvas = new OffscreenCanvas({width}, {height});
        const context = canvas.getContext('2d');
        const gradient = context.createLinearGradient(0, 0, {width}, {height});
        gradient.addColorStop(0, '#1d4ed8');
        gradient.addColorStop(1, '#f59e0b');
        context.fillStyle = gradient;
        context.fillRect(0, 0, {width}, {height});
        const blob = await canvas.convertToBlob({{ type: 'image/jpeg', quality: 0.8 }});
        const bytes = new Uint8Array(await blob.arrayBuffer());
        let text = '';
        for (const byte of bytes) text += String.fromCharCode(byte);
        return btoa(text);""")
    path = tmp_path / f"photo-{width}x{height}.jpg"
    path.write_bytes(base64.b64decode(data))
    return path


def rect(driver, css: str) -> dict:
    return driver.execute_script(
        "const r = document.querySelector(arguments[0]).getBoundingClientRect();"
        "return { left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height,"
        "         innerWidth: innerWidth, innerHeight: innerHeight };", css)


# MARK: The photo viewer


@pytest.mark.parametrize("phone,dark", SIZES, ids=SIZE_IDS)
def test_the_photo_viewer_shows_the_whole_photo(server, browser_factory, tmp_path, phone, dark):
    driver = browser_for(browser_factory, phone, dark)
    sign_up(driver, server, f"Vic {word()}")
    # 4:3 and larger than the screen both ways.
    publish(driver, "Big sky", "Wider and taller than any screen.", made_photo(driver, tmp_path, 1600, 1200))
    driver.find_element(By.CSS_SELECTOR, ".photo-button").click()
    wait_until(driver, lambda d: d.execute_script(
        "const image = document.querySelector('[data-testid=viewer-image]'); return image && image.complete && image.naturalWidth > 0"),
        LIVE, "the viewer did not show the photo")
    box = rect(driver, "[data-testid=viewer-image]")
    # Inside the screen, touching it on one side or the other, at the photo's own shape.
    assert box["left"] >= -0.5 and box["top"] >= -0.5, box
    assert box["right"] <= box["innerWidth"] + 0.5 and box["bottom"] <= box["innerHeight"] + 0.5, box
    assert abs(box["width"] - box["innerWidth"]) < 1 or abs(box["height"] - box["innerHeight"]) < 1, box
    assert abs(box["width"] / box["height"] - 4 / 3) < 0.01, box
    # At that size it can be zoomed in, and out again.
    zoom_out = driver.find_element(By.CSS_SELECTOR, "[data-testid=viewer-zoom-out]")
    assert zoom_out.get_attribute("disabled") is not None
    driver.find_element(By.CSS_SELECTOR, "[data-testid=viewer-zoom-in]").click()
    assert zoom_out.get_attribute("disabled") is None
    zoom_out.click()
    assert rect(driver, "[data-testid=viewer-image]")["height"] == pytest.approx(box["height"], abs=1)
    audited(driver, "the photo viewer", phone)


# MARK: Profiles agree


def demo_thumbnail(server) -> str:
    """A real small picture on this server (a demo post's thumbnail), to stand for a new profile photo."""
    posts = admin_get(server, "posts") or {}
    for post in posts.values():
        for photo in (post.get("photos") or []):
            if isinstance(photo, dict) and photo.get("thumb"):
                return media_url(server, photo["thumb"])
    raise AssertionError("no demo post with a photo")


def media_url(server, path: str) -> str:
    """The download address of the stored file at `path`, as the app makes it."""
    with urllib.request.urlopen(f"{server.url}/__/firebase/init.json", timeout=10) as answer:
        bucket = json.load(answer)["storageBucket"]
    return f"{server.url}/v0/b/{bucket}/o/{quote(path, safe='')}?alt=media"


def avatar_sources(driver, css: str) -> list:
    """The picture (or None for initials) of each avatar matching `css`."""
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map((avatar) => avatar.tagName === 'IMG' ? avatar.src : null)", css)


@pytest.mark.parametrize("phone,dark", SIZES, ids=SIZE_IDS)
def test_a_new_profile_photo_shows_everywhere_and_stays_round(server, browser_factory, phone, dark):
    pia, reader = browser_for(browser_factory, phone, dark), browser_for(browser_factory, phone, dark)
    pia_uid = sign_up(pia, server, f"Pia {word()}")
    post_id = publish(pia, "Before the photo", "Written with no picture.")
    comment(pia, "A comment from before too.")
    assert set(avatar_sources(pia, ".author-line .avatar")) == {None}

    # Pia's new photo (the profile editor writes these two; the picture is a real one here).
    thumbnail = demo_thumbnail(server)
    assert run_js(pia, f"""
        await window.hearth.db.ref('people/{pia_uid}').update({{ profile_picture: '{thumbnail}', profile_thumbnail: '{thumbnail}',
                                                                  bio: 'Now with a face, and a bio long enough to wrap on a phone screen.' }});
        return true;""") is True
    # Her own screen changes at once: the post and the comment she wrote before.
    wait_until(pia, lambda d: set(avatar_sources(d, "[data-avatar-uid='%s']" % pia_uid)) == {thumbnail}, LIVE,
               "Pia's own avatars did not change")
    # Someone else opening the post sees it too, on the post and on the comment.
    sign_up(reader, server, f"Rae {word()}")
    open_post(reader, post_id)
    wait_until(reader, lambda d: avatar_sources(d, "[data-avatar-uid='%s']" % pia_uid).count(thumbnail) >= 2, LIVE,
               "the older post and comment still show initials")
    # The profile: a bio beside a picture that stays round.
    go(reader, f"#/profile/{pia_uid}")
    wait_until(reader, lambda d: d.find_element(By.CSS_SELECTOR, "[data-testid=profile-bio]").is_displayed(), LIVE)
    wait_for(reader, ".profile-picture img.avatar", LIVE)
    box = rect(reader, ".profile-picture .avatar")
    assert box["width"] == pytest.approx(box["height"], abs=0.5) and box["width"] >= 72, box
    audited(reader, "a profile with a picture and a bio", phone)


# MARK: A profile that is not there


@pytest.mark.parametrize("phone,dark", SIZES, ids=SIZE_IDS)
def test_a_profile_that_does_not_exist_says_so(server, browser_factory, phone, dark):
    driver = browser_for(browser_factory, phone, dark)
    sign_up(driver, server, f"Tess {word()}")
    go(driver, "#/profile/nobody-at-all-here")
    wait_for(driver, "[data-testid=no-such-person]", LIVE)
    assert driver.find_element(By.CSS_SELECTOR, "[data-testid=profile-heading]").text == "No such person"
    for button in ("follow-button", "message-button", "block-button"):
        assert not any(element.is_displayed() for element in driver.find_elements(By.CSS_SELECTOR, f"[data-testid={button}]")), button
    audited(driver, "no such person", phone)
    driver.find_element(By.CSS_SELECTOR, "[data-testid=no-such-person] [data-testid=empty-action]").click()
    wait_until(driver, lambda d: d.execute_script("return location.hash") in ("#/", ""), LIVE)
    # A real profile still offers them.
    uid = driver.execute_script("return window.hearth.auth.currentUser.uid")
    other = admin_get(server, "people") or {}
    someone = next(key for key in other if key != uid)
    go(driver, f"#/profile/{someone}")
    wait_until(driver, lambda d: d.find_element(By.CSS_SELECTOR, "[data-testid=follow-button]").is_displayed(), LIVE)
    assert not driver.find_elements(By.CSS_SELECTOR, "[data-testid=no-such-person]")


# MARK: Direct messages are seen


def visible_badge(driver, testid: str) -> str | None:
    """The text of the visible badge `testid` in the navigation, or None."""
    return driver.execute_script("""
        const badge = [...document.querySelectorAll(`#nav [data-testid=${arguments[0]}]`)]
          .find((badge) => !badge.hidden && badge.getClientRects().length > 0);
        return badge ? badge.textContent : null;""", testid)


def send_message(driver, to_uid: str, text: str):
    go(driver, f"#/chat/with/{to_uid}")
    box = wait_for(driver, "[data-testid=chat-input]", LIVE)
    box.send_keys(text)
    driver.find_element(By.CSS_SELECTOR, "[data-testid=chat-send]").click()
    wait_until(driver, lambda d: any(text in m.text for m in d.find_elements(By.CSS_SELECTOR, "[data-testid=chat-message]")),
               LIVE, f"{text!r} was not sent")


@pytest.mark.parametrize("phone,dark", SIZES, ids=SIZE_IDS)
def test_a_new_message_shows_on_chats_in_the_title_and_in_a_toast_that_opens_it(server, browser_factory, phone, dark):
    ava, ben = browser_for(browser_factory, phone, dark), browser_for(browser_factory, phone, dark)
    ava_uid = sign_up(ava, server, f"Ava {word()}")
    ben_name = f"Ben {word()}"
    ben_uid = sign_up(ben, server, ben_name)
    go(ava, "#/")
    wait_for(ava, "[data-testid=post-card]", LIVE)
    assert visible_badge(ava, "unread-badge-chats") is None
    assert not ava.title.startswith("(")

    send_message(ben, ava_uid, "Coffee at four?")
    # On another screen, Ava sees it: the count on Chats, the title, and a toast.
    wait_until(ava, lambda d: visible_badge(d, "unread-badge-chats") == "1", LIVE, "no unread count on Chats")
    assert ava.title.startswith("(1) "), ava.title
    assert ava.find_element(By.CSS_SELECTOR, '#nav a[href="#/chats"]').get_attribute("aria-label") == "Chats, 1 unread"
    toast = wait_for(ava, "[data-testid=toast]", LIVE)
    assert f"{ben_name}: Coffee at four?" in toast.text
    send_message(ben, ava_uid, "Or five.")
    wait_until(ava, lambda d: visible_badge(d, "unread-badge-chats") == "2", LIVE)
    audited(ava, "recent posts with unread messages counted", phone)
    send_message(ben, ava_uid, "Or six.")
    wait_until(ava, lambda d: visible_badge(d, "unread-badge-chats") == "3", LIVE)
    # The toast's Open goes to the conversation, which marks it read.
    wait_for(ava, "[data-testid=message-toast-open]", LIVE).click()
    conversation = "_".join(sorted([ava_uid, ben_uid]))
    wait_until(ava, lambda d: d.execute_script("return decodeURIComponent(location.hash)") == f"#/chat/{conversation}", LIVE)
    wait_until(ava, lambda d: visible_badge(d, "unread-badge-chats") is None, LIVE, "the count stayed after reading")
    assert not ava.title.startswith("(")
    # A message in the open conversation is no news: no toast.
    dismiss_toasts(ava)
    send_message(ben, ava_uid, "See you.")
    wait_until(ava, lambda d: "See you." in d.find_element(By.CSS_SELECTOR, "[data-testid=chat-messages]").text, LIVE)
    assert not ava.find_elements(By.CSS_SELECTOR, "[data-testid=message-toast-open]")
    assert visible_badge(ava, "unread-badge-chats") is None


# MARK: Photos come back


def image_state(driver, css: str) -> list:
    """For each image matching `css`: whether it is drawn (loaded with pixels)."""
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map((image) => image.complete && image.naturalWidth > 0)", css)


def test_photos_seen_open_offline_and_broken_ones_load_when_the_server_is_back(browser_factory, tmp_path):
    from test_app_core import PHOTO
    from test_app_offline import flush_cache, reload, shell_ready

    server = launch_server(tmp_path / "data")
    port = int(server.url.rsplit(":", 1)[1])
    try:
        driver = browser_factory()
        sign_up(driver, server, f"Pam {word()}")
        # The service worker controls the page first (on a first visit it takes over a moment later).
        shell_ready(driver)
        # A demo post with a photo, read while online (so its text is in the offline cache)...
        other = next(key for key, post in (admin_get(server, "posts") or {}).items() if post.get("photos"))
        go(driver, f"#/post/{other}")
        wait_until(driver, lambda d: image_state(d, ".photos img") == [True], LIVE, "the demo photo did not show")
        other_photo = driver.execute_script("return document.querySelector('.photos img').src")
        post_id = publish(driver, "Seen once", "Its photo is kept for offline.", PHOTO)
        wait_until(driver, lambda d: image_state(d, ".photos img") == [True], LIVE, "the photo did not show")
        shell_ready(driver)
        flush_cache(driver)
        # ... whose photo was not kept (as one the browser had not shown yet).
        assert run_js(driver, f"""
            const cache = await caches.open('hearth-photos');
            const kept = (await cache.keys()).map((request) => request.url);
            if (!kept.includes({json.dumps(other_photo)})) return 'not kept: ' + kept.join(' ');
            await cache.delete({json.dumps(other_photo)});
            return true;""") is True
        unseen = other

        stop_server(server)
        # Reloaded with the server down: the photo seen before is drawn from what was kept.
        reload(driver, server.url, f"#/post/{post_id}")
        wait_until(driver, lambda d: image_state(d, ".photos img") == [True], LIVE, "the photo seen before is broken offline")
        # One never seen cannot be: broken for now.
        go(driver, f"#/post/{unseen}")
        wait_until(driver, lambda d: d.execute_script(
            "const image = document.querySelector('.photos img'); return Boolean(image && image.complete && image.naturalWidth === 0)"),
            LIVE, "the unseen photo did not fail")

        # The server is back: without a reload, the broken photo loads.
        server = launch_server(tmp_path / "data", port)
        wait_until(driver, lambda d: image_state(d, ".photos img") == [True], 40, "the broken photo stayed broken")
    finally:
        stop_server(server)


# MARK: Back keeps your place; the post page on a desktop


def scroll_y(driver) -> int:
    return driver.execute_script("return Math.round(window.scrollY)")


def card_top(driver, post_id: str) -> int | None:
    """Where the card of `post_id` is on screen (its top, from the window's), if it is drawn."""
    return driver.execute_script(
        "const card = document.querySelector(`#main [data-testid=post-card][data-post-id='${arguments[0]}']`);"
        "return card ? Math.round(card.getBoundingClientRect().top) : null", post_id)


def back_in_place(driver, post_id: str, left_top: int, message: str):
    """Waits until the card of `post_id` is where it was when the list was left (the list's
    place is its items', not a scroll position: content above may have changed height)."""
    try:
        wait_until(driver, lambda d: (top := card_top(d, post_id)) is not None and abs(top - left_top) <= 2, LIVE)
    except Exception:
        raise AssertionError(f"{message}: the card was at {left_top}, now {card_top(driver, post_id)}; "
                             f"scrolled to {scroll_y(driver)}, history entry {driver.execute_script('return history.state')}") from None


@pytest.mark.parametrize("phone,dark", SIZES, ids=SIZE_IDS)
def test_back_returns_to_the_list_where_it_was_left(server, browser_factory, phone, dark):
    driver = browser_for(browser_factory, phone, dark)
    sign_up(driver, server, f"Bo {word()}")
    go(driver, "#/")
    wait_until(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "[data-testid=post-card]")) >= 5, LIVE, "too few posts")
    # Down the list to its last card, and into that post.
    card = driver.find_elements(By.CSS_SELECTOR, "[data-testid=post-card]")[-1]
    driver.execute_script("arguments[0].scrollIntoView({ block: 'center' })", card)
    wait_until(driver, lambda d: scroll_y(d) > 200, LIVE, "the list did not scroll")
    post_id = card.get_attribute("data-post-id")
    dismiss_toasts(driver)
    left_top = card_top(driver, post_id)
    driver.execute_script("arguments[0].querySelector('a[href^=\"#/post/\"]').click()", card)
    wait_until(driver, lambda d: d.execute_script("return location.hash") == f"#/post/{post_id}", LIVE)
    wait_for(driver, "[data-testid=post-title]", LIVE)
    assert scroll_y(driver) == 0, "a new screen starts at its top"
    # "← Back" (not "All posts") goes back, to the same place.
    back = wait_for(driver, "[data-testid=back-link]", LIVE)
    assert back.text == "← Back"
    back.click()
    wait_until(driver, lambda d: d.execute_script("return location.hash") in ("#/", ""), LIVE)
    back_in_place(driver, post_id, left_top, "the list is not where it was left")
    # The browser's own Back and Forward do the same.
    driver.execute_script("history.forward()")
    wait_for(driver, "[data-testid=post-title]", LIVE)
    driver.back()
    back_in_place(driver, post_id, left_top, "Back did not keep the place")
    # Opened from elsewhere (the feed), Back goes there, not to Recent.
    go(driver, "#/top")
    wait_for(driver, "[data-testid=post-card]", LIVE)
    top_card = driver.find_elements(By.CSS_SELECTOR, "[data-testid=post-card]")[0]
    driver.execute_script("arguments[0].querySelector('a[href^=\"#/post/\"]').click()", top_card)
    wait_for(driver, "[data-testid=back-link]", LIVE).click()
    wait_until(driver, lambda d: d.execute_script("return location.hash") == "#/top", LIVE, "Back did not go to Top")
    # A post opened directly offers the recent posts.
    driver.get("about:blank")
    driver.get(f"{server.url}/#/post/{post_id}")
    wait_until(driver, lambda d: d.execute_script("return Boolean(window.hearth)"), LIVE)
    wait_until(driver, lambda d: d.find_element(By.CSS_SELECTOR, "[data-testid=back-link]").text == "← All posts", LIVE)
    audited(driver, "a post opened directly", phone)


def test_a_desktop_post_shows_its_photo_beside_the_talk_and_small_links_are_big_enough(server, browser_factory, tmp_path):
    driver = browser_for(browser_factory, False, False)
    sign_up(driver, server, f"Di {word()}")
    publish(driver, "Wide", "A photo and its talk side by side.", made_photo(driver, tmp_path, 1600, 1200))
    comment(driver, "Mine, to edit or delete.")
    photo, talk, actions = rect(driver, ".photos"), rect(driver, ".comments"), rect(driver, "[data-testid=like-button]")
    # The photo on the left, the comments and the actions to its right, and on the first screen.
    assert photo["right"] <= talk["left"] and photo["right"] <= actions["left"], (photo, talk)
    assert talk["top"] < 900 and actions["bottom"] < 900, (talk, actions)
    assert photo["bottom"] <= 900 + 1, photo
    for testid in ("edit-comment", "delete-comment"):
        box = rect(driver, f"[data-testid={testid}]")
        assert box["width"] >= 44 and box["height"] >= 44, (testid, box)
    audited(driver, "a post with a photo beside its talk", False)


# MARK: Notifications one tap away on a phone


def test_on_a_phone_the_header_bell_counts_and_opens_the_notifications(server, browser_factory):
    import time

    phone = browser_for(browser_factory, True, True)
    uid = sign_up(phone, server, f"Nia {word()}")
    bell = wait_for(phone, "[data-testid=header-notifications]", LIVE)
    box = rect(phone, "[data-testid=header-notifications]")
    assert box["width"] >= 44 and box["height"] >= 44, box
    # Someone follows her (written as the app writes it, past the rules here).
    status = json.loads(urllib.request.urlopen(urllib.request.Request(
        f"{server.url}/notifications/{uid}/follow_someone.json?auth={server.admin_token}", method="PUT",
        data=json.dumps({"type": "follow", "from": "someone", "name": "Some One", "timestamp": int(time.time() * 1000), "read": False}).encode(),
    ), timeout=10).read())
    assert status["type"] == "follow"
    wait_until(phone, lambda d: d.execute_script(
        "const badge = document.querySelector('[data-testid=header-unread-badge]'); return badge && !badge.hidden && badge.textContent"),
        LIVE, "no count on the bell") == "1"
    assert bell.get_attribute("aria-label") == "Notifications, 1 unread"
    dismiss_toasts(phone)
    bell.click()
    wait_until(phone, lambda d: d.execute_script("return location.hash") == "#/notifications", LIVE)
    wait_for(phone, "[data-testid=notification]", LIVE)
    audited(phone, "notifications opened from the bell", True)
    # On a desktop the navigation has Notifications: no bell in the header.
    desktop = browser_for(browser_factory, False, False)
    sign_up(desktop, server, f"Dex {word()}")
    assert not desktop.find_element(By.CSS_SELECTOR, "[data-testid=header-notifications]").is_displayed()


# MARK: Posting like people post


def previews(driver) -> list[str]:
    """The chosen photos' alt texts, in the order shown."""
    return driver.execute_script("return [...document.querySelectorAll('[data-testid=photo-preview] img')].map((image) => image.alt)")


def stored_size(driver, path: str) -> list[int]:
    """The pixel size of the stored image at `path`, as the browser draws it from the server."""
    return run_js(driver, f"""
        const image = new Image();
        image.src = window.hearth.storage.ref({json.dumps(path)}).mediaURL();
        await image.decode();
        return [image.naturalWidth, image.naturalHeight];""")


@pytest.mark.parametrize("phone,dark", SIZES, ids=SIZE_IDS)
def test_a_photo_is_a_post_chosen_first_reordered_and_described(server, browser_factory, tmp_path, phone, dark):
    from test_app_accessibility import check_screen, report

    driver = browser_for(browser_factory, phone, dark)
    name = f"Pia {word()}"
    uid = sign_up(driver, server, name)
    wide, tall, square = (made_photo(driver, tmp_path, *size) for size in ((800, 600), (600, 800), (700, 700)))
    go(driver, "#/compose")
    title = wait_for(driver, "[data-testid=compose-title]", LIVE)
    # The photo picker comes first.
    assert rect(driver, "[data-testid=compose-picker]")["bottom"] <= rect(driver, "[data-testid=compose-title]")["top"]
    # Nothing at all: the one thing asked is a photo or words, and nothing is written.
    tap(driver, driver.find_element(By.CSS_SELECTOR, "[data-testid=compose-submit]"))
    assert wait_for(driver, "[role=alert]", LIVE).text == "Add a photo, or say something."
    assert driver.execute_script("return location.hash") == "#/compose"
    # Three photos, then the words become optional.
    picker = driver.find_element(By.CSS_SELECTOR, "[data-testid=compose-photos]")
    picker.send_keys("\n".join(str(path) for path in (wide, tall, square)))
    wait_until(driver, lambda d: len(previews(d)) == 3, LIVE, "the three photos were not shown")
    assert previews(driver) == ["Photo 1", "Photo 2", "Photo 3"]
    assert driver.find_element(By.CSS_SELECTOR, "label[for=compose-title]").text == "Title (optional)"
    assert "3 photos chosen" in text_of_css(driver, "[data-testid=compose-picker]")
    alts = driver.find_elements(By.CSS_SELECTOR, "[data-testid=photo-alt]")
    alts[0].send_keys("A wide field at dusk")
    alts[2].send_keys("A square window")
    # The square one moves first (two steps earlier); the tall one is removed.
    tap(driver, driver.find_elements(By.CSS_SELECTOR, "[data-testid=photo-earlier]")[2])
    assert previews(driver) == ["A wide field at dusk", "A square window", "Photo 3"]
    assert driver.switch_to.active_element.get_attribute("aria-label") == "Move photo 2 earlier", "the focus did not follow the photo"
    tap(driver, driver.switch_to.active_element)
    assert previews(driver) == ["A square window", "A wide field at dusk", "Photo 3"]
    assert driver.find_elements(By.CSS_SELECTOR, "[data-testid=photo-earlier]")[0].get_attribute("disabled") is not None
    tap(driver, driver.find_elements(By.CSS_SELECTOR, "[data-testid=photo-remove]")[2])
    assert previews(driver) == ["A square window", "A wide field at dusk"]
    for testid in ("photo-earlier", "photo-later", "photo-remove"):
        box = rect(driver, f"[data-testid={testid}]")
        assert box["width"] >= 44 and box["height"] >= 44, (testid, box)
    dismiss_toasts(driver)
    problems = check_screen(driver, f"compose with photos ({'phone' if phone else 'desktop'})", phone)
    assert not problems, report(problems)

    # Posted with no title and no words.
    assert title.get_attribute("value") == ""
    tap(driver, driver.find_element(By.CSS_SELECTOR, "[data-testid=compose-submit]"))
    wait_until(driver, lambda d: d.execute_script("return location.hash").startswith("#/post/"), LIVE, "the photo was not posted")
    post_id = driver.execute_script("return decodeURIComponent(location.hash.slice('#/post/'.length))")
    wait_until(driver, lambda d: d.execute_script("return window.hearth.db.pendingWriteCount()") == 0, LIVE)
    stored = admin_get(server, f"posts/{post_id}")
    assert stored["title"] == "" and stored["body"] == ""
    assert [photo.get("alt") for photo in stored["photos"]] == ["A square window", "A wide field at dusk"]
    assert [photo["full"] for photo in stored["photos"]] == [f"{uid}/full/{post_id}/0.jpg", f"{uid}/full/{post_id}/1.jpg"]
    # In the order chosen: the first stored photo is the square one.
    assert stored_size(driver, stored["photos"][0]["full"]) == [700, 700]
    assert stored_size(driver, stored["photos"][1]["full"]) == [800, 600]
    # The post page describes each photo with its alt text, and names no "Untitled".
    wait_until(driver, lambda d: d.execute_script(
        "return [...document.querySelectorAll('.photos img')].map((image) => image.alt)") == ["A square window", "A wide field at dusk"],
        LIVE, "the photos do not carry their alt text")
    assert "Untitled" not in text_of_css(driver, "main")
    # A card names it after its author.
    go(driver, "#/")
    card = wait_until(driver, lambda d: d.find_element(By.CSS_SELECTOR, f"[data-post-id='{post_id}']"), LIVE)
    assert card.find_element(By.CSS_SELECTOR, ".card-title").text == f"Photo by {name}"
    # The rules keep words required without a photo: a client writing one anyway is refused.
    refused = run_js(driver, f"""
        const ref = window.hearth.db.ref('posts').push();
        try {{
          await ref.set({{ author: {{ uid: {json.dumps(uid)}, full_name: {json.dumps(name)} }}, title: '', body: '',
                           timestamp: {{ '.sv': 'timestamp' }}, starCount: 0 }});
          return 'written ' + ref.key;
        }} catch (error) {{ return error.code; }}""")
    assert refused == "permission-denied", refused
    assert len(admin_get(server, f"user-posts/{uid}") or {}) == 1


def text_of_css(driver, css: str) -> str:
    return driver.execute_script("return document.querySelector(arguments[0])?.innerText ?? ''", css)


# MARK: Offline as promised


def test_a_post_with_photos_made_offline_waits_and_is_sent_when_back(browser_factory, tmp_path):
    from test_app_offline import flush_cache, offline_banner_shown, reload, shell_ready

    server = launch_server(tmp_path / "data")
    port = int(server.url.rsplit(":", 1)[1])
    try:
        driver = browser_for(browser_factory, False, False)
        name = f"Ola {word()}"
        uid = sign_up(driver, server, name)
        photo = made_photo(driver, tmp_path, 640, 480)
        go(driver, "#/compose")
        wait_for(driver, "[data-testid=compose-title]", LIVE)
        shell_ready(driver)
        flush_cache(driver)
        stop_server(server)
        wait_until(driver, offline_banner_shown, LIVE, "the page did not say it is offline")

        def compose_offline(title: str):
            go(driver, "#/compose")
            wait_for(driver, "[data-testid=compose-title]", LIVE).send_keys(title)
            driver.find_element(By.CSS_SELECTOR, "[data-testid=compose-photos]").send_keys(str(photo))
            wait_for(driver, "[data-testid=photo-preview] img", LIVE)
            tap(driver, driver.find_element(By.CSS_SELECTOR, "[data-testid=compose-submit]"))
            wait_until(driver, lambda d: d.execute_script("return location.hash") in ("#/", ""), LIVE, f"{title!r} was refused offline")

        compose_offline("From the mountain")
        compose_offline("Second thoughts")
        queued = lambda d: d.execute_script("return [...document.querySelectorAll('[data-testid=queued-post] strong')].map((e) => e.textContent)")
        wait_until(driver, lambda d: queued(d) == ["From the mountain", "Second thoughts"], LIVE, "the posts are not shown as waiting")
        assert "Waiting to send" in text_of_css(driver, "[data-testid=queued-posts]")
        assert "could not be reached" not in text_of_css(driver, "main")
        # A reload with the server still down: both still wait; one is cancelled.
        reload(driver, server.url, "#/")
        wait_until(driver, lambda d: queued(d) == ["From the mountain", "Second thoughts"], LIVE, "the waiting posts were lost in a reload")
        driver.find_elements(By.CSS_SELECTOR, "[data-testid=queued-post-cancel]")[1].click()
        wait_until(driver, lambda d: queued(d) == ["From the mountain"], LIVE, "the post was not cancelled")

        # The server is back: the photo goes up, then the post; the waiting card makes way for it.
        server = launch_server(tmp_path / "data", port)
        wait_until(driver, lambda d: queued(d) == [], 40, "the waiting post was not sent")
        mine = admin_get(server, f"user-posts/{uid}") or {}
        assert [post["title"] for post in mine.values()] == ["From the mountain"]
        post_id = next(iter(mine))
        stored = admin_get(server, f"posts/{post_id}")
        assert stored["photos"][0]["thumb"] == f"{uid}/thumb/{post_id}/0.jpg"
        assert stored_size(driver, stored["photos"][0]["full"]) == [640, 480]
        card = wait_until(driver, lambda d: d.find_element(By.CSS_SELECTOR, f"[data-post-id='{post_id}']"), LIVE)
        wait_until(driver, lambda d: image_state(d, f"[data-post-id='{post_id}'] img") == [True], LIVE, "its photo does not show")
        assert card.find_element(By.CSS_SELECTOR, ".card-title").text == "From the mountain"
        # Sent once, and the cancelled one never.
        assert admin_get(server, f"feed/{uid}") == {post_id: True}
    finally:
        stop_server(server)


# MARK: Comment counts on cards


@pytest.mark.parametrize("phone,dark", SIZES, ids=SIZE_IDS)
def test_cards_count_comments_live_and_open_the_talk(server, browser_factory, phone, dark):
    from test_app_accessibility import check_screen, report

    reader = browser_for(browser_factory, phone, dark)
    sign_up(reader, server, f"Rae {word()}")
    title = f"Talk {word()}"
    post_id = publish(reader, title, "Say something below.")
    go(reader, "#/")
    card = f"[data-post-id='{post_id}']"
    count = lambda d: d.execute_script(f"return document.querySelector(\"{card} [data-testid=comment-count]\")?.textContent")
    wait_until(reader, lambda d: count(d) == "0", LIVE, "the card has no comment count")
    # Someone else comments twice: the reader's card counts them without a reload.
    writer = browser_for(browser_factory, False, False)
    sign_up(writer, server, f"Wes {word()}")
    open_post(writer, post_id)
    comment(writer, "First!")
    comment(writer, "And a second thought.")
    wait_until(reader, lambda d: count(d) == "2", LIVE, "the count did not follow the comments")
    link = reader.find_element(By.CSS_SELECTOR, f"{card} [data-testid=comments-link]")
    assert link.get_attribute("aria-label") == f"2 comments on “{title}”"
    box = rect(reader, f"{card} [data-testid=comments-link]")
    assert box["width"] >= 44 and box["height"] >= 44, box
    like = rect(reader, f"{card} [data-testid=like-button]")
    assert like["height"] >= 44, like
    dismiss_toasts(reader)
    problems = check_screen(reader, f"recent with comment counts ({'phone' if phone else 'desktop'})", phone)
    assert not problems, report(problems)
    tap(reader, link)
    wait_until(reader, lambda d: d.execute_script("return location.hash") == f"#/post/{post_id}", LIVE)
    wait_until(reader, lambda d: len(d.find_elements(By.CSS_SELECTOR, "[data-testid=comment-text]")) == 2, LIVE)


# MARK: Back brings the pages that were loaded


@pytest.mark.parametrize("phone,dark", SIZES, ids=SIZE_IDS)
def test_back_brings_back_the_pages_loaded_and_the_place(browser_factory, tmp_path, phone, dark):
    server = launch_server(tmp_path / "data")
    try:
        # 30 posts newer than the demo's (written past the rules, as an import would).
        author = {"uid": "writer", "full_name": "Wren Writer"}
        posts = {f"-Zz{index:03d}": {"author": author, "title": f"Post {index:03d}", "body": "More to read.", "timestamp": 1_700_000_000_000 + index,
                                      "starCount": 0} for index in range(30)}
        request = urllib.request.Request(f"{server.url}/posts.json?auth={server.admin_token}", method="PATCH", data=json.dumps(posts).encode())
        assert sorted(json.loads(urllib.request.urlopen(request, timeout=10).read())) == sorted(posts)
        driver = browser_for(browser_factory, phone, dark)
        sign_up(driver, server, f"Lou {word()}")
        cards = lambda d: d.execute_script("return document.querySelectorAll('[data-testid=post-card]').length")
        wait_until(driver, lambda d: cards(d) == 10, LIVE, "the first page did not show")
        for shown in (20, 30):
            tap(driver, wait_for(driver, "[data-testid=load-more]", LIVE))
            wait_until(driver, lambda d: cards(d) == shown, LIVE, f"no {shown} posts after Load older")
        # The 26th post, in the third page, opened from the middle of the screen.
        target = driver.find_elements(By.CSS_SELECTOR, "[data-testid=post-card]")[25]
        assert target.get_attribute("data-post-id") == "-Zz004"
        driver.execute_script("arguments[0].scrollIntoView({ block: 'center' })", target)
        wait_until(driver, lambda d: d.execute_script("return history.state?.scroll") == scroll_y(d), LIVE, "the place was not kept")
        left_at, left_top = scroll_y(driver), card_top(driver, "-Zz004")
        driver.execute_script("arguments[0].querySelector('a[href^=\"#/post/\"]').click()", target)
        wait_for(driver, "[data-testid=post-title]", LIVE)
        # Meanwhile a post above it gets much longer: the list is taller above the place left.
        longer = urllib.request.Request(f"{server.url}/posts/-Zz020/body.json?auth={server.admin_token}", method="PUT",
                                        data=json.dumps("Much more to read. " * 60).encode())
        urllib.request.urlopen(longer, timeout=10).read()
        driver.back()
        # The three pages are there again, and the post opened is where it was on screen (so the
        # page is scrolled further than it was).
        wait_until(driver, lambda d: cards(d) == 30, LIVE, "the pages loaded were not loaded again")
        back_in_place(driver, "-Zz004", left_top, "the list is not where it was left")
        assert scroll_y(driver) > left_at + 20, (scroll_y(driver), left_at)
        # A new visit to the list (not Back) starts with one page, at the top.
        go(driver, "#/top")
        wait_for(driver, "[data-testid=post-card]", LIVE)
        driver.find_element(By.CSS_SELECTOR, "a[href='#/']").click() if not phone else driver.execute_script("location.hash = '#/'")
        wait_until(driver, lambda d: cards(d) == 10, LIVE, "a new visit did not start with one page")
        assert scroll_y(driver) == 0
    finally:
        stop_server(server)


def messages_from_bottom(driver) -> int:
    return driver.execute_script(
        "const list = document.querySelector('[data-testid=chat-messages]');"
        "return Math.round(list.scrollHeight - list.scrollTop - list.clientHeight)")


@pytest.mark.parametrize("phone,dark", SIZES, ids=SIZE_IDS)
def test_back_to_a_conversation_brings_back_its_older_messages_and_the_place(server, browser_factory, phone, dark):
    driver = browser_for(browser_factory, phone, dark)
    me = sign_up(driver, server, f"Cy {word()}")
    other = next(uid for uid in admin_get(server, "people") if uid != me)
    conversation = "_".join(sorted([me, other]))
    # 65 messages (three pages of 30), written past the rules as an import would.
    messages = {f"-Zm{index:03d}": {"from": other if index % 2 else me, "text": f"Message {index:02d}",
                                    "timestamp": 1_700_000_000_000 + index} for index in range(65)}
    request = urllib.request.Request(f"{server.url}/messages/{conversation}.json?auth={server.admin_token}", method="PATCH",
                                     data=json.dumps(messages).encode())
    assert len(json.loads(urllib.request.urlopen(request, timeout=10).read())) == 65
    go(driver, f"#/chat/with/{other}")
    count = lambda d: d.execute_script("return document.querySelectorAll('[data-testid=chat-message]').length")
    wait_until(driver, lambda d: count(d) == 30, LIVE, "the newest page did not show")
    for shown in (60, 65):
        tap(driver, wait_for(driver, "[data-testid=load-older-messages]", LIVE))
        wait_until(driver, lambda d: count(d) == shown, LIVE, f"no {shown} messages after Load older")
    # Up to an old message, and out by the header's link to the other person's profile.
    target = "[data-testid=chat-message]:nth-child(11)"
    assert driver.find_element(By.CSS_SELECTOR, f"{target} .chat-text").text == "Message 10"
    driver.execute_script(f"document.querySelector('{target}').scrollIntoView({{ block: 'center' }})")
    wait_until(driver, lambda d: d.execute_script("return history.state?.chatFromBottom") == messages_from_bottom(d), LIVE,
               "the place in the conversation was not kept")
    left_at = messages_from_bottom(driver)
    assert left_at > 500
    driver.find_element(By.CSS_SELECTOR, "a.chat-person").click()
    wait_until(driver, lambda d: d.execute_script("return decodeURIComponent(location.hash)") == f"#/profile/{other}", LIVE)
    driver.back()
    # All 65 again, at the same place, with Message 10 in view.
    wait_until(driver, lambda d: count(d) == 65, LIVE, "the older messages were not loaded again")
    wait_until(driver, lambda d: abs(messages_from_bottom(d) - left_at) <= 2, LIVE, f"not where it was left ({left_at} from the bottom)")
    assert driver.execute_script(
        f"const box = document.querySelector('[data-testid=chat-messages]').getBoundingClientRect();"
        f"const item = document.querySelector('{target}').getBoundingClientRect();"
        "return item.top >= box.top && item.bottom <= box.bottom")
    # A new visit (not Back) starts at the newest page, at the bottom.
    go(driver, "#/chats")
    wait_for(driver, "#chats-title", LIVE)
    go(driver, f"#/chat/with/{other}")
    wait_until(driver, lambda d: count(d) == 30, LIVE, "a new visit did not start with one page")
    wait_until(driver, lambda d: messages_from_bottom(d) <= 2, LIVE, "a new visit did not start at the newest message")
