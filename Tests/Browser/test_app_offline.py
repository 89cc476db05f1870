"""The social web app offline (issue 16), against real `hearth serve` processes in headless
chromium: the service worker serves the app's files with the server stopped (no module-loading
error on any screen); posts, comments and stars written offline are shown at once as waiting
to be sent, survive a reload with the server still down, and converge when it is back, with
nothing lost or doubled on the server; two browsers (one offline, one online) editing the same
post converge; a star count contended by several browsers ends exactly right; "Load older"
pages by cursor (posts, a profile, comments, a chat), in order and without duplicates; a
changed app replaces the cached shell.

Everything waits on signals (DOM conditions, promises in the page), never on sleeps.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import urllib.request
import uuid

from selenium.webdriver.common.by import By

from browser_support import REPO, WEB_ROOT, js_errors, launch_server, stop_server, tap, text_of, wait_for, wait_until

LIVE = 20  # seconds for anything that crosses the network or a restart
RECONNECT = 45  # the client retries after 1 s, doubling to 30 s

# Chromium's words for a module that could not be loaded (a static import or `import()`).
MODULE_FAILURE = re.compile(r"Failed to fetch dynamically imported module|Failed to load module script|"
                            r"error loading dynamically imported module|^\S+/(app|lib)/\S+\.js - Failed to load resource", re.I)

SCREENS = [
    ("#/", "posts"), ("#/top", "posts"), ("#/mine", "posts"), ("#/feed", "feed"), ("#/search", "search"),
    ("#/chats", "chat"), ("#/saved", "saved"), ("#/compose", "compose"), ("#/account", "auth"),
    ("#/notifications", "notifications"),
]


def run_js(driver, body: str):
    """Runs an async function body in the page; returns its value. A failure fails the test."""
    driver.set_script_timeout(60)
    result = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        f"(async () => {{ {body} }})().then((value) => done({{ value }}), "
        "(error) => done({ error: String(error && (error.stack || error.message) || error) }));")
    assert "error" not in result, f"in the page: {result['error']}"
    return result.get("value")


def open_app(driver, url: str, route: str = "#/"):
    driver.get(f"{url}/{route}")
    wait_until(driver, lambda d: d.execute_script("return Boolean(window.hearth)"), LIVE, "the app did not start")


def reload(driver, url: str, route: str):
    """A new page load of the app at ``route`` (a new document, not a change of the hash)."""
    driver.get("about:blank")
    driver.get(f"{url}/{route}")
    wait_until(driver, lambda d: d.execute_script("return Boolean(window.hearth)"), LIVE, "the app did not start")


def go(driver, route: str):
    driver.execute_script("location.hash = arguments[0]", route)


def sign_up(driver, url: str, name: str) -> str:
    """A new account with its public profile, made through the app's own actions; its uid."""
    open_app(driver, url)
    email = f"{name.split()[0].lower()}-{uuid.uuid4().hex[:8]}@example.com"
    return run_js(driver, f"""
        const {{ signUp }} = await import('/app/actions.js');
        await signUp(window.hearth, {{ name: {json.dumps(name)}, email: {json.dumps(email)}, password: 'correct-horse-7' }});
        return window.hearth.auth.currentUser.uid;""")


def rest(url: str, token: str, path: str, method: str = "GET", value=None):
    request = urllib.request.Request(
        f"{url}/{path}.json", method=method, data=None if value is None else json.dumps(value).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read() or b"null")


def shell_ready(driver):
    """Waits until the service worker controls the page and holds a complete snapshot."""
    wait_until(driver, lambda d: run_js(d, """
        if (!navigator.serviceWorker.controller) return false;
        return (await caches.keys()).some((name) => name.startsWith('hearth-shell-') && name !== 'hearth-shell-meta');"""),
        LIVE, "the service worker did not keep the app's files")


def flush_cache(driver):
    """Saves the database's offline cache now and waits until IndexedDB has it (a read made
    after the writes sees them: IndexedDB runs transactions on a store in order)."""
    run_js(driver, """
        const engine = window.hearth.db._engine;
        await window.hearth.db.ready();
        engine._save();
        await Promise.all(['nodes', 'queries', 'writes'].map((store) => engine._store._all(store)));
        return true;""")


