"""Browser tests of the console's rules simulator (issue 20), in the Rules section: a write
simulated as someone signed out is denied and the deciding rule's line is marked in the editor;
as a signed-in user with a token claim it is allowed; a draft is judged without being deployed,
and a draft with an error says where. At desktop size and on a 360 px phone, light and dark,
with the accessibility checks the app's screens go through. Nothing is ever written: the server
is asked through REST afterwards.
"""

from __future__ import annotations

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from browser_support import wait_for, wait_until
from test_app_accessibility import browser_at, check_screen, report
from test_app_core import emulate_dark
from test_console import admin_headers, no_page_errors, open_console

# Comments above the rules, so line numbers count them. The .write rule is on line 8.
RULES = """{
  // The rules simulator's test rules.
  "rules": {
    ".read": false,
    "notes": {
      "$uid": {
        /* The owner, signed in, with the editor claim. */
        ".write": "auth != null && auth.uid === $uid && auth.token.editor === true",
        ".validate": "newData.isString()"
      }
    }
  }
}
"""
WRITE_LINE = 8
VALIDATE_LINE = 9


def set_text(driver, css, text):
    element = driver.find_element(By.CSS_SELECTOR, css)
    driver.execute_script(
        "arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'))", element, text)


def choose(driver, css, value):
    Select(driver.find_element(By.CSS_SELECTOR, css)).select_by_value(value)


def run(driver):
    """Runs the simulation and waits for its verdict; returns the verdict text."""
    driver.execute_script("document.querySelector('[data-testid=sim-verdict]').textContent = ''")
    button = driver.find_element(By.CSS_SELECTOR, "[data-testid=sim-run]")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
    button.click()
    return wait_until(driver, lambda d: (d.find_element(By.CSS_SELECTOR, "[data-testid=sim-verdict]").text or "").startswith(("✓", "✗"))
                      and d.find_element(By.CSS_SELECTOR, "[data-testid=sim-verdict]").text, 10, "no verdict")


def gutter_class(driver, line):
    found = driver.find_elements(By.CSS_SELECTOR, f".gutter [data-testid=gutter-line-{line}]")
    return found[0].get_attribute("class") if found else ""


def band_shown(driver, line):
    """The class of the band drawn across ``line``'s text, if it is inside the editor's visible box."""
    return driver.execute_script("""
        const band = document.querySelector(`[data-testid=band-line-${arguments[0]}]`);
        if (!band) return '';
        const box = band.getBoundingClientRect();
        const editor = document.querySelector('[data-testid=rules-editor]').getBoundingClientRect();
        const inside = box.height > 0 && box.top >= editor.top - 1 && box.bottom <= editor.bottom + 1;
        return inside ? band.className : 'outside';""", line)


def show_trace(driver):
    """Scrolls the list of rules evaluated into view, for the screenshots."""
    driver.execute_script("document.querySelector('[data-testid=sim-trace]').scrollIntoView({block: 'end'})")


def fits(driver) -> bool:
    return driver.execute_script("""
        const width = window.innerWidth;
        const inside = [...document.querySelectorAll('[data-testid=rules-simulator], [data-testid=rules-simulator] *, .code-editor')]
          .every((element) => element.getBoundingClientRect().right <= width + 1);
        return inside && document.documentElement.scrollWidth <= width + 1;""")


