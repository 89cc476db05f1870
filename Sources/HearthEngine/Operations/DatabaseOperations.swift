import HearthCore
import HearthRules
import HearthStore
import Logging

/// What a client may do with a database, decided once for every transport: reads and query
/// answers (with the cache of recent answers), writes (set, update, push, on a condition), and
/// the rules document. The security rules, query indexes, conditions and the limits of data are
/// checked here; transports (REST, Server-Sent Events, the realtime protocol) parse a request,
/// call one of these, and encode the answer or the ``HearthCore/HearthError``.
///
/// Building one subscribes its ``hub`` and ``rules`` to the provider's
/// ``HearthStore/DatabaseProvider/events`` for as long as the provider lives: build one per
/// provider (the composition root does).
///
/// Threading: every operation may run on any task. Reads use the newest committed version
/// without locks; writes go through the database's single writer, which runs the rules and
/// conditions in write order against the state that includes every earlier write.
public struct DatabaseOperations: Sendable {
    let databases: any DatabaseProvider
    /// Each database's rules, which every operation here asks first.
    public let rules: RulesRegistry
    /// The open listens, which committed writes reach.
    public let hub: ListenerHub
    /// Server time in milliseconds (the rules' `now`).
    public let clock: @Sendable () -> Int64
    /// Where operations log what the operator should know (restores, refusals that matter).
    public let logger: Logger
    /// Where refusals by the rules are counted.
    public var metrics = ServerMetrics()
    /// Where realtime messages are logged for the console (HTTP requests are logged by the responder).
    public var requestLog: RequestLog?
    /// Recent query answers, shared by every request.
    let queryCache = QueryResultCache()
    /// Which databases may be opened, how many at once, and when idle ones close.
    public var limits = DatabaseLimits()
    /// Databases held open by something other than a request (a realtime session).
    let holds = DatabaseHolds()

    /// The database named `name`, opened on first use. Only `creating` callers (admins, and
    /// anyone on an emulator) make a new database by using it; others get Firebase's answer
    /// for an unknown database. Open databases are bounded: past ``limits``' bound the least
    /// recently used idle ones close, and when none is idle the request is refused (503).
    public func database(named name: String, creating: Bool) async throws -> Database {
        // The common case, an open database, takes the provider's lock once.
        if let database = databases.openDatabase(named: name) { return database }
        if !databases.isOpen(named: name) {
            try await admitOpening(name, creating: creating)
        }
        return try await databases.database(named: name)
    }

    /// The database named `name` if it is open or opens without waiting (see
    /// ``HearthStore/DatabaseProvider/databaseIfReady(named:)``); nil while a cluster node is
    /// still loading it, or while whether it may be opened is not yet known (then
    /// ``database(named:creating:)`` decides).
    func databaseIfReady(named name: String, creating: Bool) throws -> Database? {
        if !databases.isOpen(named: name) {
            guard creating || limits.createOnUse || name == limits.defaultDatabase,
                databases.openCount < limits.maxOpen
            else { return nil }
        }
        return try databases.databaseIfReady(named: name)
    }

    /// Throws unless a database that is not open may be opened now.
    private func admitOpening(_ name: String, creating: Bool) async throws {
        if !(creating || limits.createOnUse || name == limits.defaultDatabase) {
            guard try await databases.databaseExists(named: name) else { throw Self.unknownDatabase }
        }
        if databases.openCount >= limits.maxOpen {
            closeIdleDatabases(unusedFor: limits.minimumIdleBeforeEviction)
            guard databases.openCount < limits.maxOpen else {
                logger.warning("refused to open a database: too many are open", metadata: [
                    "database": "\(name)", "open": "\(databases.openCount)",
                ])
                throw HearthError(.unavailable, "Too many databases are open. Try again later.")
            }
        }
    }

    /// Keeps the database `name` open from now on: idle closing passes it by (functions deliver
    /// from its outbox for as long as the server runs).
    public func keepOpen(_ name: String) {
        holds.hold(name)
    }

    /// Firebase's answer for a database that does not exist (REST 404; the realtime protocol
    /// shuts the connection down with it).
    static let unknownDatabase = HearthError(
        .notFound, "Firebase error. Please ensure that you spelled the name of your Firebase correctly")

    /// Closes the open databases (the default one aside) nobody used for `unusedFor`
    /// milliseconds and nothing holds: no stream or realtime listen, no realtime session.
    /// Returns their names.
    @discardableResult
    func closeIdleDatabases(unusedFor: Int64) -> [String] {
        let busy = hub.countsByDatabase()
        let closed = databases.closeIdleDatabases(
            unusedFor: unusedFor,
            if: { database in
                database.name != limits.defaultDatabase && busy[database.name] == nil && !holds.isHeld(database.name)
            },
            willClose: { database in
                // The next instance of it loads its rules again.
                rules.forget(database.name)
                hub.forget(database.name)
            })
        if !closed.isEmpty { logger.info("closed idle databases", metadata: ["databases": "\(closed.joined(separator: ", "))"]) }
        return closed
    }

