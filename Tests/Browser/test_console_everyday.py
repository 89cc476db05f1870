"""Browser tests of the console as people use it every day (issue 35, items 10, 11 and 13), on a
server of its own with 40 users, more than 60 requests, a request log of 50 and a sample of its
figures every 0.2 s:

- the Server page's graphs start with the server's history from before the page was opened,
  over a chosen time range (5 minutes, an hour, 6 hours);
- the Logs page keeps what it read while open (past the server's ring), filters it by time, and
  shows 25 rows or more on a 1440 × 900 screen with the room going to the path;
- the Users page shows 25 rows or more, one line each, with each row's actions in a menu button
  (arrow keys, Escape, a click outside) and the New user form in a dialog;
- the Data section finds a deep key in the whole database or below the location shown, on the
  server, for admins only;
- the rules simulator picks its user from the accounts and shows the verdict beside the form.

Each at desktop 1440 × 900 in light and on a 390 × 844 phone in dark, with the accessibility
audit the console's sweeps use.
"""

from __future__ import annotations

import time
import uuid

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from browser_support import launch_server, stop_server, wait_for, wait_until
from harness import wait_until as wait_for_server
from test_app_accessibility import audit, check_screen, report
from test_app_core import emulate_dark
from test_console import accounts_url, admin_headers, no_page_errors, open_console, open_new_user, row_action

USERS = 40
REQUEST_LOG_SIZE = 50
SIZES = pytest.mark.parametrize("phone", [False, True], ids=["desktop-1440-light", "phone-390-dark"])
LONG_PATH = "/everyday/a-rather-long-location/with/many/levels/that/goes/on/and/on/for/a/while/item.json"


@pytest.fixture(scope="module")
def busy(tmp_path_factory):
    """A server with 40 more users and 60 more requests than the demo's, whose request log keeps
    50 and whose figures are sampled every 0.2 s (so its history fills without a long wait)."""
    served = launch_server(tmp_path_factory.mktemp("everyday") / "data", extra_args=(
        "--metrics-history-seconds", "0.2", "--request-log-size", str(REQUEST_LOG_SIZE)))
    try:
        for index in range(USERS):
            requests.post(accounts_url(served, "accounts"), headers=admin_headers(served), timeout=10, json={
                "email": f"everyday-{index:02}@example.com", "password": "secret-123",
                "displayName": f"Everyday person number {index}"}).raise_for_status()
        for index in range(60):
            requests.get(f"{served.url}{LONG_PATH}", params={"auth": served.admin_token, "i": index}, timeout=10)
        yield served
    finally:
        stop_server(served)


def sized(browser_factory, phone: bool):
    """A 1440 × 900 desktop in light, or a 390 × 844 phone in dark."""
    if phone:
        driver = browser_factory(phone=True)
    else:
        driver = browser_factory()
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": 1440, "height": 900, "deviceScaleFactor": 1, "mobile": False})
    emulate_dark(driver, phone)
    return driver


def size_name(phone: bool) -> str:
    return "phone-dark" if phone else "desktop-light"


def fits_width(driver) -> bool:
    return driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")


def rows_in_view(driver, css) -> int:
    """Scrolls the first row of ``css`` to the top of the window and counts the rows seen whole."""
    return driver.execute_script("""
        const rows = [...document.querySelectorAll(arguments[0])];
        if (!rows.length) return 0;
        rows[0].scrollIntoView({ block: 'start' });
        const head = rows[0].closest('table').querySelector('thead');
        if (head && head.getBoundingClientRect().height) window.scrollBy(0, -head.getBoundingClientRect().height);
        return rows.filter((row) => { const box = row.getBoundingClientRect(); return box.top >= 0 && box.bottom <= innerHeight; }).length;
    """, css)


def audited(driver, label, phone, screen=True):
    """The audit's problems on the screen as it is, in both themes (with the Tab walk when ``screen``)."""
    if screen:
        problems = check_screen(driver, label, phone)
    else:
        problems = [f"{label}: {v['rule']}: {v['selector']}: {v['detail']}" for v in audit(driver, phone)]
    emulate_dark(driver, phone)
    return problems


# MARK: - Item 10: the server's history

def history(server, **params):
    response = requests.get(f"{server.url}/.hearth/metrics/history", params=params, headers=admin_headers(server), timeout=10)
    response.raise_for_status()
    return response.json()


