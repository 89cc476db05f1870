"""The cluster suite: three ``hearth serve --cluster`` nodes on one real PostgreSQL (Debian's,
started on loopback by Tests/Support/postgres_server.py) behind Debian's nginx running the
committed sample configuration (docs/deploy/nginx-cluster.conf).

Fixtures:

- ``cluster`` (session): PostgreSQL, nodes ``cluster.nodes[0..2]`` (emulator mode: REST as
  ``Bearer owner``; lease 4 s so a dead node is taken over quickly) and ``cluster.nginx``.
  A test that kills or stops a node starts it again before it ends.
- ``ns``: a fresh database name, so tests do not see each other's data.

Environment: HEARTH_BINARY (default: ``swift build --show-bin-path``/hearth), HEARTH_LOG_LEVEL.
"""

from __future__ import annotations

import pytest

from cluster_support import Cluster, skip_without_parts


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


@pytest.fixture(scope="session")
def cluster():
    skip_without_parts()
    running = Cluster(count=3)
    yield running
    running.close()


@pytest.fixture(autouse=True)
def report_cluster_output(request):
    yield
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed and "cluster" in request.fixturenames:
        running = request.getfixturevalue("cluster")
        print(running.output())
        if running.nginx:
            print("nginx error log:\n" + running.nginx.log())


@pytest.fixture
def ns():
    import uuid
    return f"cl-{uuid.uuid4().hex[:12]}"