    // MARK: - Reading

    /// The value at `path`, or `query`'s children there, as the rules let `auth` read it. The
    /// rules judge the same version the value comes from.
    /// - Throws: `Permission denied`, `Index not defined…`, or the store's failures.
    public func read(_ database: Database, at path: Path, query: Query?, auth: RequestAuth) throws -> Node {
        let state = try readableState(database, at: path, query: query, auth: auth)
        return query.map { state.queryValue($0, at: path) } ?? state.value(at: path)
    }

    /// The same, as the JSON `encode` writes; a query's answer comes from, and goes to, the
    /// cache of recent answers under `cacheKey` (the transport knows which answers share bytes).
    public func readEncoded(
        _ database: Database, at path: Path, query: Query, auth: RequestAuth, cacheKey: QueryResultCache.Key,
        encode: (Node) -> [UInt8]
    ) throws -> [UInt8] {
        let state = try readableState(database, at: path, query: query, auth: auth)
        guard let source = state.root.child(at: path).children else { return encode(state.queryValue(query, at: path)) }
        if let bytes = queryCache.answer(for: cacheKey, from: source) { return bytes }
        let bytes = encode(state.queryValue(query, at: path))
        queryCache.keep(bytes, for: cacheKey, from: source)
        return bytes
    }

    /// The version a read answers from, once the rules allowed it and the query's index is declared.
    /// The rules answer first: whether an index is declared, and the work of building one, are
    /// for readers only.
    private func readableState(_ database: Database, at path: Path, query: Query?, auth: RequestAuth) throws -> DatabaseState {
        let rules = try self.rules.rules(for: database)
        var state = database.current.state
        try checkRead(at: path, query: query, auth: auth, rules: rules, state: state, database: database)
        if let query, !rules.document.declaresIndex(at: path, for: query.order) {
            throw Self.indexNotDefined(query.order, at: path)
        }
        if let query, query.usesIndex, state.index(at: path, order: query.order) == nil {
            database.ensureIndex(at: path, order: query.order)
            // The answer comes from the version the index joined, and the rules judge that one.
            state = database.current.state
            try checkRead(at: path, query: query, auth: auth, rules: rules, state: state, database: database)
        }
        return state
    }

    /// Throws `Permission denied` unless the rules let `auth` read `path` (with `query`) in
    /// `state`; a refusal is counted under `access` (`read`, `listen`).
    func checkRead(
        at path: Path, query: Query?, auth: RequestAuth, rules: SecurityRules, state: DatabaseState, database: Database,
        access: String = "read"
    ) throws {
        guard case .rules(let auth, _) = auth else { return }
        let requester = SecurityRules.Requester(auth: auth, now: clock())
        guard rules.read(path, by: requester, root: state.root, query: RuleQuery(query)) != nil else {
            metrics.denied(database: database.name, access: access)
            throw HearthError.permissionDeniedByRules
        }
    }

    /// True when the rules let `auth` read every one of `paths` now.
    public func mayRead(_ paths: [Path], in database: Database, auth: RequestAuth) -> Bool {
        guard case .rules(let authVariable, _) = auth else { return true }
        guard let rules = try? self.rules.rules(for: database) else { return false }
        let root = database.current.state.root
        let requester = SecurityRules.Requester(auth: authVariable, now: clock())
        return paths.allSatisfy { rules.read($0, by: requester, root: root) != nil }
    }

