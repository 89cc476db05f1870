// Replays a recorded transcript (Tests/Events/recorded/*.json; the format is in the README
// there) against the sync core: the local client's calls are made on a CoreDriver, and the
// server's messages to the official SDK are played to the core as a scripted server:
//
// - Each request the SDK sent is paired with the core's request of the same kind: the same
//   action and path; for a listen (`q`, `n`) also tagged or not, the same index (`i`) and
//   limit (`l`, `vf`) (the SDK writes ranges its own way: `[MAX_NAME]` for startAfter, and so
//   on); for a write, the same data. Pairs are made in order, as requests are sent.
// - The server's answer to an SDK request goes to its pair under the core's request number;
//   one whose request has no pair (the SDK's `s` statistics, say) is dropped.
// - A push for a tagged listen goes out with the core's tag of the paired listen.
// - The connection opens where the transcript's local socket has its handshake, and ends
//   where the core asks (goOffline) or the transcript's socket closes.

import { readFileSync, readdirSync } from 'node:fs';
import { queryCalls } from '../Events/driver.js';
import { canonicalJSON } from './compare.mjs';
import { CoreDriver } from './core-driver.mjs';

export const RECORDED = new URL('../Events/recorded/', import.meta.url);

/// Every transcript, by scenario name, in name order.
export function loadTranscripts() {
  return readdirSync(RECORDED).filter((name) => name.endsWith('.json')).sort()
    .map((name) => JSON.parse(readFileSync(new URL(name, RECORDED), 'utf8')));
}


/// Data as the server reads it: an array is an object keyed "0", "1"… (the SDK sends arrays so).
function asStored(value) {
  if (value === null || typeof value !== 'object') return value;
  const entries = Array.isArray(value) ? value.map((item, index) => [String(index), item]) : Object.entries(value);
  return Object.fromEntries(entries.map(([key, item]) => [key, asStored(item)]));
}

function trimSlashes(path) { return String(path ?? '').replace(/^\/+|\/+$/g, ''); }

/// What pairs an SDK request with a core request.
function pairingKey(action, body) {
  const path = trimSlashes(body?.p);
  if (action === 'q' || action === 'n') {
    const q = body.q ?? {};
    return `${action}|${path}|${body.t !== undefined && body.t !== null ? 'tagged' : 'whole'}|${q.i ?? ''}|${q.l ?? ''}|${q.vf ?? ''}`;
  }
  if (action === 'p' || action === 'm') return `${action}|${path}|${canonicalJSON(asStored(body.d ?? null))}`;
  return `${action}|${path}`;
}

/// One replay of one transcript. `run()` answers { steps: [[event…] per step], errors,
/// dropped: [answers and pushes that had no pair], results: [{of, error}], diverged }.
export class Replay {
  constructor(transcript) {
    this.transcript = transcript;
    this.driver = new CoreDriver({ now: firstHandshakeTime(transcript) ?? 1_700_000_000_000 });
    this.steps = transcript.steps.map(() => []);
    this.errors = transcript.steps.map(() => null);
    this.current = -1;
    this.dropped = [];
    this.results = [];
    /// Where the script stopped answering the core as the server would have ({step, reason}), or null.
    this.diverged = null;
    this._sdkRequests = new Map();  // SDK request number → { key, message, pair (core request) }
    this._unpairedSdk = [];         // SDK requests waiting for the core's
    this._unpairedCore = [];        // core requests waiting for the SDK's
    this._waitingAnswers = [];      // SDK answers whose request is not paired yet
    this._tagOfSdkTag = new Map();
    this._coreRequests = new Map(); // core request → its send effect
    this._connected = false;
    this._listeners = new Map();
    this.driver.onSend = (effect) => this._coreSent(effect);
    this.driver.onConnectionWish = (wish) => {
      if (wish === 'disconnect' && this._connected) {
        this._connected = false;
        this.driver.disconnect();
      }
    };
  }

  run() {
    const { transcript } = this;
    for (const item of transcript.setup ?? []) this._play(item);
    for (const step of transcript.steps) {
      this.current = step.index;
      for (const item of step.timeline) {
        try {
          this._play(item);
        } catch (error) {
          this.errors[step.index] ??= `${error?.message ?? error} (at seq ${item.seq})`;
        }
      }
    }
    this.current = -1;
    return { steps: this.steps, errors: this.errors, dropped: this.dropped, results: this.results, diverged: this.diverged };
  }

  _play(item) {
    switch (item.kind) {
      case 'call':
        if (item.conn === 'local') this._call(item);
        return;
      case 'receive':
        if (item.conn === 'local') this._receive(item.message);
        return;
      case 'send':
        if (item.conn === 'local') this._sdkSent(item.message);
        return;
      case 'close':
        if (item.conn === 'local' && this._connected) {
          this._connected = false;
          this.driver.disconnect();
        }
        return;
      default:
        // open, event, result: nothing to play (events and results are what is compared).
    }
  }

  // MARK: - The local client's calls, through the library's own API

