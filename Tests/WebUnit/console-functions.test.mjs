// The console's words for functions (console/functions/words.js): triggers, where a function
// runs, its process and backlog, results, durations, the latest invocations and event bodies.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  backlogWords, eventText, formatDuration, latestInvocations, processWords, resultWords, runsInWords, triggerWords,
} from '../../Sources/HearthWeb/Resources/console/functions/words.js';

test('triggerWords says what sets each kind of function off', () => {
  const database = { kind: 'event', trigger: 'google.firebase.database.ref.v1.written', ref: 'posts/{postId}', instance: '*' };
  assert.equal(triggerWords(database), 'Value written at /posts/{postId} in any database');
  assert.equal(triggerWords({ ...database, trigger: 'google.firebase.database.ref.v1.created', ref: '/messages/{id}',
    instance: 'default' }), 'Value created at /messages/{id} in database default');
  assert.equal(triggerWords({ ...database, instance: 'shard-*' }), 'Value written at /posts/{postId} in databases shard-*');
  assert.equal(triggerWords({ kind: 'event', trigger: 'google.cloud.storage.object.v1.metadataUpdated', instance: 'p.appspot.com' }),
    'Object metadata updated in bucket p.appspot.com');
  assert.equal(triggerWords({ kind: 'https', trigger: '/us-central1/hello' }), 'HTTPS requests to /us-central1/hello');
  assert.equal(triggerWords({ kind: 'callable', trigger: '/us-central1/add' }), 'Calls to /us-central1/add');
  assert.equal(triggerWords({ kind: 'schedule', trigger: '* * * * * (Europe/Paris)' }), 'Runs * * * * * (Europe/Paris)');
  assert.equal(triggerWords({ kind: 'event', trigger: 'com.example.other' }), 'com.example.other');
});

test('runsInWords and processWords: where it runs, its pid, port and restarts', () => {
  assert.equal(runsInWords({ runsIn: 'process' }), 'Its own process');
  assert.equal(runsInWords({ runsIn: 'webhook' }), 'A webhook');
  assert.equal(runsInWords({ runsIn: 'server' }), "The server's process (Swift)");
  assert.equal(processWords(null), '—');
  assert.equal(processWords({ pid: 4242, starts: 1, port: 50001 }), 'pid 4242, port 50001');
  assert.equal(processWords({ pid: 4243, starts: 2, port: 50001 }), 'pid 4243, port 50001, restarted 1 time');
  assert.equal(processWords({ pid: 4244, starts: 4, port: 50001 }), 'pid 4244, port 50001, restarted 3 times');
  assert.equal(processWords({ pid: null, starts: 2, port: 50001 }), 'Not running (starting again), port 50001, restarted 1 time');
  assert.equal(processWords({ starts: 0, port: 50001 }), 'Not started yet, port 50001');
});

test('backlogWords lists the sources with events, by name, or says 0', () => {
  assert.equal(backlogWords({}), '0');
  assert.equal(backlogWords(undefined), '0');
  assert.equal(backlogWords({ 'database/default': 0 }), '0');
  assert.equal(backlogWords({ files: 2, 'database/default': 1200 }), '1,200 (database/default), 2 (files)');
});

test('resultWords gives each result a label and a tone; an unknown one is shown as is', () => {
  assert.deepEqual(resultWords('delivered'), { label: 'Delivered', tone: 'ok' });
  assert.deepEqual(resultWords('ok'), { label: 'Succeeded', tone: 'ok' });
  assert.deepEqual(resultWords('failed'), { label: 'Failed', tone: 'bad' });
  assert.deepEqual(resultWords('dead-lettered'), { label: 'Dead-lettered', tone: 'bad' });
  assert.deepEqual(resultWords('unreachable'), { label: 'Unreachable', tone: 'warn' });
  assert.deepEqual(resultWords('strange'), { label: 'strange', tone: 'warn' });
});

test('formatDuration keeps a few significant figures, up to minutes', () => {
  assert.equal(formatDuration(0.423), '0.42 ms');
  assert.equal(formatDuration(4.25), '4.3 ms');
  assert.equal(formatDuration(120.4), '120 ms');
  assert.equal(formatDuration(1500), '1.5 s');
  assert.equal(formatDuration(12_400), '12 s');
  assert.equal(formatDuration(125_000), '2 min 5 s');
  assert.equal(formatDuration(-1), '—');
  assert.equal(formatDuration(undefined), '—');
});

test('latestInvocations puts the newest first, of one function when named, at most limit', () => {
  const recent = [1, 2, 3, 4, 5].map((n) => ({ function: n % 2 ? 'odd' : 'even', time: n }));
  assert.deepEqual(latestInvocations(recent).map((entry) => entry.time), [5, 4, 3, 2, 1]);
  assert.deepEqual(latestInvocations(recent, 'odd').map((entry) => entry.time), [5, 3, 1]);
  assert.deepEqual(latestInvocations(recent, null, 2).map((entry) => entry.time), [5, 4]);
  assert.deepEqual(latestInvocations(undefined, 'odd'), []);
});

test('eventText indents a JSON body and leaves anything else as it is', () => {
  assert.equal(eventText('{"id":"e1","data":{"a":1}}'), '{\n  "id": "e1",\n  "data": {\n    "a": 1\n  }\n}');
  assert.equal(eventText('not json'), 'not json');
});
