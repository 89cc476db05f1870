"""Hosting releases (`hearth hosting deploy | ls | rollback`, docs/hosting.md), with the real
command line and real `hearth serve --data D` processes (no --hosting), which serve the live
release of D/files/hosting and switch on the next request after a deploy or a rollback:

- deploy, a second deploy, `ls` marking the live release, rollback (default and --to), and a
  rollback with nothing earlier refused;
- requests during a run of deploys only ever get whole files of a deployed version;
- a deploy killed mid-copy (SIGKILL once its .incoming-* folder fills) changes nothing, and the
  next deploy clears what it left;
- bad input (firebase.json naming the key, missing or outside public folders, unknown or
  malformed release IDs) is refused with a clear message and changes nothing;
- `ignore` (the default one and the owner's) and symbolic links inside and outside the public
  folder;
- --keep;
- two nodes of a real cluster (PostgreSQL, --cluster, one shared --files-dir) switching together;
- the admin API: /.hearth/hosting, /.hearth/hosting/files, /.hearth/hosting/rollback.

No fixed sleeps: the servers are asked directly after each command ends (the switch is promised
for the next request), and the interrupted deploy waits for its .incoming-* folder to fill.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

import pytest

import harness
from harness import HearthDidNotStart, HearthProcess
from operations_support import Served, hearth, launch, stop, wait_until

VERSION = re.compile(rb"<!-- VERSION (\d+) ")
LS_LINE = re.compile(r"^([* ]) (\S+)  (\S+)  (\d+) files  .*$")


# MARK: - Sites

def content(path: str, version: int) -> bytes:
    """The bytes of ``path`` in ``version`` of a test site: its version at the start and the end,
    and a body whose size depends on the path, so a truncated or mixed file never matches."""
    head = f"<!-- VERSION {version} {path} -->\n"
    size = 200 + (sum(path.encode()) * 37) % 3000
    if path == "app.js":
        size = 150_000  # large enough to be sent in several pieces
    line = f"{path} of version {version};\n"
    body = (line * (size // len(line) + 1))[:size]
    return (head + body + f"\n<!-- END {version} {path} -->\n").encode()


def write_site(folder: Path, version: int, paths: list[str], firebase: dict | None = None) -> Path:
    """Writes (or rewrites) a site whose every file carries ``version``: firebase.json and
    public/<path> for each path."""
    public = folder / "public"
    if public.exists():
        shutil.rmtree(public)
    public.mkdir(parents=True)
    (folder / "firebase.json").write_text(json.dumps(firebase or {"hosting": {"public": "public"}}))
    for path in paths:
        target = public / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content(path, version))
    return folder


SMALL_SITE = ["index.html", "app.js", "css/site.css"]


def served_version(body: bytes) -> int | None:
    match = VERSION.match(body)
    return int(match.group(1)) if match else None


# MARK: - Commands and requests

def releases_folder(files: Path) -> Path:
    return files / "hosting"


def pointer(files: Path) -> str | None:
    """The live release's ID, as the `current` pointer says."""
    path = releases_folder(files) / "current"
    return path.read_text().strip() if path.exists() else None


def kept(files: Path) -> list[str]:
    folder = releases_folder(files) / "releases"
    return sorted(os.listdir(folder)) if folder.exists() else []


def leftovers(files: Path) -> list[str]:
    folder = releases_folder(files)
    names = os.listdir(folder) if folder.exists() else []
    return sorted(name for name in names if name.startswith((".incoming-", ".removing-", ".current-")))


def deploy(site: Path, *args: str) -> str:
    """`hearth hosting deploy`; the new release's ID (from its output)."""
    finished = hearth("hosting", "deploy", str(site), *args)
    match = re.search(r"Deployed release (\S+): (\d+) files", finished.stdout)
    assert match, f"no release ID in the output: {finished.stdout!r}"
    return match.group(1)


def ls(*location: str) -> tuple[str, list[tuple[bool, str, str]]]:
    """`hearth hosting ls`: its output, and (live, ID, rest of the line) per release listed."""
    finished = hearth("hosting", "ls", *location)
    rows = []
    for line in finished.stdout.splitlines():
        if line.startswith("No release is deployed in "):
            assert finished.stdout.count("\n") == 1, finished.stdout
            continue
        match = LS_LINE.match(line)
        assert match, f"an ls line not as documented: {line!r} in\n{finished.stdout}"
        rows.append((match.group(1) == "*", match.group(2), line))
    return finished.stdout, rows


