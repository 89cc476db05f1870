"""Server-Sent Events (Firebase's REST streaming): the events a stream gets for writes at, below and above it, and for queries."""
import json
import queue
import threading

import pytest
import requests

NS = {"ns": "streaming"}


class Stream:
    """Reads one SSE stream on a thread and hands parsed events over a queue."""

    def __init__(self, base, path, **params):
        self.events = queue.Queue()
        self.response = requests.get(
            f"{base}{path}", params={**NS, **params}, headers={"Accept": "text/event-stream"}, stream=True, timeout=30,
        )
        assert self.response.status_code == 200, self.response.text
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        name = None
        try:
            for line in self.response.iter_lines(decode_unicode=True):
                if line.startswith("event: "):
                    name = line[len("event: "):]
                elif line.startswith("data: ") and name != "keep-alive":
                    self.events.put((name, json.loads(line[len("data: "):])))
        except Exception:  # noqa: BLE001 - the stream was closed by the test
            pass

    def next(self):
        return self.events.get(timeout=5)

    def close(self):
        self.response.close()


@pytest.fixture
def base(server):
    # These checks are about events, not rules: the namespace is open to everyone.
    requests.put(
        f"{server}/.settings/rules.json", params=NS, headers={"Authorization": "Bearer owner"},
        data='{"rules":{".read":true,".write":true,"scores":{".indexOn":".value"},"posts":{".indexOn":["stars"]}}}',
    ).raise_for_status()
    requests.put(f"{server}/.json", params=NS, data="null").raise_for_status()
    return server


def put(base, path, value):
    requests.put(f"{base}{path}.json", params=NS, data=json.dumps(value)).raise_for_status()


def test_writes_at_below_and_above(base):
    put(base, "/room/a", 1)
    stream = Stream(base, "/room.json")
    try:
        assert stream.next() == ("put", {"path": "/", "data": {"a": 1}})
        put(base, "/room/b/c", True)
        assert stream.next() == ("put", {"path": "/b/c", "data": True})
        requests.patch(f"{base}/room.json", params=NS, data='{"a":null,"d/e":"x"}').raise_for_status()
        assert stream.next() == ("patch", {"path": "/", "data": {"a": None, "d/e": "x"}})
        requests.patch(f"{base}/.json", params=NS, data='{"room/f":1,"elsewhere":2}').raise_for_status()
        assert stream.next() == ("patch", {"path": "/", "data": {"f": 1}})
        put(base, "/", {"room": {"z": 0}, "other": 1})
        assert stream.next() == ("put", {"path": "/", "data": {"z": 0}})
        put(base, "/other", 2)  # does not touch /room
        requests.delete(f"{base}/room.json", params=NS).raise_for_status()
        assert stream.next() == ("put", {"path": "/", "data": None})
    finally:
        stream.close()


def test_post_event_has_push_id_path(base):
    stream = Stream(base, "/chat.json")
    try:
        assert stream.next() == ("put", {"path": "/", "data": None})
        name = requests.post(f"{base}/chat/messages.json", params=NS, data='"hi"').json()["name"]
        assert stream.next() == ("put", {"path": f"/messages/{name}", "data": "hi"})
    finally:
        stream.close()


def test_query_stream_moves_its_window(base):
    put(base, "/scores", {"a": 1, "b": 5, "c": 3})
    stream = Stream(base, "/scores.json", orderBy='"$value"', limitToLast="2")
    try:
        assert stream.next() == ("put", {"path": "/", "data": {"b": 5, "c": 3}})
        put(base, "/scores/d", 10)  # d enters the top two, c leaves
        assert stream.next() == ("put", {"path": "/", "data": {"b": 5, "d": 10}})
        put(base, "/scores/a", 2)  # below the window: no event
        put(base, "/scores/b", 0)  # b leaves, c comes back
        assert stream.next() == ("put", {"path": "/", "data": {"c": 3, "d": 10}})
    finally:
        stream.close()


def test_stream_query_needs_index(base):
    response = requests.get(
        f"{base}/posts.json", params={**NS, "orderBy": '"title"', "limitToFirst": "1"},
        headers={"Accept": "text/event-stream"},
    )
    assert response.status_code == 400
    assert response.json()["error"] == 'Index not defined, add ".indexOn": "title", for path "/posts", to the rules'


def test_many_streams_see_the_same_events(base):
    streams = [Stream(base, "/fan.json") for _ in range(20)]
    try:
        for stream in streams:
            assert stream.next() == ("put", {"path": "/", "data": None})
        put(base, "/fan/x", {"n": 1})
        for stream in streams:
            assert stream.next() == ("put", {"path": "/x", "data": {"n": 1}})
    finally:
        # Closing blocks until the reader wakes (at the next keep-alive), so close in parallel.
        closers = [threading.Thread(target=stream.close) for stream in streams]
        for closer in closers:
            closer.start()
        for closer in closers:
            closer.join()
