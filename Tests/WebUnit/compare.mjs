// Comparing a replay's events with the official SDK's, as Tests/Events/events_support.py
// compares two runs (compare_runs): server timestamps (numbers from 1e12 up) are equal to each
// other; an event that repeats a listener's last report and differs only in a timestamp is
// dropped; within a step each listener's events must be the same, in the same order, while how
// different listeners' events interleave is not compared.

const TIMESTAMP_FLOOR = 1e12;

/// JSON with object keys sorted: values compare as Python's dicts do, whatever their order.
export function canonicalJSON(value) {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJSON).join(',')}]`;
  return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonicalJSON(value[key])}`).join(',')}}`;
}

export function normalize(value) {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') return value >= TIMESTAMP_FLOOR ? '<timestamp>' : value;
  if (Array.isArray(value)) return value.map(normalize);
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, normalize(item)]));
  return value;
}

/// The steps' events with timestamps normalized and timestamp-only repeats dropped.
export function canonicalSteps(steps) {
  const seen = new Map();
  return steps.map((events) => {
    const kept = [];
    for (const original of events) {
      const event = { listener: original.listener, type: original.type, key: original.key ?? null, prev: original.prev ?? null };
      const raw = canonicalJSON(original.value ?? null);
      event.value = normalize(original.value ?? null);
      const value = canonicalJSON(event.value);
      const slot = event.type === 'value' ? `${event.listener}|value` : `${event.listener}|child|${event.key}`;
      if ((event.type === 'value' || event.type === 'child_changed') && seen.has(slot)) {
        const last = seen.get(slot);
        if (last.value === value && last.raw !== raw) {
          seen.set(slot, { raw, value });
          continue;
        }
      }
      if (event.type === 'child_removed') seen.delete(slot);
      else if (event.type !== 'cancel') seen.set(slot, { raw, value });
      kept.push(event);
    }
    return kept;
  });
}

function byListener(events) {
  const grouped = new Map();
  for (const event of events) {
    if (!grouped.has(event.listener)) grouped.set(event.listener, []);
    grouped.get(event.listener).push(canonicalJSON(event));
  }
  return grouped;
}

function describe(event) {
  return event ?? '(none)';
}

/// null when the two runs' steps report the same events; otherwise the differences, in words.
export function compareSteps(expectedSteps, actualSteps, stepsOfScenario = []) {
  const expected = canonicalSteps(expectedSteps);
  const actual = canonicalSteps(actualSteps);
  const lines = [];
  if (expected.length !== actual.length) lines.push(`${actual.length} steps reported, ${expected.length} expected`);
  for (let index = 0; index < Math.min(expected.length, actual.length); index += 1) {
    const want = byListener(expected[index]);
    const got = byListener(actual[index]);
    const listeners = new Set([...want.keys(), ...got.keys()]);
    for (const listener of listeners) {
      const a = want.get(listener) ?? [];
      const b = got.get(listener) ?? [];
      if (a.length === b.length && a.every((event, position) => event === b[position])) continue;
      let first = 0;
      while (first < Math.min(a.length, b.length) && a[first] === b[first]) first += 1;
      lines.push(`step ${index} ${JSON.stringify(stepsOfScenario[index] ?? '')}: listener ${listener}: `
        + `${a.length} events expected, ${b.length} reported; first difference at its event ${first}:`);
      lines.push(`    expected (the SDK): ${describe(a[first])}`);
      lines.push(`    reported (core):    ${describe(b[first])}`);
    }
  }
  return lines.length ? lines.join('\n') : null;
}
