"""Browser tests of the console's Backups section (`/console/#/backups`), against a real
`hearth serve --demo --backup-dir <folder>`: back up now (listed, checked against its
manifest), a write after the backup, then restoring that path from the backup while a second
console watches the tree change live; a damaged backup shown as such and refused; the message
of a server without a backup folder; non-admins refused by every endpoint; desktop and phone
(360 px) in light and dark."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from browser_support import launch_server, stop_server, wait_for, wait_until
from test_console import admin_headers, go, no_page_errors, open_console, wait_for_value, wait_live

ROWS = "tr[data-testid=backup-row]"


@pytest.fixture(scope="module")
def backup_server():
    data = Path(tempfile.mkdtemp(prefix="hearth-browser-backups-"))
    folder = data.parent / f"{data.name}-backups"
    served = launch_server(data, extra_args=("--backup-dir", str(folder)))
    served.backup_folder = folder
    yield served
    stop_server(served)
    shutil.rmtree(data, ignore_errors=True)
    shutil.rmtree(folder, ignore_errors=True)


def rest(server, method, path, **kwargs):
    response = requests.request(method, f"{server.url}/{path}.json", params={"auth": server.admin_token}, timeout=10, **kwargs)
    response.raise_for_status()
    return response.json()


def back_up_now(driver):
    """Clicks "Back up now" and returns the name of the backup it made, once listed."""
    before = {row.get_attribute("data-name") for row in driver.find_elements(By.CSS_SELECTOR, ROWS)}
    driver.find_element(By.CSS_SELECTOR, "[data-testid=backup-now]").click()
    wait_until(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, ROWS)) > len(before), 30, "the new backup was never listed")
    names = [row.get_attribute("data-name") for row in driver.find_elements(By.CSS_SELECTOR, ROWS)]
    made = [name for name in names if name not in before]
    assert len(made) == 1
    return made[0]


def test_back_up_now_then_restore_a_path_live(browser_factory, backup_server, screenshot):
    server = backup_server
    rest(server, "PUT", "console-backup", json={"note": "before", "list": {"a": 1, "b": 2}})
    console = browser_factory()
    open_console(console, server, "backups")
    wait_for(console, "[data-testid=backups-listing]")
    name = back_up_now(console)
    row = console.find_element(By.CSS_SELECTOR, f'{ROWS}[data-name="{name}"]')
    assert row.get_attribute("data-verified") == "true"
    assert "Verified" in row.text and "default" in row.text
    assert "written" in console.find_element(By.CSS_SELECTOR, ".progress-text").text
    assert name in console.find_element(By.CSS_SELECTOR, "[data-testid=restore-command]").text
    assert "hearth restore" in console.find_element(By.CSS_SELECTOR, "[data-testid=restore-command]").text

    # Changed after the backup; another console watches the path.
    rest(server, "PUT", "console-backup", json={"note": "after"})
    watcher = browser_factory()
    open_console(watcher, server, "data/console-backup")
    wait_live(watcher)
    wait_for_value(watcher, "/console-backup/note", '"after"')

    Select(console.find_element(By.CSS_SELECTOR, "[data-testid=restore-backup]")).select_by_value(name)
    path = console.find_element(By.CSS_SELECTOR, "[data-testid=restore-path]")
    path.clear()
    path.send_keys("/console-backup")
    console.find_element(By.CSS_SELECTOR, "[data-testid=restore-preview]").click()
    wait_for(console, "[data-testid=preview-current]")
    assert "1 child" in console.find_element(By.CSS_SELECTOR, "[data-testid=preview-current]").text
    assert "2 children" in console.find_element(By.CSS_SELECTOR, "[data-testid=preview-backup]").text
    assert rest(server, "GET", "console-backup") == {"note": "after"}, "a preview changes nothing"
    screenshot(console, "console-backups-preview")

    # Cancelling changes nothing either.
    console.find_element(By.CSS_SELECTOR, "[data-testid=restore-confirm]").click()
    wait_for(console, "dialog [data-testid=confirm-cancel]").click()
    wait_until(console, lambda d: not d.find_elements(By.CSS_SELECTOR, "dialog"), 5)
    assert rest(server, "GET", "console-backup") == {"note": "after"}

    console.find_element(By.CSS_SELECTOR, "[data-testid=restore-confirm]").click()
    wait_for(console, "dialog [data-testid=confirm-ok]").click()
    wait_until(console, lambda d: any("Restored /console-backup" in toast.text
                                      for toast in d.find_elements(By.CSS_SELECTOR, "[data-testid=toast]")), 10,
               "no toast said the path was restored")
    # The watcher's tree shows the old value, live.
    wait_for_value(watcher, "/console-backup/note", '"before"')
    wait_for(watcher, 'li[data-path="/console-backup/list"]')
    assert rest(server, "GET", "console-backup") == {"note": "before", "list": {"a": 1, "b": 2}}
    no_page_errors(console)
    no_page_errors(watcher)


def test_a_damaged_backup_is_shown_as_such_and_cannot_be_restored(browser, backup_server, screenshot):
    server = backup_server
    open_console(browser, server, "backups")
    wait_for(browser, "[data-testid=backups-listing]")
    name = back_up_now(browser)
    log = server.backup_folder / name / "databases" / "default" / "log.sqlite"
    with open(log, "r+b") as file:
        file.seek(100)
        file.write(b"damaged!")
    browser.refresh()
    row = wait_for(browser, f'{ROWS}[data-name="{name}"][data-verified=false]')
    assert "Damaged" in row.text and "differs from the backup's manifest" in row.text
    assert not row.find_element(By.CSS_SELECTOR, "[data-testid=backup-use]").is_enabled()
    options = [option.get_attribute("value") for option in browser.find_elements(By.CSS_SELECTOR, "[data-testid=restore-backup] option")]
    assert name not in options
    screenshot(browser, "console-backups-damaged")
    # Asked for directly, the server refuses it too, and nothing changes.
    rest(server, "PUT", "console-damaged", json="now")
    refused = requests.post(f"{server.url}/.hearth/backups/restore", headers=admin_headers(server), timeout=10,
                            json={"backup": name, "database": "default", "path": "/console-damaged"})
    assert refused.status_code == 422
    assert "differs from the backup's manifest" in refused.json()["error"]
    assert rest(server, "GET", "console-damaged") == "now"
    shutil.rmtree(server.backup_folder / name)
    no_page_errors(browser)


def test_non_admins_are_refused_by_every_backup_endpoint(backup_server):
    url = backup_server.url
    body = {"backup": "x", "database": "default", "path": "/"}
    for headers in ({}, {"Authorization": "Bearer not-a-token"}):
        assert requests.get(f"{url}/.hearth/backups", headers=headers, timeout=10).status_code == 401
        assert requests.post(f"{url}/.hearth/backups", headers=headers, timeout=10).status_code == 401
        for endpoint in ("preview", "restore"):
            answer = requests.post(f"{url}/.hearth/backups/{endpoint}", headers=headers, json=body, timeout=10)
            assert answer.status_code == 401
            assert answer.json() == {"error": "Permission denied"}


def test_without_backups_every_screen_warns_and_the_page_says_how_to_set_them(browser, tmp_path):
    served = launch_server(tmp_path / "data", extra_args=("--no-backups",))
    try:
        assert "Backups:          off (--no-backups)" in served.output()
        open_console(browser, served, "data")
        banner = wait_for(browser, "[data-testid=backup-warning]")
        assert "Backups are off" in banner.text
        banner.find_element(By.CSS_SELECTOR, "a").click()
        note = wait_for(browser, "[data-testid=backups-note].setup")
        assert "--backup-dir" in note.text
        assert not browser.find_element(By.CSS_SELECTOR, "[data-testid=backup-now]").is_displayed()
        no_page_errors(browser)
    finally:
        stop_server(served)


def test_a_default_server_backs_up_every_day_beside_its_data_and_warns_of_nothing(browser, server):
    # `hearth serve` without backup options: a backup a day into <data>-backups beside the data folder.
    assert f"Backups:          every 1d into {server.data.parent / (server.data.name + '-backups')}, keeping 7" in server.output()
    status = requests.get(f"{server.url}/.hearth/backups?progress", headers=admin_headers(server), timeout=10).json()
    assert status["configured"] is True and status["schedule"] == {"everyMilliseconds": 86_400_000, "keep": 7}
    open_console(browser, server, "data")
    wait_for(browser, "[data-testid=database-picker]")
    wait_until(browser, lambda d: d.execute_script(
        "return document.querySelector('[data-testid=backup-warning]')?.hidden") is True, 10, "a warning with backups on")


@pytest.mark.parametrize("phone,dark", [(False, True), (True, False), (True, True)],
                         ids=["desktop-dark", "phone-light", "phone-dark"])
def test_the_backups_page_fits_in_every_size_and_theme(browser_factory, backup_server, screenshot, phone, dark):
    driver = browser_factory(phone=phone)
    if dark:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    if not requests.get(f"{backup_server.url}/.hearth/backups", headers=admin_headers(backup_server), timeout=10).json()["backups"]:
        requests.post(f"{backup_server.url}/.hearth/backups", headers=admin_headers(backup_server), timeout=30).raise_for_status()
    open_console(driver, backup_server, "backups")
    wait_for(driver, ROWS)
    driver.find_element(By.CSS_SELECTOR, "[data-testid=restore-preview]").click()
    wait_for(driver, "[data-testid=preview-current]")
    assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1"), "sticks out sideways"
    if phone:
        # On a phone the table is one card per row: nothing to scroll sideways inside it either.
        assert driver.execute_script(
            "return [...document.querySelectorAll('.table-wrap')].every((wrap) => wrap.scrollWidth <= wrap.clientWidth + 1)")
    screenshot(driver, f"console-backups-{'phone' if phone else 'desktop'}-{'dark' if dark else 'light'}")
    no_page_errors(driver)


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone-360"])
def test_the_new_console_screens_pass_the_accessibility_checks(browser_factory, backup_server, phone):
    """Logs, Backups (with a preview shown) and the Data section with found keys, through the
    app's audit (contrast, labels, landmarks, overflow, focus order and visibility), light and dark."""
    from test_app_accessibility import check_screen, report

    server = backup_server
    if not requests.get(f"{server.url}/.hearth/backups", headers=admin_headers(server), timeout=10).json()["backups"]:
        requests.post(f"{server.url}/.hearth/backups", headers=admin_headers(server), timeout=30).raise_for_status()
    rest(server, "PUT", "console-audit", json={f"key{index}": index for index in range(30)})
    driver = browser_factory(phone=phone)
    size = "phone" if phone else "desktop"
    problems = []

    open_console(driver, server, "logs")
    wait_for(driver, ROWS.replace("backup-row", "request-row"))
    problems += check_screen(driver, f"{size} #/logs", phone)

    go(driver, "backups")
    wait_for(driver, ROWS)
    driver.find_element(By.CSS_SELECTOR, "[data-testid=restore-preview]").click()
    wait_for(driver, "[data-testid=preview-current]")
    problems += check_screen(driver, f"{size} #/backups", phone)

    go(driver, "data/console-audit")
    wait_live(driver)
    driver.find_element(By.CSS_SELECTOR, "[data-testid=key-search-input]").send_keys("key1", Keys.ENTER)
    wait_until(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "[data-testid=key-result]")) == 11, 10)
    # The Data section's own tree and node panel are audited with the rest of the console; here, what finding keys adds.
    problems += [problem for problem in check_screen(driver, f"{size} #/data with found keys", phone)
                 if "key-search" in problem or "key-result" in problem or "] overflow:" in problem]
    assert not problems, report(problems)
    rest(server, "DELETE", "console-audit")
    no_page_errors(driver)
