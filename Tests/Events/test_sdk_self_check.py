"""The harness checked against itself. Every scenario recorded through the official SDK a
second time (fresh namespace, fresh app instances) must report exactly the events of the
session's recording: a failure there is a flaw of the harness or of the scenario (a sequence
that depends on timing), not of a Hearth client. And every step of every scenario must succeed
through the SDK, or the recording is not Firebase's behaviour but a failure's (the SDK takes
back a write the server refused): a failure there is the server's."""

from __future__ import annotations

from events_support import compare_runs, describe_step, run_in_page


def test_the_sdk_reports_the_same_events_when_run_again(scenario, sdk_recordings, page, hearth):
    recorded = sdk_recordings[scenario["name"]]
    assert any(recorded["steps"]), f"the SDK reported no events at all in {scenario['name']}"
    again = run_in_page(page, hearth, "sdk", scenario)
    difference = compare_runs(scenario, recorded, again, "the SDK's recording", "the SDK run again", same_errors_pass=True)
    assert difference is None, difference


def test_every_step_succeeds_through_the_sdk(scenario, sdk_recordings):
    recorded = sdk_recordings[scenario["name"]]
    failed = [f"step {index} {describe_step(scenario['steps'][index])}: {error}"
              for index, error in enumerate(recorded["errors"]) if error]
    assert not failed, (f"scenario {scenario['name']}: the official SDK's steps failed against Hearth "
                        f"(namespace {recorded['ns']}):\n" + "\n".join(failed))
