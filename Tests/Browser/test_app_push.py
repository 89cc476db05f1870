"""Push notifications in the web app, end to end, on a server of its own.

Chromium's push service (Google's) cannot be reached here, so the browser's part of subscribing
is played by `Tests/Support/push_service.py`, which makes subscriptions as a push service does
and decrypts what it is sent: the page's `pushManager.subscribe()` is given that service's
subscription, for the server's VAPID key. Everything else is the real thing:

Ava turns push on in Notification settings (the browser's permission granted through DevTools);
the subscription is stored under its ID and the server keeps it. She turns likes off. Ben likes
her post, then comments on it: the push service receives one message, encrypted for Ava's
subscription and signed with the server's VAPID key, the comment's (the like's was never
sent), while her notifications list in the app shows both. That message, delivered to Ava's
service worker through DevTools, shows as a notification with its title, words and tag; a click
on it brings the post up in her open app. Turning push off removes the stored subscription and
the browser's; turned on again, signing out removes it too.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import threading
from pathlib import Path

import harness
import pytest
from selenium.webdriver.common.by import By

from browser_support import DevTools, js_errors, launch_server, stop_server, wait_for, wait_until
from test_app_core import go, sign_up
from test_app_accessibility import dismiss_toasts
from test_app_account_deletion import admin_get
from app_actions import all_sent, comment, open_post, publish
from test_app_moderation import word

LIVE = 20
SUPPORT = Path(__file__).resolve().parents[1] / "Support"


def load_push_service():
    spec = importlib.util.spec_from_file_location("push_service", SUPPORT / "push_service.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def push_service():
    """The push service, on a port of its own, in a thread of this process."""
    service = load_push_service().PushService(0)
    thread = threading.Thread(target=service.serve_forever, daemon=True)
    thread.start()
    yield service
    service.shutdown()
    service.server_close()


@pytest.fixture
def push_server(tmp_path):
    """`hearth serve --demo` that may push to a push service on loopback (plain http)."""
    served = launch_server(tmp_path / "data", env={"HEARTH_PUSH_ALLOW_LOOPBACK": "1"})
    yield served
    stop_server(served)


def service_call(service, method: str, path: str, body=None):
    import urllib.request

    request = urllib.request.Request(f"http://127.0.0.1:{service.server_address[1]}{path}", method=method,
                                     data=None if body is None else json.dumps(body).encode())
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read() or b"null")


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# The browser's push manager, played by the push service's subscription (made for the key the
# page asks with: the stand-in refuses any other, as a push service would).
STAND_IN = """
const [subscription, serverKey] = arguments;
const b64 = (buffer) => btoa(String.fromCharCode(...new Uint8Array(buffer))).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
window.__push = { subscribed: 0, unsubscribed: 0 };
let current = null;
PushManager.prototype.getSubscription = async function () { return current; };
PushManager.prototype.subscribe = async function (options) {
  const key = options.applicationServerKey;
  if (b64(key.buffer ?? key) !== serverKey) throw new DOMException('not the key this subscription was made for', 'InvalidAccessError');
  window.__push.subscribed += 1;
  current = {
    endpoint: subscription.endpoint,
    options: { applicationServerKey: (key.buffer ?? key).slice(0) },
    toJSON: () => subscription,
    unsubscribe: async () => { window.__push.unsubscribed += 1; current = null; return true; },
  };
  return current;
};
"""


def stored_subscriptions(server, uid: str) -> dict:
    return admin_get(server, f"pushSubscriptions/{uid}") or {}


def settings_open(driver):
    go(driver, "#/notifications")
    link = wait_for(driver, "[data-testid=notification-settings-link]", LIVE)
    dismiss_toasts(driver)
    link.click()
    wait_until(driver, lambda d: d.execute_script("return location.hash") == "#/settings/notifications", LIVE)
    # The kinds are usable once the person's choices are loaded.
    wait_until(driver, lambda d: d.find_element(By.CSS_SELECTOR, "[data-testid=push-kinds]").is_enabled(), LIVE,
               "the choices did not load")


def push_state(driver) -> str:
    return driver.find_element(By.CSS_SELECTOR, "[data-testid=push-state]").get_attribute("data-state") or ""


def toggle_push(driver, expected_state: str):
    toggle = wait_for(driver, "[data-testid=push-toggle]", LIVE)
    dismiss_toasts(driver)
    toggle.click()
    wait_until(driver, lambda d: push_state(d) == expected_state, LIVE, f"push did not turn {expected_state}")


def test_push_notifications_from_settings_to_a_click(push_server, push_service, browser_factory):
    server = push_server
    ava, ben = browser_factory(), browser_factory()
    ava_name, ben_name = f"Ava {word()}", f"Ben {word()}"
    ava_uid = sign_up(ava, server, ava_name)

    # The server publishes its public key; the push service subscribes for it.
    server_key = harness.wait_until(lambda: admin_get(server, "pushConfig/vapidPublicKey"), LIVE, "the server's VAPID key")
    subscription = service_call(push_service, "POST", "/subscribe", {"applicationServerKey": server_key})
    subscription_id = b64url(hashlib.sha256(subscription["endpoint"].encode()).digest()[:16])
    service_id = subscription["endpoint"].rsplit("/", 1)[1]
    ava.execute_script(STAND_IN, subscription, server_key)
    ava.execute_cdp_cmd("Browser.grantPermissions", {"origin": server.url, "permissions": ["notifications"]})

    # Settings: off at first; turned on, the subscription is stored under its ID.
    settings_open(ava)
    assert push_state(ava) == "granted", push_state(ava)
    assert ava.find_element(By.CSS_SELECTOR, "[data-testid=push-toggle]").text == "Turn on for this device"
    toggle_push(ava, "on")
    stored = stored_subscriptions(server, ava_uid)
    assert list(stored) == [subscription_id], stored
    assert stored[subscription_id]["endpoint"] == subscription["endpoint"]
    assert stored[subscription_id]["keys"] == subscription["keys"]
    assert isinstance(stored[subscription_id]["created"], int)
    assert ava.execute_script("return window.__push.subscribed") == 1

    # Likes off: stored as false; every kind else stays on (no entry).
    ava.find_element(By.CSS_SELECTOR, "[data-testid=push-kind-like]").click()
    harness.wait_until(lambda: admin_get(server, f"notificationSettings/{ava_uid}") == {"like": False}, LIVE, "likes turned off")
    assert all(ava.find_element(By.CSS_SELECTOR, f"[data-testid=push-kind-{kind}]").is_selected()
               for kind in ("follow", "comment", "mention", "message"))

    post_id = publish(ava, "Push me", "A post to be liked and commented on")

    # Ben likes it, then comments: the one function pushes both in that order, so once the
    # comment's message is there, the like's would have been before it.
    sign_up(ben, server, ben_name)
    open_post(ben, post_id)
    ben.find_element(By.CSS_SELECTOR, "[data-testid=like-button]").click()
    all_sent(ben)
    comment(ben, "Lovely")
    messages = harness.wait_until(lambda: service_call(push_service, "GET", f"/messages/{service_id}"), LIVE,
                                  "the comment's push message")
    assert len(messages) == 1, messages
    payload = json.loads(unb64url(messages[0]["payload"]))
    assert payload["kind"] == "comment" and payload["title"] == ben_name, payload
    assert payload["body"].startswith(ben_name) and "comment" in payload["body"], payload
    assert payload["url"] == f"#/post/{post_id}"
    assert messages[0]["vapid"]["aud"] == f"http://127.0.0.1:{push_service.server_address[1]}"
    # The app's list has both: the choices are about push only.
    go(ava, "#/notifications")
    wait_until(ava, lambda d: sorted(e.get_attribute("data-type") for e in d.find_elements(By.CSS_SELECTOR, "[data-testid=notification]"))
               == ["comment", "like"], LIVE, "Ava's notifications list")

    # The message, delivered to Ava's service worker, shows as a notification.
    go(ava, "#/")
    devtools = DevTools(ava)
    try:
        page = devtools.attach("page", server.url)
        devtools.send("ServiceWorker.enable", session=page)
        registration = devtools.event("ServiceWorker.workerRegistrationUpdated",
                                      lambda params: any(r["scopeURL"] == f"{server.url}/" and not r["isDeleted"] for r in params["registrations"]))
        registration_id = next(r["registrationId"] for r in registration["registrations"] if r["scopeURL"] == f"{server.url}/")
        devtools.send("ServiceWorker.deliverPushMessage",
                      {"origin": server.url, "registrationId": registration_id, "data": unb64url(messages[0]["payload"]).decode()},
                      session=page)
        shown = """return (await navigator.serviceWorker.ready).getNotifications()
          .then((list) => list.map((n) => ({ title: n.title, body: n.body, tag: n.tag, hash: n.data?.hash })))"""
        notifications = wait_until(ava, lambda d: d.execute_async_script(
            "const done = arguments[arguments.length - 1]; (async () => { " + shown + " })().then(done, (e) => done(String(e)));"), LIVE,
            "the notification")
        assert notifications == [{"title": ben_name, "body": payload["body"], "tag": payload["tag"], "hash": f"#/post/{post_id}"}]

        # A click on it (dispatched in the worker: DevTools has no click on notifications)
        # brings the post up in the open app, and closes it.
        worker = devtools.attach("service_worker", f"{server.url}/sw.js")
        devtools.evaluate("""self.registration.getNotifications().then((list) => {
            self.dispatchEvent(new NotificationEvent('notificationclick', { notification: list[0] }));
            return list.length;
        })""", worker)
        wait_until(ava, lambda d: d.execute_script("return location.hash") == f"#/post/{post_id}", LIVE, "the post after the click")
        wait_for(ava, "[data-testid=post-title]", LIVE)
        assert devtools.evaluate("self.registration.getNotifications().then((list) => list.length)", worker) == 0
    finally:
        devtools.close()

    # Off: the stored subscription goes, and the browser's.
    settings_open(ava)
    toggle_push(ava, "granted")
    harness.wait_until(lambda: stored_subscriptions(server, ava_uid) == {}, LIVE, "the subscription removed")
    assert ava.execute_script("return window.__push.unsubscribed") == 1

    # On again, then signing out takes it away before the session ends.
    toggle_push(ava, "on")
    assert list(stored_subscriptions(server, ava_uid)) == [subscription_id]
    go(ava, "#/account")
    sign_out = wait_for(ava, "[data-testid=sign-out]", LIVE)
    dismiss_toasts(ava)
    sign_out.click()
    wait_for(ava, "[data-testid=signin-link]", LIVE)
    assert stored_subscriptions(server, ava_uid) == {}
    assert ava.execute_script("return window.__push.unsubscribed") == 2
    assert not [error for error in js_errors(ava) if "push" in error.lower()]


def test_settings_say_when_the_browser_cannot_push(server, browser):
    """Notifications blocked for the site: the screen says so and offers no button; the kinds
    still work (they are the person's, for their other devices)."""
    uid = sign_up(browser, server, f"Cy {word()}")
    browser.execute_cdp_cmd("Browser.setPermission", {"origin": server.url, "permission": {"name": "notifications"}, "setting": "denied"})
    settings_open(browser)
    assert push_state(browser) == "denied"
    assert "blocked" in browser.find_element(By.CSS_SELECTOR, "[data-testid=push-state]").text
    assert not browser.find_element(By.CSS_SELECTOR, "[data-testid=push-toggle]").is_displayed()
    browser.find_element(By.CSS_SELECTOR, "[data-testid=push-kind-message]").click()
    harness.wait_until(lambda: admin_get(server, f"notificationSettings/{uid}") == {"message": False}, LIVE, "messages turned off")
    # Back on: the entry goes (on is the default).
    browser.find_element(By.CSS_SELECTOR, "[data-testid=push-kind-message]").click()
    harness.wait_until(lambda: admin_get(server, f"notificationSettings/{uid}") is None, LIVE, "messages turned on again")
