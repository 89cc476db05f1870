"""An owner's Firebase web app of the SDK 8 era (hosted_app/: its firebase.json and pages, as
`firebase deploy` would take them, unchanged) served by `hearth serve --hosting`, driven in
chromium end to end: the SDK from `/__/firebase/8.10.1/…` (through --sdk-dir), the project's
configuration from `/__/firebase/init.js`, sign-up, a message written and seen live, a picture
sent through Cloud Storage, and the firebase.json features a browser meets (rewrite, redirect,
headers, cleanUrls, 404.html).

The page calls the namespaced auth and storage APIs without `useEmulator`: `init.js` points
them at the page's origin, as the Firebase CLI's init.js points them at its emulators, so no
request leaves for Google's hosts.

The same app behind a TLS proxy (nginx, as docs/deploy puts Hearth behind one) gets an
`https://` origin in init.js, and the SDKs follow it there (storage through its service's host,
as its `useEmulator` is plain HTTP only).

Needs the SDK folder (FIREBASE_JS_SDK_8, else ../shared/firebase-js-sdk-8.10.1 beside the
checkout, as Tests/Generations looks); skipped without it. The TLS case needs nginx and openssl.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import tempfile
import uuid
import zlib
from pathlib import Path

import pytest
import requests
from selenium.webdriver.common.by import By

import harness
from browser_support import REPO, new_browser, shown_texts, wait_for, wait_until
from harness import HearthDidNotStart, HearthProcess, free_port, wait_for_port

APP = Path(__file__).resolve().parent / "hosted_app"
SDK_CANDIDATES = [os.environ.get("FIREBASE_JS_SDK_8", ""), str(REPO.parent / "shared" / "firebase-js-sdk-8.10.1"),
                  "/work/shared/firebase-js-sdk-8.10.1"]
SDK_DIR = next((Path(path) for path in SDK_CANDIDATES if path and (Path(path) / "firebase-app.js").exists()), None)

NGINX = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin:/sbin")
OPENSSL = shutil.which("openssl")

pytestmark = pytest.mark.skipif(SDK_DIR is None, reason="needs the Firebase JS SDK 8.10.1 folder (FIREBASE_JS_SDK_8)")


def png(width: int, height: int) -> bytes:
    """A red picture, as PNG."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


class HostedApp:
    def __init__(self, hearth: HearthProcess, data: Path, tmp: Path):
        self.hearth, self.data, self.tmp = hearth, data, tmp
        self.url = hearth.url.rstrip("/")
        self.admin_token = (data / "admin-token").read_text().strip()


