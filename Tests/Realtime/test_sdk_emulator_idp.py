"""Provider sign-in against Hearth's Auth emulator through the official Firebase JS SDK 9.8.1
(firebase-auth.js) in headless chromium, with no real provider:

- `signInWithCredential(GoogleAuthProvider.credential('{"sub": …}'))`, Firebase's documented
  emulator usage: the claims as an unsigned JSON "id_token".
- `signInWithRedirect`: the SDK itself builds the handler's address (`_getRedirectUrl`) and
  sends the tab to `<emulator>/emulator/auth/handler?…`; there an account is made in the page,
  which stores the auth event under `firebase:redirectEvent:<apiKey>:<appName>` in the
  emulator origin's sessionStorage and goes back to `redirectUrl`, as Firebase's emulator does.
  The event's `urlResponse` is then sent to `accounts:signInWithIdp` exactly as the SDK's
  popup/redirect operation sends it (requestUri, sessionId), and the handler offers the new
  account the next time.

What cannot run here: the SDK hands the event from the emulator's iframe to the app through
Google's gapi.iframes, loaded from apis.google.com, and this machine has no internet; so
`getRedirectResult`/`signInWithPopup` themselves are not driven (see docs/compatibility.md).
"""

from __future__ import annotations

import json
import secrets
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

import harness
from realtime_support import skip_without_sdk

skip_without_sdk()

API_KEY = "hearth-test-key"
TIMEOUT = 30


@pytest.fixture
def transport():
    """Accounts do not depend on the realtime transport: one mode is enough."""
    return "websocket"


def query_of(url: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}


# An app of its own (a known name, an authDomain: the SDK wants one for redirects) at Hearth.
OPEN_AUTH = """
  const app = fb.initializeApp({ apiKey: '%s', projectId: 'hearth', appId: '1:1:web:1', authDomain: 'localhost' }, appName);
  const auth = fb.initializeAuth(app, { persistence: fb.inMemoryPersistence, popupRedirectResolver: fb.browserPopupRedirectResolver });
  fb.connectAuthEmulator(auth, `http://127.0.0.1:${T.port}`, { disableWarnings: true });
""" % API_KEY


def test_sign_in_with_a_fake_google_credential(page, hearth):
    sub = "fake-" + secrets.token_hex(6)
    email = f"{sub}@example.com"
    outcome = page.call("""async (appName, sub, email) => {
      %s
      const describe = (result) => ({
        uid: result.user.uid, email: result.user.email, emailVerified: result.user.emailVerified,
        displayName: result.user.displayName,
        providers: result.user.providerData.map((p) => ({ providerId: p.providerId, uid: p.uid, email: p.email })),
        isNewUser: fb.getAdditionalUserInfo(result).isNewUser,
        signInProvider: fb.getAdditionalUserInfo(result).providerId,
        credentialIdToken: (fb.GoogleAuthProvider.credentialFromResult(result) || {}).idToken || null,
      });
      const claims = JSON.stringify({ sub: sub, email: email, email_verified: true, name: 'Fake Person' });
      const first = describe(await fb.signInWithCredential(auth, fb.GoogleAuthProvider.credential(claims)));
      await fb.signOut(auth);
      const second = describe(await fb.signInWithCredential(auth, fb.GoogleAuthProvider.credential(claims)));
      const token = await auth.currentUser.getIdTokenResult();
      return { first, second, claimsJSON: claims, tokenProvider: token.signInProvider };
    }""" % OPEN_AUTH, "fake-google-" + secrets.token_hex(3), sub, email)
    first, second = outcome["first"], outcome["second"]
    assert first["email"] == email and first["emailVerified"] is True, first
    assert first["displayName"] == "Fake Person", first
    assert first["providers"] == [{"providerId": "google.com", "uid": sub, "email": email}], first
    assert first["isNewUser"] is True and first["signInProvider"] == "google.com", first
    assert first["credentialIdToken"] == outcome["claimsJSON"], first
    assert second["uid"] == first["uid"] and second["isNewUser"] is False, second
    assert outcome["tokenProvider"] == "google.com", outcome


