"""Files in a cluster: content in the folder every node mounts, metadata in PostgreSQL, so a
file uploaded through one node is listed and downloaded through every other, and a deletion
through one is seen by all."""

from __future__ import annotations

import os
import urllib.parse
import uuid

import requests

from cluster_support import skip_without_parts

skip_without_parts()

BUCKET = "hearth.appspot.com"
ADMIN = {"Authorization": "Bearer owner"}


def test_a_file_uploaded_through_one_node_is_served_by_every_node(cluster):
    name = f"cluster/{uuid.uuid4().hex}.bin"
    quoted = urllib.parse.quote(name, safe="")
    content = os.urandom(300_000)
    uploaded = requests.post(f"{cluster.nodes[0].url}/v0/b/{BUCKET}/o", params={"uploadType": "media", "name": name},
                             data=content, headers={**ADMIN, "Content-Type": "application/octet-stream"}, timeout=30)
    assert uploaded.status_code == 200, uploaded.text
    assert uploaded.json()["size"] == str(len(content))
    for node in cluster.nodes:
        downloaded = requests.get(f"{node.url}/v0/b/{BUCKET}/o/{quoted}", params={"alt": "media"}, headers=ADMIN, timeout=30)
        assert downloaded.status_code == 200, f"{node.name}: {downloaded.status_code}"
        assert downloaded.content == content
        listed = requests.get(f"{node.url}/v0/b/{BUCKET}/o", params={"prefix": "cluster/"}, headers=ADMIN, timeout=30)
        assert name in [item["name"] for item in listed.json().get("items", [])]
    deleted = requests.delete(f"{cluster.nodes[2].url}/v0/b/{BUCKET}/o/{quoted}", headers=ADMIN, timeout=30)
    assert deleted.status_code in (200, 204), deleted.text
    for node in cluster.nodes:
        gone = requests.get(f"{node.url}/v0/b/{BUCKET}/o/{quoted}", params={"alt": "media"}, headers=ADMIN, timeout=30)
        assert gone.status_code == 404, f"{node.name}: {gone.status_code}"
