"""The shared harness of the Python test suites (Tests/<Suite>/): the binaries under test,
free ports, waiting for a condition or an output line with a deadline, ``hearth serve``
processes with their output captured, and temporary folders.

Every suite imports it as ``harness`` (Tests/pytest.ini puts Tests/ on ``sys.path``):

    from harness import HearthProcess, free_port, wait_until

- ``hearth_binary()``, ``bench_binary()``: $HEARTH_BINARY / $HEARTH_BENCH_BINARY, else the
  build's (``swift build --show-bin-path``).
- ``free_port()``; ``wait_for_port(port, process=None)``; ``port_is_free(port)``.
- ``wait_until(predicate, timeout, message)``: the predicate's first true value, or a
  ``WaitTimeout`` (an ``AssertionError``) saying what was awaited and what was seen last.
  ``wait_past_second(t)``: until the clock's whole second is past ``t`` (token times are whole
  seconds).
- ``Output``: a process's output read line by line; ``output.wait_for(pattern)`` wakes on each
  new line (no polling).
- ``HearthProcess(args, ready=...)``: ``hearth serve …`` started, its output captured, its URL
  read from "Hearth is serving http://…/"; ``stop()`` (SIGTERM, then SIGKILL; raises
  ``HearthCrashed``, with the output and its backtrace, if it had crashed), ``kill()``.
- ``temp_folder(prefix)``, ``remove_tree(path)``.
- ``record(section, line)``: a figure reported at the end of the run, not judged.
- ``harness.social_data``: checks on the demo social app's tree (``places_of`` a uid or ID,
  ``like_disagreements``), imported from there.
"""

from .binaries import REPO, TESTS, bench_binary, hearth_binary
from .folders import remove_tree, temp_folder
from .output import Output
from .ports import free_port, port_is_free, wait_for_port
from .report import record
from .server import SERVING, HearthCrashed, HearthDidNotStart, HearthProcess, crash_signal, stop_process
from .waiting import WaitTimeout, wait_past_second, wait_until

__all__ = [
    "REPO", "TESTS", "bench_binary", "hearth_binary", "remove_tree", "temp_folder", "Output", "free_port", "port_is_free",
    "wait_for_port", "record", "SERVING", "HearthCrashed", "HearthDidNotStart", "HearthProcess", "crash_signal", "stop_process", "WaitTimeout", "wait_past_second",
    "wait_until",
]