def refused(*args: str) -> str:
    """Runs a `hearth` command that must fail; its error output."""
    finished = hearth(*args, check=False)
    assert finished.returncode != 0, f"hearth {' '.join(args)} succeeded: {finished.stdout}"
    return finished.stderr + finished.stdout


def fetch(url: str, path: str, headers: dict | None = None, method: str = "GET", body: bytes | None = None,
          connection: http.client.HTTPConnection | None = None):
    """One request: ``(status, headers, body)``."""
    own = connection is None
    if own:
        parsed = urllib.parse.urlsplit(url)
        connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=20)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        if own:
            connection.close()


def page(served: Served, path: str = "/") -> tuple[int, bytes]:
    status, _, body = fetch(served.url, path)
    return status, body


def assert_serves(served: Served, version: int, paths: list[str] = SMALL_SITE):
    """The server answers every path of the site (and /) with exactly that version's bytes."""
    for path in ["/", *("/" + p for p in paths)]:
        status, body = page(served, path)
        name = "index.html" if path == "/" else path[1:]
        assert status == 200, f"{served.url}{path}: {status} {body[:200]!r}"
        assert served_version(body) == version, f"{served.url}{path} serves {body[:80]!r}, not version {version}"
        assert body == content(name, version), f"{served.url}{path}: not the whole file of version {version}"


def snapshot(files: Path, served: Served | None, *location: str) -> dict:
    """What a refused command must leave as it was: the pointer, the releases kept, `ls`, what
    is served, and no leftovers."""
    state = {"pointer": pointer(files), "kept": kept(files), "ls": ls(*location)[0], "leftovers": leftovers(files)}
    if served is not None:
        state["served"] = [page(served, path) for path in ("/", "/app.js")]
    return state


