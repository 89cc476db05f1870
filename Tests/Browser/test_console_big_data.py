"""Browser tests of the console's Data section on a database too big to stream whole: the root
holds a few huge children (tens of thousands of nodes in all). The console asks the server how
big the location is (`/.hearth/data/summary`), reads it on demand a page of keys at a time
(`/.hearth/data/children`) instead of downloading it, says it is not live, picks up changes on
Refresh, and follows a small part live after "Open here"; key search works in both modes;
desktop and phone (360 px), light and dark, through the accessibility audit."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser_support import launch_server, stop_server, wait_for, wait_until
from test_console import go, no_page_errors, node_css, open_console, value_css, wait_for_value, wait_live

POSTS = 15_000
USERS = 3_000
TAGS = 500

# Counts the data the page receives: the bodies of database reads and data listings fetched,
# and the data of stream events.
_COUNT_BYTES = """
window.__received = { fetch: 0, stream: 0, streams: [], reads: [] };
const originalFetch = window.fetch;
window.fetch = async (...args) => {
  const response = await originalFetch(...args);
  const path = new URL(response.url).pathname;
  const databaseRead = path.endsWith('.json') && !path.startsWith('/.') && !path.startsWith('/__/');
  if (databaseRead || path.startsWith('/.hearth/data/')) {
    response.clone().arrayBuffer().then((body) => {
      window.__received.fetch += body.byteLength;
      window.__received.reads.push(path);
    }, () => {});
  }
  return response;
};
window.EventSource = class extends window.EventSource {
  constructor(...args) {
    super(...args);
    window.__received.streams.push(new URL(this.url).pathname);
    for (const name of ['put', 'patch']) {
      this.addEventListener(name, (event) => { window.__received.stream += event.data.length; });
    }
  }
};
"""


def seed_value():
    return {
        "posts": {f"p{index:05}": {"title": f"Post {index}", "likes": index % 97} for index in range(POSTS)},
        "users": {f"u{index:04}": {"name": f"User {index}"} for index in range(USERS)},
        "tags": {f"t{index:03}": index for index in range(TAGS)},
        "small": {"a": 1, "b": {"c": 2}},
        "motd": "hello",
    }


@pytest.fixture(scope="module")
def big_server():
    data = Path(tempfile.mkdtemp(prefix="hearth-browser-big-data-"))
    served = launch_server(data)
    whole = json.dumps(seed_value())
    # One admin write seeds it all.
    response = requests.put(f"{served.url}/.json", params={"auth": served.admin_token}, data=whole, timeout=60)
    response.raise_for_status()
    served.whole_bytes = len(whole)
    yield served
    stop_server(served)
    shutil.rmtree(data, ignore_errors=True)


def rest(server, method, path, **kwargs):
    response = requests.request(method, f"{server.url}/{path}.json", params={"auth": server.admin_token}, timeout=10, **kwargs)
    response.raise_for_status()
    return response.json()


def count_bytes(driver):
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _COUNT_BYTES})


def received(driver):
    return driver.execute_script("return window.__received")


def wait_on_demand(driver):
    wait_for(driver, "[data-testid=data-status][data-state=static]", 20)


def rows_under(driver, path):
    return driver.find_elements(By.CSS_SELECTOR, f"{node_css(path)} > ul > li[role=treeitem]")


def panel_text(driver):
    return driver.find_element(By.CSS_SELECTOR, "[data-testid=node-panel]").text


def select(driver, path):
    driver.find_element(By.CSS_SELECTOR, f"{node_css(path)} > .line .key").click()
    wait_until(driver, lambda d: d.find_element(By.CSS_SELECTOR, "#node-panel-title").text == path, 5,
               f"{path} did not open in the panel")


def test_the_root_of_a_big_database_is_read_on_demand_not_downloaded(browser, big_server, screenshot):
    server = big_server
    count_bytes(browser)
    open_console(browser, server, "data")
    wait_on_demand(browser)
    note = wait_for(browser, "[data-testid=data-big-note]")
    assert "too big to follow live" in note.text
    assert "Open here" in note.text
    assert browser.find_element(By.CSS_SELECTOR, "[data-testid=data-status]").text == "Not live"
    assert browser.find_element(By.CSS_SELECTOR, "[data-testid=data-refresh]").is_displayed()

    # The top keys with their sizes, not their values.
    assert browser.find_element(By.CSS_SELECTOR, value_css("/posts")).text == f"{POSTS:,} children"
    assert browser.find_element(By.CSS_SELECTOR, value_css("/users")).text == f"{USERS:,} children"
    assert browser.find_element(By.CSS_SELECTOR, value_css("/tags")).text == f"{TAGS:,} children"
    assert browser.find_element(By.CSS_SELECTOR, value_css("/small")).text == "2 children"
    assert browser.find_element(By.CSS_SELECTOR, value_css("/motd")).text == '"hello"'
    assert browser.find_element(By.CSS_SELECTOR, value_css("/")).text == "5 children"
    got = received(browser)
    assert got["streams"] == [], f"a stream was opened for the big root: {got['streams']}"
    assert got["fetch"] < 5_000, f"{got}"

    # Expanding a huge child reads its first 100 keys; "Show more" the next 100.
    browser.find_element(By.CSS_SELECTOR, f"{node_css('/posts')} > .line .twisty").click()
    wait_for_value(browser, "/posts/p00099", "2 children")
    assert len(rows_under(browser, "/posts")) == 100
    more = wait_for(browser, f"{node_css('/posts')} [data-testid=tree-show-more]")
    assert f"100 of {POSTS:,}" in more.text
    more.send_keys(Keys.ENTER)
    wait_for_value(browser, "/posts/p00199", "2 children")
    assert len(rows_under(browser, "/posts")) == 200
    # The keyboard stays on "Show more", for the next page.
    assert browser.switch_to.active_element.get_attribute("data-testid") == "tree-show-more"
    assert f"200 of {POSTS:,}" in browser.find_element(By.CSS_SELECTOR, f"{node_css('/posts')} [data-testid=tree-show-more]").text
    # A small object inside is read the same way: its leaves with their values.
    browser.find_element(By.CSS_SELECTOR, f"{node_css('/posts/p00007')} > .line .twisty").click()
    wait_for_value(browser, "/posts/p00007/title", '"Post 7"')
    wait_for_value(browser, "/posts/p00007/likes", "7")

    # Selecting a big node shows its size and export, never its value.
    select(browser, "/posts")
    wait_until(browser, lambda d: f"{POSTS * 3 + 1:,} nodes" in panel_text(d), 10, panel_text(browser))
    assert f"An object with {POSTS:,} children" in panel_text(browser)
    assert "Too large to edit here" in browser.find_element(By.CSS_SELECTOR, "[data-testid=node-panel] .note").text
    assert browser.find_element(By.CSS_SELECTOR, "[data-testid=node-export]").is_displayed()
    for control in browser.find_elements(By.CSS_SELECTOR, "[data-testid=node-panel] textarea, [data-testid=node-panel] input[type=text]"):
        assert len(control.get_attribute("value") or "") < 1000, "a box holds a large part of the database"
    # A small one is read when selected, into the editor.
    select(browser, "/posts/p00007")
    wait_until(browser, lambda d: "3 nodes" in panel_text(d), 10, panel_text(browser))
    wait_until(browser, lambda d: "Post 7" in (d.find_element(By.CSS_SELECTOR, "[data-testid=node-panel] textarea").get_attribute("value") or ""),
               10, "the small object's value never reached the editor")

    got = received(browser)
    assert got["streams"] == []
    assert got["fetch"] < server.whole_bytes / 20, f"{got['fetch']} of {server.whole_bytes} bytes downloaded"
    screenshot(browser, "console-data-on-demand")

    # Refresh picks up changes made elsewhere, keeping what was expanded and read.
    rest(server, "PUT", "posts/p00007/title", json="Changed")
    rest(server, "PUT", "zeta", json={"x": 1})
    browser.find_element(By.CSS_SELECTOR, "[data-testid=data-refresh]").click()
    wait_for_value(browser, "/posts/p00007/title", '"Changed"')
    wait_for_value(browser, "/zeta", "1 child")
    assert browser.find_element(By.CSS_SELECTOR, value_css("/")).text == "6 children"
    assert len(rows_under(browser, "/posts")) == 200
    wait_on_demand(browser)

    # Key search at the big location: by prefix, without reading values.
    search = browser.find_element(By.CSS_SELECTOR, "[data-testid=key-search-input]")
    search.send_keys("us", Keys.ENTER)
    wait_until(browser, lambda d: [b.get_attribute("data-key") for b in d.find_elements(By.CSS_SELECTOR, "[data-testid=key-result]")] == ["users"], 10)
    assert f"{USERS:,} children" in browser.find_element(By.CSS_SELECTOR, "[data-testid=key-result]").text
    browser.find_element(By.CSS_SELECTOR, "[data-testid=key-result]").click()
    wait_for(browser, f'{node_css("/users")}[aria-selected=true]')
    assert browser.execute_script("return window.__received.fetch") < server.whole_bytes / 20

    # "Open here" on a small part follows it live.
    select(browser, "/small")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=node-open]").click()
    wait_live(browser)
    assert not browser.find_element(By.CSS_SELECTOR, "[data-testid=data-big-note]").is_displayed()
    assert not browser.find_element(By.CSS_SELECTOR, "[data-testid=data-refresh]").is_displayed()
    wait_for_value(browser, "/small/a", "1")
    rest(server, "PUT", "small/a", json=42)
    wait_for_value(browser, "/small/a", "42")
    # Key search in the live location.
    search = browser.find_element(By.CSS_SELECTOR, "[data-testid=key-search-input]")
    search.clear()
    search.send_keys("b", Keys.ENTER)
    wait_until(browser, lambda d: [b.get_attribute("data-key") for b in d.find_elements(By.CSS_SELECTOR, "[data-testid=key-result]")] == ["b"], 10)
    assert "1 child" in browser.find_element(By.CSS_SELECTOR, "[data-testid=key-result]").text
    rest(server, "PUT", "small/a", json=1)
    rest(server, "DELETE", "zeta")
    rest(server, "PUT", "posts/p00007/title", json="Post 7")
    no_page_errors(browser)


def test_a_big_location_deeper_down_is_read_on_demand_and_searched(browser, big_server):
    server = big_server
    count_bytes(browser)
    open_console(browser, server, "data/posts")
    wait_on_demand(browser)
    assert len(rows_under(browser, "/posts")) == 100
    search = browser.find_element(By.CSS_SELECTOR, "[data-testid=key-search-input]")
    search.send_keys("p0123", Keys.ENTER)
    wait_until(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "[data-testid=key-result]")) == 10, 10)
    keys = [b.get_attribute("data-key") for b in browser.find_elements(By.CSS_SELECTOR, "[data-testid=key-result]")]
    assert keys == [f"p{index:05}" for index in range(1230, 1240)]
    # A key far past what the tree read opens in the panel with its size.
    browser.find_elements(By.CSS_SELECTOR, "[data-testid=key-result]")[5].click()
    wait_until(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#node-panel-title").text == "/posts/p01235", 5)
    wait_until(browser, lambda d: "2 children and 3 nodes" in panel_text(d), 10, panel_text(browser))
    got = received(browser)
    assert got["streams"] == []
    assert got["fetch"] < server.whole_bytes / 20
    # A path with a bad key gets the server's words, and nothing is read.
    go(browser, "data/posts/a%5Bb")
    wait_until(browser, lambda d: "Invalid path" in d.find_element(By.CSS_SELECTOR, "[data-testid=data-status]").text, 10,
               browser.find_element(By.CSS_SELECTOR, "[data-testid=data-status]").text)
    no_page_errors(browser, "400")


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone-360"])
def test_the_data_section_in_both_modes_passes_the_accessibility_checks(browser_factory, big_server, screenshot, phone):
    """The tree read on demand (with a node selected) and a live one, through the app's audit
    (contrast, labels, landmarks, overflow at 360 px, focus order and visibility, rings not
    cut off by the tree pane or the node panel), light and dark."""
    from test_app_accessibility import check_screen, report

    server = big_server
    driver = browser_factory(phone=phone)
    size = "phone" if phone else "desktop"
    problems = []
    open_console(driver, server, "data")
    wait_on_demand(driver)
    driver.find_element(By.CSS_SELECTOR, f"{node_css('/posts')} > .line .twisty").click()
    wait_for(driver, f"{node_css('/posts')} [data-testid=tree-show-more]")
    problems += check_screen(driver, f"{size} #/data on demand", phone)
    # Focus on a tree row: its own ring, not cut off.
    driver.find_element(By.CSS_SELECTOR, f"{node_css('/posts/p00003')} > .line .key").click()
    driver.switch_to.active_element.send_keys(Keys.ARROW_DOWN)
    assert driver.switch_to.active_element.get_attribute("data-path") == "/posts/p00004"
    focus = driver.execute_script(
        (Path(__file__).parent / "accessibility_audit.js").read_text() + "\nreturn hearthFocusCheck();")
    assert not focus["problems"], focus
    screenshot(driver, f"console-data-on-demand-{size}")
    if not phone:
        problems += check_screen(driver, f"{size} #/data on demand, a row selected", phone)

    go(driver, "data/small")
    wait_live(driver)
    wait_for(driver, node_css("/small/b"))
    problems += check_screen(driver, f"{size} #/data/small live", phone)
    assert not problems, report(problems)
    no_page_errors(driver)


def test_writes_from_the_panel_show_in_a_location_read_on_demand(browser, big_server):
    """The location is not live, so the console reads it again after its own writes."""
    server = big_server
    open_console(browser, server, "data/posts")
    wait_on_demand(browser)
    wait_for_value(browser, "/posts/p00002", "2 children")

    # Add a child to a post: the post shows it without a Refresh.
    select(browser, "/posts/p00002")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=child-key]").send_keys("tag")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=child-input]").send_keys("new")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=child-add]").click()
    wait_until(browser, lambda d: rest(server, "GET", "posts/p00002/tag") == "new", 10, "the child was not added")
    wait_for_value(browser, "/posts/p00002", "3 children")
    wait_for_value(browser, "/posts/p00002/tag", '"new"')

    # A key no key can have is refused in words, and nothing is written.
    select(browser, "/posts/p00002")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=child-key]").send_keys("a.b")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=child-input]").send_keys("x")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=child-add]").click()
    assert "A key cannot contain" in wait_for(browser, ".toast-error").text
    assert set(rest(server, "GET", "posts/p00002")) == {"title", "likes", "tag"}

    # Delete a whole post, after confirming: its row goes, and the count follows.
    select(browser, "/posts/p00003")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=node-delete]").click()
    wait_for(browser, "dialog [data-testid=confirm-ok]").click()
    wait_until(browser, lambda d: rest(server, "GET", "posts/p00003") is None, 10, "the post was not deleted")
    wait_until(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, node_css("/posts/p00003")), 10, "the deleted row stayed")
    wait_for_value(browser, "/posts", f"{POSTS - 1:,} children")
    wait_on_demand(browser)

    rest(server, "PUT", "posts/p00003", json={"title": "Post 3", "likes": 3})
    rest(server, "DELETE", "posts/p00002/tag")
    no_page_errors(browser)
