import HearthCore

extension SyncCore {
    // MARK: - Writes

    /// Shows a write at once, has it saved, and sends it when connected; its answer comes as
    /// ``SyncAction/completeWrite(_:_:)`` with the returned number.
    /// - Parameter now: this device's clock (milliseconds), for server values shown locally.
    mutating func write(_ path: Path, _ change: PendingWrite.Change, now: Int64) -> (Result<Int64, HearthClientError>, [SyncAction]) {
        var actions: [SyncAction] = []
        let result = addWrite(path, change, hash: nil, visible: true, persist: true, now: now, &actions)
        return (result, actions)
    }

    /// Adds a pending write: a transaction's carries the hash the server's value must have and
    /// is neither saved (it is run again after a restart by nobody) nor always shown.
    mutating func addWrite(
        _ path: Path, _ change: PendingWrite.Change, hash: String?, visible: Bool, persist: Bool, now: Int64,
        _ actions: inout [SyncAction]
    ) -> Result<Int64, HearthClientError> {
        let local: PendingWrite.Change
        do throws(HearthError) {
            local = try resolve(change, at: path, now: now + serverTimeOffset)
        } catch {
            return .failure(HearthClientError(.badRequest, error.message))
        }
        let id = nextWrite
        nextWrite += 1
        let write = PendingWrite(id: id, path: path, change: change, local: local, visible: visible, hash: hash)
        if persist, hash == nil, hasCache { actions.append(.saveWrite(write)) }
        emit(tree.addWrite(write), &actions)
        if isReady { send(write, &actions) }
        publishStatus(&actions)
        return .success(id)
    }

    /// Server values resolved as the server would, from what this device shows and its
    /// estimate of the server's clock.
    private func resolve(_ change: PendingWrite.Change, at path: Path, now: Int64) throws(HearthError) -> PendingWrite.Change {
        switch change {
        case .set(let node):
            return .set(try ServerValues.resolve(node, existing: tree.visible(at: path).node, now: now))
        case .merge(let children):
            var resolved: [(path: Path, value: Node)] = []
            for child in children {
                let existing = tree.visible(at: path.appending(child.path)).node
                resolved.append((child.path, try ServerValues.resolve(child.value, existing: existing, now: now)))
            }
            return .merge(resolved)
        }
    }

    mutating func send(_ write: PendingWrite, _ actions: inout [SyncAction]) {
        sentWrites.insert(write.id)
        let id = nextRequest
        nextRequest += 1
        requests[id] = .write(write.id)
        var fields = [("p", RealtimeMessage.json(.string(RealtimeMessage.wirePath(write.path))))]
        let action: String
        switch write.change {
        case .set(let node):
            action = "p"
            fields.append(("d", RealtimeMessage.json(node)))
        case .merge(let children):
            action = "m"
            fields.append(("d", RealtimeMessage.object(children.map {
                ($0.path.keys.map(\.string).joined(separator: "/"), RealtimeMessage.json($0.value))
            })))
        }
        if let hash = write.hash { fields.append(("h", RealtimeMessage.json(.string(hash)))) }
        actions.append(.send(RealtimeMessage.request(id: id, action: action, body: RealtimeMessage.object(fields))))
    }

    // MARK: - onDisconnect

    /// Sends an onDisconnect request (`o`, `om`, `oc`) now, or when the connection is ready;
    /// its answer comes as ``SyncAction/completeRequest(_:_:)`` with the returned number.
    mutating func request(_ action: String, body: String) -> (Int, [SyncAction]) {
        let callback = nextCallback
        nextCallback += 1
        var actions: [SyncAction] = []
        if isReady {
            sendRequest(callback, action, body: body, &actions)
        } else {
            queuedRequests.append((callback, action, body))
        }
        return (callback, actions)
    }

    mutating func sendRequest(_ callback: Int, _ action: String, body: String, _ actions: inout [SyncAction]) {
        let id = nextRequest
        nextRequest += 1
        requests[id] = .other(callback)
        actions.append(.send(RealtimeMessage.request(id: id, action: action, body: body)))
    }

    // MARK: - Reads

    /// True when ``get(path:query:cacheHasCopy:)`` needs to know whether the device's cache
    /// holds the data (no local answer, online, not connected).
    func needsCacheCheck(forGet path: Path, query: Query?) -> Bool {
        localAnswer(ViewKey(path: path, query: query)) == nil && online && !isReady
    }

    /// Reads the value of `query` at `path`: from a complete local view when there is one,
    /// else from the server (`g`, queued until the connection is ready, for a few seconds at
    /// most), else from the device's cache.
    mutating func get(path: Path, query: Query?, cacheHasCopy: Bool) -> (GetStart, [SyncAction]) {
        let key = ViewKey(path: path, query: query)
        if let node = localAnswer(key) { return (.answered(node), []) }
        // Not connected: the device's copy answers at once when it has one.
        guard online, isReady || !cacheHasCopy else { return (.offline(key), []) }
        let id = nextRequest
        nextRequest += 1
        requests[id] = .get(key)
        let fields = [
            ("p", RealtimeMessage.json(.string(RealtimeMessage.wirePath(path)))), ("q", key.isDefault ? "{}" : key.identifier),
        ]
        let message = RealtimeMessage.request(id: id, action: "g", body: RealtimeMessage.object(fields))
        guard isReady else {
            queuedGets.append((id, message))
            // As Firebase's SDKs: a read waits a few seconds for the connection, then settles for the cache.
            return (.sent(id), [.arm(.getTimeout(id), after: Self.connectTimeout)])
        }
        return (.sent(id), [.send(message)])
    }

    private func localAnswer(_ key: ViewKey) -> Node? {
        if let view = tree.views[key], view.result.complete { return view.result.node }
        if key.isDefault, case let known = tree.visible(at: key.path), known.complete { return known.node }
        return nil
    }
}
