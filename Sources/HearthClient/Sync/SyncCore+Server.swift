import HearthCore

extension SyncCore {
    // MARK: - The connection's life

    /// A socket is about to open. False when offline by request (no socket should open).
    mutating func connecting() -> Bool {
        guard online else { return false }
        link = .connecting
        return true
    }

    /// The socket closed: listens and unanswered writes are sent again on the next connection;
    /// requests that cannot be sent again fail. Returns whether the connection had opened
    /// (the handshake came), so the caller can reset its backoff.
    mutating func disconnected() -> (opened: Bool, actions: [SyncAction]) {
        var actions: [SyncAction] = []
        let opened: Bool
        if case .open = link { opened = true } else { opened = false }
        link = .offline
        listens = [:]
        sentWrites = []
        tags = [:]
        authenticatedToken = nil
        let unanswered = requests.sorted { $0.key < $1.key }
        requests = [:]
        emit(tree.setInfo("connected", .bool(false)), &actions)
        publishStatus(&actions)
        let closed = HearthClientError(.unexpectedResponse, "The connection closed.")
        for (id, request) in unanswered {
            switch request {
            case .other(let callback): actions.append(.completeRequest(callback, .failure(closed)))
            case .get: actions.append(.completeGet(id, .failure(closed)))
            default: break
            }
        }
        return (opened, actions)
    }

    /// Goes offline (closing the socket) or back online.
    mutating func setOnline(_ online: Bool) -> [SyncAction] {
        self.online = online
        return online ? [] : [.closeConnection]
    }

    /// Ends for good (the database is going away): the socket closes and queued server data
    /// is saved.
    mutating func stop() -> [SyncAction] {
        online = false
        let batch = takeCacheBatch()
        return [.closeConnection] + (batch.isEmpty ? [] : [.saveCache(batch)])
    }

    /// The credential changed (sign-in, sign-out, a new token): nothing more is sent until the
    /// connection has authenticated again, so later writes are judged as the new user.
    mutating func credentialChanged() -> [SyncAction] {
        guard isReady else { return [] }
        link = .open(ready: false)
        var actions: [SyncAction] = []
        publishStatus(&actions)
        actions.append(.authenticate(forceRefresh: false, restoring: true))
        return actions
    }

    /// Sends the credential (or signs the connection out) if it changed, then, when
    /// `restoring` a new connection, every listen, every unanswered write in order, the
    /// queued onDisconnect requests and the queued reads.
    mutating func authenticate(credential: String?, restoring: Bool) -> [SyncAction] {
        guard link != .offline else { return [] }
        var actions: [SyncAction] = []
        if credential != authenticatedToken {
            let id = nextRequest
            nextRequest += 1
            requests[id] = .auth
            if let credential {
                let body = RealtimeMessage.object([("cred", RealtimeMessage.json(.string(credential)))])
                actions.append(.send(RealtimeMessage.request(id: id, action: "auth", body: body)))
            } else {
                actions.append(.send(RealtimeMessage.request(id: id, action: "unauth", body: "{}")))
            }
            authenticatedToken = credential
        }
        guard restoring, link == .open(ready: false) else { return actions }
        link = .open(ready: true)
        syncListens(&actions)
        for write in tree.writes where !sentWrites.contains(write.id) { send(write, &actions) }
        let queued = queuedRequests
        queuedRequests = []
        for request in queued { sendRequest(request.callback, request.action, body: request.body, &actions) }
        for get in queuedGets { actions.append(.send(get.message)) }
        queuedGets = []
        publishStatus(&actions)
        return actions
    }

    // MARK: - The server's messages

    /// Handles one message from the server.
    /// - Parameter now: this device's clock (milliseconds), to estimate the server's from the handshake.
    mutating func receive(_ message: RealtimeMessage, now: Int64) -> [SyncAction] {
        var actions: [SyncAction] = []
        switch message {
        case .handshake(let timestamp, let sessionID):
            guard link != .offline else { break }
            link = .open(ready: false)
            self.sessionID = sessionID ?? self.sessionID
            serverTimeOffset = timestamp - now
            emit(tree.setInfo("serverTimeOffset", .int(serverTimeOffset)), &actions)
            emit(tree.setInfo("connected", .bool(true)), &actions)
            actions.append(.authenticate(forceRefresh: false, restoring: true))
        case .response(let id, let status, let data):
            guard let request = requests.removeValue(forKey: id) else { break }
            respond(to: request, id: id, status: status, data: data, &actions)
        case .data(let path, let value, let tag):
            guard let key = taggedView(tag) else { break }
            emit(tree.applyServerOverwrite(value, at: path, tag: key), &actions)
            if let key {
                queueCache(.window(key, tree.views[key]?.window.node ?? .null), &actions)
            } else {
                queueCache(.value(path, value), &actions)
            }
        case .merge(let path, let children, let tag):
            guard let key = taggedView(tag) else { break }
            emit(tree.applyServerMerge(children, at: path, tag: key), &actions)
            if let key {
                queueCache(.window(key, tree.views[key]?.window.node ?? .null), &actions)
            } else {
                for child in children { queueCache(.value(path.appending(child.path), child.value), &actions) }
            }
        case .listenRevoked(let path, let query):
            let candidates = listens.keys.sorted { $0.description < $1.description }
            let key = candidates.first { $0.path == path && ($0.isDefault ? query == nil : $0.identifier == query) }
                ?? candidates.first { $0.path == path }
            if let key { revoke(key, error: HearthClientError(.permissionDenied, "Permission denied"), &actions) }
        case .authRevoked:
            actions.append(.authenticate(forceRefresh: true, restoring: false))
        case .reset:
            actions.append(.closeConnection)
        case .ignored:
            break
        }
        return actions
    }

