"""The web app's "Delete my account", end to end: three people in three browsers.

Della (a new account) posts with a photo, follows and is followed, likes, comments, saves and
reports someone else's post, blocks someone, is mentioned, and chats with Carol. Otto has his
post open (its like count and comments) and Carol her conversations. Della deletes her account
on the account page: refused while a write waits to be sent, refused with a wrong password
(nothing changes), then deleted. Otto's and Carol's open screens follow live; then nothing of
Della is left anywhere in the database (no key, no text holding her uid) or in storage, and
every post's likes agree in all their shapes (stars, counts, copies, likes/).
"""

from __future__ import annotations

import json
import secrets
import string
import urllib.error
import urllib.parse
import urllib.request

import harness
from harness.social_data import like_disagreements, places_of
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from app_actions import all_sent, comment, hash_of, open_post, publish
from browser_support import js_errors, shown_texts, wait_for, wait_until
from test_app_accessibility import check_screen, dismiss_toasts, report
from test_app_core import PHOTO, go, open_app, run_js, sign_up

LIVE = 20
# Password of the accounts test_app_core.sign_up makes.
PASSWORD = "correct-horse-7"


# MARK: Helpers


def token() -> str:
    """A made-up word (letters only), so this test's people and posts are its own."""
    return secrets.choice(string.ascii_uppercase) + "".join(secrets.choice(string.ascii_lowercase) for _ in range(6))


def sign_in(driver, server, account: dict) -> str:
    open_app(driver, server, "#/signin")
    wait_for(driver, "[data-testid=signin-email]").send_keys(account["email"])
    driver.find_element(By.CSS_SELECTOR, "[data-testid=signin-password]").send_keys(account["password"])
    driver.find_element(By.CSS_SELECTOR, "[data-testid=signin-submit]").click()
    return wait_until(driver, lambda d: d.execute_script("return window.hearth.auth.currentUser?.uid"), LIVE,
                      f"{account['name']} could not sign in")


def press_toggle(driver, testid: str):
    """Presses a toggle (like, save) and waits until it reads as pressed and the server has it."""
    wait_for(driver, f"[data-testid={testid}]", LIVE).click()
    wait_until(driver, lambda d: d.find_element(By.CSS_SELECTOR, f"[data-testid={testid}]").get_attribute("aria-pressed") == "true",
               LIVE, f"{testid} did not turn on")
    all_sent(driver)


def follow(driver, uid: str):
    go(driver, f"#/profile/{uid}")
    button = wait_for(driver, "[data-testid=follow-button]", LIVE)
    wait_until(driver, lambda d: button.text == "Follow", LIVE, "the profile did not load")
    button.click()
    wait_until(driver, lambda d: button.text == "Unfollow", LIVE, "the follow did not take")
    all_sent(driver)


def count_of(driver, testid: str) -> str:
    texts = shown_texts(driver, f"[data-testid={testid}]")
    return texts[0] if texts else ""


