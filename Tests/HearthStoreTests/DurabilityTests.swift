import Foundation
import HearthCore
@testable import HearthStore
import HearthTesting
import Testing

/// Acknowledged writes reach the disk: they survive a clean close, and they survive the
/// process simply letting go of the database (what a crash leaves behind: the log, no final
/// snapshot).
@Suite("Durability")
struct DurabilityTests {
    /// A mix of sets, deletes, multi-path updates and priority writes, with the tree it must leave.
    static func writeMix(to database: Database) async throws -> Node {
        try await database.write(set("/users/alice", #"{"age":30,"name":"Alice",".priority":2}"#))
        try await database.write(set("/users/bob", #"{"age":41,"tags":["x","y"]}"#))
        try await database.write(update("/", [("users/bob/age", "42"), ("config/mode", #""dark""#), ("users/carol", #"{"age":7}"#)]))
        try await database.write(set("/users/alice/.priority", #""high""#))
        try await database.write(set("/doomed", #"{"a":1}"#))
        try await database.write(set("/doomed", "null"))
        try await database.write(update("/users", [("carol", "null"), ("bob/.priority", "5")]))
        try await database.write(set("/leaf", #"{".value":"v",".priority":1.5}"#))
        return try node(#"""
            {"config":{"mode":"dark"},
             "leaf":{".value":"v",".priority":1.5},
             "users":{"alice":{".priority":"high","age":30,"name":"Alice"},
                      "bob":{".priority":5,"age":42,"tags":{"0":"x","1":"y"}}}}
            """#)
    }

    @Test func writesSurviveCloseAndReopen() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let expected: Node
        do {
            let database = try fixture.open()
            expected = try await Self.writeMix(to: database)
            #expect(database.current.state.root == expected, "in memory: \(exported(database.current.state.root))")
            #expect(database.current.sequence == 8)
            database.close()
        }
        // A clean close leaves a snapshot covering everything and an empty log.
        let inspector = SQLiteInspector(folder: fixture.folder)
        #expect(try inspector.snapshotSequences() == [8])
        #expect(try inspector.logSequences() == [])

        let reopened = try fixture.open()
        #expect(reopened.current.state.root == expected, "after reopen: \(exported(reopened.current.state.root))")
        #expect(reopened.current.sequence == 8)
        #expect(reopened.value(at: try path("/users/alice/.priority")) == .string("high"))

        // The reopened database keeps numbering after the last write.
        let next = try await reopened.write(set("/more", "1"))
        #expect(next.sequence == 9)
    }

    @Test func acknowledgedWritesSurviveWithoutClose() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        var database: Database? = try fixture.open()
        let expected = try await Self.writeMix(to: database!)
        // No close(): no final snapshot; the log alone must carry every acknowledged write.
        database = nil

        let inspector = SQLiteInspector(folder: fixture.folder)
        #expect(try inspector.snapshotSequences() == [])
        #expect(try inspector.logSequences() == Array(1...8))

        let reopened = try fixture.open()
        #expect(reopened.current.state.root == expected, "replayed: \(exported(reopened.current.state.root))")
        #expect(reopened.current.sequence == 8)
        // And a second replay (still no snapshot) gives the same tree again.
        let again = try fixture.open()
        #expect(again.current.state.root == expected)
    }

    @Test func concurrentAcknowledgedWritesSurviveWithoutClose() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        var database: Database? = try fixture.open()
        let writer = database!
        let count = 300
        let sequences = try await withThrowingTaskGroup(of: Int64.self) { group in
            for index in 0..<count {
                group.addTask {
                    if index % 10 == 0 {
                        // Multi-path updates interleaved with plain sets.
                        return try await writer.write(update("/", [("pairs/p\(index)/a", "\(index)"), ("pairs/p\(index)/b", "\(index)")])).sequence
                    }
                    return try await writer.write(set("/items/i\(index)", "\(index)")).sequence
                }
            }
            var all: [Int64] = []
            for try await sequence in group { all.append(sequence) }
            return all
        }
        // Every write got its own place in the log.
        #expect(Set(sequences).count == count)
        #expect(sequences.min() == 1 && sequences.max() == Int64(count))
        database = nil

        let reopened = try fixture.open()
        #expect(reopened.current.sequence == Int64(count))
        for index in 0..<count {
            if index % 10 == 0 {
                #expect(reopened.value(at: try path("/pairs/p\(index)")) == (try node(#"{"a":\#(index),"b":\#(index)}"#)))
            } else {
                #expect(reopened.value(at: try path("/items/i\(index)")) == .int(Int64(index)))
            }
        }
    }

    @Test func concurrentWritesAreGroupCommitted() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        var database: Database? = try fixture.open()
        let writer = database!
        let batches = SendableBox<[[Int64]]>([])
        let versions = SendableBox<[Int64]>([])
        writer.events.subscribe { _, event in
            guard case .committed(let committed, let version) = event else { return }
            batches.mutate { $0.append(committed.map(\.sequence)) }
            versions.mutate { $0.append(version.sequence) }
        }
        let count = 500
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                group.addTask { try await writer.write(set("/n/k\(index)", "\(index)")) }
            }
            try await group.waitForAll()
        }
        writer.settle()
        let observed = batches.value
        let flattened = observed.flatMap { $0 }
        // Every write committed exactly once, in sequence order, batches in commit order.
        #expect(flattened == Array(1...Int64(count)))
        #expect(observed.count < count, "expected group commit, got \(observed.count) batches for \(count) writes")
        #expect(observed.contains { $0.count > 1 })
        // Each published version ends at its batch's last write.
        #expect(versions.value == observed.map { $0.last! })
        #expect(try SQLiteInspector(folder: fixture.folder).logSequences().count == count)
        database = nil

        let reopened = try fixture.open()
        let children = reopened.value(at: try path("/n")).children
        #expect(children?.count == count)
        for index in 0..<count {
            #expect(children?[ChildKey("k\(index)")] == .int(Int64(index)))
        }
    }

    @Test func readersSeeOnlyCommittedVersions() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let database = try fixture.open()
        let seen = SendableBox<[Int64]>([])
        database.events.subscribe { _, event in
            guard case .committed(_, let version) = event else { return }
            seen.mutate { $0.append(version.sequence) }
        }
        for index in 1...20 {
            let committed = try await database.write(set("/counter", "\(index)"))
            // The call returns only after its write is published.
            #expect(database.current.sequence >= committed.sequence)
            #expect(database.value(at: try path("/counter")) == .int(Int64(index)))
        }
        database.settle()
        #expect(seen.value.last == 20)
        #expect(seen.value == seen.value.sorted())
    }
}