@pytest.fixture(scope="module")
def hosted():
    tmp = Path(tempfile.mkdtemp(prefix="hearth-hosted-"))
    data = tmp / "data"
    data.mkdir()
    hearth = None
    try:
        hearth = HearthProcess(
            ["serve", "--port", "0", "--data", data, "--hosting", APP, "--sdk-dir", SDK_DIR,
             "--rules", APP / "database.rules.json", "--storage-rules", APP / "storage.rules"],
            binary=harness.hearth_binary())
        try:
            hearth.start()
        except HearthDidNotStart as error:
            pytest.fail(str(error))
        harness.wait_until(lambda: (data / "admin-token").exists(), 10, "the admin token to be written")
        yield HostedApp(hearth, data, tmp)
    finally:
        if hearth is not None:
            hearth.stop()
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def tls_proxy(hosted):
    """https://127.0.0.1:<port> and its certificate: nginx with a throwaway certificate in front of the hosted app,
    passing WebSockets and saying X-Forwarded-Proto (a proxy on the same machine is believed)."""
    if NGINX is None or OPENSSL is None:
        pytest.skip("needs nginx and openssl")
    folder = hosted.tmp / "nginx"
    folder.mkdir()
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run([OPENSSL, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-keyout", str(key),
                    "-out", str(cert), "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    port = free_port()
    temp_paths = "\n".join(f"    {name}_temp_path {folder / name};" for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    config = folder / "nginx.conf"
    config.write_text(f"""daemon off;
pid {folder / 'nginx.pid'};
error_log {folder / 'error.log'} info;
events {{}}
http {{
    access_log off;
{temp_paths}
    server {{
        listen 127.0.0.1:{port} ssl;
        ssl_certificate {cert};
        ssl_certificate_key {key};
        client_max_body_size 20m;
        location / {{
            proxy_pass http://127.0.0.1:{hosted.hearth.port};
            proxy_http_version 1.1;
            proxy_set_header Host $http_host;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $http_connection;
            proxy_set_header X-Forwarded-Proto https;
            proxy_set_header X-Forwarded-For $remote_addr;
        }}
    }}
}}
""")
    process = subprocess.Popen([NGINX, "-c", str(config), "-p", str(folder)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if not wait_for_port(port, process):
            log = (folder / "error.log").read_text(errors="replace") if (folder / "error.log").exists() else ""
            pytest.fail(f"nginx did not start on {port}:\n{log}")
        yield f"https://127.0.0.1:{port}", cert
    finally:
        harness.stop_process(process, timeout=10)


@pytest.fixture
def chromium(hosted):
    driver = new_browser()
    yield driver
    driver.quit()


def sign_up(driver, email: str):
    wait_for(driver, "#email").send_keys(email)
    driver.find_element(By.CSS_SELECTOR, "#password").send_keys("correct horse battery")
    driver.find_element(By.CSS_SELECTOR, "#sign-up-button").click()
    wait_until(driver, lambda d: d.find_element(By.CSS_SELECTOR, "#user-email").text == email or d.find_element(By.CSS_SELECTOR, "#error").text,
               20, "the sign-up to finish")
    assert driver.find_element(By.CSS_SELECTOR, "#error").text == ""
    assert driver.find_element(By.CSS_SELECTOR, "#user-email").text == email


def send(driver, text: str):
    field = wait_for(driver, "#message")
    field.send_keys(text)
    driver.find_element(By.CSS_SELECTOR, "#send").click()
    wait_until(driver, lambda d: any(shown.endswith(": " + text) for shown in shown_texts(d, "#messages .message")),
               20, f"{text!r} to appear in the list")
    # The list shows a write before the server has it; the app empties the field once the
    # server has confirmed it (push's promise), so the REST API has it from then on.
    wait_until(driver, lambda d: d.find_element(By.CSS_SELECTOR, "#message").get_attribute("value") == ""
               or d.find_element(By.CSS_SELECTOR, "#error").text, 20, f"the server to confirm {text!r}")


def long_polls(driver) -> bool:
    """Whether the page's database connection went through long-polling (`/.lp`, loaded as
    scripts, so in the resource timings; a WebSocket is not)."""
    return driver.execute_script(
        "return performance.getEntriesByType('resource').some((entry) => new URL(entry.name).pathname === '/.lp')")


@pytest.mark.parametrize("transport", ["websocket", "long-polling"])
def test_the_unchanged_app_signs_up_and_chats_live(hosted, chromium, transport):
    email = f"ann-{uuid.uuid4().hex[:8]}@example.com"
    if transport == "long-polling":
        # The SDK starts with long-polling when it remembers a failed WebSocket, as behind a
        # proxy that does not pass them.
        chromium.get(hosted.url + "/about")
        chromium.execute_script("localStorage.setItem('firebase:previous_websocket_failure', 'true')")
    chromium.get(hosted.url + "/")
    assert chromium.title == "Friendly Chat"
    assert wait_for(chromium, "#room").text == "lobby"
    # init.js configured the default app to talk to this server.
    options = chromium.execute_script("return firebase.app().options")
    assert options["databaseURL"].startswith(hosted.url + "?ns=")
    assert options["authDomain"] == hosted.url.removeprefix("http://")
    sign_up(chromium, email)
    send(chromium, "Hello from the hosted app")
    assert chromium.find_element(By.CSS_SELECTOR, "#error").text == ""

    # Stored where the app wrote it, as the REST API shows it.
    stored = requests.get(f"{hosted.url}/messages/lobby.json", params={"auth": hosted.admin_token}, timeout=10)
    stored.raise_for_status()
    messages = [message for message in stored.json().values() if message["name"] == email]
    assert [message["text"] for message in messages] == ["Hello from the hosted app"]
    assert isinstance(messages[0]["timestamp"], int)

    # A write from elsewhere shows up live in the page (child_added over the realtime connection).
    welcome = f"Welcome, {email}!"
    requests.post(f"{hosted.url}/messages/lobby.json", params={"auth": hosted.admin_token}, timeout=10,
                  json={"uid": messages[0]["uid"], "name": "admin", "text": welcome, "timestamp": 1}).raise_for_status()
    wait_until(chromium, lambda d: f"admin: {welcome}" in shown_texts(d, "#messages .message"), 20, "the REST write to appear")

    assert long_polls(chromium) == (transport == "long-polling")

    # init.js pointed the auth SDK at this origin, without the emulator banner; nothing was
    # asked of another host (the WebSocket is not in the resource timings; long-polling is).
    emulator = chromium.execute_script("return firebase.auth().emulatorConfig")
    assert (emulator["protocol"], emulator["host"], emulator["port"]) == ("http", "127.0.0.1", hosted.hearth.port)
    assert "emulator" not in chromium.find_element(By.TAG_NAME, "body").text.lower()
    origins = chromium.execute_script(
        "return [...new Set(performance.getEntriesByType('resource').map((entry) => new URL(entry.name).origin))]")
    assert origins == [hosted.url]

    # The SDK and configuration came from the reserved URLs: the page loaded them without errors
    # (the browser's own favicon.ico request gets the app's 404, as the app has none).
    severe = [entry["message"] for entry in chromium.get_log("browser")
              if entry["level"] == "SEVERE" and "/favicon.ico " not in entry["message"]]
    assert severe == []


def send_picture(hosted, driver, origin: str, room: str):
    """Signs up on `origin`'s room page and sends a picture; the stored message."""
    picture = hosted.tmp / f"sunset-{uuid.uuid4().hex[:6]}.png"
    picture.write_bytes(png(3, 2))
    driver.get(f"{origin}/rooms/{room}")
    sign_up(driver, f"cy-{uuid.uuid4().hex[:8]}@example.com")
    driver.find_element(By.CSS_SELECTOR, "#image").send_keys(str(picture))
    wait_until(driver, lambda d: d.execute_script(
        "const image = document.querySelector('#messages img'); return image && image.complete && image.naturalWidth")
        or d.find_element(By.CSS_SELECTOR, "#error").text, 20, "the picture to be shown")
    assert driver.find_element(By.CSS_SELECTOR, "#error").text == ""
    assert driver.execute_script("return document.querySelector('#messages img').naturalWidth") == 3
    stored = requests.get(f"{hosted.url}/messages/{room}.json", params={"auth": hosted.admin_token}, timeout=10).json()
    [(key, message)] = stored.items()
    assert message["text"] == picture.name
    assert f"/o/{message['uid']}%2F{key}%2F{picture.name}?alt=media&token=" in message["imageUrl"]
    return message, picture.read_bytes()


def test_a_picture_goes_through_cloud_storage(hosted, chromium):
    message, picture = send_picture(hosted, chromium, hosted.url, "photos")
    assert message["imageUrl"].startswith(f"{hosted.url}/v0/b/")
    # The download URL works outside the page too (its token is the credential), with the bytes sent.
    download = requests.get(message["imageUrl"], timeout=10)
    assert (download.status_code, download.content) == (200, picture)
    # Without the token, the rules decide: nobody signed in reads nothing.
    assert requests.get(message["imageUrl"].split("&token=")[0], timeout=10).status_code == 403


def test_behind_a_tls_proxy_the_sdks_follow_the_https_origin(hosted, tls_proxy):
    tls_origin, certificate = tls_proxy
    driver = new_browser(arguments=("--ignore-certificate-errors",))
    try:
        message, picture = send_picture(hosted, driver, tls_origin, "secure")
        assert message["imageUrl"].startswith(f"{tls_origin}/v0/b/")
        options = driver.execute_script("return firebase.app().options")
        assert options["databaseURL"].startswith(tls_origin + "?ns=")
        emulator = driver.execute_script("return firebase.auth().emulatorConfig")
        assert (emulator["protocol"], emulator["port"]) == ("https", int(tls_origin.rsplit(":", 1)[1]))
        origins = driver.execute_script(
            "return [...new Set(performance.getEntriesByType('resource').map((entry) => new URL(entry.name).origin))]")
        assert origins == [tls_origin]
        assert requests.get(message["imageUrl"], timeout=10, verify=certificate).content == picture
        assert driver.execute_script("return location.protocol") == "https:"
    finally:
        driver.quit()


def test_a_deep_link_is_served_the_app_by_the_rewrite(hosted, chromium):
    chromium.get(hosted.url + "/rooms/garden")
    assert chromium.title == "Friendly Chat"
    assert wait_for(chromium, "#room").text == "garden"
    sign_up(chromium, f"bo-{uuid.uuid4().hex[:8]}@example.com")
    send(chromium, "In the garden")
    stored = requests.get(f"{hosted.url}/messages/garden.json", params={"auth": hosted.admin_token}, timeout=10).json()
    assert [message["text"] for message in stored.values()] == ["In the garden"]


def test_the_redirect_keeps_its_capture(hosted, chromium):
    chromium.get(hosted.url + "/old-rooms/attic")
    wait_until(chromium, lambda d: d.current_url == hosted.url + "/rooms/attic", 10, "the redirect to /rooms/attic")
    assert wait_for(chromium, "#room").text == "attic"
    answer = requests.get(f"{hosted.url}/old-rooms/attic", allow_redirects=False, timeout=10)
    assert (answer.status_code, answer.headers["Location"]) == (301, "/rooms/attic")


def test_clean_urls_and_404_page(hosted, chromium):
    chromium.get(hosted.url + "/about")
    assert wait_for(chromium, "#about").text == "About Friendly Chat"
    chromium.get(hosted.url + "/about.html")
    wait_until(chromium, lambda d: d.current_url == hosted.url + "/about", 10, "/about.html to redirect to /about")

    # A missing file is not rewritten to the app (the rewrite takes paths without a dot).
    chromium.get(hosted.url + "/missing.js")
    assert wait_for(chromium, "#not-found").text == "Page Not Found"
    answer = requests.get(f"{hosted.url}/missing.js", timeout=10)
    assert answer.status_code == 404 and "Page Not Found" in answer.text


def test_headers_from_firebase_json(hosted):
    script = requests.get(f"{hosted.url}/app.js", timeout=10)
    assert script.status_code == 200
    assert script.headers["Cache-Control"] == "max-age=600"
    assert script.headers["X-Chat-App"] == "hosted-by-hearth"
    page = requests.get(f"{hosted.url}/rooms/lobby", timeout=10)
    assert page.headers["X-Chat-App"] == "hosted-by-hearth"
    assert "Content-Security-Policy" not in page.headers  # the owner's headers decide, not Hearth's
    sdk = requests.get(f"{hosted.url}/__/firebase/8.10.1/firebase-app.js", timeout=10)
    assert sdk.status_code == 200 and sdk.content == (SDK_DIR / "firebase-app.js").read_bytes()