def test_the_history_is_for_admins_only_and_refuses_bad_times(busy):
    anonymous = requests.get(f"{busy.url}/.hearth/metrics/history", timeout=10)
    assert anonymous.status_code == 401 and "samples" not in anonymous.text
    user = requests.get(f"{busy.url}/.hearth/metrics/history", headers={"Authorization": "Bearer not-a-token"}, timeout=10)
    assert user.status_code == 401
    bad = requests.get(f"{busy.url}/.hearth/metrics/history", params={"since": "an hour ago"}, headers=admin_headers(busy), timeout=10)
    assert bad.status_code == 400 and "since must be a time" in bad.json()["error"]
    body = history(busy)
    assert body["intervalSeconds"] == 0.2 and body["capacity"] == 2160
    newest = body["samples"][-1]["time"]
    assert history(busy, since=newest + 1, until=newest + 1)["samples"] == []


@SIZES
def test_the_graphs_show_what_happened_before_the_page_was_opened(busy, browser_factory, screenshot, phone):
    # The server sampled on its own: samples from before anyone opened the page.
    wait_for_server(lambda: len(history(busy)["samples"]) >= 10, 20, "the server kept no history")
    opened = time.time() * 1000
    driver = sized(browser_factory, phone)
    open_console(driver, busy, "server")
    graphs = wait_for(driver, "[data-testid=server-graphs]")
    wait_until(driver, lambda d: int(graphs.get_attribute("data-history-samples") or 0) >= 10, 10, "no history on the page")
    assert float(graphs.get_attribute("data-history-from")) < opened - 1000
    # The first own read of /metrics is one point: the others are the server's.
    points = int(driver.find_element(By.CSS_SELECTOR, "[data-testid=graph-requests]").get_attribute("data-points"))
    assert points >= 10
    assert "a sample every 0.2 s" in driver.find_element(By.CSS_SELECTOR, "[data-testid=history-note]").text
    # The rates are there from the history: the seeding's requests are in it.
    Select(driver.find_element(By.CSS_SELECTOR, "[data-testid=graphs-range]")).select_by_value(str(3600_000))
    wait_until(driver, lambda d: "last 1 hour" in d.find_element(By.CSS_SELECTOR, "[data-testid=graph-requests] .graph-scale").text,
               5, "the range did not change")
    Select(driver.find_element(By.CSS_SELECTOR, "[data-testid=graphs-range]")).select_by_value(str(6 * 3600_000))
    wait_until(driver, lambda d: "last 6 hours" in d.find_element(By.CSS_SELECTOR, "[data-testid=graph-memory] .graph-scale").text, 5)
    assert fits_width(driver)
    screenshot(driver, f"console-server-history-{size_name(phone)}")
    problems = audited(driver, f"{size_name(phone)} server history", phone)
    assert not problems, report(problems)
    no_page_errors(driver)


# MARK: - Item 10 and 11: the Logs page

ROWS = "tr[data-testid=request-row]"


def shown_paths(driver):
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map((cell) => cell.textContent)", f"{ROWS} [data-testid=request-path]")