def offline_banner_shown(driver) -> bool:
    return driver.find_element(By.CSS_SELECTOR, "[data-testid=offline]").is_displayed()


def module_failures(driver) -> list[str]:
    return [entry["message"] for entry in driver.get_log("browser") if MODULE_FAILURE.search(entry["message"])]


def pending_count(driver) -> int:
    return driver.execute_script("return window.hearth.db.pendingWriteCount()")


def card_ids(driver, css: str = "[data-testid=post-card]") -> list[str]:
    # Read in the page at once: right after a load, the painted copy of the last screen is
    # swapped for the live one, and elements found a moment before would be gone.
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map((card) => card.getAttribute('data-post-id'))", css)


def test_the_service_worker_lists_every_file_of_the_app():
    """Every file under Web/app and Web/lib is in the shell the worker keeps (a file missing
    there would fail to load offline)."""
    listed = set(re.findall(r"'(/[^']*)'", (WEB_ROOT / "sw.js").read_text().split("const SHELL = [")[1].split("];")[0]))
    on_disk = {"/" + str(path.relative_to(WEB_ROOT)) for folder in ("app", "lib") for path in (WEB_ROOT / folder).rglob("*")
               if path.is_file()}
    assert on_disk - listed == set(), "files the service worker does not keep"
    assert listed - on_disk == {"/"}, "files the service worker lists that do not exist"


