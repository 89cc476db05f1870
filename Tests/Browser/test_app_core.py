"""The social web app's core, with two browsers as two users: signing up, posting with a
photo, the other user seeing it arrive live, likes and comments updating live on both sides,
a denied action shown in words, and the app on a phone-sized screen (light and dark)."""

from __future__ import annotations

import json
import urllib.request
import uuid

from selenium.webdriver.common.by import By

from browser_support import REPO, js_errors, launch_server, shown_texts, stop_server, tap, text_of, wait_for, wait_until

PHOTO = REPO / "Sources" / "HearthSocial" / "Resources" / "demo" / "beach.jpg"


def open_app(driver, server, route: str = "#/"):
    driver.get(f"{server.url}/{route}")
    wait_until(driver, lambda d: d.execute_script("return Boolean(window.hearth)"), message="the app did not start")


def go(driver, route: str):
    driver.execute_script("location.hash = arguments[0]", route)


def sign_up(driver, server, name: str) -> str:
    email = f"{name.split()[0].lower()}-{uuid.uuid4().hex[:8]}@example.com"
    open_app(driver, server, "#/signup")
    wait_for(driver, "[data-testid=signup-name]").send_keys(name)
    driver.find_element(By.CSS_SELECTOR, "[data-testid=signup-email]").send_keys(email)
    driver.find_element(By.CSS_SELECTOR, "[data-testid=signup-password]").send_keys("correct-horse-7")
    driver.find_element(By.CSS_SELECTOR, "[data-testid=signup-submit]").click()
    wait_for(driver, "[data-testid=account-link]")
    # The app goes to the recent posts once the public profile is written too.
    wait_until(driver, lambda d: d.current_url.endswith("/#/"), message="sign-up did not finish")
    uid = driver.execute_script("return window.hearth.auth.currentUser.uid")
    wait_until(driver, lambda d: run_js(d, f"return (await window.hearth.db.ref('people/{uid}/full_name').get()).val()") == name,
               message="the profile was not written")
    return uid


def run_js(driver, body: str):
    """Runs an async function body in the page; returns its value, or "error: <message>"."""
    return driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        f"(async () => {{ {body} }})().then(done, (error) => done('error: ' + (error.message || error)));")


def count_of(driver, testid: str) -> str:
    return text_of(driver, f"[data-testid={testid}]").strip()


def emulate_dark(driver, dark: bool):
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
        "features": [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}],
    })


def fits_width(driver) -> bool:
    return driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")