@SIZES
def test_the_logs_keep_what_they_read_filter_by_time_and_use_the_space(busy, browser_factory, screenshot, phone):
    driver = sized(browser_factory, phone)
    # A long path, made while the page is open.
    marker = f"/everyday-kept-{uuid.uuid4().hex[:6]}{LONG_PATH}"
    open_console(driver, busy, "logs")
    wait_for(driver, ROWS)
    requests.get(f"{busy.url}{marker}", params={"auth": busy.admin_token}, timeout=10)
    wait_until(driver, lambda d: any(path.startswith(marker) for path in shown_paths(d)), 10, "the marked request never showed")
    # More requests than the server's ring holds push it out of the server's answers; the page keeps it.
    for index in range(REQUEST_LOG_SIZE + 10):
        requests.get(f"{busy.url}/everyday/after/{index}.json", params={"auth": busy.admin_token}, timeout=10)
    server_paths = [entry["path"] for entry in requests.get(
        f"{busy.url}/.hearth/requests", params={"limit": 1000}, headers=admin_headers(busy), timeout=10).json()["entries"]]
    assert not any(path.startswith(marker) for path in server_paths)
    wait_until(driver, lambda d: any(path.startswith(f"/everyday/after/{REQUEST_LOG_SIZE + 9}.json") for path in shown_paths(d)),
               10, "the newest request never showed")
    assert any(path.startswith(marker) for path in shown_paths(driver)), "the page forgot what it read"
    assert len(shown_paths(driver)) > REQUEST_LOG_SIZE

    if not phone:
        # 25 rows or more on the screen, one line each; the path gets the room and its title holds it whole.
        assert rows_in_view(driver, ROWS) >= 25
        widths = driver.execute_script("""
            const cell = document.querySelector('[data-testid=request-path]');
            return { path: cell.getBoundingClientRect().width, table: cell.closest('table').getBoundingClientRect().width,
                     row: cell.closest('tr').getBoundingClientRect().height };""")
        assert widths["path"] >= 0.4 * widths["table"], widths
        assert widths["row"] < 40, widths
    long_cell = next(cell for cell in driver.find_elements(By.CSS_SELECTOR, f"{ROWS} [data-testid=request-path]")
                     if cell.get_attribute("title").startswith(marker))
    assert long_cell.get_attribute("title") == f"{marker}?auth=***"
    assert fits_width(driver)
    screenshot(driver, f"console-logs-many-{size_name(phone)}")

    # "Last 5 minutes" ten minutes from now: everything here is older, left out (by the server too).
    time_filter = Select(driver.find_element(By.CSS_SELECTOR, "[data-testid=requests-time]"))
    driver.execute_script("window.__realNow = Date.now; Date.now = () => window.__realNow() + 10 * 60_000;")
    time_filter.select_by_value("5")
    empty = wait_for(driver, "[data-testid=requests-empty]")
    wait_until(driver, lambda d: "No recent request matches" in empty.text and not shown_paths(d), 10, "old requests stayed")
    driver.execute_script("Date.now = window.__realNow;")
    driver.find_element(By.CSS_SELECTOR, "[data-testid=requests-path]").send_keys(Keys.ENTER)
    wait_until(driver, lambda d: any(path.startswith(marker) for path in shown_paths(d)), 10, "the last 5 minutes lost the kept request")

    # A range: one in the past shows nothing; "from" after "to" says why.
    time_filter.select_by_value("range")
    set_value = "arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('change'))"
    driver.execute_script(set_value, driver.find_element(By.CSS_SELECTOR, "[data-testid=requests-from]"), "2020-01-01T00:00")
    driver.execute_script(set_value, driver.find_element(By.CSS_SELECTOR, "[data-testid=requests-to]"), "2020-01-01T01:00")
    wait_until(driver, lambda d: not shown_paths(d), 10, "a past range still showed requests")
    driver.execute_script(set_value, driver.find_element(By.CSS_SELECTOR, "[data-testid=requests-from]"), "2020-01-02T00:00")
    error = wait_for(driver, "[data-testid=requests-error]")
    assert "after" in error.text
    problems = audited(driver, f"{size_name(phone)} logs with a range", phone)
    assert not problems, report(problems)
    no_page_errors(driver)


# MARK: - Item 11: the Users page

USER_ROWS = "tr[data-testid=user-row]"


