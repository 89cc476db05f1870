"""The security suite: hostile uploads, the pages' Content-Security-Policy, sessions and the
headers of every response, tried against a real `hearth serve` with headless chromium. The
fixtures and helpers are in security_support.py (with the browser suite's, browser_support.py)."""

from browser_support import browser, browser_factory, screenshot, server  # noqa: F401  (the browser suite's fixtures)
from security_support import downloads, files_server, hostile_site  # noqa: F401  (this suite's)
