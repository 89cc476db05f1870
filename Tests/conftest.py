"""Shared by every Python suite under Tests/ (Tests/pytest.ini puts Tests/ and Tests/Support on
sys.path, so every suite imports the shared harness as ``harness``): prints the figures that
suites report without judging them (``harness.record``) at the end of the run."""

import harness


def pytest_terminal_summary(terminalreporter):
    for section, lines in harness.report.recorded().items():
        terminalreporter.section(section)
        for line in lines:
            terminalreporter.write_line(line)