def test_offline_reload_keeps_pending_writes_then_converges(browser_factory, tmp_path, screenshot):
    server = launch_server(tmp_path)
    port = int(server.url.rsplit(":", 1)[1])
    token = server.admin_token
    try:
        page = browser_factory()
        uid = sign_up(page, server.url, "Olive Offline")
        # Visit what will be read offline: the lists, a demo post with its comments, the feed.
        go(page, "#/")
        wait_for(page, "[data-testid=post-card]", LIVE)
        post_id = card_ids(page)[-1]
        before = rest(server.url, token, f"posts/{post_id}")
        comments_before = rest(server.url, token, f"comments/{post_id}") or {}
        for route, ready in (("#/feed", "[data-view=feed] h1"), ("#/top", "[data-testid=post-card]"),
                             (f"#/post/{post_id}", "[data-testid=post-title]")):
            go(page, route)
            wait_for(page, ready, LIVE)
        wait_until(page, lambda d: d.find_elements(By.CSS_SELECTOR, "[data-testid=comment]")
                   or not comments_before, LIVE, "the comments did not show")
        shell_ready(page)
        flush_cache(page)

        stop_server(server)
        wait_until(page, offline_banner_shown, LIVE, "the page did not say it is offline")
        assert "changes will sync" in text_of(page, "[data-testid=offline]")

        # Offline: a like and a comment on the demo post, and a new post.
        page.find_element(By.CSS_SELECTOR, "[data-testid=like-button]").click()
        wait_until(page, lambda d: text_of(d, "[data-testid=like-count]") == str(before["starCount"] + 1), 5,
                   "the like did not show at once")
        star = page.find_element(By.CSS_SELECTOR, "[data-testid=like-button]")
        assert star.get_attribute("data-pending") is not None and "waiting to be sent" in star.get_attribute("aria-label")
        page.find_element(By.CSS_SELECTOR, "[data-testid=comment-input]").send_keys("Written on the train")
        page.find_element(By.CSS_SELECTOR, "[data-testid=comment-submit]").click()
        comment = wait_until(page, lambda d: next((item for item in d.find_elements(By.CSS_SELECTOR, "[data-testid=comment]")
                                                   if "Written on the train" in item.text), None), 5, "the comment did not show")
        assert comment.get_attribute("data-pending") is not None
        assert "Waiting to send" in comment.find_element(By.CSS_SELECTOR, "[data-testid=pending-badge]").text
        go(page, "#/compose")
        wait_for(page, "[data-testid=compose-title]").send_keys("Offline thoughts")
        page.find_element(By.CSS_SELECTOR, "[data-testid=compose-body]").send_keys("Posted with no network at all.")
        tap(page, page.find_element(By.CSS_SELECTOR, "[data-testid=compose-submit]"))
        wait_until(page, lambda d: "/post/" in d.current_url, 5, "the offline post did not open")
        new_id = page.current_url.split("/post/")[-1]
        assert wait_for(page, "[data-testid=post-title]").text == "Offline thoughts"
        assert page.find_element(By.CSS_SELECTOR, "[data-testid=post-title]").get_attribute("data-pending") is not None
        assert "Waiting to send" in text_of(page, ".post-pending")
        assert pending_count(page) == 3
        assert "3 changes are waiting" in text_of(page, "[data-testid=offline]")

        # A reload with the server still down: the app's files come from the service worker,
        # the screens from the cache, and the three writes are still waiting.
        page.get_log("browser")
        page.execute_script("window.__before = true")
        reload(page, server.url, "#/")
        assert page.execute_script("return window.__before") is None, "the page was not loaded again"
        wait_until(page, lambda d: new_id in card_ids(d), 5, "the offline post is not in the cached list")
        wait_until(page, lambda d: d.execute_script(
            "return !document.getElementById('main').dataset.cachedPaint"), LIVE, "the live screen did not come")
        assert page.execute_script(
            "return document.querySelector(`[data-post-id='${arguments[0]}']`)?.hasAttribute('data-pending')", new_id)
        assert post_id in card_ids(page), "the cached posts are not shown"
        wait_until(page, offline_banner_shown, LIVE, "the reloaded page did not say it is offline")
        assert pending_count(page) == 3
        screenshot(page, "offline-recent-pending")
        go(page, f"#/post/{post_id}")
        # Read in the page at once: the screen may be redrawn between a lookup and a read.
        wait_until(page, lambda d: d.execute_script("return document.querySelector('[data-testid=like-count]')?.textContent")
                   == str(before["starCount"] + 1), 5)
        # Read in the page at once: the list may be redrawn between a lookup and a read.
        wait_until(page, lambda d: d.execute_script(
            "return [...document.querySelectorAll('[data-testid=comment]')].some((item) => "
            "item.textContent.includes('Written on the train') && item.hasAttribute('data-pending'))"), 5)
        # Every screen opens offline without a module-loading error.
        for route, module in SCREENS + [(f"#/profile/{uid}", "profile")]:
            go(page, route)
            wait_for(page, f"[data-view={module}]", 5)
        assert not page.find_elements(By.XPATH, "//*[contains(text(), 'could not be loaded')]")
        assert module_failures(page) == []

        # The server is back: the writes are sent once each, and the marks go.
        server = launch_server(tmp_path, port)
        go(page, f"#/post/{post_id}")
        wait_until(page, lambda d: pending_count(d) == 0, RECONNECT, "the writes were not sent")
        wait_until(page, lambda d: not offline_banner_shown(d), LIVE)
        wait_until(page, lambda d: not d.find_elements(By.CSS_SELECTOR, "[data-pending]"), LIVE, "marks were left")
        after = rest(server.url, token, f"posts/{post_id}")
        assert after["starCount"] == before["starCount"] + 1 and after["stars"][uid] is True
        assert isinstance(rest(server.url, token, f"likes/{post_id}/{uid}"), int)
        assert rest(server.url, token, f"user-posts/{before['author']['uid']}/{post_id}/starCount") == after["starCount"]
        comments = rest(server.url, token, f"comments/{post_id}") or {}
        assert [c["text"] for c in comments.values()].count("Written on the train") == 1
        assert len(comments) == len(comments_before) + 1
        mine = rest(server.url, token, f"user-posts/{uid}") or {}
        assert [p["title"] for p in mine.values()] == ["Offline thoughts"]
        assert rest(server.url, token, f"posts/{new_id}/title") == "Offline thoughts"
        assert rest(server.url, token, f"feed/{uid}/{new_id}") is True
        # And the page shows what the server has.
        assert text_of(page, "[data-testid=like-count]") == str(after["starCount"])
    finally:
        stop_server(server)


