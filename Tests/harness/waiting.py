"""Waiting for a condition, with a deadline, instead of sleeping for a fixed time."""

from __future__ import annotations

import time


class WaitTimeout(AssertionError):
    """A condition that did not hold in time (a test failure, with what was awaited)."""


def wait_until(predicate, timeout: float = 10, message: str = "", interval: float = 0.05,
               ignoring: tuple[type[BaseException], ...] = (), wake=None):
    """Calls ``predicate()`` until it returns a true value, and returns that value. After
    ``timeout`` seconds raises ``WaitTimeout`` with ``message`` and the last value (or the last
    ignored exception). Exceptions of the types in ``ignoring`` count as "not yet".

    ``wake``: an object with ``wait_for_change(seconds)`` (an ``Output``): the predicate is
    asked again as soon as it changes instead of after ``interval``."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            value = predicate()
            if value:
                return value
            last = value
        except ignoring as error:
            last = error
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise WaitTimeout(f"timed out after {timeout:g} s waiting for {message or getattr(predicate, '__name__', 'a condition')}"
                              f" (last: {last!r})")
        if wake is not None:
            wake.wait_for_change(min(remaining, max(interval, 1.0)))
        else:
            # The one poll interval of the suites: a condition with no signal of its own (an HTTP
            # answer, a file, a port) is asked again after this pause.
            time.sleep(min(interval, remaining))


def wait_past_second(moment: float, timeout: float = 5) -> None:
    """Waits until the clock's whole second is later than ``moment``'s (a Unix time): a token or
    validSince stamped now gets a later second than one stamped at ``moment``."""
    target = int(moment) + 1
    wait_until(lambda: time.time() >= target, timeout, f"the clock to pass {target}", interval=0.01)