@SIZES
def test_users_show_25_rows_with_a_menu_of_actions_and_a_dialog_to_add_one(busy, browser_factory, screenshot, phone):
    driver = sized(browser_factory, phone)
    open_console(driver, busy, "users")
    wait_until(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, USER_ROWS)) >= USERS, 10, "the users did not show")
    in_view = rows_in_view(driver, USER_ROWS)
    screenshot(driver, f"console-users-many-{size_name(phone)}")
    if not phone:
        heights = driver.execute_script(
            "return [...document.querySelectorAll(arguments[0])].map((row) => row.getBoundingClientRect().height)", USER_ROWS)
        assert in_view >= 25, heights
        assert max(heights) < 45, heights
    assert fits_width(driver)

    # The actions are in a menu button: opened, it says so; the arrow keys, End and Escape work.
    first = driver.find_elements(By.CSS_SELECTOR, USER_ROWS)[0]
    button = first.find_element(By.CSS_SELECTOR, "[data-testid=user-actions]")
    assert button.get_attribute("aria-haspopup") == "menu" and button.get_attribute("aria-expanded") == "false"
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
    button.click()
    assert button.get_attribute("aria-expanded") == "true"
    items = first.find_elements(By.CSS_SELECTOR, "[role=menuitem]")
    assert [item.get_attribute("data-testid") for item in items] == [
        "user-toggle-disabled", "user-reset", "user-revoke", "user-claims", "user-delete"]
    assert driver.switch_to.active_element.get_attribute("data-testid") == "user-toggle-disabled"
    driver.switch_to.active_element.send_keys(Keys.ARROW_DOWN)
    assert driver.switch_to.active_element.get_attribute("data-testid") == "user-reset"
    driver.switch_to.active_element.send_keys(Keys.END)
    assert driver.switch_to.active_element.get_attribute("data-testid") == "user-delete"
    driver.switch_to.active_element.send_keys(Keys.ARROW_DOWN)
    assert driver.switch_to.active_element.get_attribute("data-testid") == "user-toggle-disabled", "the arrows wrap round"
    # The open menu is inside the window and passes the audit.
    assert driver.execute_script("""
        const box = document.querySelector('[role=menu]:not([hidden])').getBoundingClientRect();
        return box.left >= 0 && box.right <= innerWidth && box.top >= 0 && box.bottom <= innerHeight;""")
    screenshot(driver, f"console-users-menu-{size_name(phone)}")
    problems = audited(driver, f"{size_name(phone)} users menu open", phone, screen=False)
    assert not problems, report(problems)
    driver.switch_to.active_element.send_keys(Keys.ESCAPE)
    assert button.get_attribute("aria-expanded") == "false"
    assert driver.switch_to.active_element.get_attribute("data-testid") == "user-actions", "Escape gives the focus back"
    # A click outside closes it.
    button.click()
    assert first.find_element(By.CSS_SELECTOR, "[role=menu]").is_displayed()
    driver.find_element(By.CSS_SELECTOR, "#section-title").click()
    wait_until(driver, lambda d: button.get_attribute("aria-expanded") == "false", 5, "a click outside left the menu open")
    assert not first.find_element(By.CSS_SELECTOR, "[role=menu]").is_displayed()
    # An action from it asks first; cancelled, nothing changes.
    row_action(first, "user-toggle-disabled")
    wait_for(driver, "dialog[open] [data-testid=confirm-cancel]").click()
    assert not first.find_elements(By.CSS_SELECTOR, "[data-testid=user-disabled]")

    # New user: a dialog opened by a button; made, it closes and the user is listed.
    email = f"everyday-new-{uuid.uuid4().hex[:6]}@example.com"
    open_new_user(driver)
    problems = audited(driver, f"{size_name(phone)} new user dialog", phone, screen=False)
    assert not problems, report(problems)
    driver.find_element(By.CSS_SELECTOR, "[data-testid=new-user-email]").send_keys(email)
    driver.find_element(By.CSS_SELECTOR, "[data-testid=new-user-password]").send_keys("secret-123")
    driver.find_element(By.CSS_SELECTOR, "[data-testid=new-user-submit]").click()
    wait_until(driver, lambda d: not d.find_elements(By.CSS_SELECTOR, "dialog[open][data-testid=new-user-dialog]"), 10,
               "the dialog stayed open")
    driver.find_element(By.CSS_SELECTOR, "[data-testid=users-search]").send_keys(email)
    wait_until(driver, lambda d: [c.text for c in d.find_elements(By.CSS_SELECTOR, "[data-testid=user-email]")] == [email], 10,
               "the new user is not listed")
    # A bad one is refused in the dialog and makes nothing.
    open_new_user(driver)
    driver.find_element(By.CSS_SELECTOR, "[data-testid=new-user-email]").send_keys(email)
    driver.find_element(By.CSS_SELECTOR, "[data-testid=new-user-password]").send_keys("secret-123")
    driver.find_element(By.CSS_SELECTOR, "[data-testid=new-user-submit]").click()
    assert "already" in wait_for(driver, "dialog[open] [data-testid=new-user-error]").text
    driver.find_element(By.CSS_SELECTOR, "[data-testid=new-user-cancel]").click()
    found = requests.post(accounts_url(busy, "accounts:query"), headers=admin_headers(busy), json={"search": email}, timeout=10)
    assert len(found.json().get("userInfo", [])) == 1
    problems = audited(driver, f"{size_name(phone)} users", phone)
    assert not problems, report(problems)
    no_page_errors(driver, "accounts - Failed to load resource: the server responded with a status of 400")


# MARK: - Item 13: finding keys in the whole database

def put(server, path, value):
    requests.put(f"{server.url}/{path}.json", params={"auth": server.admin_token}, json=value, timeout=10).raise_for_status()


def path_results(driver):
    return driver.execute_script(
        "return [...document.querySelectorAll('[data-testid=key-path-result]')].map((link) => link.dataset.path)")