def test_two_users_post_like_and_comment_live(server, browser_factory, screenshot):
    alice = browser_factory()
    bruno = browser_factory()

    # Signing up (and a screenshot of the form first).
    open_app(alice, server, "#/signup")
    wait_for(alice, "[data-testid=signup-name]")
    screenshot(alice, "signup")
    sign_up(alice, server, "Alice Example")
    bruno_uid = sign_up(bruno, server, "Bruno Example")

    # Bruno reads the recent posts (the demo's).
    go(bruno, "#/")
    wait_for(bruno, "[data-testid=post-card]")
    wait_until(bruno, lambda d: d.execute_script(
        "return [...document.querySelectorAll('.card-media img')].some((img) => img.complete && img.naturalWidth > 0)"),
        message="no thumbnail loaded")
    screenshot(bruno, "recent-posts")

    # Alice writes a post with a photo.
    go(alice, "#/compose")
    wait_for(alice, "[data-testid=compose-title]").send_keys("Harbour at dusk")
    alice.find_element(By.CSS_SELECTOR, "[data-testid=compose-body]").send_keys("Boats coming home. #harbour #browsertest")
    alice.find_element(By.CSS_SELECTOR, "[data-testid=compose-photos]").send_keys(str(PHOTO))
    wait_for(alice, "[data-testid=photo-preview] img")
    screenshot(alice, "compose")
    tap(alice, alice.find_element(By.CSS_SELECTOR, "[data-testid=compose-submit]"))
    wait_until(alice, lambda d: d.current_url.split("#")[-1].startswith("/post/"), 20, "the post page did not open")
    post_id = alice.current_url.split("/post/")[-1]
    assert wait_for(alice, "[data-testid=post-title]").text == "Harbour at dusk"
    wait_until(alice, lambda d: d.execute_script(
        "const img = document.querySelector('[data-testid=post-photo]'); return img && img.complete && img.naturalWidth > 0"),
        message="the uploaded photo does not show")
    # The post was written as ComposeViewModel writes it: indexed for its author and tags.
    uid = alice.execute_script("return window.hearth.auth.currentUser.uid")
    stored = run_js(alice, f"""
        const db = window.hearth.db;
        const [post, copy, index, feed, tag] = await Promise.all([
          db.ref('posts/{post_id}').get(), db.ref('user-posts/{uid}/{post_id}').get(),
          db.ref('people/{uid}/posts/{post_id}').get(), db.ref('feed/{uid}/{post_id}').get(),
          db.ref('hashtags/browsertest/{post_id}').get()]);
        return {{ post: post.val(), copy: copy.exists(), index: index.val(), feed: feed.val(), tag: tag.val() }};""")
    assert stored["post"]["photos"] == [{"full": f"{uid}/full/{post_id}/0.jpg", "thumb": f"{uid}/thumb/{post_id}/0.jpg"}]
    assert stored["post"]["starCount"] == 0 and isinstance(stored["post"]["timestamp"], int)
    assert stored["copy"] and stored["index"] is True and stored["feed"] is True and stored["tag"] is True

    # Bruno, still on the list, is told about it without the list jumping.
    banner = wait_for(bruno, "[data-testid=new-posts-banner]", 15)
    assert "1 new post" in banner.text
    assert not bruno.find_elements(By.CSS_SELECTOR, f"[data-post-id='{post_id}']")
    screenshot(bruno, "new-posts-banner")
    banner.click()
    first = wait_for(bruno, "[data-testid=post-card]")
    assert first.get_attribute("data-post-id") == post_id

    # Bruno opens it and likes it (one heart); Alice sees the count move.
    first.find_element(By.CSS_SELECTOR, ".card-title").click()
    wait_for(bruno, "[data-testid=post-title]")
    assert count_of(alice, "like-count") == "0"
    assert len(alice.find_elements(By.CSS_SELECTOR, "[data-testid=like-button]")) == 1
    bruno.find_element(By.CSS_SELECTOR, "[data-testid=like-button]").click()
    wait_until(alice, lambda d: count_of(d, "like-count") == "1", message="Alice did not see Bruno's like")
    wait_until(bruno, lambda d: d.find_element(By.CSS_SELECTOR, "[data-testid=like-button]").get_attribute("aria-pressed") == "true")

    # Alice likes too; both see 2.
    alice.find_element(By.CSS_SELECTOR, "[data-testid=like-button]").click()
    wait_until(bruno, lambda d: count_of(d, "like-count") == "2", message="Bruno did not see Alice's like")

    # Bruno comments; Alice sees it arrive and the count change.
    bruno.find_element(By.CSS_SELECTOR, "[data-testid=comment-input]").send_keys("Lovely light!")
    bruno.find_element(By.CSS_SELECTOR, "[data-testid=comment-submit]").click()
    wait_until(alice, lambda d: count_of(d, "comment-count") == "1", message="Alice did not see the comment")
    assert text_of(alice, "[data-testid=comment-text]") == "Lovely light!"
    assert "Bruno Example" in text_of(alice, "[data-testid=comment]")
    # Screen readers hear the new comment; the author's own page stays quiet.
    announced = lambda d: d.find_element(By.CSS_SELECTOR, "[data-testid=comment-announcer]").get_attribute("textContent")
    assert announced(alice) == "New comment from Bruno Example: Lovely light!"
    assert announced(bruno) == ""
    # Only its author may edit a comment.
    assert not alice.find_elements(By.CSS_SELECTOR, "[data-testid=edit-comment]")

    # Bruno edits his comment; Alice sees the new text.
    wait_for(bruno, "[data-testid=edit-comment]").click()
    field = wait_for(bruno, "[data-testid=edit-comment-input]")
    field.clear()
    field.send_keys("Lovely light, and the boats!")
    bruno.find_element(By.CSS_SELECTOR, "[data-testid=save-comment]").click()
    wait_until(alice, lambda d: text_of(d, "[data-testid=comment-text]") == "Lovely light, and the boats!")

    # Both likes are in both data shapes: the stars and counts, and likes/.
    shapes = run_js(alice, f"""
        const db = window.hearth.db;
        const [post, copy, likes] = await Promise.all([
          db.ref('posts/{post_id}').get(), db.ref('user-posts/{uid}/{post_id}').get(), db.ref('likes/{post_id}').get()]);
        return {{ count: post.val().starCount, stars: Object.keys(post.val().stars).sort(), copyCount: copy.val().starCount,
                  copyStars: Object.keys(copy.val().stars).sort(), likes: Object.keys(likes.val()).sort() }};""")
    both = sorted([uid, bruno_uid])
    assert shapes == {"count": 2, "stars": both, "copyCount": 2, "copyStars": both, "likes": both}
    screenshot(alice, "post-detail")

    # Bruno saves it, reports it and shares its link.
    bruno.find_element(By.CSS_SELECTOR, "[data-testid=save-button]").click()
    wait_until(bruno, lambda d: d.find_element(By.CSS_SELECTOR, "[data-testid=save-button]").get_attribute("aria-pressed") == "true")
    bruno.find_element(By.CSS_SELECTOR, "[data-testid=report-button]").click()
    wait_for(bruno, "[data-testid=confirm-ok]").click()
    wait_until(bruno, lambda d: "reported" in d.find_element(By.ID, "toasts").text)
    marks = run_js(bruno, f"""
        const db = window.hearth.db;
        const [saved, flag] = await Promise.all([db.ref('saved/{bruno_uid}/{post_id}').get(), db.ref('postFlags/{post_id}/{bruno_uid}').get()]);
        return [typeof saved.val(), flag.val()];""")
    assert marks == ["number", True]
    bruno.find_element(By.CSS_SELECTOR, "[data-testid=share-button]").click()
    # Copied, or (without clipboard access) shown to copy by hand.
    wait_until(bruno, lambda d: "Link copied." in d.find_element(By.ID, "toasts").text or (
        d.find_elements(By.CSS_SELECTOR, "[data-testid=share-link]")
        and d.find_element(By.CSS_SELECTOR, "[data-testid=share-link]").get_attribute("value").endswith(f"/#/post/{post_id}")))

    # A denied action, shown in words: Alice blocks Bruno (both sides, as the rules require),
    # and Bruno's next comment is refused.
    assert run_js(alice, f"""
        await window.hearth.db.ref().update({{ 'blocking/{uid}/{bruno_uid}': true, 'blocked/{bruno_uid}/{uid}': true }});
        return 'ok';""") == "ok"
    bruno.find_element(By.CSS_SELECTOR, "[data-testid=comment-input]").send_keys("Can I still comment?")
    bruno.find_element(By.CSS_SELECTOR, "[data-testid=comment-submit]").click()
    error = wait_for(bruno, "[data-testid=error]")
    assert error.text == "You are not allowed to do that."
    screenshot(bruno, "denied-comment")
    assert count_of(alice, "comment-count") == "1"

    # The client refuses in words too: Bruno may not delete Alice's post.
    assert run_js(bruno, f"await window.hearth.db.ref('posts/{post_id}').remove(); return 'deleted';") == \
        "error: You are not allowed to do that."

    # Alice deletes her post; Bruno's page says so.
    alice.find_element(By.CSS_SELECTOR, "[data-testid=delete-post]").click()
    wait_for(alice, "[data-testid=confirm-ok]").click()
    wait_until(alice, lambda d: d.current_url.endswith("#/mine"), message="Alice was not taken to her posts")
    wait_for(bruno, "[data-testid=post-missing]")
    assert run_js(bruno, f"return (await window.hearth.db.ref('user-posts/{uid}/{post_id}').get()).exists();") is False
    status = run_js(bruno, f"return (await fetch(window.hearth.storage.ref('{uid}/full/{post_id}/0.jpg').mediaURL())).status;")
    assert status == 404, "the post's photo was not deleted"

    for driver in (alice, bruno):
        errors = [message for message in js_errors(driver) if "Failed to load resource" not in message]
        assert not errors, errors


