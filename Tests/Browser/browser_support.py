"""Helpers and fixtures of the browser suite (Tests/Browser; Tests/Security uses them too): a real
`hearth serve --demo` and headless Debian chromium driven by selenium. conftest.py makes the
fixtures available to the tests; test files import the helpers from here.

Fixtures:

- ``server`` (session): a running server. ``server.url`` ("http://127.0.0.1:PORT"),
  ``server.admin_token``, ``server.accounts`` (the demo accounts: dicts with ``name``,
  ``email``, ``password``), ``server.data`` (its data folder), ``server.output()`` (its output
  so far).
- ``browser_factory``: ``browser_factory(phone=False)`` opens a new headless chromium (its own
  profile, so its own signed-in user): 1280x900, or 390x844 with ``phone=True``. All are
  closed at the end of the test.
- ``browser``: one desktop browser (``browser_factory()``), for tests that need just one.
- ``screenshot``: ``screenshot(driver, "name")`` saves ``test-output/screenshots/name.png``
  in the repository and returns its path.

Helpers for test files: ``launch_server(data, port=0)`` and ``stop_server(server)`` (a server
of one's own, e.g. to restart it), ``wait_for(driver, css, timeout=10)`` (the first visible
match, once there is one), ``wait_until(driver, condition, timeout=10, message="")``,
``text_of(driver, css)``, ``js_errors(driver)`` (severe messages from the page's console), and
``track_event_sources(driver)`` then ``open_event_sources(driver)`` (the URLs of the streams a
page holds open: each takes one of the browser's six connections per server), and
``DevTools(driver)`` (the DevTools protocol on a connection of its own, for other targets such
as the service worker, and for events).

Environment: ``HEARTH_BINARY`` (default: the build's, see Tests/harness), ``CHROMIUM_BINARY``
(default ``/usr/bin/chromium``), ``CHROMEDRIVER`` (default ``/usr/bin/chromedriver``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

import harness
from harness import HearthDidNotStart, HearthProcess, Output

REPO = Path(__file__).resolve().parents[2]
WEB_ROOT = REPO / "Web"
SCREENSHOTS = REPO / "test-output" / "screenshots"
CHROMIUM_BINARY = os.environ.get("CHROMIUM_BINARY", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
STARTUP_SECONDS = 120

DESKTOP_SIZE = (1280, 900)
PHONE_SIZE = (390, 844)


@dataclass
class Server:
    url: str
    admin_token: str
    accounts: list[dict]
    data: Path
    process: subprocess.Popen
    lines: list[str] = field(default_factory=list)
    log: Output | None = None

    def output(self) -> str:
        return "".join(self.lines)

    def wait_for_output(self, pattern, timeout: float = 10, message: str = ""):
        """The first match of ``pattern`` (a regular expression or a string) in the server's
        output, once a line has it (each new line wakes the wait: no polling)."""
        return self.log.wait_for(pattern, timeout, message)

    def account(self, name_prefix: str) -> dict:
        """The demo account whose name starts with ``name_prefix`` (e.g. "Ann")."""
        return next(account for account in self.accounts if account["name"].startswith(name_prefix))


@pytest.fixture(scope="session")
def server():
    data = Path(tempfile.mkdtemp(prefix="hearth-browser-"))
    served = launch_server(data)
    yield served
    stop_server(served)
    shutil.rmtree(data, ignore_errors=True)


def launch_server(data: Path, port: int = 0, extra_args: tuple[str, ...] = (), env: dict | None = None) -> Server:
    """Starts ``hearth serve --demo`` on ``data`` (port 0: any free port) with ``extra_args``
    (and ``env`` added to its environment) and waits until the demo is seeded. Tests that need
    their own server (to stop and restart it, or with other options) use this too."""
    binary = harness.hearth_binary()
    if not os.access(binary, os.X_OK):
        pytest.fail(f"no hearth binary at {binary} (set HEARTH_BINARY)")
    lines: list[str] = []
    hearth = HearthProcess(
        # The suite signs dozens of people up from this one address: sign-ups refill quickly here
        # (their limit per address is tested in Tests/HearthAuthTests and Tests/HearthServerTests).
        ["serve", "--demo", "--port", str(port), "--data", str(data), "--web-root", str(WEB_ROOT),
         "--sign-ups-per-address-per-hour", "36000", *extra_args],
        ready="Demo accounts", timeout=STARTUP_SECONDS, binary=binary, into=lines, env=env)
    try:
        hearth.start()
    except HearthDidNotStart as error:
        pytest.fail(f"hearth did not start and seed the demo in time: {error}")
    accounts = wait_for_file(data / "demo-accounts.json", json.loads)
    admin_token = wait_for_file(data / "admin-token", str.strip)
    return Server(url=hearth.url, admin_token=admin_token, accounts=accounts, data=data, process=hearth.process, lines=lines,
                  log=hearth.output)


def stop_server(served: Server):
    harness.stop_process(served.process, timeout=10, output=served.log)


def wait_for_file(path: Path, parse, timeout: float = 10):
    """The parsed content of a file the server writes (it may appear just after its output)."""
    return harness.wait_until(lambda: (parse(path.read_text()),), timeout, f"{path} to be written",
                              ignoring=(FileNotFoundError, ValueError))[0]


def new_browser(phone: bool = False, arguments: tuple[str, ...] = ()) -> webdriver.Chrome:
    """A headless chromium; ``arguments`` are added to its command line."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM_BINARY
    width, height = PHONE_SIZE if phone else DESKTOP_SIZE
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", f"--window-size={width},{height}", *arguments):
        options.add_argument(argument)
    if phone:
        options.add_experimental_option("mobileEmulation", {
            "deviceMetrics": {"width": width, "height": height, "pixelRatio": 2}, "userAgent": "Mozilla/5.0 (Linux; Android 14) Mobile",
        })
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = RefindingChrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_window_size(width, height)
    return driver


