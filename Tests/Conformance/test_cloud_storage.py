"""Cloud Storage's JSON API as server code uses it: google-cloud-storage's `Client` and
`firebase_admin.storage` pointed at Hearth with STORAGE_EMULATOR_HOST (as Firebase's functions
emulator points them), against the session's `hearth serve --emulator`, and against a server
outside emulator mode for who may use it and its limits."""
import base64
import hashlib
import os
import shutil
import tempfile
import uuid

import google.auth.exceptions
import google_crc32c
import pytest
import requests
from google.api_core import exceptions as api_exceptions
from google.oauth2.credentials import Credentials as TokenCredentials

from conformance_support import NAMESPACE
from harness import HearthProcess

BUCKET = f"{NAMESPACE}.appspot.com"
ADMIN_TOKEN = "cloud-storage-admin-token"


@pytest.fixture(scope="module")
def emulator_host(server):
    previous = os.environ.get("STORAGE_EMULATOR_HOST")
    os.environ["STORAGE_EMULATOR_HOST"] = server
    yield server
    if previous is None:
        os.environ.pop("STORAGE_EMULATOR_HOST", None)
    else:
        os.environ["STORAGE_EMULATOR_HOST"] = previous


@pytest.fixture(scope="module")
def client(emulator_host):
    """google-cloud-storage with no credentials: anonymous requests, as in Firebase's emulator."""
    from google.cloud import storage

    return storage.Client(project=NAMESPACE)


@pytest.fixture(scope="module")
def bucket(client):
    return client.bucket(BUCKET)


@pytest.fixture
def prefix():
    """A folder of its own for each test."""
    return f"cloud/{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def admin_bucket(emulator_host):
    """`firebase_admin.storage.bucket()`: the app's credential (here the emulator's `owner`) on
    every request."""
    import firebase_admin
    from firebase_admin import _utils, credentials, storage

    class EmulatorCredential(credentials.Base):
        def get_credential(self):
            return _utils.EmulatorAdminCredentials()

    app = firebase_admin.initialize_app(
        EmulatorCredential(), options={"projectId": NAMESPACE, "storageBucket": BUCKET}, name="cloud-storage")
    yield storage.bucket(app=app)
    firebase_admin.delete_app(app)


def crc32c(data: bytes) -> str:
    return base64.b64encode(google_crc32c.Checksum(data).digest()).decode()


def md5(data: bytes) -> str:
    return base64.b64encode(hashlib.md5(data).digest()).decode()


# Buckets ----------------------------------------------------------------------------------------

def test_get_and_list_buckets(client):
    got = client.get_bucket(BUCKET)
    assert got.name == BUCKET
    assert BUCKET in [b.name for b in client.list_buckets()]


# Uploads and downloads --------------------------------------------------------------------------

def test_multipart_upload_and_metadata(bucket, prefix):
    blob = bucket.blob(f"{prefix}/hello.txt")
    blob.metadata = {"owner": "alice"}
    blob.cache_control = "private, max-age=60"
    blob.upload_from_string(b"hello world", content_type="text/plain")
    assert blob.size == 11
    assert blob.content_type == "text/plain"
    assert blob.md5_hash == md5(b"hello world")
    assert blob.crc32c == crc32c(b"hello world")
    assert blob.generation and blob.metageneration == 1
    assert blob.metadata["owner"] == "alice"
    assert blob.cache_control == "private, max-age=60"
    assert blob.time_created is not None and blob.updated is not None

    again = bucket.get_blob(f"{prefix}/hello.txt")
    assert again.generation == blob.generation
    assert again.md5_hash == blob.md5_hash and again.crc32c == blob.crc32c
    assert again.download_as_bytes() == b"hello world"
    assert again.media_link.startswith(os.environ["STORAGE_EMULATOR_HOST"])


def test_download_ranges(bucket, prefix):
    data = bytes(range(256)) * 40
    blob = bucket.blob(f"{prefix}/bytes.bin")
    blob.upload_from_string(data)
    fresh = bucket.blob(f"{prefix}/bytes.bin")
    assert fresh.download_as_bytes() == data
    assert fresh.download_as_bytes(start=10, end=19) == data[10:20]
    assert fresh.download_as_bytes(start=10_000) == data[10_000:]
    # Both download paths google-cloud-storage knows: /download/storage/v1 and alt=media.
    url = f"{os.environ['STORAGE_EMULATOR_HOST']}/storage/v1/b/{BUCKET}/o/{requests.utils.quote(blob.name, safe='')}"
    response = requests.get(url, params={"alt": "media"}, headers={"Range": "bytes=0-3"})
    assert response.status_code == 206
    assert response.content == data[:4]
    assert response.headers["Content-Range"] == f"bytes 0-3/{len(data)}"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    whole = requests.get(url, params={"alt": "media"})
    assert f"crc32c={crc32c(data)}" in whole.headers["x-goog-hash"]
    assert f"md5={md5(data)}" in whole.headers["x-goog-hash"]
    assert whole.headers["x-goog-generation"] == str(blob.generation)


