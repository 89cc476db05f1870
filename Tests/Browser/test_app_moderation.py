"""Moderation in the web app, end to end: four people in four browsers, and the operator.

Ava posts "THIS IS GREAT!!!" with the text "what the damn" and a photo: the server's
moderation makes it "This is great." / "what the ****", and every reader sees "Edited by
moderation" on it (its page and its card), while the original the server kept is refused to a
normal person's REST read. Her comment is moderated too. Rex and Rita report the post, Rita
also Ava's comment (once: a second try says so), and Rex names Rita in a comment, picked from
the suggestions: Rita is told "mentioned you". Ada, signed in and not an admin, has no
Moderation link, and #/moderation tells her only admins can see it. The operator makes her one
(`PUT /admins/<uid>.json` with the admin token): with the page open and without signing out she
gets the link, and the screen turns into the queue, live, most reported first, with names and
counts. She dismisses the comment's report (the comment stays), suspends Ava, and removes the
post: Rex, on its page, sees it gone live; no trace of it is left in the database, nor its photo
in storage; and Ava's next sign-in is refused as disabled.
"""

from __future__ import annotations

import json
import secrets
import string
import urllib.error
import urllib.parse
import urllib.request

import harness
from harness.social_data import places_of
from selenium.webdriver.common.by import By

from app_actions import all_sent, comment, open_post, publish
from browser_support import js_errors, shown_texts, wait_for, wait_until
from test_app_accessibility import browser_at, check_screen, dismiss_toasts, report
from test_app_accessibility import sign_in as a11y_sign_in
from test_app_account_deletion import admin_get, stored_files, whole_database
from test_app_core import PHOTO, go, run_js, sign_up

LIVE = 20
PASSWORD = "correct-horse-7"  # test_app_core.sign_up's


# MARK: Helpers


def word() -> str:
    """A made-up name (letters only), so this test's people are its own."""
    return secrets.choice(string.ascii_uppercase) + "".join(secrets.choice(string.ascii_lowercase) for _ in range(6))


def toasts_say(driver, words: str):
    wait_until(driver, lambda d: words in d.find_element(By.ID, "toasts").text, LIVE, f"no toast says {words!r}")


def confirm(driver, expected: str | None = None):
    """Answers the confirmation dialog that opened with its confirming button."""
    dialog = wait_for(driver, "dialog[open]")
    if expected:
        assert expected in dialog.text, dialog.text
    dialog.find_element(By.CSS_SELECTOR, "[data-testid=confirm-ok]").click()
    wait_until(driver, lambda d: not d.find_elements(By.CSS_SELECTOR, "dialog[open]"), 5, "the dialog did not close")


def text_of(driver, css: str) -> str:
    texts = shown_texts(driver, css)
    return texts[0] if texts else ""


def shown(driver, css: str) -> bool:
    return any(element.is_displayed() for element in driver.find_elements(By.CSS_SELECTOR, css))


def moderation_link(driver) -> bool:
    return bool(driver.find_elements(By.CSS_SELECTOR, "#nav a[href='#/moderation']"))


def rest(server, method: str, path: str, auth: str, body=None):
    """A database REST request with `?auth=` (an ID token, or the admin token): (status, parsed body)."""
    query = urllib.parse.urlencode({"auth": auth})
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{server.url}/{path}.json?{query}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def sign_in_refusal(server, email: str) -> str:
    """The error the accounts API answers a password sign-in with ('' when it succeeds)."""
    request = urllib.request.Request(
        f"{server.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=hearth", method="POST",
        data=json.dumps({"email": email, "password": PASSWORD, "returnSecureToken": True}).encode(),
        headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10):
            return ""
    except urllib.error.HTTPError as error:
        return json.loads(error.read() or b"null").get("error", {}).get("message", "")


def entries(driver) -> list[dict]:
    """The moderation queue as shown, in order."""
    return driver.execute_script("""
        return [...document.querySelectorAll('[data-testid=report]')].map((entry) => ({
          kind: entry.dataset.kind, post: entry.dataset.postId, comment: entry.dataset.commentId ?? null,
          count: Number(entry.dataset.count),
          title: entry.querySelector('[data-testid=report-link]').textContent,
          href: entry.querySelector('[data-testid=report-link]').getAttribute('href'),
          author: entry.querySelector('[data-testid=report-author]').textContent,
          counted: entry.querySelector('[data-testid=report-count]').textContent,
        }));""")


def entry_button(driver, kind: str, testid: str):
    return wait_for(driver, f"[data-testid=report][data-kind={kind}] [data-testid={testid}]", LIVE)


