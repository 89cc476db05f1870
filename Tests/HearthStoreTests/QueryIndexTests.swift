import Foundation
import HearthCore
@testable import HearthStore
import HearthTesting
import Testing

/// `run(_:at:)` builds an index on first use and keeps it current; its answers must always be
/// the ones a full scan of the same version gives, and the ones a plain reference
/// implementation gives.
@Suite("Indexed queries")
struct QueryIndexTests {
    static let location = "/scores"

    static func queries() -> [Query] {
        let score = Query.Order.child(Path(keys: [ChildKey("score")]))
        let nested = Query.Order.child(Path(keys: [ChildKey("meta"), ChildKey("level")]))
        return [
            Query(order: score),
            Query(order: score, limit: .first(10)),
            Query(order: score, limit: .last(7)),
            Query(order: score, start: .init(value: .int(200)), end: .init(value: .int(600))),
            Query(order: score, start: .init(value: .int(300)), limit: .first(5)),
            Query(order: score, end: .init(value: .int(500)), limit: .last(5)),
            Query(order: score, start: .init(value: .int(250), inclusive: false), end: .init(value: .int(750), inclusive: false), limit: .last(12)),
            Query(order: score, start: .init(value: .int(400), key: ChildKey("p050"))),
            Query.equal(order: score, value: .int(500)),
            Query(order: nested, start: .init(value: .string("m")), limit: .first(8)),
            Query(order: .value, limit: .first(15)),
            Query(order: .value, start: .init(value: .bool(true)), end: .init(value: .int(10_000))),
        ]
    }

    /// A plain, obviously correct answer for the score queries: filter, sort, limit.
    static func reference(_ query: Query, over node: Node) -> [ChildKey]? {
        guard case .child(let orderPath) = query.order, orderPath == Path(keys: [ChildKey("score")]) else { return nil }
        struct Entry { let key: ChildKey; let score: Double? }
        func rank(_ entry: Entry, versus value: Node, key: ChildKey?) -> Int {
            // Scores here are numbers or missing (null sorts first).
            let bound = value.numberValue
            switch (entry.score, bound) {
            case (nil, nil): break
            case (nil, _): return -1
            case (_, nil): return 1
            case let (a?, b?): if a != b { return a < b ? -1 : 1 }
            }
            guard let key else { return 0 }
            return ChildKey.compare(entry.key, key)
        }
        var entries = (node.children.map { Array($0) } ?? []).map { Entry(key: $0.key, score: $0.value.child(ChildKey("score")).numberValue) }
        if let start = query.start {
            entries = entries.filter {
                let order = rank($0, versus: start.value, key: start.key)
                return start.key == nil ? (start.inclusive ? order >= 0 : order > 0) : (start.inclusive ? order >= 0 : order > 0)
            }
        }
        if let end = query.end {
            entries = entries.filter {
                let order = rank($0, versus: end.value, key: end.key)
                return end.inclusive ? order <= 0 : order < 0
            }
        }
        entries.sort { lhs, rhs in
            switch (lhs.score, rhs.score) {
            case (nil, nil): return lhs.key < rhs.key
            case (nil, _): return true
            case (_, nil): return false
            case let (a?, b?): return a != b ? a < b : lhs.key < rhs.key
            }
        }
        switch query.limit {
        case .first(let count)?: entries = Array(entries.prefix(count))
        case .last(let count)?: entries = Array(entries.suffix(count))
        case nil: break
        }
        return entries.map(\.key)
    }