@pytest.fixture
def folder():
    path = Path(tempfile.mkdtemp(prefix="hearth-hosting-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def launch_with_own_token(data: Path) -> Served:
    """`hearth serve --data data` with no --admin-token: it makes one in <data>/admin-token."""
    lines: list[str] = []
    process = HearthProcess(["serve", "--port", "0", "--data", str(data), "--no-demo"], timeout=60, into=lines)
    try:
        process.start()
    except HearthDidNotStart as error:
        pytest.fail(str(error))
    return Served(url=process.url, data=data, process=process.process, lines=lines, log=process.output)


@pytest.fixture
def server(folder):
    """A server on ``folder/data`` (no --hosting, no demo data), and its files folder."""
    data = folder / "data"
    served = launch(data)
    yield served, data / "files"
    stop(served)


# MARK: - 1. Deploy, list, roll back

def test_deploys_are_served_on_the_next_request_listed_and_rolled_back(folder, server):
    served, files = server
    data = ["--data", str(served.data)]

    # Nothing deployed: the demo app answers, and a rollback has nothing to go back to.
    status, headers, body = fetch(served.url, "/")
    assert status == 200 and b"<title>Hearth</title>" in body and served_version(body) is None
    assert "content-security-policy" in headers, "the demo app has Hearth's own policy"
    assert "No release is deployed" in ls(*data)[0]
    assert "Nothing is deployed" in refused("hosting", "rollback", *data)
    assert pointer(files) is None and kept(files) == []

    site = write_site(folder / "site", 1, SMALL_SITE)
    first = deploy(site, *data, "-m", "first version")
    assert pointer(files) == first
    status, headers, body = fetch(served.url, "/")
    assert status == 200 and body == content("index.html", 1)
    assert "content-security-policy" not in headers, "the owner's app carries no Hearth security headers"
    assert_serves(served, 1)

    write_site(site, 2, SMALL_SITE)
    second = deploy(site, *data, "-m", "second version")
    assert second != first
    assert_serves(served, 2)  # the very next request, no waiting

    text, rows = ls(*data)
    assert [(live, release) for live, release, _ in rows] == [(True, second), (False, first)], text
    assert "second version" in rows[0][2] and "first version" in rows[1][2]
    assert f" {len(SMALL_SITE)} files" in rows[0][2]

    # Rollback, by default to the release before the live one.
    back = hearth("hosting", "rollback", *data)
    assert f"Release {first} is live." in back.stdout
    assert pointer(files) == first
    assert_serves(served, 1)
    assert [(live, release) for live, release, _ in ls(*data)[1]] == [(False, second), (True, first)]

    # Nothing before the oldest: refused, with a message saying so, and nothing changes.
    before = snapshot(files, served, *data)
    message = refused("hosting", "rollback", *data)
    assert "no earlier release" in message and first in message, message
    assert snapshot(files, served, *data) == before
    assert_serves(served, 1)

    # --to names the release.
    forward = hearth("hosting", "rollback", "--to", second, *data)
    assert f"Release {second} is live." in forward.stdout
    assert_serves(served, 2)
    assert [(live, release) for live, release, _ in ls(*data)[1]] == [(True, second), (False, first)]
    # Both releases are still whole on disk: nothing was copied or removed by the rollbacks.
    assert kept(files) == sorted([first, second]) and leftovers(files) == []


# MARK: - 2. A request never sees half a release

STRESS_PATHS = ["index.html", "app.js", *(f"pages/p{i:02d}.html" for i in range(30)), "deep/a/b/c/data.txt"]
DEPLOYS = 15


def run_deploys_under_requests(folder: Path, served: Served, keep: int):
    """Deploys versions 1..DEPLOYS one after the other while four threads fetch paths every
    version has; returns what they saw: [(started, ended, path, status, body or error)],
    and the deploys' (version, started, ended) times."""
    data = ["--data", str(served.data), "--keep", str(keep)]
    site = folder / "stress"
    write_site(site, 0, STRESS_PATHS)
    deploy(site, *data)  # version 0, live before the requests begin
    deploys: list[tuple[int, float, float]] = []
    seen: list[tuple[float, float, str, int, bytes | str]] = []
    lock = threading.Lock()
    done = threading.Event()
    failures: list[str] = []

    def fetcher(index: int):
        parsed = urllib.parse.urlsplit(served.url)
        connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=20)
        paths = ["/", *("/" + p for p in STRESS_PATHS)]
        turn = index
        mine = []
        after = 0  # requests begun after the last deploy returned: they must all get it
        while after < 10 or len(mine) < 50:
            if done.is_set():
                after += 1
            path = paths[turn % len(paths)]
            turn += 7
            started = time.monotonic()
            try:
                status, _, body = fetch(served.url, path, connection=connection)
            except (OSError, http.client.HTTPException) as error:
                status, body = -1, f"{type(error).__name__}: {error}"
                connection.close()
                connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=20)
            mine.append((started, time.monotonic(), path, status, body))
        connection.close()
        with lock:
            seen.extend(mine)

    threads = [threading.Thread(target=fetcher, args=(index,), daemon=True) for index in range(4)]
    for thread in threads:
        thread.start()
    try:
        for version in range(1, DEPLOYS + 1):
            write_site(site, version, STRESS_PATHS)
            started = time.monotonic()
            deploy(site, *data)
            deploys.append((version, started, time.monotonic()))
    except BaseException as error:  # noqa: BLE001 - reported with the fetchers stopped
        failures.append(repr(error))
    finally:
        done.set()
        for thread in threads:
            thread.join(timeout=60)
    assert not failures, failures
    return seen, deploys


def check_whole_versions(seen, deploys):
    deployed = {0} | {version for version, _, _ in deploys}
    versions_seen = set()
    problems = []
    for started, ended, path, status, body in seen:
        name = "index.html" if path == "/" else path[1:]
        if status != 200 or not isinstance(body, bytes):
            problems.append(f"{path}: {status} {body[:120]!r}")
            continue
        version = served_version(body)
        if version is None or body != content(name, version):
            problems.append(f"{path}: not a whole file of any version ({len(body)} bytes, starts {body[:60]!r})")
            continue
        versions_seen.add(version)
        if version not in deployed:
            problems.append(f"{path}: version {version} was never deployed")
        # Served on the next request: a request begun after deploy k returned is of k or later,
        # and none ending before deploy k began shows k.
        for deployed_version, deploy_started, deploy_ended in deploys:
            if started > deploy_ended and version < deployed_version:
                problems.append(f"{path}: version {version} served after deploy {deployed_version} had finished")
                break
            if ended < deploy_started and version >= deployed_version:
                problems.append(f"{path}: version {version} served before deploy {deployed_version} began")
                break
    assert not problems, f"{len(problems)} of {len(seen)} answers were wrong, e.g.:\n" + "\n".join(problems[:15])
    assert versions_seen <= deployed
    # The check means something only if requests really ran across the deploys.
    assert len(versions_seen) >= 4, f"the requests saw only versions {sorted(versions_seen)}"
    assert DEPLOYS in versions_seen
    return versions_seen


