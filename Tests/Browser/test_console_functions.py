"""Browser tests of the console's Functions section (`/console/#/functions`), against a real
`hearth serve --functions <folder>` running Python functions written with Firebase's SDK
(fixtures/console-functions): the functions and their triggers, a failed event's invocation,
its log lines and its dead letter; replaying it once the function works again, discarding
another (after a cancelled confirmation), a refused replay and an unreadable list shown as
errors; the page of a server without functions, and the demo app's own; desktop and phone in light and dark, through
the accessibility audit."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

import harness
from browser_support import WEB_ROOT, wait_for, wait_until
from functions_support import ADMIN_TOKEN, serve_python
from test_console import admin_headers, no_page_errors, open_console

FIXTURE = Path(__file__).parent / "fixtures" / "console-functions"
LETTERS = "tr[data-testid=dead-letter-row]"
# Starting the functions' processes and their first delivery take a few seconds.
FUNCTIONS_SECONDS = 60


@pytest.fixture(scope="module")
def functions_server():
    folder = Path(tempfile.mkdtemp(prefix="hearth-browser-functions-"))
    served = serve_python(folder, "--web-root", str(WEB_ROOT), source=FIXTURE)
    served.admin_token = ADMIN_TOKEN
    yield served
    served.stop()
    shutil.rmtree(folder, ignore_errors=True)


def rest(server, method, path, **kwargs):
    response = requests.request(method, f"{server.url}/{path}.json", headers=admin_headers(server), timeout=10, **kwargs)
    response.raise_for_status()
    return response.json()


def dead_letters(server, function="runjob"):
    response = requests.get(f"{server.url}/.hearth/functions/dead-letters", params={"function": function},
                            headers=admin_headers(server), timeout=10)
    response.raise_for_status()
    return response.json()["deadLetters"]


def fail_a_job(server, job, value):
    """Writes a job while the function fails: its event is dead-lettered at the first failure."""
    rest(server, "PUT", "switch", json="fail")
    rest(server, "PUT", f"jobs/{job}", json=value)


def shown_letters(driver):
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map((row) => row.dataset.sequence)", LETTERS)


def texts(driver, css):
    return driver.execute_script("return [...document.querySelectorAll(arguments[0])].map((element) => element.textContent)", css)


def toast_saying(driver, words, testid="toast"):
    return wait_until(driver, lambda d: any(words in toast.text for toast in d.find_elements(By.CSS_SELECTOR, f"[data-testid={testid}]")),
                      10, f"no toast said {words!r}")


def test_a_failed_event_is_seen_then_replayed_and_another_discarded(browser, functions_server, screenshot):
    server = functions_server
    fail_a_job(server, "a", "first")
    open_console(browser, server, "functions")

    # The functions and their triggers.
    row = wait_for(browser, "tr[data-testid=function-row][data-name=runjob]", FUNCTIONS_SECONDS)
    assert row.find_element(By.CSS_SELECTOR, "[data-testid=function-trigger]").text == "Value created at /jobs/{jobId} in any database"
    assert row.find_element(By.CSS_SELECTOR, "[data-testid=function-runs-in]").text == "Its own process"
    assert re.fullmatch(r"pid \d+, port \d+", row.find_element(By.CSS_SELECTOR, "[data-testid=function-process]").text)
    assert row.find_element(By.CSS_SELECTOR, "[data-testid=function-dropped]").text == "0"
    hello = browser.find_element(By.CSS_SELECTOR, "tr[data-testid=function-row][data-name=hello]")
    assert re.fullmatch(r"HTTPS requests to /[\w-]+/hello", hello.find_element(By.CSS_SELECTOR, "[data-testid=function-trigger]").text)

    # Its activity: the failed invocation, the lines its process printed, the dead letter.
    row.find_element(By.CSS_SELECTOR, "[data-testid=function-show]").click()
    assert Select(browser.find_element(By.CSS_SELECTOR, "[data-testid=functions-pick]")).first_selected_option.text == "runjob"
    assert browser.execute_script("return location.hash") == "#/functions/runjob"
    failed = wait_for(browser, "tr[data-testid=invocation-row][data-result=dead-lettered]", FUNCTIONS_SECONDS)
    assert failed.get_attribute("data-function") == "runjob"
    assert failed.find_element(By.CSS_SELECTOR, "[data-testid=invocation-result]").text.endswith("Dead-lettered")
    assert re.fullmatch(r"[\d.]+ (ms|s)", failed.find_element(By.CSS_SELECTOR, "[data-testid=invocation-duration]").text)
    wait_until(browser, lambda d: any("job a failed on purpose" in line for line in texts(d, "[data-testid=function-line]")), 20,
               "the traceback never showed among the log lines")
    assert any("starting job a: first" in line for line in texts(browser, "[data-testid=function-line]"))
    assert "Log lines of runjob" in browser.find_element(By.CSS_SELECTOR, "#function-lines-title").text
    letter = wait_for(browser, LETTERS)
    [stored] = dead_letters(server)
    assert letter.get_attribute("data-sequence") == str(stored["sequence"])
    assert "500" in letter.find_element(By.CSS_SELECTOR, "[data-testid=dead-letter-reason]").text
    # Tried once: the function asks for no retries.
    assert letter.find_element(By.CSS_SELECTOR, "[data-testid=dead-letter-attempts]").text == "1"
    letter.find_element(By.CSS_SELECTOR, "summary").click()
    assert '"jobs/a"' in letter.find_element(By.CSS_SELECTOR, "[data-testid=dead-letter-event]").text
    screenshot(browser, "console-functions-dead-letter")

    # Replayed once the function works again: delivered with the same event ID.
    rest(server, "PUT", "switch", json="ok")
    letter.find_element(By.CSS_SELECTOR, "[data-testid=dead-letter-replay]").click()
    toast_saying(browser, "back in runjob's queue")
    wait_until(browser, lambda d: shown_letters(d) == [], 10, "the replayed letter stayed listed")
    assert "No dead letters for runjob." in wait_for(browser, "[data-testid=dead-letters-empty]").text
    wait_for(browser, "tr[data-testid=invocation-row][data-result=delivered]", FUNCTIONS_SECONDS)
    assert rest(server, "GET", "done/a") == "first"
    assert dead_letters(server) == []

    # Another one, discarded: a cancelled confirmation changes nothing.
    fail_a_job(server, "b", "second")
    wait_until(browser, lambda d: len(shown_letters(d)) == 1, FUNCTIONS_SECONDS, "the second dead letter never showed")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=dead-letter-discard]").click()
    wait_for(browser, "dialog [data-testid=confirm-cancel]").click()
    wait_until(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, "dialog"), 5)
    assert len(dead_letters(server)) == 1 and len(shown_letters(browser)) == 1
    browser.find_element(By.CSS_SELECTOR, "[data-testid=dead-letter-discard]").click()
    wait_for(browser, "dialog [data-testid=confirm-ok]").click()
    toast_saying(browser, "was discarded")
    wait_until(browser, lambda d: shown_letters(d) == [], 10, "the discarded letter stayed listed")
    assert dead_letters(server) == []
    assert requests.get(f"{server.url}/done/b.json", headers=admin_headers(server), timeout=10).json() is None
    no_page_errors(browser)


def test_a_refused_replay_is_shown_as_an_error(browser, functions_server):
    server = functions_server
    fail_a_job(server, "c", "third")
    open_console(browser, server, "functions/runjob")
    wait_until(browser, lambda d: len(shown_letters(d)) == 1, FUNCTIONS_SECONDS, "the dead letter never showed")
    # The page cannot read the list for a while, and the letter is discarded behind its back.
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/.hearth/functions/dead-letters?*"]})
    wait_for(browser, "[data-testid=dead-letters-error]")
    assert "The dead letters could not be read" in browser.find_element(By.CSS_SELECTOR, "[data-testid=dead-letters-error]").text
    [stored] = dead_letters(server)
    requests.post(f"{server.url}/.hearth/functions/dead-letters/discard", headers=admin_headers(server), timeout=10,
                  json={"source": stored["source"], "sequence": stored["sequence"]}).raise_for_status()
    browser.find_element(By.CSS_SELECTOR, "[data-testid=dead-letter-replay]").click()
    toast_saying(browser, "Not replayed: Not found: No such dead letter.", testid="error")
    browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
    wait_until(browser, lambda d: shown_letters(d) == [], 10, "the letter discarded elsewhere stayed listed")
    assert not browser.find_element(By.CSS_SELECTOR, "[data-testid=dead-letters-error]").is_displayed()
    no_page_errors(browser, "dead-letters")


def test_without_functions_the_page_says_how_to_run_them(browser):
    # Not the demo app, which runs functions of its own (docs/social-server.md).
    folder = Path(tempfile.mkdtemp(prefix="hearth-browser-no-functions-"))
    hearth = harness.HearthProcess(
        ["serve", "--no-demo", "--port", "0", "--data", str(folder), "--web-root", str(WEB_ROOT)], binary=harness.hearth_binary())
    try:
        hearth.start()
        server = SimpleNamespace(url=hearth.url, admin_token=(folder / "admin-token").read_text().strip())
        open_console(browser, server, "functions")
        empty = wait_for(browser, "[data-testid=functions-empty]")
        assert "--functions" in empty.text
        assert not browser.find_element(By.CSS_SELECTOR, "[data-testid=functions-listing]").is_displayed()
        no_page_errors(browser)
    finally:
        harness.stop_process(hearth.process, timeout=10)
        shutil.rmtree(folder, ignore_errors=True)


def test_the_demo_apps_own_functions_are_listed_as_running_in_the_server(browser, server):
    open_console(browser, server, "functions")
    wait_for(browser, "[data-testid=functions-table]")
    listed = requests.get(f"{server.url}/.hearth/functions", headers=admin_headers(server), timeout=10).json()["functions"]
    names = {entry["name"]: entry["runsIn"] for entry in listed}
    assert {"deleteUserData", "moderatePosts", "runAdminRequests", "pushNotifications", "sweepDeletedAccounts"} <= set(names)
    assert set(names.values()) == {"server"}
    wait_until(browser, lambda d: "deleteUserData" in d.find_element(By.CSS_SELECTOR, "[data-testid=functions-table]").text)
    no_page_errors(browser)


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone-360"])
def test_the_functions_page_fits_and_passes_the_accessibility_checks(browser_factory, functions_server, screenshot, phone):
    """The section with a function chosen, its log lines and a dead letter shown, through the
    app's audit (contrast, labels, landmarks, overflow, focus order and visibility), light and dark."""
    from test_app_accessibility import browser_at, check_screen, report

    server = functions_server
    if not dead_letters(server):
        fail_a_job(server, f"audit-{'phone' if phone else 'desktop'}", "audited")
    driver = browser_at(browser_factory, phone)
    open_console(driver, server, "functions/runjob")
    wait_for(driver, LETTERS, FUNCTIONS_SECONDS)
    wait_for(driver, "[data-testid=function-line]")
    wait_for(driver, "tr[data-testid=invocation-row]")
    assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1"), "sticks out sideways"
    screenshot(driver, f"console-functions-{'phone' if phone else 'desktop'}")
    problems = check_screen(driver, f"{'phone' if phone else 'desktop'} #/functions", phone)
    assert not problems, report(problems)
    no_page_errors(driver)
