"""The pages' Content-Security-Policy in chromium: injected script is refused, the app and the
console run without a single violation, nothing frames them; and the web session keeps the
refresh token out of every script's reach."""

from __future__ import annotations

import json

from security_support import (
    browser_support, policy_violations, request, signed_in, watch_policy_violations,
)

wait_until = browser_support.wait_until


def open_app(driver, server, path="/"):
    driver.get(server.url + path)
    wait_until(driver, lambda d: d.execute_script("return Boolean(window.hearth)"), message="the app did not start")


def test_injected_inline_script_and_handlers_are_refused(server, browser):
    watch_policy_violations(browser)
    open_app(browser, server)
    # An injection that reached the DOM: an inline script, an event-handler attribute, a
    # javascript: link and an inline style. Each is refused by the policy, not by luck.
    browser.execute_script("""
        const script = document.createElement('script');
        script.textContent = 'window.__inline = true';
        document.body.append(script);
        const img = document.createElement('img');
        img.setAttribute('onerror', 'window.__handler = true');
        img.src = 'data:,not-an-image';
        document.body.append(img);
        const link = document.createElement('a');
        link.href = 'javascript:window.__link = true';
        link.id = 'evil-link';
        link.textContent = 'x';
        document.body.append(link);
        link.click();
        const styled = document.createElement('div');
        styled.setAttribute('style', 'color: red');
        document.body.append(styled);
    """)
    wait_until(browser, lambda d: {v["directive"] for v in policy_violations(d)} >= {"script-src-elem", "script-src-attr"},
               message="the policy did not report the injected script")
    assert browser.execute_script("return [window.__inline, window.__handler, window.__link]") == [None, None, None]
    directives = {v["directive"] for v in policy_violations(browser)}
    assert "style-src-attr" in directives, directives


