"""The web app's accessibility and chrome (issue 20), in headless chromium.

Every screen, signed in and signed out, at a 360 px phone and at desktop size, in the light and
the dark theme, goes through checks run on the rendered page (accessibility_audit.js; axe-core is
not available here): text contrast from the computed colours, accessible names, landmarks, one
h1, focus order (real Tab presses, compared with the document's order) with a visible focus
indicator that nothing clips or hides, and nothing wider than the phone. Then the chrome, each
part with its own test: the phone's tab bar (every destination, "More", absent on desktops),
toasts (dismissed by button and Escape, announced with the right role, readable in both themes,
above the tab bar and a chat's message box, kept while hovered or focused), form errors in plain
words, skeletons before content, empty states with a next step, text-only post cards.

Violations are printed with a selector for each, so one run shows everything to fix.
"""

from __future__ import annotations

import json
import urllib.request
import uuid
from pathlib import Path

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser_support import js_errors, wait_for, wait_until
from test_app_core import PHOTO as DEMO_PHOTO, emulate_dark, go, open_app, run_js

AUDIT = (Path(__file__).parent / "accessibility_audit.js").read_text()
LIVE = 20
PHONE_WIDTH, PHONE_HEIGHT = 360, 740
# The navigation's destinations for a signed-in person, in order (others may join them).
DESTINATIONS = ["#/", "#/top", "#/feed", "#/search", "#/chats", "#/saved", "#/mine"]
# Tab presses walked per screen at most (every stop is checked).
MAX_TAB_STOPS = 80


# MARK: Helpers


def browser_at(browser_factory, phone: bool):
    """A desktop browser, or one shown as a 360 × 740 phone (a touch screen's metrics)."""
    driver = browser_factory()
    if phone:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": PHONE_WIDTH, "height": PHONE_HEIGHT, "deviceScaleFactor": 2, "mobile": True})
    return driver


def sign_in(driver, server, account: dict) -> str:
    open_app(driver, server, "#/signin")
    wait_for(driver, "[data-testid=signin-email]").send_keys(account["email"])
    driver.find_element(By.CSS_SELECTOR, "[data-testid=signin-password]").send_keys(account["password"])
    driver.find_element(By.CSS_SELECTOR, "[data-testid=signin-submit]").click()
    wait_until(driver, lambda d: d.execute_script("return location.hash") in ("", "#/"), LIVE, "sign-in did not finish")
    return driver.execute_script("return window.hearth.auth.currentUser.uid")


def sign_up(driver, server, name: str) -> str:
    open_app(driver, server, "#/signup")
    wait_for(driver, "[data-testid=signup-name]").send_keys(name)
    driver.find_element(By.CSS_SELECTOR, "[data-testid=signup-email]").send_keys(f"a11y-{uuid.uuid4().hex[:8]}@example.com")
    driver.find_element(By.CSS_SELECTOR, "[data-testid=signup-password]").send_keys("correct-horse-7")
    driver.find_element(By.CSS_SELECTOR, "[data-testid=signup-submit]").click()
    wait_until(driver, lambda d: d.execute_script("return location.hash") in ("", "#/"), LIVE, "sign-up did not finish")
    return driver.execute_script("return window.hearth.auth.currentUser.uid")


def admin_get(server, path: str):
    request = urllib.request.Request(f"{server.url}/{path}.json", headers={"Authorization": f"Bearer {server.admin_token}"})
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read())


def demo_ids(server) -> dict:
    """A demo post (one with a photo) and Bob's uid."""
    people = admin_get(server, "people")
    bob = next(uid for uid, person in people.items() if person.get("full_name") == "Bob Martin")
    posts = admin_get(server, "posts")
    post = next(post_id for post_id, post in sorted(posts.items()) if post.get("photos") and post["author"]["uid"] == bob)
    return {"post": post, "bob": bob}


def leaving(driver):
    """Marks the screen shown as the one being left: `settled` waits for the next one."""
    driver.execute_script("document.getElementById('main').firstElementChild?.setAttribute('data-left', '')")


def settled(driver) -> bool:
    """The next view has drawn what it loads: no skeleton, no "Loading…" (as screen-cache.js's hasSettled)."""
    return driver.execute_script("""
        const main = document.getElementById('main');
        const view = main.firstElementChild;
        if (!view || view.hasAttribute('data-left') || main.querySelector('.skeleton') || main.dataset.cachedPaint) return false;
        const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          if (node.data.trim().startsWith('Loading')) return false;
        }
        return true;""")


