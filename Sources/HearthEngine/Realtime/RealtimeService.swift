import Foundation
import HearthAuth
import HearthCore
import HearthStore
import Logging
import Synchronization

/// The realtime protocol's side of the server: opens a ``RealtimeSession`` for each
/// connection (WebSocket or long-polling), knows the open ones (for credentials that expire,
/// the server's figures and shutdown), and keeps their onDisconnect operations durable.
///
/// Threading: `sessions` guards the set of open sessions; everything else is immutable.
public final class RealtimeService: Sendable {
    /// What the sessions' requests run through.
    public let operations: DatabaseOperations
    let admin: AdminCredential
    let issuer: TokenIssuer
    /// Refuses the tokens of accounts disabled, deleted or signed out everywhere; a change it is
    /// told of signs that account's sessions out at once (``accountChanged(uid:)``).
    let gate: AccountGate?
    /// What each session may hold.
    public let limits: RealtimeLimits
    let disconnects: any DisconnectQueue
    /// The accounts, to drop the onDisconnect operations of a user disabled or deleted since.
    let accounts: any AccountStorage
    /// Where sessions log.
    public let logger: Logger
    /// Makes session IDs (random; injected for tests).
    private let makeID: @Sendable () -> String
    private let sessions = Mutex<[String: RealtimeSession]>([:])
    /// Whether a round's re-check of signed-in sessions is still running (the next round skips).
    private let rechecking = Atomic<Bool>(false)

    /// `admin` and `issuer` check credentials, `disconnects` keeps onDisconnect operations, `accounts` revokes those of removed users; `makeID` is injected by tests.
    public init(
        operations: DatabaseOperations, admin: AdminCredential, issuer: TokenIssuer, disconnects: any DisconnectQueue,
        accounts: any AccountStorage, gate: AccountGate? = nil, limits: RealtimeLimits = .init(), logger: Logger,
        makeID: @escaping @Sendable () -> String = RealtimeService.randomID
    ) {
        self.operations = operations
        self.admin = admin
        self.issuer = issuer
        self.gate = gate
        self.disconnects = disconnects
        self.accounts = accounts
        self.limits = limits
        self.logger = logger
        self.makeID = makeID
        gate?.observe { [weak self] uid in self?.accountChanged(uid: uid) }
    }

    /// `uid` was disabled, deleted or signed out everywhere: its sessions check their
    /// credential again now, and those it no longer holds for are signed out (`ac`).
    func accountChanged(uid: String) {
        let signedIn = sessions.withLock { sessions in sessions.values.filter { $0.signedInUID == uid } }
        for session in signedIn { Task { await session.recheckCredential() } }
    }

    /// 24 random letters and digits.
    @Sendable public static func randomID() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)
        var generator = SystemRandomNumberGenerator()
        return String(decoding: (0..<24).map { _ in alphabet.randomElement(using: &generator)! }, as: UTF8.self)
    }

    /// Opens a session on the database named `name`, its handshake already queued; nil while
    /// the database is still loading (a cluster node opening it: see ``DatabaseOperations/database(named:)``).
    /// - Parameter host: the host the client reached, which it should reconnect to.
    /// - Throws: when the database cannot be opened (a bad name, storage failing).
    public func openSession(database name: String, host: String) throws -> RealtimeSession? {
        // The realtime protocol signs in after connecting: nobody creates a database through it.
        try operations.databaseIfReady(named: name, creating: false).map { openSession(on: $0, host: host) }
    }

    /// Opens a session on `database`, its handshake already queued.
    public func openSession(on database: Database, host: String) -> RealtimeSession {
        let name = database.name
        let session = RealtimeSession(id: makeID(), database: database, service: self)
        session.sendHandshake(host: host)
        sessions.withLock { $0[session.id] = session }
        operations.holds.hold(name)
        operations.requestLog?.record(
            path: "/.ws?ns=\(name)", time: Date(), method: "connect", transport: "realtime", requestID: session.logID)
        logger.debug("realtime session opened", metadata: ["session": "\(session.logID)", "database": "\(name)"])
        return session
    }

    /// The open session with this ID (a long-polling client's, or one being upgraded).
    func session(id: String) -> RealtimeSession? {
        sessions.withLock { $0[id] }
    }

    /// Ends a session: its listens stop and its onDisconnect operations run.
    public func close(_ session: RealtimeSession) async {
        guard sessions.withLock({ $0.removeValue(forKey: session.id) }) != nil else { return }
        defer { operations.holds.release(session.database.name) }
        logger.debug("realtime session closed", metadata: ["session": "\(session.logID)"])
        await session.end()
    }

    /// The number of open sessions.
    public var count: Int { sessions.withLock(\.count) }

    /// Tells sessions whose credential expired (`ac`), and judges them as signed out from now
    /// on; asks each transport whether its client is still there, the sessions' checks spread
    /// evenly over `spread` (a check writes a ping to a silent socket: 20,000 of them at once
    /// held the event loops for half a second, and every other client's requests with them).
    public func checkSessions(now: Int64, spread: Duration = .zero) {
        let open = sessions.withLock { Array($0.values) }
        let step = open.isEmpty ? Duration.zero : spread / open.count
        for (index, session) in open.enumerated() {
            session.expireCredential(now: now)
            session.livenessCheck.withLock { $0 }?.run(now, step * index)
        }
        // An account changed by another process or node (the gate's answers are short-lived):
        // one task per round goes through the signed-in sessions (the gate asks the store once
        // per account), and a round still going when the next comes is not doubled.
        let signedIn = gate == nil ? [] : open.filter { $0.signedInUID != nil }
        if !signedIn.isEmpty, rechecking.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged {
            Task {
                for session in signedIn { await session.recheckCredential() }
                rechecking.store(false, ordering: .releasing)
            }
        }
    }

    /// Ends every session (the server is stopping): their connections close.
    public func shutDown() {
        for session in sessions.withLock({ Array($0.values) }) { session.outbound.close() }
    }
}
