import Foundation
import FuzzSupport
import HearthAuth
import HearthCore
import HearthProtocol
import HearthRules
import HearthStore
import Logging
import NIOCore
import NIOEmbedded
import NIOWebSocket

@testable import HearthEngine
@testable import HearthServer

/// The bytes a client sends on a realtime WebSocket after the upgrade, through the pipeline the
/// server builds: NIOWebSocket's frame decoder (with the server's frame size limit) and
/// protocol error handler, then Hearth's socket handler: fragments and continuations, control
/// frames, text frames reassembled into messages (``RealtimeFrameAssembler``) and parsed
/// (``RealtimeClientMessage``). The socket is the takeover of a long-polling session that does
/// not exist, so messages are read but reach no database (`fuzz-realtime-session` covers that).
@main
struct WebSocketFuzz {
    static func main() {
        let service = Self.makeService()
        let webSocket = RealtimeWebSocket(
            service: service, longPolling: RealtimeLongPolling(service: service, defaultDatabase: "fuzz"), defaultDatabase: "fuzz")
        let logger = Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() })
        Fuzzer.run { bytes in
            let channel = EmbeddedChannel()
            do {
                try channel.pipeline.syncOperations.addHandlers([
                    ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: RealtimeWebSocket.maxFrameBytes)),
                    WebSocketFrameEncoder(),
                    WebSocketProtocolErrorHandler(),
                    webSocket.handler(for: "/.ws?v=5&s=no-such-session", host: "localhost", logger: logger),
                ])
                try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9000)).wait()
                // Half the input in one read, the rest in reads of 7 bytes: frames split anywhere.
                let middle = bytes.count / 2
                try channel.writeInbound(ByteBuffer(bytes: bytes[..<middle]))
                for start in stride(from: middle, to: bytes.count, by: 7) where channel.isActive {
                    try channel.writeInbound(ByteBuffer(bytes: bytes[start..<min(start + 7, bytes.count)]))
                }
            } catch {
                // A protocol error: the decoder refused the bytes, and the connection closes.
            }
            channel.embeddedEventLoop.run()
            while let _ = try? channel.readOutbound(as: ByteBuffer.self) {}
            _ = try? channel.finish(acceptAlreadyClosed: true)
        }
    }

    /// The realtime service, with no database behind it.
    static func makeService() -> RealtimeService {
        let logger = Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() })
        let operations = DatabaseOperations(
            databases: NoDatabases(), rules: RulesRegistry(defaultRules: .closed), hub: ListenerHub(), clock: { 0 }, logger: logger)
        let issuer = Self.issuer()
        return RealtimeService(
            operations: operations, admin: AdminCredential(token: "admin", emulator: false), issuer: issuer,
            disconnects: NoDisconnects(), accounts: Self.accounts(), logger: logger)
    }

    /// An empty account store in a file of its own (the service looks accounts up only when
    /// it runs onDisconnect operations).
    static func accounts() -> AccountStore {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-fuzz-accounts-\(getpid())")
        try! FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let store = try! AccountStore(path: folder.appendingPathComponent("accounts.sqlite").path)
        try? FileManager.default.removeItem(at: folder)
        return store
    }

    static func issuer() -> TokenIssuer {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-fuzz-\(getpid())")
        try! FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = try! TokenIssuer.loadOrCreateKey(at: folder.appendingPathComponent("key.pem"))
        nonisolated(unsafe) var issuer: TokenIssuer?
        Fuzzer.wait { issuer = await TokenIssuer(privateKey: key, projectID: "fuzz") }
        return issuer!
    }
}

struct NoDatabases: DatabaseProvider {
    struct Unavailable: Error {}
    let events = DatabaseEvents()
    func openDatabase(named name: String) -> Database? { nil }
    func database(named name: String) async throws -> Database { throw Unavailable() }
    func databaseIfReady(named name: String) throws -> Database? { throw Unavailable() }
    func databaseNames() async throws -> [String] { [] }
    func openDatabases() -> [String: Database] { [:] }
    func isOpen(named name: String) -> Bool { false }
    var openCount: Int { 0 }
    func databaseExists(named name: String) async throws -> Bool { false }
    func closeIdleDatabases(unusedFor idle: Int64, if canClose: (Database) -> Bool, willClose: (Database) -> Void) -> [String] { [] }
    func close() {}
}

struct NoDisconnects: DisconnectQueue {
    func add(_ record: DisconnectQueueStore.Record) async throws {}
    func remove(session: String, positions: [Int64]) async throws {}
    func remove(session: String) async throws {}
    func all() async throws -> [DisconnectQueueStore.Record] { [] }
    func leftovers() async throws -> [DisconnectQueueStore.Record] { [] }
    func claim(session: String, known: [DisconnectQueueStore.Record]) async throws -> [DisconnectQueueStore.Record] { known }
}
