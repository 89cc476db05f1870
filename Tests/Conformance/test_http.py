"""Raw HTTP checks: the status codes, headers and error texts of Firebase's REST API (docs/compatibility.md for Hearth's own)."""
import json

import pytest
import requests

NS = {"ns": "http-checks"}
OWNER = {"Authorization": "Bearer owner"}
JSON_TYPE = "application/json; charset=utf-8"


@pytest.fixture(scope="module")
def base(server):
    # These checks are about the REST surface, not rules: the namespace is open to everyone.
    requests.put(
        f"{server}/.settings/rules.json", params=NS, headers=OWNER,
        data='{"rules":{".read":true,".write":true,"seed":{".indexOn":["x"]},"list":{".indexOn":".value"}}}',
    ).raise_for_status()
    requests.put(f"{server}/.json", params=NS, data='{"seed":{"a":1,"b":2}}').raise_for_status()
    return server


def get(base, path, **params):
    return requests.get(f"{base}{path}", params={**NS, **params})


def error_of(response):
    assert response.headers["Content-Type"] == JSON_TYPE
    return response.json()["error"]


def assert_unchanged(base):
    assert get(base, "/seed.json").json() == {"a": 1, "b": 2}


# 200, 204, 304, 412 ---------------------------------------------------------------------------

def test_missing_data_is_200_null(base):
    response = get(base, "/nothing/here.json")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == JSON_TYPE
    assert response.text == "null"


def test_print_silent_is_204(base):
    response = requests.put(f"{base}/silent.json", params={**NS, "print": "silent"}, data="1")
    assert response.status_code == 204
    assert response.content == b""
    assert get(base, "/silent.json").json() == 1


def test_etag_is_node_hash(base):
    requests.put(f"{base}/etag.json", params=NS, data="600613").raise_for_status()
    response = requests.get(f"{base}/etag.json", params=NS, headers={"X-Firebase-ETag": "true"})
    assert response.headers["ETag"] == "ViJFJowpbyRvgGNPzPJdGeN+mCY="
    empty = requests.get(f"{base}/empty.json", params=NS, headers={"X-Firebase-ETag": "true"})
    assert empty.headers["ETag"] == "null_etag"
    plain = get(base, "/etag.json")
    assert "ETag" not in plain.headers


def test_if_none_match_is_304(base):
    requests.put(f"{base}/etag.json", params=NS, data="600613").raise_for_status()
    response = requests.get(f"{base}/etag.json", params=NS, headers={"if-none-match": "ViJFJowpbyRvgGNPzPJdGeN+mCY="})
    assert response.status_code == 304
    assert response.headers["ETag"] == "ViJFJowpbyRvgGNPzPJdGeN+mCY="
    other = requests.get(f"{base}/etag.json", params=NS, headers={"if-none-match": "stale"})
    assert other.status_code == 200
    assert other.headers["ETag"] == "ViJFJowpbyRvgGNPzPJdGeN+mCY="


def test_if_match_mismatch_is_412_with_current_value(base):
    requests.put(f"{base}/cond.json", params=NS, data='{"v":1}').raise_for_status()
    response = requests.put(f"{base}/cond.json", params=NS, data='{"v":2}', headers={"if-match": "wrong"})
    assert response.status_code == 412
    assert response.json() == {"v": 1}
    current = response.headers["ETag"]
    success = requests.put(f"{base}/cond.json", params=NS, data='{"v":2}', headers={"if-match": current})
    assert success.status_code == 200
    assert success.headers["ETag"] != current
    fresh = requests.put(f"{base}/new-cond.json", params=NS, data="1", headers={"if-match": "null_etag"})
    assert fresh.status_code == 200
    deleted = requests.delete(f"{base}/cond.json", params=NS, headers={"if-match": "wrong"})
    assert deleted.status_code == 412
    assert get(base, "/cond.json").json() == {"v": 2}