def test_requests_during_deploys_only_get_whole_files_of_deployed_versions(folder, server):
    served, files = server
    seen, deploys = run_deploys_under_requests(folder, served, keep=10)
    versions_seen = check_whole_versions(seen, deploys)
    harness.record("hosting releases", f"{len(seen)} requests across {DEPLOYS} deploys saw {len(versions_seen)} versions, all whole")
    assert len(kept(files)) == 10 and leftovers(files) == []


def test_requests_during_deploys_that_prune_the_last_release_only_get_whole_files(folder, server):
    """With --keep 1 each deploy removes the release that was live a moment before, while
    requests that began on it may still be reading it."""
    served, files = server
    seen, deploys = run_deploys_under_requests(folder, served, keep=1)
    check_whole_versions(seen, deploys)
    assert len(kept(files)) == 1


# MARK: - 3. An interrupted deploy changes nothing

def test_a_deploy_killed_mid_copy_changes_nothing_and_the_next_deploy_clears_it(folder, server):
    served, files = server
    data = ["--data", str(served.data)]
    live = deploy(write_site(folder / "site", 1, SMALL_SITE), *data)
    before = snapshot(files, served, *data)

    # A big site: 2,500 files, each copied and synced on its own.
    big = folder / "big"
    write_site(big, 2, SMALL_SITE)
    for index in range(2500):
        path = big / "public" / "many" / f"d{index % 50:02d}" / f"f{index:04d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * 300)

    process = subprocess.Popen([harness.hearth_binary(), "hosting", "deploy", str(big), *data],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    hosting = releases_folder(files)

    def copying():
        # The deploy's .incoming-* folder, once it holds some of the many files.
        for name in os.listdir(hosting):
            if name.startswith(".incoming-"):
                many = hosting / name / "app" / "public" / "many"
                if many.exists() and sum(len(os.listdir(many / d)) for d in os.listdir(many)) >= 100:
                    return name
        assert process.poll() is None, f"the deploy ended before it was seen copying:\n{process.stdout.read()}"
        return None

    try:
        incoming = wait_until(copying, 30, "the deploy to be copying into .incoming-*", interval=0.002)
        process.send_signal(signal.SIGKILL)
        assert process.wait(timeout=10) == -signal.SIGKILL
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert (hosting / incoming).exists(), "the killed deploy left its .incoming folder (it was mid-copy)"

    # Unchanged: the pointer, the releases kept, `ls`, and what the server answers.
    after = snapshot(files, served, *data)
    assert after.pop("leftovers") == [incoming]
    before.pop("leftovers")
    assert after == before
    assert pointer(files) == live
    assert_serves(served, 1)
    status, _ = page(served, "/many/d00/f0000.txt")
    assert status == 404, "no file of the interrupted deploy is served"

    # The next deploy succeeds and clears the leftover.
    third = deploy(write_site(folder / "site", 3, SMALL_SITE), *data)
    assert leftovers(files) == []
    assert kept(files) == sorted([live, third])
    assert_serves(served, 3)


# MARK: - 4. Bad input changes nothing

@pytest.mark.parametrize("case", ["rewrite-without-destination", "cloud-run-rewrite", "not-json", "no-firebase-json",
                                  "missing-public", "public-above", "public-absolute", "public-links-outside"])
def test_a_bad_deploy_is_refused_with_a_clear_message_and_changes_nothing(folder, server, case):
    served, files = server
    data = ["--data", str(served.data)]
    live = deploy(write_site(folder / "good", 1, SMALL_SITE), *data)
    before = snapshot(files, served, *data)

    site = write_site(folder / "bad", 2, SMALL_SITE)
    outside = folder / "x"
    outside.mkdir()
    (outside / "index.html").write_bytes(content("index.html", 2))
    config = site / "firebase.json"
    expected: list[str]
    if case == "rewrite-without-destination":
        config.write_text(json.dumps({"hosting": {"public": "public", "rewrites": [{"source": "/x"}]}}))
        expected = ["hosting.rewrites[0]"]
    elif case == "cloud-run-rewrite":
        config.write_text(json.dumps({"hosting": {"public": "public",
                                                  "rewrites": [{"source": "/a", "destination": "/index.html"},
                                                               {"source": "**", "run": {"serviceId": "api"}}]}}))
        expected = ["hosting.rewrites[1].run"]
    elif case == "not-json":
        config.write_text('{"hosting": {"public": "public"')
        expected = ["firebase.json", "JSON"]
    elif case == "no-firebase-json":
        config.unlink()
        expected = ["firebase.json"]
    elif case == "missing-public":
        config.write_text(json.dumps({"hosting": {"public": "dist"}}))
        expected = ["dist", "not a folder"]
    elif case == "public-above":
        config.write_text(json.dumps({"hosting": {"public": "../x"}}))
        expected = ["hosting.public", "inside"]
    elif case == "public-absolute":
        config.write_text(json.dumps({"hosting": {"public": str(outside)}}))
        expected = ["hosting.public", "inside"]
    else:  # public is a symbolic link to a folder outside the app folder
        shutil.rmtree(site / "public")
        (site / "public").symlink_to(outside, target_is_directory=True)
        expected = ["hosting.public", "inside"]

    message = refused("hosting", "deploy", str(site), *data)
    for words in expected:
        assert words in message, f"{case}: {words!r} not in the error: {message}"
    assert "Error" in message
    assert snapshot(files, served, *data) == before, case
    assert pointer(files) == live
    assert_serves(served, 1)


def test_a_rollback_to_an_unknown_or_malformed_release_is_refused_and_changes_nothing(folder, server):
    served, files = server
    data = ["--data", str(served.data)]
    site = write_site(folder / "site", 1, SMALL_SITE)
    first = deploy(site, *data)
    second = deploy(write_site(site, 2, SMALL_SITE), *data)
    # A decoy that `releases/../x` would name, if a malformed ID were taken as a path.
    decoy = releases_folder(files) / "x"
    shutil.copytree(releases_folder(files) / "releases" / first, decoy)
    (decoy / "app" / "public" / "index.html").write_bytes(content("index.html", 99))
    before = snapshot(files, served, *data)

    for wrong in ["20000101-000000-abcdef", "../x", "..", "x/../" + first, "/" + first, first + "/", ""]:
        message = refused("hosting", "rollback", "--to", wrong, *data)
        if wrong:
            assert "There is no release" in message and wrong in message, f"{wrong!r}: {message}"
        assert snapshot(files, served, *data) == before, wrong
    assert pointer(files) == second
    assert_serves(served, 2)


# MARK: - 5. What is deployed: ignore, symbolic links

def test_default_ignore_leaves_out_firebase_json_dotfiles_and_node_modules(folder, server):
    served, files = server
    site = write_site(folder / "site", 1, ["index.html", "app.js", "sub/page.html", "firebase.json", ".env",
                                           ".well-known/assetlinks.json", "sub/.hidden", "node_modules/lib/index.js",
                                           "sub/node_modules/x.js"])
    release = deploy(site, "--data", str(served.data))
    public = releases_folder(files) / "releases" / release / "app" / "public"
    copied = sorted(str(p.relative_to(public)) for p in public.rglob("*") if p.is_file())
    assert copied == ["app.js", "index.html", "sub/page.html"]
    assert "3 files" in ls("--data", str(served.data))[0]
    for path in ["/index.html", "/app.js", "/sub/page.html"]:
        assert page(served, path) == (200, content(path[1:], 1))
    for path in ["/.env", "/sub/.hidden", "/node_modules/lib/index.js", "/sub/node_modules/x.js"]:
        status, body = page(served, path)
        assert status == 404, f"{path} is ignored, yet answered {status} {body[:80]!r}"
    # A ….json path the site has no file for is the database's (docs/hosting.md): not the file.
    for path in ["/firebase.json", "/.well-known/assetlinks.json"]:
        status, body = page(served, path)
        assert status != 200 and b"VERSION" not in body, f"{path} is ignored, yet answered {status} {body[:80]!r}"


def test_the_owners_ignore_patterns_are_honoured(folder, server):
    served, files = server
    site = write_site(folder / "site", 1, ["index.html", "app.js", "app.js.map", "drafts/next.html", "sub/old.bak",
                                           "sub/keep.html"],
                      firebase={"hosting": {"public": "public", "ignore": ["firebase.json", "**/.*", "**/node_modules/**",
                                                                          "**/*.map", "drafts/**", "*.bak", "sub/*.bak"]}})
    release = deploy(site, "--data", str(served.data))
    public = releases_folder(files) / "releases" / release / "app" / "public"
    copied = sorted(str(p.relative_to(public)) for p in public.rglob("*") if p.is_file())
    assert copied == ["app.js", "index.html", "sub/keep.html"]
    assert page(served, "/sub/keep.html") == (200, content("sub/keep.html", 1))
    for path in ["/app.js.map", "/drafts/next.html", "/sub/old.bak"]:
        assert page(served, path)[0] == 404, path


def test_each_site_sharing_a_public_folder_keeps_its_own_ignore(folder, server):
    """Two sites on one public folder, one ignoring source maps: the other still has them, as
    `--hosting` serves the same folder (and as Firebase deploys each site on its own)."""
    served, files = server
    site = write_site(folder / "site", 1, ["index.html", "app.js", "app.js.map"],
                      firebase={"hosting": [{"site": "alpha", "public": "public", "ignore": ["**/*.map"]},
                                            {"site": "beta", "public": "public", "ignore": []}]})
    as_folder = launch(folder / "folder-data", "--hosting", str(site))
    try:
        for url in (as_folder.url, served.url):
            if url == served.url:
                deploy(site, "--data", str(served.data))
            status, _, body = fetch(url, "/app.js.map", headers={"Host": "alpha.localhost"})
            assert status == 404, f"{url}: alpha ignores *.map"
            status, _, body = fetch(url, "/app.js.map", headers={"Host": "beta.localhost"})
            mode = "--hosting" if url == as_folder.url else "the deployed release"
            assert (status, body) == (200, content("app.js.map", 1)), f"{mode}: beta ignores nothing, yet /app.js.map is {status}"
            status, _, body = fetch(url, "/app.js", headers={"Host": "beta.localhost"})
            assert (status, body) == (200, content("app.js", 1))
    finally:
        stop(as_folder)


def test_a_link_to_a_file_inside_is_deployed_as_a_file_and_a_link_outside_is_not(folder, server):
    served, files = server
    site = write_site(folder / "site", 1, ["index.html", "real.txt", "sub/deep.txt"])
    public = site / "public"
    (site / "secret.txt").write_text("SECRET beside firebase.json\n")
    elsewhere = folder / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "private.txt").write_text("SECRET elsewhere\n")
    (public / "alias.txt").symlink_to("real.txt")
    (public / "sub" / "up.txt").symlink_to("../real.txt")
    (public / "absolute.txt").symlink_to(public / "sub" / "deep.txt")
    (public / "outside.txt").symlink_to("../secret.txt")
    (public / "far.txt").symlink_to(elsewhere / "private.txt")
    (public / "farfolder").symlink_to(elsewhere, target_is_directory=True)
    (public / "dangling.txt").symlink_to("missing.txt")

    release = deploy(site, "--data", str(served.data))
    deployed = releases_folder(files) / "releases" / release / "app" / "public"
    for name, source in [("alias.txt", "real.txt"), ("sub/up.txt", "real.txt"), ("absolute.txt", "sub/deep.txt")]:
        path = deployed / name
        assert path.is_file() and not path.is_symlink(), f"{name} is deployed as a file of its own"
        assert path.read_bytes() == content(source, 1)
        assert page(served, "/" + name) == (200, content(source, 1))
    for name in ["outside.txt", "far.txt", "farfolder", "farfolder/private.txt", "dangling.txt"]:
        assert not os.path.lexists(deployed / name), f"{name} leads out of the public folder (or nowhere) yet was deployed"
        status, body = page(served, "/" + name)
        assert status == 404 and b"SECRET" not in body, f"/{name}: {status} {body[:80]!r}"
    everything = b"".join(p.read_bytes() for p in (releases_folder(files) / "releases" / release).rglob("*") if p.is_file())
    assert b"SECRET" not in everything

    # A copy, not a link: changing the source afterwards changes nothing served.
    (public / "real.txt").write_text("changed after the deploy\n")
    assert page(served, "/alias.txt") == (200, content("real.txt", 1))


