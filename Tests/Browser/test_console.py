"""Browser tests of the data console (`/console`): sign-in with the admin token, the live data
tree, the rules editor, users, files and server figures, against a real `hearth serve --demo`.

Every check of a write goes back to the server through the REST API, so the console is tested
as an operator uses it, and the server as the source of truth.
"""

from __future__ import annotations

import base64
import json
import os
import re

import pytest
import requests
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from browser_support import js_errors, open_event_sources, track_event_sources, wait_for, wait_until

# A 2x2 red PNG, for the files browser's preview.
PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==")


# MARK: - Helpers

def open_console(driver, server, route="data"):
    """Opens the console at ``#/<route>`` and signs in with the admin token."""
    driver.get(f"{server.url}/console/#/{route}")
    wait_for(driver, "[data-testid=admin-token-input]").send_keys(server.admin_token)
    driver.find_element(By.CSS_SELECTOR, "[data-testid=admin-token-submit]").click()
    wait_for(driver, "nav.tabs")


def go(driver, route):
    driver.execute_script("location.hash = arguments[0]", f"#/{route}")


def wait_through_redraws(driver, condition, message, timeout=10):
    """Waits for ``condition``, looking again when the list it reads is redrawn meanwhile."""
    return WebDriverWait(driver, timeout, ignored_exceptions=[StaleElementReferenceException]).until(condition, message)


def node_css(path):
    return f'li[data-path="{path}"]'


def value_css(path):
    return f"{node_css(path)} > .line > [data-testid=tree-value]"


def wait_for_value(driver, path, text, timeout=10):
    """Waits until the tree shows ``text`` as the value at ``path``."""
    def shown(d):
        found = d.find_elements(By.CSS_SELECTOR, value_css(path))
        try:
            return found and found[0].text == text
        except StaleElementReferenceException:
            return False  # redrawn between finding and reading: look again
    wait_until(driver, shown, timeout, f"{path} never showed {text!r}")


def wait_live(driver):
    wait_for(driver, "[data-testid=data-status][data-state=live]")


def rest(server, method, path, **kwargs):
    response = requests.request(method, f"{server.url}/{path}.json", params={"auth": server.admin_token}, timeout=10, **kwargs)
    response.raise_for_status()
    return response.json()


def admin_headers(server):
    return {"Authorization": f"Bearer {server.admin_token}"}


def accounts_url(server, endpoint):
    return f"{server.url}/identitytoolkit.googleapis.com/v1/projects/hearth/{endpoint}"


def bucket(server):
    return requests.get(f"{server.url}/__/firebase/init.json", timeout=10).json()["storageBucket"]


def row_action(row, testid):
    """Chooses an action from a table row's Actions menu (the menu button, then its item)."""
    row.find_element(By.CSS_SELECTOR, "[data-testid=user-actions]").click()
    item = row.find_element(By.CSS_SELECTOR, f"[role=menu] [data-testid={testid}]")
    WebDriverWait(row.parent, 5).until(lambda d: item.is_displayed(), f"the {testid} item never showed")
    item.click()


def open_new_user(driver):
    """Opens the New user dialog of the Users page."""
    driver.find_element(By.CSS_SELECTOR, "[data-testid=new-user-open]").click()
    wait_for(driver, "dialog[open] [data-testid=new-user-email]")


def no_page_errors(driver, *expected):
    """Asserts the page logged no errors but the ``expected`` ones (substrings, e.g. a refused request)."""
    errors = [message for message in js_errors(driver) if not any(text in message for text in expected)]
    assert not errors, errors


# MARK: - Sign-in

