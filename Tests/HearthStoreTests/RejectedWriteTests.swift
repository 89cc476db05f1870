import Foundation
import HearthCore
@testable import HearthStore
import HearthTesting
import Testing

/// A rejected write changes nothing: not the tree in memory, not the log, not the sequence
/// numbers, and nothing observers see.
@Suite("Rejected writes")
struct RejectedWriteTests {
    static let initial = #"{"a":{"b":1,"c":{".priority":2,"d":"x"}},"n":5}"#

    /// Opens a database holding ``initial`` and returns it with its commit count so far.
    static func prepared(_ fixture: StoreFixture) async throws -> (Database, SendableBox<Int>) {
        let database = try fixture.open()
        try await database.write(set("/", initial))
        let commits = SendableBox(0)
        database.events.subscribe { _, event in
            if case .committed(let committed, _) = event { commits.mutate { $0 += committed.count } }
        }
        return (database, commits)
    }

    /// Runs `attempt`, which must fail with `message`, then checks that nothing changed.
    static func expectRejected(
        _ description: String,
        message: String? = nil,
        in fixture: StoreFixture,
        _ attempt: @escaping @Sendable (Database) async throws -> Void,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        var database: Database? = nil
        let (opened, commits) = try await prepared(fixture)
        database = opened
        let before = opened.current
        do {
            try await attempt(opened)
            Issue.record("\(description) was accepted", sourceLocation: sourceLocation)
        } catch let error as HearthError {
            if let message { #expect(error.message == message, sourceLocation: sourceLocation) }
        }
        opened.settle()
        #expect(opened.current.state.root == before.state.root, "\(description) changed memory", sourceLocation: sourceLocation)
        #expect(opened.current.sequence == before.sequence, sourceLocation: sourceLocation)
        #expect(commits.value == 0, "\(description) was committed", sourceLocation: sourceLocation)
        #expect(try SQLiteInspector(folder: fixture.folder).logSequences() == [1], "\(description) reached the log", sourceLocation: sourceLocation)

        // The next good write takes the next sequence number: nothing was used up.
        let next = try await opened.write(set("/after", "true"))
        #expect(next.sequence == 2, sourceLocation: sourceLocation)
        database = nil
        _ = database

        let reopened = try fixture.open()
        let expected = try node(initial).setting(.bool(true), at: try path("/after"))
        #expect(reopened.current.state.root == expected, "\(description) reached the disk", sourceLocation: sourceLocation)
    }

    static let depthMessage = "Invalid data; the data exceeds the maximum depth of 32 levels."

    /// `depth` nested objects ending in a leaf.
    static func nested(_ depth: Int) -> String {
        String(repeating: #"{"k":"#, count: depth) + "1" + String(repeating: "}", count: depth)
    }

    @Test func tooDeepSetIsRejected() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        try await Self.expectRejected("a set 33 levels deep", message: Self.depthMessage, in: fixture) { database in
            try await database.write(set("/a/b", Self.nested(31)))
        }
    }

    @Test func depthLimitBoundary() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let database = try fixture.open()
        // Exactly 32 levels: accepted, at the root and below.
        try await database.write(set("/", Self.nested(32)))
        try await database.write(set("/x/y", Self.nested(30)))
        await #expect(throws: HearthError.self) { try await database.write(set("/x/y", Self.nested(31))) }
        await #expect(throws: HearthError.self) { try await database.push(at: try path("/x"), value: try parsed(Self.nested(31))) }
        #expect(database.current.sequence == 2)
    }

    @Test func tooDeepUpdateEntryRejectsTheWholeUpdate() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        try await Self.expectRejected("an update with one entry too deep", message: Self.depthMessage, in: fixture) { database in
            try await database.write(update("/a", [("b", "2"), ("z/y", Self.nested(30))]))
        }
    }

    @Test func tooDeepPushIsRejected() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        try await Self.expectRejected("a push 33 levels deep", message: Self.depthMessage, in: fixture) { database in
            try await database.push(at: try path("/a"), value: try parsed(Self.nested(31)))
        }
    }

    @Test func overlappingUpdatePathsAreRejected() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        try await Self.expectRejected(
            "an update with overlapping paths",
            message: "Invalid data; path /a is an ancestor of /a/b in the same update.", in: fixture
        ) { database in
            try await database.write(update("/", [("n", "6"), ("a/b", "2"), ("a", "3")]))
        }
        let other = try StoreFixture()
        defer { other.remove() }
        try await Self.expectRejected("an update of a child and its priority", in: other) { database in
            try await database.write(update("/", [("a/c", "3"), ("a/c/.priority", "4")]))
        }
    }

    @Test func failingPreconditionRejectsTheWrite() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let refusal = HearthError(.preconditionFailed, "not today")
        try await Self.expectRejected("a write whose precondition throws", message: "not today", in: fixture) { database in
            try await database.write(set("/n", "6")) { state in
                // The precondition sees the newest version.
                guard state.value(at: try path("/n")) == .int(5) else { return }
                throw refusal
            }
        }
    }

    @Test func passingPreconditionLetsTheWriteThrough() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let database = try fixture.open()
        try await database.write(set("/n", "5"))
        try await database.write(set("/n", "6")) { state in
            guard state.value(at: try path("/n")) == .int(5) else { throw HearthError(.preconditionFailed, "changed") }
        }
        #expect(database.value(at: try path("/n")) == .int(6))
        // A precondition checked in write order: the second sees the first's result.
        await #expect(throws: HearthError.self) {
            try await database.write(set("/n", "7")) { state in
                guard state.value(at: try path("/n")) == .int(5) else { throw HearthError(.preconditionFailed, "changed") }
            }
        }
        #expect(database.value(at: try path("/n")) == .int(6))
    }

    @Test func unknownServerValueIsRejected() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        try await Self.expectRejected("an unknown server value", in: fixture) { database in
            try await database.write(update("/", [("n", "6"), ("t", #"{".sv":"tomorrow"}"#)]))
        }
    }

    @Test func rejectionsAmongConcurrentWritesLeaveTheOthersIntact() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        var database: Database? = try fixture.open()
        let writer = database!
        let outcomes = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
            for index in 0..<100 {
                group.addTask {
                    do {
                        if index % 4 == 0 {
                            try await writer.write(set("/bad/i\(index)", Self.nested(31)))
                        } else {
                            try await writer.write(set("/good/i\(index)", "\(index)"))
                        }
                        return (index, true)
                    } catch is HearthError {
                        return (index, false)
                    }
                }
            }
            var all: [(Int, Bool)] = []
            for try await outcome in group { all.append(outcome) }
            return all
        }
        #expect(outcomes.allSatisfy { $0.1 == ($0.0 % 4 != 0) })
        #expect(writer.current.sequence == 75, "sequence numbers have no gaps")
        #expect(try SQLiteInspector(folder: fixture.folder).logSequences() == Array(1...75))
        database = nil
        let reopened = try fixture.open()
        #expect(reopened.value(at: try path("/bad")).isNull)
        #expect(reopened.value(at: try path("/good")).childCount == 75)
    }
}