def test_a_server_that_does_not_answer_does_not_hold_the_app(browser_factory, tmp_path):
    """The server's port takes connections and answers nothing (a hung server, a black hole):
    the app still opens from its caches, and says it is offline."""
    server = launch_server(tmp_path)
    port = int(server.url.rsplit(":", 1)[1])
    silent = None
    try:
        page = browser_factory()
        sign_up(page, server.url, "Hugo Hung")
        go(page, "#/")
        wait_for(page, "[data-testid=post-card]", LIVE)
        shown = card_ids(page)
        shell_ready(page)
        flush_cache(page)
        stop_server(server)
        silent = socket.create_server(("127.0.0.1", port))
        silent.listen(64)
        reload(page, server.url, "#/")
        wait_until(page, lambda d: card_ids(d) == shown, LIVE, "the cached posts did not show")
        wait_until(page, offline_banner_shown, LIVE, "the page did not say it is offline")
        assert module_failures(page) == []
    finally:
        if silent:
            silent.close()
        if server.process.poll() is None:
            stop_server(server)


def test_two_browsers_one_offline_converge(browser_factory, tmp_path):
    server = launch_server(tmp_path)
    token = server.admin_token
    try:
        online, offline = browser_factory(), browser_factory()
        online_uid = sign_up(online, server.url, "Nora Online")
        offline_uid = sign_up(offline, server.url, "Fred Offline")
        post_id = next(key for key, post in rest(server.url, token, "posts").items() if post["starCount"] == 0)
        for driver in (online, offline):
            go(driver, f"#/post/{post_id}")
            wait_for(driver, "[data-testid=comment-input]", LIVE)
        # One browser loses the network; both star the post and comment on it.
        run_js(offline, "window.hearth.db.goOffline(); return true;")
        wait_until(offline, lambda d: d.execute_script("return !window.hearth.db._engine.isConnected"))
        for driver, text in ((offline, "From the tunnel"), (online, "From the office")):
            driver.find_element(By.CSS_SELECTOR, "[data-testid=like-button]").click()
            wait_until(driver, lambda d: text_of(d, "[data-testid=like-count]") == "1", 5)
            driver.find_element(By.CSS_SELECTOR, "[data-testid=comment-input]").send_keys(text)
            driver.find_element(By.CSS_SELECTOR, "[data-testid=comment-submit]").click()
        wait_until(online, lambda d: pending_count(d) == 0, LIVE)
        assert pending_count(offline) == 2
        assert rest(server.url, token, f"posts/{post_id}/starCount") == 1
        # Back online: the offline star was counted from 0, refused, and retried from 1.
        run_js(offline, "window.hearth.db.goOnline(); return true;")
        for driver in (online, offline):
            wait_until(driver, lambda d: text_of(d, "[data-testid=like-count]") == "2", LIVE, "the likes did not converge")
            wait_until(driver, lambda d: sorted(text for text in (e.text for e in d.find_elements(By.CSS_SELECTOR, "[data-testid=comment-text]"))
                                                if text.startswith("From the")) == ["From the office", "From the tunnel"],
                       LIVE, "the comments did not converge")
        wait_until(offline, lambda d: pending_count(d) == 0, LIVE)
        post = rest(server.url, token, f"posts/{post_id}")
        assert post["starCount"] == 2 and post["stars"] == {online_uid: True, offline_uid: True}
        assert rest(server.url, token, f"user-posts/{post['author']['uid']}/{post_id}/starCount") == 2
        texts = sorted(c["text"] for c in rest(server.url, token, f"comments/{post_id}").values())
        assert [text for text in texts if text.startswith("From the")] == ["From the office", "From the tunnel"]

        # A chat message sent offline: shown at once, marked, then delivered once.
        go(offline, f"#/chat/with/{online_uid}")
        go(online, f"#/chat/with/{offline_uid}")
        wait_for(offline, "[data-testid=chat-input]", LIVE)
        run_js(offline, "window.hearth.db.goOffline(); return true;")
        offline.find_element(By.CSS_SELECTOR, "[data-testid=chat-input]").send_keys("Out of signal, back soon")
        offline.find_element(By.CSS_SELECTOR, "[data-testid=chat-send]").click()
        message = wait_for(offline, "[data-testid=chat-message][data-pending]", 5)
        assert "Out of signal, back soon" in message.text and "Waiting to send" in message.text
        run_js(offline, "window.hearth.db.goOnline(); return true;")
        wait_until(offline, lambda d: not d.find_elements(By.CSS_SELECTOR, "[data-pending]"), LIVE, "the message stayed marked")
        wait_until(online, lambda d: "Out of signal, back soon" in text_of(d, "[data-testid=chat-messages]"), LIVE)
        conversation = "_".join(sorted([online_uid, offline_uid]))
        assert [m["text"] for m in rest(server.url, token, f"messages/{conversation}").values()] == ["Out of signal, back soon"]
    finally:
        stop_server(server)


