"""With files on an origin of their own (`--files-port`), the web app and the official Firebase
JavaScript SDK keep working: uploads, pictures, downloads and deletes go to the files origin."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from security_support import browser_support, policy_violations, wait_for_download, watch_policy_violations
from security_support import request as http_request

REPO = Path(__file__).resolve().parents[2]
PHOTO = REPO / "Sources" / "HearthSocial" / "Resources" / "demo" / "beach.jpg"
# The official SDK's browser builds (a test client, never part of Hearth): $FIREBASE_JS_SDK, or
# the workplace's shared copy beside the checkout.
SDK = next((Path(candidate) for candidate in (
    os.environ.get("FIREBASE_JS_SDK", ""), REPO.parent / "shared" / "firebase-js-sdk-9.8.1",
    Path("/work/shared/firebase-js-sdk-9.8.1"),
) if candidate and (Path(candidate) / "firebase-storage.js").exists()), REPO.parent / "shared" / "firebase-js-sdk-9.8.1")
wait_for, wait_until = browser_support.wait_for, browser_support.wait_until


def run_js(driver, body: str):
    """Runs an async function body in the page; its value, or "error: <message>"."""
    return driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        f"(async () => {{ {body} }})().then(done, (error) => done('error: ' + (error.message || error)));")


def test_the_web_app_posts_shows_and_deletes_photos_on_the_files_origin(files_server, browser):
    watch_policy_violations(browser)
    server = files_server
    browser.get(server.url + "/#/signup")
    wait_for(browser, "[data-testid=signup-name]").send_keys("Fay Origin")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=signup-email]").send_keys(f"fay-{uuid.uuid4().hex[:6]}@example.com")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=signup-password]").send_keys("correct-horse-7")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=signup-submit]").click()
    wait_until(browser, lambda d: d.current_url.endswith("/#/"), message="sign-up did not finish")
    assert browser.execute_script("return window.hearth.filesUrl") == server.files_url

    browser.execute_script("location.hash = '#/compose'")
    wait_for(browser, "[data-testid=compose-title]").send_keys("Across origins")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=compose-body]").send_keys("A photo kept on the files origin.")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=compose-photos]").send_keys(str(PHOTO))
    wait_for(browser, "[data-testid=photo-preview] img")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=compose-submit]").click()
    wait_until(browser, lambda d: d.current_url.split("#")[-1].startswith("/post/"), 20, "the post page did not open")
    wait_until(browser, lambda d: d.execute_script(
        "const img = document.querySelector('[data-testid=post-photo]'); return img && img.complete && img.naturalWidth > 0"),
        message="the photo does not show")
    source = browser.execute_script("return document.querySelector('[data-testid=post-photo]').src")
    assert source.startswith(server.files_url + "/v0/b/"), source
    post_id = browser.current_url.split("/post/")[-1]
    uid = browser.execute_script("return window.hearth.auth.currentUser.uid")
    status, _, body = http_request("GET", f"{server.files_url}/v0/b/hearth.appspot.com/o/{uid}%2Ffull%2F{post_id}%2F0.jpg?alt=media")
    assert status == 200 and body[:3] == b"\xff\xd8\xff", "the photo is not a JPEG on the files origin"

    browser.find_element(By.CSS_SELECTOR, "[data-testid=delete-post]").click()
    wait_for(browser, "[data-testid=confirm-ok]").click()
    wait_until(browser, lambda d: d.current_url.endswith("#/mine"), message="the post was not deleted")
    status, _, _ = http_request("GET", f"{server.files_url}/v0/b/hearth.appspot.com/o/{uid}%2Ffull%2F{post_id}%2F0.jpg?alt=media")
    assert status == 404, "the photo was not deleted from the files origin"
    assert policy_violations(browser) == []


SDK_PAGE = """<!doctype html>
<script type="importmap">
{"imports": {"https://www.gstatic.com/firebasejs/9.8.1/firebase-app.js": "/sdk/firebase-app.js"}}
</script>
<script type="module">
import { initializeApp } from '/sdk/firebase-app.js';
import { getAuth, connectAuthEmulator, createUserWithEmailAndPassword } from '/sdk/firebase-auth.js';
import { getStorage, connectStorageEmulator, ref, uploadBytes, getDownloadURL, getBytes, getMetadata, deleteObject }
  from '/sdk/firebase-storage.js';
