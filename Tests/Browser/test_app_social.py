"""The social views in a real browser: the home feed, profiles (follow, block), search, chat and
saved posts, with two browsers as two users where something must travel between them live."""

from __future__ import annotations

import secrets
import string

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser_support import close_tab, js_errors, wait_for, wait_until

LIVE_SECONDS = 15
# The names in the search results.
PEOPLE_FOUND = '[data-testid="person-result"] .person-name'


def token() -> str:
    """A made-up word (letters only), so each test's people and posts are its own."""
    return secrets.choice(string.ascii_uppercase) + "".join(secrets.choice(string.ascii_lowercase) for _ in range(6))


def go(driver, server, hash_route: str):
    """Opens a route of the app: loads the page the first time, then only changes the hash."""
    if driver.current_url.startswith(server.url):
        driver.execute_script("location.hash = arguments[0]", hash_route)
    else:
        driver.get(f"{server.url}/{hash_route}")


def current_uid(driver):
    return driver.execute_script("return window.hearth && window.hearth.auth.currentUser && window.hearth.auth.currentUser.uid")


def sign_up(driver, server, name: str) -> str:
    """Makes an account through the app's sign-up form; answers the new user's uid."""
    go(driver, server, "#/signup")
    wait_for(driver, '[data-testid="signup-name"]').send_keys(name)
    driver.find_element(By.CSS_SELECTOR, '[data-testid="signup-email"]').send_keys(f"{name.replace(' ', '.').lower()}@example.test")
    driver.find_element(By.CSS_SELECTOR, '[data-testid="signup-password"]').send_keys("secret-password")
    driver.find_element(By.CSS_SELECTOR, '[data-testid="signup-submit"]').click()
    wait_until(driver, lambda d: d.execute_script("return location.hash") in ("", "#/"), message=f"{name} was not signed up")
    return wait_until(driver, current_uid, message="no signed-in user after sign-up")


def sign_in(driver, server, account: dict) -> str:
    go(driver, server, "#/signin")
    wait_for(driver, '[data-testid="signin-email"]').send_keys(account["email"])
    driver.find_element(By.CSS_SELECTOR, '[data-testid="signin-password"]').send_keys(account["password"])
    driver.find_element(By.CSS_SELECTOR, '[data-testid="signin-submit"]').click()
    return wait_until(driver, current_uid, message=f"{account['name']} could not sign in")


def publish(driver, server, title: str, body: str) -> str:
    """Posts through the compose form; answers the new post's ID."""
    go(driver, server, "#/compose")
    wait_for(driver, '[data-testid="compose-title"]').send_keys(title)
    driver.find_element(By.CSS_SELECTOR, '[data-testid="compose-body"]').send_keys(body)
    driver.find_element(By.CSS_SELECTOR, '[data-testid="compose-submit"]').click()
    wait_until(driver, lambda d: d.execute_script("return location.hash").startswith("#/post/"), message="the post was not published")
    return driver.execute_script("return decodeURIComponent(location.hash.slice('#/post/'.length))")


def card_titles(driver, container_css: str) -> list[str]:
    return texts(driver, f'{container_css} [data-testid="post-card"] .card-title')


def texts(driver, css: str) -> list[str]:
    """The texts of the elements matching ``css`` now (none while the view re-renders them)."""
    try:
        return [element.text for element in driver.find_elements(By.CSS_SELECTOR, css)]
    except StaleElementReferenceException:
        return []


def text_is(driver, css: str, expected: str):
    wait_until(driver, lambda d: texts(d, css)[:1] == [expected], LIVE_SECONDS, f"{css} never read {expected!r} (it reads {texts(driver, css)})")


def no_horizontal_scroll(driver) -> bool:
    return driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")


