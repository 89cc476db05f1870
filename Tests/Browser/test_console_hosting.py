"""Browser tests of the console's Hosting section (`/console/#/hosting`), against a real
`hearth serve --demo` (no --hosting: it serves the live release deployed into its data folder)
and releases made with the command line, `hearth hosting deploy <folder> --data <data>`: the
page before any deploy says how to deploy, and shows a release deployed while it is open; two
releases listed newest first with the second live, one expanded to its files, a cancelled
rollback that changes nothing, then a rollback to the first through the page, which the page
and the served app both show; a release of 2,001 files, of which the first 2,000 are listed
and the page says so; a release that cannot be served any more, whose files and
rollback are refused in words, and an unreadable list; a server started with --hosting, which
says it serves that folder as it is; desktop and phone in light and dark, through the
accessibility audit.

Each test has a server and data folder of its own, so none depends on another's releases."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import requests
from selenium.webdriver.common.by import By

import harness
from browser_support import launch_server, shown_texts, stop_server, wait_for, wait_until
from test_console import admin_headers, no_page_errors, open_console

RELEASES = "li[data-testid=release]"
# The page reads the list every five seconds: a deploy made meanwhile shows within one round.
POLL_SECONDS = 15


@pytest.fixture
def hosting_server():
    data = Path(tempfile.mkdtemp(prefix="hearth-browser-hosting-"))
    served = launch_server(data)
    yield served
    stop_server(served)
    shutil.rmtree(data, ignore_errors=True)


def app_folder(parent: Path, name: str, files: dict[str, str]) -> Path:
    """A Firebase web app's folder: its firebase.json (one site, public/) and ``files`` under public/."""
    folder = parent / name
    (folder / "public").mkdir(parents=True)
    (folder / "firebase.json").write_text('{"hosting": {"public": "public"}}')
    for path, text in files.items():
        (folder / "public" / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / "public" / path).write_text(text)
    return folder


