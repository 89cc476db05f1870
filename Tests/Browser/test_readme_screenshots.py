"""The README's screenshots, made here: the web app (signed in as a demo person, on the recent
posts) and the console (the Data section), each on a desktop and a phone, in light and dark.

With HEARTH_UPDATE_SCREENSHOTS=1 they are written to docs/screenshots/, which the README shows
(commit them when the look changes); otherwise to test-output/readme-screenshots/, so a test
run leaves the repository as it was. The test checks that every screen drew its content (no
skeleton, no "Loading…", photos loaded), fits the width, logged no errors, and that the README
shows each picture."""

from __future__ import annotations

import os
import struct

import pytest
from selenium.common.exceptions import TimeoutException

from browser_support import REPO, js_errors, wait_for, wait_until
from test_app_accessibility import open_screen, settled, sign_in
from test_app_core import emulate_dark, fits_width
from test_console import open_console

README_SHOTS = REPO / "docs" / "screenshots"
SHOTS = README_SHOTS if os.environ.get("HEARTH_UPDATE_SCREENSHOTS") == "1" else REPO / "test-output" / "readme-screenshots"
README = REPO / "README.md"
LIVE = 30

SIZES = {"desktop": (1280, 800), "phone": (390, 844)}


def sized_browser(browser_factory, size: str):
    """A browser whose page is exactly SIZES[size] at one device pixel per CSS pixel (the
    README's images stay small), a touch screen's metrics for the phone."""
    driver = browser_factory()
    width, height = SIZES[size]
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": size == "phone"})
    return driver


def wait_for_images(driver):
    """Waits until every image the picture shows (in the window: lazy ones further down may
    wait) has loaded; else fails naming the ones that did not."""
    unloaded: list[str] = []

    def loaded(d) -> bool:
        unloaded[:] = d.execute_script("""
            return [...document.querySelectorAll('main img')].filter((image) => {
              const box = image.getBoundingClientRect();
              return box.bottom > 0 && box.top < innerHeight && box.width > 0;
            }).filter((image) => !(image.complete && image.naturalWidth > 0)).map((image) => image.src);""")
        return not unloaded

    try:
        wait_until(driver, loaded, LIVE)
    except TimeoutException:
        raise AssertionError(f"the photos on the screen did not load: {unloaded}") from None


def png_size(path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    return struct.unpack(">II", header[16:24])


def shoot(driver, name: str, size: str):
    """Saves both themes of what the page shows as <name>-<size>-<theme>.png."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    for theme in ("light", "dark"):
        emulate_dark(driver, theme == "dark")
        # Let the theme's styles apply and the page repaint before the picture.
        driver.execute_async_script("const done = arguments[0]; requestAnimationFrame(() => requestAnimationFrame(done));")
        assert fits_width(driver), f"{name} on a {size} overflows its width in the {theme} theme"
        path = SHOTS / f"{name}-{size}-{theme}.png"
        driver.save_screenshot(str(path))
        assert png_size(path) == SIZES[size], f"{path.name} is {png_size(path)}, not {SIZES[size]}"
    emulate_dark(driver, False)


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_the_readme_screenshots_of_the_app(server, browser_factory, size):
    driver = sized_browser(browser_factory, size)
    sign_in(driver, server, server.account("Ann"))
    open_screen(driver, "#/", "[data-testid=post-card]")
    wait_for_images(driver)
    assert settled(driver)
    shoot(driver, "app", size)
    assert not js_errors(driver)


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_the_readme_screenshots_of_the_console(server, browser_factory, size):
    driver = sized_browser(browser_factory, size)
    open_console(driver, server, "data/posts")
    wait_for(driver, "[data-testid=data-tree] [role=treeitem]", LIVE)
    wait_until(driver, lambda d: "Live" in d.find_element("css selector", "[data-testid=data-status]").text, LIVE,
               "the data tree did not go live")
    shoot(driver, "console", size)
    assert not js_errors(driver)


def test_the_readme_shows_every_screenshot():
    readme = README.read_text()
    for name in ("app", "console"):
        for size in SIZES:
            for theme in ("light", "dark"):
                assert f"docs/screenshots/{name}-{size}-{theme}.png" in readme, f"the README does not show {name}-{size}-{theme}"
                assert png_size(README_SHOTS / f"{name}-{size}-{theme}.png") == SIZES[size]
