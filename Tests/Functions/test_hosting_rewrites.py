"""Firebase Hosting's function rewrites against live functions: `hearth serve --hosting <site>`
with Python HTTPS functions written with Firebase's SDK (run by functions-framework, as in
test_python_functions.py). A rewrite `{"source": "/api/**", "function": "api"}` (or
`{"function": {"functionId": "api", "region": "us-central1"}}`) hands the request, with the
page's original path and query, its method, headers and body, to the function, and the
function's status, headers and body come back to the browser; Firebase's order of precedence
holds around it (redirects, then existing files, then rewrites, then the site's 404.html) and
the `headers` configuration is added to the function's answer.

One server for the module. Every function appends each call it gets to a log file (with the
`X-Probe` header the test sent), so a test can show that a request did or did not reach a
function: a function writes its line before it answers, so once Hearth has answered, the log
holds every call that request made.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
import requests

from functions_support import ADMIN_TOKEN, rest, serve_python
from harness import wait_until

FUNCTIONS = '''
"""HTTPS functions for the hosting rewrite tests: each logs its call, then answers what it saw."""

import json

from firebase_functions import https_fn, options

CALLS = {calls!r}


def log(name, req):
    line = json.dumps({{"function": name, "method": req.method, "path": req.path,
                        "probe": req.headers.get("X-Probe")}})
    with open(CALLS, "a") as handle:
        handle.write(line + "\\n")


@https_fn.on_request()
def api(req: https_fn.Request) -> https_fn.Response:
    """Echoes the request; `?status=N` picks the answer's status (201 for a POST by default)."""
    log("api", req)
    raw = req.get_data(as_text=True)
    seen = {{"function": "api", "method": req.method, "path": req.path, "query": req.query_string.decode(),
             "args": req.args.to_dict(flat=False), "contentType": req.headers.get("Content-Type"),
             "body": json.loads(raw) if raw else None, "pageHeader": req.headers.get("X-Page"),
             "authorization": "bearer" if req.headers.get("Authorization", "").startswith("Bearer ") else "none",
             "headers": {{name.lower(): value for name, value in req.headers.items()}}}}
    status = int(req.args.get("status", 201 if req.method == "POST" else 200))
    return https_fn.Response(json.dumps(seen), status=status, content_type="application/json",
                             headers={{"X-Served-By": "api", "Cache-Control": "private, max-age=7"}})


@https_fn.on_request(region="europe-west1")
def euapi(req: https_fn.Request) -> https_fn.Response:
    log("euapi", req)
    return https_fn.Response(json.dumps({{"function": "euapi", "path": req.path, "query": req.query_string.decode()}}),
                             content_type="application/json")


@https_fn.on_request(cors=options.CorsOptions(cors_origins="https://app.example", cors_methods=["get", "post"]))
def corsy(req: https_fn.Request) -> https_fn.Response:
    """Its own CORS policy (the SDK's flask-cors): only https://app.example."""
    log("corsy", req)
    return https_fn.Response(json.dumps({{"function": "corsy", "method": req.method}}), content_type="application/json")