def admin_request(server, method: str, path: str, body=None):
    """A request as the admin (past the rules); answers (status, parsed body)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{server.url}{path}", data=data, method=method, headers={
        "Authorization": f"Bearer {server.admin_token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def admin_get(server, path: str):
    status, value = admin_request(server, "GET", f"/{path}.json")
    assert status == 200, (path, status, value)
    return value


def whole_database(server):
    """The whole tree, read as the admin with the token in the address (`?auth=`)."""
    query = urllib.parse.urlencode({"auth": server.admin_token})
    with urllib.request.urlopen(f"{server.url}/.json?{query}", timeout=30) as response:
        return json.loads(response.read())


def bucket_of(server) -> str:
    with urllib.request.urlopen(f"{server.url}/__/firebase/init.json", timeout=10) as response:
        return json.loads(response.read())["storageBucket"]


def stored_files(server, prefix: str = "") -> list[str]:
    """Every file name in the bucket under `prefix`, listed as the admin (Firebase Storage's REST list)."""
    names, page = [], None
    while True:
        query = {"prefix": prefix, **({"pageToken": page} if page else {})}
        status, listing = admin_request(server, "GET", f"/v0/b/{bucket_of(server)}/o?{urllib.parse.urlencode(query)}")
        assert status == 200, (status, listing)
        names += [item["name"] for item in listing.get("items", [])]
        names += [f"{folder} (folder)" for folder in listing.get("prefixes", [])]
        page = listing.get("nextPageToken")
        if not page:
            return names


def sign_in_status(server, email: str, password: str) -> tuple[int, str]:
    status, answer = admin_request(server, "POST", "/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=hearth",
                                   {"email": email, "password": password, "returnSecureToken": True})
    return status, (answer or {}).get("error", {}).get("message", "")


def submit_deletion(driver, password: str | None):
    """Types the confirmation word (and the password) into the open form, and sends it."""
    confirmation = driver.find_element(By.CSS_SELECTOR, "[data-testid=delete-confirmation]")
    confirmation.clear()
    confirmation.send_keys("DELETE")
    if password is not None:
        field = driver.find_element(By.CSS_SELECTOR, "[data-testid=delete-password]")
        field.clear()
        field.send_keys(password)
    driver.find_element(By.CSS_SELECTOR, "[data-testid=delete-account-submit]").click()


def form_error(driver) -> str:
    return wait_until(driver, lambda d: "".join(shown_texts(d, "[data-testid=delete-account-form] [data-testid=error]")), LIVE,
                      "the form shows no error")


def page_errors(driver) -> list[str]:
    # A refused request (the wrong password's sign-in) is logged by the browser itself.
    return [message for message in js_errors(driver) if "Failed to load resource" not in message]


# MARK: The test


def test_deleting_an_account_removes_the_person_everywhere_live(server, browser_factory, screenshot):
    della, otto, carol = browser_factory(), browser_factory(), browser_factory()
    word = token()
    della_name = f"Della {word}"
    otto_uid = sign_up(otto, server, f"Otto {word}")
    della_uid = sign_up(della, server, della_name)
    della_email = della.execute_script("return window.hearth.auth.currentUser.email")
    carol_uid = sign_in(carol, server, server.account("Carol"))
    people = admin_get(server, "people")
    bob_uid = next(uid for uid, person in people.items() if person.get("full_name") == "Bob Martin")

    # Otto and Della follow each other; each posts (Della with a photo and a hashtag).
    follow(della, otto_uid)
    follow(otto, della_uid)
    otto_post = publish(otto, f"Harbour at noon {word}", "Gulls everywhere.")
    della_post = publish(della, f"Dunes {word}", f"Sand and sky. #dunes{word.lower()}", PHOTO)
    wait_until(della, lambda d: d.execute_script(
        "const img = document.querySelector('[data-testid=post-photo]'); return img && img.complete && img.naturalWidth > 0"),
        LIVE, "the photo does not show")

    # Otto likes, comments on and saves Della's post.
    open_post(otto, della_post)
    press_toggle(otto, "like-button")
    comment(otto, "Lovely dunes!")
    press_toggle(otto, "save-button")

    # Della likes, comments on, saves and reports Otto's post, and blocks Bob.
    open_post(della, otto_post)
    press_toggle(della, "like-button")
    comment(della, f"Noisy gulls, from {word}.")
    press_toggle(della, "save-button")
    della.find_element(By.CSS_SELECTOR, "[data-testid=report-button]").click()
    wait_for(della, "[data-testid=confirm-ok]").click()
    wait_until(della, lambda d: "reported" in d.find_element(By.ID, "toasts").text, LIVE, "the report was not made")
    all_sent(della)
    go(della, f"#/profile/{bob_uid}")
    wait_for(della, "[data-testid=block-button]", LIVE).click()
    wait_for(della, "[data-testid=confirm-ok]").click()
    wait_until(della, lambda d: count_of(d, "block-button") == "Unblock", LIVE, "Bob was not blocked")
    all_sent(della)

    # Carol likes Otto's post too; Otto, on it, mentions Della in a comment of his own.
    open_post(carol, otto_post)
    press_toggle(carol, "like-button")
    open_post(otto, otto_post)
    field = wait_for(otto, "[data-testid=comment-input]", LIVE)
    field.send_keys(f"Thanks @{word[:4].lower()}")
    option = wait_for(otto, "[data-testid=mention-option]", LIVE)
    assert option.text == della_name
    option.click()
    wait_until(otto, lambda d: field.get_attribute("value") == f"Thanks @{della_name} ", LIVE, "the mention was not inserted")
    otto.find_element(By.CSS_SELECTOR, "[data-testid=comment-submit]").click()
    wait_until(otto, lambda d: f"Thanks @{della_name}" in shown_texts(d, "[data-testid=comment-text]"), LIVE)
    all_sent(otto)

    # Della and Carol chat, both writing; Carol then has her conversations open.
    conversation = "_".join(sorted([della_uid, carol_uid]))
    go(della, f"#/chat/with/{carol_uid}")
    wait_for(della, "[data-testid=chat-input]", LIVE).send_keys("Hi Carol, it is Della.", Keys.ENTER)
    go(carol, f"#/chat/with/{della_uid}")
    wait_until(carol, lambda d: "Hi Carol, it is Della." in " ".join(shown_texts(d, "[data-testid=chat-message]")), LIVE,
               "Carol does not see Della's message")
    wait_for(carol, "[data-testid=chat-input]").send_keys("Hello Della!", Keys.ENTER)
    wait_until(della, lambda d: "Hello Della!" in " ".join(shown_texts(d, "[data-testid=chat-message]")), LIVE,
               "Della does not see Carol's reply")
    all_sent(della)
    all_sent(carol)
    go(carol, "#/chats")
    wait_for(carol, f"[data-testid=chat-row][data-conversation='{conversation}']", LIVE)
    rows_before = carol.execute_script(
        "return [...document.querySelectorAll('[data-testid=chat-row]')].map((row) => row.dataset.conversation)")

    # What Otto sees of his post: two likes (Della's, Carol's), Della's comment and his own.
    della_comment = next(comment_id for comment_id, value in admin_get(server, f"comments/{otto_post}").items()
                         if value["author"]["uid"] == della_uid)
    wait_until(otto, lambda d: count_of(d, "like-count") == "2" and count_of(d, "comment-count") == "2", LIVE,
               "Otto does not see both likes and both comments")
    assert otto.find_elements(By.CSS_SELECTOR, f"[data-comment-id='{della_comment}']")

    # Della is all over the data, and her photo is stored: what must go.
    before = places_of(whole_database(server), della_uid)
    roots = {place.split("/")[1] for place, _ in before}
    assert {"people", "posts", "user-posts", "likes", "comments", "followers", "notifications", "messages", "user-chats",
            "saved", "postFlags", "blocking", "blocked", "status", "feed"} <= roots, sorted(roots)
    # Her post is listed under its hashtag and in Otto's saved posts (keys without her uid).
    assert {place.split("/")[1] for place, _ in places_of(whole_database(server), della_post)} >= {"hashtags", "saved"}
    assert len(stored_files(server, f"{della_uid}/")) >= 2, "the post's photo and thumbnail are stored"

    # The account page: "Delete my account" opens a form that says what goes.
    go(della, "#/account")
    opener = wait_for(della, "[data-testid=delete-account-open]", LIVE)
    assert opener.get_attribute("aria-expanded") == "false"
    assert not della.find_element(By.CSS_SELECTOR, "[data-testid=delete-account-form]").is_displayed()
    opener.click()
    wait_for(della, "[data-testid=delete-account-form]")
    assert opener.get_attribute("aria-expanded") == "true"
    assert della.execute_script("return document.activeElement.dataset.testid") == "delete-confirmation"
    what = della.find_element(By.CSS_SELECTOR, "[data-testid=delete-account-what]").text
    for words in ("posts and their photos", "comments and likes", "conversations", "It cannot be undone."):
        assert words in what, what
    assert wait_for(della, "[data-testid=delete-password]").get_attribute("type") == "password"
    screenshot(della, "account-delete-form")
    # The open form passes the accessibility checks every screen passes, in both themes (with
    # no toast of what came before going away during the walk through its focus order).
    dismiss_toasts(della)
    problems = check_screen(della, "the account deletion form", phone=False)
    assert not problems, report(problems)

    # Escape closes it and gives the focus back to its button.
    della.find_element(By.CSS_SELECTOR, "[data-testid=delete-confirmation]").send_keys(Keys.ESCAPE)
    wait_until(della, lambda d: not d.find_element(By.CSS_SELECTOR, "[data-testid=delete-account-form]").is_displayed(), 5)
    assert della.execute_script("return document.activeElement.dataset.testid") == "delete-account-open"
    opener.click()
    wait_for(della, "[data-testid=delete-confirmation]")

    # Without the confirmation word: refused in words.
    della.find_element(By.CSS_SELECTOR, "[data-testid=delete-password]").send_keys(PASSWORD)
    della.find_element(By.CSS_SELECTOR, "[data-testid=delete-account-submit]").click()
    assert form_error(della) == "Type DELETE to confirm."

    # A write still waiting to be sent (offline): refused, and nothing deleted.
    run_js(della, f"window.hearth.db.goOffline(); window.hearth.db.ref('people/{della_uid}/bio').set('Written offline.'); return true;")
    wait_until(della, lambda d: d.execute_script("return window.hearth.db.pendingWriteCount()") > 0, 5)
    submit_deletion(della, PASSWORD)
    wait_until(della, lambda d: form_error(d).startswith("Some of your changes are still being sent."), LIVE,
               "the deletion was not refused while a write waits")
    run_js(della, "window.hearth.db.goOnline(); return true;")
    all_sent(della)

    # A wrong password: said in words, nothing changes.
    submit_deletion(della, "not-my-password")
    wait_until(della, lambda d: form_error(d) == "That is not your password. Nothing was deleted.", LIVE,
               "a wrong password was not refused in words")
    screenshot(della, "account-delete-wrong-password")
    assert hash_of(della) == "#/account"
    assert della.execute_script("return window.hearth.auth.currentUser?.uid") == della_uid
    assert sign_in_status(server, della_email, PASSWORD)[0] == 200, "the account is still there"
    assert admin_get(server, f"people/{della_uid}/full_name") == della_name
    assert count_of(otto, "like-count") == "2"

    # The right password: deleted, signed out here, on the sign-in page with the word of it.
    submit_deletion(della, PASSWORD)
    wait_until(della, lambda d: hash_of(d) == "#/signin", LIVE, "Della was not taken to the sign-in page")
    wait_until(della, lambda d: "Your account was deleted." in d.find_element(By.ID, "toasts").text, LIVE, "no word of the deletion")
    wait_for(della, "[data-testid=signin-email]")
    assert della.execute_script("return window.hearth.auth.currentUser") is None
    kept = della.execute_script("return JSON.parse(localStorage.getItem('hearth:screens') || 'null')")
    assert kept is None or kept.get("uid") != della_uid, "screens of the deleted account are kept"
    screenshot(della, "account-deleted")

    # Otto's open post follows live: Della's like and comment go; his own comment stays.
    wait_until(otto, lambda d: count_of(d, "like-count") == "1", LIVE, "Otto's like count did not go down")
    wait_until(otto, lambda d: not d.find_elements(By.CSS_SELECTOR, f"[data-comment-id='{della_comment}']"), LIVE,
               "Della's comment is still on Otto's screen")
    wait_until(otto, lambda d: count_of(d, "comment-count") == "1", LIVE)
    assert f"Thanks @{della_name}" in shown_texts(otto, "[data-testid=comment-text]")
    # Carol's conversation with Della goes from her list; her others stay.
    wait_until(carol, lambda d: not d.find_elements(By.CSS_SELECTOR, f"[data-conversation='{conversation}']"), LIVE,
               "the conversation with Della is still in Carol's list")
    rows_after = carol.execute_script(
        "return [...document.querySelectorAll('[data-testid=chat-row]')].map((row) => row.dataset.conversation)")
    assert sorted(rows_after) == sorted(row for row in rows_before if row != conversation)

    # Nothing of Della is left in the database: no key and no text holding her uid.
    try:
        harness.wait_until(lambda: not places_of(whole_database(server), della_uid), LIVE, "Della's data to be gone")
    except harness.WaitTimeout:
        pass
    left = places_of(whole_database(server), della_uid)
    assert left == [], "left behind:\n" + "\n".join(f"{place} = {json.dumps(value)[:200]}" for place, value in left)
    # Nor of her post: no index, feed or saved list still points at it.
    assert places_of(whole_database(server), della_post) == []
    # Nor in storage: her folder is empty, and no file anywhere is named after her.
    assert stored_files(server, f"{della_uid}/") == []
    assert [name for name in stored_files(server) if della_uid in name] == []
    # The likes agree everywhere; on Otto's post only Carol's is left.
    tree = whole_database(server)
    assert like_disagreements(tree) == []
    assert set(tree["posts"][otto_post]["stars"]) == {carol_uid} and tree["posts"][otto_post]["starCount"] == 1
    assert set(tree["likes"][otto_post]) == {carol_uid}
    assert tree["user-posts"][otto_uid][otto_post]["starCount"] == 1
    # Otto's comment stays, without the mention of her.
    otto_comments = tree["comments"][otto_post]
    assert [value["text"].strip() for value in otto_comments.values()] == [f"Thanks @{della_name}"]
    # The account is gone: it cannot sign in.
    status, code = sign_in_status(server, della_email, PASSWORD)
    assert status == 400 and code in ("INVALID_LOGIN_CREDENTIALS", "EMAIL_NOT_FOUND"), (status, code)

    # A reload stays signed out, and says nothing of a session ended by the server.
    della.refresh()
    wait_for(della, "[data-testid=signin-link]", LIVE)
    assert della.execute_script("return window.hearth.auth.currentUser") is None
    assert not della.find_elements(By.CSS_SELECTOR, ".toast-error")

    for driver in (della, otto, carol):
        assert page_errors(driver) == []


def test_an_anonymous_visitor_deletes_without_a_password(server, browser_factory):
    visitor, reader = browser_factory(), browser_factory()
    posts = admin_get(server, "posts")
    post_id = sorted(posts)[0]
    open_app(visitor, server, "#/signin")
    wait_for(visitor, "[data-testid=browse-anonymously]", LIVE).click()
    uid = wait_until(visitor, lambda d: d.execute_script(
        "const user = window.hearth.auth.currentUser; return user?.isAnonymous && user.uid"), LIVE, "no anonymous account")
    # (The app goes to the recent posts once the profile is written.)
    wait_until(visitor, lambda d: hash_of(d) in ("", "#/"), LIVE, "browsing anonymously did not start")
    open_post(visitor, post_id)
    comment(visitor, f"Anonymous words {token()}")
    open_app(reader, server, f"#/post/{post_id}")
    wait_until(reader, lambda d: d.find_elements(By.CSS_SELECTOR, "[data-testid=comment]"), LIVE)
    mine = next(comment_id for comment_id, value in admin_get(server, f"comments/{post_id}").items() if value["author"]["uid"] == uid)
    wait_for(reader, f"[data-comment-id='{mine}']", LIVE)

    # No password to give: the word alone deletes the account.
    go(visitor, "#/account")
    wait_for(visitor, "[data-testid=delete-account-open]", LIVE).click()
    wait_for(visitor, "[data-testid=delete-confirmation]")
    assert not visitor.find_element(By.CSS_SELECTOR, "[data-testid=delete-password]").is_displayed()
    submit_deletion(visitor, None)
    wait_until(visitor, lambda d: hash_of(d) == "#/signin", LIVE, "the visitor was not taken to the sign-in page")
    wait_until(visitor, lambda d: "Your account was deleted." in d.find_element(By.ID, "toasts").text, LIVE)
    assert visitor.execute_script("return window.hearth.auth.currentUser") is None

    # The reader sees the comment go; nothing of the visitor is left.
    wait_until(reader, lambda d: not d.find_elements(By.CSS_SELECTOR, f"[data-comment-id='{mine}']"), LIVE,
               "the anonymous comment is still shown")
    try:
        harness.wait_until(lambda: not places_of(whole_database(server), uid), LIVE, "the visitor's data to be gone")
    except harness.WaitTimeout:
        pass
    left = places_of(whole_database(server), uid)
    assert left == [], "left behind:\n" + "\n".join(f"{place} = {json.dumps(value)[:200]}" for place, value in left)
    assert like_disagreements(whole_database(server)) == []
    for driver in (visitor, reader):
        assert page_errors(driver) == []
