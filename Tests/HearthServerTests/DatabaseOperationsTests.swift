import Foundation
import HearthCore
import HearthRules
import HearthStore
import HearthTesting
import Logging
import Testing

@testable import HearthEngine
@testable import HearthServer

/// The transport-neutral operations on their own, over a real data folder: the rules, the
/// conditions every transport shares, and index declarations.
@Suite("Database operations")
struct DatabaseOperationsTests {
    static let rulesText = #"""
        {"rules": {"open": {".read": true, ".write": true, "scores": {".indexOn": "n"}},
                   "mine": {"$uid": {".read": "auth.uid === $uid", ".write": "auth.uid === $uid"}}}}
        """#

    static func withOperations(_ body: (DatabaseOperations, Database) async throws -> Void) async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-operations")
        defer { directory.remove() }
        let logger = Logger(label: "operations-test") { _ in SwiftLogNoOpLogHandler() }
        let folder = try DataFolder(url: directory.url, logger: logger)
        let rules = RulesRegistry(defaultRules: try SecurityRules(parsing: rulesText))
        let operations = DatabaseOperations(databases: folder, rules: rules, hub: ListenerHub(), clock: { 1_000 }, logger: logger)
        try await body(operations, try await operations.database(named: "default", creating: true))
        try folder.close()
    }

    static func user(_ uid: String) -> RequestAuth {
        .rules(auth: .object([(ChildKey("uid"), .string(uid))]), expires: nil)
    }

    static func path(_ text: String) throws -> Path { try Path(parsing: text) }

    @Test func aConditionOnTheHashHoldsOrChangesNothing() async throws {
        try await Self.withOperations { operations, database in
            let target = try Self.path("open/counter")
            // "" is the hash of no value: the first write of a transaction.
            _ = try await operations.set(database, at: target, to: .init(node: .int(1)), auth: .anonymous, condition: .hash(""))
            await #expect(throws: DatabaseOperations.ConditionFailed.self) {
                try await operations.set(database, at: target, to: .init(node: .int(5)), auth: .anonymous, condition: .hash(""))
            }
            #expect(try operations.read(database, at: target, query: nil, auth: .admin) == .int(1))
            let hash = DatabaseOperations.conditionHash(of: .int(1))
            #expect(hash == Node.int(1).hash && !hash.isEmpty)
            _ = try await operations.set(database, at: target, to: .init(node: .int(2)), auth: .anonymous, condition: .hash(hash))
            #expect(try operations.read(database, at: target, query: nil, auth: .admin) == .int(2))
        }
    }

    @Test func theRulesDecideForEveryoneButAnAdmin() async throws {
        try await Self.withOperations { operations, database in
            let alice = try Self.path("mine/alice")
            _ = try await operations.set(database, at: alice, to: .init(node: .string("a")), auth: Self.user("alice"))
            await #expect(throws: HearthError.permissionDeniedByRules) {
                try await operations.set(database, at: alice, to: .init(node: .string("b")), auth: Self.user("bob"))
            }
            await #expect(throws: HearthError.permissionDeniedByRules) {
                try await operations.update(database, at: try Self.path("mine"), entries: [(Self.path("alice"), .init(node: .int(1)))], auth: .anonymous)
            }
            #expect(throws: HearthError.permissionDeniedByRules) { try operations.read(database, at: alice, query: nil, auth: Self.user("bob")) }
            #expect(try operations.read(database, at: alice, query: nil, auth: Self.user("alice")) == .string("a"))
            _ = try await operations.set(database, at: alice, to: .init(node: .string("c")), auth: .admin)
            #expect(try operations.read(database, at: alice, query: nil, auth: .admin) == .string("c"))
            let pushed = try await operations.push(database, at: try Self.path("open/list"), value: .init(node: .int(1)), auth: .anonymous)
            #expect(pushed.pushID?.count == 20)
        }
    }

    @Test func queriesNeedTheirIndexDeclaredAndAreCached() async throws {
        try await Self.withOperations { operations, database in
            let scores = try Self.path("open/scores")
            for (key, n) in [("a", 3), ("b", 1), ("c", 2)] {
                _ = try await operations.set(database, at: scores.child(ChildKey(key)), to: .init(node: .object([(ChildKey("n"), .int(Int64(n)))])), auth: .anonymous)
            }
            let top = Query(order: .child(try Self.path("n")), limit: .last(2))
            let value = try operations.read(database, at: scores, query: top, auth: .anonymous)
            #expect(value.children.map { $0.map(\.key.string) } == ["a", "c"])
            let key = QueryResultCache.Key(database: "default", path: scores, parameters: ["top"])
            var encoded = 0
            for _ in 0..<3 {
                _ = try operations.readEncoded(database, at: scores, query: top, auth: .anonymous, cacheKey: key) { node in
                    encoded += 1
                    return JSONWriter.bytes(node)
                }
            }
            #expect(encoded == 1, "answers after the first come from the cache")
            let undeclared = Query(order: .child(try Self.path("other")), limit: .last(1))
            #expect(throws: DatabaseOperations.indexNotDefined(undeclared.order, at: scores)) {
                try operations.read(database, at: scores, query: undeclared, auth: .anonymous)
            }
        }
    }
}
