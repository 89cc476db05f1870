// Words for what `GET /.hearth/functions` and its dead letters answer (docs/functions.md,
// "Operating functions"): a function's trigger, where it runs, its process and backlog, an
// attempt's result and duration. No DOM here, so Tests/WebUnit checks these in Node.js.

const DATABASE_EVENT = 'google.firebase.database.ref.v1.';
const STORAGE_EVENT = 'google.cloud.storage.object.v1.';
const STORAGE_CHANGES = { finalized: 'Object finalized', deleted: 'Object deleted', metadataUpdated: 'Object metadata updated' };

export const KIND_WORDS = { event: 'Event', callable: 'Callable', https: 'HTTPS', schedule: 'Schedule' };

const RUNS_IN_WORDS = { process: 'Its own process', webhook: 'A webhook', server: "The server's process (Swift)" };

/** An attempt's (or a scheduled run's) result: its label and tone (`ok`, `warn` or `bad`, for colour). */
const RESULTS = {
  delivered: { label: 'Delivered', tone: 'ok' },
  ok: { label: 'Succeeded', tone: 'ok' },
  failed: { label: 'Failed', tone: 'bad' },
  'dead-lettered': { label: 'Dead-lettered', tone: 'bad' },
  unreachable: { label: 'Unreachable', tone: 'warn' },
};

/**
 * What sets a function off, in words: "Value written at /posts/{postId} in any database",
 * "Object finalized in bucket b", "HTTPS requests to /us-central1/hello", "Runs * * * * * (UTC)".
 */
export function triggerWords(fn) {
  if (fn.kind === 'event' && fn.trigger.startsWith(DATABASE_EVENT)) {
    const change = fn.trigger.slice(DATABASE_EVENT.length);
    return `Value ${change} at /${(fn.ref ?? '').replace(/^\/+/, '')} in ${databaseWords(fn.instance)}`;
  }
  if (fn.kind === 'event' && fn.trigger.startsWith(STORAGE_EVENT)) {
    const change = fn.trigger.slice(STORAGE_EVENT.length);
    return `${STORAGE_CHANGES[change] ?? change} in bucket ${fn.instance}`;
  }
  if (fn.kind === 'https') return `HTTPS requests to ${fn.trigger}`;
  if (fn.kind === 'callable') return `Calls to ${fn.trigger}`;
  if (fn.kind === 'schedule') return `Runs ${fn.trigger}`;
  return fn.trigger;
}

/** An instance pattern (`*`, `default`, `shard-*`) as the databases it matches. */
function databaseWords(instance) {
  if (!instance || instance === '*') return 'any database';
  return instance.includes('*') ? `databases ${instance}` : `database ${instance}`;
}

export function runsInWords(fn) {
  return RUNS_IN_WORDS[fn.runsIn] ?? fn.runsIn ?? '—';
}

/** A function's process: "pid 4242, port 50001, restarted 2 times"; "—" for none. */
export function processWords(process) {
  if (!process) return '—';
  const restarts = Math.max(0, process.starts - 1);
  const state = process.pid != null ? `pid ${process.pid}` : process.starts ? 'Not running (starting again)' : 'Not started yet';
  const again = restarts ? `, restarted ${restarts} ${restarts === 1 ? 'time' : 'times'}` : '';
  return `${state}, port ${process.port}${again}`;
}

/** Counts by source (`{"database/default": 3}`) as "3 (database/default)"; "0" when none. */
export function backlogWords(counts) {
  const parts = Object.entries(counts ?? {}).filter(([, count]) => count > 0).sort(([a], [b]) => a.localeCompare(b))
    .map(([source, count]) => `${count.toLocaleString('en')} (${source})`);
  return parts.length ? parts.join(', ') : '0';
}

export function resultWords(result) {
  return RESULTS[result] ?? { label: result, tone: 'warn' };
}

/** "0.42 ms", "4.2 ms", "120 ms", "1.5 s", "12 s", "2 min 5 s". */
export function formatDuration(ms) {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 10) return `${seconds.toFixed(1)} s`;
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const whole = Math.round(seconds);
  return `${Math.floor(whole / 60)} min ${whole % 60} s`;
}

/** The latest attempts, newest first (the server lists them oldest first), of one function when named. */
export function latestInvocations(recent, name = null, limit = 50) {
  return (recent ?? []).filter((entry) => !name || entry.function === name).slice(-limit).reverse();
}

/** An event's stored body, indented for reading (as it was when it is not JSON). */
export function eventText(body) {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}