def open_screen(driver, route: str, ready: str | None = None):
    if driver.execute_script("return location.hash") != route:
        leaving(driver)
    go(driver, route)
    wait_until(driver, lambda d: d.execute_script("return location.hash") == route, 5, f"{route} did not open")
    if ready:
        wait_for(driver, ready, LIVE)
    wait_until(driver, settled, LIVE, f"{route} did not finish loading")
    dismiss_toasts(driver)


def dismiss_toasts(driver):
    driver.execute_script("document.querySelectorAll('#toasts > *').forEach((toast) => toast.dismiss ? toast.dismiss() : toast.remove())")


def audit(driver, overflow: bool, targets: bool = False) -> list[dict]:
    """The page checks; with `targets`, also that what is tapped on its own is 44×44 px (the
    app on a phone)."""
    return driver.execute_script(AUDIT + "\nreturn hearthAudit(arguments[0]);", {"overflow": overflow, "targets": targets})


COMPOUND_INPUTS = ("date", "time", "datetime-local", "month", "week")


def tab_walk(driver, again: bool = True) -> list[dict]:
    """Presses Tab from the top of the page through every tabbable element: each stop must be
    the next one in the document's order and show a focus indicator nothing clips or hides. A
    stop that left the page during the walk (a toast whose time ran out) walks again, once."""
    expected = driver.execute_script(AUDIT + """
        document.getElementById('walk-start')?.remove();
        const start = document.createElement('span');
        start.id = 'walk-start';
        start.tabIndex = -1;
        // Inside an open modal dialog, the walk starts at its top (the page behind is inert).
        (document.querySelector('dialog:modal') ?? document.body).prepend(start);
        window.scrollTo(0, 0);
        start.focus();
        return hearthTabbables().map(hearthSelector);""")
    problems = []
    try:
        previous = None
        for index, selector in enumerate(expected[:MAX_TAB_STOPS]):
            ActionChains(driver).send_keys(Keys.TAB).perform()
            stop = driver.execute_script(AUDIT + "\nreturn hearthFocusCheck();")
            # A date or time input has a Tab stop for each of its fields (day, month, hour…).
            for _ in range(6):
                if stop["selector"] != previous or driver.execute_script("return document.activeElement?.type") not in COMPOUND_INPUTS:
                    break
                ActionChains(driver).send_keys(Keys.TAB).perform()
                stop = driver.execute_script(AUDIT + "\nreturn hearthFocusCheck();")
            previous = stop["selector"]
            if stop["selector"] != selector:
                if again and not driver.execute_script("return Boolean(document.querySelector(arguments[0]))", selector):
                    return tab_walk(driver, again=False)
                problems.append({"rule": "focus-order", "selector": stop["selector"],
                                 "detail": f"Tab stop {index + 1} is here; the document's order says {selector}"})
                break
            problems += [{"rule": "focus", "selector": stop["selector"], "detail": problem} for problem in stop["problems"]]
    finally:
        driver.execute_script("document.getElementById('walk-start')?.remove(); document.activeElement?.blur?.();")
    return problems


def check_screen(driver, label: str, phone: bool, targets: bool = False) -> list[str]:
    """Every check on the screen shown, in both themes; the problems in words."""
    found = []
    try:
        for dark in (False, True):
            emulate_dark(driver, dark)
            theme = "dark" if dark else "light"
            for violation in audit(driver, phone, targets) + tab_walk(driver):
                found.append(f"{label} [{theme}] {violation['rule']}: {violation['selector']}: {violation['detail']}")
    finally:
        emulate_dark(driver, False)
    return list(dict.fromkeys(found))


def report(problems: list[str]) -> str:
    return f"{len(problems)} accessibility problems:\n" + "\n".join(problems)


def signed_in_screens(ids: dict) -> list[tuple[str, str | None]]:
    return [
        ("#/", "[data-testid=post-card]"),
        ("#/top", "[data-testid=post-card]"),
        ("#/mine", None),
        ("#/feed", "[data-testid=post-card]"),
        (f"#/post/{ids['post']}", "[data-testid=post-title]"),
        ("#/compose", "[data-testid=compose-title]"),
        ("#/signin", "main h1"),
        ("#/signup", "main h1"),
        ("#/account", "[data-testid=sign-out]"),
        ("#/forgot", "[data-testid=forgot-email]"),
        (f"#/profile/{ids['bob']}", "[data-testid=post-tile]"),
        ("#/search?q=bo", "[data-testid=person-result]"),
        ("#/tag/sunset", "[data-testid=post-card]"),
        ("#/tag/nothing_tagged_here", "[data-testid=empty-state]"),
        ("#/chats", "[data-testid=chat-row]"),
        (f"#/chat/with/{ids['bob']}", "[data-testid=chat-message]"),
        ("#/saved", None),
        ("#/notifications", "[data-testid=notification]"),
        ("#/settings/notifications", "[data-testid=push-kind-follow]"),
        # Ann is no admin: the moderation screen says it is only for admins (the queue itself
        # is checked in test_app_moderation.py, as an admin).
        ("#/moderation", "[data-testid=not-admin]"),
        ("#/no-such-page", "main h1"),
    ]


