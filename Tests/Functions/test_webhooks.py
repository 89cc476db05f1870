"""Webhooks: Hearth POSTs each trigger's CloudEvent to an HTTP endpoint, signed by the Standard
Webhooks scheme, in commit order, at least once; failures are retried and then dead-lettered;
an endpoint that is down holds nothing up and gets everything when it is back."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import json
import threading
import time
import urllib.error
import urllib.request

import pytest

import harness
from functions_support import (WebhookReceiver, database_trigger, dead_letters, rest, secret, serve,
                               write_functions)


def merged(before, delta):
    """How Firebase's SDKs rebuild the value after: objects merge, null removes, else replace."""
    if isinstance(before, dict) and isinstance(delta, dict):
        result = dict(before)
        for key, value in delta.items():
            if value is None:
                result.pop(key, None)
            else:
                result[key] = merged(before.get(key), value)
        return result
    return delta


def hook(receiver: WebhookReceiver, trigger: dict, **options) -> dict:
    return {"url": receiver.url, "secretEnv": "HOOK_SECRETS", "eventTrigger": trigger, **options}


@pytest.fixture
def secrets():
    return [secret(1), secret(2)]


def test_each_change_arrives_signed_in_commit_order_with_firebases_event_shape(tmp_path, secrets):
    # Two secrets (a rotation): the receiver checks the signature with each on its own.
    receiver = WebhookReceiver(secrets)
    server = serve(tmp_path, {
        "onPost": hook(receiver, database_trigger("written", "posts/{postId}")),
        "onLikeCreated": hook(receiver, database_trigger("created", "/posts/{postId}/likes/{uid}/")),
    }, env={"HOOK_SECRETS": " ".join(secrets)})
    try:
        assert rest(server, "PUT", "/posts/p1.json", {"text": "hi", "tags": {"a": True, "b": True}})[0] == 200
        assert rest(server, "PATCH", "/posts/p1.json", {"text": "hello", "tags/b": None, "likes/u1": True})[0] == 200
        assert rest(server, "PUT", "/elsewhere.json", 1)[0] == 200
        assert rest(server, "DELETE", "/posts/p1.json")[0] == 200
        delivered = receiver.wait_for_count(4)
        events = [event for _, event in delivered]
        written = [e for e in events if e["type"].endswith(".written")]
        created = [e for e in events if e["type"].endswith(".created")]
        assert len(written) == 3 and len(created) == 1
        first, second, third = written
        for event in events:
            assert event["specversion"] == "1.0"
            assert event["source"] == "//firebasedatabase.googleapis.com/projects/_/locations/us-central1/instances/default"
            assert event["instance"] == "default" and event["location"] == "us-central1"
            assert event["firebasedatabasehost"] and event["datacontenttype"] == "application/json"
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", event["time"])
        assert [e["subject"] for e in written] == ["refs/posts/p1"] * 3
        assert [e["ref"] for e in written] == ["posts/p1"] * 3
        assert first["data"] == {"data": None, "delta": {"text": "hi", "tags": {"a": True, "b": True}}}
        assert second["data"]["data"] == {"text": "hi", "tags": {"a": True, "b": True}}
        assert merged(second["data"]["data"], second["data"]["delta"]) == {
            "text": "hello", "tags": {"a": True}, "likes": {"u1": True}}
        assert third["data"]["data"] == {"text": "hello", "tags": {"a": True}, "likes": {"u1": True}}
        assert third["data"]["delta"] is None
        assert created[0]["ref"] == "posts/p1/likes/u1" and created[0]["data"] == {"data": None, "delta": True}
        # Commit order: the like's event came with the PATCH, before the DELETE's.
        assert events.index(created[0]) < events.index(third)
        # Who wrote: the admin token.
        assert all(e["authtype"] == "admin" and "authid" not in e for e in events)
        # The webhook-id is the event's ID, the same at every try, and unique.
        ids = [webhook_id for webhook_id, _ in delivered]
        assert ids == [e["id"] for e in events] and len(set(ids)) == 4
    finally:
        server.stop()
        receiver.stop()