def test_a_star_count_contended_by_several_browsers_ends_right(server, browser_factory):
    browsers = [browser_factory() for _ in range(3)]
    uids = [sign_up(driver, server.url, f"Stella{index} Example") for index, driver in enumerate(browsers)]
    post_id = next(key for key, post in rest(server.url, server.admin_token, "posts").items() if post["starCount"] == 0)
    for driver in browsers:
        go(driver, f"#/post/{post_id}")
        wait_for(driver, "[data-testid=like-button]", LIVE)
    # All star from the same count while cut off, then reconnect at once: each sends 0 → 1,
    # the server takes one, and the others are refused and retry on the newer count.
    for driver in browsers:
        run_js(driver, "window.hearth.db.goOffline(); return true;")
        driver.find_element(By.CSS_SELECTOR, "[data-testid=like-button]").click()
        wait_until(driver, lambda d: text_of(d, "[data-testid=like-count]") == "1", 5)
    for driver in browsers:
        driver.execute_script("window.hearth.db.goOnline()")
    for driver in browsers:
        wait_until(driver, lambda d: pending_count(d) == 0 and text_of(d, "[data-testid=like-count]") == "3", LIVE,
                   "the star count did not end at 3")
    post = rest(server.url, server.admin_token, f"posts/{post_id}")
    assert post["starCount"] == 3 and post["stars"] == {uid: True for uid in uids}
    # Each like in FriendlyPix's shape too, written with its star.
    assert sorted(rest(server.url, server.admin_token, f"likes/{post_id}")) == sorted(uids)
    assert rest(server.url, server.admin_token, f"user-posts/{post['author']['uid']}/{post_id}/starCount") == 3

    # All unstar at once, online this time: back to the demo's 0, with no star left.
    for driver in browsers:
        driver.find_element(By.CSS_SELECTOR, "[data-testid=like-button]").click()
    for driver in browsers:
        wait_until(driver, lambda d: pending_count(d) == 0 and text_of(d, "[data-testid=like-count]") == "0", LIVE,
                   "the star count did not come back to 0")
    post = rest(server.url, server.admin_token, f"posts/{post_id}")
    assert post["starCount"] == 0 and not post.get("stars")
    assert rest(server.url, server.admin_token, f"likes/{post_id}") is None
    assert rest(server.url, server.admin_token, f"user-posts/{post['author']['uid']}/{post_id}/starCount") == 0


def test_load_older_pages_by_cursor_in_order(server, browser):
    uid = sign_up(browser, server.url, "Paige Example")
    ids = run_js(browser, """
        const { publishPost, authorOf } = await import('/app/actions.js');
        const { ServerValue } = await import('/lib/hearth.js');
        const author = authorOf(window.hearth.auth.currentUser);
        const ids = [];
        for (let index = 0; index < 23; index += 1) {
          const id = window.hearth.db.ref('posts').push().key;
          ids.push(id);
          await publishPost(window.hearth, id, { author, title: `Paging ${index}`, body: 'Paging.', timestamp: ServerValue.TIMESTAMP, starCount: 0 });
        }
        return ids;""")
    try:
        check_paging(browser, server, uid, ids)
    finally:
        run_js(browser, f"""
            const {{ deletePost }} = await import('/app/actions.js');
            for (const id of {json.dumps(ids)}) {{
              const post = (await window.hearth.db.ref(`posts/${{id}}`).get()).val();
              if (post) await deletePost(window.hearth, id, post);
            }}
            return true;""")