@pytest.fixture
def simulator_rules(server):
    """Deploys RULES for the test and puts the server's own rules back afterwards."""
    url = f"{server.url}/.settings/rules.json"
    original = requests.get(url, headers=admin_headers(server), timeout=10).text
    requests.put(url, data=RULES, headers=admin_headers(server), timeout=10).raise_for_status()
    try:
        yield url
    finally:
        requests.put(url, data=original, headers=admin_headers(server), timeout=10).raise_for_status()


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone-360"])
def test_the_simulator_shows_the_deciding_lines_judges_drafts_and_writes_nothing(
        server, browser_factory, simulator_rules, screenshot, phone):
    driver = browser_at(browser_factory, phone)
    size = "phone" if phone else "desktop"
    open_console(driver, server, "rules")
    editor = wait_for(driver, "[data-testid=rules-editor]")
    wait_until(driver, lambda d: editor.is_enabled() and editor.get_attribute("value") == RULES, 10, "rules not loaded")
    wait_for(driver, "[data-testid=rules-simulator]")

    # A set at /notes/alice, signed out: denied by the .write on line 8, marked in the gutter.
    choose(driver, "[data-testid=sim-operation]", "set")
    set_text(driver, "[data-testid=sim-path]", "/notes/alice")
    set_text(driver, "[data-testid=sim-data]", '"hello"')
    assert run(driver).startswith("✗ Denied")
    assert "no .write rule allows writing /notes/alice" in driver.find_element(By.CSS_SELECTOR, "[data-testid=sim-verdict]").text
    assert "trace-deny" in gutter_class(driver, WRITE_LINE)
    assert "band-deny" in band_shown(driver, WRITE_LINE)
    step = driver.find_element(By.CSS_SELECTOR, f"[data-testid=sim-step][data-line='{WRITE_LINE}']")
    assert step.get_attribute("data-deciding") == "true" and step.get_attribute("data-result") == "false"
    assert ".write at /notes/alice" in step.text and "auth.token.editor" in step.text
    show_trace(driver)
    screenshot(driver, f"console-rules-simulator-denied-{size}")
    assert fits(driver), "the simulator sticks out sideways"

    # Its "Line 8" button puts the caret on that line of the editor.
    step.find_element(By.CSS_SELECTOR, ".sim-line").click()
    caret_line = driver.execute_script(
        "const e = arguments[0]; return e.value.slice(0, e.selectionStart).split('\\n').length", editor)
    assert caret_line == WRITE_LINE

    # Signed in as alice with the editor claim: allowed, the granting line and the validate marked.
    choose(driver, "[data-testid=sim-who]", "in")
    set_text(driver, "[data-testid=sim-uid]", "alice")
    choose(driver, "[data-testid=sim-provider]", "password")
    set_text(driver, "[data-testid=sim-claims]", '{"editor": true}')
    assert run(driver) == "✓ Allowed"
    assert "trace-allow" in gutter_class(driver, WRITE_LINE)
    assert "band-allow" in band_shown(driver, WRITE_LINE)
    assert "trace-evaluated" in gutter_class(driver, VALIDATE_LINE)
    show_trace(driver)
    screenshot(driver, f"console-rules-simulator-allowed-{size}")

    # Without the claim, or as someone else: denied again.
    set_text(driver, "[data-testid=sim-claims]", "{}")
    assert run(driver).startswith("✗ Denied")
    # A value the .validate refuses: denied by the validate, on its line.
    set_text(driver, "[data-testid=sim-claims]", '{"editor": true}')
    set_text(driver, "[data-testid=sim-data]", "5")
    assert run(driver).startswith("✗ Denied")
    assert "trace-deny" in gutter_class(driver, VALIDATE_LINE)

    # Bad JSON is refused in the page, before asking the server.
    set_text(driver, "[data-testid=sim-claims]", "{editor}")
    driver.find_element(By.CSS_SELECTOR, "[data-testid=sim-run]").click()
    assert "not valid JSON" in wait_for(driver, "[data-testid=sim-error]").text

    # Nothing was written.
    notes = requests.get(f"{server.url}/notes.json", headers=admin_headers(server), timeout=10)
    assert notes.json() is None

    # A draft that opens notes to everyone, simulated signed out without deploying.
    draft = RULES.replace('"auth != null && auth.uid === $uid && auth.token.editor === true"', "true")
    set_text(driver, "[data-testid=rules-editor]", draft)
    choose(driver, "[data-testid=sim-who]", "out")
    set_text(driver, "[data-testid=sim-data]", '"hello"')
    choose(driver, "[data-testid=sim-source]", "draft")
    assert run(driver) == "✓ Allowed"
    assert "trace-allow" in gutter_class(driver, WRITE_LINE)
    assert requests.get(simulator_rules, headers=admin_headers(server), timeout=10).text == RULES
    choose(driver, "[data-testid=sim-source]", "deployed")
    assert run(driver).startswith("✗ Denied")

    # A draft with an error says where, as a deploy does, and changes nothing.
    broken = RULES.replace('"newData.isString()"', '"newData.isString("')
    set_text(driver, "[data-testid=rules-editor]", broken)
    choose(driver, "[data-testid=sim-source]", "draft")
    driver.find_element(By.CSS_SELECTOR, "[data-testid=sim-run]").click()
    error = wait_for(driver, "[data-testid=sim-error]")
    assert f"line {VALIDATE_LINE}" in error.text, error.text
    assert driver.find_element(By.CSS_SELECTOR, ".gutter .error-line").text == str(VALIDATE_LINE)
    assert requests.get(simulator_rules, headers=admin_headers(server), timeout=10).text == RULES
    assert requests.get(f"{server.url}/notes.json", headers=admin_headers(server), timeout=10).json() is None

    # A verdict on screen again for the themes and the accessibility checks.
    set_text(driver, "[data-testid=rules-editor]", RULES)
    choose(driver, "[data-testid=sim-source]", "deployed")
    assert run(driver).startswith("✗ Denied")
    assert fits(driver), "the simulator sticks out sideways in the light theme"
    emulate_dark(driver, True)
    wait_until(driver, lambda d: d.execute_script(
        "return matchMedia('(prefers-color-scheme: dark)').matches"), 5, "the dark theme did not apply")
    assert fits(driver), "the simulator sticks out sideways in the dark theme"
    show_trace(driver)
    screenshot(driver, f"console-rules-simulator-denied-{size}-dark")
    emulate_dark(driver, False)
    problems = [problem for problem in check_screen(driver, f"{size} console rules simulator", phone)]
    assert not problems, report(problems)
    no_page_errors(driver, "simulate - Failed to load resource: the server responded with a status of 400")


