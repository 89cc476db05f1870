// Transactions (Firebase's algorithm): the update function runs on the value this client
// sees, its result is applied locally, and the server is asked to set it only if the value
// there still has the hash of what the function saw. When it does not (`datastale`), the
// function runs again on the newer value the server has sent meanwhile. Transactions at one
// location go to the server together, in order, one batch at a time. Part of the sync core
// (sync-core.js): it sends and settles through the core's effects.

import { HearthError } from '../hearth-error.js';
import { pathString, valueProblem } from './path.js';
import { resolveServerValues } from './server-values.js';
import { Node } from './node.js';

const MAX_RETRIES = 25;

/// The transactions of one database.
export class TransactionQueue {
  /// @param {import('./sync-core.js').SyncCore} core
  constructor(core) {
    this._core = core;
    /// pathString → { path, items: transactions in order, inFlight }
    this._queues = new Map();
  }

  /// Runs `update` at `ref` until the server takes its result or it aborts; then answers a
  /// `transactionDone` effect for `ticket`.
  start(ref, update, applyLocally, ticket) {
    const core = this._core;
    const path = ref._path;
    const key = pathString(path);
    let queue = this._queues.get(key);
    if (!queue) {
      queue = { path, items: [], inFlight: false };
      this._queues.set(key, queue);
    }
    const transaction = {
      ref, update, applyLocally, ticket, status: 'run', retries: 0, writeId: null, data: null, output: null,
      // The location stays listened to meanwhile, so a retry runs on the server's newest value.
      listener: core.addListener(ref, 'value', () => {}),
    };
    const input = core.latest(path);
    const outcome = this._run(transaction, input);
    if (outcome !== true) {
      this._cleanUp(queue);
      this._finish(transaction, outcome, false, input);
      return;
    }
    transaction.writeId = core.addWrite(path, 'set', transaction.data, [[path, transaction.output]], {
      transaction: true, visible: applyLocally,
    });
    queue.items.push(transaction);
    this._send(queue);
  }

  /// The connection is ready: send what waits.
  connected() {
    for (const queue of this._queues.values()) this._send(queue);
  }

  /// The connection ended: what was sent is unanswered and goes again (rerun) when it is back.
  disconnected() {
    for (const queue of this._queues.values()) {
      if (!queue.inFlight) continue;
      queue.inFlight = false;
      for (const transaction of queue.items) if (transaction.status === 'sent') transaction.status = 'run';
    }
  }

  /// Runs the update function: true, or how it ended (null: aborted; an error: it failed).
  _run(transaction, input) {
    let result;
    try {
      result = transaction.update(input.val());
    } catch (error) {
      return error;
    }
    if (result === undefined) return null;
    const problem = valueProblem(result);
    if (problem) return new HearthError('invalid', `That cannot be saved: ${problem}`);
    const resolved = resolveServerValues(result, this._core.serverNow(), (relative) => input.at(relative));
    transaction.data = result;
    transaction.output = Node.fromJSON(resolved);
    return true;
  }

  _send(queue) {
    const core = this._core;
    if (queue.inFlight || !core.isConnected || queue.items.length === 0) return;
    if (queue.items.some((transaction) => transaction.status !== 'run')) return;
    const ids = new Set(queue.items.map((transaction) => transaction.writeId));
    const hash = core.latest(queue.path, ids).hash();
    // Each ran on the one before: the last one's value is the batch's result.
    const data = queue.items[queue.items.length - 1].data;
    for (const transaction of queue.items) transaction.status = 'sent';
    queue.inFlight = true;
    // If the connection goes first, `disconnected` puts them back to run.
    core._request('p', { p: pathString(queue.path), d: data, h: hash }, { answer: (answer) => this._answered(queue, answer) });
  }

  _answered(queue, { status, data }) {
    if (!queue.inFlight) return;
    queue.inFlight = false;
    const core = this._core;
    const sent = queue.items.filter((transaction) => transaction.status === 'sent');
    if (status === 'datastale') {
      for (const transaction of sent) transaction.status = 'run';
      this._rerun(queue);
      return;
    }
    queue.items = queue.items.filter((transaction) => transaction.status !== 'sent');
    const error = status === 'ok' ? null : HearthError.fromRealtime(status, data);
    for (const transaction of sent) core.removeWrite(transaction.writeId, { quiet: true });
    core.refresh(queue.path);
    // Each committed transaction reports the value it wrote (as Firebase's).
    for (const transaction of sent) this._finish(transaction, error, status === 'ok', transaction.output);
    this._cleanUp(queue);
    this._send(queue);
  }

  /// After `datastale`: every waiting transaction runs again, in order, on the newest value
  /// (each on the result of the one before), and the batch is sent again.
  _rerun(queue) {
    const core = this._core;
    const ids = new Set(queue.items.map((transaction) => transaction.writeId));
    let current = core.latest(queue.path, ids);
    const finished = [];
    for (const transaction of [...queue.items]) {
      core.removeWrite(transaction.writeId, { quiet: true });
      transaction.writeId = null;
      transaction.retries += 1;
      const outcome = transaction.retries > MAX_RETRIES
        ? new HearthError('conflict', 'Too many people changed this at once. Try again.')
        : this._run(transaction, current);
      if (outcome !== true) {
        queue.items.splice(queue.items.indexOf(transaction), 1);
        finished.push([transaction, outcome, current]);
        continue;
      }
      transaction.writeId = core.addWrite(queue.path, 'set', transaction.data, [[queue.path, transaction.output]], {
        transaction: true, visible: transaction.applyLocally, quiet: true,
      });
      current = transaction.output;
    }
    core.refresh(queue.path);
    for (const [transaction, outcome, value] of finished) this._finish(transaction, outcome, false, value);
    this._cleanUp(queue);
    this._send(queue);
  }

  _finish(transaction, error, committed, node) {
    const core = this._core;
    core.removeRegistration(transaction.ref, transaction.listener);
    const snapshot = core.snapshot(transaction.ref, node);
    core._emit({ type: 'transactionDone', ticket: transaction.ticket, error: error ?? null, committed, snapshot });
  }

  _cleanUp(queue) {
    if (queue.items.length === 0 && !queue.inFlight) this._queues.delete(pathString(queue.path));
  }
}