    /// `Index not defined, add ".indexOn": "<field>", for path "<path>", to the rules`
    public static func indexNotDefined(_ order: Query.Order, at path: Path) -> HearthError {
        let field = RulesDocument.indexName(for: order)
        return HearthError(.indexNotDefined, #"Index not defined, add ".indexOn": "\#(field)", for path "\#(path)", to the rules"#)
    }

    // MARK: - Writing

    /// A condition a write holds to, checked in write order against the newest version.
    public enum Condition: Sendable {
        /// The value at the written path must have this node hash (`""` for no value): a REST
        /// `if-match` ETag, or a realtime transaction's `h`.
        case hash(String)
    }

    /// A write whose ``Condition`` no longer held: nothing changed; `current` is the value the
    /// condition was checked against.
    public struct ConditionFailed: Error {
        /// The value the condition was checked against, for the client to retry with.
        public let current: Node
    }

    /// The node hash a ``Condition`` compares: the value's hash, or `""` for no value.
    static func conditionHash(of value: Node) -> String {
        value.isNull ? "" : value.hash
    }

    /// Sets `value` at `path` (null deletes) once the rules let `auth` and `condition` holds.
    /// - Throws: ``ConditionFailed``, `Permission denied`, or the write's and store's failures.
    public func set(
        _ database: Database, at path: Path, to value: JSONParser.Parsed, auth: RequestAuth, condition: Condition? = nil
    ) async throws -> Database.Committed {
        try await withUnsafeThrowingContinuation { continuation in
            submit(.set(path, value), to: database, auth: auth, condition: condition) { continuation.resume(with: $0) }
        }
    }

    /// Sets each relative path of `entries` under `path`, atomically, once the rules let `auth`.
    public func update(
        _ database: Database, at path: Path, entries: [(path: Path, value: JSONParser.Parsed)], auth: RequestAuth
    ) async throws -> Database.Committed {
        try await withUnsafeThrowingContinuation { continuation in
            submit(.update(path, entries), to: database, auth: auth) { continuation.resume(with: $0) }
        }
    }

    /// Stores `value` under a new push ID at `path`, once the rules let `auth`.
    public func push(_ database: Database, at path: Path, value: JSONParser.Parsed, auth: RequestAuth) async throws -> Database.Committed {
        try await database.push(
            at: path, value: value, authorize: try writeAuthorization(for: auth, on: database), origin: auth.writeOrigin)
    }

    static func precondition(_ condition: Condition, at path: Path) -> @Sendable (DatabaseState) throws -> Void {
        switch condition {
        case .hash(let expected):
            return { state in
                let current = state.value(at: path)
                guard conditionHash(of: current) == expected else { throw ConditionFailed(current: current) }
            }
        }
    }

    /// The rules check a write by `auth` goes through, in write order; nil for an admin.
    func writeAuthorization(for auth: RequestAuth, on database: Database) throws -> Database.Authorization? {
        guard case .rules(let authVariable, _) = auth else { return nil }
        let registry = self.rules
        let loaded = try registry.rules(for: database)
        let logger = self.logger
        let metrics = self.metrics
        let name = database.name
        return { before, after, write, now in
            // The rules in force when the write is checked: on a cluster node a write is checked
            // again after other nodes' records, which may have changed the rules.
            let rules = registry.loadedRules(named: name) ?? loaded
            do {
                try rules.authorizeWrite(
                    changing: write.changedPaths, by: .init(auth: authVariable, now: now), before: before.root, after: after.root)
            } catch {
                logger.debug("write denied by rules", metadata: ["database": "\(database.name)", "reason": "\(error)"])
                metrics.denied(database: name, access: "write")
                throw HearthError.permissionDeniedByRules
            }
        }
    }

    // MARK: - Rules

    /// The text of `database`'s rules, comments included, or as strict JSON.
    public func rulesText(of database: Database, strict: Bool) throws -> String {
        let document = try rules.rules(for: database).document
        return strict ? try document.strictJSON() : document.source
    }

    /// Checks `text` and makes it `database`'s rules; streams whose reads it no longer allows end.
    /// - Throws: `invalidData` with the line and column of the first problem; nothing changes then.
    public func deployRules(_ text: String, to database: Database) async throws {
        do {
            try await rules.setRules(text, for: database)
        } catch let error as RulesError {
            throw HearthError(.invalidData, "Line \(error.position.line), column \(error.position.column): \(error.message)")
        }
        hub.rulesChanged(for: database)
    }

    /// Subscribes `hub` and `rules` to the databases' events, so build one per provider.
    public init(databases: any DatabaseProvider, rules: RulesRegistry, hub: ListenerHub, clock: @escaping @Sendable () -> Int64, logger: Logger, metrics: ServerMetrics = ServerMetrics(), requestLog: RequestLog? = nil, limits: DatabaseLimits = DatabaseLimits()) {
        self.databases = databases
        self.rules = rules
        self.hub = hub
        self.clock = clock
        self.logger = logger
        self.metrics = metrics
        self.requestLog = requestLog
        self.limits = limits
        // The one subscription to the databases' events, for as long as the provider lives:
        // commits go to the hub's fan-out, rules changes (made here or on another node) to
        // the registry and the streams they judge. Build one operations layer per provider.
        databases.events.subscribe { [rules, hub] database, event in
            switch event {
            case .committed(let committed, let version):
                hub.committed(committed, version: version, database: database.name)
            case .settingChanged(let name):
                rules.settingChanged(named: name, in: database, hub: hub)
            }
        }
    }
}
