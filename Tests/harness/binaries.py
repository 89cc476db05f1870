"""The binaries under test: $HEARTH_BINARY and $HEARTH_BENCH_BINARY, else the build's."""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent


@functools.lru_cache(maxsize=None)
def _bin_path() -> Path:
    try:
        return Path(subprocess.check_output(["swift", "build", "--show-bin-path"], cwd=REPO, text=True).strip())
    except (OSError, subprocess.CalledProcessError) as error:
        raise RuntimeError(f"set HEARTH_BINARY and HEARTH_BENCH_BINARY (swift build --show-bin-path failed: {error})")


def hearth_binary() -> str:
    """$HEARTH_BINARY, else ``hearth`` in ``swift build --show-bin-path``."""
    return os.environ.get("HEARTH_BINARY") or str(_bin_path() / "hearth")


def bench_binary() -> str:
    """$HEARTH_BENCH_BINARY; else hearth-bench beside $HEARTH_BINARY; else the build's."""
    if os.environ.get("HEARTH_BENCH_BINARY"):
        return os.environ["HEARTH_BENCH_BINARY"]
    if os.environ.get("HEARTH_BINARY"):
        beside = Path(os.environ["HEARTH_BINARY"]).with_name("hearth-bench")
        if beside.exists():
            return str(beside)
    return str(_bin_path() / "hearth-bench")