def test_if_match_on_patch_is_400(base):
    response = requests.patch(f"{base}/seed.json", params=NS, data='{"a":9}', headers={"if-match": "x"})
    assert response.status_code == 400
    assert_unchanged(base)


# 400 texts ------------------------------------------------------------------------------------

@pytest.mark.parametrize("method,path,body,text", [
    ("PUT", "/seed.json", '{"a":', "Invalid data; couldn't parse JSON object, array, or value."),
    ("PUT", "/seed.json", "", "Invalid data; couldn't parse JSON object, array, or value."),
    ("POST", "/seed.json", "nope", "Invalid data; couldn't parse JSON object, array, or value."),
    ("PATCH", "/seed.json", "[1,2]", "Invalid data; couldn't parse JSON object. Are you sending a JSON object with valid key names?"),
    ("PATCH", "/seed.json", '"text"', "Invalid data; couldn't parse JSON object. Are you sending a JSON object with valid key names?"),
    ("PUT", "/seed.json", '{\n  "ok": 1,\n  "bad#key": 2}', "Invalid data; couldn't parse key beginning at 3:3. Key value can't be empty or contain $ # [ ] / or ."),
    ("PUT", "/se$ed.json", "1", "Invalid path: Invalid token in path"),
    ("PUT", "/se[ed.json", "1", "Invalid path: Invalid token in path"),
    ("DELETE", "/a.b/seed.json", None, "Invalid path: Invalid token in path"),
])
def test_bad_writes_are_400_and_change_nothing(base, method, path, body, text):
    response = requests.request(method, f"{base}{path}", params=NS, data=body)
    assert response.status_code == 400
    assert error_of(response) == text
    assert_unchanged(base)


@pytest.mark.parametrize("params,text", [
    ({"orderBy": '"x"', "limitToFirst": "1"}, None),
    ({"limitToFirst": "1"}, "orderBy must be defined when other query parameters are defined"),
    ({"orderBy": "x"}, "orderBy must be a valid JSON encoded path"),
    ({"orderBy": '"x"', "startAt": "{}"}, "Constraint index field must be a JSON primitive"),
    ({"orderBy": '"$key"', "startAt": "1"}, "Provided key index type is invalid, must be string"),
    ({"shallow": "true", "orderBy": '"$key"'}, "Mixing 'shallow' and querying parameters is not supported"),
    ({"orderBy": '"y"'}, 'Index not defined, add ".indexOn": "y", for path "/seed", to the rules'),
    ({"orderBy": '"$value"'}, 'Index not defined, add ".indexOn": ".value", for path "/seed", to the rules'),
])
def test_bad_queries_are_400(base, params, text):
    response = get(base, "/seed.json", **params)
    if text is None:
        assert response.status_code == 200
        return
    assert response.status_code == 400
    assert error_of(response) == text


def test_value_index_and_key_tiebreak(base):
    requests.put(f"{base}/list.json", params=NS, data='{"a":2,"b":1,"c":2,"d":3}').raise_for_status()
    response = get(base, "/list.json", orderBy='"$value"', startAt='2,"c"')
    assert response.json() == {"c": 2, "d": 3}
    response = get(base, "/list.json", orderBy='"$value"', endBefore="2")
    assert response.json() == {"b": 1}


def test_errors_are_pretty_printed_objects(base):
    response = requests.put(f"{base}/seed.json", params=NS, data="{")
    assert response.text.startswith('{\n  "error" : ')
    assert response.text.endswith("\n")


# 401, 404 -------------------------------------------------------------------------------------

def test_rules_need_an_admin(base):
    response = requests.get(f"{base}/.settings/rules.json", params=NS)
    assert response.status_code == 401
    assert error_of(response) == "Permission denied"
    bad = requests.put(f"{base}/.settings/rules.json", params=NS, headers={"Authorization": "Bearer nope"}, data="{}")
    assert bad.status_code == 401