def deploy(server, folder: Path, message: str) -> str:
    """`hearth hosting deploy` into the server's data folder, as an operator runs it; the release's ID."""
    done = subprocess.run([harness.hearth_binary(), "hosting", "deploy", str(folder), "--data", str(server.data), "-m", message],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return re.search(r"Deployed release (\S+):", done.stdout).group(1)


def first_and_second(server, tmp_path):
    first = deploy(server, app_folder(tmp_path, "first", {"index.html": "<h1>The first release</h1>"}), "first version")
    second = deploy(server, app_folder(tmp_path, "second", {
        "index.html": "<h1>The second release</h1>", "css/site.css": "body { color: teal; }"}), "second version")
    return first, second


def hosting(server):
    response = requests.get(f"{server.url}/.hearth/hosting", headers=admin_headers(server), timeout=10)
    response.raise_for_status()
    return response.json()


def served_page(server) -> str:
    response = requests.get(f"{server.url}/", timeout=10)
    response.raise_for_status()
    return response.text


def release_css(release_id: str) -> str:
    return f'{RELEASES}[data-id="{release_id}"]'


def shown_releases(driver) -> list[tuple[str, str]]:
    """The releases listed, in order, each with whether it is marked live."""
    return [tuple(pair) for pair in driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map((card) => [card.dataset.id, card.dataset.live])", RELEASES)]


def test_before_any_deploy_the_page_says_how_to_deploy_then_shows_a_deploy(browser, hosting_server, tmp_path):
    server = hosting_server
    open_console(browser, server, "hosting")
    empty = wait_for(browser, "[data-testid=hosting-empty]")
    command = browser.find_element(By.CSS_SELECTOR, "[data-testid=hosting-deploy-command]").text
    assert command == hosting(server)["deployCommand"]
    assert command.startswith("hearth hosting deploy <folder>") and str(server.data) in command
    assert "firebase.json" in empty.text
    assert "Serving the live release" in browser.find_element(By.CSS_SELECTOR, "[data-testid=hosting-mode]").text
    assert not browser.find_element(By.CSS_SELECTOR, "[data-testid=hosting-listing]").is_displayed()

    # A deploy from the command line shows up while the page is open.
    release = deploy(server, app_folder(tmp_path, "app", {"index.html": "<h1>Deployed</h1>"}), "from the shell")
    wait_until(browser, lambda d: shown_releases(d) == [(release, "true")], POLL_SECONDS, "the deployed release never showed")
    assert not browser.find_element(By.CSS_SELECTOR, "[data-testid=hosting-empty]").is_displayed()
    assert release in browser.find_element(By.CSS_SELECTOR, "[data-testid=hosting-live]").text
    assert "Deployed" in served_page(server)
    no_page_errors(browser)


def test_two_releases_are_listed_expanded_and_the_first_rolled_back_to(browser, hosting_server, tmp_path, screenshot):
    server = hosting_server
    first, second = first_and_second(server, tmp_path)
    assert "The second release" in served_page(server)
    open_console(browser, server, "hosting")

    # Newest first, the second live: marked in words, with no rollback of its own.
    wait_until(browser, lambda d: shown_releases(d) == [(second, "true"), (first, "false")], 10,
               "the two releases were not listed with the second live")
    live_card = browser.find_element(By.CSS_SELECTOR, release_css(second))
    older = browser.find_element(By.CSS_SELECTOR, release_css(first))
    assert live_card.get_attribute("aria-current") == "true" and older.get_attribute("aria-current") is None
    assert live_card.find_element(By.CSS_SELECTOR, "[data-testid=release-live-badge]").text == "Live"
    assert not older.find_element(By.CSS_SELECTOR, "[data-testid=release-live-badge]").is_displayed()
    assert not live_card.find_element(By.CSS_SELECTOR, "[data-testid=release-rollback]").is_displayed()
    assert older.find_element(By.CSS_SELECTOR, "[data-testid=release-rollback]").text == "Roll back to this release…"
    assert second in browser.find_element(By.CSS_SELECTOR, "[data-testid=hosting-live]").text
    assert live_card.find_element(By.CSS_SELECTOR, "[data-testid=release-message]").text == "second version"
    assert older.find_element(By.CSS_SELECTOR, "[data-testid=release-message]").text == "first version"
    assert live_card.find_element(By.CSS_SELECTOR, "[data-testid=release-file-count]").text == "2 files"
    assert older.find_element(By.CSS_SELECTOR, "[data-testid=release-file-count]").text == "1 file"
    size = len("<h1>The second release</h1>") + len("body { color: teal; }")
    assert live_card.find_element(By.CSS_SELECTOR, "[data-testid=release-size]").text == f"{size} bytes"
    [listed] = [release for release in hosting(server)["releases"] if release["id"] == second]
    assert live_card.find_element(By.CSS_SELECTOR, "[data-testid=release-created] time").get_attribute("datetime") \
        == listed["created"].replace("Z", ".000Z")

    # The live release expanded: its files by site and path.
    toggle = live_card.find_element(By.CSS_SELECTOR, "[data-testid=release-files-toggle]")
    assert toggle.get_attribute("aria-expanded") == "false"
    toggle.click()
    wait_for(browser, f"{release_css(second)} tr[data-testid=release-file]")
    assert toggle.get_attribute("aria-expanded") == "true" and toggle.text == "Hide files"
    assert shown_texts(browser, f"{release_css(second)} tr[data-testid=release-file]") == [
        "public\tcss/site.css\t21 bytes", "public\tindex.html\t27 bytes"]
    assert live_card.find_element(By.CSS_SELECTOR, "[data-testid=release-files-note]").text == "2 files, by site and path."
    screenshot(browser, "console-hosting")

    # A cancelled rollback changes nothing.
    older.find_element(By.CSS_SELECTOR, "[data-testid=release-rollback]").click()
    assert first in wait_for(browser, "dialog #confirm-text").text
    browser.find_element(By.CSS_SELECTOR, "dialog [data-testid=confirm-cancel]").click()
    wait_until(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, "dialog"), 5)
    assert hosting(server)["live"] == second and "The second release" in served_page(server)

    # Rolled back to the first: the page marks it live, and the server serves it.
    older.find_element(By.CSS_SELECTOR, "[data-testid=release-rollback]").click()
    wait_for(browser, "dialog [data-testid=confirm-ok]").click()
    wait_until(browser, lambda d: shown_releases(d) == [(second, "false"), (first, "true")], 10,
               "the page never showed the first release live")
    result = wait_for(browser, "[data-testid=hosting-result]").text
    assert f"release {first} is live in place of {second}" in result
    assert first in browser.find_element(By.CSS_SELECTOR, "[data-testid=hosting-live]").text
    assert browser.find_element(By.CSS_SELECTOR, f"{release_css(second)} [data-testid=release-rollback]").is_displayed()
    assert not browser.find_element(By.CSS_SELECTOR, f"{release_css(first)} [data-testid=release-rollback]").is_displayed()
    assert browser.execute_script("return document.activeElement.id") == "releases-title"
    assert hosting(server)["live"] == first
    assert "The first release" in served_page(server)
    # The second's files stay open through the redraw.
    assert browser.find_element(By.CSS_SELECTOR, f"{release_css(second)} [data-testid=release-files]").is_displayed()
    no_page_errors(browser)


def test_a_release_of_many_files_lists_the_first_2000_and_says_so(browser, hosting_server, tmp_path):
    server = hosting_server
    release = deploy(server, app_folder(tmp_path, "big", {f"pages/{index:04}.html": "x" for index in range(2001)}), "many files")
    open_console(browser, server, "hosting")
    card = wait_for(browser, release_css(release))
    assert card.find_element(By.CSS_SELECTOR, "[data-testid=release-file-count]").text == "2,001 files"
    toggle = card.find_element(By.CSS_SELECTOR, "[data-testid=release-files-toggle]")
    toggle.click()
    note = wait_for(browser, f"{release_css(release)} [data-testid=release-files-note]").text
    assert note == "Only the first 2,000 of 2,001 files are shown."
    rows = f"{release_css(release)} tr[data-testid=release-file]"
    assert browser.execute_script("return document.querySelectorAll(arguments[0]).length", rows) == 2000
    assert shown_texts(browser, rows)[0] == "public\tpages/0000.html\t1 byte"
    # Hidden again, and shown again without asking the server twice.
    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "false"
    assert not card.find_element(By.CSS_SELECTOR, "[data-testid=release-files]").is_displayed()
    toggle.click()
    assert wait_for(browser, f"{release_css(release)} [data-testid=release-files-note]").text == note
    no_page_errors(browser)


def test_a_release_that_cannot_be_served_and_an_unreadable_list_are_shown_as_errors(browser, hosting_server, tmp_path):
    server = hosting_server
    first, second = first_and_second(server, tmp_path)
    # Its firebase.json removed by hand: it stays listed, but cannot be read or served.
    (server.data / "files" / "hosting" / "releases" / first / "app" / "firebase.json").unlink()
    open_console(browser, server, "hosting")
    wait_until(browser, lambda d: len(shown_releases(d)) == 2, 10, "the releases were not listed")
    older = browser.find_element(By.CSS_SELECTOR, release_css(first))

    older.find_element(By.CSS_SELECTOR, "[data-testid=release-files-toggle]").click()
    assert "The files could not be read" in wait_for(browser, f"{release_css(first)} [data-testid=release-files-error]").text

    older.find_element(By.CSS_SELECTOR, "[data-testid=release-rollback]").click()
    wait_for(browser, "dialog [data-testid=confirm-ok]").click()
    refused = wait_for(browser, "[data-testid=hosting-action-error]").text
    assert refused.startswith(f"Not rolled back: Release {first} cannot be served")
    assert shown_releases(browser) == [(second, "true"), (first, "false")]
    assert hosting(server)["live"] == second and "The second release" in served_page(server)

    # The list cannot be read for a while: said, then gone once it can.
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/.hearth/hosting"]})
    assert "The releases could not be read: Offline" in wait_for(browser, "[data-testid=hosting-error]", POLL_SECONDS).text
    browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
    wait_until(browser, lambda d: not d.find_element(By.CSS_SELECTOR, "[data-testid=hosting-error]").is_displayed(), POLL_SECONDS,
               "the error stayed once the list could be read")
    no_page_errors(browser, "/.hearth/hosting")


def test_with_hosting_the_page_says_the_folder_is_served_as_it_is(browser, tmp_path):
    app = app_folder(tmp_path, "app", {"index.html": "<h1>From the folder</h1>"})
    data = Path(tempfile.mkdtemp(prefix="hearth-browser-hosting-folder-"))
    server = launch_server(data, extra_args=("--hosting", str(app)))
    try:
        open_console(browser, server, "hosting")
        mode = wait_for(browser, "[data-testid=hosting-mode]").text
        assert f"Served from the folder {app}" in mode and "as it is on disk" in mode
        assert "Releases are served without --hosting" in mode
        wait_for(browser, "[data-testid=hosting-empty]")
        assert "From the folder" in served_page(server)
        no_page_errors(browser)
    finally:
        stop_server(server)
        shutil.rmtree(data, ignore_errors=True)


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone-360"])
def test_the_hosting_page_fits_and_passes_the_accessibility_checks(browser_factory, hosting_server, tmp_path, screenshot, phone):
    """Two releases, one expanded to its files and a rollback's result shown, through the app's
    audit (contrast, labels, landmarks, overflow, focus order and visibility), light and dark."""
    from test_app_accessibility import browser_at, check_screen, report

    server = hosting_server
    first, second = first_and_second(server, tmp_path)
    driver = browser_at(browser_factory, phone)
    open_console(driver, server, "hosting")
    wait_until(driver, lambda d: len(shown_releases(d)) == 2, 10, "the releases were not listed")
    driver.find_element(By.CSS_SELECTOR, f"{release_css(first)} [data-testid=release-rollback]").click()
    wait_for(driver, "dialog [data-testid=confirm-ok]").click()
    wait_until(driver, lambda d: shown_releases(d) == [(second, "false"), (first, "true")], 10, "the rollback was not shown")
    driver.find_element(By.CSS_SELECTOR, f"{release_css(second)} [data-testid=release-files-toggle]").click()
    wait_for(driver, f"{release_css(second)} tr[data-testid=release-file]")
    assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1"), "sticks out sideways"
    screenshot(driver, f"console-hosting-{'phone' if phone else 'desktop'}")
    problems = check_screen(driver, f"{'phone' if phone else 'desktop'} #/hosting", phone)
    assert not problems, report(problems)
    no_page_errors(driver)
