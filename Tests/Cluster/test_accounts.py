"""Accounts in a cluster: kept in the shared PostgreSQL with one token signing key, so an account
made on one node signs in on another, a token one node signs is accepted by the others' rules,
a refresh works anywhere, and two nodes cannot both take one email. The admin token the first
node made is the cluster's (``hearth cluster admin-token``)."""

from __future__ import annotations

import subprocess
import threading
import uuid

import requests

from cluster_support import hearth_binary, skip_without_parts, wait_until

skip_without_parts()


def accounts(node, method: str, body: dict) -> requests.Response:
    return requests.post(f"{node.url}/identitytoolkit.googleapis.com/v1/accounts:{method}", params={"key": "x"},
                         json=body, timeout=30)


def test_an_account_made_on_one_node_works_on_every_node(cluster, ns):
    first, second, third = cluster.nodes
    email = f"ada-{uuid.uuid4().hex[:8]}@example.com"
    made = accounts(first, "signUp", {"email": email, "password": "correct horse", "returnSecureToken": True})
    assert made.status_code == 200, made.text
    uid = made.json()["localId"]
    signed_in = accounts(second, "signInWithPassword", {"email": email, "password": "correct horse", "returnSecureToken": True})
    assert signed_in.status_code == 200, signed_in.text
    assert signed_in.json()["localId"] == uid
    wrong = accounts(third, "signInWithPassword", {"email": email, "password": "wrong", "returnSecureToken": True})
    assert wrong.status_code == 400 and wrong.json()["error"]["message"] == "INVALID_LOGIN_CREDENTIALS"

    first.deploy_rules(ns, {"rules": {"users": {"$uid": {".read": "auth.uid === $uid", ".write": "auth.uid === $uid"}}}})
    # A token signed by node 1, judged by node 3's rules.
    token = made.json()["idToken"]
    wait_until(lambda: requests.put(f"{third.url}/users/{uid}.json", params={"ns": ns, "auth": token},
                                    json={"name": "Ada"}, timeout=10).status_code == 200,
               "node 3 accepting node 1's token under the new rules")
    other = requests.put(f"{third.url}/users/someone-else.json", params={"ns": ns, "auth": token}, json=1, timeout=10)
    assert other.status_code == 401
    # A refresh token from node 2 works on node 1.
    refreshed = requests.post(f"{first.url}/securetoken.googleapis.com/v1/token", params={"key": "x"},
                              data={"grant_type": "refresh_token", "refresh_token": signed_in.json()["refreshToken"]},
                              timeout=30)
    assert refreshed.status_code == 200, refreshed.text
    assert refreshed.json()["user_id"] == uid
    assert requests.get(f"{second.url}/users/{uid}.json", params={"ns": ns, "auth": refreshed.json()["id_token"]},
                        timeout=10).json() == {"name": "Ada"}


def test_two_nodes_cannot_both_take_one_email(cluster):
    email = f"twice-{uuid.uuid4().hex[:8]}@example.com"
    results: list[requests.Response] = []
    start = threading.Barrier(len(cluster.nodes))

    def sign_up(node):
        start.wait()
        results.append(accounts(node, "signUp", {"email": email, "password": "pw-123456", "returnSecureToken": True}))

    threads = [threading.Thread(target=sign_up, args=(node,)) for node in cluster.nodes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    statuses = sorted(response.status_code for response in results)
    assert statuses == [200, 400, 400], [response.text for response in results]
    for response in results:
        if response.status_code == 400:
            assert response.json()["error"]["message"] == "EMAIL_EXISTS"


def test_the_cluster_shares_one_admin_token(cluster, ns):
    shown = subprocess.run([hearth_binary(), "cluster", "admin-token", "--cluster", cluster.postgres.url],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    token = shown.stdout.strip()
    assert len(token) >= 40
    # Reading the rules is for admins only.
    for node in cluster.nodes:
        response = requests.get(f"{node.url}/.settings/rules.json", params={"ns": ns},
                                headers={"Authorization": f"Bearer {token}"}, timeout=10)
        assert response.status_code == 200, response.text
        assert "rules" in response.json()
    for headers in ({}, {"Authorization": "Bearer not-the-token"}):
        refused = requests.get(f"{cluster.nodes[0].url}/.settings/rules.json", params={"ns": ns}, headers=headers,
                               timeout=10)
        assert refused.status_code == 401, refused.text
