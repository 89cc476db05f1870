"""Temporary folders for servers' data."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path


def remove_tree(path) -> None:
    shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def temp_folder(prefix: str = "hearth-test-"):
    """A new empty folder, removed with everything in it at the end of the ``with``."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield folder
    finally:
        remove_tree(folder)