def signed_out_screens(ids: dict) -> list[tuple[str, str | None]]:
    return [
        ("#/", "[data-testid=post-card]"),
        ("#/top", "[data-testid=post-card]"),
        (f"#/post/{ids['post']}", "[data-testid=post-title]"),
        ("#/signin", "[data-testid=signin-email]"),
        ("#/signup", "[data-testid=signup-name]"),
        ("#/forgot", "[data-testid=forgot-email]"),
        (f"#/profile/{ids['bob']}", "[data-testid=post-tile]"),
        ("#/search?q=bo", "[data-testid=person-result]"),
        ("#/tag/sunset", "[data-testid=post-card]"),
        ("#/no-such-page", "main h1"),
        # The screens that need an account say so (with a way to sign in).
        ("#/mine", "main h1"), ("#/feed", "main h1"), ("#/chats", "main h1"), ("#/saved", "main h1"),
        ("#/account", "main h1"), ("#/compose", "main h1"), ("#/notifications", "main h1"), ("#/moderation", "main h1"),
        ("#/settings/notifications", "main h1"),
    ]


# MARK: Every screen


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone-360"])
@pytest.mark.parametrize("signed_in", [False, True], ids=["signed-out", "signed-in"])
def test_every_screen_passes_the_accessibility_checks(server, browser_factory, phone, signed_in):
    ids = demo_ids(server)
    driver = browser_at(browser_factory, phone)
    if signed_in:
        sign_in(driver, server, server.account("Ann"))
        screens = signed_in_screens(ids)
    else:
        open_app(driver, server, "#/")
        screens = signed_out_screens(ids)
    size = "phone" if phone else "desktop"
    who = "signed in" if signed_in else "signed out"
    problems = []
    for route, ready in screens:
        open_screen(driver, route, ready)
        problems += check_screen(driver, f"{size} {who} {route}", phone, targets=phone)
    if signed_in:
        # One's own profile, being edited: the form, and the crop of a chosen photo.
        ann = driver.execute_script("return window.hearth.auth.currentUser.uid")
        open_screen(driver, f"#/profile/{ann}", "[data-testid=edit-profile]")
        driver.find_element(By.CSS_SELECTOR, "[data-testid=edit-profile]").click()
        wait_for(driver, "[data-testid=profile-editor]")
        driver.find_element(By.CSS_SELECTOR, "[data-testid=edit-photo]").send_keys(str(DEMO_PHOTO))
        wait_for(driver, "[data-testid=crop-area]", LIVE)
        problems += check_screen(driver, f"{size} {who} profile editing", phone)
    if phone and signed_in:
        # The tab bar's "More" sheet, open.
        open_screen(driver, "#/", "[data-testid=post-card]")
        driver.find_element(By.CSS_SELECTOR, "[data-testid=more-button]").click()
        wait_for(driver, "[data-testid=more-sheet]")
        problems += check_screen(driver, f"{size} {who} More sheet", phone)
    assert not problems, report(problems)
    assert js_errors(driver) == []


# MARK: The phone's tab bar


def nav_state(driver) -> dict:
    return driver.execute_script("""
        const nav = document.getElementById('nav');
        const box = nav.getBoundingClientRect();
        const position = getComputedStyle(nav).position;
        const tabs = position === 'fixed' ? [...nav.querySelectorAll('.nav-list > li > .nav-link')] : [];
        return {
          position,
          top: box.top, bottom: box.bottom, height: box.height, viewport: innerHeight,
          tabs: tabs.map((tab) => tab.querySelector('.nav-label').textContent),
          iconsHidden: tabs.every((tab) => tab.querySelector('svg[aria-hidden="true"]')),
          current: [...nav.querySelectorAll('[aria-current="page"]')].map((link) => link.getAttribute('href')),
          links: [...nav.querySelectorAll('a')].map((link) => link.getAttribute('href')),
        };""")