  _call({ seq, call }) {
    const db = this.driver.db;
    const written = (promise) => promise.then(
      () => this.results.push({ of: seq, error: null }),
      (error) => this.results.push({ of: seq, error: String(error?.message ?? error) }),
    );
    switch (call.do) {
      case 'listen': {
        let target = db.ref(call.path);
        for (const [name, ...args] of queryCalls(call.query ?? {})) target = target[name](...args);
        const registered = [];
        for (const type of call.events) {
          const callback = (snapshot, prev) => this._event(call.id, type, snapshot.key, prev, snapshot.exportVal());
          target.on(type, callback, () => this._event(call.id, 'cancel', null, null, null));
          registered.push([type, callback]);
        }
        this._listeners.set(call.id, [target, registered]);
        return;
      }
      case 'unlisten': {
        const [target, registered] = this._listeners.get(call.id) ?? [null, []];
        for (const [type, callback] of registered) target.off(type, callback);
        this._listeners.delete(call.id);
        return;
      }
      case 'set':
        written(call.priority === undefined ? db.ref(call.path).set(call.value ?? null)
          : db.ref(call.path).setWithPriority(call.value, call.priority));
        return;
      case 'update': written(db.ref(call.path).update(call.value)); return;
      case 'remove': written(db.ref(call.path).remove()); return;
      case 'setPriority': written(db.ref(call.path).setPriority(call.priority)); return;
      case 'transaction':
        written(db.ref(call.path).transaction((value) => (value ?? 0) + (call.increment ?? 1)));
        return;
      case 'offline': db.goOffline(); return;
      case 'online': db.goOnline(); return;
      default: throw new Error(`unknown call ${JSON.stringify(call)}`);
    }
  }

  // The same event object Tests/Events/driver.js records.
  _event(listener, type, key, prev, value) {
    const event = {
      listener, type, key: key ?? null,
      prev: type === 'value' || type === 'child_removed' || type === 'cancel' || prev === undefined ? null : prev,
      value: value === undefined ? null : value,
    };
    if (this.current >= 0) this.steps[this.current].push(JSON.parse(JSON.stringify(event)));
  }

  // MARK: - Pairing requests

  _sdkSent(message) {
    const data = message?.t === 'd' ? message.d : null;
    if (!data || typeof data.r !== 'number' || typeof data.a !== 'string') return;
    const entry = { r: data.r, key: pairingKey(data.a, data.b), message: data, pair: null };
    this._sdkRequests.set(data.r, entry);
    const index = this._unpairedCore.findIndex((effect) => pairingKey(effect.action, effect.body) === entry.key);
    if (index >= 0) this._pair(entry, this._unpairedCore.splice(index, 1)[0]);
    else this._unpairedSdk.push(entry);
  }

  _coreSent(effect) {
    this._coreRequests.set(effect.request, effect);
    const key = pairingKey(effect.action, effect.body);
    const index = this._unpairedSdk.findIndex((entry) => entry.key === key);
    if (index >= 0) this._pair(this._unpairedSdk.splice(index, 1)[0], effect);
    else this._unpairedCore.push(effect);
  }

  _pair(entry, effect) {
    entry.pair = effect.request;
    const sdkTag = entry.message.b?.t;
    if (entry.message.a === 'q' && sdkTag !== undefined && sdkTag !== null) this._tagOfSdkTag.set(sdkTag, effect.body.t);
    // An answer that came before its pair was made is delivered now.
    const waiting = this._waitingAnswers.filter((answer) => answer.r === entry.r);
    for (const answer of waiting) {
      this._waitingAnswers.splice(this._waitingAnswers.indexOf(answer), 1);
      this._answer(answer);
    }
  }

  // MARK: - The server's messages

  _receive(message) {
    if (message?.t === 'c') {
      if (message.d?.t === 'h') {
        this._connected = true;
        this.driver.connect(Number(message.d.d?.ts) || this.driver.now);
      }
      return;
    }
    const data = message?.t === 'd' ? message.d : null;
    if (!data) return;
    if (typeof data.r === 'number') this._answer(data);
    else if (typeof data.a === 'string') this._push(data.a, data.b ?? {});
  }

  _answer(data) {
    const entry = this._sdkRequests.get(data.r);
    if (!entry) {
      this.dropped.push({ why: 'an answer to a request the SDK did not send', message: data });
      return;
    }
    if (entry.pair === null) {
      if (entry.message.a === 's') return; // the SDK's statistics: the core sends none
      this._waitingAnswers.push(data);
      return;
    }
    if (!this._connected) return;
    const ours = this._coreRequests.get(entry.pair);
    const sdkHash = entry.message.b?.h;
    if (entry.message.a === 'q' && sdkHash && sdkHash !== ours?.body?.h && this.diverged === null) {
      // The SDK's hash matched the server's data, so the server sent the SDK no data for this
      // listen; it would have sent the core (whose hash differs) that data, which the
      // transcript does not have. From here the script no longer answers the core.
      this.diverged = {
        step: this.current,
        reason: `the listen at ${entry.message.b.p} went with the hash of data the SDK had cached `
          + `("${sdkHash}"), the core's with "${ours?.body?.h ?? ''}": the server's answer to the SDK carried no data`,
      };
    }
    this.driver.answer(entry.pair, data.b?.s, data.b?.d ?? null);
  }

  _push(action, body) {
    const tag = body.t;
    if (tag !== undefined && tag !== null) {
      const coreTag = this._tagOfSdkTag.get(tag);
      if (coreTag === undefined) {
        this.dropped.push({ why: 'a push for a tagged listen the core did not make', message: { a: action, b: body } });
        return;
      }
      this.driver.push(action, { ...body, t: coreTag });
      return;
    }
    this.driver.push(action, body);
  }

  /// Requests of the core that the SDK never made (for a report).
  get unpairedCoreRequests() { return this._unpairedCore.filter((effect) => effect.expectsAnswer); }
}

function firstHandshakeTime(transcript) {
  for (const step of transcript.steps) {
    for (const item of step.timeline) {
      if (item.kind === 'receive' && item.conn === 'local' && item.message?.t === 'c' && item.message.d?.t === 'h') {
        return Number(item.message.d.d?.ts) || null;
      }
    }
  }
  return null;
}