def test_bad_range_is_416(bucket, prefix):
    blob = bucket.blob(f"{prefix}/short.txt")
    blob.upload_from_string(b"short")
    url = f"{os.environ['STORAGE_EMULATOR_HOST']}/download/storage/v1/b/{BUCKET}/o/{requests.utils.quote(blob.name, safe='')}"
    response = requests.get(url, params={"alt": "media"}, headers={"Range": "bytes=100-200"})
    assert response.status_code == 416
    assert response.headers["Content-Range"] == "bytes */5"
    assert response.json()["error"]["errors"][0]["reason"] == "requestedRangeNotSatisfiable"
    with pytest.raises(api_exceptions.RequestRangeNotSatisfiable):
        blob.download_as_bytes(start=100)


def test_resumable_upload_in_chunks(bucket, prefix):
    data = os.urandom(3 * 256 * 1024 + 12_345)
    blob = bucket.blob(f"{prefix}/big.bin", chunk_size=256 * 1024)
    blob.upload_from_string(data, content_type="application/x-test")
    assert blob.size == len(data)
    assert blob.crc32c == crc32c(data)
    assert bucket.blob(f"{prefix}/big.bin").download_as_bytes() == data
    assert bucket.get_blob(f"{prefix}/big.bin").content_type == "application/x-test"


def test_resumable_upload_from_file_of_unknown_size(bucket, prefix, tmp_path):
    data = os.urandom(2 * 256 * 1024)
    path = tmp_path / "exact.bin"
    path.write_bytes(data)
    blob = bucket.blob(f"{prefix}/exact.bin", chunk_size=256 * 1024)
    with open(path, "rb") as handle:
        # No size: the client learns the total only at the end of the stream.
        blob.upload_from_file(handle, size=None)
    assert bucket.blob(f"{prefix}/exact.bin").download_as_bytes() == data


def test_resumable_session_status_and_resume(bucket, prefix):
    """The protocol by hand: a chunk, `bytes */*` to ask, the rest, and a repeated chunk."""
    blob = bucket.blob(f"{prefix}/by-hand.bin")
    url = blob.create_resumable_upload_session(content_type="application/octet-stream", size=300_000)
    data = os.urandom(300_000)
    chunk = 256 * 1024
    first = requests.put(url, data=data[:chunk], headers={"Content-Range": f"bytes 0-{chunk - 1}/300000"})
    assert first.status_code == 308
    assert first.headers["Range"] == f"bytes=0-{chunk - 1}"
    status = requests.put(url, data=b"", headers={"Content-Range": "bytes */*"})
    assert status.status_code == 308
    assert status.headers["Range"] == f"bytes=0-{chunk - 1}"
    # A chunk sent again from an earlier offset is taken from where the upload is.
    last = requests.put(url, data=data[100:], headers={"Content-Range": f"bytes 100-299999/300000"})
    assert last.status_code == 200, last.text
    assert last.json()["size"] == "300000"
    assert blob.download_as_bytes() == data
    # Once finished, the session answers with the object.
    done = requests.put(url, data=b"", headers={"Content-Range": "bytes */300000"})
    assert done.status_code == 200
    assert done.json()["name"] == blob.name


def test_resumable_checksum_mismatch_is_refused(bucket, prefix):
    blob = bucket.blob(f"{prefix}/corrupt.bin")
    url = blob.create_resumable_upload_session(size=5)
    response = requests.put(
        url, data=b"abcde", headers={"Content-Range": "bytes 0-4/5", "x-goog-hash": f"crc32c={crc32c(b'other')}"})
    assert response.status_code == 400
    assert not blob.exists()


def test_multipart_checksum_mismatch_is_refused(bucket, prefix):
    blob = bucket.blob(f"{prefix}/corrupt-multipart.bin")
    blob.md5_hash = md5(b"something else")
    with pytest.raises(api_exceptions.BadRequest):
        blob.upload_from_string(b"content", checksum=None)
    assert not bucket.blob(f"{prefix}/corrupt-multipart.bin").exists()