def test_jsonp_cannot_be_used_as_a_script_of_the_app(server, browser):
    status, _, _ = request("PUT", f"{server.url}/jsonp-probe.json?auth={server.admin_token}", b'"hello"')
    assert status == 200
    open_app(browser, server)
    outcome = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        window.__called = false;
        window.gadget = () => { window.__called = true; };
        const script = document.createElement('script');
        script.src = '/jsonp-probe.json?callback=gadget&auth=' + arguments[0];
        script.onload = () => done('loaded:' + window.__called);
        script.onerror = () => done('refused:' + window.__called);
        document.head.append(script);
    """, server.admin_token)
    assert outcome == "refused:false"


def test_the_app_and_the_console_run_without_a_violation(server, browser):
    watch_policy_violations(browser)
    uid = signed_in(browser, server, server.account("Ann"))
    assert not uid.startswith("error"), uid
    post_id = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        window.hearth.db.ref('posts').limitToLast(1).get().then((snap) => { let id = null; snap.forEach((c) => { id = c.key; }); done(id); });
    """)
    routes = ["#/", "#/top", "#/feed", "#/search?q=%23sunset", "#/chats", "#/saved", "#/mine", "#/compose", "#/account",
              f"#/post/{post_id}", f"#/profile/{uid}"]
    for route in routes:
        browser.execute_script("location.hash = arguments[0]", route)
        wait_until(browser, lambda d: not d.find_elements("css selector", "main .loading"), message=f"{route} did not load")
        # Pictures are loaded from the server too: let them arrive before looking.
        wait_until(browser, lambda d: d.execute_script("return [...document.images].every((img) => img.complete)"))
    # A realtime connection to this origin is allowed (connect-src 'self' covers ws:).
    browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const socket = new WebSocket(location.origin.replace('http', 'ws') + '/.ws?v=5');
        socket.onopen = socket.onerror = socket.onclose = () => done();
    """)
    assert policy_violations(browser) == []
    browser.get(server.url + "/console/")
    wait_until(browser, lambda d: d.find_elements("css selector", "input[type=password]"), message="the console did not start")
    assert policy_violations(browser) == []
    errors = [m for m in browser_support.js_errors(browser) if "Content Security Policy" in m]
    assert errors == []


def test_a_hostile_post_is_shown_as_text(server, browser_factory):
    mallory = browser_factory()
    open_app(mallory, server)
    hostile = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'
    post_id = mallory.execute_async_script("""
        const [text] = arguments;
        const done = arguments[arguments.length - 1];
        (async () => {
          const actions = await import('/app/actions.js');
          const { ServerValue } = await import('/lib/hearth.js');
          await actions.signUp(window.hearth, { name: 'Mallory', email: 'mallory-post@example.com', password: 'correct horse 1' });
          const id = window.hearth.db.ref('posts').push().key;
          await actions.publishPost(window.hearth, id, {
            author: actions.authorOf(window.hearth.auth.currentUser), title: text, body: text,
            timestamp: ServerValue.TIMESTAMP, starCount: 0 });
          return id;
        })().then(done, (error) => done('error: ' + error.message));
    """, hostile)
    assert not post_id.startswith("error"), post_id
    victim = browser_factory()
    watch_policy_violations(victim)
    signed_in(victim, server, server.account("Ann"))
    victim.execute_script("location.hash = arguments[0]", f"#/post/{post_id}")
    title = browser_support.wait_for(victim, "[data-testid=post-title]")
    wait_until(victim, lambda d: title.text == hostile, message=f"the title shows {title.text!r}")
    assert browser_support.text_of(victim, "[data-testid=post-body]") == hostile
    assert victim.execute_script("return window.__pwned") is None
    assert not victim.find_elements("css selector", "main img[src='x']")


def test_nothing_can_frame_the_app_or_the_console(server, browser, hostile_site):
    hostile_site.pages["/frame.html"] = ("text/html", f"""<!doctype html>
        <iframe onload="this.dataset.loaded = 1" src="{server.url}/"></iframe>
        <iframe onload="this.dataset.loaded = 1" src="{server.url}/console/"></iframe>""".encode())
    browser.get(hostile_site.url + "/frame.html")
    wait_until(browser, lambda d: d.execute_script(
        "return [...document.querySelectorAll('iframe')].every((frame) => frame.dataset.loaded)"), message="the frames never loaded")

    for index in range(2):
        browser.switch_to.frame(index)
        inside = browser.execute_script("return [location.href, Boolean(document.querySelector('#main, #app'))]")
        browser.switch_to.default_content()
        assert inside[0].startswith("chrome-error:") and not inside[1], f"a page of the server loaded in another site's frame: {inside}"


def test_the_refresh_token_is_out_of_scripts_reach(server, browser):
    uid = signed_in(browser, server, server.account("Ann"))
    assert not uid.startswith("error"), uid
    cookies = browser.execute_cdp_cmd("Network.getAllCookies", {})["cookies"]
    port = server.url.rsplit(":", 1)[1]
    session = next(c for c in cookies if c["name"] == f"hearth_session_{port}")
    assert session["httpOnly"] is True
    assert session["sameSite"] == "Strict"
    assert session["path"] == "/.hearth/session"
    refresh_token = session["value"]
    assert len(refresh_token) >= 40
    readable = browser.execute_script("""
        const all = [];
        for (const store of [localStorage, sessionStorage]) {
          for (let i = 0; i < store.length; i++) all.push(store.key(i) + '=' + store.getItem(store.key(i)));
        }
        all.push(document.cookie);
        all.push(JSON.stringify(window.hearth.auth._session));
        return all.join('\\n');
    """)
    assert refresh_token not in readable, "the refresh token is readable by page scripts"
    assert "refreshToken" not in readable
    # A reload keeps the session, from the cookie alone.
    browser.refresh()
    wait_until(browser, lambda d: d.execute_script(
        "return window.hearth && window.hearth.auth.currentUser && window.hearth.auth.currentUser.uid") == uid)
    token = browser.execute_async_script(
        "const done = arguments[arguments.length - 1]; window.hearth.auth.getIdToken().then(done, (e) => done('error: ' + e.message));")
    status, _, _ = request("GET", f"{server.url}/people/{uid}.json", headers={"Authorization": f"Bearer {token}"})
    assert status == 200


def test_signing_out_in_one_tab_signs_out_the_others_and_ends_the_session(server, browser):
    uid = signed_in(browser, server, server.account("Bob"))
    assert not uid.startswith("error"), uid
    first = browser.current_window_handle
    browser.switch_to.new_window("tab")
    open_app(browser, server)
    wait_until(browser, lambda d: d.execute_script("return window.hearth.auth.currentUser && window.hearth.auth.currentUser.uid") == uid)
    second = browser.current_window_handle
    browser.switch_to.window(first)
    browser.execute_async_script("const done = arguments[arguments.length - 1]; window.hearth.auth.signOut().then(() => done());")
    browser.switch_to.window(second)
    wait_until(browser, lambda d: d.execute_script("return window.hearth.auth.currentUser") is None,
               message="the other tab stayed signed in")
    port = server.url.rsplit(":", 1)[1]
    cookies = browser.execute_cdp_cmd("Network.getAllCookies", {})["cookies"]
    assert not [c for c in cookies if c["name"] == f"hearth_session_{port}"]


def test_another_site_cannot_use_the_session(server, browser, hostile_site):
    uid = signed_in(browser, server, server.account("Carol"))
    assert not uid.startswith("error"), uid
    hostile_site.pages["/steal.html"] = ("text/html", b"<!doctype html><title>steal</title>")
    browser.get(hostile_site.url + "/steal.html")
    outcome = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const base = arguments[0];
        Promise.allSettled([
          fetch(base + '/.hearth/session/token', { method: 'POST', credentials: 'include' }).then((r) => r.text()),
          fetch(base + '/.hearth/session', { method: 'DELETE', credentials: 'include' }).then((r) => r.text()),
        ]).then((results) => done(results.map((r) => r.status)));
    """, server.url)
    assert outcome == ["rejected", "rejected"]
    # Still signed in: the other site changed nothing.
    open_app(browser, server)
    wait_until(browser, lambda d: d.execute_script(
        "return window.hearth.auth.currentUser && window.hearth.auth.currentUser.uid") == uid)
    token = browser.execute_async_script(
        "const done = arguments[arguments.length - 1]; window.hearth.auth.getIdToken(true).then(done, (e) => done('error: ' + e.message));")
    assert not token.startswith("error"), token
    assert json.loads(request("GET", f"{server.url}/people/{uid}/full_name.json")[2])