def check_paging(browser, server, uid: str, ids: list[str]):
    newest_first = ids[::-1]
    go(browser, "#/mine")
    wait_until(browser, lambda d: len(card_ids(d)) == 10, LIVE)
    for shown in (20, 23):
        wait_for(browser, "[data-testid=load-more]").click()
        wait_until(browser, lambda d: len(card_ids(d)) == shown, LIVE, f"{shown} posts are not shown")
        assert card_ids(browser) == newest_first[:shown], "out of order, or doubled"
    assert not browser.find_element(By.CSS_SELECTOR, "[data-testid=load-more]").is_displayed()
    # The older pages were asked for by cursor (endBefore the oldest shown), not a larger limit.
    queries = browser.execute_script(
        "return [...window.hearth.db._engine.views.values()].filter((view) => view.path.join('/') === arguments[0])"
        ".map((view) => view.query._params.wireObject())", f"user-posts/{uid}")
    assert sorted(query.get("ep") for query in queries if "ep" in query) == sorted([newest_first[9], newest_first[19]])
    assert all(query.get("l") == 11 for query in queries)

    # A profile's posts and a long comment thread page the same way.
    go(browser, f"#/profile/{uid}")
    wait_until(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "[data-testid=post-tile]")) == 12, LIVE)
    wait_for(browser, "[data-view=profile] [data-testid=load-more]").click()
    wait_until(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "[data-testid=post-tile]")) == 23, LIVE)
    tiles = [tile.get_attribute("href").split("/post/")[-1] for tile in browser.find_elements(By.CSS_SELECTOR, "[data-testid=post-tile]")]
    assert tiles == newest_first

    comments = run_js(browser, f"""
        const {{ addComment }} = await import('/app/actions.js');
        for (let index = 0; index < 25; index += 1) await addComment(window.hearth, '{ids[0]}', `Comment ${{String(index).padStart(2, '0')}}`);
        return (await window.hearth.db.ref('comments/{ids[0]}').get()).numChildren();""")
    assert comments == 25
    go(browser, f"#/post/{ids[0]}")
    comment_texts = lambda d: [e.text for e in d.find_elements(By.CSS_SELECTOR, "[data-testid=comment-text]")]
    wait_until(browser, lambda d: len(comment_texts(d)) == 20, LIVE)
    assert comment_texts(browser) == [f"Comment {index:02d}" for index in range(5, 25)]
    wait_for(browser, "[data-testid=load-older-comments]").click()
    wait_until(browser, lambda d: len(comment_texts(d)) == 25, LIVE)
    assert comment_texts(browser) == [f"Comment {index:02d}" for index in range(25)]
    assert not browser.find_element(By.CSS_SELECTOR, "[data-testid=load-older-comments]").is_displayed()

    # A long conversation: the latest 30 messages, then the older ones above them.
    bob = server.account("Bob")
    other_uid = next(key for key, person in rest(server.url, server.admin_token, "people").items()
                     if person.get("full_name") == bob["name"])
    sent = run_js(browser, f"""
        const {{ ServerValue }} = await import('/lib/hearth.js');
        const conversation = ['{uid}', '{other_uid}'].sort().join('_');
        for (let index = 0; index < 35; index += 1) {{
          const id = window.hearth.db.ref(`messages/${{conversation}}`).push().key;
          await window.hearth.db.ref(`messages/${{conversation}}/${{id}}`).set({{ from: '{uid}', text: `Message ${{String(index).padStart(2, '0')}}`, timestamp: ServerValue.TIMESTAMP }});
        }}
        return (await window.hearth.db.ref(`messages/${{conversation}}`).get()).numChildren();""")
    assert sent == 35
    go(browser, f"#/chat/with/{other_uid}")
    message_texts = lambda d: [e.text for e in d.find_elements(By.CSS_SELECTOR, "[data-testid=chat-message] .chat-text")]
    wait_until(browser, lambda d: len(message_texts(d)) == 30, LIVE)
    assert message_texts(browser) == [f"Message {index:02d}" for index in range(5, 35)]
    wait_for(browser, "[data-testid=load-older-messages]").click()
    wait_until(browser, lambda d: len(message_texts(d)) == 35, LIVE)
    assert message_texts(browser) == [f"Message {index:02d}" for index in range(35)]


