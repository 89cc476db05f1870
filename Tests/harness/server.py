"""``hearth serve`` (or any ``hearth`` command) as a process of the test, its output captured."""

from __future__ import annotations

import os
import re
import signal
import subprocess

from .binaries import hearth_binary
from .output import Output

SERVING = re.compile(r"Hearth is serving (http://[^/\s]+:(\d+))/")
STARTUP_SECONDS = 120


class HearthDidNotStart(AssertionError):
    pass


class HearthCrashed(AssertionError):
    """The server ended by itself on a signal only a crash sends (a bad memory access, a
    failed precondition): raised when it is stopped, with its output (and Swift's backtrace)."""


# Signals a process gets from its own fault, never from a test stopping it.
CRASH_SIGNALS = {signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGABRT, signal.SIGTRAP, signal.SIGFPE}


def crash_signal(process: subprocess.Popen) -> signal.Signals | None:
    """The signal `process` crashed on, if it has ended on one."""
    status = process.poll()
    if status is None or status >= 0:
        return None
    try:
        ended_by = signal.Signals(-status)
    except ValueError:
        return None
    return ended_by if ended_by in CRASH_SIGNALS else None


def stop_process(process: subprocess.Popen, timeout: float = 15, output: Output | None = None) -> None:
    """SIGTERM, then SIGKILL if it has not ended within ``timeout``. With the process's
    ``output``: raises ``HearthCrashed`` if it had crashed meanwhile, so a crash that failed
    tests only as refused connections is reported with its backtrace."""
    crashed = crash_signal(process) if output is not None else None
    if process.poll() is None:
        process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if crashed is not None:
        output.join(5)
        raise HearthCrashed(f"{' '.join(map(str, process.args))} crashed ({crashed.name}):\n{output.text(last=200)}")


class HearthProcess:
    """``hearth *args`` with stdout and stderr captured in ``output`` (an ``Output``; ``into``
    also receives every line). ``start()`` waits for "Hearth is serving http://HOST:PORT/" (and,
    if given, the ``ready`` pattern, e.g. "Demo accounts"): then ``url`` and ``port`` are set.
    A process that ends first, or does not get there in ``timeout``, raises
    ``HearthDidNotStart`` with its output."""

    def __init__(self, args, ready=None, timeout: float = STARTUP_SECONDS, binary: str | None = None,
                 into: list[str] | tuple[list[str], ...] | None = None, env: dict | None = None, **popen):
        self.command = [binary or hearth_binary(), *map(str, args)]
        self.ready, self.timeout = ready, timeout
        self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        bufsize=1, env=None if env is None else {**os.environ, **env}, **popen)
        self.output = Output(self.process.stdout, into=into, name=f"hearth-{self.process.pid}-output")
        self.url: str | None = None
        self.port: int | None = None

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def lines(self) -> list[str]:
        return self.output.lines

    def text(self, last: int | None = None) -> str:
        return self.output.text(last)

    def start(self) -> "HearthProcess":
        try:
            serving = self.output.wait_for(SERVING, self.timeout, "Hearth is serving …")
            if self.ready is not None:
                self.output.wait_for(self.ready, self.timeout, str(self.ready))
        except AssertionError as error:
            self.kill()
            raise HearthDidNotStart(f"{' '.join(self.command)} did not start: {error}") from None
        if self.process.poll() is not None:
            raise HearthDidNotStart(f"{' '.join(self.command)} exited (status {self.process.returncode}):\n{self.text()}")
        self.url, self.port = serving.group(1), int(serving.group(2))
        return self

    def stop(self, timeout: float = 15) -> None:
        """Ends the server; raises ``HearthCrashed`` if it had crashed meanwhile."""
        stop_process(self.process, timeout, self.output)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