def test_a_session_an_older_client_kept_in_local_storage_moves_to_the_cookie(server, browser):
    account = server.account("Ann")
    status, _, body = request(
        "POST", f"{server.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=x",
        json.dumps({"email": account["email"], "password": account["password"], "returnSecureToken": True}).encode(),
        {"Content-Type": "application/json"})
    assert status == 200, body
    signed_in_before = json.loads(body)
    # What the previous version of lib/hearth.js left in localStorage.
    browser.get(server.url + "/no-such-page")
    browser.execute_script(
        "localStorage.setItem(arguments[0], JSON.stringify({idToken: arguments[1], refreshToken: arguments[2], expiresAt: 0}))",
        f"hearth.session:{server.url}", signed_in_before["idToken"], signed_in_before["refreshToken"])
    open_app(browser, server)
    wait_until(browser, lambda d: d.execute_script(
        "return window.hearth.auth.currentUser && window.hearth.auth.currentUser.uid") == signed_in_before["localId"])
    stored = browser.execute_script("return JSON.stringify(localStorage)")
    assert signed_in_before["refreshToken"] not in stored and "refreshToken" not in stored
    port = server.url.rsplit(":", 1)[1]
    cookies = browser.execute_cdp_cmd("Network.getAllCookies", {})["cookies"]
    assert [c for c in cookies if c["name"] == f"hearth_session_{port}" and c["value"] == signed_in_before["refreshToken"]]


def test_when_the_server_will_not_keep_the_session_it_lasts_for_the_page(server, browser):
    open_app(browser, server)
    # Something between the page and the server refuses the session endpoint.
    browser.execute_script("""
        const original = window.fetch;
        window.fetch = (input, init) => String(input).includes('/.hearth/session')
          ? Promise.resolve(new Response('{"error":{"code":404,"message":"NOT_FOUND"}}', { status: 404 }))
          : original(input, init);
    """)
    account = server.account("Bob")
    uid = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        window.hearth.auth.signIn(arguments[0], arguments[1])
          .then(() => window.hearth.auth.getIdToken(true))
          .then(() => done(window.hearth.auth.currentUser.uid), (error) => done('error: ' + error.message));
    """, account["email"], account["password"])
    assert not uid.startswith("error"), uid
    # Nothing was written where scripts could read it later.
    assert browser.execute_script("return localStorage.getItem(arguments[0])", f"hearth.session:{server.url}") is None
