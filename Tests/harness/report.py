"""Figures a suite reports without judging them (latency, throughput, give-ups under
contention): printed at the end of the run by Tests/conftest.py, under their section."""

from __future__ import annotations

_lines: dict[str, list[str]] = {}


def record(section: str, line: str) -> None:
    """Adds ``line`` to ``section`` of the run's report (and prints it, for ``-s`` runs)."""
    print(line)
    _lines.setdefault(section, []).append(line)


def recorded() -> dict[str, list[str]]:
    return {section: list(lines) for section, lines in _lines.items()}
