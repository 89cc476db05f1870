import Foundation
import FuzzSupport
import HearthAuth
import HearthCore
import HearthProtocol
import HearthRules
import HearthStore
import Logging
import NIOCore

@testable import HearthEngine
@testable import HearthServer

/// Realtime sessions on a real database: the input's frames (NUL-separated) are reassembled
/// and parsed as a connection would, and each message is handled by a ``RealtimeSession`` on a
/// SQLite database (in /dev/shm) under rules with reads, writes, validation and an index: auth
/// (the admin token, the emulator's unsigned tokens, signed ones), listens and queries, gets,
/// puts with hashes, merges, onDisconnect operations (run when the session ends). Every message
/// the server queues must be a JSON object, and every request must be answered exactly once.
@main
struct RealtimeSessionFuzz {
    static let rules = #"""
        {"rules": {
          ".read": "auth != null", ".write": "auth != null && auth.token.admin == true",
          "public": {".read": true, ".write": true, "scores": {".indexOn": ["n", ".value"]}},
          "users": {"$uid": {".read": true, ".write": "auth != null && auth.uid == $uid",
                             ".validate": "newData.hasChildren(['name']) || !newData.exists()",
                             "name": {".validate": "newData.isString() && newData.val().length < 64"}}},
          "status": {"$uid": {".write": "auth != null && auth.uid == $uid"}},
          "counter": {".read": true, ".write": true, ".validate": "newData.isNumber()"}
        }}
        """#

    static func main() {
        let logger = Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() })
        let shm = URL(fileURLWithPath: "/dev/shm")
        let base = FileManager.default.fileExists(atPath: shm.path) ? shm : FileManager.default.temporaryDirectory
        let folderURL = base.appendingPathComponent("hearth-fuzz-session-\(getpid())")
        try? FileManager.default.removeItem(at: folderURL)
        let folder = try! DataFolder(url: folderURL, logger: logger)
        atexit { try? FileManager.default.removeItem(atPath: "/dev/shm/hearth-fuzz-session-\(getpid())") }
        let registry = RulesRegistry(defaultRules: try! SecurityRules(parsing: rules))
        let clock: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
        let hub = ListenerHub(rules: { registry.loadedRules(named: $0) }, clock: clock)
        let operations = DatabaseOperations(databases: folder, rules: registry, hub: hub, clock: clock, logger: logger)
        var limits = RealtimeLimits()
        limits.maxListens = 16
        limits.maxOutstandingWrites = 8
        limits.maxOnDisconnectOperations = 8
        limits.maxOnDisconnectBytes = 4096
        limits.maxQueuedEvents = 256
        limits.maxQueuedBytes = 1 << 20
        limits.maxMessageBytes = 1 << 16
        let service = RealtimeService(
            operations: operations, admin: AdminCredential(token: "admin-token", emulator: true), issuer: Self.issuer(folderURL),
            disconnects: MemoryDisconnects(), accounts: try! AccountStore(path: folderURL.appendingPathComponent("accounts.sqlite").path),
            limits: limits, logger: logger)
        let database = try! operations.databaseIfReady(named: "fuzz", creating: true)!
        nonisolated(unsafe) var inputs = 0

        Fuzzer.run { bytes in
            let messages = Self.messages(in: bytes, maxMessageBytes: limits.maxMessageBytes)
            guard !messages.isEmpty else { return }
            inputs += 1
            if inputs % 512 == 0 { Self.reset(database, operations: operations) }
            let session = service.openSession(on: database, host: "localhost")
            Fuzzer.wait {
                for message in messages { await session.receive(message) }
                // A read waits for the session's writes to be answered.
                await session.receive(.request(id: Self.lastID, .get(path: .root, view: .whole)))
                await service.close(session)
            }
            Self.checkAnswers(session.outbound, to: messages)
        }
    }

    static let lastID = Int64.max

    /// The messages the frames make, up to a frame that would close the connection.
    static func messages(in bytes: [UInt8], maxMessageBytes: Int) -> [RealtimeClientMessage] {
        var assembler = RealtimeFrameAssembler(maxMessageBytes: maxMessageBytes)
        var messages: [RealtimeClientMessage] = []
        for frame in bytes.split(separator: 0) {
            guard case .message(let text)? = try? assembler.receive(String(decoding: frame, as: UTF8.self)) else { continue }
            guard let message = try? RealtimeClientMessage.parse(text) else { break }
            messages.append(message)
        }
        return messages
    }

    /// Every queued message is a JSON object; each request is answered once (unless the queue
    /// overflowed, which closes the connection).
    static func checkAnswers(_ outbound: EventBuffer, to messages: [RealtimeClientMessage]) {
        var expected: [Int64: Int] = [lastID: 1]
        for message in messages {
            switch message {
            case .request(let id, _), .rejected(let id, _): expected[id, default: 0] += 1
            case .ping, .control: break
            }
        }
        var answered: [Int64: Int] = [:]
        var overflowed = false
        draining: while let item = outbound.takeNow() {
            switch item {
            case .events(let events):
                for event in events {
                    let bytes = Array(event.bytes.readableBytesView)
                    guard let members = try? JSONParser.members(ofObject: bytes) else {
                        Fuzzer.expect(false, "the session queued invalid JSON: \(String(decoding: bytes, as: UTF8.self))")
                        return
                    }
                    guard let envelope = try? RealtimeFields(bytes, in: 0..<bytes.count, what: "message"),
                        members.contains(where: { $0.key == "t" }), (try? envelope.string("t")) == "d",
                        let data = try? envelope.object("d"), case .int(let id)? = try? data.optionalValue("r")
                    else { continue }
                    answered[id, default: 0] += 1
                }
            case .resync:
                overflowed = true
                break draining
            case .closed, .keepAlive:
                break draining
            }
        }
        guard !overflowed else { return }
        Fuzzer.expect(answered == expected, "requests \(expected.sorted { $0.key < $1.key }) got answers \(answered.sorted { $0.key < $1.key })")
    }

    /// Clears the database now and then, so it stays small.
    static func reset(_ database: Database, operations: DatabaseOperations) {
        let done = DispatchSemaphore(value: 0)
        operations.submit(.set(.root, JSONParser.Parsed(node: .null)), to: database, auth: .admin) { _ in done.signal() }
        done.wait()
    }

    static func issuer(_ folder: URL) -> TokenIssuer {
        let key = try! TokenIssuer.loadOrCreateKey(at: folder.appendingPathComponent("key.pem"))
        nonisolated(unsafe) var issuer: TokenIssuer?
        Fuzzer.wait { issuer = await TokenIssuer(privateKey: key, projectID: "fuzz") }
        return issuer!
    }
}

/// onDisconnect operations kept in memory (the server keeps them in SQLite).
actor MemoryDisconnects: DisconnectQueue {
    private var records: [DisconnectQueueStore.Record] = []
    func add(_ record: DisconnectQueueStore.Record) async throws { records.append(record) }
    func remove(session: String, positions: [Int64]) async throws {
        records.removeAll { $0.session == session && positions.contains($0.position) }
    }
    func remove(session: String) async throws { records.removeAll { $0.session == session } }
    func all() async throws -> [DisconnectQueueStore.Record] { records }
    func leftovers() async throws -> [DisconnectQueueStore.Record] { [] }
    func claim(session: String, known: [DisconnectQueueStore.Record]) async throws -> [DisconnectQueueStore.Record] { known }
}