def test_a_public_folder_holding_the_data_folder_does_not_publish_it(folder):
    """`"public": "."` with the data folder inside the app folder (as `hearth serve` and
    `hearth hosting deploy .` run from the app's folder make it, --data defaulting to
    ./hearth-data): the data folder, its admin token and the releases themselves must not
    become part of the site."""
    app = folder / "app"
    app.mkdir()
    (app / "firebase.json").write_text(json.dumps({"hosting": {"public": "."}}))
    (app / "index.html").write_bytes(content("index.html", 1))
    data = app / "hearth-data"
    served = launch_with_own_token(data)
    try:
        files = data / "files"
        finished = [subprocess.run([harness.hearth_binary(), "hosting", "deploy", "."], cwd=app, capture_output=True,
                                   text=True, timeout=60) for _ in range(3)]
        # Refusing such a deploy would do; deploying the data folder would not.
        if all(run.returncode == 0 for run in finished):
            release = pointer(files)
            deployed = releases_folder(files) / "releases" / release / "app"
            assert not (deployed / "hearth-data").exists(), \
                f"the data folder was copied into release {release}: " + ", ".join(
                    sorted(str(p.relative_to(deployed)) for p in deployed.rglob("*") if p.is_file())[:12])
        token = (data / "admin-token").read_text().strip()
        status, body = page(served, "/hearth-data/admin-token")
        assert status == 404 and token.encode() not in body, f"the admin token is served publicly: {status} {body!r}"
    finally:
        stop(served)