@pytest.fixture
def browser_factory():
    opened: list[webdriver.Chrome] = []

    def make(phone: bool = False) -> webdriver.Chrome:
        driver = new_browser(phone)
        opened.append(driver)
        return driver

    yield make
    for driver in opened:
        driver.quit()


@pytest.fixture
def browser(browser_factory):
    return browser_factory()


@pytest.fixture
def screenshot():
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def save(driver: webdriver.Chrome, name: str) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        driver.save_screenshot(str(path))
        return path

    return save


class RefindingElement(WebElement):
    """An element found by a selector that, when the page has redrawn it (a live list or a
    screen rendered again when the server confirms a write), is found again by that selector
    and the command repeated, instead of failing with a stale reference. A command on a stale
    element never reached the page, so repeating it does nothing twice."""

    ATTEMPTS = 5

    def __init__(self, element: WebElement, refind):
        super().__init__(element.parent, element.id)
        self._refind = refind

    def _again(self, command):
        for attempt in range(self.ATTEMPTS):
            try:
                return command()
            except StaleElementReferenceException as stale:
                if attempt == self.ATTEMPTS - 1:
                    raise
                try:
                    self._id = self._refind().id
                except Exception:
                    raise stale  # gone for good, not redrawn: as stale as before

    def _execute(self, command, params=None):
        return self._again(lambda: super(RefindingElement, self)._execute(command, dict(params or {})))

    # These two run scripts with the element as an argument rather than element commands.
    def get_attribute(self, name):
        return self._again(lambda: super(RefindingElement, self).get_attribute(name))

    def is_displayed(self):
        return self._again(lambda: super(RefindingElement, self).is_displayed())


class RefindingChrome(webdriver.Chrome):
    """Chromium whose ``find_element`` answers a ``RefindingElement``, found again by the same
    locator should the page redraw it before the test has read it."""

    def find_element(self, by=By.ID, value=None):
        element = super().find_element(by, value)
        return RefindingElement(element, lambda: super(RefindingChrome, self).find_element(by, value))


def wait_for(driver, css: str, timeout: float = 10):
    """The first visible element matching ``css``, once there is one. If the page redraws it
    later, the element is found again by ``css`` (see ``RefindingElement``)."""
    def visible(current):
        for element in current.find_elements(By.CSS_SELECTOR, css):
            try:
                if element.is_displayed():
                    return element
            except StaleElementReferenceException:
                continue
        return False

    def find():
        return WebDriverWait(driver, timeout).until(visible, f"nothing visible matches {css}")

    return RefindingElement(find(), find)


def shown_texts(driver, css: str) -> list[str]:
    """The rendered texts of the elements matching ``css``, read in one script so that a redraw
    between finding an element and reading it cannot make it stale."""
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map((element) => element.innerText.trim())", css)