def test_the_event_names_who_wrote(tmp_path, secrets):
    receiver = WebhookReceiver(secrets[:1])
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"rules": {".read": True, ".write": True}}))
    server = serve(tmp_path, {"onNote": hook(receiver, database_trigger("written", "notes/{id}"))},
                   {"HOOK_SECRETS": secrets[0]}, None, "--rules", str(rules))
    try:
        status, account = rest(server, "POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k",
                               {"email": "ann@example.com", "password": "a-long-password", "returnSecureToken": True})
        assert status == 200, account
        request = urllib.request.Request(f"{server.url}/notes/a.json?auth={account['idToken']}", data=b'"by ann"', method="PUT")
        assert urllib.request.urlopen(request, timeout=10).status == 200
        request = urllib.request.Request(f"{server.url}/notes/b.json", data=b'"by nobody"', method="PUT")
        assert urllib.request.urlopen(request, timeout=10).status == 200
        events = [event for _, event in receiver.wait_for_count(2)]
        assert (events[0]["authtype"], events[0]["authid"]) == ("app_user", account["localId"])
        assert events[1]["authtype"] == "unauthenticated" and "authid" not in events[1]
    finally:
        server.stop()
        receiver.stop()


def test_a_failing_endpoint_is_retried_with_backoff_then_dead_lettered_and_the_queue_moves_on(tmp_path, secrets):
    receiver = WebhookReceiver(secrets[:1])
    server = serve(tmp_path, {"onItem": hook(
        receiver, database_trigger("written", "items/{id}"),
        retry={"maxAttempts": 3, "minBackoffSeconds": 0.05, "maxBackoffSeconds": 0.2})},
        env={"HOOK_SECRETS": secrets[0]})
    try:
        # The first event fails twice and then succeeds: delivered, late, but first.
        receiver.failures_left = 2
        rest(server, "PUT", "/items/a.json", 1)
        rest(server, "PUT", "/items/b.json", 2)
        delivered = receiver.wait_for_count(2)
        assert [e["ref"] for _, e in delivered] == ["items/a", "items/b"]
        assert receiver.attempts.count(delivered[0][0]) == 3
        # Now one that never succeeds: three tries, then the dead-letter list; the next goes on.
        receiver.failures_left = 3
        rest(server, "PUT", "/items/c.json", 3)
        rest(server, "PUT", "/items/d.json", 4)
        delivered = receiver.wait_for_count(3)
        assert delivered[2][1]["ref"] == "items/d"
        dead = dead_letters(server_data(tmp_path))
        assert len(dead) == 1
        assert dead[0]["function"] == "onItem" and dead[0]["attempts"] == 3 and dead[0]["reason"].startswith("HTTP 500")
        assert dead[0]["event"]["ref"] == "items/c" and receiver.attempts.count(dead[0]["id"]) == 3
        # The console's view: the function, its recent attempts, its dead letters.
        status, listing = rest(server, "GET", "/.hearth/functions")
        assert status == 200
        assert [(f["name"], f["kind"], f["trigger"], f["ref"]) for f in listing["functions"]] == [
            ("onItem", "event", "google.firebase.database.ref.v1.written", "items/{id}")]
        results = [(e["function"], e["result"]) for e in listing["recent"]]
        assert ("onItem", "dead-lettered") in results and results.count(("onItem", "failed")) == 4
        status, letters = rest(server, "GET", "/.hearth/functions/dead-letters?function=onItem")
        assert status == 200 and [(l["source"], l["id"], l["attempts"]) for l in letters["deadLetters"]] == [
            ("database/default", dead[0]["id"], 3)]
        # Replayed: delivered again, with the same ID, and the list is empty.
        letter = letters["deadLetters"][0]
        assert rest(server, "POST", "/.hearth/functions/dead-letters/replay",
                    {"source": letter["source"], "sequence": letter["sequence"]})[0] == 200
        delivered = receiver.wait_for_count(4)
        assert delivered[3][0] == dead[0]["id"] and delivered[3][1]["ref"] == "items/c"
        assert rest(server, "GET", "/.hearth/functions/dead-letters")[1] == {"deadLetters": []}
        assert rest(server, "POST", "/.hearth/functions/dead-letters/replay",
                    {"source": letter["source"], "sequence": letter["sequence"]})[0] == 404
        assert rest(server, "POST", "/.hearth/functions/dead-letters/discard", {"source": "nowhere"})[0] == 400
        # Only admins see any of it.
        request = urllib.request.Request(f"{server.url}/.hearth/functions")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 401
        # The figures (the backlog is counted down just after the last delivery's answer: read
        # again until it has been).
        def scrape() -> str:
            return urllib.request.urlopen(urllib.request.Request(
                f"{server.url}/metrics", headers={"Authorization": "Bearer functions-admin-token"}), timeout=10).read().decode()

        deadline = time.monotonic() + 10
        metrics = scrape()
        while 'hearth_function_backlog{function="onItem",source="database/default"} 0' not in metrics and time.monotonic() < deadline:
            time.sleep(0.05)
            metrics = scrape()
        assert 'hearth_function_deliveries_total{function="onItem",result="dead-lettered"} 1' in metrics
        assert 'hearth_function_backlog{function="onItem",source="database/default"} 0' in metrics, \
            [line for line in metrics.splitlines() if "hearth_function_backlog" in line]
    finally:
        server.stop()
        receiver.stop()