def test_rules_round_trip_and_syntax_errors(base):
    strict = requests.get(f"{base}/.settings/rules.json", params={**NS, "format": "strict"}, headers=OWNER)
    assert strict.status_code == 200
    assert json.loads(strict.text) == {
        "rules": {".read": True, ".write": True, "seed": {".indexOn": ["x"]}, "list": {".indexOn": ".value"}}}
    broken = requests.put(f"{base}/.settings/rules.json", params=NS, headers=OWNER, data='{"rules": {\n  "a": }}')
    assert broken.status_code == 400
    assert error_of(broken).startswith("Line 2, column 8:")
    again = requests.get(f"{base}/.settings/rules.json", params={**NS, "format": "strict"}, headers=OWNER)
    assert json.loads(again.text) == json.loads(strict.text)


def test_invalid_database_name_is_404(base):
    response = requests.get(f"{base}/.json", params={"ns": "Not_Valid"})
    assert response.status_code == 404


# Headers --------------------------------------------------------------------------------------

def test_cors(base):
    response = get(base, "/seed.json")
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    preflight = requests.options(
        f"{base}/seed.json", params=NS,
        headers={"Origin": "https://example.com", "Access-Control-Request-Method": "PUT",
                 "Access-Control-Request-Headers": "content-type,x-firebase-etag"},
    )
    assert preflight.status_code == 204
    assert preflight.headers["Access-Control-Allow-Origin"] == "*"
    assert "PUT" in preflight.headers["Access-Control-Allow-Methods"]
    assert preflight.headers["Access-Control-Allow-Headers"] == "content-type,x-firebase-etag"


def test_method_override(base):
    response = requests.post(f"{base}/override.json", params=NS, data='{"x":1}', headers={"X-HTTP-Method-Override": "PUT"})
    assert response.json() == {"x": 1}
    requests.post(f"{base}/override.json", params={**NS, "x-http-method-override": "DELETE"}).raise_for_status()
    assert get(base, "/override.json").json() is None


def test_event_stream_headers_and_first_event(base):
    with requests.get(f"{base}/seed.json", params=NS, headers={"Accept": "text/event-stream"}, stream=True, timeout=10) as response:
        assert response.status_code == 200
        assert response.headers["Content-Type"] == "text/event-stream; charset=utf-8"
        assert response.headers["Cache-Control"] == "no-cache"
        lines = []
        for line in response.iter_lines(decode_unicode=True):
            lines.append(line)
            if len(lines) == 2:
                break
        assert lines[0] == "event: put"
        assert json.loads(lines[1][len("data: "):]) == {"path": "/", "data": {"a": 1, "b": 2}}


def test_keep_alive_events(base):
    with requests.get(f"{base}/seed.json", params=NS, headers={"Accept": "text/event-stream"}, stream=True, timeout=10) as response:
        events = []
        for line in response.iter_lines(decode_unicode=True):
            if line.startswith("event: "):
                events.append(line[len("event: "):])
            if line == "data: null" and events[-1] == "keep-alive":
                break
        assert events[0] == "put"
        assert events[-1] == "keep-alive"


def test_callback_download_and_options(base):
    jsonp = get(base, "/seed.json", callback="handle")
    assert jsonp.headers["Content-Type"] == "application/javascript; charset=utf-8"
    assert jsonp.text == 'handle({"a":1,"b":2});'
    download = get(base, "/seed.json", download="seed.json")
    assert download.headers["Content-Disposition"] == 'attachment; filename="seed.json"'
    assert download.json() == {"a": 1, "b": 2}
    assert get(base, "/seed.json", timeout="500ms").status_code == 200
    assert get(base, "/seed.json", timeout="3min").status_code == 200
    for bad in ["0s", "16min", "ten", "5h"]:
        assert get(base, "/seed.json", timeout=bad).status_code == 400
    ok = requests.put(f"{base}/sized.json", params={**NS, "writeSizeLimit": "unlimited"}, data="1")
    assert ok.status_code == 200
    bad = requests.put(f"{base}/seed.json", params={**NS, "writeSizeLimit": "huge"}, data="1")
    assert bad.status_code == 400
    assert get(base, "/seed.json", callback="alert(1)").status_code == 400
    assert_unchanged(base)


