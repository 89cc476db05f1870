"""Browser tests of Hearth's web app and console: a real `hearth serve --demo` and headless
Debian chromium driven by selenium. The fixtures and helpers are in browser_support.py (test
files import helpers from there; Tests/Security shares them)."""

from browser_support import browser, browser_factory, screenshot, server  # noqa: F401  (the suite's fixtures)