def test_phone_signed_out_light_and_dark(server, browser_factory, screenshot):
    phone = browser_factory(phone=True)
    open_app(phone, server, "#/")
    wait_for(phone, "[data-testid=post-card]")
    assert fits_width(phone), "the list is wider than the phone"
    screenshot(phone, "phone-recent")

    # Signed out, the reader can still open a post; acting needs an account.
    phone.find_element(By.CSS_SELECTOR, "[data-testid=post-card] .card-title").click()
    wait_for(phone, "[data-testid=post-title]")
    assert "Sign in" in text_of(phone, ".comments")
    assert fits_width(phone), "the post is wider than the phone"
    screenshot(phone, "phone-post")
    emulate_dark(phone, True)
    screenshot(phone, "phone-post-dark")
    post_url = phone.current_url
    like_count = "[data-testid=like-count]"
    before = int(text_of(phone, like_count))
    tap(phone, phone.find_element(By.CSS_SELECTOR, "[data-testid=like-button]"))
    wait_until(phone, lambda d: "#/signin?next=" in d.current_url, message="liking signed out did not lead to sign-in")

    # Browsing without an account: an anonymous user, back on the post, who can like.
    wait_for(phone, "[data-testid=browse-anonymously]").click()
    wait_until(phone, lambda d: d.current_url == post_url, message="not taken back to the post")
    wait_for(phone, "[data-testid=account-link]")
    wait_for(phone, "[data-testid=like-button]").click()
    wait_until(phone, lambda d: text_of(d, like_count) == str(before + 1))
    # And unlikes, leaving the demo's counts as they were.
    phone.find_element(By.CSS_SELECTOR, "[data-testid=like-button]").click()
    wait_until(phone, lambda d: text_of(d, like_count) == str(before))

    # Top posts, most liked first.
    go(phone, "#/top")
    wait_for(phone, "[data-testid=post-card]")
    counts = [int(text) for text in shown_texts(phone, "[data-testid=like-count]")]
    assert counts == sorted(counts, reverse=True) and counts[0] >= 2
    screenshot(phone, "phone-top-dark")
    emulate_dark(phone, False)