def test_the_phone_tab_bar_reaches_every_destination(server, browser_factory, screenshot):
    phone = browser_at(browser_factory, phone=True)
    open_app(phone, server, "#/")
    wait_for(phone, "[data-testid=post-card]", LIVE)

    # Signed out: Recent, Top and Search, at the bottom of the screen, with icons and words.
    state = nav_state(phone)
    assert state["position"] == "fixed" and abs(state["bottom"] - state["viewport"]) < 1, state
    assert state["tabs"] == ["Recent", "Top", "Search"] and state["iconsHidden"], state
    assert state["current"] == ["#/"]
    assert not phone.find_elements(By.CSS_SELECTOR, "[data-testid=more-button]")
    # It leaves room for the device's safe area (a notch or a home bar).
    assert phone.execute_script("""
        return [...document.styleSheets].flatMap((sheet) => [...sheet.cssRules]).filter((rule) => rule.media)
          .flatMap((rule) => [...rule.cssRules]).some((rule) => rule.selectorText === '.app-nav'
            && rule.style.getPropertyValue('padding').includes('env(safe-area-inset-bottom)'));""")
    phone.find_element(By.XPATH, "//nav[@id='nav']//a[.//span[text()='Top']]").click()
    wait_until(phone, lambda d: nav_state(d)["current"] == ["#/top"], 5, "Top did not become the current tab")

    # Signed in: Recent, Feed, Search, Chats and "More"; every destination is a tab or under "More".
    sign_in(phone, server, server.account("Ann"))
    wait_for(phone, "[data-testid=post-card]", LIVE)
    dismiss_toasts(phone)
    state = nav_state(phone)
    assert state["tabs"][:4] == ["Recent", "Feed", "Search", "Chats"] and state["tabs"][-1] == "More" and len(state["tabs"]) <= 5, state
    screenshot(phone, "phone-tab-bar")
    destinations = phone.execute_script(
        "return [...document.querySelectorAll('#nav a')].map((link) => [link.getAttribute('href'), link.classList.contains('more-link')])")
    assert set(DESTINATIONS) <= {href for href, _ in destinations}, destinations
    assert {href for href, in_more in destinations if in_more} >= {"#/top", "#/saved", "#/mine"}
    for href, in_more in destinations:
        if in_more:
            more = phone.find_element(By.CSS_SELECTOR, "[data-testid=more-button]")
            more.click()
            sheet = wait_for(phone, "[data-testid=more-sheet]")
            assert more.get_attribute("aria-expanded") == "true"
            sheet.find_element(By.CSS_SELECTOR, f"a[href='{href}']").click()
        else:
            phone.find_element(By.CSS_SELECTOR, f"#nav .nav-list .nav-link[href='{href}']").click()
        wait_until(phone, lambda d: d.execute_script("return location.hash") == href, 5, f"{href} did not open")
        wait_until(phone, lambda d: nav_state(d)["current"] == [href], 5, f"{href} is not marked current")
        if in_more:
            # The sheet closed; "More" shows that the page is one of its.
            assert not phone.find_element(By.CSS_SELECTOR, "[data-testid=more-sheet]").is_displayed()
            assert "holds-current" in phone.find_element(By.CSS_SELECTOR, "[data-testid=more-button]").get_attribute("class")

    # Escape closes the sheet and gives focus back to "More"; so does a tap elsewhere.
    more = phone.find_element(By.CSS_SELECTOR, "[data-testid=more-button]")
    more.click()
    wait_for(phone, "[data-testid=more-sheet] a").send_keys(Keys.ESCAPE)
    wait_until(phone, lambda d: not d.find_element(By.CSS_SELECTOR, "[data-testid=more-sheet]").is_displayed(), 5)
    assert phone.execute_script("return document.activeElement.dataset.testid") == "more-button"
    assert more.get_attribute("aria-expanded") == "false"
    more.click()
    emulate_dark(phone, True)
    wait_for(phone, "[data-testid=more-sheet]")
    screenshot(phone, "phone-tab-bar-more-dark")
    phone.find_element(By.CSS_SELECTOR, "main h1").click()
    wait_until(phone, lambda d: not d.find_element(By.CSS_SELECTOR, "[data-testid=more-sheet]").is_displayed(), 5, "a tap elsewhere did not close it")
    go(phone, "#/")
    wait_for(phone, "[data-testid=post-card]", LIVE)
    screenshot(phone, "phone-tab-bar-dark")
    emulate_dark(phone, False)

    # Nothing stays under the bar: the page's end scrolls clear of it.
    go(phone, "#/")
    wait_for(phone, "[data-testid=post-card]", LIVE)
    clearance = phone.execute_script("""
        window.scrollTo(0, document.documentElement.scrollHeight);
        const cards = document.querySelectorAll('[data-testid=post-card]');
        return document.getElementById('nav').getBoundingClientRect().top - cards[cards.length - 1].getBoundingClientRect().bottom;""")
    assert clearance >= 0, f"the last card ends {-clearance}px under the tab bar"
    assert js_errors(phone) == []