# MARK: - 6. --keep

def test_keep_removes_all_but_the_newest_releases(folder, server):
    served, files = server
    data = ["--data", str(served.data)]
    site = folder / "site"
    ids = []
    for version in range(1, 7):  # N + 3 deploys, N = 3
        ids.append(deploy(write_site(site, version, SMALL_SITE), *data, "--keep", "3"))
        assert len(kept(files)) == min(version, 3)
    assert kept(files) == sorted(ids[-3:])
    assert [release for _, release, _ in ls(*data)[1]] == ids[:-4:-1]
    assert leftovers(files) == []
    assert_serves(served, 6)

    # Roll back to the oldest kept, then deploy: the release rolled back to is no longer live, so
    # it is the one pruned; the new one is live and the newest three remain.
    hearth("hosting", "rollback", "--to", ids[3], *data)
    assert_serves(served, 4)
    ids.append(deploy(write_site(site, 7, SMALL_SITE), *data, "--keep", "3"))
    assert kept(files) == sorted(ids[-3:]) and pointer(files) == ids[-1]
    assert_serves(served, 7)

    # Back to the oldest kept again, then a deploy keeping 1: only the new live release remains.
    hearth("hosting", "rollback", "--to", ids[-3], *data)
    ids.append(deploy(write_site(site, 8, SMALL_SITE), *data, "--keep", "1"))
    assert kept(files) == [ids[-1]] and pointer(files) == ids[-1]
    assert "--keep must be at least 1" in refused("hosting", "deploy", str(site), *data, "--keep", "0")
    assert kept(files) == [ids[-1]]
    assert_serves(served, 8)