QUERY_RULES = """{
  "rules": {
    "feed": {
      ".read": "query.orderByChild === 'at' && query.limitToLast <= 10",
      ".indexOn": ["at"]
    }
  }
}
"""
QUERY_READ_LINE = 4


@pytest.fixture
def query_rules(server):
    """Deploys QUERY_RULES for the test and puts the server's own rules back afterwards."""
    url = f"{server.url}/.settings/rules.json"
    original = requests.get(url, headers=admin_headers(server), timeout=10).text
    requests.put(url, data=QUERY_RULES, headers=admin_headers(server), timeout=10).raise_for_status()
    try:
        yield url
    finally:
        requests.put(url, data=original, headers=admin_headers(server), timeout=10).raise_for_status()


def test_a_queried_read_is_judged_with_its_query(server, browser, query_rules, screenshot):
    open_console(browser, server, "rules")
    editor = wait_for(browser, "[data-testid=rules-editor]")
    wait_until(browser, lambda d: editor.get_attribute("value") == QUERY_RULES, 10, "rules not loaded")
    choose(browser, "[data-testid=sim-operation]", "read")
    query = wait_for(browser, "[data-testid=sim-query]")
    assert query.get_attribute("aria-describedby") == "sim-query-hint"
    set_text(browser, "[data-testid=sim-path]", "/feed")

    # The query the rule asks for: allowed, by the .read on its line.
    set_text(browser, "[data-testid=sim-query]", 'orderBy="at"&limitToLast=10')
    assert run(browser) == "✓ Allowed"
    assert "trace-allow" in gutter_class(browser, QUERY_READ_LINE)
    screenshot(browser, "console-rules-simulator-query")
    # A longer limit, another order, or no query at all: denied, as a real read would be
    # (RulesSimulatorTests sends the same reads for real).
    for other in ('orderBy="at"&limitToLast=50', 'orderBy="$key"&limitToLast=5', ""):
        set_text(browser, "[data-testid=sim-query]", other)
        assert run(browser).startswith("✗ Denied"), other
        assert "trace-deny" in gutter_class(browser, QUERY_READ_LINE)
    # A query REST would refuse is refused with REST's words.
    set_text(browser, "[data-testid=sim-query]", "limitToLast=5")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=sim-run]").click()
    assert "orderBy must be defined" in wait_for(browser, "[data-testid=sim-error]").text
    # A write has no query.
    choose(browser, "[data-testid=sim-operation]", "set")
    assert not browser.find_element(By.CSS_SELECTOR, "[data-testid=sim-query]").is_displayed()
    no_page_errors(browser, "simulate - Failed to load resource: the server responded with a status of 400")