def test_upload_from_filename_and_download_to_filename(bucket, prefix, tmp_path):
    source = tmp_path / "photo.jpg"
    source.write_bytes(b"\xff\xd8\xff" + os.urandom(1000))
    blob = bucket.blob(f"{prefix}/photo.jpg")
    blob.upload_from_filename(str(source))
    assert blob.content_type == "image/jpeg"
    target = tmp_path / "back.jpg"
    bucket.blob(f"{prefix}/photo.jpg").download_to_filename(str(target))
    assert target.read_bytes() == source.read_bytes()


# Listing ----------------------------------------------------------------------------------------

def test_list_with_prefix_delimiter_and_pages(client, bucket, prefix):
    names = [f"{prefix}/a.txt", f"{prefix}/b.txt", f"{prefix}/c.txt", f"{prefix}/d/one.txt", f"{prefix}/d/two.txt",
             f"{prefix}/e/three.txt"]
    for name in names:
        bucket.blob(name).upload_from_string(name.encode())
    everything = [blob.name for blob in client.list_blobs(BUCKET, prefix=f"{prefix}/")]
    assert everything == sorted(names)

    iterator = client.list_blobs(BUCKET, prefix=f"{prefix}/", delimiter="/")
    top = [blob.name for blob in iterator]
    assert top == [f"{prefix}/a.txt", f"{prefix}/b.txt", f"{prefix}/c.txt"]
    assert iterator.prefixes == {f"{prefix}/d/", f"{prefix}/e/"}

    pages = client.list_blobs(BUCKET, prefix=f"{prefix}/", page_size=2).pages
    seen = [[blob.name for blob in page] for page in pages]
    assert [len(page) for page in seen] == [2, 2, 2]
    assert [name for page in seen for name in page] == sorted(names)

    limited = [blob.name for blob in client.list_blobs(BUCKET, prefix=f"{prefix}/", max_results=4, page_size=3)]
    assert limited == sorted(names)[:4]

    ranged = [blob.name for blob in client.list_blobs(
        BUCKET, prefix=f"{prefix}/", start_offset=f"{prefix}/b", end_offset=f"{prefix}/d/two")]
    assert ranged == [f"{prefix}/b.txt", f"{prefix}/c.txt", f"{prefix}/d/one.txt"]


# Metadata ---------------------------------------------------------------------------------------

def test_patch_reload_and_update(bucket, prefix):
    blob = bucket.blob(f"{prefix}/meta.txt")
    blob.upload_from_string(b"meta", content_type="text/plain")
    blob.metadata = {"a": "1", "b": "2"}
    blob.content_language = "en"
    blob.patch()
    assert blob.metageneration == 2
    assert blob.metadata["a"] == "1" and blob.metadata["b"] == "2"

    other = bucket.blob(f"{prefix}/meta.txt")
    other.reload()
    assert other.metadata["b"] == "2"
    assert other.content_language == "en"

    # Patching a key to None deletes it; the rest stay.
    blob.metadata = {"a": None}
    blob.patch()
    assert "a" not in blob.metadata and blob.metadata["b"] == "2"

    # update() (PUT) makes the metadata exactly what it sends.
    blob.reload()
    blob.metadata = {"c": "3"}
    blob.content_language = None
    blob.update()
    assert blob.metadata == {"c": "3"}
    assert blob.content_language is None


def test_bad_metadata_changes_nothing(bucket, prefix):
    blob = bucket.blob(f"{prefix}/strict.txt")
    blob.upload_from_string(b"x", content_type="text/plain")
    url = f"{os.environ['STORAGE_EMULATOR_HOST']}/storage/v1/b/{BUCKET}/o/{requests.utils.quote(blob.name, safe='')}"
    for body in ['{"contentType": 5}', '{"metadata": {"k": 1}}', '{"contentType": "not a type"}', "[1, 2]"]:
        response = requests.patch(url, data=body, headers={"Content-Type": "application/json"})
        assert response.status_code == 400, body
        assert response.json()["error"]["code"] == 400
    blob.reload()
    assert blob.metageneration == 1
    assert blob.content_type == "text/plain"


# Copies -----------------------------------------------------------------------------------------

def test_copy_rewrite_and_compose(bucket, prefix):
    source = bucket.blob(f"{prefix}/source.txt")
    source.metadata = {"kept": "yes"}
    source.upload_from_string(b"copy me", content_type="text/plain")

    copied = bucket.copy_blob(source, bucket, f"{prefix}/copied.txt")
    assert copied.download_as_bytes() == b"copy me"
    assert copied.content_type == "text/plain"
    assert copied.metadata["kept"] == "yes"
    assert copied.generation != source.generation

    rewritten = bucket.blob(f"{prefix}/rewritten.txt")
    token, done_bytes, total = rewritten.rewrite(source)
    assert token is None and done_bytes == total == 7
    assert rewritten.download_as_bytes() == b"copy me"

    second = bucket.blob(f"{prefix}/second.txt")
    second.upload_from_string(b" and me")
    composed = bucket.blob(f"{prefix}/composed.txt")
    composed.content_type = "text/plain"
    composed.compose([source, second])
    assert composed.download_as_bytes() == b"copy me and me"
    assert composed.size == 14