'''

FIREBASE_JSON = {
    "hosting": {
        "public": "public",
        "redirects": [{"source": "/api/old/**", "destination": "/moved", "type": 302}],
        "headers": [
            {"source": "/api/**", "headers": [{"key": "X-Hosting-Rule", "value": "api"}]},
            {"source": "/api/items/*", "headers": [{"key": "X-Item-Rule", "value": "item"}]},
        ],
        "rewrites": [
            {"source": "/api/**", "function": "api"},
            {"source": "/v2/**", "function": {"functionId": "api", "region": "us-central1"}},
            {"source": "/eu/**", "function": {"functionId": "euapi", "region": "europe-west1"}},
            {"source": "/eu-by-name/**", "function": "euapi"},
            {"source": "/wrong-region/**", "function": {"functionId": "api", "region": "europe-west1"}},
            {"source": "/nobody/**", "function": "nosuchfunction"},
            # Never reached: the first matching rewrite decides, even when its function is not running.
            {"source": "/nobody/**", "function": "api"},
            {"source": "/cors/**", "function": "corsy"},
        ],
    }
}

NOT_FOUND_PAGE = "<!doctype html><title>Lost</title><h1>hosting-rewrites site 404</h1>\n"
STATIC_TEXT = "a static file under /api/\n"


class Site:
    """The running server, an HTTP session to it, and the functions' call log."""

    def __init__(self, server, calls: Path):
        self.server = server
        self.calls_file = calls
        self.http = requests.Session()

    def request(self, method: str, path: str, probe: str | None = None, **kwargs) -> requests.Response:
        headers = {**kwargs.pop("headers", {}), **({"X-Probe": probe} if probe else {})}
        return self.http.request(method, f"{self.server.url}{path}", headers=headers, allow_redirects=False,
                                 timeout=30, **kwargs)

    def calls(self, probe: str | None = None) -> list[dict]:
        if not self.calls_file.exists():
            return []
        lines = [json.loads(line) for line in self.calls_file.read_text().splitlines() if line]
        return [line for line in lines if probe is None or line["probe"] == probe]


def new_probe() -> str:
    return uuid.uuid4().hex


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("hosting-rewrites")
    calls = root / "calls.jsonl"
    functions = root / "functions"
    functions.mkdir()
    (functions / "main.py").write_text(FUNCTIONS.format(calls=str(calls)))
    folder = root / "site"
    public = folder / "public"
    (public / "api").mkdir(parents=True)
    (public / "index.html").write_text("<!doctype html><h1>home</h1>\n")
    (public / "404.html").write_text(NOT_FOUND_PAGE)
    (public / "api" / "static.txt").write_text(STATIC_TEXT)
    (folder / "firebase.json").write_text(json.dumps(FIREBASE_JSON, indent=2))
    # serve_python runs the functions already in root/functions, in this interpreter.
    server = serve_python(root, "--hosting", str(folder))
    try:
        hosted = Site(server, calls)
        # Each function's functions-framework process starts with the server: until it listens,
        # Hearth answers 503.
        for path, function in [("/api/ready", "api"), ("/eu/ready", "euapi"), ("/cors/ready", "corsy")]:
            def answers(path=path, function=function):
                response = hosted.request("GET", path)
                return response.status_code < 300 and response.json().get("function") == function
            wait_until(answers, 90, f"{function} answering through its rewrite", wake=server.output,
                       ignoring=(requests.RequestException, ValueError))
        yield hosted
    finally:
        server.stop()


# --- The function gets the request, the client gets the function's answer ------------------------


def test_a_get_to_a_rewritten_path_reaches_the_function_with_the_original_path_and_query(site):
    probe = new_probe()
    response = site.request("GET", "/api/items/7?color=red&size=a%20b&size=2", probe, headers={"X-Page": "catalog"})
    assert response.status_code == 200, response.text
    seen = response.json()
    assert seen["function"] == "api" and seen["method"] == "GET"
    # The page's path, not the function's emulator path, and the query as the browser sent it.
    assert seen["path"] == "/api/items/7"
    assert seen["query"] == "color=red&size=a%20b&size=2"
    assert seen["args"] == {"color": ["red"], "size": ["a b", "2"]}
    assert seen["pageHeader"] == "catalog" and seen["body"] is None
    # The function's headers come back as it set them: its Cache-Control, not hosting's default
    # for files (max-age=3600).
    assert response.headers["X-Served-By"] == "api"
    assert response.headers["Cache-Control"] == "private, max-age=7"
    assert response.headers["Content-Type"] == "application/json"
    assert site.calls(probe) == [{"function": "api", "method": "GET", "path": "/api/items/7", "probe": probe}]


def test_a_post_with_a_json_body_reaches_the_function_and_its_status_headers_and_body_come_back(site):
    probe = new_probe()
    body = {"name": "seven", "tags": ["a", "b"], "n": 7, "nested": {"ok": True}}
    response = site.request("POST", "/api/items?mode=full", probe, json=body)
    assert response.status_code == 201, response.text
    seen = response.json()
    assert (seen["method"], seen["path"], seen["query"]) == ("POST", "/api/items", "mode=full")
    assert seen["contentType"] == "application/json"
    assert seen["body"] == body
    assert response.headers["X-Served-By"] == "api"
    assert len(site.calls(probe)) == 1
    # Whatever status the function answers with is the client's.
    response = site.request("POST", "/api/items/8?status=418", new_probe(), json={"x": 1})
    assert response.status_code == 418 and response.json()["body"] == {"x": 1}
    response = site.request("GET", "/api/items/9?status=404", new_probe())
    assert response.status_code == 404 and response.json()["function"] == "api"


@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE"])
def test_other_methods_reach_the_function_too(site, method):
    probe = new_probe()
    response = site.request(method, "/api/items/7", probe, json={"method": method})
    assert response.status_code == 200, response.text
    assert (response.json()["method"], response.json()["body"]) == (method, {"method": method})
    assert [call["method"] for call in site.calls(probe)] == [method]


def test_a_head_request_reaches_the_function_and_gets_its_headers_without_a_body(site):
    probe = new_probe()
    response = site.request("HEAD", "/api/items/7", probe)
    assert response.status_code == 200 and response.content == b""
    assert response.headers["X-Served-By"] == "api" and response.headers["X-Hosting-Rule"] == "api"
    assert [call["method"] for call in site.calls(probe)] == ["HEAD"]


def test_the_function_is_called_with_the_original_encoded_path(site):
    probe = new_probe()
    # %3F is a question mark in a segment, not the query; %20 a space.
    response = site.request("GET", "/api/items/a%20b/q%3Fx=1?real=yes", probe)
    assert response.status_code == 200, response.text
    assert response.json()["path"] == "/api/items/a b/q?x=1"
    assert response.json()["query"] == "real=yes"


# --- Which function: the {functionId, region} form, a wrong region, a function not running ----------


def test_the_function_id_and_region_form_reaches_the_function_in_that_region(site):
    probe = new_probe()
    response = site.request("GET", "/v2/items/8?q=2", probe)
    assert response.status_code == 200, response.text
    assert (response.json()["function"], response.json()["path"], response.json()["query"]) == ("api", "/v2/items/8", "q=2")
    # A function in another region than us-central1, named with its region, and by its name alone.
    response = site.request("GET", "/eu/reports/1?year=2024", probe)
    assert response.status_code == 200, response.text
    assert response.json() == {"function": "euapi", "path": "/eu/reports/1", "query": "year=2024"}
    response = site.request("GET", "/eu-by-name/reports/2", probe)
    assert response.status_code == 200 and response.json()["path"] == "/eu-by-name/reports/2"
    assert [call["function"] for call in site.calls(probe)] == ["api", "euapi", "euapi"]


def test_a_region_that_does_not_match_the_running_function_gives_404_and_calls_nothing(site):
    probe = new_probe()
    for method in ["GET", "POST"]:
        response = site.request(method, "/wrong-region/items/1", probe, json={"x": 1} if method == "POST" else None)
        assert response.status_code == 404, response.text
        assert response.headers["Content-Type"].startswith("text/plain") and "not running" in response.text
        assert "X-Served-By" not in response.headers
    assert site.calls(probe) == []


def test_a_rewrite_to_a_function_that_is_not_running_gives_404_and_changes_nothing(site):
    before_calls = len(site.calls())
    status, before_data = rest(site.server, "GET", "/.json")
    assert status == 200
    probe = new_probe()
    for method in ["GET", "POST", "DELETE"]:
        response = site.request(method, "/nobody/items/1", probe, json={"x": 1} if method == "POST" else None)
        assert response.status_code == 404, response.text
        assert "nosuchfunction" in response.text and "X-Served-By" not in response.headers
    # Not the later rewrite of the same path to a running function, nor any other function.
    assert site.calls(probe) == [] and len(site.calls()) == before_calls
    assert rest(site.server, "GET", "/.json") == (200, before_data)


# --- Precedence: redirects, then existing files, then rewrites; headers on top ---------------------


def test_an_existing_static_file_wins_over_a_matching_rewrite(site):
    probe = new_probe()
    response = site.request("GET", "/api/static.txt", probe)
    assert response.status_code == 200
    assert response.text == STATIC_TEXT
    assert response.headers["Content-Type"].startswith("text/plain") and response.headers.get("ETag")
    assert "X-Served-By" not in response.headers
    # The headers configuration applies to the file as well.
    assert response.headers["X-Hosting-Rule"] == "api"
    assert site.calls(probe) == []
    # A path beside it is the function's.
    response = site.request("GET", "/api/static.txt.bak", probe)
    assert response.status_code == 200 and response.json()["path"] == "/api/static.txt.bak"
    assert [call["path"] for call in site.calls(probe)] == ["/api/static.txt.bak"]


def test_a_redirect_wins_over_a_rewrite(site):
    probe = new_probe()
    response = site.request("GET", "/api/old/thing?k=v", probe)
    assert response.status_code == 302
    assert response.headers["Location"] == "/moved?k=v"
    assert response.content == b""
    response = site.request("POST", "/api/old/thing", probe, json={"x": 1})
    assert response.status_code == 302 and response.headers["Location"] == "/moved"
    assert site.calls(probe) == []


def test_the_headers_configuration_is_added_to_the_functions_response_for_matching_paths(site):
    response = site.request("GET", "/api/items/7", new_probe())
    assert response.status_code == 200
    # Every matching rule, beside the function's own headers.
    assert response.headers["X-Hosting-Rule"] == "api"
    assert response.headers["X-Item-Rule"] == "item"
    assert response.headers["X-Served-By"] == "api" and response.headers["Cache-Control"] == "private, max-age=7"
    # /api/items/* is one segment: a deeper path gets the /api/** rule only.
    response = site.request("GET", "/api/items/7/reviews", new_probe())
    assert response.status_code == 200 and response.json()["path"] == "/api/items/7/reviews"
    assert response.headers["X-Hosting-Rule"] == "api" and "X-Item-Rule" not in response.headers
    # The same function behind a path no header rule matches: none added.
    response = site.request("GET", "/v2/items/7", new_probe())
    assert response.status_code == 200 and response.json()["function"] == "api"
    assert "X-Hosting-Rule" not in response.headers and "X-Item-Rule" not in response.headers
    # As hosted pages, the function's answer carries none of Hearth's API headers.
    assert "Content-Security-Policy" not in response.headers and "X-Frame-Options" not in response.headers


# --- Nothing outside the rewrites reaches a function -----------------------------------------------


@pytest.mark.parametrize("path", ["/items/7", "/apiary/items/7", "/v3/items/7", "/hearth/items/7"])
def test_a_page_path_without_a_rewrite_gives_the_sites_404_not_the_function(site, path):
    probe = new_probe()
    for method in ["GET", "POST"]:
        response = site.request(method, path, probe, json={"x": 1} if method == "POST" else None)
        assert response.status_code == 404, response.text
        assert response.text == NOT_FOUND_PAGE
        assert "X-Served-By" not in response.headers
    assert site.calls(probe) == []


def test_a_data_path_under_a_rewrite_is_the_databases(site):
    """A `….json` path is the database's (Firebase's REST API) unless the site has that file."""
    assert rest(site.server, "PUT", "/api/items.json", {"from": "database"}) == (200, {"from": "database"})
    probe = new_probe()
    response = site.request("GET", f"/api/items.json?auth={ADMIN_TOKEN}", probe)
    assert response.status_code == 200 and response.json() == {"from": "database"}
    assert site.calls(probe) == []
    rest(site.server, "DELETE", "/api.json")


def test_an_id_token_is_checked_before_a_rewritten_function_sees_it(site):
    status, account = rest(site.server, "POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k",
                           {"email": "rewrites@example.com", "password": "a-long-password", "returnSecureToken": True})
    assert status == 200, account
    token = account["idToken"]
    response = site.request("GET", "/api/me", new_probe(), headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200 and response.json()["authorization"] == "bearer"
    # A forged ID token is dropped on the way in, as at the emulator's path: the function, whose
    # Admin SDK does not check signatures, never sees it.
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    response = site.request("GET", "/api/me", new_probe(), headers={"Authorization": f"Bearer {forged}"})
    assert response.status_code == 200 and response.json()["authorization"] == "none"


# --- CORS: through a rewrite the function answers its preflight and keeps its own headers ---------


def test_a_preflight_to_a_rewritten_path_reaches_the_function(site):
    probe = new_probe()
    response = site.request("OPTIONS", "/cors/items", probe,
                            headers={"Origin": "https://app.example", "Access-Control-Request-Method": "POST"})
    # The function's policy (flask-cors answers the preflight before the function's body runs):
    # its one origin and its methods, not Hearth's "*" and its API's security headers.
    assert response.headers.get("Access-Control-Allow-Origin") == "https://app.example"
    assert "POST" in response.headers.get("Access-Control-Allow-Methods", "")
    assert "X-Frame-Options" not in response.headers
    # A preflight of a path no rewrite sends to a function is still the server's own.
    own = site.request("OPTIONS", "/items.json", probe,
                       headers={"Origin": "https://app.example", "Access-Control-Request-Method": "PUT"})
    assert own.status_code == 204 and own.headers.get("Access-Control-Allow-Origin") == "*"


def test_a_functions_own_cors_headers_come_back_through_a_rewrite(site):
    response = site.request("GET", "/cors/items", new_probe(), headers={"Origin": "https://app.example"})
    assert response.status_code == 200 and response.json()["function"] == "corsy"
    assert response.headers.get("Access-Control-Allow-Origin") == "https://app.example"


def test_only_the_session_cookie_reaches_the_function(site):
    response = site.request("GET", "/api/cookies", new_probe(),
                            headers={"Cookie": "theme=dark; __session=abc123; tracking=1"})
    assert response.status_code == 200
    assert response.json()["headers"]["cookie"] == "__session=abc123"
    response = site.request("GET", "/api/cookies", new_probe(), headers={"Cookie": "theme=dark"})
    assert "cookie" not in response.json()["headers"]


def test_head_gets_the_length_a_get_would(site):
    get = site.request("GET", "/api/items/7", new_probe())
    head = site.request("HEAD", "/api/items/7", new_probe())
    assert head.status_code == 200 and head.content == b""
    # The echo names the method, so HEAD's body would be GET's with "HEAD" for "GET".
    assert head.headers["Content-Length"] == str(len(get.content.replace(b'"GET"', b'"HEAD"', 1)))
