"""Loopback ports."""

from __future__ import annotations

import socket
import subprocess

from .waiting import wait_until


def free_port() -> int:
    """A port free now on 127.0.0.1 (the OS's choice), for a server whose address must be known
    before it starts (prefer ``--port 0`` and reading the port from the server's output)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_is_free(port: int) -> bool:
    """Whether a server could listen on 127.0.0.1:``port`` now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def accepts(port: int, host: str = "127.0.0.1") -> bool:
    try:
        socket.create_connection((host, port), timeout=1).close()
        return True
    except OSError:
        return False


def wait_for_port(port: int, process: subprocess.Popen | None = None, timeout: float = 10, host: str = "127.0.0.1") -> bool:
    """Whether ``host:port`` accepts connections within ``timeout`` (False at once if
    ``process`` has exited)."""
    def ready():
        if process is not None and process.poll() is not None:
            return "exited"
        return accepts(port, host)

    try:
        return wait_until(ready, timeout, f"port {port} to accept connections") is True
    except AssertionError:
        return False