def test_a_wrong_token_is_refused_in_words(browser, server, screenshot):
    browser.get(f"{server.url}/console")
    wait_for(browser, "[data-testid=admin-token-input]").send_keys("not-the-admin-token")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=admin-token-submit]").click()
    error = wait_for(browser, "[data-testid=signin-error]")
    assert "refused" in error.text and "admin-token" in error.text
    assert not browser.find_elements(By.CSS_SELECTOR, "nav.tabs")
    screenshot(browser, "console-signin-refused")
    # The right token then opens the console, and the tab remembers it across reloads.
    field = browser.find_element(By.CSS_SELECTOR, "[data-testid=admin-token-input]")
    field.clear()
    field.send_keys(server.admin_token)
    browser.find_element(By.CSS_SELECTOR, "[data-testid=admin-token-submit]").click()
    wait_for(browser, "nav.tabs")
    browser.refresh()
    wait_for(browser, "[data-testid=data-tree]")
    no_page_errors(browser, "rules.json - Failed to load resource: the server responded with a status of 401")


# MARK: - Data

def test_the_tree_shows_writes_from_the_api_live(browser, server, screenshot):
    rest(server, "DELETE", "console-live")
    open_console(browser, server, "data/console-live")
    wait_live(browser)
    wait_for_value(browser, "/console-live", "null")

    rest(server, "PUT", "console-live/x", json="hello")
    wait_for_value(browser, "/console-live/x", '"hello"')

    rest(server, "PUT", "console-live/x", json=42)
    wait_for_value(browser, "/console-live/x", "42")
    line = browser.find_element(By.CSS_SELECTOR, f"{node_css('/console-live/x')} > .line")
    assert "flash-changed" in line.get_attribute("class")

    rest(server, "PATCH", "console-live", json={"nested/a": 1, "nested/b/c": True})
    wait_for_value(browser, "/console-live/nested", "2 children")
    # Expanding a node shows its children; the keyboard works too (ArrowRight expands).
    browser.find_element(By.CSS_SELECTOR, f"{node_css('/console-live/nested')} > .line .twisty").click()
    wait_for_value(browser, "/console-live/nested/a", "1")
    browser.find_element(By.CSS_SELECTOR, f"{node_css('/console-live/nested/b')} > .line").click()
    browser.switch_to.active_element.send_keys("\ue014")  # ArrowRight
    wait_for_value(browser, "/console-live/nested/b/c", "true")
    screenshot(browser, "console-data")

    rest(server, "DELETE", "console-live/x")
    wait_until(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, node_css("/console-live/x")), 10, "x was not removed")
    no_page_errors(browser)


