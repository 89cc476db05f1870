// Every recorded official-SDK transcript (Tests/Events/recorded) replayed against the sync core
// in-process: the core gets the same local calls, a scripted server answers it with the
// messages the server sent the SDK, and its listeners must report the SDK's events, step by
// step (compared as Tests/Events compares runs).

import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { test } from 'node:test';
import { canonicalJSON, compareSteps } from './compare.mjs';
import { Replay, loadTranscripts } from './scripted-server.mjs';

const transcripts = loadTranscripts();
const SCENARIOS = new URL('../Events/scenarios/', import.meta.url);

test('every scenario has a transcript recorded from it as it is now', () => {
  const scenarios = readdirSync(SCENARIOS).filter((name) => name.endsWith('.json'));
  assert.ok(scenarios.length >= 50, `only ${scenarios.length} scenarios`);
  const byName = new Map(transcripts.map((transcript) => [transcript.scenario, transcript]));
  for (const name of scenarios) {
    const scenario = JSON.parse(readFileSync(new URL(name, SCENARIOS), 'utf8'));
    const transcript = byName.get(scenario.name);
    assert.ok(transcript, `${scenario.name} has no transcript: run Tests/Events/record.py ${scenario.name}`);
    assert.equal(transcript.format, 1, `${scenario.name}: format ${transcript.format}`);
    assert.equal(canonicalJSON(transcript.steps.map((step) => step.step)), canonicalJSON(scenario.steps),
      `${scenario.name} changed since it was recorded: run Tests/Events/record.py ${scenario.name}`);
    assert.equal(canonicalJSON(transcript.initial ?? null), canonicalJSON(scenario.initial ?? null), `${scenario.name}: initial value`);
  }
});

for (const transcript of transcripts) {
  test(`replay: ${transcript.scenario}`, async (t) => {
    const replay = new Replay(transcript);
    const run = replay.run();
    // Let the writes' promises settle.
    await new Promise((resolve) => setImmediate(resolve));
    const failed = run.errors.map((error, index) => (error ? `step ${index}: ${error}` : null)).filter(Boolean);
    assert.deepEqual(failed, [], `${transcript.scenario}: steps failed`);
    const scenarioSteps = transcript.steps.map((step) => step.step);
    const expected = transcript.steps.map((step) => step.events);
    let difference = compareSteps(expected, run.steps, scenarioSteps);
    if (difference && run.diverged) {
      // The script stopped standing for the server at that step: the steps from there on may
      // differ for that reason alone, and are then not compared (said so in the output).
      const from = run.diverged.step;
      difference = compareSteps(expected.slice(0, from), run.steps.slice(0, from), scenarioSteps);
      if (!difference) t.diagnostic(`steps ${from}… not compared: ${run.diverged.reason}`);
    }
    const context = () => [
      run.dropped.length ? `messages with no pair: ${JSON.stringify(run.dropped).slice(0, 600)}` : '',
      replay.unpairedCoreRequests.length ? `core requests the SDK did not make: ${JSON.stringify(replay.unpairedCoreRequests).slice(0, 600)}` : '',
    ].filter(Boolean).join('\n');
    assert.equal(difference, null, `${transcript.scenario}:\n${difference}\n${context()}`);
    // Every local write the SDK saw settle settled the same way here.
    const sdkResults = new Map();
    for (const step of transcript.steps) {
      for (const item of step.timeline) if (item.kind === 'result' && item.conn === 'local') sdkResults.set(item.of, item.error === null);
    }
    const ours = new Map(run.results.map((result) => [result.of, result.error === null]));
    for (const [of, ok] of sdkResults) {
      assert.equal(ours.get(of), ok, `${transcript.scenario}: the write of seq ${of} ${ok ? 'succeeded' : 'failed'} for the SDK, `
        + `${ours.has(of) ? (ours.get(of) ? 'succeeded' : 'failed') : 'never settled'} here`);
    }
  });
}
