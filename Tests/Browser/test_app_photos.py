"""The photo viewer (issue 20): a post's photos full screen, with previous and next by button,
arrow key and swipe, zoom by button, key, double click and pinch, panning a zoomed photo, and
focus given back when it closes; at desktop and phone sizes, in light and dark."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser_support import REPO, js_errors, tap, wait_for, wait_until
from test_app_core import go, open_app, sign_up

DEMO = REPO / "Sources" / "HearthSocial" / "Resources" / "demo"


def viewer_state(driver):
    return driver.execute_script("""
        const viewer = document.querySelector('[data-testid=photo-viewer]');
        if (!viewer) return null;
        const image = viewer.querySelector('[data-testid=viewer-image]');
        return { open: viewer.open, counter: viewer.querySelector('[data-testid=viewer-counter]').textContent,
                 scale: Number(image.dataset.scale), transform: image.style.transform, alt: image.alt,
                 loaded: image.complete && image.naturalWidth > 0, focused: document.activeElement?.dataset.testid ?? null };""")


def pointer(driver, kind, points, pointer_type="touch"):
    """Dispatches pointer events on the viewer's stage: `points` is [(id, x, y)]."""
    driver.execute_script("""
        const stage = document.querySelector('[data-testid=viewer-stage]');
        for (const [id, x, y] of arguments[1]) {
          stage.dispatchEvent(new PointerEvent(arguments[0], { pointerId: id, clientX: x, clientY: y, pointerType: arguments[2], bubbles: true, isPrimary: id === 1 }));
        }""", kind, points, pointer_type)


@pytest.mark.parametrize("phone,dark", [(False, False), (True, True)], ids=["desktop-light", "phone-dark"])
def test_the_photo_viewer(server, browser_factory, screenshot, phone, dark):
    driver = browser_factory(phone=phone)
    if dark:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    sign_up(driver, server, "Vera Viewer")
    go(driver, "#/compose")
    wait_for(driver, "[data-testid=compose-title]").send_keys("Two views")
    driver.find_element(By.CSS_SELECTOR, "[data-testid=compose-body]").send_keys("The beach, twice.")
    driver.find_element(By.CSS_SELECTOR, "[data-testid=compose-photos]").send_keys(
        "\n".join(str(path) for path in sorted(DEMO.glob("*.jpg"))[:2]))
    wait_until(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "[data-testid=photo-preview] img")) == 2, 20)
    tap(driver, driver.find_element(By.CSS_SELECTOR, "[data-testid=compose-submit]"))
    try:
        wait_until(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "[data-testid=post-photo]")) == 2, 30)
    except Exception:
        pytest.fail(f"the post with two photos did not open: {driver.current_url} {driver.find_element(By.ID, 'main').text[:500]}")

    # Opening the second photo shows it full screen, with focus on the close button.
    driver.find_elements(By.CSS_SELECTOR, ".photo-button")[1].click()
    wait_until(driver, lambda d: (viewer_state(d) or {}).get("loaded"), 20, "the viewer did not show the photo")
    state = viewer_state(driver)
    assert state["open"] and state["counter"] == "Photo 2 of 2" and state["focused"] == "viewer-close"
    assert state["alt"].startswith("Photo 2 of 2")
    screenshot(driver, f"photo-viewer-{'phone-dark' if dark else 'desktop'}")

    # Previous and next: a button, the arrow keys, a swipe.
    driver.find_element(By.CSS_SELECTOR, "[data-testid=viewer-previous]").click()
    assert viewer_state(driver)["counter"] == "Photo 1 of 2"
    assert driver.find_element(By.CSS_SELECTOR, "[data-testid=viewer-previous]").get_attribute("disabled") is not None
    driver.switch_to.active_element.send_keys(Keys.ARROW_RIGHT)
    assert viewer_state(driver)["counter"] == "Photo 2 of 2"
    pointer(driver, "pointerdown", [(1, 300, 300)])
    pointer(driver, "pointermove", [(1, 200, 305)])
    pointer(driver, "pointerup", [(1, 150, 305)])
    assert viewer_state(driver)["counter"] == "Photo 2 of 2", "no photo after the last"
    pointer(driver, "pointerdown", [(1, 150, 300)])
    pointer(driver, "pointerup", [(1, 300, 300)])
    assert viewer_state(driver)["counter"] == "Photo 1 of 2", "a swipe to the right shows the previous photo"

    # Zoom: the button, a key, a double click, a pinch; a zoomed photo pans and does not swipe.
    driver.find_element(By.CSS_SELECTOR, "[data-testid=viewer-zoom-in]").click()
    assert viewer_state(driver)["scale"] == 1.5
    driver.switch_to.active_element.send_keys("0")
    assert viewer_state(driver)["scale"] == 1
    driver.execute_script("document.querySelector('[data-testid=viewer-stage]').dispatchEvent(new MouseEvent('dblclick', { bubbles: true }))")
    assert viewer_state(driver)["scale"] == 2
    pointer(driver, "pointerdown", [(1, 300, 300)])
    pointer(driver, "pointermove", [(1, 360, 300)])
    pointer(driver, "pointerup", [(1, 360, 300)])
    state = viewer_state(driver)
    assert state["counter"] == "Photo 1 of 2" and "translate(60px, 0px)" in state["transform"], "a zoomed photo pans"
    driver.switch_to.active_element.send_keys("0")
    pointer(driver, "pointerdown", [(1, 200, 300), (2, 260, 300)])
    pointer(driver, "pointermove", [(2, 320, 300)])
    pointer(driver, "pointerup", [(1, 200, 300), (2, 320, 300)])
    assert viewer_state(driver)["scale"] == 2, "pinching the fingers apart zooms (60 px to 120 px)"
    assert viewer_state(driver)["counter"] == "Photo 1 of 2", "a pinch is not a swipe"

    # Escape closes it and gives focus back to the photo that opened it.
    driver.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait_until(driver, lambda d: viewer_state(d) is None, 5, "Escape did not close the viewer")
    assert driver.execute_script("return document.activeElement.classList.contains('photo-button')")
    overflow = driver.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0
    assert js_errors(driver) == []