def test_a_changed_app_replaces_the_cached_shell(browser, tmp_path):
    """The shell snapshot is named after its files' contents: when the server's files change,
    the next check stores a new snapshot, drops the old one and tells the page."""
    web = tmp_path / "web"
    shutil.copytree(WEB_ROOT, web, symlinks=False)
    data = tmp_path / "data"
    data.mkdir()
    server = launch_server(data, extra_args=("--web-root", str(web)))
    try:
        open_app(browser, server.url)
        shell_ready(browser)
        names = lambda d: run_js(d, "return (await caches.keys()).filter((name) => name.startsWith('hearth-shell-') && name !== 'hearth-shell-meta');")
        first = names(browser)
        assert len(first) == 1
        with (web / "app" / "social.css").open("a") as css:
            css.write("\n/* a new build */\n")
        browser.execute_script("navigator.serviceWorker.controller.postMessage({ type: 'hearth-shell-check' })")
        # The new snapshot is listed as soon as it is being written; the old one goes once the
        # new one is whole: one snapshot, the new one, in the end.
        wait_until(browser, lambda d: len(now := names(d)) == 1 and now != first, LIVE, "no new snapshot alone")
        wait_until(browser, lambda d: "new version of Hearth" in d.find_element(By.ID, "toasts").text, LIVE)
        served = run_js(browser, "return (await (await fetch('/app/social.css')).text()).includes('a new build');")
        assert served is True
    finally:
        stop_server(server)


# Records, from the very start of a page, what the first post card was shown in.
FIRST_CARD_PROBE = """
window.__firstCard = null;
new MutationObserver((changes, observer) => {
  const main = document.getElementById('main');
  if (!main || !main.querySelector('[data-testid=post-card]')) return;
  observer.disconnect();
  window.__firstCard = { cachedPaint: main.dataset.cachedPaint === 'true', inert: main.inert,
                         busy: main.getAttribute('aria-busy'), appStarted: Boolean(window.hearth) };
}).observe(document, { childList: true, subtree: true });
"""


def kept_screens(driver):
    return json.loads(driver.execute_script("return localStorage.getItem('hearth:screens')") or "null")


def test_the_last_screen_is_painted_at_start_then_made_live(server, browser):
    uid = sign_up(browser, server.url, "Paula Paint")
    go(browser, "#/")
    wait_for(browser, "[data-testid=post-card]", LIVE)
    go(browser, "#/compose")
    wait_for(browser, "form", LIVE)
    browser.get("about:blank")  # leaving keeps the screen's look (pagehide)
    browser.get(f"{server.url}/#/")
    kept = kept_screens(browser)
    assert kept["uid"] == uid
    assert "#/" in kept["screens"], "the list screen was kept when it was left"
    assert "#/compose" not in kept["screens"], "forms are never kept"
    assert not re.search(r'\sstyle="', kept["screens"]["#/"]["main"]), "style attributes are kept aside (the CSP refuses them in HTML)"

    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": FIRST_CARD_PROBE})
    browser.get("about:blank")
    browser.get(f"{server.url}/#/")
    first = wait_until(browser, lambda d: d.execute_script("return window.__firstCard"), LIVE, "no post card")
    assert first == {"cachedPaint": True, "inert": True, "busy": "true", "appStarted": False}, \
        "the copy is painted before the app's modules run, marked busy and inert"
    # Then the live screen takes its place, usable.
    wait_until(browser, lambda d: d.execute_script(
        "const m = document.getElementById('main'); return Boolean(window.hearth) && !m.dataset.cachedPaint "
        "&& !m.inert && !m.hasAttribute('aria-busy') && m.querySelector('[data-view=posts] [data-testid=post-card]') !== null"),
        LIVE, "the live screen did not replace the copy")
    assert js_errors(browser) == [], "no errors and no CSP violations"

    # Signing out forgets the person's screens: the next start paints nothing of theirs.
    run_js(browser, "await window.hearth.auth.signOut(); return true;")
    assert (kept_screens(browser) or {}).get("uid") != uid
    browser.get("about:blank")
    browser.get(f"{server.url}/#/")
    wait_until(browser, lambda d: d.execute_script("return Boolean(window.hearth)"), LIVE, "the app did not start")
    assert (kept_screens(browser) or {}).get("uid") in (None,), "only a signed-out visitor's screens may be kept"