def test_following_fills_the_home_feed_and_new_posts_wait_behind_a_banner(server, browser_factory, screenshot):
    author, reader = browser_factory(), browser_factory()
    word = token()
    author_uid = sign_up(author, server, f"Nova {word}")
    sign_up(reader, server, f"Remy {word}")
    publish(author, server, f"Harbour walk {word}", "Wind and gulls. #harbour")

    # The reader follows the author from the author's profile: one write, both sides.
    go(reader, server, f"#/profile/{author_uid}")
    text_is(reader, '[data-testid="profile-heading"]', f"Nova {word}")
    text_is(reader, '[data-testid="post-count"]', "1 post")
    follow = wait_for(reader, '[data-testid="follow-button"]')
    assert follow.text == "Follow"
    follow.click()
    text_is(reader, '[data-testid="follow-button"]', "Unfollow")
    text_is(reader, '[data-testid="follower-count"]', "1 follower")
    wait_for(reader, '[data-testid="post-tile"]')
    assert reader.execute_script("return getComputedStyle(document.querySelector('.profile-counts')).listStyleType") == "none", \
        "the social views' styles (/app/social.css) are not linked from index.html"
    screenshot(reader, "social-profile")

    # The feed holds the author's post.
    go(reader, server, "#/feed")
    wait_until(reader, lambda d: f"Harbour walk {word}" in card_titles(d, '[data-testid="feed-list"]'), LIVE_SECONDS,
               "the followed author's post is not in the feed")

    # A new post by the author waits behind the banner, then shows on top.
    publish(author, server, f"Night swim {word}", "Cold and bright.")
    banner = wait_for(reader, '[data-testid="new-posts-banner"]', LIVE_SECONDS)
    assert "1 new post" in banner.text
    assert card_titles(reader, '[data-testid="feed-list"]') == [f"Harbour walk {word}"], "the list moved before the banner was used"
    screenshot(reader, "social-feed-banner")
    banner.click()
    wait_until(reader, lambda d: card_titles(d, '[data-testid="feed-list"]') == [f"Night swim {word}", f"Harbour walk {word}"],
               LIVE_SECONDS, "the new post did not appear on top after the banner was used")
    assert not reader.find_element(By.CSS_SELECTOR, '[data-testid="new-posts-banner"]').is_displayed()
    screenshot(reader, "social-feed")
    assert js_errors(reader) == [] and js_errors(author) == []


def test_search_finds_people_by_name_prefix_and_posts_by_hashtag_and_words(server, browser, screenshot):
    # Searching needs no account. "Carol Diaz" is found by her last name's start too.
    go(browser, server, "#/search?q=dia")
    wait_until(browser, lambda d: "Carol Diaz" in texts(d, PEOPLE_FOUND),
               LIVE_SECONDS, "Carol Diaz was not found by 'dia'")
    assert browser.find_element(By.CSS_SELECTOR, '[data-testid="search-input"]').get_attribute("value") == "dia"

    field = browser.find_element(By.CSS_SELECTOR, '[data-testid="search-input"]')
    field.clear()
    field.send_keys("#sunset", Keys.ENTER)
    wait_until(browser, lambda d: card_titles(d, '[data-testid="search-posts"]') == ["Evening at the harbour"], LIVE_SECONDS,
               "the #sunset post was not found")
    assert not browser.find_elements(By.CSS_SELECTOR, '[data-testid="person-result"]')
    assert browser.execute_script("return location.hash") == "#/search?q=%23sunset"

    field.clear()
    field.send_keys("an")
    wait_until(browser, lambda d: "Ann Lee" in texts(d, PEOPLE_FOUND),
               LIVE_SECONDS, "Ann Lee was not found by 'an'")
    wait_until(browser, lambda d: "Weekend plans?" in card_titles(d, '[data-testid="search-posts"]'), LIVE_SECONDS,
               "posts containing 'an' were not listed")
    screenshot(browser, "social-search")
    assert js_errors(browser) == []