def server_data(tmp_path):
    return tmp_path / "data"


def test_an_endpoint_that_is_down_holds_up_no_write_and_gets_every_event_when_back(tmp_path, secrets):
    receiver = WebhookReceiver(secrets[:1])
    server = serve(tmp_path, {"onItem": hook(
        receiver, database_trigger("written", "items/{id}"),
        retry={"maxAttempts": 2, "minBackoffSeconds": 0.05, "maxBackoffSeconds": 0.2})},
        env={"HOOK_SECRETS": secrets[0]})
    try:
        receiver.stop()
        for n in range(30):
            # Acknowledged while nobody takes the events: a function never holds up a write.
            assert rest(server, "PUT", f"/items/i{n:02}.json", n, timeout=5)[0] == 200
        receiver.restart()
        delivered = receiver.wait_for_count(30)
        # In commit order, and none dead-lettered: unreachable tries use up no retries.
        assert [e["ref"] for _, e in delivered] == [f"items/i{n:02}" for n in range(30)]
        assert dead_letters(server_data(tmp_path)) == []
    finally:
        server.stop()
        receiver.stop()


def test_a_hanging_endpoint_is_timed_out_and_retried(tmp_path, secrets):
    receiver = WebhookReceiver(secrets[:1])
    server = serve(tmp_path, {"onItem": hook(
        receiver, database_trigger("written", "items/{id}"), timeoutSeconds=1,
        retry={"maxAttempts": 3, "minBackoffSeconds": 0.05, "maxBackoffSeconds": 0.1})},
        env={"HOOK_SECRETS": secrets[0]})
    try:
        receiver.hang_left = 1
        rest(server, "PUT", "/items/slow.json", 1)
        delivered = receiver.wait_for_count(1)
        assert delivered[0][1]["ref"] == "items/slow"
        assert receiver.attempts.count(delivered[0][0]) == 2
    finally:
        receiver.release_hang.set()
        server.stop()
        receiver.stop()


def test_kill_9_during_delivery_loses_no_acknowledged_writes_event(tmp_path, secrets):
    receiver = WebhookReceiver(secrets[:1])
    hooks = {"onItem": hook(receiver, database_trigger("written", "items/{id}"))}
    env = {"HOOK_SECRETS": secrets[0]}
    server = serve(tmp_path, hooks, env=env)
    acknowledged: list[int] = []
    stop = threading.Event()

    def writer():
        n = 0
        while not stop.is_set():
            try:
                status, _ = rest(server, "PUT", f"/items/n{n:05}.json", n, timeout=5)
            except OSError:
                return
            if status == 200:
                acknowledged.append(n)
            n += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        receiver.wait_for_count(20)
        # Writes and deliveries are both under way: the process dies without any shutdown code.
        server.process.send_signal(signal.SIGKILL)
        server.process.wait()
        stop.set()
        thread.join()
        assert len(acknowledged) >= 20
        server = serve(tmp_path, hooks, env=env)
        wanted = {f"items/n{n:05}" for n in acknowledged}
        receiver.wait_for(lambda r: wanted <= {e["ref"] for _, e in r.deliveries}, 60, "every acknowledged write's event")
        # In commit order: the first delivery of each event is in the order of the writes (a
        # redelivery after the crash may repeat events, with their IDs).
        firsts, seen = [], set()
        for webhook_id, event in receiver.deliveries:
            if webhook_id not in seen:
                seen.add(webhook_id)
                firsts.append(int(event["ref"].split("n")[-1]))
        assert firsts == sorted(firsts)
        by_ref = {}
        for webhook_id, event in receiver.deliveries:
            assert by_ref.setdefault(event["ref"], webhook_id) == webhook_id, "one ID per event, across the crash"
    finally:
        stop.set()
        server.stop()
        receiver.stop()


