"""Profile photo and bio editing (a square crop and a thumbnail made in the browser, uploaded to
the owner's folder), #hashtags, @mentions and web addresses as links with their pages, the
text-to-links function itself, the lazily updated home feed, and the rules behind them (refused
hand-written writes change nothing)."""

from __future__ import annotations

import json
import secrets
import string
import urllib.error
import urllib.parse
import urllib.request

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser_support import js_errors, wait_for, wait_until
from test_app_core import PHOTO, emulate_dark, fits_width, go, open_app, run_js, sign_up
from test_app_notifications import Person, admin_get, call, person, publish

LIVE = 20


def word() -> str:
    return "".join(secrets.choice(string.ascii_lowercase) for _ in range(8))


def texts(driver, css: str) -> list[str]:
    return driver.execute_script("return [...document.querySelectorAll(arguments[0])].map((e) => e.textContent)", css)


def compose(driver, title: str, body: str) -> str:
    go(driver, "#/compose")
    wait_for(driver, "[data-testid=compose-title]").send_keys(title)
    driver.find_element(By.CSS_SELECTOR, "[data-testid=compose-body]").send_keys(body)
    press(driver, "[data-testid=compose-submit]")
    wait_until(driver, lambda d: d.execute_script("return location.hash").startswith("#/post/"), LIVE, "the post was not published")
    return driver.execute_script("return decodeURIComponent(location.hash.slice('#/post/'.length))")


def press(driver, css: str):
    """Clicks the element, scrolled to the middle of the screen (clear of a phone's tab bar).
    An element the page redraws between finding and clicking is found again."""
    def clicked(current):
        element = wait_for(current, css, LIVE)
        current.execute_script("arguments[0].scrollIntoView({ block: 'center' })", element)
        element.click()
        return True

    wait_until(driver, clicked, LIVE, f"could not press {css}")


def link_facts(driver, css: str) -> dict | None:
    """The text and address of the first link matching `css`, read in one step (live lists redraw)."""
    return driver.execute_script(
        "const link = document.querySelector(arguments[0]);"
        "return link && { text: link.textContent, href: link.href };", css)


def image_facts(driver, url: str) -> dict:
    """The image at `url` as the browser gets it: its bytes, type and pixel size (or its status)."""
    return run_js(driver, f"""
        const response = await fetch({json.dumps(url)}, {{ cache: 'no-store' }});
        if (!response.ok) return {{ status: response.status }};
        const blob = await response.blob();
        const bitmap = await createImageBitmap(blob);
        return {{ status: response.status, bytes: blob.size, type: blob.type, width: bitmap.width, height: bitmap.height }};""")


def bucket_of(server) -> str:
    return json.loads(urllib.request.urlopen(f"{server.url}/__/firebase/init.json", timeout=10).read())["storageBucket"]