def test_moving_through_locations_quickly_keeps_one_stream_open(browser, server):
    # Each location is opened only after a first request: leaving before it answers must not
    # leave its stream behind (the browser has six connections per server).
    track_event_sources(browser)
    open_console(browser, server, "data")
    wait_live(browser)
    browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        (async () => {
          for (const path of ['posts', 'people', 'comments', 'likes', 'posts', 'people', 'console-last']) {
            location.hash = `#/data/${path}`;
            await new Promise((resolve) => setTimeout(resolve, 5));  // a quick visitor's pace (deliberate)
          }
        })().then(done);""")
    wait_live(browser)
    wait_until(browser, lambda d: open_event_sources(d) == ["/console-last.json"], 10,
               f"streams left open: {open_event_sources(browser)}")
    go(browser, "rules")
    wait_until(browser, lambda d: open_event_sources(d) == [], 10, f"streams left open: {open_event_sources(browser)}")
    no_page_errors(browser)


def test_big_nodes_show_a_page_of_children_at_a_time(browser, server):
    rest(server, "PUT", "console-big", json={f"k{index:04}": index for index in range(250)})
    open_console(browser, server, "data")
    wait_live(browser)
    browser.find_element(By.CSS_SELECTOR, f"{node_css('/console-big')} > .line .twisty").click()
    wait_for_value(browser, "/console-big/k0099", "99")
    assert not browser.find_elements(By.CSS_SELECTOR, node_css("/console-big/k0100"))
    more = wait_for(browser, f"{node_css('/console-big')} [data-testid=tree-show-more]")
    assert "100 of 250" in more.text
    more.click()
    wait_for_value(browser, "/console-big/k0199", "199")
    assert len(browser.find_elements(By.CSS_SELECTOR, f"{node_css('/console-big')} > ul > li[role=treeitem]")) == 200
    rest(server, "DELETE", "console-big")


def test_a_huge_location_is_streamed_a_window_at_a_time(browser, server, screenshot):
    rest(server, "PUT", "console-huge", json={f"k{index:05}": index for index in range(3000)})
    open_console(browser, server, "data/console-huge")
    wait_live(browser)
    wait_for_value(browser, "/console-huge/k00099", "99")
    more = wait_for(browser, "[data-testid=tree-show-more]")
    assert "100 of 3,000" in more.text
    assert len(browser.find_elements(By.CSS_SELECTOR, "li[role=treeitem]")) == 101
    more.click()
    wait_for_value(browser, "/console-huge/k00199", "199")
    # The window is live too.
    rest(server, "PUT", "console-huge/k00150", json="changed")
    wait_for_value(browser, "/console-huge/k00150", '"changed"')
    screenshot(browser, "console-data-huge")
    rest(server, "DELETE", "console-huge")
    no_page_errors(browser)


def key_results(driver):
    return driver.execute_script(
        "return [...document.querySelectorAll('[data-testid=key-result]')].map((button) => button.dataset.key)")


def test_finding_keys_among_thousands_of_children(browser, server, screenshot):
    rest(server, "PUT", "console-keys", json={f"k{index:05}": {"n": index} for index in range(5000)})
    open_console(browser, server, "data/console-keys")
    wait_live(browser)
    # The location says how many children it has in all, not how many are loaded.
    assert browser.find_element(By.CSS_SELECTOR, value_css("/console-keys")).text == "5,000 children"
    search = browser.find_element(By.CSS_SELECTOR, "[data-testid=key-search-input]")
    # By prefix, from the keyboard: 100 keys start with k012, found 50 at a time.
    search.send_keys("k012", Keys.ENTER)
    wait_until(browser, lambda d: len(key_results(d)) == 50, 10, "the first page of results never came")
    assert key_results(browser) == [f"k{index:05}" for index in range(1200, 1250)]
    assert "50 keys starting with “k012” so far" in browser.find_element(By.CSS_SELECTOR, "[data-testid=key-search-status]").text
    more = browser.find_element(By.CSS_SELECTOR, "[data-testid=key-search-more]")
    more.click()
    wait_until(browser, lambda d: len(key_results(d)) == 100, 10, "More results did not add the next page")
    assert key_results(browser) == [f"k{index:05}" for index in range(1200, 1300)]
    wait_until(browser, lambda d: not d.find_element(By.CSS_SELECTOR, "[data-testid=key-search-more]").is_displayed(), 5,
               "More results stayed after the last page")
    assert "100 keys starting with “k012”." in browser.find_element(By.CSS_SELECTOR, "[data-testid=key-search-status]").text
    # The first new result has the focus; the arrow keys move through the results, Enter opens one.
    assert browser.switch_to.active_element.get_attribute("data-key") == "k01250"
    browser.switch_to.active_element.send_keys(Keys.ARROW_DOWN)
    assert browser.switch_to.active_element.get_attribute("data-key") == "k01251"
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    wait_until(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#node-panel-title").text == "/console-keys/k01251", 5,
               "the chosen key did not open in the panel")
    assert "An object with 1 child" in browser.find_element(By.CSS_SELECTOR, "[data-testid=node-panel]").text
    # The tree still holds only its window of the 5,000 children.
    assert len(browser.find_elements(By.CSS_SELECTOR, "li[role=treeitem]")) <= 102

    # An exact key, far past the loaded window; a loaded key selects its row in the tree.
    search.clear()
    search.send_keys("k04999", Keys.ENTER)
    wait_until(browser, lambda d: key_results(d) == ["k04999"], 10, "the exact key was not found")
    assert "exact" in browser.find_element(By.CSS_SELECTOR, "[data-testid=key-result]").text
    search.clear()
    search.send_keys("k00003", Keys.ENTER)
    wait_until(browser, lambda d: key_results(d) == ["k00003"], 10)
    browser.find_element(By.CSS_SELECTOR, "[data-testid=key-result]").click()
    wait_for(browser, f'{node_css("/console-keys/k00003")}[aria-selected=true]')
    screenshot(browser, "console-data-key-search")

    # Nothing found, and keys no key can have, in words.
    search.clear()
    search.send_keys("zz", Keys.ENTER)
    wait_until(browser, lambda d: "No child of /console-keys has a key starting with “zz”" in d.find_element(By.CSS_SELECTOR, "[data-testid=key-search-status]").text, 10)
    assert key_results(browser) == []
    search.clear()
    search.send_keys("a.b", Keys.ENTER)
    error = wait_for(browser, "[data-testid=key-search-error]")
    assert "Keys cannot contain" in error.text
    browser.find_element(By.CSS_SELECTOR, "[data-testid=key-search-clear]").click()
    assert not browser.find_element(By.CSS_SELECTOR, "[data-testid=key-search-results]").is_displayed()
    rest(server, "DELETE", "console-keys")
    no_page_errors(browser)


def test_the_root_of_a_big_database_is_never_put_in_one_box(browser, server, screenshot):
    rest(server, "PUT", "console-bigroot", json={f"c{index:04}": {"a": index, "b": str(index)} for index in range(1500)})
    open_console(browser, server, "data")
    wait_live(browser)
    wait_for(browser, node_css("/console-bigroot"))
    root = browser.find_element(By.CSS_SELECTOR, f"{node_css('/')} > .line")
    root.click()
    wait_until(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#node-panel-title").text == "/", 5)
    # The editor holds nothing of it: too large to edit here.
    note = wait_for(browser, "[data-testid=node-panel] .note")
    assert "Too large to edit here" in note.text
    for control in browser.find_elements(By.CSS_SELECTOR, "[data-testid=node-panel] textarea, [data-testid=node-panel] input[type=text]"):
        assert len(control.get_attribute("value") or "") < 1000, "a box holds a large part of the database"
    # The big child is drawn a page at a time.
    browser.find_element(By.CSS_SELECTOR, f"{node_css('/console-bigroot')} > .line .twisty").click()
    more = wait_for(browser, f"{node_css('/console-bigroot')} [data-testid=tree-show-more]")
    assert "100 of 1,500" in more.text
    assert len(browser.find_elements(By.CSS_SELECTOR, f"{node_css('/console-bigroot')} > ul > li[role=treeitem]")) == 100
    # Selecting the big child keeps its value out of the editor too.
    browser.find_element(By.CSS_SELECTOR, f"{node_css('/console-bigroot')} > .line").click()
    wait_until(browser, lambda d: "Too large to edit here" in d.find_element(By.CSS_SELECTOR, "[data-testid=node-panel] .note").text, 5)
    screenshot(browser, "console-data-big-root")
    rest(server, "DELETE", "console-bigroot")
    no_page_errors(browser)


def test_editing_adding_and_deleting_in_the_tree_write_to_the_server(browser, server, screenshot):
    rest(server, "PUT", "console-edit", json={"name": "before", "count": 1})
    open_console(browser, server, "data/console-edit")
    wait_live(browser)
    wait_for_value(browser, "/console-edit/name", '"before"')

    # Edit a text value.
    browser.find_element(By.CSS_SELECTOR, f"{node_css('/console-edit/name')} > .line").click()
    wait_until(browser, lambda d: d.find_element(By.ID, "node-panel-title").text == "/console-edit/name")
    field = wait_for(browser, "[data-testid=value-input]")
    field.clear()
    field.send_keys("after")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=value-save]").click()
    wait_until(browser, lambda d: rest(server, "GET", "console-edit/name") == "after", 10, "the edit was not written")
    wait_for_value(browser, "/console-edit/name", '"after"')

    # Change a value's type: the number 1 becomes the number 7.5.
    browser.find_element(By.CSS_SELECTOR, f"{node_css('/console-edit/count')} > .line").click()
    wait_until(browser, lambda d: Select(d.find_element(By.CSS_SELECTOR, "[data-testid=value-type]")).first_selected_option.get_attribute("value") == "number")
    field = browser.find_element(By.CSS_SELECTOR, "[data-testid=value-input]")
    field.clear()
    field.send_keys("7.5")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=value-save]").click()
    wait_until(browser, lambda d: rest(server, "GET", "console-edit/count") == 7.5, 10, "the number was not written")

    # A word that is not a number is refused in words, and nothing is written.
    field.clear()
    field.send_keys("seven")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=value-save]").click()
    assert "not a number" in wait_for(browser, ".toast-error").text
    assert rest(server, "GET", "console-edit/count") == 7.5

    # Add a child holding JSON to the location.
    browser.find_element(By.CSS_SELECTOR, f"{node_css('/console-edit')} > .line").click()
    wait_until(browser, lambda d: d.find_element(By.ID, "node-panel-title").text == "/console-edit")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=child-key]").send_keys("added")
    Select(browser.find_element(By.CSS_SELECTOR, "[data-testid=child-type]")).select_by_value("json")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=child-json]").send_keys('{"deep": [1, 2]}')
    browser.find_element(By.CSS_SELECTOR, "[data-testid=child-add]").click()
    wait_until(browser, lambda d: rest(server, "GET", "console-edit/added") == {"deep": [1, 2]}, 10, "the child was not added")
    wait_for_value(browser, "/console-edit/added", "1 child")
    screenshot(browser, "console-data-edit")

    # Delete a node, after confirming.
    browser.find_element(By.CSS_SELECTOR, f"{node_css('/console-edit/added')} > .line").click()
    wait_until(browser, lambda d: d.find_element(By.ID, "node-panel-title").text == "/console-edit/added")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=node-delete]").click()
    wait_for(browser, "dialog [data-testid=confirm-ok]").click()
    wait_until(browser, lambda d: rest(server, "GET", "console-edit/added") is None, 10, "the node was not deleted")
    wait_until(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, node_css("/console-edit/added")), 10)
    no_page_errors(browser)


def test_import_and_export_a_node(browser, server, tmp_path):
    rest(server, "DELETE", "console-import")
    source = tmp_path / "import.json"
    source.write_text(json.dumps({"a": {"b": "imported"}, "n": 3}))
    open_console(browser, server, "data/console-import")
    wait_live(browser)
    browser.find_element(By.CSS_SELECTOR, "[data-testid=import-file]").send_keys(str(source))
    wait_for(browser, "dialog [data-testid=confirm-ok]").click()
    wait_until(browser, lambda d: rest(server, "GET", "console-import") == {"a": {"b": "imported"}, "n": 3}, 10, "no import")
    wait_for_value(browser, "/console-import/n", "3")
    assert "Imported import.json" in wait_for(browser, ".progress-text").text

    browser.find_element(By.CSS_SELECTOR, "[data-testid=node-export]").click()
    wait_until(browser, lambda d: "Exported /console-import" in d.find_element(By.CSS_SELECTOR, ".progress-text").text, 10)
    no_page_errors(browser)


# MARK: - Rules

def test_rules_with_an_error_show_where_and_change_nothing_and_good_rules_deploy(browser, server, screenshot):
    rules_url = f"{server.url}/.settings/rules.json"
    original = requests.get(rules_url, headers=admin_headers(server), timeout=10).text
    try:
        open_console(browser, server, "rules")
        editor = wait_for(browser, "[data-testid=rules-editor]")
        wait_until(browser, lambda d: editor.is_enabled() and editor.get_attribute("value") == original, 10, "rules not loaded")

        bad = '{\n  "rules": {\n    ".read": true,\n    ".write": tru\n  }\n}\n'
        browser.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'))", editor, bad)
        browser.find_element(By.CSS_SELECTOR, "[data-testid=rules-deploy]").click()
        error = wait_for(browser, "[data-testid=rules-error]")
        match = re.match(r"Line (\d+), column (\d+): ", error.text)
        assert match, error.text
        line, column = int(match.group(1)), int(match.group(2))
        assert line == 4
        # The caret is at the line and column the server named.
        caret = browser.execute_script("return arguments[0].selectionStart", editor)
        before = bad[:caret].split("\n")
        assert (len(before), len(before[-1]) + 1) == (line, column)
        assert browser.switch_to.active_element == editor
        assert browser.find_element(By.CSS_SELECTOR, ".gutter .error-line").text == str(line)
        screenshot(browser, "console-rules-error")
        assert requests.get(rules_url, headers=admin_headers(server), timeout=10).text == original

        good = original.rstrip() + "\n\n"
        browser.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'))", editor, good)
        browser.find_element(By.CSS_SELECTOR, "[data-testid=rules-deploy]").click()
        wait_until(browser, lambda d: d.find_element(By.CSS_SELECTOR, "[data-testid=rules-status]").text.startswith("Deployed at"), 10)
        assert not browser.find_element(By.CSS_SELECTOR, "[data-testid=rules-error]").is_displayed()
        assert requests.get(rules_url, headers=admin_headers(server), timeout=10).text == good
        screenshot(browser, "console-rules")
        no_page_errors(browser, "rules.json - Failed to load resource: the server responded with a status of 400")
    finally:
        requests.put(rules_url, data=original, headers=admin_headers(server), timeout=10).raise_for_status()


# MARK: - Users

def test_users_list_create_claims_and_delete(browser, server, screenshot):
    requests.post(accounts_url(server, "accounts"), headers=admin_headers(server), timeout=10,
                  json={"email": "console-api@example.com", "password": "secret-123", "displayName": "From the API"}).raise_for_status()
    open_console(browser, server, "users")
    # The session's server holds every test's accounts, more than a page of them, in uid order:
    # find these as an operator would, by searching.
    wait_for(browser, "[data-testid=users-search]").send_keys("console-")
    wait_through_redraws(browser, lambda d: any(cell.text == "console-api@example.com"
                                                for cell in d.find_elements(By.CSS_SELECTOR, "[data-testid=user-email]")),
                         "the user made through the API is not listed")

    open_new_user(browser)
    browser.find_element(By.CSS_SELECTOR, "[data-testid=new-user-email]").send_keys("console-form@example.com")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=new-user-password]").send_keys("secret-456")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=new-user-name]").send_keys("From the Form")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=new-user-submit]").click()
    # The dialog closes once the user is made.
    wait_until(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, "dialog[open][data-testid=new-user-dialog]"), 10,
               "the New user dialog stayed open")
    row_css = 'tr[data-testid=user-row]'

    def row_for(email):
        return next((row for row in browser.find_elements(By.CSS_SELECTOR, row_css)
                     if row.find_element(By.CSS_SELECTOR, "[data-testid=user-email]").text == email), None)

    wait_through_redraws(browser, lambda d: row_for("console-form@example.com"), "the new user is not listed")
    uid = row_for("console-form@example.com").get_attribute("data-uid")

    # The same address again is refused in words, in the dialog, which stays open with what was typed.
    open_new_user(browser)
    browser.find_element(By.CSS_SELECTOR, "[data-testid=new-user-email]").send_keys("console-form@example.com")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=new-user-password]").send_keys("secret-456")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=new-user-submit]").click()
    assert "already" in wait_for(browser, "dialog[open] [data-testid=new-user-error]").text
    assert browser.find_element(By.CSS_SELECTOR, "[data-testid=new-user-email]").get_attribute("value") == "console-form@example.com"
    browser.find_element(By.CSS_SELECTOR, "[data-testid=new-user-cancel]").click()

    row_action(row_for("console-form@example.com"), "user-claims")
    claims = wait_for(browser, "[data-testid=claims-input]")
    claims.clear()
    claims.send_keys('{"admin": true, "level": 3}')
    browser.find_element(By.CSS_SELECTOR, "[data-testid=claims-save]").click()
    wait_through_redraws(browser, lambda d: '"admin":true' in row_for("console-form@example.com").text.replace(" ", ""), "claims not shown")
    looked_up = requests.post(accounts_url(server, "accounts:lookup"), headers=admin_headers(server), json={"localId": [uid]}, timeout=10).json()
    assert json.loads(looked_up["users"][0]["customAttributes"]) == {"admin": True, "level": 3}
    screenshot(browser, "console-users")

    row_action(row_for("console-form@example.com"), "user-delete")
    wait_for(browser, "dialog [data-testid=confirm-ok]").click()
    wait_through_redraws(browser, lambda d: row_for("console-form@example.com") is None, "the user was not removed from the list")
    looked_up = requests.post(accounts_url(server, "accounts:lookup"), headers=admin_headers(server), json={"localId": [uid]}, timeout=10).json()
    assert not looked_up.get("users")
    no_page_errors(browser, "accounts - Failed to load resource: the server responded with a status of 400")


# MARK: - Files

def test_files_browse_preview_upload_and_delete(browser, server, screenshot, tmp_path):
    name = "console-files/red.png"
    requests.post(f"{server.url}/v0/b/{bucket(server)}/o", params={"uploadType": "media", "name": name},
                  data=PIXEL_PNG, headers={**admin_headers(server), "Content-Type": "image/png"}, timeout=10).raise_for_status()
    open_console(browser, server, "files")
    wait_for(browser, 'tr[data-testid=folder-row][data-name="console-files"] a').click()
    row = wait_for(browser, f'tr[data-testid=file-row][data-name="{name}"]')
    wait_until(browser, lambda d: "image/png" in row.text, 10, "no metadata")
    wait_until(browser, lambda d: d.execute_script(
        "const img = arguments[0].querySelector('img'); return img && img.complete && img.naturalWidth === 2", row), 10, "no preview")
    screenshot(browser, "console-files")

    upload = tmp_path / "notes.txt"
    upload.write_text("uploaded from the console")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=files-upload]").send_keys(str(upload))
    wait_for(browser, 'tr[data-testid=file-row][data-name="console-files/notes.txt"]')
    media = requests.get(f"{server.url}/v0/b/{bucket(server)}/o/{requests.utils.quote('console-files/notes.txt', safe='')}",
                         params={"alt": "media"}, headers=admin_headers(server), timeout=10)
    assert media.text == "uploaded from the console"

    browser.find_element(By.CSS_SELECTOR, 'tr[data-name="console-files/notes.txt"] [data-testid=file-delete]').click()
    wait_for(browser, "dialog [data-testid=confirm-ok]").click()
    wait_until(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, 'tr[data-name="console-files/notes.txt"]'), 10)
    gone = requests.get(f"{server.url}/v0/b/{bucket(server)}/o/{requests.utils.quote('console-files/notes.txt', safe='')}",
                        headers=admin_headers(server), timeout=10)
    assert gone.status_code == 404
    no_page_errors(browser)


# MARK: - Server

def test_server_figures(browser, server, screenshot):
    open_console(browser, server, "server")
    wait_until(browser, lambda d: d.find_element(By.CSS_SELECTOR, "[data-testid=figure-uptime]").text.endswith(("s", "min", "h")), 10)
    for index in range(5):
        rest(server, "PUT", f"console-stats/{index}", json=index)
    # The rate needs two polls a few seconds apart.
    wait_until(browser, lambda d: re.fullmatch(r"[\d.,]+", d.find_element(By.CSS_SELECTOR, "[data-testid=figure-writes]").text), 15,
               "no writes per second")
    assert re.search(r"MB|GB|KB", browser.find_element(By.CSS_SELECTOR, "[data-testid=figure-memory]").text)
    assert browser.find_elements(By.CSS_SELECTOR, "tr[data-testid=database-row]")
    screenshot(browser, "console-server")
    no_page_errors(browser)


def test_the_skip_link_moves_focus_and_stays_in_the_section(browser, server):
    open_console(browser, server, "server")
    wait_for(browser, "#section-title")
    browser.execute_script("document.querySelector('.skip-link').focus()")
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    wait_until(browser, lambda d: d.execute_script("return document.activeElement.id") == "main", 5, "focus did not move to the content")
    assert browser.execute_script("return location.hash") == "#/server"


# MARK: - Phone size

@pytest.mark.parametrize("section", ["data", "rules", "users", "files", "server", "logs", "backups"])
def test_every_section_fits_a_phone(browser_factory, server, screenshot, section):
    phone = browser_factory(phone=True)
    open_console(phone, server, section)
    wait_for(phone, "#section-title")
    if section == "data":
        wait_live(phone)
        phone.find_element(By.CSS_SELECTOR, f"{node_css('/posts')} > .line").click()
        wait_for(phone, "[data-testid=node-panel] [data-testid=value-save]")
    # Nothing sticks out sideways.
    assert phone.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")
    screenshot(phone, f"console-phone-{section}")
    no_page_errors(phone)


# MARK: - Accessibility

@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone"])
def test_every_section_passes_the_accessibility_checks(browser_factory, server, phone):
    """Every section of the console as it first shows, through the app's audit (contrast,
    accessible names, landmarks, one h1, overflow at phone width, a real Tab walk with visible,
    unclipped focus rings), light and dark. The Logs, Backups, Functions, Rules simulator and
    big-data screens are also audited in their own states by their own tests."""
    from test_app_accessibility import check_screen, report

    # A disabled account among the users, whose row is drawn differently.
    accounts = f"{server.url}/identitytoolkit.googleapis.com/v1"
    made = requests.post(f"{accounts}/accounts:signUp?key=x", json={
        "email": f"audit-disabled-{phone}-{base64.b32encode(os.urandom(5)).decode().lower()}@example.com",
        "password": "audit-pass", "returnSecureToken": True}, timeout=10)
    made.raise_for_status()
    requests.post(f"{accounts}/accounts:update", json={"localId": made.json()["localId"], "disableUser": True},
                  headers=admin_headers(server), timeout=10).raise_for_status()

    driver = browser_factory(phone=phone)
    size = "phone" if phone else "desktop"
    problems = []
    open_console(driver, server, "data")
    for section, ready in [
        ("data", "[data-testid=data-status][data-state=live]"),
        ("rules", "#section-title"),
        ("users", "[data-testid=user-row]"),
        ("files", "#section-title"),
        ("server", "#section-title"),
        ("logs", "#section-title"),
        ("backups", "#section-title"),
        # The demo app's own functions (docs/social-server.md).
        ("functions", "[data-testid=functions-listing]"),
        ("hosting", "[data-testid=hosting-empty]"),
    ]:
        go(driver, section)
        wait_until(driver, lambda d, section=section: d.execute_script("return location.hash") == f"#/{section}")
        wait_for(driver, ready, 20)
        # The section's first data has arrived: no "Loading…" left in it.
        wait_until(driver, lambda d: "Loading" not in d.find_element(By.CSS_SELECTOR, "main").text, 20,
                   f"#/{section} did not finish loading")
        problems += check_screen(driver, f"{size} #/{section}", phone)
    assert not problems, report(problems)
    no_page_errors(driver)