def page_errors(driver) -> list[str]:
    # Refused requests (a suspended account's session, its sign-in) are logged by the browser itself.
    return [message for message in js_errors(driver) if "Failed to load resource" not in message]


# MARK: The test


def test_moderation_reports_the_admin_queue_and_mentions(server, browser_factory, screenshot):
    ava, rex, rita, ada = (browser_factory() for _ in range(4))
    name = word()
    ava_name, rex_name, rita_name, ada_name = (f"{first} {name}" for first in ("Ava", "Rex", "Rita", "Ada"))
    ava_uid = sign_up(ava, server, ava_name)
    ava_email = ava.execute_script("return window.hearth.auth.currentUser.email")
    sign_up(rex, server, rex_name)
    rita_uid = sign_up(rita, server, rita_name)
    ada_uid = sign_up(ada, server, ada_name)

    # Ava shouts, and swears: moderation rewrites her post, and says so.
    post_id = publish(ava, "THIS IS GREAT!!!", "what the damn", PHOTO, exact_title=False)
    wait_until(ava, lambda d: text_of(d, "[data-testid=post-title]") == "This is great.", LIVE, "the title was not moderated")
    wait_until(ava, lambda d: text_of(d, "[data-testid=post-body]") == "what the ****", LIVE, "the text was not moderated")
    marker = wait_for(ava, "[data-testid=post-moderated]", LIVE)
    assert marker.text == "Edited by moderation"
    stored = admin_get(server, f"posts/{post_id}")
    assert (stored["title"], stored["body"], stored["moderated"]) == ("This is great.", "what the ****", True)
    assert admin_get(server, f"user-posts/{ava_uid}/{post_id}")["moderated"] is True
    # The original is kept for admins only: a normal person's ID token is refused it.
    assert admin_get(server, f"moderated/posts/{post_id}") == {"title": "THIS IS GREAT!!!", "body": "what the damn"}
    rex_token = run_js(rex, "return await window.hearth.auth.getIdToken();")
    status, _ = rest(server, "GET", f"moderated/posts/{post_id}", rex_token)
    assert status in (401, 403), status
    assert rest(server, "GET", "reports", rex_token)[0] in (401, 403)

    # Her comment is moderated as well.
    comment(ava, "Sorry for the crap light.", exact_text=False)
    wait_until(ava, lambda d: "Sorry for the **** light." in shown_texts(d, "[data-testid=comment-text]"), LIVE,
               "the comment was not moderated")
    ava_comment = next(key for key, value in admin_get(server, f"comments/{post_id}").items() if value["author"]["uid"] == ava_uid)
    assert shown(ava, f"[data-comment-id='{ava_comment}'] [data-testid=comment-moderated]")

    # Rex sees the marker on the post's card in the recent posts, then on its page.
    # (A fresh start: on the list he had open, the new post waits behind the "new posts" banner.)
    rex.refresh()
    wait_until(rex, lambda d: d.execute_script("return Boolean(window.hearth)"), LIVE, "the app did not start again")
    card = wait_for(rex, f"[data-testid=post-card][data-post-id='{post_id}']", LIVE)
    assert card.find_element(By.CSS_SELECTOR, "[data-testid=card-moderated]").text == "Edited by moderation"
    open_post(rex, post_id)
    wait_until(rex, lambda d: text_of(d, "[data-testid=post-title]") == "This is great.", LIVE)
    assert shown(rex, "[data-testid=post-moderated]")
    wait_for(rex, f"[data-comment-id='{ava_comment}'] [data-testid=comment-moderated]", LIVE)
    screenshot(rex, "moderated-post")

    # Rex reports the post (once: it then says so); his own comment names Rita, picked from the suggestions.
    rex.find_element(By.CSS_SELECTOR, "[data-testid=report-button]").click()
    confirm(rex, "Report this post")
    toasts_say(rex, "The post was reported.")
    wait_until(rex, lambda d: text_of(d, "[data-testid=report-button]") == "Reported", LIVE)
    field = wait_for(rex, "[data-testid=comment-input]")
    field.send_keys(f"Look, @Rita {name[:3]}")
    option = wait_for(rex, "[data-testid=mention-option]", LIVE)
    assert option.text == rita_name
    option.click()
    wait_until(rex, lambda d: field.get_attribute("value") == f"Look, @{rita_name} ", LIVE, "the mention was not inserted")
    rex.find_element(By.CSS_SELECTOR, "[data-testid=comment-submit]").click()
    wait_until(rex, lambda d: f"Look, @{rita_name}" in shown_texts(d, "[data-testid=comment-text]"), LIVE)
    all_sent(rex)
    # His own comment has no Report; Ava's has.
    rex_comment = next(key for key, value in admin_get(server, f"comments/{post_id}").items() if value["author"]["uid"] != ava_uid)
    assert not rex.find_elements(By.CSS_SELECTOR, f"[data-comment-id='{rex_comment}'] [data-testid=report-comment]")
    assert shown(rex, f"[data-comment-id='{ava_comment}'] [data-testid=report-comment]")

    # Rita is told she was mentioned.
    go(rita, "#/notifications")
    mention = wait_for(rita, "[data-testid=notification][data-type=mention]", LIVE)
    assert f"{rex_name} mentioned you" in mention.text, mention.text
    assert mention.find_element(By.CSS_SELECTOR, "a").get_attribute("href").endswith(f"#/post/{post_id}")

    # Rita reports the post and Ava's comment; a second report of the comment is not made.
    open_post(rita, post_id)
    wait_for(rita, "[data-testid=report-button]").click()
    confirm(rita)
    toasts_say(rita, "The post was reported.")
    dismiss_toasts(rita)
    wait_for(rita, f"[data-comment-id='{ava_comment}'] [data-testid=report-comment]", LIVE).click()
    confirm(rita, f"Report this comment by {ava_name}")
    toasts_say(rita, "The comment was reported.")
    all_sent(rita)
    assert admin_get(server, f"commentFlags/{post_id}/{ava_comment}") == {rita_uid: True}
    dismiss_toasts(rita)
    rita.find_element(By.CSS_SELECTOR, f"[data-comment-id='{ava_comment}'] [data-testid=report-comment]").click()
    toasts_say(rita, "You have reported this comment already.")
    assert not rita.find_elements(By.CSS_SELECTOR, "dialog[open]")

    # The server's queue: the post reported twice, the comment once.
    harness.wait_until(lambda: (admin_get(server, f"reports/posts/{post_id}") or {}).get("count") == 2, LIVE, "the post's reports queued")
    harness.wait_until(lambda: (admin_get(server, f"reports/comments/{post_id}/{ava_comment}") or {}).get("count") == 1, LIVE,
                       "the comment's report queued")

    # Ada is not an admin: no Moderation link, and the screen says it is not for her.
    go(ada, "#/")
    wait_for(ada, "[data-testid=post-card]", LIVE)
    assert not moderation_link(ada)
    go(ada, "#/moderation")
    refusal = wait_for(ada, "[data-testid=not-admin]", LIVE)
    assert "Only admins can see this" in refusal.text
    assert not ada.find_elements(By.CSS_SELECTOR, "[data-testid=report]")
    screenshot(ada, "moderation-not-admin")

    # The operator makes her an admin; her open page follows, without signing out.
    status, _ = rest(server, "PUT", f"admins/{ada_uid}", server.admin_token, True)
    assert status == 200
    wait_until(ada, moderation_link, LIVE, "the Moderation link did not appear")
    assert ada.execute_script("return window.hearth.auth.currentUser.claims.admin") is True
    assert ada.execute_script("return window.hearth.auth.currentUser.uid") == ada_uid
    # The screen she has open is the queue now: most reported first, with names and counts.
    wait_until(ada, lambda d: len(entries(d)) == 2 and all(entry["author"] == ava_name for entry in entries(d)), LIVE,
               "the queue did not show both entries")
    post_entry, comment_entry = entries(ada)
    assert post_entry == {"kind": "post", "post": post_id, "comment": None, "count": 2, "title": "Post: “This is great.”",
                          "href": f"#/post/{post_id}", "author": ava_name, "counted": "Reported by 2 people"}, post_entry
    assert comment_entry == {"kind": "comment", "post": post_id, "comment": ava_comment, "count": 1,
                             "title": "Comment: “Sorry for the **** light.”", "href": f"#/post/{post_id}", "author": ava_name,
                             "counted": "Reported by 1 person"}, comment_entry
    assert not ada.find_elements(By.CSS_SELECTOR, "[data-testid=not-admin]")
    screenshot(ada, "moderation-queue")
    # It passes the checks every screen passes, in both themes, at desktop size and on a phone
    # (where "Moderation" is under the tab bar's "More").
    dismiss_toasts(ada)
    problems = check_screen(ada, "the moderation queue", phone=False)
    phone = browser_at(browser_factory, phone=True)
    a11y_sign_in(phone, server, {"email": ada.execute_script("return window.hearth.auth.currentUser.email"), "password": PASSWORD})
    go(phone, "#/moderation")
    wait_until(phone, lambda d: len(entries(d)) == 2 and all(entry["author"] == ava_name for entry in entries(d)), LIVE,
               "the queue did not show on the phone")
    phone.find_element(By.CSS_SELECTOR, "[data-testid=more-button]").click()
    assert wait_for(phone, "[data-testid=more-sheet] a[href='#/moderation']").get_attribute("aria-current") == "page"
    phone.find_element(By.CSS_SELECTOR, "[data-testid=more-button]").click()
    screenshot(phone, "moderation-queue-phone")
    dismiss_toasts(phone)
    problems += check_screen(phone, "the moderation queue on a phone", phone=True)
    assert not problems, report(problems)

    # Dismissing the comment's reports: it leaves the queue; the comment stays.
    entry_button(ada, "comment", "report-dismiss").click()
    confirm(ada, "Dismiss the reports of this comment?")
    wait_until(ada, lambda d: [entry["kind"] for entry in entries(d)] == ["post"], LIVE, "the comment's entry did not leave")
    toasts_say(ada, "The reports were dismissed.")
    assert admin_get(server, f"comments/{post_id}/{ava_comment}")["text"] == "Sorry for the **** light."
    assert admin_get(server, f"commentFlags/{post_id}/{ava_comment}") is None
    assert shown(rex, f"[data-comment-id='{ava_comment}']")

    # Suspending Ava: her account is disabled (and the entry offers to reinstate her).
    entry_button(ada, "post", "report-suspend").click()
    confirm(ada, f"Suspend {ava_name}'s account?")
    toasts_say(ada, f"{ava_name} was suspended.")
    entry_button(ada, "post", "report-reinstate")
    harness.wait_until(lambda: sign_in_refusal(server, ava_email) == "USER_DISABLED", LIVE, "Ava's account to be disabled")
    # Her open page is signed out at once, and says why (disabling means disabled).
    toasts_say(ava, "You have been signed out. This account has been disabled.")
    wait_until(ava, lambda d: d.execute_script("return window.hearth.auth.currentUser") is None, LIVE)

    # Removing the post: it leaves the queue, and Rex, on its page, sees it gone.
    entry_button(ada, "post", "report-remove").click()
    confirm(ada, "Remove this post")
    wait_until(ada, lambda d: entries(d) == [], LIVE, "the post's entry did not leave")
    toasts_say(ada, "The post was removed.")
    wait_for(ada, "[data-testid=empty-state]", LIVE)
    missing = wait_for(rex, "[data-testid=post-missing]", LIVE)
    assert "This post was deleted" in missing.text
    # Nothing points at it any more anywhere (reports, flags, the original, comments, the mention…).
    try:
        harness.wait_until(lambda: not places_of(whole_database(server), post_id), LIVE, "every trace of the post to go")
    except harness.WaitTimeout:
        pass
    left = places_of(whole_database(server), post_id)
    assert left == [], "left behind:\n" + "\n".join(f"{place} = {json.dumps(value)[:200]}" for place, value in left)
    # Nor its photo.
    assert stored_files(server, f"{ava_uid}/full/{post_id}/") == []
    assert stored_files(server, f"{ava_uid}/thumb/{post_id}/") == []
    assert [path for path in stored_files(server, f"{ava_uid}/") if post_id in path] == []

    # Ava's next sign-in is refused: her account is disabled. (Her page, loaded again, is still
    # signed out.)
    go(ava, "#/signin")
    ava.refresh()
    wait_until(ava, lambda d: d.execute_script("return Boolean(window.hearth)"), LIVE, "the app did not start again")
    wait_until(ava, lambda d: d.execute_script("return window.hearth.auth.currentUser") is None, LIVE,
               "the suspended session was not ended")
    wait_for(ava, "[data-testid=signin-email]", LIVE).send_keys(ava_email)
    ava.find_element(By.CSS_SELECTOR, "[data-testid=signin-password]").send_keys(PASSWORD)
    ava.find_element(By.CSS_SELECTOR, "[data-testid=signin-submit]").click()
    wait_until(ava, lambda d: "This account has been disabled." in " ".join(shown_texts(d, "main [data-testid=error]")), LIVE,
               "the sign-in was not refused as disabled")
    assert ava.execute_script("return window.hearth.auth.currentUser") is None

    for driver in (ava, rex, rita, ada):
        assert page_errors(driver) == []
