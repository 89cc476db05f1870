"""What a person does in the web app, as the browser tests drive it: publish through the compose
form, open a post, comment, and wait until the server has every write. Shared by the tests of
account deletion, moderation and push notifications."""

from __future__ import annotations

from selenium.webdriver.common.by import By

from browser_support import shown_texts, tap, wait_for, wait_until
from test_app_core import go

LIVE = 20


def hash_of(driver) -> str:
    return driver.execute_script("return location.hash")


def all_sent(driver):
    """Waits until the server has acknowledged every write this page made."""
    wait_until(driver, lambda d: d.execute_script("return window.hearth.db.pendingWriteCount()") == 0, LIVE,
               "writes are still waiting to be sent")


def publish(driver, title: str, body: str, photo=None, exact_title: bool = True) -> str:
    """Posts through the compose form (with a photo, when given) and waits until the server has
    it; answers the post's ID. ``exact_title=False`` for a title the server's moderation changes."""
    go(driver, "#/compose")
    wait_for(driver, "[data-testid=compose-title]").send_keys(title)
    driver.find_element(By.CSS_SELECTOR, "[data-testid=compose-body]").send_keys(body)
    if photo:
        driver.find_element(By.CSS_SELECTOR, "[data-testid=compose-photos]").send_keys(str(photo))
        wait_for(driver, "[data-testid=photo-preview] img")
    tap(driver, driver.find_element(By.CSS_SELECTOR, "[data-testid=compose-submit]"))
    wait_until(driver, lambda d: hash_of(d).startswith("#/post/"), LIVE, f"{title!r} was not published")
    shown = wait_for(driver, "[data-testid=post-title]", LIVE).text
    if exact_title:
        assert shown == title, (shown, title)
    all_sent(driver)
    return driver.execute_script("return decodeURIComponent(location.hash.slice('#/post/'.length))")


def open_post(driver, post_id: str):
    go(driver, f"#/post/{post_id}")
    wait_for(driver, "[data-testid=post-title]", LIVE)


def comment(driver, text: str, exact_text: bool = True):
    """Comments on the open post and waits until the server has it (and, with ``exact_text``,
    until it shows as written)."""
    wait_for(driver, "[data-testid=comment-input]", LIVE).send_keys(text)
    driver.find_element(By.CSS_SELECTOR, "[data-testid=comment-submit]").click()
    if exact_text:
        wait_until(driver, lambda d: text in shown_texts(d, "[data-testid=comment-text]"), LIVE, f"the comment {text!r} does not show")
    all_sent(driver)
