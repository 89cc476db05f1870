"""Hearth's browser client (Web/lib/hearth.js, as served by `hearth serve --web-root Web`) runs
every scenario in the same chromium page: its listeners must report the events the official
SDK reported, step by step and event by event (timestamps normalized)."""

from __future__ import annotations

from events_support import compare_runs, run_in_page


def test_hearth_js_reports_the_sdks_events(scenario, sdk_recordings, page, hearth):
    actual = run_in_page(page, hearth, "hearth.js", scenario)
    difference = compare_runs(scenario, sdk_recordings[scenario["name"]], actual, "the SDK", "hearth.js")
    assert difference is None, difference + f"\n(hearth.js ran in namespace {actual['ns']})"
