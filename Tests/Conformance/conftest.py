"""Starts a real `hearth serve --emulator` for the conformance suites and points firebase-admin at it."""
import json
import os
import shutil
import subprocess
import tempfile

import pytest
import requests

from conformance_support import NAMESPACE
from harness import HearthProcess, hearth_binary

HERE = os.path.dirname(__file__)


@pytest.fixture(scope="session")
def cluster_args():
    """With HEARTH_CONFORMANCE_CLUSTER=1 the suite runs against a node of a cluster: a throwaway
    real PostgreSQL (Tests/Support/postgres_server.py) and `hearth serve --cluster` on it, with
    a second node beside it writing nothing (so the node under test follows a real cluster)."""
    if os.environ.get("HEARTH_CONFORMANCE_CLUSTER") != "1":
        yield []
        return
    from postgres_server import PostgresServer  # Tests/Support

    postgres = PostgresServer()
    data = tempfile.mkdtemp(prefix="hearth-conformance-peer-")
    peer = subprocess.Popen(
        [hearth_binary(), "serve", "--emulator", "--port", "0", "--data", data, "--log-level", "warning",
         "--project", NAMESPACE, "--cluster", postgres.url, "--node-id", "peer"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    yield ["--cluster", postgres.url, "--node-id", "conformance"]
    peer.terminate()
    peer.wait(timeout=30)
    postgres.close()
    shutil.rmtree(data, ignore_errors=True)


@pytest.fixture(scope="session")
def server(cluster_args):
    """The server's base URL; the process runs for the whole session."""
    data = tempfile.mkdtemp(prefix="hearth-conformance-")
    hearth = HearthProcess(
        # Short keep-alives, so closed SSE clients notice promptly and the keep-alive test is quick.
        ["serve", "--emulator", "--port", "0", "--data", data, "--log-level", "warning",
         "--keep-alive-seconds", "1", "--project", NAMESPACE, *cluster_args],
        timeout=60).start()
    yield hearth.url
    try:
        hearth.stop(timeout=30)
    finally:
        shutil.rmtree(data, ignore_errors=True)


@pytest.fixture(scope="session")
def app(server):
    """A firebase-admin app in emulator mode (so every request carries `Bearer owner`)."""
    import firebase_admin

    host = server.replace("http://", "")
    os.environ["FIREBASE_DATABASE_EMULATOR_HOST"] = host
    options = {"databaseURL": f"https://{NAMESPACE}.firebaseio.com", "projectId": NAMESPACE}
    # No credential: in emulator mode the SDK sends `Bearer owner` and never loads one.
    app = firebase_admin.initialize_app(options=options, name="conformance")
    yield app
    firebase_admin.delete_app(app)


@pytest.fixture(scope="session")
def rules(server):
    """Loads the suite's rules through the admin endpoint, as the Admin SDK's tests do."""
    with open(os.path.join(HERE, "fixtures", "dinosaurs_rules.json")) as handle:
        text = handle.read()
    response = requests.put(
        f"{server}/.settings/rules.json", params={"ns": NAMESPACE}, data=text,
        headers={"Authorization": "Bearer owner"},
    )
    assert response.status_code == 200, response.text
    assert response.json() == {"status": "ok"}
    return text


@pytest.fixture(scope="session")
def dinos():
    with open(os.path.join(HERE, "fixtures", "dinosaurs.json")) as handle:
        return json.load(handle)


@pytest.fixture(scope="module")
def auth_app(server, request):
    """A firebase-admin app whose `auth` module talks to Hearth in emulator mode (so it sends
    `Bearer owner` and accepts unsigned tokens), one per test module."""
    import firebase_admin

    previous = os.environ.get("FIREBASE_AUTH_EMULATOR_HOST")
    os.environ["FIREBASE_AUTH_EMULATOR_HOST"] = server.replace("http://", "")
    app = firebase_admin.initialize_app(options={"projectId": NAMESPACE}, name=f"auth-{request.module.__name__}")
    yield app
    firebase_admin.delete_app(app)
    if previous is None:
        os.environ.pop("FIREBASE_AUTH_EMULATOR_HOST", None)
    else:
        os.environ["FIREBASE_AUTH_EMULATOR_HOST"] = previous
