"""Hostile uploads: an SVG or HTML file with a script, opened by another user in chromium, runs
nothing — not on the app's origin, not on the files origin — while safe images still show."""

from __future__ import annotations

import json

import pytest
from selenium.common.exceptions import NoAlertPresentException

from security_support import (
    browser_support, media_url, request, sign_up, signed_in, upload, wait_for_download,
)

MARK = "HEARTH-PWNED"
# Every way a page script could show that it ran: the title, the console, storage, a dialog.
PAYLOAD = (
    f"if(!window.__ran){{window.__ran=1;document.title='{MARK}';console.log('{MARK}');"
    f"try{{localStorage.setItem('{MARK}',document.cookie||'ran')}}catch(e){{}};"
    f"try{{parent.postMessage('{MARK}','*')}}catch(e){{}};alert('{MARK}')}}"
)
EVIL_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" onload="' + PAYLOAD.replace('"', "&quot;") + '">'
    f"<script>{PAYLOAD}</script><rect width=\"10\" height=\"10\"/></svg>"
).encode()
EVIL_HTML = f"<!doctype html><title>page</title><script>{PAYLOAD}</script><img src=x onerror=\"{PAYLOAD}\">".encode()
# A 1x1 PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc000000301010018dd8db40000000049454e44ae426082")


def assert_nothing_ran(driver, label: str):
    try:
        alert = driver.switch_to.alert
        text = alert.text
        alert.accept()
        pytest.fail(f"{label}: a script opened a dialog: {text}")
    except NoAlertPresentException:
        pass
    assert driver.title != MARK, f"{label}: a script set the title"
    logs = [entry["message"] for entry in driver.get_log("browser")]
    assert not any(MARK in message for message in logs), f"{label}: a script logged: {logs}"


def app_storage_untouched(driver, server) -> bool:
    driver.get(server.url + "/")
    browser_support.wait_until(driver, lambda d: d.execute_script("return Boolean(window.hearth)"))
    return driver.execute_script(f"return localStorage.getItem('{MARK}') === null")


def test_the_detector_sees_a_script_run_where_nothing_protects_it(browser, hostile_site):
    """The same file served plainly (inline, no policy) does run: what the other tests look for is real."""
    hostile_site.pages["/evil.svg"] = ("image/svg+xml", EVIL_SVG)
    browser.get(hostile_site.url + "/evil.svg")
    browser_support.wait_until(browser, lambda d: _alert_text(d) == MARK, message="the unprotected SVG did not run")
    browser.switch_to.alert.accept()
    browser_support.wait_until(browser, lambda d: d.title == MARK)


def _alert_text(driver):
    try:
        return driver.switch_to.alert.text
    except NoAlertPresentException:
        return None


@pytest.mark.parametrize("kind", ["svg", "html"])
def test_a_hostile_file_opened_from_a_shared_link_runs_nothing(server, browser_factory, downloads, kind):
    # Mallory uploads through the app's own rules (images only, her folder); the HTML stands for
    # an app whose rules are wider, so the admin puts it there.
    mallory = sign_up(server, f"mallory-{kind}@example.com")
    uid = mallory["localId"]
    if kind == "svg":
        name, body, content_type = f"{uid}/full/p1/cat.svg", EVIL_SVG, "image/svg+xml"
        status, _, answer = upload(server.url, mallory["idToken"], name, body, content_type)
    else:
        name, body, content_type = f"{uid}/full/p1/page.html", EVIL_HTML, "text/html"
        refused, _, _ = upload(server.url, mallory["idToken"], name, body, content_type)
        assert refused == 403, "the app's rules let a user upload HTML"
        status, _, answer = upload(server.url, server.admin_token, name, body, content_type)
    assert status == 200, answer
    metadata = json.loads(answer)
    assert metadata["contentType"] == content_type
    # The link Mallory shares: the download URL with its token.
    status, _, answer = request(
        "POST", f"{server.url}/v0/b/hearth.appspot.com/o/{name.replace('/', '%2F')}?create_token=true",
        headers={"Authorization": f"Bearer {server.admin_token}"})
    assert status == 200, answer
    link = media_url(server.url, name, json.loads(answer)["downloadTokens"].split(",")[0])

    victim = browser_factory()
    folder = downloads(victim)
    uid_before = signed_in(victim, server, server.account("Ann"))
    assert not uid_before.startswith("error"), uid_before
    victim.get(link)
    saved = wait_for_download(folder, len(body))
    assert saved.read_bytes() == body, f"the download is not the uploaded file: {saved.name} {saved.read_bytes()[:200]!r}"
    assert_nothing_ran(victim, f"opening the {kind} link")
    victim.get(server.url + "/")
    browser_support.wait_until(victim, lambda d: d.execute_script("return Boolean(window.hearth)"))
    assert_nothing_ran(victim, "back in the app")
    assert app_storage_untouched(victim, server)
    assert victim.execute_script("return window.hearth.auth.currentUser && window.hearth.auth.currentUser.uid") == uid_before