# MARK: - 7. Every node switches together

def test_every_node_of_a_cluster_switches_together(folder):
    from postgres_server import PostgresServer, postgres_bin  # Tests/Support

    if postgres_bin() is None:
        pytest.skip("needs PostgreSQL (apt-get install -y postgresql)")
    shared = folder / "shared-files"
    shared.mkdir()
    postgres = PostgresServer()
    nodes: list[Served] = []
    try:
        for index in (1, 2):
            nodes.append(launch(folder / f"node-{index}", "--cluster", postgres.url, "--node-id", f"node-{index}",
                                "--files-dir", str(shared)))
        location = ["--files-dir", str(shared)]
        site = folder / "site"
        first = deploy(write_site(site, 1, SMALL_SITE), *location)
        for node in nodes:
            assert_serves(node, 1)
        second = deploy(write_site(site, 2, SMALL_SITE), *location)
        for node in nodes:
            assert_serves(node, 2)
        assert [(live, release) for live, release, _ in ls(*location)[1]] == [(True, second), (False, first)]
        hearth("hosting", "rollback", *location)
        assert pointer(shared) == first
        for node in nodes:
            assert_serves(node, 1)
        hearth("hosting", "rollback", "--to", second, *location)
        for node in nodes:
            assert_serves(node, 2)
        # Each node's own data folder holds no releases: they are all in the shared folder.
        for index in (1, 2):
            assert not (folder / f"node-{index}" / "files" / "hosting").exists()
    finally:
        for node in nodes:
            stop(node)
        postgres.close()


# MARK: - 8. The admin API