def test_copy_of_a_missing_object_is_404(bucket, prefix):
    with pytest.raises(api_exceptions.NotFound):
        bucket.copy_blob(bucket.blob(f"{prefix}/nothing"), bucket, f"{prefix}/copy")


# Deletes ----------------------------------------------------------------------------------------

def test_delete_and_missing(bucket, prefix):
    blob = bucket.blob(f"{prefix}/gone.txt")
    blob.upload_from_string(b"bye")
    blob.delete()
    assert not blob.exists()
    with pytest.raises(api_exceptions.NotFound) as refused:
        blob.delete()
    assert f"No such object: {BUCKET}/{prefix}/gone.txt" in str(refused.value)
    with pytest.raises(api_exceptions.NotFound):
        bucket.blob(f"{prefix}/never").download_as_bytes()


def test_delete_blobs(bucket, prefix):
    blobs = [bucket.blob(f"{prefix}/many/{index}") for index in range(3)]
    for blob in blobs:
        blob.upload_from_string(b"x")
    missing = []
    bucket.delete_blobs(blobs + [bucket.blob(f"{prefix}/many/none")], on_error=missing.append)
    assert [blob.name for blob in missing] == [f"{prefix}/many/none"]
    assert list(bucket.list_blobs(prefix=f"{prefix}/many/")) == []


# Preconditions ----------------------------------------------------------------------------------

def test_generation_preconditions(bucket, prefix):
    blob = bucket.blob(f"{prefix}/cond.txt")
    blob.upload_from_string(b"one", if_generation_match=0)
    with pytest.raises(api_exceptions.PreconditionFailed):
        bucket.blob(f"{prefix}/cond.txt").upload_from_string(b"two", if_generation_match=0)
    first = blob.generation
    blob.upload_from_string(b"two", if_generation_match=first)
    assert blob.generation != first
    with pytest.raises(api_exceptions.PreconditionFailed):
        blob.delete(if_generation_match=first)
    with pytest.raises(api_exceptions.PreconditionFailed):
        blob.patch(if_metageneration_match=7)
    blob.metadata = {"x": "y"}
    blob.patch(if_metageneration_match=1)
    blob.delete(if_generation_match=blob.generation)
    assert not blob.exists()


# Both APIs over one store -----------------------------------------------------------------------

def test_visible_through_the_firebase_storage_api(server, bucket, prefix):
    blob = bucket.blob(f"{prefix}/shared.txt")
    blob.upload_from_string(b"from the JSON API", content_type="text/plain")
    encoded = requests.utils.quote(blob.name, safe="")
    meta = requests.get(f"{server}/v0/b/{BUCKET}/o/{encoded}", headers={"Authorization": "Bearer owner"})
    assert meta.status_code == 200
    assert meta.json()["generation"] == str(blob.generation)
    media = requests.get(f"{server}/v0/b/{BUCKET}/o/{encoded}", params={"alt": "media"}, headers={"Authorization": "Bearer owner"})
    assert media.content == b"from the JSON API"

    other = f"{prefix}/from-firebase.txt"
    upload = requests.post(
        f"{server}/v0/b/{BUCKET}/o", params={"name": other, "uploadType": "media"}, data=b"from Firebase",
        headers={"Authorization": "Bearer owner", "Content-Type": "text/plain"})
    assert upload.status_code == 200
    seen = bucket.get_blob(other)
    assert seen.download_as_bytes() == b"from Firebase"
    assert seen.md5_hash == upload.json()["md5Hash"]
    # Its download token is where Firebase keeps it, and a token set here works there.
    assert seen.metadata["firebaseStorageDownloadTokens"] == upload.json()["downloadTokens"]
    token = str(uuid.uuid4())
    seen.metadata = {"firebaseStorageDownloadTokens": token}
    seen.patch()
    shared = requests.get(f"{server}/v0/b/{BUCKET}/o/{requests.utils.quote(other, safe='')}", params={"alt": "media", "token": token})
    assert shared.content == b"from Firebase"


