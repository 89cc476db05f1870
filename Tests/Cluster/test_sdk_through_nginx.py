"""The official Firebase JS SDK 9.8.1 (headless chromium) against the cluster: connected
through nginx (the committed sample), it sees writes made directly on another node, over
WebSocket and over long-polling with its upgrade; SDK transactions from instances connected
to different nodes end exactly right."""

from __future__ import annotations

import pytest

from cluster_support import skip_without_parts
from realtime_support import SDK, Page, PageServer, new_chromium, skip_without_sdk

skip_without_parts()
skip_without_sdk()


@pytest.fixture(scope="module")
def chromium():
    driver = new_chromium()
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def page_server():
    server = PageServer()
    yield server
    server.close()


class _Port:
    """What ``Page`` needs of a server: the port the SDK connects to."""

    def __init__(self, port: int):
        self.port = port


@pytest.fixture(params=["websocket", "long-polling"])
def page(request, chromium, page_server, cluster):
    test_page = Page(chromium, page_server.url, _Port(cluster.nginx.port), request.param).load()
    yield test_page
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        print(test_page.diagnostics())
    chromium.get("about:blank")


def test_the_sdk_through_nginx_sees_writes_made_on_another_node(page, cluster, ns):
    assert SDK is not None
    page.call("""async (ns) => {
      const a = T.open(ns);
      await T.connected(a.db);
      T.store.feed = T.watch(a.ref('feed'), ['value']);
      await T.until(() => T.store.feed.events.length >= 1, 'the first value');
      T.store.app = a;
    }""", ns)
    writer = cluster.nodes[2]
    writer.put("/feed/first", ns, {"text": "from node 3"})
    seen = page.call("""async () => {
      await T.until(() => T.store.feed.events.some((e) => e.val && e.val.first), 'the other node\\'s write');
      return T.store.feed.events[T.store.feed.events.length - 1].val;
    }""")
    assert seen == {"first": {"text": "from node 3"}}
    # And the other way: the SDK's write through nginx reaches every node.
    page.call("""async () => { await fb.set(T.store.app.ref('feed/second'), {text: 'from the browser'}); }""")
    for node in cluster.nodes:
        from cluster_support import wait_until
        wait_until(lambda node=node: node.value("/feed/second", ns) == {"text": "from the browser"},
                   f"the browser's write on {node.name}")
    if page.transport == "long-polling":
        transport = page.call("async () => T.transportOf(T.store.app.db)")
        assert transport["longPolled"] and transport["upgraded"], transport


def test_sdk_transactions_on_every_node_end_exactly_right(page, cluster, ns):
    ports = [node.port for node in cluster.nodes]
    outcome = page.call("""async (ns, ports, m) => {
      const apps = ports.map((port) => T.open(ns, { port }));
      await Promise.all(apps.map((a) => T.connected(a.db)));
      await Promise.all(apps.map(async (a) => {
        for (let i = 0; i < m; i++) {
          const result = await fb.runTransaction(a.ref('counter'), (value) => (value || 0) + 1);
          if (!result.committed) throw new Error('a transaction did not commit');
        }
      }));
      const totals = apps.map((a) => T.watch(a.ref('counter'), ['value']));
      await T.until(() => totals.every((w) => w.events.length && w.events[w.events.length - 1].val === apps.length * m),
                    'every instance seeing the total', 30000);
      return apps.length * m;
    }""", ns, ports, 10)
    assert outcome == 30
    for node in cluster.nodes:
        assert node.value("/counter", ns) == 30