def test_sign_in_my_posts_sign_out_and_rename(server, browser, screenshot):
    carol = server.account("Carol")
    open_app(browser, server, "#/signin")
    wait_for(browser, "[data-testid=signin-email]").send_keys(carol["email"])
    browser.find_element(By.CSS_SELECTOR, "[data-testid=signin-password]").send_keys("wrong password")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=signin-submit]").click()
    assert wait_for(browser, "[data-testid=error]").text == "Wrong email address or password."
    password = browser.find_element(By.CSS_SELECTOR, "[data-testid=signin-password]")
    password.clear()
    password.send_keys(carol["password"])
    browser.find_element(By.CSS_SELECTOR, "[data-testid=signin-submit]").click()
    wait_for(browser, "[data-testid=account-link]")

    # My posts: Carol's, newest first.
    go(browser, "#/mine")
    expected = ["Weekend plans?", "First swim of the year"]
    wait_until(browser, lambda d: shown_texts(d, ".card-title") == expected, 10,
               f"My posts never listed {expected}")

    browser.find_element(By.CSS_SELECTOR, "[data-testid=account-link]").click()
    wait_for(browser, "[data-testid=sign-out]").click()
    wait_for(browser, "[data-testid=signin-link]")
    assert browser.execute_script("return window.hearth.auth.currentUser") is None

    # A new display name reaches the account, the token and the public profile. (A new user's:
    # the demo people stay as other tests expect them.)
    uid = sign_up(browser, server, "Dana Example")
    go(browser, "#/account")
    name = wait_for(browser, "[data-testid=profile-name]")
    name.clear()
    name.send_keys("Dana Renamed")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=profile-save]").click()
    wait_until(browser, lambda d: run_js(d, f"return (await window.hearth.db.ref('people/{uid}').get()).val()").get("full_name") == "Dana Renamed")
    profile = run_js(browser, f"return (await window.hearth.db.ref('people/{uid}/_search_index').get()).val()")
    assert profile == {"full_name": "dana renamed", "reversed_full_name": "renamed dana"}
    assert browser.execute_script("return window.hearth.auth.currentUser.displayName") == "Dana Renamed"
    screenshot(browser, "account")


