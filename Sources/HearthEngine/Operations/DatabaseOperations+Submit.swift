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
        if case .set(let path, _) = change, let condition {
            do {
                precondition = try conditionCheck(condition, at: path, on: database, auth: auth)
            } catch {
                return completion(.failure(error))
            }
        }
        database.submit(
            change.write, precondition: precondition, authorize: authorize, origin: auth.writeOrigin, completion: completion)
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

    /// The check of a conditional write, run by the writer after the write rules admitted it:
    /// the caller must also be allowed to read the location, since the answer tells whether
    /// its value has a given hash (and a failed REST condition carries the value). Someone who
    /// may write but not read gets `Permission denied` whatever the value is.
    func conditionCheck(
        _ condition: Condition, at path: Path, on database: Database, auth: RequestAuth
    ) throws -> @Sendable (DatabaseState) throws -> Void {
        let compare = Self.precondition(condition, at: path)
        guard case .rules(let authVariable, _) = auth else { return compare }
        let registry = self.rules
        let loaded = try registry.rules(for: database)
        let metrics = self.metrics
        let name = database.name
        let clock = self.clock
        return { state in
            let rules = registry.loadedRules(named: name) ?? loaded
            let requester = SecurityRules.Requester(auth: authVariable, now: clock())
            guard rules.read(path, by: requester, root: state.root) != nil else {
                metrics.denied(database: name, access: "read")
                throw HearthError.permissionDeniedByRules
            }
            try compare(state)
        }
    }

    /// Throws `Permission denied` when the rules refuse every write of `kind` at `path` by
    /// `auth` whatever its data (see ``HearthRules/SecurityRules/writeMayBeGranted(at:by:kind:)``):
    /// asked before a transport reads a body, so a refused outsider cannot make the server
    /// buffer and parse one. Passing it decides nothing; the write is judged in full later.
    public func refuseEarly(_ kind: SecurityRules.WriteKind, at path: Path, on database: Database, auth: RequestAuth) throws {
        guard case .rules(let authVariable, _) = auth else { return }
        let rules = try self.rules.rules(for: database)
        guard rules.writeMayBeGranted(at: path, by: .init(auth: authVariable, now: clock()), kind: kind) else {
            metrics.denied(database: database.name, access: "write")
            throw HearthError.permissionDeniedByRules
        }
    }
}
