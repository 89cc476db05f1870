"""Static file serving of `hearth serve --hosting` against nginx on the same files (see
scripts/bench-hosting), and of the same site deployed as a release (`hearth hosting deploy`,
served by `hearth serve` without --hosting, which checks the live release on each request).
The servers run for the whole run; each round measures every case on each, the order
alternating between rounds so that none always runs warmer. The median requests/s of each is
reported with its ratio to nginx.

Both get the same advantages: nginx serves with sendfile and compresses with gzip at its
default level as each request asks (Hearth compresses a file once and keeps it, so nginx also
gets gzip_static with a precompressed copy beside each text file: the fair comparison for
files that do not change).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "Tests"))
from harness import HearthProcess, free_port, stop_process, wait_for_port  # noqa: E402

NGINX = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin:/sbin")
WRK = shutil.which("wrk")

# (name, path, gzip asked)
CASES = [
    ("html", "/index.html", False),
    ("html gzip", "/index.html", True),
    ("js 100 KB", "/app.js", False),
    ("js 100 KB gzip", "/app.js", True),
]


def write_site(root: Path) -> Path:
    public = root / "public"
    public.mkdir(parents=True)
    (root / "firebase.json").write_text(json.dumps({"hosting": {"public": "public"}}))
    # A small page (about 1.5 KB, as an app's index.html is; over Hearth's 256-byte floor for gzip).
    paragraphs = "".join(f"<p id=\"p{n}\">Paragraph {n} of a small page, as an app's index.html is.</p>\n" for n in range(20))
    (public / "index.html").write_text(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Bench</title>"
        f"<script src=\"/app.js\" defer></script></head>\n<body><h1>Static file serving</h1>\n{paragraphs}</body></html>\n")
    # Code-like text of about 100 KB: compresses as real scripts do (neither all alike nor random).
    lines = [f"export function handler{n}(event) {{ return event.value * {n % 97} + '{n:x}'.length; }}\n"
             for n in range(1400)]
    (public / "app.js").write_text("".join(lines))
    for name in ("index.html", "app.js"):
        (public / (name + ".gz")).write_bytes(gzip.compress((public / name).read_bytes(), 6))
    # The precompressed copies are nginx's (gzip_static); Hearth must not serve them.
    (root / "firebase.json").write_text(json.dumps({"hosting": {"public": "public", "ignore": ["**/*.gz"]}}))
    return public


def start_nginx(root: Path, public: Path) -> tuple[subprocess.Popen, int]:
    port = free_port()
    temp_paths = "\n".join(f"    {name}_temp_path {root / name};" for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    config = root / "nginx.conf"
    config.write_text(f"""daemon off;
worker_processes auto;
pid {root / 'nginx.pid'};
error_log {root / 'nginx-error.log'} warn;
events {{ worker_connections 4096; }}
http {{
    include /etc/nginx/mime.types;
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    open_file_cache max=1000 inactive=60s;
    etag on;
    gzip on;
    gzip_static on;
    gzip_vary on;
    gzip_types text/html application/javascript text/javascript;
{temp_paths}
    server {{
        listen 127.0.0.1:{port};
        root {public};
        location / {{ add_header Cache-Control "max-age=3600"; }}
    }}
}}
""")
    process = subprocess.Popen([NGINX, "-c", str(config), "-p", str(root)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not wait_for_port(port, process):
        raise SystemExit("nginx did not start:\n" + (root / "nginx-error.log").read_text(errors="replace"))
    return process, port


def check(url: str, path: str, gzipped: bool, public: Path):
    """Both servers answer the same bytes, compressed when asked: else the numbers mean nothing."""
    request = urllib.request.Request(url + path, headers={"Accept-Encoding": "gzip"} if gzipped else {})
    with urllib.request.urlopen(request, timeout=10) as response:
        body, encoding = response.read(), response.headers.get("Content-Encoding")
    if gzipped:
        assert encoding == "gzip", f"{url}{path}: no gzip (Content-Encoding {encoding})"
        body = gzip.decompress(body)
    else:
        assert encoding is None, f"{url}{path}: Content-Encoding {encoding} though none was asked"
    expected = (public / path.lstrip("/")).read_bytes()
    assert body == expected, f"{url}{path}: other bytes than the file's"


def wrk(url: str, gzipped: bool, args) -> float:
    command = [WRK, f"-t{args.threads}", f"-c{args.connections}", f"-d{args.duration}s", url]
    if gzipped:
        command[1:1] = ["-H", "Accept-Encoding: gzip"]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    if re.search(r"Non-2xx or 3xx responses|Socket errors", output):
        raise SystemExit(f"errors under load from {url}:\n{output}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True, help="the hearth binary (scripts/bench-hosting builds release)")
    parser.add_argument("--duration", type=int, default=10, help="seconds of each wrk measurement")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    if NGINX is None or WRK is None:
        raise SystemExit("needs nginx and wrk (apt-get install -y nginx-light wrk)")

    root = Path(tempfile.mkdtemp(prefix="hearth-bench-hosting-"))
    root.chmod(0o755)  # nginx's workers (nobody, when started as root) must reach the files
    hearth = released = nginx = None
    try:
        public = write_site(root)
        (root / "data").mkdir()
        hearth = HearthProcess(["serve", "--port", "0", "--data", root / "data", "--hosting", root, "--no-demo"],
                               binary=args.binary).start()
        (root / "released").mkdir()
        subprocess.run([args.binary, "hosting", "deploy", str(root), "--data", str(root / "released")], check=True,
                       capture_output=True)
        released = HearthProcess(["serve", "--port", "0", "--data", root / "released", "--no-demo"], binary=args.binary).start()
        nginx, nginx_port = start_nginx(root, public)
        servers = {"hearth": hearth.url.rstrip("/"), "release": released.url.rstrip("/"), "nginx": f"http://127.0.0.1:{nginx_port}"}
        for url in servers.values():
            for _, path, gzipped in CASES:
                check(url, path, gzipped, public)

        results = {(name, server): [] for name, _, _ in CASES for server in servers}
        for round_number in range(args.rounds):
            order = list(servers) if round_number % 2 == 0 else list(reversed(servers))
            for name, path, gzipped in CASES:
                for server in order:
                    rate = wrk(servers[server] + path, gzipped, args)
                    results[(name, server)].append(rate)
                    print(f"round {round_number + 1} {name:<15} {server:<7} {rate:>10.0f} req/s", flush=True)

        print(f"\n{args.rounds} rounds of {args.duration} s, {args.connections} connections, {args.threads} wrk threads; medians:")
        print(f"{'case':<15} {'hearth req/s':>13} {'release req/s':>14} {'nginx req/s':>12} {'hearth/nginx':>13} {'release/nginx':>14}")
        for name, _, _ in CASES:
            ours, release, theirs = (statistics.median(results[(name, server)]) for server in ("hearth", "release", "nginx"))
            print(f"{name:<15} {ours:>13.0f} {release:>14.0f} {theirs:>12.0f} {ours / theirs:>13.2f} {release / theirs:>14.2f}")
    finally:
        if nginx is not None:
            stop_process(nginx, timeout=10)
        for server in (hearth, released):
            if server is not None:
                server.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