def test_a_chat_message_arrives_live_and_unread_counts_show_in_the_list(server, browser_factory, screenshot):
    sender, receiver = browser_factory(), browser_factory()
    word = token()
    sender_uid = sign_up(sender, server, f"Ada {word}")
    receiver_uid = sign_up(receiver, server, f"Bea {word}")

    # Nobody chats with themself: said in words.
    go(sender, server, f"#/chat/with/{sender_uid}")
    text_is(sender, '[data-testid="error"]', "You cannot message yourself.")

    # The sender starts the conversation from the receiver's profile.
    go(sender, server, f"#/profile/{receiver_uid}")
    wait_for(sender, '[data-testid="message-button"]').click()
    wait_for(sender, '[data-testid="chat-input"]').send_keys("Hello there", Keys.ENTER)
    wait_until(sender, lambda d: texts(d, '[data-testid="chat-message"] .chat-text') == ["Hello there"],
               LIVE_SECONDS, "the sender does not see their message")

    # The receiver's list shows the conversation with one unread message.
    go(receiver, server, "#/chats")
    text_is(receiver, '[data-testid="chat-row"] [data-testid="unread-count"]', "1")
    assert f"Ada {word}" in " ".join(texts(receiver, '[data-testid="chat-row"]'))
    screenshot(receiver, "social-chat-list")

    # Opening it shows the message and marks it read.
    receiver.find_element(By.CSS_SELECTOR, '[data-testid="chat-row"]').click()
    wait_until(receiver, lambda d: "Hello there" in " ".join(texts(d, '[data-testid="chat-messages"]')), LIVE_SECONDS, "the message is not shown")

    # A message sent while the receiver has the conversation open arrives live.
    sender.find_element(By.CSS_SELECTOR, '[data-testid="chat-input"]').send_keys("Coffee at four?", Keys.ENTER)
    wait_until(receiver, lambda d: "Coffee at four?" in " ".join(texts(d, '[data-testid="chat-messages"]')), LIVE_SECONDS,
               "the new message did not arrive live")
    receiver.find_element(By.CSS_SELECTOR, '[data-testid="chat-input"]').send_keys("Yes!", Keys.ENTER)
    wait_until(sender, lambda d: "Yes!" in " ".join(texts(d, '[data-testid="chat-messages"]')), LIVE_SECONDS, "the reply did not arrive live")
    # Addresses in a message are links, as in posts; typed markup stays text.
    sender.find_element(By.CSS_SELECTOR, '[data-testid="chat-input"]').send_keys(
        "Menu: https://example.com/menu <b>bold</b>", Keys.ENTER)
    link = wait_until(receiver, lambda d: d.execute_script("""
        const link = [...document.querySelectorAll('[data-testid=chat-message] [data-testid=text-link]')].pop();
        const text = link?.closest('.chat-text');
        return link && { href: link.getAttribute('href'), rel: link.rel, markup: text.querySelectorAll('b').length,
                         text: text.textContent };"""), LIVE_SECONDS, "the address is not a link")
    assert link == {"href": "https://example.com/menu", "rel": "noopener noreferrer nofollow ugc", "markup": 0,
                    "text": "Menu: https://example.com/menu <b>bold</b>"}
    screenshot(receiver, "social-chat")

    # Read while open: back in the list there is no badge; a new message brings one, live.
    go(receiver, server, "#/chats")
    wait_for(receiver, '[data-testid="chat-row"]')
    wait_until(receiver, lambda d: not d.find_elements(By.CSS_SELECTOR, '[data-testid="unread-count"]'), LIVE_SECONDS,
               "the conversation was not marked read")
    sender.find_element(By.CSS_SELECTOR, '[data-testid="chat-input"]').send_keys("See you", Keys.ENTER)
    text_is(receiver, '[data-testid="chat-row"] [data-testid="unread-count"]', "1")
    assert "See you" in " ".join(texts(receiver, '[data-testid="chat-row"]'))
    assert js_errors(receiver) == [] and js_errors(sender) == []


def test_chat_shows_whether_the_other_person_has_the_app_open(server, browser_factory, screenshot):
    """Presence over the realtime protocol: `.info/connected` and onDisconnect. The friend's
    open app marks them online; leaving the page (its connection ends) makes the server write
    offline with the time; coming back and signing out both show."""
    viewer, friend = browser_factory(), browser_factory()
    word = token()
    sign_up(viewer, server, f"Cy {word}")
    friend_uid = sign_up(friend, server, f"Di {word}")
    presence = '[data-testid="chat-presence"]'

    go(viewer, server, f"#/chat/with/{friend_uid}")
    wait_until(viewer, lambda d: texts(d, presence) == ["Online"], LIVE_SECONDS, "the friend is not shown online")
    screenshot(viewer, "social-chat-presence")

    # The friend closes the app's tab: nothing is sent, the connection just ends.
    close_tab(friend)
    wait_until(viewer, lambda d: texts(d, presence)[:1] and texts(d, presence)[0].startswith("Last seen"), LIVE_SECONDS,
               "the friend's leaving is not shown")

    # Back: online again (the registration is made anew on each connection).
    go(friend, server, "#/")
    wait_until(viewer, lambda d: texts(d, presence) == ["Online"], LIVE_SECONDS, "the friend's return is not shown")

    # Signing out says offline at once, and leaves nothing for the connection's end.
    go(friend, server, "#/account")
    wait_for(friend, '[data-testid="sign-out"]').click()
    wait_until(viewer, lambda d: texts(d, presence)[:1] and texts(d, presence)[0].startswith("Last seen"), LIVE_SECONDS,
               "signing out does not show")
    assert js_errors(viewer) == [] and js_errors(friend) == []


def test_a_saved_post_is_listed_under_saved(server, browser, screenshot):
    sign_up(browser, server, f"Sam {token()}")
    go(browser, server, "#/saved")
    wait_until(browser, lambda d: "Nothing saved yet" in d.find_element(By.CSS_SELECTOR, "main").text, LIVE_SECONDS)

    post_id = browser.execute_script("""
        return window.hearth.db.ref('posts').get().then((snapshot) => {
            const posts = snapshot.val();
            return Object.keys(posts).find((id) => posts[id].title === 'Up in the Alps');
        });
    """)
    go(browser, server, f"#/post/{post_id}")
    wait_for(browser, '[data-testid="save-button"]').click()
    wait_until(browser, lambda d: d.find_element(By.CSS_SELECTOR, '[data-testid="save-button"]').get_attribute("aria-pressed") == "true",
               LIVE_SECONDS, "the post was not saved")

    go(browser, server, "#/saved")
    wait_until(browser, lambda d: card_titles(d, '[data-testid="saved-list"]') == ["Up in the Alps"], LIVE_SECONDS,
               "the saved post is not listed")
    screenshot(browser, "social-saved")
    assert js_errors(browser) == []


