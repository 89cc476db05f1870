"""A throwaway real PostgreSQL (Debian's postgresql package) for tests and benchmarks: a new
cluster (initdb) in a temporary folder, started with pg_ctl on a free loopback port, trusting
local connections as the user ``hearth``. Run as root, the server runs as the ``postgres``
user (PostgreSQL refuses root).

    with PostgresServer() as pg:
        pg.url  # postgres://hearth@127.0.0.1:<port>/postgres?sslmode=disable

``durable=False`` (tests) turns fsync off; benchmarks keep PostgreSQL's defaults.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    from harness import free_port
except ImportError:  # used outside the test suites' pytest (Tests/pytest.ini puts Tests/ on the path)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from harness import free_port


def postgres_bin() -> Path | None:
    """Debian's PostgreSQL programs (the newest version installed), or None."""
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]), reverse=True):
        if os.access(os.path.join(folder, "pg_ctl"), os.X_OK):
            return Path(folder)
    return None


class PostgresServer:
    user = "hearth"
    database = "postgres"

    def __init__(self, durable: bool = False, max_connections: int = 300):
        binaries = postgres_bin()
        if binaries is None:
            raise RuntimeError("PostgreSQL is not installed (apt-get install -y postgresql)")
        self.bin = binaries
        self.folder = Path(tempfile.mkdtemp(prefix="hearth-pg-"))
        self.port = free_port()
        self.run_as = "postgres" if os.geteuid() == 0 else None
        if self.run_as:
            shutil.chown(self.folder, self.run_as, self.run_as)
        data = self.folder / "data"
        self._run("initdb", "-D", str(data), "-U", self.user, "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C")
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c max_connections={max_connections}"
        if not durable:
            options += " -c fsync=off -c synchronous_commit=off"
        self._run("pg_ctl", "-D", str(data), "-l", str(self.folder / "log.txt"), "-w", "-t", "60", "start", "-o", options)

    @property
    def url(self) -> str:
        return f"postgres://{self.user}@127.0.0.1:{self.port}/{self.database}?sslmode=disable"

    def psql(self, sql: str) -> str:
        """Runs ``sql`` with psql and returns its unaligned output."""
        return self._run("psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user, "-d", self.database,
                         "-At", "-c", sql, as_server=False)

    def stop(self, mode: str = "fast"):
        self._run("pg_ctl", "-D", str(self.folder / "data"), "-m", mode, "-w", "stop", check=False)

    def start(self):
        """Starts it again after ``stop()`` on the same port and data."""
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run("pg_ctl", "-D", str(self.folder / "data"), "-l", str(self.folder / "log.txt"), "-w", "-t", "60",
                  "start", "-o", options)

    def close(self):
        self.stop("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _run(self, program: str, *args: str, check: bool = True, as_server: bool = True) -> str:
        command = [str(self.bin / program), *args]
        if as_server and self.run_as:
            command = ["/usr/sbin/runuser", "-u", self.run_as, "--", *command]
        # Output to a file: the server pg_ctl starts keeps its parent's output open.
        with tempfile.TemporaryFile() as output:
            status = subprocess.run(command, stdout=output, stderr=subprocess.STDOUT, cwd="/").returncode
            output.seek(0)
            text = output.read().decode(errors="replace")
        if check and status != 0:
            raise RuntimeError(f"{' '.join(command)} failed ({status}):\n{text}")
        return text