    /// The answer to one request. Answers come after the events the same message caused (a
    /// refused write's undoing first), as Firebase's SDKs call completions after raising events.
    private mutating func respond(to request: Request, id: Int64, status: String, data: Node, _ actions: inout [SyncAction]) {
        func result() -> Result<Void, HearthClientError> {
            status == "ok" ? .success(()) : .failure(Self.error(status: status, message: Self.text(data)))
        }
        switch request {
        case .listen(let key):
            guard listens[key] != nil else { return }
            if status == "ok" {
                emit(tree.completeListen(key), &actions)
                if key.isDefault || tree.views[key] != nil { queueCache(.complete(key), &actions) }
            } else {
                revoke(key, error: Self.error(status: status, message: Self.text(data)), &actions)
            }
        case .write(let writeID):
            emit(tree.removeWrite(writeID), &actions)
            if hasCache { actions.append(.removeSavedWrite(writeID)) }
            publishStatus(&actions)
            if let transaction = transactionWrites.removeValue(forKey: writeID) {
                finishTransaction(transaction, status: status, message: Self.text(data), &actions)
            } else {
                actions.append(.completeWrite(writeID, result()))
            }
        case .auth:
            break
        case .get(let key):
            if status == "ok" {
                // An unfiltered answer is kept, so the next launch can show it offline.
                if key.isDefault {
                    queueCache(.value(key.path, data), &actions)
                    queueCache(.complete(key), &actions)
                }
                actions.append(.completeGet(id, .success(data)))
            } else {
                actions.append(.completeGet(id, .failure(Self.error(status: status, message: Self.text(data)))))
            }
        case .other(let callback):
            actions.append(.completeRequest(callback, result()))
        }
    }

    /// The view a tagged push is for: `.some(nil)` for an untagged push, nil for a tag no
    /// longer listened (the push is dropped).
    private func taggedView(_ tag: Int64?) -> ViewKey?? {
        guard let tag else { return .some(nil) }
        return tags[tag].map { .some($0) }
    }

    // MARK: - Listens

    /// Asks the server for the listens the views need and drops the ones they no longer do.
    mutating func syncListens(_ actions: inout [SyncAction]) {
        guard isReady else { return }
        let needed = tree.neededListens
        for key in listens.keys.sorted(by: Self.listenOrder) where needed[key] == nil {
            let tag = listens.removeValue(forKey: key) ?? nil
            if let tag { tags[tag] = nil }
            let id = nextRequest
            nextRequest += 1
            var fields = [("p", RealtimeMessage.json(.string(RealtimeMessage.wirePath(key.path))))]
            if !key.isDefault { fields.append(("q", key.identifier)) }
            if let tag { fields.append(("t", String(tag))) }
            actions.append(.send(RealtimeMessage.request(id: id, action: "n", body: RealtimeMessage.object(fields))))
        }
        for (key, query) in needed.sorted(by: { Self.listenOrder($0.key, $1.key) }) where listens[key] == nil {
            var tag: Int64?
            if query != nil {
                let next = nextTag
                nextTag += 1
                tags[next] = key
                tag = next
            }
            listens[key] = tag
            let id = nextRequest
            nextRequest += 1
            requests[id] = .listen(key)
            var fields = [("p", RealtimeMessage.json(.string(RealtimeMessage.wirePath(key.path))))]
            fields.append(("q", key.isDefault ? "{}" : key.identifier))
            if let tag { fields.append(("t", String(tag))) }
            // The hash of complete data held here lets the server skip sending it again.
            var hash = ""
            if key.isDefault, tree.isCovered(key.path) {
                hash = tree.serverKnown(at: key.path).node.hash
            } else if let view = tree.views[key], view.window.complete {
                hash = view.window.node.hash
            }
            fields.append(("h", RealtimeMessage.json(.string(hash))))
            actions.append(.send(RealtimeMessage.request(id: id, action: "q", body: RealtimeMessage.object(fields))))
        }
    }

    /// Listens go to the server by path, then (at one path) by query, so a session's requests
    /// come in one order.
    private static func listenOrder(_ lhs: ViewKey, _ rhs: ViewKey) -> Bool {
        let order = Path.compare(lhs.path, rhs.path)
        return order != 0 ? order < 0 : lhs.identifier < rhs.identifier
    }

    /// A listen the server refused or ended: its views go, their listeners are told.
    mutating func revoke(_ key: ViewKey, error: HearthClientError, _ actions: inout [SyncAction]) {
        let tag = listens.removeValue(forKey: key) ?? nil
        if let tag { tags[tag] = nil }
        let affected = tree.views.keys.filter { key.isDefault ? $0.path == key.path : $0 == key }.sorted(by: Self.listenOrder)
        var cancelled: [Int] = []
        for view in affected {
            cancelled += tree.removeView(view).map(\.id)
        }
        syncListens(&actions)
        if !cancelled.isEmpty { actions.append(.cancel(cancelled, error)) }
    }
}