def test_namespaces_are_separate(server):
    requests.put(f"{server}/where.json", params={"ns": "alpha"}, data='"alpha"', headers=OWNER).raise_for_status()
    requests.put(f"{server}/where.json", params={"ns": "beta"}, data='"beta"', headers=OWNER).raise_for_status()
    assert requests.get(f"{server}/where.json", params={"ns": "alpha"}, headers=OWNER).json() == "alpha"
    assert requests.get(f"{server}/where.json", params={"ns": "beta"}, headers=OWNER).json() == "beta"
    # The Host's first label names the database when no ns= is given.
    port = server.rsplit(":", 1)[1]
    by_host = requests.get(f"{server}/where.json", headers={"Host": f"beta.localhost:{port}", **OWNER})
    assert by_host.json() == "beta"


def test_a_new_namespace_starts_closed(server):
    params = {"ns": "closed-by-default"}
    read = requests.get(f"{server}/.json", params=params)
    assert read.status_code == 401
    assert error_of(read) == "Permission denied"
    write = requests.put(f"{server}/x.json", params=params, data="1")
    assert write.status_code == 401
    assert error_of(write) == "Permission denied"
    stream = requests.get(f"{server}/.json", params=params, headers={"Accept": "text/event-stream"}, timeout=5)
    assert stream.status_code == 401
    # Admins are not bound by rules, and nothing was written by the refused request.
    assert requests.get(f"{server}/.json", params=params, headers=OWNER).json() is None


def unsigned_token(**claims):
    """A token like the SDKs' `mockUserToken`: an unsigned JWT the emulator accepts."""
    import base64
    import time as clock

    def part(value):
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    now = int(clock.time())
    payload = {"iss": "https://securetoken.google.com/fake-project-id", "aud": "fake-project-id", "iat": now,
               "exp": now + 3600, "auth_time": now, "sub": "alice", "user_id": "alice",
               "firebase": {"sign_in_provider": "custom", "identities": {}}}
    payload.update(claims)
    return f'{part({"alg": "none", "typ": "JWT"})}.{part(payload)}.'


def test_credentials(base):
    good = requests.get(f"{base}/seed.json", params={**NS, "auth": unsigned_token()})
    assert good.status_code == 200
    bearer = requests.get(f"{base}/seed.json", params=NS, headers={"Authorization": f"Bearer {unsigned_token()}"})
    assert bearer.status_code == 200
    garbage = requests.get(f"{base}/seed.json", params={**NS, "auth": "not-a-token"})
    assert garbage.status_code == 401
    assert error_of(garbage) == "Could not parse auth token."
    expired = requests.put(f"{base}/seed.json", params={**NS, "auth": unsigned_token(exp=1000)}, data="1")
    assert expired.status_code == 401
    assert error_of(expired) == "Auth token is expired"
    assert_unchanged(base)


def test_stream_gets_auth_revoked_when_its_token_expires(base):
    import time as clock

    token = unsigned_token(exp=int(clock.time()) + 2)
    with requests.get(f"{base}/seed.json", params={**NS, "auth": token}, headers={"Accept": "text/event-stream"},
                      stream=True, timeout=15) as response:
        assert response.status_code == 200
        lines = list(response.iter_lines(decode_unicode=True))  # the server ends the stream
    events = [line[len("event: "):] for line in lines if line.startswith("event: ")]
    assert events[0] == "put"
    assert events[-1] == "auth_revoked"
    assert lines[lines.index("event: auth_revoked") + 1] == "data: credential is no longer valid"
