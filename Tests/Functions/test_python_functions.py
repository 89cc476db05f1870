"""Functions written with Firebase's Python functions SDK run unchanged: Hearth reads their
manifest from the SDK, runs each in a functions-framework process, delivers database events as
CloudEvents, and firebase_admin inside them reaches Hearth with admin rights."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import harness
from functions_support import ADMIN_TOKEN, rest, serve_python
from harness import HearthProcess, wait_until

# Clients may write posts and messages; only functions (admins) may write the rest.
RULES = '{"rules": {".read": true, "posts": {".write": true}, "messages": {".write": true}}}'


def start(tmp_path: Path, *args) -> HearthProcess:
    return serve_python(tmp_path, *args, rules=RULES)


def logged(server, post: str) -> list[dict]:
    status, value = rest(server, "GET", f"/log/{post}.json")
    assert status == 200
    return list((value or {}).values())


def test_a_database_trigger_runs_in_its_process_and_writes_back_with_admin_rights(tmp_path):
    server = start(tmp_path)
    try:
        # A client that is not signed in writes; the function, as admin, writes where clients may not.
        assert rest_anonymous(server, "PUT", "/posts/p1.json", {"text": "hi"})[0] == 200
        assert rest_anonymous(server, "PUT", "/log/x.json", 1)[0] == 401
        entries = wait_until(lambda: logged(server, "p1"), 60, "the function's log entry", wake=server.output)
        # (A null is no value in the database: the function's None fields are absent.)
        assert "before" not in entries[0] and entries[0]["after"] == {"text": "hi"}
        assert entries[0]["authType"] == "unauthenticated" and entries[0]["reference"] == "posts/p1"
        assert entries[0]["instance"] == "default"
        rest(server, "PATCH", "/posts/p1.json", {"text": "hello", "n": 1})
        rest(server, "DELETE", "/posts/p1.json")
        entries = wait_until(lambda: len(logged(server, "p1")) >= 3 and logged(server, "p1"), 60, "three log entries",
                             wake=server.output)
        ordered = entries  # push IDs keep the order the function wrote them in
        assert [e.get("after") for e in ordered] == [{"text": "hi"}, {"text": "hello", "n": 1}, None]
        assert ordered[1]["before"] == {"text": "hi"} and ordered[1]["authType"] == "admin"
        # Each function has a process of its own.
        assert len({e["pid"] for e in ordered}) == 1
    finally:
        server.stop()


def rest_anonymous(server, method, path, body=None):
    import json
    import urllib.error
    import urllib.request
    request = urllib.request.Request(f"{server.url}{path}", data=None if body is None else json.dumps(body).encode(),
                                     method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def test_a_function_that_raises_gives_up_on_that_event_and_takes_the_next(tmp_path):
    server = start(tmp_path)
    try:
        rest(server, "PUT", "/messages/m1.json", "fail")
        rest(server, "PUT", "/messages/m2.json", "hello")
        moderated = wait_until(lambda: rest(server, "GET", "/moderated.json")[1], 60, "the second message moderated",
                               wake=server.output)
        assert moderated == {"m2": {"text": "HELLO"}}
        server.output.wait_for("asked to fail", 10, "the function's traceback in Hearth's log")
    finally:
        server.stop()


def test_a_function_process_killed_mid_delivery_is_restarted_and_gets_its_events(tmp_path):
    server = start(tmp_path)
    try:
        rest(server, "PUT", "/posts/a.json", 1)
        first = wait_until(lambda: logged(server, "a"), 60, "the first event", wake=server.output)
        # The function's process dies (its master: the process Hearth started), workers and all.
        os.killpg(first[0]["server"], signal.SIGKILL)
        for n in range(10):
            assert rest(server, "PUT", f"/posts/a.json", n + 2)[0] == 200
        entries = wait_until(lambda: len(logged(server, "a")) >= 11 and logged(server, "a"), 90, "every event after the kill",
                             wake=server.output)
        afters = [e.get("after") for e in entries]
        # At least once, in commit order: a delivery cut by the kill may come twice.
        firsts = [a for i, a in enumerate(afters) if a not in afters[:i]]
        assert firsts == list(range(1, 12))
        assert len({e["server"] for e in entries}) == 2
        server.output.wait_for("a function's process ended; starting it again", 10, "the restart in Hearth's log")
        # Only a worker dies (gunicorn's, under functions-framework): its master starts another at
        # once (it hears SIGCHLD: Hearth starts functions with default signal handling).
        os.kill(entries[-1]["pid"], signal.SIGKILL)
        assert rest(server, "PUT", "/posts/a.json", 99)[0] == 200
        entries = wait_until(lambda: 99 in [e.get("after") for e in logged(server, "a")] and logged(server, "a"), 30,
                             "the event after the worker's death", wake=server.output)
        processes = {entries[-1]["server"], entries[-1]["pid"]}
    finally:
        server.stop()
    # Stopping the server stops its functions' processes, workers and all.
    for pid in processes:
        wait_until(lambda: not alive(pid), 15, f"process {pid} to end")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for every purpose but its exit status.
    with open(f"/proc/{pid}/stat") as handle:
        return handle.read().split(") ")[-1][0] != "Z"


def test_a_codebase_that_fails_to_load_stops_the_server_with_the_python_error(tmp_path):
    functions = tmp_path / "functions"
    functions.mkdir()
    (functions / "main.py").write_text("import no_such_module_here\n")
    finished = subprocess.run([harness.hearth_binary(), "serve", "--port", "0", "--data", str(tmp_path / "data"),
                               "--no-demo", "--functions", str(functions), "--functions-python", sys.executable],
                              capture_output=True, text=True, timeout=120)
    assert finished.returncode != 0
    assert "could not be loaded" in finished.stderr and "no_such_module_here" in finished.stderr, finished.stderr


def test_a_manifest_naming_a_trigger_hearth_does_not_know_is_refused(tmp_path):
    functions = tmp_path / "functions"
    functions.mkdir()
    (functions / "main.py").write_text(
        "from firebase_functions import pubsub_fn\n"
        "@pubsub_fn.on_message_published(topic='news')\n"
        "def news(event):\n    pass\n")
    finished = subprocess.run([harness.hearth_binary(), "serve", "--port", "0", "--data", str(tmp_path / "data"),
                               "--no-demo", "--functions", str(functions), "--functions-python", sys.executable],
                              capture_output=True, text=True, timeout=120)
    assert finished.returncode != 0
    assert "function news" in finished.stderr and "unknown event type google.cloud.pubsub" in finished.stderr, finished.stderr


def call(server, path: str, body: bytes, headers: dict | None = None, method: str = "POST"):
    import json
    import urllib.error
    import urllib.request
    request = urllib.request.Request(f"{server.url}{path}", data=body, method=method,
                                     headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read()
            return response.status, (json.loads(raw) if raw[:1] in (b"{", b"[") else raw.decode())
    except urllib.error.HTTPError as error:
        raw = error.read()
        return error.code, (json.loads(raw) if raw[:1] in (b"{", b"[") else raw.decode())


def test_callables_and_https_functions_answer_at_the_emulators_path_on_hearths_port(tmp_path):
    server = start(tmp_path)
    try:
        path = "/hearth/us-central1/addnumbers"
        assert call(server, path, b'{"data": {"a": 1, "b": 2.5}}') == (200, {"result": {"sum": 3.5, "uid": None}})
        # Signed in: the function sees who calls.
        status, account = rest(server, "POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k",
                               {"email": "cy@example.com", "password": "a-long-password", "returnSecureToken": True})
        assert status == 200
        status, answer = call(server, path, b'{"data": {"a": 2, "b": 3}}', {"Authorization": f"Bearer {account['idToken']}"})
        assert (status, answer) == (200, {"result": {"sum": 5, "uid": account["localId"]}})
        # A forged token is refused by Hearth before the function runs.
        forged = account["idToken"][:-4] + ("AAAA" if not account["idToken"].endswith("AAAA") else "BBBB")
        assert call(server, path, b'{"data": {"a": 1, "b": 1}}', {"Authorization": f"Bearer {forged}"}) == (
            401, {"error": {"message": "Unauthenticated", "status": "UNAUTHENTICATED"}})
        # The function's own refusal, in the callable protocol's shape.
        assert call(server, path, b'{"data": {"a": "x", "b": 1}}') == (
            400, {"error": {"message": "a and b must be numbers", "status": "INVALID_ARGUMENT", "details": {"got": ["x", 1]}}})
        # Not JSON, or not {"data": …}: the SDK's Bad Request, and the function never ran.
        assert call(server, path, b"{nope")[0] == 400
        assert call(server, path, b'{"a": 1}') == (400, {"error": {"message": "Bad Request", "status": "INVALID_ARGUMENT"}})
        # A plain HTTPS function gets its method, its sub-path and its query.
        assert call(server, "/hearth/us-central1/hello/deep/er?name=ann", None, method="GET") == (200, "hello GET /deep/er ann none")
        assert call(server, "/hearth/us-central1/hello", b"{}", method="PUT") == (200, "hello PUT /  none")
        # An HTTPS function gets a valid ID token; a forged one never reaches it (the Admin SDK
        # inside does not check signatures); its own non-JWT keys pass.
        assert call(server, "/hearth/us-central1/hello", None, {"Authorization": f"Bearer {account['idToken']}"},
                    method="GET") == (200, "hello GET /  bearer")
        assert call(server, "/hearth/us-central1/hello", None, {"Authorization": f"Bearer {forged}"},
                    method="GET") == (200, "hello GET /  none")
        assert call(server, "/hearth/us-central1/hello", None, {"Authorization": "Bearer my-own-api-key"},
                    method="GET") == (200, "hello GET /  bearer")
        # The port the functions reach the server on is theirs: no browser gets in.
        status, admin_host = call(server, "/hearth/us-central1/hello/admin-host", None, method="GET")
        assert status == 200 and admin_host.startswith("127.0.0.1:")
        port = admin_host.split(":")[1]
        import urllib.error
        import urllib.request
        def functions_port(headers=None, method="GET", host=None):
            request = urllib.request.Request(f"http://127.0.0.1:{port}/.json?shallow=true", method=method,
                                             headers={"Authorization": "Bearer owner", **(headers or {})})
            if host:
                request.add_header("Host", host)
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    return response.status
            except urllib.error.HTTPError as error:
                return error.code
        assert functions_port() == 200
        assert functions_port({"Origin": "https://evil.example"}) == 403
        assert functions_port({"Sec-Fetch-Mode": "cors"}) == 403
        assert functions_port(method="OPTIONS") == 403
        assert functions_port(host="evil.example:80") == 403
        # Another region or project, or an event function, is not a function path: the database answers.
        for other in ["/hearth/europe-west1/hello", "/other/us-central1/hello", "/hearth/us-central1/indexpost"]:
            status, _ = call(server, other, None, method="GET")
            assert status != 200 or "hello" not in str(_)
    finally:
        server.stop()


def test_a_scheduled_function_runs_at_the_minute_with_cloud_schedulers_headers(tmp_path):
    server = start(tmp_path)
    try:
        # "* * * * *": the next whole minute, at most a minute away.
        ticks = wait_until(lambda: rest(server, "GET", "/ticks.json")[1], 75, "a scheduled run", wake=server.output)
        tick = list(ticks.values())[0]
        assert tick["job"] == "firebase-schedule-tick-us-central1"
        assert tick["time"].endswith(":00+00:00"), tick
    finally:
        server.stop()


def storage(server, method: str, path: str, body: bytes | None = None, content_type: str | None = None):
    import json
    import urllib.error
    import urllib.request
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    if content_type:
        headers["Content-Type"] = content_type
    request = urllib.request.Request(f"{server.url}{path}", data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_storage_triggers_see_uploads_replacements_metadata_changes_and_deletions(tmp_path):
    server = start(tmp_path)
    try:
        def uploads(count):
            value = rest(server, "GET", "/uploads.json")[1] or {}
            return len(value) >= count and list(value.values())

        status, uploaded = storage(server, "POST", "/v0/b/hearth.appspot.com/o?name=photos%2Fa.txt", b"hello", "text/plain")
        assert status == 200, uploaded
        first = wait_until(lambda: uploads(1), 60, "the finalized event", wake=server.output)
        # (Cloud Storage's JSON writes 64-bit numbers as strings, and the SDK hands them on so.)
        assert first == [{"kind": "finalized", "name": "photos/a.txt", "size": "5", "type": "text/plain",
                          "bucket": "hearth.appspot.com", "generation": uploaded["generation"]}]
        # New content under the same name: the old generation deleted, the new one finalized.
        assert storage(server, "POST", "/v0/b/hearth.appspot.com/o?name=photos%2Fa.txt", b"hello again", "text/plain")[0] == 200
        events = wait_until(lambda: uploads(3), 60, "the replacement's two events", wake=server.output)
        # (Each function has its own queue: the two functions' runs may end in either order.)
        by_kind = {e["kind"]: e for e in events[1:]}
        assert sorted(by_kind) == ["deleted", "finalized"] and {e["name"] for e in events[1:]} == {"photos/a.txt"}
        assert by_kind["deleted"]["generation"] == first[0]["generation"]
        assert int(by_kind["finalized"]["generation"]) > int(first[0]["generation"])
        # Metadata only.
        status, _ = storage(server, "PATCH", "/v0/b/hearth.appspot.com/o/photos%2Fa.txt",
                            b'{"metadata": {"owner": "ann"}}', "application/json")
        assert status == 200
        events = wait_until(lambda: uploads(4), 60, "the metadata event", wake=server.output)
        assert (events[3]["kind"], events[3]["name"], events[3]["metadata"]["owner"]) == ("metadata", "photos/a.txt", "ann")
        # Firebase keeps download tokens in the object's metadata, where functions see them too.
        assert "firebaseStorageDownloadTokens" in events[3]["metadata"]
        # Deleted; and a file in another bucket fires nothing.
        assert storage(server, "POST", "/v0/b/other-bucket/o?name=b.txt", b"x", "text/plain")[0] == 200
        assert storage(server, "DELETE", "/v0/b/hearth.appspot.com/o/photos%2Fa.txt")[0] in (200, 204)
        events = wait_until(lambda: uploads(5), 60, "the deletion", wake=server.output)
        assert [(e["kind"], e["name"]) for e in events[4:]] == [("deleted", "photos/a.txt")]
    finally:
        server.stop()


def test_firebase_admin_storage_inside_a_function_reaches_the_servers_files_with_the_key_hearth_wrote(tmp_path):
    """Google's storage client asks for a credential even when sent to this server: Hearth writes
    a service-account key for its functions (a new one each start, the last one revoked)."""
    key_file = tmp_path / "data" / "auth" / "functions-service-account.json"
    for attempt in ("first", "second"):
        server = start(tmp_path)
        try:
            key = json.loads(key_file.read_text())
            assert oct(key_file.stat().st_mode & 0o777) == "0o600"
            assert key["type"] == "service_account" and key["client_email"].startswith("hearth-functions@")
            wait_until(lambda: call(server, "/hearth/us-central1/storagecheck", b'{"data": {}}')[0] != 503, 60,
                       "the storage function's process", wake=server.output)
            status, answer = call(server, "/hearth/us-central1/storagecheck",
                                  json.dumps({"data": {"name": f"{attempt}.txt", "text": f"hello {attempt}"}}).encode())
            assert status == 200, answer
            assert answer["result"] == {"read": f"hello {attempt}", "bucket": "hearth.appspot.com"}
            # The object is the server's, as any client sees it.
            status, listing = rest(server, "GET", "/storage/v1/b/hearth.appspot.com/o?prefix=from-functions/")
            assert status == 200 and f"from-functions/{attempt}.txt" in [item["name"] for item in listing["items"]]
            if attempt == "first":
                first_key = key["private_key_id"]
            else:
                # The first start's key was revoked when the second made its own.
                assert key["private_key_id"] != first_key
                listed = subprocess.run([harness.hearth_binary(), "admin", "service-account", "list", "--data", str(tmp_path / "data")],
                                        capture_output=True, text=True, timeout=60)
                assert listed.returncode == 0, listed.stderr
                line = next(row for row in listed.stdout.splitlines() if first_key in row)
                assert "revoked" in line, listed.stdout
        finally:
            server.stop()