window.run = async (server, filesHost, filesPort) => {
  const app = initializeApp({ apiKey: 'hearth', projectId: 'hearth', storageBucket: 'hearth.appspot.com' }, 'a' + Math.random());
  const auth = getAuth(app);
  connectAuthEmulator(auth, server, { disableWarnings: true });
  const { user } = await createUserWithEmailAndPassword(auth, `sdk-${Math.random().toString(36).slice(2)}@example.com`, 'correct-horse-7');
  const storage = getStorage(app);
  connectStorageEmulator(storage, filesHost, filesPort);
  const photo = ref(storage, `${user.uid}/full/p1/dot.png`);
  const png = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNg+M/AAAADAQEAGN2NtAAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0));
  await uploadBytes(photo, png, { contentType: 'image/png' });
  const url = await getDownloadURL(photo);
  const fetched = new Uint8Array(await (await fetch(url)).arrayBuffer());
  const bytes = new Uint8Array(await getBytes(photo));
  const metadata = await getMetadata(photo);
  const svg = ref(storage, `${user.uid}/full/p1/cat.svg`);
  await uploadBytes(svg, new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)<\\/script></svg>'),
    { contentType: 'image/svg+xml' });
  const svgURL = await getDownloadURL(svg);
  await deleteObject(photo);
  let gone = false;
  try { await getMetadata(photo); } catch (error) { gone = error.code === 'storage/object-not-found'; }
  return { url, svgURL, same: fetched.length === png.length && fetched.every((b, i) => b === png[i]),
           bytes: bytes.length === png.length && bytes.every((b, i) => b === png[i]), type: metadata.contentType, gone };
};
window.ready = true;
</script>"""


@pytest.mark.skipif(not SDK.exists(), reason="the official Firebase JS SDK was not found (set FIREBASE_JS_SDK)")
@pytest.mark.parametrize("storage_at", ["files origin", "app origin with a files origin", "app origin alone"])
def test_the_official_sdk_uploads_and_downloads_files(request, storage_at, browser, hostile_site, downloads):
    files_server = request.getfixturevalue("server" if storage_at == "app origin alone" else "files_server")
    for name in ("firebase-app.js", "firebase-auth.js", "firebase-storage.js"):
        hostile_site.pages[f"/sdk/{name}"] = ("text/javascript", (SDK / name).read_bytes())
    hostile_site.pages["/sdk-app.html"] = ("text/html", SDK_PAGE.encode())
    folder = downloads(browser)
    browser.get(hostile_site.url + "/sdk-app.html")
    wait_until(browser, lambda d: d.execute_script("return window.ready === true"), message="the SDK page did not load")
    base = files_server.files_url if storage_at == "files origin" else files_server.url
    files_port = int(base.rsplit(":", 1)[1])
    result = run_js(browser, f"return await window.run({files_server.url!r}, '127.0.0.1', {files_port});")
    assert not isinstance(result, str), result
    assert result["url"].startswith(f"http://127.0.0.1:{files_port}/v0/b/hearth.appspot.com/o/"), result
    assert result["same"] and result["bytes"] is True and result["type"] == "image/png" and result["gone"], result
    # The SDK's download URL of a hostile SVG, opened: a download, nothing runs.
    browser.get(result["svgURL"])
    saved = wait_for_download(folder, len(b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'))
    assert b"<script>" in saved.read_bytes()
    assert browser.title != "HEARTH-PWNED"