def test_blocking_unfollows_and_hides_the_blocker_from_search(server, browser_factory):
    blocker, blocked = browser_factory(), browser_factory()
    word = token()
    blocker_uid = sign_up(blocker, server, f"Kit {word}")
    blocked_uid = sign_up(blocked, server, f"Lou {word}")

    go(blocker, server, f"#/profile/{blocked_uid}")
    wait_for(blocker, '[data-testid="follow-button"]').click()
    text_is(blocker, '[data-testid="follower-count"]', "1 follower")

    blocker.find_element(By.CSS_SELECTOR, '[data-testid="block-button"]').click()
    wait_for(blocker, '[data-testid="confirm-ok"]').click()
    text_is(blocker, '[data-testid="block-button"]', "Unblock")
    text_is(blocker, '[data-testid="follower-count"]', "0 followers")
    assert " ".join(texts(blocker, '[data-testid="follow-button"]')) == "Follow"

    # The blocked person no longer finds the blocker, but still finds others.
    go(blocked, server, f"#/search?q={word.lower()}")
    wait_until(blocked, lambda d: texts(d, PEOPLE_FOUND) == [f"Lou {word}"],
               LIVE_SECONDS, "the search should list only the blocked person themself")

    # The blocker's profile page still opens for them, with the blocker's name.
    go(blocked, server, f"#/profile/{blocker_uid}")
    text_is(blocked, '[data-testid="profile-heading"]', f"Kit {word}")

    # Unblocking works too; the blocker is findable again.
    blocker.find_element(By.CSS_SELECTOR, '[data-testid="block-button"]').click()
    text_is(blocker, '[data-testid="block-button"]', "Block")
    go(blocked, server, f"#/search?q={word.lower()}")
    wait_until(blocked, lambda d: sorted(texts(d, PEOPLE_FOUND))
               == [f"Kit {word}", f"Lou {word}"], LIVE_SECONDS, "after unblocking both should be found")
    assert js_errors(blocker) == [] and js_errors(blocked) == []


def test_signed_out_visitors_are_asked_to_sign_in(server, browser):
    for route in ("#/feed", "#/chats", "#/saved"):
        go(browser, server, route)
        wait_until(browser, lambda d: "Sign in to" in d.find_element(By.CSS_SELECTOR, "main").text, LIVE_SECONDS, f"{route} did not ask to sign in")


def test_social_screens_fit_a_phone(server, browser_factory, screenshot):
    phone = browser_factory(phone=True)
    sign_in(phone, server, server.account("Ann"))
    bob_uid = phone.execute_script("""
        return window.hearth.db.ref('people').get().then((snapshot) => {
            const people = snapshot.val();
            return Object.keys(people).find((uid) => people[uid].full_name === 'Bob Martin');
        });
    """)
    screens = [
        ("#/feed", '[data-testid="post-card"]', "social-phone-feed"),
        (f"#/profile/{bob_uid}", '[data-testid="post-tile"]', "social-phone-profile"),
        ("#/search?q=bo", '[data-testid="person-result"]', "social-phone-search"),
        ("#/chats", '[data-testid="chat-row"]', "social-phone-chat-list"),
        (f"#/chat/with/{bob_uid}", '[data-testid="chat-message"]', "social-phone-chat"),
    ]
    for route, ready, name in screens:
        go(phone, server, route)
        wait_for(phone, ready, LIVE_SECONDS)
        assert no_horizontal_scroll(phone), f"{route} scrolls sideways on a phone"
        screenshot(phone, name)

    # On the chat screen a toast shows above the message field, not over it.
    phone.execute_script("import('/app/ui.js').then((ui) => ui.toast('Saved a draft'))")
    toast = wait_for(phone, '[data-testid="toast"]')
    field = phone.find_element(By.CSS_SELECTOR, '[data-testid="chat-input"]')
    assert toast.rect["y"] + toast.rect["height"] <= field.rect["y"], "the toast covers the message field"
    screenshot(phone, "social-phone-chat-toast")

    # Relative times move on while the screen stays open.
    times = phone.find_elements(By.CSS_SELECTOR, '[data-testid="chat-message"] time[data-ago]')
    assert times, "chat messages show no time"
    phone.execute_script("""
        arguments[0].dataset.ago = String(Date.now() - 2 * 3600 * 1000);
        return import('/app/ui.js').then((ui) => ui.refreshTimes());
    """, times[0])
    wait_until(phone, lambda d: times[0].text == "2 hours ago", 5, f"the time still says {times[0].text!r}")
    assert js_errors(phone) == []