    static func seed(_ database: Database, random: inout SeededRandom) async throws {
        var members: [String] = []
        for index in 0..<200 {
            let key = String(format: "p%03d", index)
            let level = ["a", "m", "q", "z"][Int(random.next() % 4)]
            members.append(#""\#(key)":{"score":\#(random.next() % 1000),"meta":{"level":"\#(level)"}}"#)
        }
        try await database.write(set(location, "{" + members.joined(separator: ",") + "}"))
    }

    /// One random change to the scores: a new score, a deleted or added child, a child whose
    /// score vanishes, a multi-child update, a priority change, or a whole-location rewrite.
    static func randomWrite(_ database: Database, step: Int, random: inout SeededRandom) async throws {
        let key = String(format: "p%03d", Int(random.next() % 260))
        let score = random.next() % 1000
        switch random.next() % 10 {
        case 0, 1, 2: try await database.write(set("\(location)/\(key)/score", "\(score)"))
        case 3: try await database.write(set("\(location)/\(key)", "null"))
        case 4: try await database.write(set("\(location)/\(key)", #"{"score":\#(score),"meta":{"level":"b"}}"#))
        case 5: try await database.write(set("\(location)/\(key)/score", "null"))
        case 6:
            let other = String(format: "p%03d", Int(random.next() % 260))
            guard other != key else { return }
            try await database.write(update(location, [("\(key)/score", "\(score)"), ("\(other)", #"{"score":\#(999 - score)}"#)]))
        case 7: try await database.write(set("\(location)/\(key)/.priority", "\(score)"))
        case 8: try await database.write(set("\(location)/\(key)/meta/level", #""\#(["c", "n", "y"][Int(score % 3)])""#))
        default:
            if step % 97 == 0 {
                try await seed(database, random: &random)
            } else {
                try await database.write(set("\(location)/\(key)", "\(score)"))  // a leaf child
            }
        }
    }

    static func compare(_ query: Query, in state: DatabaseState, sourceLocation: SourceLocation = #_sourceLocation) {
        let path = Path(keys: [ChildKey("scores")])
        let viaState = state.run(query, at: path)
        let scan = state.root.child(at: path).run(query, index: nil)
        #expect(viaState.map(\.key) == scan.map(\.key), "\(query.order) \(String(describing: query.limit))", sourceLocation: sourceLocation)
        #expect(viaState.map(\.value) == scan.map(\.value), sourceLocation: sourceLocation)
        if let expected = reference(query, over: state.root.child(at: path)) {
            #expect(scan.map(\.key) == expected, "reference disagrees for \(query.start.map { "\($0.value)" } ?? "-")..\(query.end.map { "\($0.value)" } ?? "-")", sourceLocation: sourceLocation)
        }
    }

    @Test func indexedAnswersMatchAScanWhileWritesContinue() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let database = try fixture.open()
        var random = SeededRandom(seed: 2024)
        try await Self.seed(database, random: &random)
        let path = Path(keys: [ChildKey("scores")])
        let queries = Self.queries()

        // The first run builds the index.
        for query in queries {
            let result = database.run(query, at: path)
            #expect(!result.isEmpty || query.start != nil)
        }
        database.settle()
        for query in queries where query.usesIndex {
            #expect(database.current.state.index(at: path, order: query.order) != nil, "no index for \(query.order)")
        }

        let done = SendableBox(false)
        let writes = Task {
            var random = SeededRandom(seed: 77)
            for step in 0..<600 {
                try await Self.randomWrite(database, step: step, random: &random)
            }
            done.mutate { $0 = true }
        }
        var rounds = 0
        while !done.value {
            let version = database.current
            for query in queries {
                _ = database.run(query, at: path)
                Self.compare(query, in: version.state)
            }
            rounds += 1
            await Task.yield()
        }
        try await writes.value
        database.settle()
        #expect(rounds > 1, "queries ran while writes were going on")

        let final = database.current.state
        for query in queries {
            Self.compare(query, in: final)
            #expect(database.run(query, at: path).map(\.key) == final.root.child(at: path).run(query).map(\.key))
            if query.usesIndex { #expect(final.index(at: path, order: query.order) != nil) }
        }
        // The maintained index holds exactly the children there are.
        let scoreIndex = try #require(final.index(at: path, order: queries[0].order))
        #expect(scoreIndex.count == final.root.child(at: path).childCount)
    }

    @Test func indexesAreNotPersistedButRebuiltOnDemand() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        var random = SeededRandom(seed: 5)
        let path = Path(keys: [ChildKey("scores")])
        let query = Self.queries()[3]
        var database: Database? = try fixture.open()
        try await Self.seed(database!, random: &random)
        let before = database!.run(query, at: path)
        database = nil
        let reopened = try fixture.open()
        #expect(reopened.current.state.index(at: path, order: query.order) == nil)
        let after = reopened.run(query, at: path)
        #expect(after.map(\.key) == before.map(\.key))
        #expect(reopened.current.state.index(at: path, order: query.order) != nil)
        #expect(reopened.run(query, at: path, index: false).map(\.key) == before.map(\.key))
    }
}