FIRST_PAINT_PROBE = """
document.addEventListener('DOMContentLoaded', () => {
  const main = document.getElementById('main');
  window.__firstPaint = {
    appStarted: Boolean(window.hearth),
    links: [...document.querySelectorAll('#nav a')].map((link) => link.getAttribute('href')),
    shapes: main.querySelectorAll('.skeleton').length,
    hidden: [...main.querySelectorAll('.skeleton')].every((shape) => shape.closest('[aria-hidden="true"]')),
    status: [...main.querySelectorAll('[role=status]')].map((status) => status.textContent.trim()),
    text: main.innerText.trim(),
  };
});
"""


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone-360"])
def test_the_first_paint_has_the_navigation_and_a_skeleton(server, browser_factory, phone):
    """Before the app's modules run (a first visit: nothing kept to paint), the page already
    shows the navigation (as a tab bar on phones) and the shape of a list, not bare text."""
    driver = browser_at(browser_factory, phone)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": FIRST_PAINT_PROBE})
    open_app(driver, server, "#/")
    first = driver.execute_script("return window.__firstPaint")
    assert first["appStarted"] is False
    assert first["links"] == ["#/", "#/top", "#/search"]
    assert first["shapes"] >= 1 and first["hidden"] and first["status"] == ["Loading Hearth…"] and first["text"] == "Loading Hearth…", first
    # Then the app draws its own, the same way.
    wait_for(driver, "[data-testid=post-card]", LIVE)
    assert nav_state(driver)["current"] == ["#/"]
    if phone:
        assert nav_state(driver)["tabs"] == ["Recent", "Top", "Search"]


def test_desktops_keep_a_top_navigation_and_no_tab_bar(server, browser_factory):
    desktop = browser_at(browser_factory, phone=False)
    sign_in(desktop, server, server.account("Ann"))
    wait_for(desktop, "[data-testid=post-card]", LIVE)
    state = nav_state(desktop)
    assert state["position"] != "fixed" and state["top"] < 150, state
    assert state["tabs"] == [] and not desktop.find_elements(By.CSS_SELECTOR, "[data-testid=more-button]")
    assert [link for link in state["links"] if link in DESTINATIONS] == DESTINATIONS, state["links"]
    assert state["current"] == ["#/"]
    # All in sight, none cut off.
    assert desktop.execute_script("""
        return [...document.querySelectorAll('#nav a')].every((link) => {
          const box = link.getBoundingClientRect();
          return box.left >= 0 && box.right <= document.documentElement.clientWidth && box.height > 0;
        });""")
    # Narrowed to a phone's width, the same page turns it into the tab bar.
    desktop.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": PHONE_WIDTH, "height": PHONE_HEIGHT, "deviceScaleFactor": 2, "mobile": True})
    wait_until(desktop, lambda d: nav_state(d)["tabs"][-1:] == ["More"], 5, "no tab bar at a phone's width")
    assert nav_state(desktop)["position"] == "fixed"


# MARK: Toasts


def show_toast(driver, message: str, kind: str = "info", duration: int | None = None):
    options = "{}" if duration is None else f"{{ duration: {duration} }}"
    driver.execute_script(f"return import('/app/ui.js').then((ui) => {{ ui.toast(arguments[0], arguments[1], {options}); }})", message, kind)


def toasts(driver) -> list[dict]:
    return driver.execute_script(AUDIT + """
        // Measured as they stay, not halfway through their entrance.
        for (const animation of document.getAnimations()) if (animation.effect?.target?.closest?.('#toasts')) animation.finish();
        return [...document.querySelectorAll('#toasts > .toast')].map((toast) => {
          const text = toast.querySelector('.toast-text');
          const style = getComputedStyle(text);
          const box = toast.getBoundingClientRect();
          return {
            text: text.textContent, role: toast.getAttribute('role'), kind: toast.className,
            contrast: hearthWorstContrast(hearthParseColor(style.color), hearthOpacity(text), hearthBackdrops(text)),
            close: hearthName(toast.querySelector('button')),
            top: box.top, bottom: box.bottom,
          };
        });""")


