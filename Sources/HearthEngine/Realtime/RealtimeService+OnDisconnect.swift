import HearthAuth
import HearthCore
import HearthStore
import Logging

/// Running onDisconnect operations: when their session ends, or later, when the server (or a
/// cluster node) stopped before they could run.
///
/// An operation was judged by the rules when it was queued, possibly long ago. It runs as the
/// identity that queued it, judged again by the rules in force and against the data of the
/// moment it runs (`.validate` included), so that it never outlives what allowed it: a user
/// who was blocked, a target deleted, stricter rules deployed. The operations of an account
/// disabled or deleted since are dropped.
extension RealtimeService {
    /// How a record keeps who queued it: nil for an admin, else `{"auth": <the rules' auth>}`,
    /// with `"unsigned": true` when it names no account (an emulator's test token, an admin's
    /// auth override; the key kept from when only test tokens had it).
    static func storedIdentity(of auth: RequestAuth, hasNoAccount: Bool) -> [UInt8]? {
        guard case .rules(let variable, _) = auth else { return nil }
        var fields: [(ChildKey, Node)] = [(ChildKey("auth"), variable)]
        if hasNoAccount { fields.append((ChildKey("unsigned"), .bool(true))) }
        return JSONWriter.bytes(.object(fields))
    }

    /// Who runs a kept operation, or nil when it must not run (its account is gone or disabled).
    func identity(of record: DisconnectQueueStore.Record) async throws -> RequestAuth? {
        guard let stored = record.auth else { return .admin }
        let identity = try JSONParser.parse(stored).node
        let variable = identity.child(ChildKey("auth"))
        guard case .string(let uid) = variable.child(ChildKey("uid")).unprioritized else {
            // Signed out (`null`), or no user behind it.
            return .rules(auth: variable, expires: nil)
        }
        let account = try await accounts.user(uid: uid)
        if account?.disabled == true { return nil }
        // An ID token this server signed names an account: gone means deleted. An emulator's
        // test token or an admin's override names users that may have none.
        let unsigned = identity.child(ChildKey("unsigned")) == .bool(true)
        if account == nil && !unsigned { return nil }
        return .rules(auth: variable, expires: nil)
    }

    /// Runs kept onDisconnect operations in order, each as one write (server values resolve
    /// now), as the identity that queued it.
    func apply(_ records: [DisconnectQueueStore.Record]) async {
        for record in records {
            do {
                guard let auth = try await identity(of: record) else {
                    logger.info("dropped an onDisconnect operation of a disabled or deleted account", metadata: [
                        "database": "\(record.database)", "path": "\(record.path)",
                    ])
                    continue
                }
                let database = try await operations.database(named: record.database, creating: false)
                let path = try Path(parsing: record.path)
                let change: DatabaseOperations.Change =
                    record.kind == "update"
                    ? .update(path, try JSONParser.parseUpdate(record.data)) : .set(path, try JSONParser.parse(record.data))
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    operations.submit(change, to: database, auth: auth) { result in
                        continuation.resume(with: result.map { _ in () })
                    }
                }
            } catch {
                logger.warning("an onDisconnect operation failed", metadata: [
                    "database": "\(record.database)", "path": "\(record.path)", "error": "\(error)",
                ])
            }
        }
    }

    /// Applies the onDisconnect operations that sessions of an earlier run left (the server
    /// stopped before they could run), in each session's order, then forgets them.
    public func applyLeftoverDisconnects() async {
        let records: [DisconnectQueueStore.Record]
        do {
            records = try await disconnects.leftovers()
        } catch {
            logger.error("could not read the onDisconnect queue", metadata: ["error": "\(error)"])
            return
        }
        await applyDisconnects(records, of: "the previous run")
    }

    /// Applies onDisconnect operations whose sessions are gone (left by an earlier run, or by
    /// a cluster node that died), each session's in order, then forgets them.
    public func applyDisconnects(_ records: [DisconnectQueueStore.Record], of owner: String) async {
        guard !records.isEmpty else { return }
        var bySession: [String: [DisconnectQueueStore.Record]] = [:]
        for record in records { bySession[record.session, default: []].append(record) }
        for (session, queued) in bySession {
            await apply(queued)
            try? await disconnects.remove(session: session)
        }
        logger.info("applied onDisconnect operations left by \(owner)", metadata: ["operations": "\(records.count)"])
    }
}