def test_the_whole_database_search_is_for_admins_only(busy):
    put(busy, "everyday-secret/x/y/HiddenNeedle", 1)
    for headers in ({}, {"Authorization": "Bearer not-a-token"}):
        refused = requests.get(f"{busy.url}/.hearth/data/search", params={"q": "needle"}, headers=headers, timeout=10)
        assert refused.status_code == 401 and "HiddenNeedle" not in refused.text
    # A signed-in user is refused too, whatever the rules would let them read.
    account = busy.accounts[0]
    signed_in = requests.post(f"{busy.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=x",
                              json={"email": account["email"], "password": account["password"], "returnSecureToken": True},
                              timeout=10).json()
    user = requests.get(f"{busy.url}/.hearth/data/search", params={"q": "needle", "auth": signed_in["idToken"]}, timeout=10)
    assert user.status_code in (401, 403) and "HiddenNeedle" not in user.text
    bad = requests.get(f"{busy.url}/.hearth/data/search", params={"q": ""}, headers=admin_headers(busy), timeout=10)
    assert bad.status_code == 400 and "q must be" in bad.json()["error"]


@SIZES
def test_a_deep_key_is_found_in_the_whole_database_and_opens(busy, browser_factory, screenshot, phone):
    tag = uuid.uuid4().hex[:6]
    put(busy, f"everyday-find-{tag}", {"a": {"b": {"c": {"d": {f"DeepNeedle{tag}": 1}}}}, "near": {"x": 2}})
    put(busy, f"everyday-other-{tag}", {f"needle{tag}work": {"n": 1}})
    driver = sized(browser_factory, phone)
    open_console(driver, busy, f"data/everyday-find-{tag}/near")
    wait_for(driver, "[data-testid=data-status][data-state=live]")
    Select(driver.find_element(By.CSS_SELECTOR, "[data-testid=key-search-scope]")).select_by_value("root")
    driver.find_element(By.CSS_SELECTOR, "[data-testid=key-search-input]").send_keys(f"NEEDLE{tag}", Keys.ENTER)
    deep = f"/everyday-find-{tag}/a/b/c/d/DeepNeedle{tag}"
    wait_until(driver, lambda d: path_results(d) == [deep, f"/everyday-other-{tag}/needle{tag}work"], 10, "the deep key was not found")
    status = driver.find_element(By.CSS_SELECTOR, "[data-testid=key-search-status]").text
    assert "2 locations in the whole database" in status
    assert driver.find_element(By.CSS_SELECTOR, "[data-testid=key-search-results]").get_attribute("data-complete") == "true"
    assert fits_width(driver)
    screenshot(driver, f"console-data-whole-search-{size_name(phone)}")
    problems = audited(driver, f"{size_name(phone)} whole-database search", phone, screen=False)
    assert not problems, report(problems)
    # A result opens its location.
    driver.find_element(By.CSS_SELECTOR, f'[data-testid=key-path-result][data-path="{deep}"]').click()
    wait_until(driver, lambda d: d.execute_script("return decodeURIComponent(location.hash)") == f"#/data{deep}", 5,
               "the result did not open its location")
    wait_for(driver, "[data-testid=data-status][data-state=live]")

    # From a location: only what is below it.
    driver.execute_script("location.hash = arguments[0]", f"#/data/everyday-other-{tag}")
    wait_for(driver, "[data-testid=data-status][data-state=live]")
    Select(driver.find_element(By.CSS_SELECTOR, "[data-testid=key-search-scope]")).select_by_value("below")
    driver.find_element(By.CSS_SELECTOR, "[data-testid=key-search-input]").send_keys(f"needle{tag}", Keys.ENTER)
    wait_until(driver, lambda d: path_results(d) == [f"/everyday-other-{tag}/needle{tag}work"], 10, "the search went outside")
    assert f"under /everyday-other-{tag}" in driver.find_element(By.CSS_SELECTOR, "[data-testid=key-search-status]").text
    no_page_errors(driver)


# MARK: - Item 13: the rules simulator's user picker

RULES = """{
  "rules": {
    ".read": false,
    "notes": { "$uid": { ".write": "auth != null && auth.uid === $uid && auth.token.editor === true" } }
  }
}"""