def test_toasts_are_announced_readable_dismissable_and_out_of_the_way(server, browser_factory, screenshot):
    ids = demo_ids(server)
    phone = browser_at(browser_factory, phone=True)
    sign_in(phone, server, server.account("Ann"))
    dismiss_toasts(phone)
    assert phone.find_element(By.ID, "toasts").get_attribute("aria-live") == "polite"

    # Announced with the right role; readable (4.5:1) in both themes; a named close button.
    for dark in (False, True):
        emulate_dark(phone, dark)
        for kind in ("info", "success", "error"):
            show_toast(phone, f"A {kind} toast.", kind)
        shown = toasts(phone)
        assert [toast["role"] for toast in shown] == ["status", "status", "alert"]
        for toast in shown:
            assert toast["contrast"] >= 4.5, f"{toast['kind']} in the {'dark' if dark else 'light'} theme: {toast['contrast']:.2f}:1"
            assert toast["close"] == "Dismiss"
        problems = [p for p in audit(phone, True) if p["selector"].startswith("#toasts")]
        assert not problems, problems
        if dark:
            screenshot(phone, "toasts-phone-dark")
        dismiss_toasts(phone)
    emulate_dark(phone, False)

    # Above the tab bar on every screen, and above a chat's message box, which stays usable.
    show_toast(phone, "Above the tab bar.")
    nav_top = phone.find_element(By.ID, "nav").rect["y"]
    assert toasts(phone)[0]["bottom"] <= nav_top
    dismiss_toasts(phone)
    open_screen(phone, f"#/chat/with/{ids['bob']}", "[data-testid=chat-message]")
    show_toast(phone, "Above the message box.")
    field = phone.find_element(By.CSS_SELECTOR, "[data-testid=chat-input]")
    assert toasts(phone)[0]["bottom"] <= field.rect["y"], "the toast covers the message box"
    field.click()
    field.send_keys("typed while a toast shows")
    assert field.get_attribute("value") == "typed while a toast shows"
    field.clear()

    # Dismissed by its button (focus goes on, not to the page's start), and Escape takes the newest.
    phone.find_element(By.CSS_SELECTOR, "[data-testid=toast-close]").click()
    wait_until(phone, lambda d: toasts(d) == [], 5, "the button did not dismiss it")
    show_toast(phone, "Older.")
    show_toast(phone, "Newer.")
    ActionChains(phone).send_keys(Keys.ESCAPE).perform()
    wait_until(phone, lambda d: [toast["text"] for toast in toasts(d)] == ["Older."], 5, "Escape did not dismiss the newest")
    dismiss_toasts(phone)

    # A few at most.
    for index in range(5):
        show_toast(phone, f"Toast {index}.")
    assert [toast["text"] for toast in toasts(phone)] == ["Toast 2.", "Toast 3.", "Toast 4."]
    dismiss_toasts(phone)

    # They go by themselves, errors later than others; not while hovered or focused.
    durations = phone.execute_script("""return import('/app/ui.js').then((ui) =>
        [ui.toastDuration('Saved.', 'info'), ui.toastDuration('Saved.', 'error'), ui.toastDuration('x'.repeat(200), 'info')])""")
    assert durations[0] >= 5000 and durations[1] >= 10000 and durations[2] > durations[0], durations
    # (The pointer rests away from them: one resting on a toast keeps it.)
    ActionChains(phone).move_to_element(phone.find_element(By.CSS_SELECTOR, "main h1")).perform()
    show_toast(phone, "Goes soon.", duration=300)
    wait_until(phone, lambda d: toasts(d) == [], 5, "it did not go by itself")
    show_toast(phone, "Kept while hovered.", duration=800)
    # (Moved over: a toast that merely appears under a resting pointer is not held.)
    ActionChains(phone).move_to_element(phone.find_element(By.CSS_SELECTOR, "#toasts .toast-text")).move_by_offset(6, 2).perform()
    # Time passing is the thing under test: the toast outlives its 800 ms while hovered.
    phone.execute_script("return new Promise((resolve) => setTimeout(resolve, 1500))")
    assert [toast["text"] for toast in toasts(phone)] == ["Kept while hovered."], "it went while hovered"
    ActionChains(phone).move_to_element(phone.find_element(By.CSS_SELECTOR, "main h1")).perform()
    wait_until(phone, lambda d: toasts(d) == [], 6, "it stayed after the pointer left")
    # One that appears under a pointer resting there is not held by it.
    show_toast(phone, "Where the next one shows.", duration=60000)
    ActionChains(phone).move_to_element(phone.find_element(By.CSS_SELECTOR, "#toasts .toast-text")).perform()
    dismiss_toasts(phone)
    show_toast(phone, "Under a resting pointer.", duration=300)
    wait_until(phone, lambda d: toasts(d) == [], 5, "a pointer that did not move held it")
    ActionChains(phone).move_to_element(phone.find_element(By.CSS_SELECTOR, "main h1")).perform()
    show_toast(phone, "Kept while focused.", duration=800)
    phone.execute_script("document.querySelector('#toasts .toast-close').focus()")
    # Time passing is the thing under test: the toast outlives its 800 ms while focused.
    phone.execute_script("return new Promise((resolve) => setTimeout(resolve, 1500))")
    assert [toast["text"] for toast in toasts(phone)] == ["Kept while focused."], "it went while focused"
    phone.execute_script("document.querySelector('[data-testid=chat-input]').focus()")
    wait_until(phone, lambda d: toasts(d) == [], 6, "it stayed after focus left")
    assert js_errors(phone) == []

    # On a desktop they show at the top right, under the header, clear of the forms' buttons.
    desktop = browser_at(browser_factory, phone=False)
    open_app(desktop, server, "#/")
    show_toast(desktop, "On a desktop.")
    header = desktop.find_element(By.CSS_SELECTOR, ".app-header").rect
    toast = desktop.find_element(By.CSS_SELECTOR, "#toasts .toast").rect
    width = desktop.execute_script("return document.documentElement.clientWidth")
    assert toast["y"] >= header["y"] + header["height"] and abs(width - (toast["x"] + toast["width"]) - 16) < 2, (header, toast)


