import HearthCore

extension SyncCore {
    /// Starts a transaction at `path`: a listen keeps the value here up to date while it runs.
    /// Its first run (``SyncAction/runTransaction(_:)``) is asked for at once when offline or
    /// with the value known; connected without it, when the server's value comes or after
    /// ``connectTimeout``, rather than guessing from nothing (as Firebase's SDKs).
    /// - Parameter cached: the cache's data for the location (see ``cacheKeyToLoad(path:query:)``).
    mutating func startTransaction(at path: Path, applyLocally: Bool, cached: Node?) -> (Int, [SyncAction]) {
        let id = nextCallback
        nextCallback += 1
        let waiting = isReady && !tree.visible(at: path).complete
        let registration = nextRegistration
        nextRegistration += 1
        transactions[id] = Transaction(path: path, applyLocally: applyLocally, registration: registration, waiting: waiting)
        transactionRegistrations[registration] = id
        var actions: [SyncAction] = []
        register(registration, path: path, query: nil, types: waiting ? [.value] : [], cached: cached, &actions)
        if waiting {
            // Unless the value was already known after all (from the cache) and the run asked for.
            if transactions[id]?.waiting == true { actions.append(.arm(.transactionStart(id), after: Self.connectTimeout)) }
        } else {
            transactions[id]?.waiting = false
            actions.append(.runTransaction(id))
        }
        return (id, actions)
    }

    /// The value a run of transaction `id`'s update starts from: what this device shows now.
    func transactionInput(_ id: Int) -> Node? {
        transactions[id].map { tree.visible(at: $0.path).node }
    }

    /// Transaction `id`'s update ran on `input` and gave `output` (nil: abort). Sends the
    /// result on the condition that the server's value is still `input` (its hash), or asks
    /// for another run when the value changed here meanwhile.
    mutating func transactionRan(_ id: Int, input: Node, output: Node?, now: Int64) -> [SyncAction] {
        guard var transaction = transactions[id] else { return [] }
        var actions: [SyncAction] = []
        guard let output else {
            endTransaction(id, .success(TransactionOutcome(committed: false, value: input)), &actions)
            return actions
        }
        transaction.attempts += 1
        transactions[id] = transaction
        // Someone changed the value while `update` ran: run it again on the new one.
        guard tree.visible(at: transaction.path).node == input else { return [.runTransaction(id)] }
        let result = addWrite(
            transaction.path, .set(output), hash: input.hash, visible: transaction.applyLocally, persist: false, now: now, &actions)
        switch result {
        case .failure(let error):
            endTransaction(id, .failure(error), &actions)
        case .success(let writeID):
            transactionWrites[writeID] = id
        }
        return actions
    }

    /// The server answered a transaction's write: done, or run again on the newer value the
    /// server has sent (up to ``maxTransactionAttempts`` runs).
    mutating func finishTransaction(_ id: Int, status: String, message: String, _ actions: inout [SyncAction]) {
        guard let transaction = transactions[id] else { return }
        if status == "ok" {
            let value = tree.visible(at: transaction.path).node
            endTransaction(id, .success(TransactionOutcome(committed: true, value: value)), &actions)
        } else if status == "datastale", transaction.attempts < Self.maxTransactionAttempts {
            actions.append(.runTransaction(id))
        } else {
            let error = status == "datastale"
                ? HearthClientError(.transactionConflict, "The transaction gave up after \(transaction.attempts) conflicting writes.")
                : Self.error(status: status, message: message)
            endTransaction(id, .failure(error), &actions)
        }
    }

    private mutating func endTransaction(
        _ id: Int, _ outcome: Result<TransactionOutcome, HearthClientError>, _ actions: inout [SyncAction]
    ) {
        guard let transaction = transactions.removeValue(forKey: id) else { return }
        transactionRegistrations[transaction.registration] = nil
        tree.removeRegistration(transaction.registration)
        syncListens(&actions)
        actions.append(.completeTransaction(id, outcome))
    }
}
