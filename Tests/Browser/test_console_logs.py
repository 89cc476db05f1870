"""Browser tests of the console's Logs section (`/console/#/logs`): the request log read from
`GET /.hearth/requests` (a request just made shows up, newest first, filtered by status class
and path prefix, live while the page is visible) beside the recent problems, at desktop and
phone sizes in light and dark, against a real `hearth serve --demo`."""

from __future__ import annotations

import uuid

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from browser_support import launch_server, stop_server, wait_for, wait_until
from test_console import admin_headers, go, no_page_errors, open_console

ROWS = "tr[data-testid=request-row]"


def shown(driver, testid):
    """The texts of one column of the log, read at once (the table is redrawn as requests come)."""
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map((cell) => cell.textContent)",
        f"{ROWS} [data-testid={testid}]")


def shown_paths(driver):
    return shown(driver, "request-path")


def shown_statuses(driver):
    return shown(driver, "request-status")


def row_text(driver, path_prefix):
    return driver.execute_script("""
        const row = [...document.querySelectorAll(arguments[0])]
          .find((candidate) => candidate.querySelector('[data-testid=request-path]').textContent.startsWith(arguments[1]));
        return row ? row.innerText : null;
    """, ROWS, path_prefix)


def test_the_request_log_shows_a_request_just_made_and_filters_by_status(browser, server, screenshot):
    open_console(browser, server, "logs")
    wait_for(browser, ROWS)
    marker = f"console-logs-{uuid.uuid4().hex[:8]}"
    # Made while the page is open: the log is live.
    requests.put(f"{server.url}/{marker}/ok.json", params={"auth": server.admin_token}, json=1, timeout=10).raise_for_status()
    refused = requests.get(f"{server.url}/{marker}/refused.json", params={"auth": "not-a-token"}, timeout=10)
    assert refused.status_code == 401
    wait_until(browser, lambda d: any(path.startswith(f"/{marker}/refused.json") for path in shown_paths(d)), 10,
               "the refused request never showed")
    paths = shown_paths(browser)
    # Newest first; the refused request's credential is not shown.
    assert paths.index(f"/{marker}/refused.json?auth=***") < paths.index(f"/{marker}/ok.json?auth=***")
    assert "not-a-token" not in browser.execute_script("return document.querySelector('[data-testid=requests-table]').textContent")
    row = row_text(browser, f"/{marker}/ok")
    assert "PUT" in row and "admin" in row and "rest" in row

    Select(browser.find_element(By.CSS_SELECTOR, "[data-testid=requests-status]")).select_by_value("4xx")
    wait_until(browser, lambda d: shown_statuses(d) and all(status.startswith("4") for status in shown_statuses(d)), 10,
               "the status filter did not apply")
    assert any(path.startswith(f"/{marker}/refused.json") for path in shown_paths(browser))
    assert not any(path.startswith(f"/{marker}/ok.json") for path in shown_paths(browser))

    Select(browser.find_element(By.CSS_SELECTOR, "[data-testid=requests-status]")).select_by_value("")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=requests-path]").send_keys(f"/{marker}")
    wait_until(browser, lambda d: len(shown_paths(d)) == 2 and all(path.startswith(f"/{marker}") for path in shown_paths(d)), 10,
               "the path filter did not apply")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=requests-path]").send_keys("/nothing-here")
    wait_for(browser, "[data-testid=requests-empty]")
    assert "No recent request matches" in browser.find_element(By.CSS_SELECTOR, "[data-testid=requests-empty]").text
    # The recent problems panel is here too.
    wait_for(browser, "[data-testid=problems]")
    screenshot(browser, "console-logs")
    requests.delete(f"{server.url}/{marker}.json", params={"auth": server.admin_token}, timeout=10).raise_for_status()
    no_page_errors(browser)


def test_monitoring_reads_are_not_listed(browser, server):
    # The Server page reads /.hearth/stats and /metrics; the Logs page its two endpoints.
    open_console(browser, server, "server")
    wait_until(browser, lambda d: d.execute_script(
        "return performance.getEntriesByType('resource').some((entry) => new URL(entry.name).pathname === '/metrics')"),
        10, "the Server page never read /metrics")
    go(browser, "logs")
    wait_for(browser, ROWS)
    go(browser, "rules")
    wait_for(browser, "#section-title")
    before = requests.get(f"{server.url}/.hearth/requests", params={"limit": 1000}, headers=admin_headers(server), timeout=10).json()
    assert before["entries"], "other requests are listed"
    monitoring = ("/.hearth/requests", "/.hearth/logs", "/.hearth/stats", "/metrics")
    assert not any(entry["path"].split("?")[0] in monitoring for entry in before["entries"])


def test_a_server_without_a_request_log_says_so(browser, tmp_path):
    served = launch_server(tmp_path / "data", extra_args=("--request-log-size", "0"))
    try:
        open_console(browser, served, "logs")
        empty = wait_for(browser, "[data-testid=requests-empty]")
        wait_until(browser, lambda d: "--request-log-size 0" in empty.text, 10, "the page never said the log is off")
        assert browser.find_elements(By.CSS_SELECTOR, ROWS) == []
        no_page_errors(browser)
    finally:
        stop_server(served)


def test_non_admins_are_refused_the_request_log(server):
    assert requests.get(f"{server.url}/.hearth/requests", timeout=10).status_code == 401
    refused = requests.get(f"{server.url}/.hearth/requests", headers={"Authorization": "Bearer not-a-token"}, timeout=10)
    assert refused.status_code == 401
    assert refused.json() == {"error": "Permission denied"}
    bad = requests.get(f"{server.url}/.hearth/requests", params={"status": "7xx"}, headers=admin_headers(server), timeout=10)
    assert bad.status_code == 400 and "status class" in bad.json()["error"]


@pytest.mark.parametrize("phone,dark", [(False, True), (True, False), (True, True)],
                         ids=["desktop-dark", "phone-light", "phone-dark"])
def test_the_logs_page_fits_in_every_size_and_theme(browser_factory, server, screenshot, phone, dark):
    driver = browser_factory(phone=phone)
    if dark:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    requests.get(f"{server.url}/console-logs-fit/a-rather-long-path/that/goes/on/and/on.json",
                 params={"auth": server.admin_token, "orderBy": '"$key"'}, timeout=10)
    open_console(driver, server, "logs")
    wait_for(driver, ROWS)
    assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1"), "sticks out sideways"
    if phone:
        # On a phone the table is one card per row: nothing to scroll sideways inside it either.
        assert driver.execute_script(
            "return [...document.querySelectorAll('.table-wrap')].every((wrap) => wrap.scrollWidth <= wrap.clientWidth + 1)")
    # Status colours stay readable on their background in both themes.
    assert driver.execute_script("""
        const cell = document.querySelector('[data-testid=request-status]');
        return getComputedStyle(cell).color !== getComputedStyle(document.body).backgroundColor;
    """)
    screenshot(driver, f"console-logs-{'phone' if phone else 'desktop'}-{'dark' if dark else 'light'}")
    no_page_errors(driver)