def test_redirect_through_the_emulator_handler_page(page, hearth, chromium):
    from selenium.webdriver.common.by import By

    app_name = "redirect-" + secrets.token_hex(3)
    app_url = chromium.current_url
    # The SDK navigates away, so the call never settles: start it and watch the tab.
    chromium.execute_script("""
      const appName = arguments[0];
      (async () => {
        %s
        const provider = new fb.GoogleAuthProvider();
        provider.addScope('https://www.googleapis.com/auth/contacts.readonly');
        provider.setCustomParameters({ login_hint: 'someone@example.com' });
        await fb.signInWithRedirect(auth, provider);
      })().catch((error) => { window.redirectError = String(error && (error.code || error.message)); });
    """ % OPEN_AUTH, app_name)
    handler = f"{hearth.url}/emulator/auth/handler?"
    harness.wait_until(lambda: chromium.current_url.startswith(handler) or chromium.execute_script(
        "return window.redirectError || null"), 20, "the SDK to open the emulator's handler")
    assert chromium.current_url.startswith(handler), chromium.execute_script("return window.redirectError")

    # What _getRedirectUrl put in the address.
    sent = query_of(chromium.current_url)
    assert sent["apiKey"] == API_KEY and sent["appName"] == app_name, sent
    assert sent["authType"] == "signInViaRedirect" and sent["providerId"] == "google.com", sent
    assert sent["redirectUrl"] == app_url and sent["v"] == "9.8.1", sent
    # signInWithRedirect has no event ID (linkWithRedirect and reauthenticateWithRedirect have one).
    assert "eventId" not in sent, sent
    assert "https://www.googleapis.com/auth/contacts.readonly" in sent["scopes"].split(","), sent
    assert json.loads(sent["customParameters"]) == {"login_hint": "someone@example.com"}, sent

    # The page lists the Google accounts made so far (the server is shared); make a new one.
    harness.wait_until(lambda: chromium.execute_script("return document.body.dataset.ready === 'true'"), 10,
                       "the handler page to list the accounts")
    assert chromium.find_element(By.ID, "provider").text == "Google"
    listed = [button.text for button in chromium.find_elements(By.CSS_SELECTOR, "#accounts button")]
    assert chromium.find_element(By.ID, "no-accounts").is_displayed() == (not listed), listed
    chromium.find_element(By.ID, "add-account").click()
    email = f"redirected-{secrets.token_hex(4)}@example.com"
    chromium.find_element(By.ID, "email").send_keys(email)
    chromium.find_element(By.ID, "display-name").send_keys("Red Irected")
    chromium.find_element(By.ID, "screen-name").send_keys("redirected")
    chromium.find_element(By.ID, "sign-in").click()

    # Back at the app, as the SDK asked.
    harness.wait_until(lambda: chromium.current_url == app_url, 10, "the handler to go back to redirectUrl")

    # The event waits in the emulator origin's sessionStorage for the iframe (same tab).
    storage_key = f"firebase:redirectEvent:{API_KEY}:{app_name}"
    chromium.get(f"{hearth.url}/emulator/auth/handler.css")
    event = json.loads(chromium.execute_script("return sessionStorage.getItem(arguments[0])", storage_key) or "null")
    assert event is not None, "no auth event stored for the iframe"
    assert event["type"] == "signInViaRedirect" and event["eventId"] is None, event
    assert event["error"] is None and event["sessionId"], event
    response = event["urlResponse"]
    assert response.startswith(f"{hearth.url}/emulator/auth/handler?"), response
    returned = query_of(response)
    assert returned["providerId"] == "google.com", returned
    claims = json.loads(returned["id_token"])
    assert claims["email"] == email and claims["email_verified"] is True, claims
    assert claims["name"] == "Red Irected" and claims["screen_name"] == "redirected", claims
    assert len(claims["sub"]) == 40 and claims["sub"].isdigit(), claims

    # What the SDK's redirect operation sends with that event (AbstractPopupRedirectOperation).
    session = requests.Session()
    session.trust_env = False
    answer = session.post(
        f"{hearth.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithIdp?key={API_KEY}", timeout=TIMEOUT,
        json={"requestUri": response, "sessionId": event["sessionId"], "returnSecureToken": True,
              "returnIdpCredential": True})
    assert answer.status_code == 200, answer.text
    signed_in = answer.json()
    assert signed_in["email"] == email and signed_in["providerId"] == "google.com", signed_in
    assert signed_in["isNewUser"] is True and signed_in["idToken"], signed_in

    # The next sign-in offers that account; picking it gives the same `sub`.
    chromium.get(handler + "&".join(f"{k}={v}" for k, v in {
        "apiKey": API_KEY, "appName": app_name, "authType": "signInViaRedirect",
        "redirectUrl": requests.utils.quote(app_url, safe=""), "v": "9.8.1", "eventId": "456",
        "providerId": "google.com"}.items()))
    harness.wait_until(lambda: chromium.execute_script("return document.body.dataset.ready === 'true'"), 10,
                       "the handler page to list the accounts")
    offered = chromium.find_elements(By.CSS_SELECTOR, "#accounts button")
    mine = [button for button in offered if email in button.text]
    assert mine, [button.text for button in offered]
    mine[0].click()
    harness.wait_until(lambda: chromium.current_url == app_url, 10, "the handler to go back to redirectUrl")
    chromium.get(f"{hearth.url}/emulator/auth/handler.css")
    again = json.loads(chromium.execute_script("return sessionStorage.getItem(arguments[0])", storage_key))
    assert again["eventId"] == "456", again
    assert json.loads(query_of(again["urlResponse"])["id_token"])["sub"] == claims["sub"], again