def test_an_svg_shown_as_a_post_picture_runs_nothing(server, browser):
    mallory = sign_up(server, "mallory-img@example.com")
    name = f"{mallory['localId']}/thumb/p2/cat.svg"
    status, _, answer = upload(server.url, mallory["idToken"], name, EVIL_SVG, "image/svg+xml")
    assert status == 200, answer
    signed_in(browser, server, server.account("Ann"))
    browser.execute_script(
        "const img = document.createElement('img'); img.id = 'probe'; img.src = arguments[0]; document.body.append(img);",
        media_url(server.url, name))
    browser_support.wait_until(browser, lambda d: d.execute_script(
        "const img = document.getElementById('probe'); return img.complete && img.naturalWidth > 0"),
        message="the SVG did not display as an image")
    assert_nothing_ran(browser, "an SVG image in the page")


def test_a_safe_image_still_opens_inline(server, browser, downloads):
    folder = downloads(browser)
    # A path the app's rules let anyone read.
    status, _, answer = upload(server.url, server.admin_token, "someone/full/p/dot.png", PNG, "image/png")
    assert status == 200, answer
    browser.get(media_url(server.url, "someone/full/p/dot.png"))
    browser_support.wait_until(browser, lambda d: d.execute_script(
        "const img = document.images[0]; return Boolean(img && img.complete && img.naturalWidth === 1)"),
        message="the PNG was not shown")
    assert not list(folder.iterdir()), "an image was downloaded instead of shown"


def one_page_pdf() -> bytes:
    """A valid one-page PDF that says HELLO PDF."""
    stream = b"BT /F1 24 Tf 40 100 Td (HELLO PDF) Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1) + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    return out + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)


def test_a_pdf_opens_in_the_browsers_viewer_under_the_sandbox(server, browser, downloads):
    folder = downloads(browser)
    status, _, answer = upload(server.url, server.admin_token, "someone/full/p/doc.pdf", one_page_pdf(), "application/pdf")
    assert status == 200, answer
    browser.get(media_url(server.url, "someone/full/p/doc.pdf"))
    browser_support.wait_until(browser, lambda d: d.execute_script("return document.contentType") == "application/pdf",
                               message="the PDF did not open in the viewer")
    assert not list(folder.iterdir()), "the PDF was downloaded instead of shown"


def test_with_a_files_origin_a_link_on_the_app_origin_opens_on_the_files_origin(files_server, browser, downloads):
    folder = downloads(browser)
    mallory = sign_up(files_server, "mallory-origin@example.com")
    name = f"{mallory['localId']}/full/p3/cat.svg"
    # Uploads go to the files origin, as the web client sends them there.
    status, _, answer = upload(files_server.files_url, mallory["idToken"], name, EVIL_SVG, "image/svg+xml")
    assert status == 200, answer
    status, headers, _ = request("GET", media_url(files_server.url, name))
    assert status == 307
    assert headers["Location"] == media_url(files_server.files_url, name)
    signed_in(browser, files_server, files_server.account("Ann"))
    browser.get(media_url(files_server.url, name))
    saved = wait_for_download(folder, len(EVIL_SVG))
    assert saved.read_bytes() == EVIL_SVG
    assert_nothing_ran(browser, "a link on the app origin")
    assert app_storage_untouched(browser, files_server)