# MARK: Form errors


def test_form_errors_read_as_plain_sentences(server, browser):
    open_app(browser, server, "#/signup")
    wait_for(browser, "[data-testid=signup-email]").send_keys("nameless@example.com")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=signup-password]").send_keys("correct-horse-7")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=signup-submit]").click()
    assert wait_for(browser, "[data-testid=error]").text == "Enter your name."
    # Unexpected failures still say what happened and what to do; problems are shown as they are.
    words = run_js(browser, """
        const { errorWords, Problem } = await import('/app/ui.js');
        return [errorWords(new Problem('Enter your name.')), errorWords(new Error('Quota exceeded.')),
                errorWords(new TypeError('Failed to fetch')), errorWords(null)];""")
    assert words == [
        "Enter your name.",
        "Something went wrong (Quota exceeded). Try again, or reload the page.",
        "Hearth could not be reached. Check your connection and try again.",
        "Something went wrong. Try again.",
    ]


# MARK: Skeletons and empty states


def skeleton_state(driver) -> dict:
    return driver.execute_script("""
        const main = document.getElementById('main');
        const shapes = [...main.querySelectorAll('.skeleton')];
        return {
          shapes: shapes.length,
          hidden: shapes.every((shape) => shape.closest('[aria-hidden="true"]')),
          busy: [...main.querySelectorAll('[role=status]')].map((status) => status.textContent.trim()).filter(Boolean),
        };""")


def has_settled(driver) -> bool:
    return run_js(driver, "const { hasSettled } = await import('/app/screen-cache.js'); return hasSettled(document.getElementById('main'));")


def test_skeletons_stand_in_until_the_content_comes(server, browser_factory, screenshot):
    ids = demo_ids(server)
    # Nothing read yet (a new browser), and the connection held back: the skeletons stay.
    visitor = browser_at(browser_factory, phone=False)
    open_app(visitor, server, "#/no-such-page")
    run_js(visitor, "window.hearth.db.goOffline(); return true;")
    for route, content in (("#/", "[data-testid=post-card]"), (f"#/post/{ids['post']}", "[data-testid=post-title]"),
                           (f"#/profile/{ids['bob']}", "[data-testid=post-tile]")):
        go(visitor, route)
        wait_until(visitor, lambda d: skeleton_state(d)["shapes"] > 0, 5, f"no skeleton on {route}")
        state = skeleton_state(visitor)
        assert state["hidden"], f"{route}: skeletons are hidden from screen readers"
        assert len(state["busy"]) == 1 and state["busy"][0].startswith("Loading"), f"{route}: one busy status, not {state['busy']}"
        assert has_settled(visitor) is False, f"{route}: screen-cache.js must not take the skeleton for the screen"
        if route == "#/":
            screenshot(visitor, "skeleton-recent")
    # The connection is back: the content takes the skeletons' place.
    run_js(visitor, "window.hearth.db.goOnline(); return true;")
    wait_for(visitor, "[data-testid=post-tile]", LIVE)
    wait_until(visitor, lambda d: skeleton_state(d) == {"shapes": 0, "hidden": True, "busy": []}, LIVE, "skeletons left behind")
    assert has_settled(visitor)

    # Signed in: the feed and saved posts too. (Chats are not: the app keeps the person's
    # conversations in sync for the unread count, so they show at once, offline too.)
    member = browser_at(browser_factory, phone=True)
    sign_in(member, server, server.account("Ann"))
    run_js(member, "await window.hearth.db.ref(`user-chats/${window.hearth.auth.currentUser.uid}`).once('value'); return true;")
    run_js(member, "window.hearth.db.goOffline(); return true;")
    for route in ("#/feed", "#/saved"):
        go(member, route)
        wait_until(member, lambda d: skeleton_state(d)["shapes"] > 0, 5, f"no skeleton on {route}")
        state = skeleton_state(member)
        assert state["hidden"] and len(state["busy"]) == 1 and state["busy"][0].startswith("Loading"), (route, state)
    go(member, "#/chats")
    wait_for(member, "[data-testid=chat-row]", 5)
    run_js(member, "window.hearth.db.goOnline(); return true;")
    wait_until(member, lambda d: skeleton_state(d)["shapes"] == 0, LIVE)
    for route, content in (("#/feed", "[data-testid=post-card]"), ("#/saved", "[data-testid=saved-list], [data-testid=empty-state]")):
        go(member, route)
        wait_for(member, content, LIVE)
        wait_until(member, lambda d: skeleton_state(d)["shapes"] == 0 and has_settled(d), LIVE, f"{route} kept its skeletons")
    assert js_errors(visitor) == [] and js_errors(member) == []