def admin_put(server, path: str, value):
    """Writes as the admin (past the rules), as another client of the server would."""
    request = urllib.request.Request(
        f"{server.url}/{path}.json", data=json.dumps(value).encode(), method="PUT",
        headers={"Authorization": f"Bearer {server.admin_token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        assert response.status == 200


def test_token_refresh_and_reconnection(browser_factory, screenshot, tmp_path):
    # A server of its own, to stop and start again.
    server = launch_server(tmp_path)
    port = int(server.url.rsplit(":", 1)[1])
    try:
        reader = browser_factory()
        sign_up(reader, server, "Rita Example")
        go(reader, "#/")
        post_id = wait_for(reader, "[data-testid=post-card]").get_attribute("data-post-id")
        go(reader, f"#/post/{post_id}")
        wait_for(reader, "[data-testid=like-count]")
        before = int(count_of(reader, "like-count"))

        # A refreshed ID token: the streams reopen with it and stay live.
        refreshed = run_js(reader, """
            const auth = window.hearth.auth;
            const before = await auth.getIdToken();
            // A new issue time (whole seconds): a new token. Wait until the clock passes the token's second.
            const issued = JSON.parse(atob(before.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))).iat;
            while (Date.now() < (issued + 1) * 1000) await new Promise((resolve) => setTimeout(resolve, 10));
            return (await auth.getIdToken(true)) !== before && (await auth.getIdToken()) !== before;""")
        assert refreshed is True
        admin_put(server, f"posts/{post_id}/starCount", before + 1)
        wait_until(reader, lambda d: count_of(d, "like-count") == str(before + 1), message="no update after the token refresh")

        # The server goes away: the page says so.
        stop_server(server)
        wait_for(reader, "[data-testid=offline]", 20)
        screenshot(reader, "offline")

        # It comes back (and changes meanwhile): the page reconnects and catches up.
        server = launch_server(tmp_path, port)
        admin_put(server, f"posts/{post_id}/starCount", before + 2)
        wait_until(reader, lambda d: not d.find_element(By.CSS_SELECTOR, "[data-testid=offline]").is_displayed(), 40,
                   "the page did not reconnect")
        wait_until(reader, lambda d: count_of(d, "like-count") == str(before + 2), 20, "the page did not catch up")
    finally:
        stop_server(server)


def test_client_module(server, browser):
    """The shared client module (/lib/hearth.js) in the page: Firebase's ordering, limited
    queries whose window moves, child events with their previous keys, transactions, push IDs
    and a refused listen."""
    open_app(browser, server, "#/top")
    result = run_js(browser, f"""
        const {{ Hearth, ServerValue }} = await import('/lib/hearth.js');
        const admin = new Hearth({{ url: location.origin, bucket: window.hearth.bucket, projectId: 'hearth',
          adminToken: '{server.admin_token}', storageKey: 'test-admin' }});
        // Under user-posts/<uid>, where the rules index starCount (the admin writes past the rules).
        const ref = admin.db.ref('user-posts').push();
        const n = 'starCount';
        await ref.set({{ a: {{ [n]: 3 }}, b: {{ [n]: 1 }}, c: {{ [n]: 2 }}, d: {{ [n]: 'x' }}, e: {{ m: 1 }}, 10: {{ [n]: 2 }}, 9: {{ [n]: 2 }} }});
        const order = [];
        (await ref.orderByChild(n).get()).forEach((child) => {{ order.push(child.key); }});
        const keyOrder = [];
        (await ref.orderByKey().get()).forEach((child) => {{ keyOrder.push(child.key); }});

        // A limited query: its window moves as values change.
        const events = [];
        const query = ref.orderByChild(n).limitToLast(2);
        const record = (type) => (snapshot, previous) => events.push([type, snapshot.key, previous ?? null]);
        for (const type of ['child_added', 'child_removed', 'child_changed', 'child_moved']) query.on(type, record(type));
        const values = [];
        await new Promise((resolve, reject) => query.on('value', (snapshot) => {{ values.push(Object.keys(snapshot.val()).sort()); resolve(); }}, reject));
        const settled = async (count) => {{ while (values.length < count) await new Promise((r) => setTimeout(r, 20)); }};
        events.push('--');
        await ref.child('e').update({{ [n]: 100 }});
        await settled(2);
        events.push('--');
        await ref.child(`d/${{n}}`).set(-1);
        await settled(4);
        query.off();

        // Transactions: concurrent increments all count.
        const counter = ref.child('counter');
        const results = await Promise.all([1, 2, 3, 4, 5].map(() => counter.transaction((value) => (value ?? 0) + 1)));
        const aborted = await counter.transaction(() => undefined);
        const count = (await counter.get()).val();

        // Push IDs sort in creation order.
        const ids = Array.from({{ length: 50 }}, () => ref.push().key);
        const stamp = ref.child('stamp');
        await stamp.set(ServerValue.TIMESTAMP);
        const stamped = (await stamp.get()).val();

        // A listen the rules refuse ends with a permission-denied error in words.
        const visitor = new Hearth({{ url: location.origin, bucket: 'b', projectId: 'hearth', storageKey: 'test-visitor' }});
        const refused = await new Promise((resolve) => visitor.db.ref('feed/someone').on('value', () => resolve('allowed'), resolve));
        await ref.remove();
        return {{
          order, keyOrder, events, values,
          counter: count, committed: results.every((result) => result.committed), aborted: aborted.committed,
          idsSorted: ids.every((id, index) => index === 0 || ids[index - 1] < id) && ids.every((id) => id.length === 20),
          stampIsTime: Math.abs(stamped - Date.now()) < 60000,
          refused: [refused.code, refused.message],
        }};""")
    # Null first, numbers, then strings; ties by key, integer keys numerically first.
    assert result["order"] == ["e", "b", "9", "10", "c", "a", "d"], result["order"]
    assert result["keyOrder"] == ["9", "10", "a", "b", "c", "d", "e"]
    # As Firebase's SDK (checked against 9.8.1): a change to a child outside the window waits for
    # the server's new window; a change inside it shows at once (d keeps its place while only two
    # children are known), then the server's window replaces it.
    assert result["values"] == [["a", "d"], ["d", "e"], ["d", "e"], ["a", "e"]]
    assert result["events"] == [
        ["child_added", "a", None], ["child_added", "d", "a"], "--",
        ["child_removed", "a", None], ["child_added", "e", None], "--",
        ["child_moved", "d", None], ["child_changed", "d", None],
        ["child_removed", "d", None], ["child_added", "a", None],
    ], result["events"]
    assert result["counter"] == 5 and result["committed"] and result["aborted"] is False
    assert result["idsSorted"] and result["stampIsTime"]
    assert result["refused"] == ["permission-denied", "You are not allowed to do that."]


def test_my_posts_pages_and_live_removal(server, browser):
    sign_up(browser, server, "Paula Example")
    ids = run_js(browser, """
        const { publishPost, authorOf } = await import('/app/actions.js');
        const { ServerValue } = await import('/lib/hearth.js');
        const author = authorOf(window.hearth.auth.currentUser);
        const ids = [];
        for (let index = 0; index < 12; index += 1) {
          const id = window.hearth.db.ref('posts').push().key;
          await publishPost(window.hearth, id, { author, title: `Page test ${index}`, body: 'Paging.', timestamp: ServerValue.TIMESTAMP, starCount: 0 });
          ids.push(id);
        }
        return ids;""")
    try:
        go(browser, "#/mine")
        wait_until(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "[data-testid=post-card]")) == 10)
        shown = [card.get_attribute("data-post-id") for card in browser.find_elements(By.CSS_SELECTOR, "[data-testid=post-card]")]
        assert shown == ids[::-1][:10], "not newest first"
        wait_for(browser, "[data-testid=load-more]").click()
        wait_until(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "[data-testid=post-card]")) == 12)
        assert not browser.find_element(By.CSS_SELECTOR, "[data-testid=load-more]").is_displayed()

        # A post deleted elsewhere leaves the list at once (no banner).
        assert run_js(browser, f"""
            const {{ deletePost }} = await import('/app/actions.js');
            const post = (await window.hearth.db.ref('posts/{ids[5]}').get()).val();
            await deletePost(window.hearth, '{ids[5]}', post);
            return 'ok';""") == "ok"
        wait_until(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, f"[data-post-id='{ids[5]}']"))
        assert len(browser.find_elements(By.CSS_SELECTOR, "[data-testid=post-card]")) == 11
        assert not browser.find_element(By.CSS_SELECTOR, "[data-testid=new-posts-banner]").is_displayed()
    finally:
        run_js(browser, f"""
            const {{ deletePost }} = await import('/app/actions.js');
            for (const id of {json.dumps(ids)}) {{
              const post = (await window.hearth.db.ref(`posts/${{id}}`).get()).val();
              if (post) await deletePost(window.hearth, id, post);
            }}
            return 'ok';""")