@SIZES
def test_the_simulator_picks_a_user_and_shows_the_verdict_beside_the_form(busy, browser_factory, screenshot, phone):
    rules_url = f"{busy.url}/.settings/rules.json"
    original = requests.get(rules_url, headers=admin_headers(busy), timeout=10).text
    requests.put(rules_url, data=RULES, headers=admin_headers(busy), timeout=10).raise_for_status()
    email = "everyday-07@example.com"
    found = requests.post(accounts_url(busy, "accounts:query"), headers=admin_headers(busy), json={"search": email}, timeout=10)
    uid = found.json()["userInfo"][0]["localId"]
    requests.post(accounts_url(busy, "accounts:update"), headers=admin_headers(busy), timeout=10,
                  json={"localId": uid, "customAttributes": '{"editor": true}'}).raise_for_status()
    try:
        driver = sized(browser_factory, phone)
        open_console(driver, busy, "rules")
        wait_for(driver, "[data-testid=rules-simulator]")
        Select(driver.find_element(By.CSS_SELECTOR, "[data-testid=sim-operation]")).select_by_value("set")
        Select(driver.find_element(By.CSS_SELECTOR, "[data-testid=sim-who]")).select_by_value("in")
        driver.find_element(By.CSS_SELECTOR, "[data-testid=sim-user-search]").send_keys("everyday-07")
        option = wait_for(driver, f'[data-testid=sim-user-option][data-uid="{uid}"]')
        assert email in option.text
        problems = audited(driver, f"{size_name(phone)} simulator user results", phone, screen=False)
        assert not problems, report(problems)
        option.click()
        # The picker filled the uid, the provider and the claims from the account.
        assert driver.find_element(By.CSS_SELECTOR, "[data-testid=sim-uid]").get_attribute("value") == uid
        assert driver.find_element(By.CSS_SELECTOR, "[data-testid=sim-provider]").get_attribute("value") == "password"
        assert '"editor":true' in driver.find_element(By.CSS_SELECTOR, "[data-testid=sim-claims]").get_attribute("value").replace(" ", "")
        assert email in driver.find_element(By.CSS_SELECTOR, "[data-testid=sim-user-chosen]").text
        path = driver.find_element(By.CSS_SELECTOR, "[data-testid=sim-path]")
        path.clear()
        path.send_keys(f"/notes/{uid}")
        driver.find_element(By.CSS_SELECTOR, "[data-testid=sim-data]").send_keys('"hello"')
        run = driver.find_element(By.CSS_SELECTOR, "[data-testid=sim-run]")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", run)
        run.click()
        verdict = wait_for(driver, "[data-testid=sim-verdict]")
        wait_until(driver, lambda d: verdict.text == "✓ Allowed", 10, "the picked user was not allowed")
        boxes = driver.execute_script("""
            const box = (css) => document.querySelector(css).getBoundingClientRect().toJSON();
            return { form: box('[data-testid=sim-form]'), verdict: box('[data-testid=sim-verdict]') };""")
        if phone:
            assert boxes["verdict"]["top"] >= boxes["form"]["bottom"] - 1, boxes
        else:
            # Beside the form, at its height, not below it.
            assert boxes["verdict"]["left"] >= boxes["form"]["right"] - 1, boxes
            assert boxes["verdict"]["top"] < boxes["form"]["bottom"], boxes
        assert fits_width(driver)
        screenshot(driver, f"console-rules-simulator-picker-{size_name(phone)}")
        problems = audited(driver, f"{size_name(phone)} simulator verdict", phone)
        assert not problems, report(problems)
        no_page_errors(driver)
    finally:
        requests.put(rules_url, data=original, headers=admin_headers(busy), timeout=10).raise_for_status()


def test_a_user_rows_actions_stay_in_sight_when_the_table_is_wider_than_the_window(browser_factory, server):
    """At 1000 px the users table is wider than its box and scrolls sideways: each row's Actions
    button stays at the box's right edge (a sticky cell), so it and its focus ring are seen."""
    from test_app_accessibility import check_screen, report

    driver = browser_factory()
    driver.set_window_size(1000, 900)
    open_console(driver, server, "users")
    wait_for(driver, "[data-testid=user-row]", 20)
    scroll_width, client_width = driver.execute_script(
        "const box = document.querySelector('.table-wrap'); return [box.scrollWidth, box.clientWidth]")
    assert scroll_width > client_width, "the table fits: this test needs it wider than its box"
    inside = driver.execute_script("""
        const box = document.querySelector('.table-wrap').getBoundingClientRect();
        return [...document.querySelectorAll('[data-testid=user-actions]')].every((button) => {
          const r = button.getBoundingClientRect();
          return r.left >= box.left && r.right <= box.right;
        });""")
    assert inside, "an Actions button is scrolled out of the table's box"
    problems = check_screen(driver, "users, a table wider than the window", False)
    assert not problems, report(problems)