def test_the_admin_api_lists_releases_their_files_and_rolls_back(folder):
    data = folder / "data"
    served = launch_with_own_token(data)
    try:
        files = data / "files"
        token = (data / "admin-token").read_text().strip()
        admin = {"Authorization": f"Bearer {token}"}

        def api(method, path, body=None, headers=admin):
            status, _, raw = fetch(served.url, path, headers={**headers, "Content-Type": "application/json"},
                                   method=method, body=None if body is None else json.dumps(body).encode())
            return status, json.loads(raw) if raw else None

        status, listing = api("GET", "/.hearth/hosting")
        assert status == 200 and listing.get("live") is None and listing["releases"] == [] and listing["mode"] == "releases"

        site = folder / "site"
        paths = [*SMALL_SITE, ".env", "node_modules/x.js"]
        first = deploy(write_site(site, 1, paths), "--data", str(data), "-m", "one")
        second = deploy(write_site(site, 2, [*SMALL_SITE, "extra.html"]), "--data", str(data), "-m", "two")

        status, listing = api("GET", "/.hearth/hosting")
        assert status == 200, listing
        assert listing["live"] == second
        assert [r["id"] for r in listing["releases"]] == [second, first]
        assert [r["message"] for r in listing["releases"]] == ["two", "one"]
        assert [r["files"] for r in listing["releases"]] == [4, 3]
        assert Path(listing["releasesFolder"]).resolve() == releases_folder(files).resolve()

        status, listed = api("GET", f"/.hearth/hosting/files?release={first}")
        assert status == 200, listed
        assert listed["release"] == first and listed["total"] == 3
        assert sorted(f["path"] for f in listed["files"]) == sorted(SMALL_SITE)
        assert {f["path"]: f["bytes"] for f in listed["files"]} == {p: len(content(p, 1)) for p in SMALL_SITE}
        status, listed = api("GET", f"/.hearth/hosting/files?release={second}")
        assert status == 200 and sorted(f["path"] for f in listed["files"]) == sorted([*SMALL_SITE, "extra.html"])

        # Unknown or malformed releases: 404 in Firebase's error shape; nothing changes.
        decoy = releases_folder(files) / "x"
        shutil.copytree(releases_folder(files) / "releases" / first, decoy)
        before = snapshot(files, served, "--data", str(data))
        for wrong in ["20000101-000000-abcdef", "../x", "..", "x/../" + first]:
            status, body = api("GET", "/.hearth/hosting/files?" + urllib.parse.urlencode({"release": wrong}))
            assert status == 404 and isinstance(body, dict) and set(body) == {"error"} and body["error"], (wrong, status, body)
            status, body = api("POST", "/.hearth/hosting/rollback", {"release": wrong})
            assert status == 404 and isinstance(body, dict) and set(body) == {"error"}, (wrong, status, body)
            assert "no release" in body["error"]
        status, body = api("GET", "/.hearth/hosting/files")
        assert status == 400 and set(body) == {"error"}, body
        assert snapshot(files, served, "--data", str(data)) == before
        assert_serves(served, 2)

        # Without the admin token (none, a wrong one, a wrong ?auth=): refused, nothing changes.
        for headers, query in [({}, ""), ({"Authorization": "Bearer wrong"}, ""), ({}, "?auth=wrong"),
                               ({"Authorization": f"Bearer {token}x"}, "")]:
            status, body = api("POST", "/.hearth/hosting/rollback" + query, {"release": first}, headers=headers)
            assert status in (401, 403) and set(body) == {"error"}, (headers, query, status, body)
            status, body = api("GET", "/.hearth/hosting" + query, headers=headers)
            assert status in (401, 403) and set(body) == {"error"}, (headers, query, status, body)
            status, body = api("GET", f"/.hearth/hosting/files?release={first}" + query.replace("?", "&"), headers=headers)
            assert status in (401, 403), (headers, query, status, body)
        assert snapshot(files, served, "--data", str(data)) == before
        assert_serves(served, 2)

        # The admin rolls back: served on the next request, and `ls` agrees.
        status, body = api("POST", "/.hearth/hosting/rollback", {"release": first})
        assert status == 200 and body["live"]["id"] == first, body
        assert pointer(files) == first
        assert_serves(served, 1)
        assert [(live, release) for live, release, _ in ls("--data", str(data))[1]] == [(False, second), (True, first)]
        status, listing = api("GET", "/.hearth/hosting")
        assert listing["live"] == first

        # {} rolls back to the one before the live one: there is none before the first.
        status, body = api("POST", "/.hearth/hosting/rollback", {})
        assert status >= 400 and set(body) == {"error"} and "no earlier release" in body["error"], (status, body)
        assert pointer(files) == first
        status, body = api("POST", "/.hearth/hosting/rollback", {"release": second})
        assert status == 200 and body["live"]["id"] == second
        assert_serves(served, 2)
        status, body = api("POST", "/.hearth/hosting/rollback", {})
        assert status == 200 and body["live"]["id"] == first
        assert_serves(served, 1)
        status, body = api("GET", "/.hearth/hosting/rollback")
        assert status >= 400 and pointer(files) == first
    finally:
        stop(served)