def storage_get_status(server, path: str) -> int:
    """The status of reading a file's content as the admin (404: it is not there)."""
    request = urllib.request.Request(f"{server.url}/v0/b/{bucket_of(server)}/o/{urllib.parse.quote(path, safe='')}?alt=media",
                                     headers={"Authorization": f"Bearer {server.admin_token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def storage_put(server, token: str, path: str, data: bytes, content_type: str = "image/jpeg"):
    bucket = bucket_of(server)
    request = urllib.request.Request(
        f"{server.url}/v0/b/{bucket}/o?uploadType=media&name={urllib.parse.quote(path, safe='')}", method="POST", data=data,
        headers={"Authorization": f"Bearer {token}", "Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


# MARK: Text to links, the pure function


def test_text_becomes_tags_mentions_and_links_as_pieces(server, browser):
    open_app(browser, server, "#/")
    pieces = run_js(browser, """
        const { segments, mentionsIn } = await import('/app/rich-text.js');
        const { hashtags } = await import('/app/actions.js');
        const cases = [
          'Sunset at the #Harbour, see https://example.com/a_(b)?x=1#frag. #café #a#b ##c',
          '<img src=x onerror="window.__owned = 1"> @Ann Lee and @Ann Leeway and @Ann',
          'xhttps://not.a.link http://ok.test, (https://paren.test) javascript:alert(1) #' + 'x'.repeat(51),
        ];
        return {
          pieces: cases.map((text) => segments(text, { ann: 'Ann Lee', al: 'Ann' })),
          tags: cases.map((text) => hashtags(text)),
          kept: mentionsIn('Hi @Ann Lee!', { ann: 'Ann Lee', bob: 'Bob Martin' }),
        };""")
    first, second, third = pieces["pieces"]
    assert first == [
        {"type": "text", "text": "Sunset at the "},
        {"type": "tag", "text": "#Harbour", "tag": "harbour"},
        {"type": "text", "text": ", see "},
        {"type": "link", "text": "https://example.com/a_(b)?x=1#frag", "url": "https://example.com/a_(b)?x=1#frag"},
        {"type": "text", "text": ". #café #a"},
        {"type": "tag", "text": "#b", "tag": "b"},
        {"type": "text", "text": " #"},
        {"type": "tag", "text": "#c", "tag": "c"},
    ]
    # Only tags hashtags() indexes are links (it also indexes the address's fragment, which
    # stays part of the link).
    linked = {piece["tag"] for piece in first if piece["type"] == "tag"}
    assert linked <= set(pieces["tags"][0]) and "cafe" not in linked
    assert second == [
        {"type": "text", "text": '<img src=x onerror="window.__owned = 1"> '},
        {"type": "mention", "text": "@Ann Lee", "uid": "ann"},
        # Not "Ann Lee" inside "Ann Leeway": the shorter recorded name "Ann" there.
        {"type": "text", "text": " and "},
        {"type": "mention", "text": "@Ann", "uid": "al"},
        {"type": "text", "text": " Leeway and "},
        {"type": "mention", "text": "@Ann", "uid": "al"},
    ]
    assert [piece for piece in third if piece["type"] == "link"] == [
        {"type": "link", "text": "http://ok.test", "url": "http://ok.test"},
        {"type": "link", "text": "https://paren.test", "url": "https://paren.test"},
    ]
    assert not [piece for piece in third if piece["type"] == "tag"], "a 51-letter tag is not indexed, so not a link"
    assert pieces["kept"] == {"ann": "Ann Lee"}


# MARK: Hashtags, addresses, and text that stays text


def test_hashtags_link_to_their_page_and_addresses_are_safe_links(server, browser_factory, screenshot):
    driver = browser_factory()
    tag = f"t{word()}"
    sign_up(driver, server, "Tess Tagger")
    first = compose(driver, f"First #{tag}", "Morning light.")
    compose(driver, "Untagged", "Nothing to find here.")
    second = compose(driver, "Second", f"Evening light #{tag.upper()} — more at https://example.com/light. "
                                        '<img src=x onerror="window.__owned = 1"><b>bold</b>')

    # The post page: the tag and the address are links; the markup is text.
    # Read in one step: the post's page redraws its body when the server confirms the post.
    body = wait_until(driver, lambda d: d.execute_script("""
        const body = document.querySelector('[data-testid=post-body]');
        const link = body?.querySelector('[data-testid=text-link]');
        return link && { href: link.getAttribute('href'), rel: link.rel, target: link.target,
                         markup: body.querySelectorAll('img, b').length, text: body.textContent };"""), LIVE)
    assert body["href"] == "https://example.com/light"
    assert body["rel"] == "noopener noreferrer nofollow ugc" and body["target"] == "_blank"
    assert body["markup"] == 0
    assert '<img src=x onerror="window.__owned = 1"><b>bold</b>' in body["text"]
    assert driver.execute_script("return window.__owned") is None

    # The tag page lists exactly the tagged posts, newest first.
    press(driver, "[data-testid=post-body] [data-testid=tag-link]")
    wait_until(driver, lambda d: d.execute_script("return location.hash") == f"#/tag/{tag}", LIVE)
    wait_until(driver, lambda d: texts(d, "[data-testid=tag-title]") == [f"#{tag}"], LIVE)
    wait_until(driver, lambda d: d.execute_script(
        "return [...document.querySelectorAll('[data-testid=tag-list] [data-testid=post-card]')].map((c) => c.dataset.postId)")
        == [second, first], LIVE, "the tag page does not list exactly the tagged posts")
    assert fits_width(driver)
    screenshot(driver, "tag-page")

    # A tag nobody used: an empty state with a next step.
    go(driver, f"#/tag/{tag}none")
    wait_for(driver, "[data-testid=empty-state]", LIVE)
    assert wait_for(driver, "[data-testid=empty-action]").get_attribute("href").endswith("#/compose")
    assert js_errors(driver) == []


# MARK: Mentions


def test_mention_suggestions_insert_a_name_that_links_to_the_profile(server, browser_factory, screenshot):
    name = f"Mira {word().capitalize()}"
    mira = person(server, name)
    # The search index, as the app writes it.
    assert call(server, f"people/{mira.uid}/_search_index", mira.token, "PATCH",
                {"full_name": name.lower(), "reversed_full_name": " ".join(reversed(name.lower().split()))})[0] == 200
    driver = browser_factory()
    writer = sign_up(driver, server, "Walt Writer")
    go(driver, "#/compose")
    wait_for(driver, "[data-testid=compose-title]").send_keys("Thanks")
    field = driver.find_element(By.CSS_SELECTOR, "[data-testid=compose-body]")
    field.send_keys("Thank you @" + name.split()[1][:4].lower())
    option = wait_for(driver, "[data-testid=mention-option]", LIVE)
    assert option.text == name
    assert field.get_attribute("aria-expanded") == "true" and field.get_attribute("aria-activedescendant")
    field.send_keys(Keys.ENTER)
    wait_until(driver, lambda d: field.get_attribute("value") == f"Thank you @{name} ", LIVE, "the name was not inserted")
    assert field.get_attribute("aria-expanded") == "false"
    field.send_keys("for the photos.")
    press(driver, "[data-testid=compose-submit]")
    wait_until(driver, lambda d: d.execute_script("return location.hash").startswith("#/post/"), LIVE)
    post_id = driver.execute_script("return decodeURIComponent(location.hash.slice('#/post/'.length))")
    wait_until(driver, lambda d: admin_get(server, f"posts/{post_id}/mentions") == {mira.uid: name}, LIVE)
    assert admin_get(server, f"user-posts/{writer}/{post_id}/mentions") == {mira.uid: name}

    # The comment box suggests people too; the comment records whom it names.
    comment = wait_for(driver, "[data-testid=comment-input]", LIVE)
    comment.send_keys("Also @" + name.split()[0][:3].lower())
    option = wait_for(driver, "[data-testid=mention-option]", LIVE)
    assert option.text == name
    option.click()
    wait_until(driver, lambda d: comment.get_attribute("value") == f"Also @{name} ", LIVE)
    comment.send_keys("again.")
    press(driver, "[data-testid=comment-submit]")
    linked = wait_until(driver, lambda d: link_facts(d, "[data-testid=comment-text] [data-testid=mention-link]"), LIVE)
    assert linked["text"] == f"@{name}" and linked["href"].endswith(f"#/profile/{mira.uid}")
    comments = wait_until(driver, lambda d: admin_get(server, f"comments/{post_id}"), LIVE)
    assert [value.get("mentions") for value in comments.values()] == [{mira.uid: name}]
    comment_path = f"comments/{post_id}/{next(iter(comments))}"

    # Editing keeps the name while it is in the text, and drops it once it is not.
    press(driver, "[data-testid=edit-comment]")
    editor = wait_for(driver, "[data-testid=edit-comment-input]", LIVE)
    editor.send_keys(Keys.END, " Truly.")
    press(driver, "[data-testid=save-comment]")
    wait_until(driver, lambda d: (admin_get(server, comment_path) or {}).get("text") == f"Also @{name} again. Truly.", LIVE)
    assert admin_get(server, f"{comment_path}/mentions") == {mira.uid: name}
    press(driver, "[data-testid=edit-comment]")
    editor = wait_for(driver, "[data-testid=edit-comment-input]", LIVE)
    editor.clear()
    editor.send_keys("Thanks, all.")
    press(driver, "[data-testid=save-comment]")
    wait_until(driver, lambda d: (admin_get(server, comment_path) or {}).get("text") == "Thanks, all.", LIVE)
    assert admin_get(server, f"{comment_path}/mentions") is None
    wait_until(driver, lambda d: d.execute_script(
        "return document.querySelector('[data-testid=comment-text]')?.textContent") == "Thanks, all.", LIVE)
    assert link_facts(driver, "[data-testid=comment-text] [data-testid=mention-link]") is None

    mention = wait_until(driver, lambda d: link_facts(d, "[data-testid=post-body] [data-testid=mention-link]"), LIVE)
    assert mention["text"] == f"@{name}"
    press(driver, "[data-testid=post-body] [data-testid=mention-link]")
    wait_until(driver, lambda d: d.execute_script("return location.hash") == f"#/profile/{mira.uid}", LIVE)
    wait_until(driver, lambda d: texts(d, "[data-testid=profile-heading]") == [name], LIVE)
    assert js_errors(driver) == []


# MARK: Profile photo and bio


@pytest.mark.parametrize("phone,dark", [(False, False), (True, True)], ids=["desktop-light", "phone-dark"])
def test_profile_photo_and_bio_are_edited_on_the_profile(server, browser_factory, screenshot, tmp_path, phone, dark):
    driver = browser_factory(phone=phone)
    emulate_dark(driver, dark)
    uid = sign_up(driver, server, "Pia Portrait")
    go(driver, f"#/profile/{uid}")
    edit = wait_for(driver, "[data-testid=edit-profile]", LIVE)
    edit.click()
    assert edit.get_attribute("aria-expanded") == "true"
    wait_for(driver, "[data-testid=profile-editor]")
    assert driver.switch_to.active_element.get_attribute("data-testid") == "edit-name"

    # Refused: a file that is not an image, and a bio too long. Nothing changes.
    not_image = tmp_path / "notes.txt"
    not_image.write_text("not a picture")
    driver.find_element(By.CSS_SELECTOR, "[data-testid=edit-photo]").send_keys(str(not_image))
    error = wait_for(driver, "[data-testid=profile-editor] [data-testid=error]")
    assert "not an image" in error.text
    assert driver.find_element(By.CSS_SELECTOR, "[data-testid=crop-holder]").get_attribute("hidden") is not None
    driver.execute_script("document.querySelector('[data-testid=edit-bio]').value = 'b'.repeat(301)")
    press(driver, "[data-testid=edit-save]")
    wait_until(driver, lambda d: "The bio is longer than 300 characters." in d.find_element(
        By.CSS_SELECTOR, "[data-testid=profile-editor] [data-testid=error]").text, LIVE)
    assert admin_get(server, f"people/{uid}/bio") is None

    # A photo, cropped: moved with the keyboard and zoomed with the slider; the preview follows.
    bio = driver.find_element(By.CSS_SELECTOR, "[data-testid=edit-bio]")
    bio.clear()
    bio.send_keys("I take pictures of harbours. #harbour")
    driver.find_element(By.CSS_SELECTOR, "[data-testid=edit-photo]").send_keys(str(PHOTO))
    area = wait_for(driver, "[data-testid=crop-area]", LIVE)
    start = area.get_attribute("data-view")
    driver.execute_script("const zoom = document.querySelector('[data-testid=crop-zoom]'); zoom.value = '2';"
                          "zoom.dispatchEvent(new Event('input', { bubbles: true }))")
    zoomed = area.get_attribute("data-view")
    assert int(zoomed.split(",")[2]) < int(start.split(",")[2]), "zooming did not make the window smaller"
    area.send_keys(Keys.ARROW_RIGHT, Keys.ARROW_DOWN)
    assert area.get_attribute("data-view") != zoomed, "the arrow keys did not move the picture"
    assert fits_width(driver)
    screenshot(driver, f"profile-editing-{'phone-dark' if phone else 'desktop-light'}")
    press(driver, "[data-testid=edit-save]")

    # Saved: the bio (its tag a link) and the picture on the profile, the thumbnail in the header.
    wait_until(driver, lambda d: texts(d, "[data-testid=profile-bio]") == ["I take pictures of harbours. #harbour"], LIVE)
    assert link_facts(driver, "[data-testid=profile-bio] [data-testid=tag-link]")["href"].endswith("#/tag/harbour")
    profile = admin_get(server, f"people/{uid}")
    picture_url = profile["profile_picture"]
    thumb_url = wait_until(driver, lambda d: d.execute_script("return window.hearth.auth.currentUser.photoURL"), LIVE)
    assert f"{uid}%2Favatar%2F" in picture_url and f"{uid}%2Favatar%2F" in thumb_url
    wait_until(driver, lambda d: d.find_element(By.CSS_SELECTOR, "[data-testid=account-link] img.avatar").get_attribute("src") == thumb_url,
               LIVE, "the header does not show the new photo")
    picture, thumb = image_facts(driver, picture_url), image_facts(driver, thumb_url)
    assert (picture["width"], picture["height"], picture["type"]) == (512, 512, "image/jpeg")
    assert (thumb["width"], thumb["height"], thumb["type"]) == (128, 128, "image/jpeg")
    assert thumb["bytes"] < 20_000 < picture["bytes"] or thumb["bytes"] < 20_000, thumb
    screenshot(driver, f"profile-edited-{'phone-dark' if phone else 'desktop-light'}")

    # Posts written afterwards carry the photo.
    post_id = compose(driver, "With a face", "Now with a photo.")
    assert admin_get(server, f"posts/{post_id}/author/profile_picture") == thumb_url
    wait_until(driver, lambda d: d.execute_script(
        "return document.querySelector('.author-line img.avatar')?.src") == thumb_url, LIVE, "the post shows no photo")

    # A second photo replaces the first: the old picture is deleted, and the old thumbnail kept
    # (the post keeps its address, which other clients show); this app shows the new one on it.
    go(driver, f"#/profile/{uid}")
    press(driver, "[data-testid=edit-profile]")
    driver.find_element(By.CSS_SELECTOR, "[data-testid=edit-photo]").send_keys(str(PHOTO))
    wait_for(driver, "[data-testid=crop-area]", LIVE)
    press(driver, "[data-testid=edit-save]")
    wait_until(driver, lambda d: d.execute_script("return window.hearth.auth.currentUser.photoURL") not in (None, thumb_url), LIVE)
    wait_until(driver, lambda d: image_facts(d, picture_url).get("status") == 404, LIVE, "the previous picture was not deleted")
    assert image_facts(driver, thumb_url).get("status") == 200
    new_thumb = driver.execute_script("return window.hearth.auth.currentUser.photoURL")
    assert admin_get(server, f"people/{uid}/profile_thumbnail") == new_thumb
    go(driver, f"#/post/{post_id}")
    wait_until(driver, lambda d: d.execute_script(
        "const image = document.querySelector('.author-line img.avatar');"
        "return image && image.complete && image.naturalWidth > 0 && image.src") == new_thumb, LIVE,
        "the post does not show the current photo")
    # (The only errors: this test's own reads of the deleted picture.)
    deleted = picture_url.split("?")[0]
    assert [error for error in js_errors(driver) if not (deleted in error and "404" in error)] == []
    # The post goes, so other tests' lists do not load its pictures.
    assert run_js(driver, f"""
        const {{ deletePost }} = await import('/app/actions.js');
        const post = (await window.hearth.db.ref('posts/{post_id}').get()).val();
        await deletePost(window.hearth, '{post_id}', post);
        return true;""") is True


# MARK: The rules


def test_the_rules_refuse_bad_bios_made_up_mentions_and_photos_in_someone_elses_folder(server):
    ann, bob = person(server, "Ann Profile"), person(server, "Bob Profile")
    assert call(server, f"people/{ann.uid}/bio", ann.token, "PUT", "Short and sweet.")[0] == 200
    for bad in ("b" * 301, 42, {"text": "nested"}):
        status, _ = call(server, f"people/{ann.uid}/bio", ann.token, "PUT", bad)
        assert status in (401, 403), bad
    assert call(server, f"people/{ann.uid}/bio", bob.token, "PUT", "Bob wrote this.")[0] in (401, 403)
    assert admin_get(server, f"people/{ann.uid}/bio") == "Short and sweet."

    post_id = publish(server, ann, "Mentions")
    for mentions in ({"no-such-person": "Ghost"}, {bob.uid: ""}, {bob.uid: "x" * 101}, {bob.uid: 7}):
        status, _ = call(server, f"posts/{post_id}/mentions", ann.token, "PUT", mentions)
        assert status in (401, 403), mentions
    assert admin_get(server, f"posts/{post_id}/mentions") is None
    # A new post may name someone who exists, with the same names in its user-posts copy.
    named = f"-named{word()}"
    post = {"author": {"uid": ann.uid, "full_name": ann.name}, "title": "Hi", "body": f"Hi @{bob.name}",
            "timestamp": {".sv": "timestamp"}, "starCount": 0, "mentions": {bob.uid: bob.name}}
    forged_copy = {**post, "mentions": {bob.uid: "Someone Else"}}
    status, _ = call(server, "", ann.token, "PATCH", {f"posts/{named}": post, f"user-posts/{ann.uid}/{named}": forged_copy})
    assert status in (401, 403)
    assert admin_get(server, f"posts/{named}") is None
    status, body = call(server, "", ann.token, "PATCH", {f"posts/{named}": post, f"user-posts/{ann.uid}/{named}": post})
    assert status == 200, body
    assert admin_get(server, f"user-posts/{ann.uid}/{named}/mentions") == {bob.uid: bob.name}
    # A comment's mentions too.
    comment = {"author": {"uid": bob.uid, "full_name": bob.name}, "text": "Hi", "timestamp": {".sv": "timestamp"}}
    status, _ = call(server, f"comments/{named}/c1", bob.token, "PUT", {**comment, "mentions": {"no-such-person": "Ghost"}})
    assert status in (401, 403)
    assert admin_get(server, f"comments/{named}") is None
    status, body = call(server, f"comments/{named}/c1", bob.token, "PUT", {**comment, "mentions": {ann.uid: ann.name}})
    assert status == 200, body

    # Photos: only in one's own avatar folder, images only, under 1 MB.
    jpeg = PHOTO.read_bytes()[:200_000]
    assert storage_put(server, bob.token, f"{ann.uid}/avatar/forged.jpg", jpeg) == 403
    assert storage_put(server, ann.token, f"{ann.uid}/avatar/notes.jpg", b"text", "text/plain") == 403
    assert storage_put(server, ann.token, f"{ann.uid}/avatar/huge.jpg", b"\xff" * (1024 * 1024 + 1)) == 403
    for refused in ("forged", "notes", "huge"):
        assert storage_get_status(server, f"{ann.uid}/avatar/{refused}.jpg") == 404, refused
    assert storage_put(server, ann.token, f"{ann.uid}/avatar/mine.jpg", jpeg) == 200
    assert storage_get_status(server, f"{ann.uid}/avatar/mine.jpg") == 200


# MARK: The home feed, lazily


COUNT_FEED_WRITES = """
if (!window.__feedWrites) {
  window.__feedWrites = [];
  const prototype = Object.getPrototypeOf(window.hearth.db.ref('x'));
  for (const name of ['set', 'update', 'remove']) {
    const original = prototype[name];
    prototype[name] = function (...args) {
      const path = this.toString();
      const keys = name === 'update' && args[0] ? Object.keys(args[0]) : [''];
      for (const key of keys) if (`${path}/${key}`.includes('/feed/')) window.__feedWrites.push(`${name} ${path} ${key}`);
      return original.apply(this, args);
    };
  }
}
return true;
"""


def feed_visit(driver) -> str:
    """Opens the feed (from another screen) and waits for its catch-up; answers what it wrote."""
    go(driver, "#/search")
    wait_for(driver, "#main [data-view=search]", LIVE)
    go(driver, "#/feed")
    return wait_until(driver, lambda d: d.execute_script(
        "return document.querySelector('#main [data-view=feed] [data-testid=feed-list]')?.dataset.caughtUp"), LIVE,
        "the feed's catch-up did not finish")


def test_the_feed_catches_up_lazily(server, browser_factory):
    author = person(server, "Fern Follow")
    reader = browser_factory()
    sign_up(reader, server, "Rex Reader")
    reader_uid = reader.execute_script("return window.hearth.auth.currentUser.uid")
    first = publish(server, author, "Before the follow")
    # Follow (both sides), as the profile's button does, without the feed entries: the first
    # visit's full catch-up adds them.
    assert call(server, "", None, "PATCH", {f"followers/{author.uid}/{reader_uid}": True,
                                           f"people/{reader_uid}/following/{author.uid}": True})[0] == 200
    reader.execute_script(COUNT_FEED_WRITES)
    assert feed_visit(reader) == "1"
    wait_until(reader, lambda d: first in d.execute_script(
        "return [...document.querySelectorAll('[data-testid=feed-list] [data-testid=post-card]')].map((c) => c.dataset.postId)"), LIVE)
    written = reader.execute_script("return window.__feedWrites.length")
    assert written == 1

    # Nothing new: the next visits write nothing.
    for _ in range(2):
        assert feed_visit(reader) == "0"
    assert reader.execute_script("return window.__feedWrites.length") == written, reader.execute_script("return window.__feedWrites")

    # A followed person's new post (written while the feed is not open) is picked up, and shown
    # in the list: it was there before this visit, so it is not held behind "1 new post".
    newer = publish(server, author, "After the follow")
    assert feed_visit(reader) in ("1", "0")  # the live watcher may have added it first
    wait_until(reader, lambda d: admin_get(server, f"feed/{reader_uid}/{newer}") is True, LIVE)
    wait_until(reader, lambda d: sorted(d.execute_script(
        "return [...document.querySelectorAll('[data-testid=feed-list] [data-testid=post-card]')].map((c) => c.dataset.postId)"))
        == sorted([newer, first]), LIVE, "the post written while away is not in the list")
    assert reader.find_elements(By.CSS_SELECTOR, "[data-testid=new-posts-banner]:not([hidden])") == []
    assert reader.execute_script("return window.__feedWrites.length") == written + 1
    assert js_errors(reader) == []