def follow_empty_state(driver, route: str, title: str, action: str, lands: str):
    if driver.execute_script("return location.hash") != route:
        leaving(driver)
        go(driver, route)
        wait_until(driver, settled, LIVE)
    state = wait_for(driver, "[data-testid=empty-state]", LIVE)
    assert title in state.text
    link = state.find_element(By.CSS_SELECTOR, "[data-testid=empty-action]")
    assert link.text == action
    # Announced: the empty state is in the view's status region.
    assert driver.execute_script("return Boolean(arguments[0].closest('[role=status]'))", state)
    leaving(driver)
    link.click()
    wait_until(driver, lambda d: d.execute_script("return location.hash") == lands, 5, f"{action} did not lead to {lands}")
    wait_until(driver, settled, LIVE)


def test_empty_screens_say_what_to_do_next(server, browser_factory, screenshot):
    phone = browser_at(browser_factory, phone=True)
    uid = sign_up(phone, server, "Emma Empty")
    dismiss_toasts(phone)

    # The feed suggests people to follow, and searching.
    go(phone, "#/feed")
    wait_for(phone, "[data-testid=suggested-person]", LIVE)
    problems = check_screen(phone, "empty feed", True)
    assert not problems, report(problems)
    screenshot(phone, "empty-feed")
    suggested = [element.text for element in phone.find_elements(By.CSS_SELECTOR, "[data-testid=suggested-person]")]
    assert suggested and "Emma Empty" not in suggested, suggested
    follow_empty_state(phone, "#/feed", "Your feed is empty", "Find people", "#/search")
    assert phone.execute_script("return document.activeElement.dataset.testid") == "search-input"
    go(phone, "#/feed")
    wait_for(phone, "[data-testid=suggested-person]", LIVE).click()
    wait_until(phone, lambda d: d.execute_script("return location.hash").startswith("#/profile/"), 5)
    wait_for(phone, "[data-testid=follow-button]")

    follow_empty_state(phone, "#/saved", "Nothing saved yet", "Browse recent posts", "#/")
    follow_empty_state(phone, "#/chats", "No conversations yet", "Find people", "#/search")
    follow_empty_state(phone, "#/mine", "You have not posted anything yet", "Write your first post", "#/compose")
    follow_empty_state(phone, "#/notifications", "No notifications yet", "Write a post", "#/compose")
    follow_empty_state(phone, f"#/profile/{uid}", "You have not posted anything yet", "Write your first post", "#/compose")
    assert js_errors(phone) == []


# MARK: Cards and the header


def test_text_only_cards_fill_their_place_and_the_avatar_is_not_underlined(server, browser_factory, screenshot):
    desktop = browser_at(browser_factory, phone=False)
    sign_in(desktop, server, server.account("Ann"))
    wait_for(desktop, "[data-testid=post-card] .card-media.text-only", LIVE)
    dismiss_toasts(desktop)
    # A card without a photo, beside ones with: its tinted text fills the card down to the title
    # (no blank space between the title and the author).
    gaps = desktop.execute_script("""
        return [...document.querySelectorAll('[data-testid=post-card]')].map((card) => {
          const heading = card.querySelector('.card-heading').getBoundingClientRect();
          const footer = card.querySelector('.card-footer').getBoundingClientRect();
          const media = card.querySelector('.card-media').getBoundingClientRect();
          const body = card.querySelector('.card-body').getBoundingClientRect();
          return { textOnly: card.querySelector('.text-only') !== null, gap: footer.top - heading.bottom,
                   mediaMeetsBody: Math.abs(media.bottom - body.top) < 1, height: card.getBoundingClientRect().height };
        });""")
    text_only = [card for card in gaps if card["textOnly"]]
    assert text_only, "the demo has a post without a photo"
    for card in text_only:
        assert card["gap"] < 24 and card["mediaMeetsBody"], card
    screenshot(desktop, "text-only-card")

    # The header's avatar is a link whose initials are not underlined.
    assert desktop.execute_script(
        "return getComputedStyle(document.querySelector('[data-testid=account-link]')).textDecorationLine") == "none"