def test_a_post_that_cannot_be_read_says_why(server, browser):
    # "." cannot be in a key: the server refuses the read, and the page says so instead of loading forever.
    open_app(browser, server, "#/post/not.a.key")
    assert "refused" in wait_for(browser, "[data-testid=error]").text
    assert not browser.find_element(By.CSS_SELECTOR, "main [role=status]").is_displayed()


def test_a_disabled_account_is_told_why_it_was_signed_out(server, browser):
    uid = sign_up(browser, server, "Dora Disabled")
    request = urllib.request.Request(
        f"{server.url}/identitytoolkit.googleapis.com/v1/accounts:update",
        data=json.dumps({"localId": uid, "disableUser": True}).encode(), method="POST",
        headers={"Authorization": f"Bearer {server.admin_token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200
    # The open page is signed out at once, without a reload (the server ended its connection's
    # sign-in, and the new token it then asked for was refused), and says why.
    wait_until(browser, lambda d: any("This account has been disabled." in toast.text
                                      for toast in d.find_elements(By.CSS_SELECTOR, ".toast-error")),
               10, "no word of why the account was signed out")
    assert browser.execute_script("return window.hearth.auth.currentUser") is None
    wait_for(browser, "[data-testid=signin-link]")
    # A sign-out asked for says nothing of the kind.
    assert browser.execute_script("return window.hearth.auth.sessionEndedBy?.code ?? null") is not None
    browser.execute_script("window.hearth.auth.signOut()")
    assert browser.execute_script("return window.hearth.auth.sessionEndedBy") is None
    # A reload finds the session ended too.
    browser.refresh()
    wait_until(browser, lambda d: d.execute_script("return Boolean(window.hearth)"), 10, "the app did not start again")
    wait_for(browser, "[data-testid=signin-link]")
    assert browser.execute_script("return window.hearth.auth.currentUser") is None