@pytest.mark.parametrize("webhooks, env, message", [
    ({"onX": {"url": "http://127.0.0.1:9/h", "secrets": [secret(1)],
              "eventTrigger": database_trigger("written", "posts/{a.b}")}}, {}, "is not a capture"),
    ({"onX": {"url": "http://127.0.0.1:9/h", "secrets": [secret(1)],
              "eventTrigger": {"eventType": "google.firebase.database.ref.v1.renamed",
                               "eventFilterPathPatterns": {"ref": "x"}}}}, {}, "unknown event type google.firebase.database.ref.v1.renamed"),
    ({"onX": {"url": "ftp://example.com/h", "secrets": [secret(1)],
              "eventTrigger": database_trigger("written", "x")}}, {}, "url must be an http or https URL"),
    ({"onX": {"url": "http://127.0.0.1:9/h", "secretEnv": "NOT_SET_ANYWHERE",
              "eventTrigger": database_trigger("written", "x")}}, {}, "NOT_SET_ANYWHERE"),
    ({"onX": {"url": "http://127.0.0.1:9/h", "secrets": ["whsec_c2hvcnQ="],
              "eventTrigger": database_trigger("written", "x")}}, {}, "at least 24 random bytes"),
    ({"on X": {"url": "http://127.0.0.1:9/h", "secrets": [secret(1)],
               "eventTrigger": database_trigger("written", "x")}}, {}, "a name is 1-63 letters"),
    ({"onX": {"url": "http://127.0.0.1:9/h", "secrets": [secret(1)], "scheduleTrigger": {"schedule": "every 5 minutes"}}},
     {}, "unknown key scheduleTrigger"),
    ({"onX": {"url": "http://127.0.0.1:9/h", "secrets": [secret(1)], "retry": {"maxAttempts": 0},
              "eventTrigger": database_trigger("written", "x")}}, {}, "retry.maxAttempts must be a number from 1"),
])
def test_a_bad_functions_folder_is_refused_with_the_reason_and_nothing_is_served(tmp_path, webhooks, env, message):
    functions = write_functions(tmp_path / "functions", webhooks)
    finished = subprocess.run(
        [harness.hearth_binary(), "serve", "--port", "0", "--data", str(tmp_path / "data"), "--no-demo",
         "--functions", str(functions)], capture_output=True, text=True, timeout=60, env={**os.environ, **env})
    assert finished.returncode != 0
    assert message in finished.stderr, finished.stderr
    assert "Hearth is serving" not in finished.stdout
    # Nothing was made: not even the data folder's databases.
    assert not (tmp_path / "data" / "databases").exists()


def test_a_functions_folder_that_is_not_json_or_empty_is_refused(tmp_path):
    folder = tmp_path / "functions"
    folder.mkdir()
    finished = subprocess.run([harness.hearth_binary(), "serve", "--port", "0", "--data", str(tmp_path / "data"),
                               "--no-demo", "--functions", str(folder)], capture_output=True, text=True, timeout=60)
    assert finished.returncode != 0 and "holds no functions" in finished.stderr
    (folder / "webhooks.json").write_text("{not json")
    finished = subprocess.run([harness.hearth_binary(), "serve", "--port", "0", "--data", str(tmp_path / "data"),
                               "--no-demo", "--functions", str(folder)], capture_output=True, text=True, timeout=60)
    assert finished.returncode != 0 and "webhooks.json is not a JSON object" in finished.stderr
