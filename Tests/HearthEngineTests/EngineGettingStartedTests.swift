import Foundation
import HearthCore
import HearthEngine
import HearthRules
import HearthStore
import Logging
import NIOCore
import Testing

/// The getting-started article's code (HearthEngine.docc), run through the engine's public API
/// only: no `@testable`, no HTTP.
@Suite("The engine, from outside")
struct EngineGettingStartedTests {
    static let rules = #"""
        {
          "rules": {
            "notes": {
              "$uid": { ".read": "auth != null && auth.uid == $uid", ".write": "auth != null && auth.uid == $uid" }
            }
          }
        }
        """#

    /// The operations layer over a data folder, as a server's composition root builds it.
    static func engine(in folder: URL) throws -> (DatabaseOperations, DataFolder) {
        let logger = Logger(label: "engine-test")
        let data = try DataFolder(url: folder, logger: logger)
        let registry = RulesRegistry(defaultRules: try SecurityRules(parsing: rules))
        let hub = ListenerHub(maxEventBytes: 1 << 20, rules: { registry.loadedRules(named: $0) }, clock: { 1_700_000_000_000 })
        let operations = DatabaseOperations(
            databases: data, rules: registry, hub: hub, clock: { 1_700_000_000_000 }, logger: logger)
        return (operations, data)
    }

    static func withFolder<T>(_ body: (URL) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("engine-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        return try await body(folder)
    }

    @Test func writesAreJudgedByTheRulesAndReadBack() async throws {
        try await Self.withFolder { folder in
            let (operations, data) = try Self.engine(in: folder)
            defer { data.close() }
            let database = try await operations.database(named: "default", creating: true)
            let ana = RequestAuth.rules(auth: .object([(ChildKey("uid"), .string("ana"))]), expires: nil)
            let path = try Path(parsing: "/notes/ana/first")

            _ = try await operations.set(database, at: path, to: try JSONParser.parse(Array(#""hello""#.utf8)), auth: ana)
            #expect(try operations.read(database, at: path, query: nil, auth: ana) == .string("hello"))

            // Someone else may neither write there nor read it, and nothing changes.
            let other = RequestAuth.anonymous
            await #expect(throws: HearthError.permissionDeniedByRules) {
                _ = try await operations.set(database, at: path, to: try JSONParser.parse(Array("1".utf8)), auth: other)
            }
            #expect(throws: HearthError.permissionDeniedByRules) {
                _ = try operations.read(database, at: path, query: nil, auth: other)
            }
            #expect(try operations.read(database, at: path, query: nil, auth: .admin) == .string("hello"))
        }
    }

    @Test func aListenGetsItsInitialValueThenTheChange() async throws {
        try await Self.withFolder { folder in
            let (operations, data) = try Self.engine(in: folder)
            defer { data.close() }
            let database = try await operations.database(named: "default", creating: true)
            let ana = RequestAuth.rules(auth: .object([(ChildKey("uid"), .string("ana"))]), expires: nil)
            let notes = try Path(parsing: "/notes/ana")
            let buffer = EventBuffer()
            let (listener, initial) = try operations.listen(
                database, at: notes, query: nil, auth: ana, missingIndex: .refuse,
                delivery: .init(format: .serverSentEvents, buffer: buffer))
            defer { operations.hub.unsubscribe(listener) }
            #expect(initial == .null)

            _ = try await operations.set(
                database, at: try Path(parsing: "/notes/ana/n1"), to: try JSONParser.parse(Array("1".utf8)), auth: ana)
            guard case .events(let events) = await buffer.next() else {
                Issue.record("no event")
                return
            }
            let text = events.map { String(buffer: $0.bytes) }.joined()
            #expect(text.contains("event: put"))
            #expect(text.contains(#""path":"/n1","data":1"#))
        }
    }
}
