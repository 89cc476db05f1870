import Foundation
import HearthCore
import Synchronization

extension SyncEngine {
    /// What is done after the lock is let go: waits, credentials, disk writes in batches and
    /// transaction updates (user code) must not hold it.
    enum Deferred: Sendable {
        case arm(SyncTimer, Duration)
        case authenticate(forceRefresh: Bool, restoring: Bool)
        case saveCache([LocalCache.CacheUpdate])
        case runTransaction(Int)
        case answerGetFromCache(ViewKey, GetCompletion)
    }

    /// Runs `body` under the lock, then carries out the actions it returns: in order under the
    /// lock what must keep its order (messages, events, answers, saved writes), the rest after.
    /// - Parameter transactionsInline: a transaction's run asked for here happens in this
    ///   thread after the lock (a transaction's start, its timer, its own runs), not after the
    ///   events queued before it.
    @discardableResult
    func perform<T: Sendable>(transactionsInline: Bool = false, _ body: (inout State) -> (T, [SyncAction])) -> T {
        let (value, deferred) = collect(transactionsInline: transactionsInline, body)
        for item in deferred { run(item) }
        return value
    }

    /// ``perform(transactionsInline:_:)`` without the deferred part, which it returns.
    func collect<T: Sendable>(transactionsInline: Bool, _ body: (inout State) -> (T, [SyncAction])) -> (T, [Deferred]) {
        state.withLock { state -> (T, [Deferred]) in
            let (value, actions) = body(&state)
            var deferred: [Deferred] = []
            for action in actions { execute(action, &state, &deferred, transactionsInline: transactionsInline) }
            return (value, deferred)
        }
    }

    private func execute(_ action: SyncAction, _ state: inout State, _ deferred: inout [Deferred], transactionsInline: Bool) {
        switch action {
        case .send(let text):
            state.outbound?.yield(text)
        case .deliver(let events):
            let delivery = events.compactMap { event in state.listeners[event.registration]?.handler.map { ($0, event) } }
            guard !delivery.isEmpty else { return }
            callbacks.async { for (handler, event) in delivery { handler(event) } }
        case .cancel(let registrations, let error):
            let cancels = registrations.compactMap { state.listeners.removeValue(forKey: $0)?.cancel }
            guard !cancels.isEmpty else { return }
            callbacks.async { for cancel in cancels { cancel(error) } }
        case .completeWrite(let id, let result):
            guard let completion = state.writeCompletions.removeValue(forKey: id) else { return }
            callbacks.async { completion(result) }
        case .completeRequest(let id, let result):
            guard let completion = state.requestCompletions.removeValue(forKey: id) else { return }
            callbacks.async { completion(result) }
        case .completeGet(let id, let result):
            guard let completion = state.getCompletions.removeValue(forKey: id) else { return }
            callbacks.async { completion(result) }
        case .answerGetFromCache(let id, let key):
            guard let completion = state.getCompletions.removeValue(forKey: id) else { return }
            deferred.append(.answerGetFromCache(key, completion))
        case .runTransaction(let id):
            if transactionsInline {
                deferred.append(.runTransaction(id))
            } else {
                callbacks.async { self.runTransaction(id) }
            }
        case .completeTransaction(let id, let outcome):
            guard let transaction = state.transactions.removeValue(forKey: id) else { return }
            let result = outcome.map { (committed: $0.committed, value: $0.value) }
            callbacks.async { transaction.completion(result) }
        case .status(let status):
            let observers = Array(state.statusObservers.values)
            guard !observers.isEmpty else { return }
            callbacks.async { for observer in observers { observer(status) } }
        case .saveWrite(let write):
            try? cache?.saveWrite(write)
        case .removeSavedWrite(let id):
            try? cache?.removeWrite(id)
        case .saveCache(let batch):
            deferred.append(.saveCache(batch))
        case .arm(let timer, let delay):
            deferred.append(.arm(timer, delay))
        case .authenticate(let forceRefresh, let restoring):
            deferred.append(.authenticate(forceRefresh: forceRefresh, restoring: restoring))
        case .closeConnection:
            state.outbound?.finish()
        }
    }

    private func run(_ item: Deferred) {
        switch item {
        case .arm(let timer, let delay):
            Task.detached { [weak self] in
                try? await Task.sleep(for: delay)
                self?.perform(transactionsInline: true) { state in ((), state.core.timerFired(timer)) }
            }
        case .authenticate(let forceRefresh, let restoring):
            Task {
                let credential = await connection.credential(forceRefresh: forceRefresh)
                perform { state in ((), state.core.authenticate(credential: credential, restoring: restoring)) }
            }
        case .saveCache(let batch):
            try? cache?.save(batch)
        case .runTransaction(let id):
            runTransaction(id)
        case .answerGetFromCache(let key, let completion):
            getFromCache(key, completion: completion)
        }
    }

    /// Runs transaction `id`'s update (outside the lock) on what this device shows, and again
    /// while the value changes under it.
    func runTransaction(_ id: Int) {
        while true {
            let next = state.withLock { state -> (Node, TransactionCallbacks)? in
                guard let input = state.core.transactionInput(id), let callbacks = state.transactions[id] else { return nil }
                return (input, callbacks)
            }
            guard let (input, callbacks) = next else { return }
            let output = callbacks.update(input)
            let (_, deferred) = collect(transactionsInline: true) { state in
                ((), state.core.transactionRan(id, input: input, output: output, now: clock()))
            }
            var again = false
            for item in deferred {
                if case .runTransaction(id) = item { again = true } else { run(item) }
            }
            guard again else { return }
        }
    }
}