def test_popup_hands_the_event_to_the_openers_iframe(page, hearth, chromium):
    """The popup half, without gapi: the app's page holds the emulator iframe (as the SDK embeds
    it) and opens the handler as signInWithPopup does; the account picked in the popup reaches
    that iframe by postMessage. Offline the iframe cannot load gapi, so it keeps the event in
    its sessionStorage, where this test reads it (with gapi it sends it to the SDK at once)."""
    from selenium.webdriver.common.by import By

    app_name = "popup-" + secrets.token_hex(3)
    main = chromium.current_window_handle
    frame_url = f"{hearth.url}/emulator/auth/iframe?apiKey={API_KEY}&appName={app_name}&v=9.8.1"
    popup_url = (f"{hearth.url}/emulator/auth/handler?apiKey={API_KEY}&appName={app_name}&authType=signInViaPopup"
                 f"&redirectUrl={requests.utils.quote(chromium.current_url, safe='')}&v=9.8.1&eventId=77&providerId=github.com")
    chromium.execute_script("""
      const frame = document.createElement('iframe');
      frame.id = 'emulator-frame';
      frame.src = arguments[0];
      document.body.append(frame);
      frame.addEventListener('load', () => { window.popup = window.open(arguments[1], 'hearth-popup', 'width=500,height=600'); });
    """, frame_url, popup_url)
    harness.wait_until(lambda: len(chromium.window_handles) > 1, 10, "the popup to open")
    popup = [handle for handle in chromium.window_handles if handle != main][0]
    try:
        chromium.switch_to.window(popup)
        harness.wait_until(lambda: chromium.execute_script("return document.body.dataset.ready === 'true'"), 10,
                           "the handler page to list the accounts")
        assert chromium.find_element(By.ID, "provider").text == "GitHub"
        chromium.find_element(By.ID, "add-account").click()
        chromium.find_element(By.ID, "autofill").click()
        email = chromium.find_element(By.ID, "email").get_attribute("value")
        assert email.endswith("@example.com"), email
        chromium.find_element(By.ID, "sign-in").click()
        harness.wait_until(lambda: chromium.execute_script("return document.body.dataset.finished || null"), 10,
                           "the handler to hand the event over")
        assert chromium.execute_script("return document.body.dataset.finished") == "popup"
        assert chromium.find_element(By.ID, "problem").is_displayed() is False
    finally:
        chromium.close()
        chromium.switch_to.window(main)

    chromium.switch_to.frame(chromium.find_element(By.ID, "emulator-frame"))
    try:
        stored = chromium.execute_script("return sessionStorage.getItem(arguments[0])",
                                         f"firebase:redirectEvent:{API_KEY}:{app_name}")
    finally:
        chromium.switch_to.default_content()
    event = json.loads(stored or "null")
    assert event is not None, "the iframe got no event"
    assert event["type"] == "signInViaPopup" and event["eventId"] == "77" and event["error"] is None, event
    returned = query_of(event["urlResponse"])
    assert returned["providerId"] == "github.com", returned
    assert json.loads(returned["id_token"])["email"] == email, returned