def test_firebase_admin_storage_bucket(admin_bucket, prefix):
    assert admin_bucket.name == BUCKET
    blob = admin_bucket.blob(f"{prefix}/admin.txt")
    blob.upload_from_string(b"admin sdk")
    assert admin_bucket.blob(f"{prefix}/admin.txt").download_as_bytes() == b"admin sdk"
    # What Firebase's functions do when a user is deleted: remove everything under their folder.
    for index in range(3):
        admin_bucket.blob(f"{prefix}/user/{index}.txt").upload_from_string(b"x")
    blobs = list(admin_bucket.list_blobs(prefix=f"{prefix}/user/"))
    assert len(blobs) == 3
    admin_bucket.delete_blobs(blobs)
    assert list(admin_bucket.list_blobs(prefix=f"{prefix}/user/")) == []


# Outside emulator mode --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def locked_server():
    """`hearth serve` without --emulator, with an admin token and a 1 MB file limit."""
    data = tempfile.mkdtemp(prefix="hearth-cloud-storage-")
    hearth = HearthProcess(
        ["serve", "--no-demo", "--port", "0", "--data", data, "--log-level", "warning", "--project", NAMESPACE,
         "--admin-token", ADMIN_TOKEN, "--max-file-size", "1M"], timeout=60).start()
    yield hearth.url
    try:
        hearth.stop()
    finally:
        shutil.rmtree(data, ignore_errors=True)


def locked_client(url, token):
    from google.cloud import storage
    from google.auth.credentials import AnonymousCredentials

    credentials = AnonymousCredentials() if token is None else TokenCredentials(token=token)
    return storage.Client(project=NAMESPACE, credentials=credentials, client_options={"api_endpoint": url})


def test_admin_credential_required_outside_emulator_mode(locked_server):
    admin = locked_client(locked_server, ADMIN_TOKEN).bucket(BUCKET)
    admin.blob("private/secret.txt").upload_from_string(b"secret")
    assert admin.blob("private/secret.txt").download_as_bytes() == b"secret"

    for token in (None, "not-the-token"):
        # google-auth answers a 401 by refreshing its credential, which these cannot do.
        stranger = locked_client(locked_server, token).bucket(BUCKET)
        with pytest.raises((api_exceptions.Unauthorized, google.auth.exceptions.GoogleAuthError)):
            stranger.blob("private/secret.txt").download_as_bytes()
        with pytest.raises((api_exceptions.Unauthorized, google.auth.exceptions.GoogleAuthError)):
            stranger.blob("private/secret.txt").upload_from_string(b"overwritten")
        with pytest.raises((api_exceptions.Unauthorized, google.auth.exceptions.GoogleAuthError)):
            list(stranger.list_blobs())
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        base = f"{locked_server}/storage/v1/b/{BUCKET}/o"
        for method, url, params in [
            ("GET", f"{base}/private%2Fsecret.txt", {}), ("GET", f"{base}/private%2Fsecret.txt", {"alt": "media"}),
            ("GET", base, {}), ("DELETE", f"{base}/private%2Fsecret.txt", {}),
            ("POST", f"{locked_server}/upload/storage/v1/b/{BUCKET}/o", {"uploadType": "media", "name": "private/secret.txt"}),
        ]:
            response = requests.request(method, url, params=params, headers=headers, data=b"overwritten")
            assert response.status_code == 401, (method, url, response.text)
            assert response.json()["error"]["errors"][0]["reason"] == ("required" if token is None else "authError")

    # Authorization comes before existence: a missing object and an existing one answer alike.
    for name in ("private/secret.txt", "private/missing.txt"):
        response = requests.get(f"{locked_server}/storage/v1/b/{BUCKET}/o/{requests.utils.quote(name, safe='')}")
        assert response.status_code == 401
        error = response.json()["error"]
        assert error["code"] == 401
        assert error["errors"][0]["reason"] == "required"
        assert error["errors"][0]["domain"] == "global"
    assert admin.blob("private/secret.txt").download_as_bytes() == b"secret"


def test_too_large_upload_is_refused(locked_server):
    admin = locked_client(locked_server, ADMIN_TOKEN).bucket(BUCKET)
    with pytest.raises(api_exceptions.GoogleAPICallError) as refused:
        admin.blob("big/too-large.bin").upload_from_string(os.urandom(1024 * 1024 + 1))
    assert refused.value.code == 413
    chunked = admin.blob("big/too-large-chunked.bin", chunk_size=256 * 1024)
    with pytest.raises(api_exceptions.GoogleAPICallError) as refused:
        chunked.upload_from_string(os.urandom(1024 * 1024 + 1))
    assert refused.value.code == 413
    assert not admin.blob("big/too-large.bin").exists()
    assert not admin.blob("big/too-large-chunked.bin").exists()