def tap(driver, element):
    """Clicks `element` once it is in the middle of the screen: on a phone, one near the bottom
    may sit under the fixed tab bar, where a click lands on the bar."""
    driver.execute_script("arguments[0].scrollIntoView({ block: 'center' })", element)
    element.click()


def close_tab(driver):
    """Closes the tab shown, as a person closing it would (its page gets no chance to say
    goodbye: its connections just end), and goes on in a new blank tab."""
    closing = driver.current_window_handle
    driver.switch_to.new_window("tab")
    blank = driver.current_window_handle
    driver.switch_to.window(closing)
    driver.close()
    driver.switch_to.window(blank)


def wait_until(driver, condition, timeout: float = 10, message: str = ""):
    """Waits until ``condition(driver)`` is truthy and returns its value. A condition that
    reads an element the page redraws meanwhile is asked again, not failed."""
    return WebDriverWait(driver, timeout, ignored_exceptions=(StaleElementReferenceException,)).until(condition, message)


def text_of(driver, css: str) -> str:
    return driver.find_element(By.CSS_SELECTOR, css).text


# Counts the page's EventSources from its first script on, by wrapping the constructor.
_TRACK_EVENT_SOURCES = """
window.__openEventSources = new Set();
window.EventSource = class extends window.EventSource {
  constructor(...args) { super(...args); window.__openEventSources.add(this); }
  close() { super.close(); window.__openEventSources.delete(this); }
};
"""


def track_event_sources(driver):
    """From the next page load on, ``open_event_sources`` can tell which streams are open."""
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _TRACK_EVENT_SOURCES})


def open_event_sources(driver) -> list[str]:
    """The paths (without query) of the page's EventSources that are not closed."""
    return driver.execute_script(
        "return [...window.__openEventSources].filter((source) => source.readyState !== EventSource.CLOSED)"
        ".map((source) => new URL(source.url).pathname)")


class DevTools:
    """The browser's DevTools protocol on a connection of its own (chromedriver's
    ``execute_cdp_cmd`` reaches only the page, and hears no events): commands to any target
    (a service worker too) through flat sessions, and the events they send.
    ``DevTools(driver)``; ``attach(type, url_part)`` → a session ID; ``send(method, params,
    session)``; ``event(method, matching, timeout)``; ``close()``."""

    def __init__(self, driver):
        import websocket  # selenium's own dependency

        address = driver.capabilities["goog:chromeOptions"]["debuggerAddress"]
        with urllib.request.urlopen(f"http://{address}/json/version", timeout=10) as answer:
            endpoint = json.load(answer)["webSocketDebuggerUrl"]
        self.socket = websocket.create_connection(endpoint, timeout=20, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict] = []

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.socket.send(json.dumps(message))
        while True:
            answer = json.loads(self.socket.recv())
            if answer.get("id") != self.next_id:
                self.events.append(answer)
                continue
            if "error" in answer:
                raise RuntimeError(f"{method}: {answer['error']}")
            return answer.get("result", {})

    def event(self, method: str, matching=lambda params: True, timeout: float = 10) -> dict:
        """The params of the first event ``method`` (heard so far or next) that ``matching`` takes."""
        deadline = time.monotonic() + timeout
        while True:
            for event in self.events:
                if event.get("method") == method and matching(event.get("params", {})):
                    self.events.remove(event)
                    return event["params"]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no {method} event in {timeout} s")
            self.socket.settimeout(remaining)
            self.events.append(json.loads(self.socket.recv()))

    def attach(self, target_type: str, url_part: str, timeout: float = 10) -> str:
        """A session with the first target of ``target_type`` whose URL has ``url_part``."""
        def target():
            infos = self.send("Target.getTargets")["targetInfos"]
            return next((info for info in infos if info["type"] == target_type and url_part in info["url"]), None)
        found = harness.wait_until(target, timeout, f"a {target_type} target at {url_part}")
        return self.send("Target.attachToTarget", {"targetId": found["targetId"], "flatten": True})["sessionId"]

    def evaluate(self, expression: str, session: str):
        """The value of ``expression`` (awaited when a promise) in the session's target."""
        result = self.send("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True}, session)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def close(self):
        self.socket.close()


def js_errors(driver) -> list[str]:
    """Severe messages the page logged (uncaught errors, failed module loads)."""
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
