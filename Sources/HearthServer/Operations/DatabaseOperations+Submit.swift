import HearthCore
import HearthRules
import HearthStore

extension DatabaseOperations {
    /// A write as a transport asks for it.
    enum Change: Sendable {
        case set(Path, JSONParser.Parsed)
        case update(Path, [(path: Path, value: JSONParser.Parsed)])

        var write: Write {
            switch self {
            case .set(let path, let value): return .set(path, value)
            case .update(let path, let entries): return .update(path, entries)
            }
        }
    }

    /// Queues `change` at once, behind every write queued before it, and reports the outcome
    /// to `completion` when it is durable: the same checks as ``set(_:at:to:auth:condition:)``,
    /// for a transport that pipelines a connection's writes in order without waiting for each.
    func submit(
        _ change: Change, to database: Database, auth: RequestAuth, condition: Condition? = nil,
        completion: @escaping Database.Completion
    ) {
        let authorize: Database.Authorization?
        do {
            authorize = try writeAuthorization(for: auth, on: database)
        } catch {
            return completion(.failure(error))
        }
        var precondition: (@Sendable (DatabaseState) throws -> Void)?
        if case .set(let path, _) = change, let condition { precondition = Self.precondition(condition, at: path) }
        database.submit(change.write, precondition: precondition, authorize: authorize, completion: completion)
    }

    /// Checks, without writing, that the rules would let `auth` make `change` now and that it
    /// is valid data (onDisconnect operations are judged when they are queued).
    /// - Throws: `Permission denied`, or the write's own error.
    func check(_ change: Change, on database: Database, auth: RequestAuth) throws {
        let now = clock()
        let before = database.current.state
        let (after, resolved) = try before.applying(change.write, now: now)
        try writeAuthorization(for: auth, on: database)?(before, after, resolved, now)
    }
}
