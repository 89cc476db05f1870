"""A process's output, read line by line in a thread, with waits that wake on each new line."""

from __future__ import annotations

import re
import threading
import time


class Output:
    """Reads ``stream`` (text, line by line) until it ends. ``lines`` holds every line so far
    (also appended to ``into``, a list or a tuple of lists, when given, so a caller's own lists
    keep growing); ``wait_for(pattern)`` returns as soon as a line matches."""

    def __init__(self, stream, into: list[str] | tuple[list[str], ...] | None = None, name: str = "output"):
        self.lines: list[str] = []
        self.into = () if into is None else into if isinstance(into, tuple) else (into,)
        self.ended = False
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._read, args=(stream,), name=name, daemon=True)
        self._thread.start()

    def _read(self, stream):
        try:
            for line in stream:
                with self._changed:
                    self.lines.append(line)
                    for other in self.into:
                        other.append(line)
                    self._changed.notify_all()
        except (ValueError, OSError):
            pass  # the stream was closed under us
        finally:
            with self._changed:
                self.ended = True
                self._changed.notify_all()

    def join(self, timeout: float) -> None:
        """Waits (up to ``timeout``) until the stream has ended and every line is read."""
        self._thread.join(timeout)

    def text(self, last: int | None = None) -> str:
        with self._changed:
            return "".join(self.lines if last is None else self.lines[-last:])

    def wait_for_change(self, timeout: float) -> None:
        """Returns when a line arrives or the stream ends, or after ``timeout``."""
        with self._changed:
            count, ended = len(self.lines), self.ended
            self._changed.wait_for(lambda: len(self.lines) != count or self.ended != ended, timeout)

    def search(self, pattern, start: int = 0):
        """The first match of ``pattern`` (a regular expression, or a plain string) in a line,
        from line ``start`` on; None if there is none yet."""
        regex = pattern if isinstance(pattern, re.Pattern) else re.compile(re.escape(pattern))
        with self._changed:
            lines = list(self.lines[start:])
        for line in lines:
            match = regex.search(line)
            if match:
                return match
        return None

    def count(self, text: str) -> int:
        with self._changed:
            return sum(line.count(text) for line in self.lines)

    def wait_for(self, pattern, timeout: float = 10, message: str = "", start: int = 0, stop_at_end: bool = True):
        """The first match of ``pattern`` in a line (from line ``start`` on), once there is one.
        Raises ``AssertionError`` with the output after ``timeout`` seconds, or as soon as the
        stream has ended without one (``stop_at_end``)."""
        deadline = time.monotonic() + timeout
        while True:
            with self._changed:
                count, ended = len(self.lines), self.ended
            match = self.search(pattern, start)
            if match:
                return match
            if ended and stop_at_end:
                raise AssertionError(f"the output ended without {message or pattern!r}:\n{self.text(last=200)}")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"timed out after {timeout:g} s waiting for {message or pattern!r} in the output:\n"
                                     f"{self.text(last=200)}")
            with self._changed:
                self._changed.wait_for(lambda: len(self.lines) != count or self.ended != ended, remaining)
