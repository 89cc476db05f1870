import Testing
@testable import HearthCore

@Suite struct DatabaseStateTests {
    static let location = Path(keys: [ChildKey("app"), ChildKey("items")])
    static let childLocation = Path(keys: [ChildKey("app"), ChildKey("items"), ChildKey("k1")])

    // MARK: - Basics

    @Test func readingValues() throws {
        let state = try DatabaseState().setting(Dinosaurs.json, at: "db")
        #expect(state.value(at: path("db/scores/linhenykus")) == .int(80))
        #expect(state.value(at: path("db/dinosaurs/stegosaurus/ratings/pos")) == .int(5))
        #expect(state.value(at: path("db/nothing")) == .null)
        #expect(state.value(at: path("db/scores/linhenykus/below")) == .null)
        #expect(state.value(at: .root).childCount == 1)
    }

    @Test func olderVersionsAreUnaffectedByLaterWrites() throws {
        let first = try DatabaseState().setting(#"{"a":1,"b":{"c":2}}"#, at: "/")
        let second = try first.setting("3", at: "b/c")
        let third = try second.setting("null", at: "a")
        #expect(json(first.root) == #"{"a":1,"b":{"c":2}}"#)
        #expect(json(second.root) == #"{"a":1,"b":{"c":3}}"#)
        #expect(json(third.root) == #"{"b":{"c":3}}"#)
    }

    @Test func addingAndRemovingIndexes() throws {
        let state = try DatabaseState().setting(Dinosaurs.json, at: "db")
        let scores = path("db/scores")
        #expect(state.index(at: scores, order: .value) == nil)
        let indexed = state.addingIndex(at: scores, order: .value)
        let index = try #require(indexed.index(at: scores, order: .value))
        #expect(index.count == 6)
        #expect(index.entries.map(\.key.key.string) == ["stegosaurus", "lambeosaurus", "triceratops", "bruhathkayosaurus", "linhenykus", "pterodactyl"])
        #expect(indexed.index(at: scores, order: .key) == nil)
        #expect(indexed.index(at: path("db"), order: .value) == nil)
        // Adding it again keeps the existing index.
        let again = indexed.addingIndex(at: scores, order: .value)
        #expect(again.indexes.isIdentical(to: indexed.indexes))
        #expect(indexed.removingIndex(at: scores, order: .value).index(at: scores, order: .value) == nil)
        // An index on a missing location is empty and fills in as data arrives.
        let empty = state.addingIndex(at: path("nowhere"), order: .value)
        #expect(empty.index(at: path("nowhere"), order: .value)?.count == 0)
        let filled = try empty.setting(#"{"x":2,"y":1}"#, at: "nowhere")
        #expect(filled.index(at: path("nowhere"), order: .value)?.entries.map(\.key.key.string) == ["y", "x"])
    }

    @Test func queriesUseTheIndex() throws {
        let state = try DatabaseState().setting(Dinosaurs.json, at: "db")
            .addingIndex(at: path("db/dinosaurs"), order: QueryTests.height)
        let query = Query(order: QueryTests.height, start: QueryTests.bound(.double(3.5)))
        #expect(keys(state.run(query, at: path("db/dinosaurs"))) == ["stegosaurus", "bruhathkayosaurus"])
        // After a write the maintained index still answers correctly.
        let next = try state.setting("10", at: "db/dinosaurs/linhenykus/height")
        #expect(keys(next.run(query, at: path("db/dinosaurs"))) == ["stegosaurus", "linhenykus", "bruhathkayosaurus"])
        #expect(keys(state.run(query, at: path("db/dinosaurs"))) == ["stegosaurus", "bruhathkayosaurus"])
    }

    @Test func indexIDOrderGroupsALocationsIndexes() {
        let ids = [
            DatabaseState.IndexID(path: path("a/b"), order: .value),
            DatabaseState.IndexID(path: path("a"), order: .value),
            DatabaseState.IndexID(path: path("a"), order: .key),
            DatabaseState.IndexID(path: path("a/b/c"), order: .priority),
            DatabaseState.IndexID(path: path("b"), order: .child(path("x"))),
            DatabaseState.IndexID(path: path("a"), order: .child(path("x/y"))),
        ]
        let sorted = ids.sorted { DatabaseState.IndexID.compare($0, $1) < 0 }
        #expect(sorted.map(\.path) == [path("a"), path("a"), path("a"), path("a/b"), path("a/b/c"), path("b")])
        for (left, right) in zip(ids, ids) { #expect(DatabaseState.IndexID.compare(left, right) == 0) }
        for (i, left) in ids.enumerated() {
            for (j, right) in ids.enumerated() where i != j {
                #expect(DatabaseState.IndexID.compare(left, right) != 0)
            }
        }
    }

    // MARK: - Index maintenance under random writes

    static let orders: [Query.Order] = [.value, .key, .priority, RandomData.childA, RandomData.childAB]

    @Test(arguments: [101, 102, 103, 104, 105, 106] as [UInt64])
    func maintainedIndexesMatchFreshlyBuiltOnes(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        var state = DatabaseState()
        for order in Self.orders {
            state = state.addingIndex(at: Self.location, order: order)
            state = state.addingIndex(at: Self.childLocation, order: order)
        }
        state = state.addingIndex(at: .root, order: .key)
        state = state.addingIndex(at: path("app"), order: .child(path("items/k1")))
        var replay = state
        var applied = 0
        for step in 0..<400 {
            let write = try Self.randomWrite(state: state, using: &generator)
            let next: DatabaseState
            let resolved: ResolvedWrite
            do {
                (next, resolved) = try state.applying(write, now: Int64(step))
            } catch {
                Issue.record("write \(step) rejected: \(error)")
                continue
            }
            state = next
            replay = replay.applying(resolved)
            applied += 1
            Self.checkIndexes(of: state, after: "step \(step) (\(write.summary))")
            for _ in 0..<4 {
                let query = RandomData.query(using: &generator)
                let location = state.value(at: Self.location)
                let scanned = location.run(query)
                let viaState = state.run(query, at: Self.location)
                let viaIndex = location.run(query, index: state.index(at: Self.location, order: query.order))
                #expect(keys(viaState) == keys(scanned), "step \(step): \(query)")
                #expect(keys(viaIndex) == keys(scanned), "step \(step): \(query)")
                #expect(viaIndex.map(\.value) == scanned.map(\.value))
            }
        }
        #expect(applied == 400)
        // Replaying the logged writes gives the same tree and the same indexes.
        #expect(replay.root == state.root)
        Self.checkIndexes(of: replay, after: "replay")
    }

    /// Compares every maintained index with one built from scratch over the current data.
    static func checkIndexes(of state: DatabaseState, after description: String) {
        for (id, index) in state.indexes {
            let fresh = ChildIndex(order: id.order, over: state.value(at: id.path))
            let maintained = index.entries.map(\.key)
            let expected = fresh.entries.map(\.key)
            #expect(maintained == expected, "index \(id.order) at \(id.path) after \(description)")
            #expect(index.count == fresh.count)
            // The index carries each child's current value, which queries return directly.
            let values = index.entries.map(\.value)
            let expectedValues = fresh.entries.map(\.value)
            #expect(values == expectedValues, "index values \(id.order) at \(id.path) after \(description)")
        }
    }

    // MARK: - Random writes

    static let itemKeys = ["k1", "k2", "k3", "k4", "10", "9", "a", "b"]

    static func randomChild(using generator: inout SeededGenerator) -> String {
        itemKeys.randomElement(using: &generator)!
    }

    /// A random JSON value for an item: a leaf, an object with `a`, or `a/b`, maybe a priority.
    static func randomItem(using generator: inout SeededGenerator) -> String {
        let value: String
        switch Int.random(in: 0..<7, using: &generator) {
        case 0: value = String(Int.random(in: -3...3, using: &generator))
        case 1: value = ["\"x\"", "\"y\"", "true", "false", "2.5"].randomElement(using: &generator)!
        case 2: value = #"{"a":\#(randomLeaf(using: &generator)),"x":1}"#
        case 3: value = #"{"a":{"b":\#(randomLeaf(using: &generator)),"c":true}}"#
        case 4: value = #"{"x":\#(randomLeaf(using: &generator))}"#
        case 5: value = "null"
        default: value = #"{"a":{"b":{".sv":{"increment":1}}}}"#
        }
        guard value != "null", Int.random(in: 0..<3, using: &generator) == 0 else { return value }
        let priority = ["1", "-2", "\"p\"", "\"a\"", "0.5"].randomElement(using: &generator)!
        if value.hasPrefix("{") { return #"{".priority":\#(priority),"# + value.dropFirst() }
        return #"{".value":\#(value),".priority":\#(priority)}"#
    }

    static func randomLeaf(using generator: inout SeededGenerator) -> String {
        ["0", "1", "2", "-1", "1.5", "\"s\"", "\"t\"", "true", "false", "null", #"{"deep":1}"#, #"{".sv":"timestamp"}"#]
            .randomElement(using: &generator)!
    }

    static func randomItems(using generator: inout SeededGenerator) -> String {
        let count = Int.random(in: 0...6, using: &generator)
        var fields: [String: String] = [:]
        for _ in 0..<count { fields[randomChild(using: &generator)] = randomItem(using: &generator) }
        return "{" + fields.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
    }

    static func randomWrite(state: DatabaseState, using generator: inout SeededGenerator) throws -> Write {
        let items = location.keys.map(\.string).joined(separator: "/")
        switch Int.random(in: 0..<12, using: &generator) {
        case 0, 1:  // a child of the location
            return .set(path("\(items)/\(randomChild(using: &generator))"), try parsed(randomItem(using: &generator)))
        case 2:  // a grandchild
            let field = ["a", "x", "a/b", "a/b/deep", "a/c"].randomElement(using: &generator)!
            return .set(path("\(items)/\(randomChild(using: &generator))/\(field)"), try parsed(randomLeaf(using: &generator)))
        case 3:  // a priority
            let priority = ["1", "3", "\"q\"", "null", "-1"].randomElement(using: &generator)!
            return .set(path("\(items)/\(randomChild(using: &generator))/.priority"), try parsed(priority))
        case 4:  // the location itself
            return .set(path(items), try parsed(randomItems(using: &generator)))
        case 5:  // above the location
            if Bool.random(using: &generator) {
                return .set(path("app"), try parsed(#"{"items":\#(randomItems(using: &generator)),"other":1}"#))
            }
            return .set(.root, try parsed(#"{"app":{"items":\#(randomItems(using: &generator))},"top":true}"#))
        case 6:  // a delete
            let target = ["\(items)/\(randomChild(using: &generator))", "\(items)/\(randomChild(using: &generator))/a", items, "app"]
                .randomElement(using: &generator)!
            return .set(path(target), try parsed("null"))
        case 7, 8:  // an update at the location
            var entries: [(path: Path, value: JSONParser.Parsed)] = []
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let child = randomChild(using: &generator)
                let relative = [child, "\(child)/a", "\(child)/a/b", "\(child)/.priority", "\(child)/x"].randomElement(using: &generator)!
                let candidate = path(relative)
                if entries.contains(where: { $0.path.contains(candidate) || candidate.contains($0.path) }) { continue }
                let text = relative.hasSuffix(".priority") ? "7" : (relative == child ? randomItem(using: &generator) : randomLeaf(using: &generator))
                entries.append((candidate, try parsed(text)))
            }
            return .update(path(items), entries)
        case 9:  // an update above the location
            let child = randomChild(using: &generator)
            return .update(path("app"), [
                (path: path("items/\(child)"), value: try parsed(randomItem(using: &generator))),
                (path: path("elsewhere"), value: try parsed("1")),
            ])
        case 10:  // an update whose base is below the location
            let child = randomChild(using: &generator)
            return .update(path("\(items)/\(child)"), [
                (path: path("a/b"), value: try parsed(randomLeaf(using: &generator))),
                (path: path("x"), value: try parsed(randomLeaf(using: &generator))),
            ])
        default:  // a write elsewhere that touches no index
            return .set(path("unrelated/\(randomChild(using: &generator))"), try parsed(randomItem(using: &generator)))
        }
    }

    // MARK: - Focused maintenance cases

    @Test func writesAboveAndAtTheLocationRebuildTheIndex() throws {
        var state = try DatabaseState().setting(#"{"x":{"a":3},"y":{"a":1}}"#, at: "app/items")
        state = state.addingIndex(at: Self.location, order: RandomData.childA)
        state = try state.setting(#"{"items":{"z":{"a":2},"w":{"a":0}}}"#, at: "app")
        #expect(state.index(at: Self.location, order: RandomData.childA)?.entries.map(\.key.key.string) == ["w", "z"])
        state = try state.setting(#"{"q":{"a":9}}"#, at: "app/items")
        #expect(state.index(at: Self.location, order: RandomData.childA)?.entries.map(\.key.key.string) == ["q"])
        state = try state.setting("null", at: "/")
        #expect(state.index(at: Self.location, order: RandomData.childA)?.count == 0)
    }

    @Test func priorityWritesMoveEntriesInAPriorityIndex() throws {
        var state = try DatabaseState().setting(#"{"x":1,"y":2,"z":3}"#, at: "app/items")
        state = state.addingIndex(at: Self.location, order: .priority)
        state = try state.setting("5", at: "app/items/x/.priority")
        #expect(state.index(at: Self.location, order: .priority)?.entries.map(\.key.key.string) == ["y", "z", "x"])
        state = try state.setting(#""s""#, at: "app/items/y/.priority")
        #expect(state.index(at: Self.location, order: .priority)?.entries.map(\.key.key.string) == ["z", "x", "y"])
        // The location's own priority is not an entry.
        state = try state.setting("1", at: "app/items/.priority")
        #expect(state.index(at: Self.location, order: .priority)?.count == 3)
        Self.checkIndexes(of: state, after: "priority writes")
    }

    @Test func deletingTheLastGrandchildRemovesTheEntry() throws {
        var state = try DatabaseState().setting(#"{"x":{"a":{"b":1}},"y":{"a":{"b":2}}}"#, at: "app/items")
        state = state.addingIndex(at: Self.location, order: RandomData.childAB)
        state = try state.setting("null", at: "app/items/x/a/b")
        #expect(state.index(at: Self.location, order: RandomData.childAB)?.entries.map(\.key.key.string) == ["y"])
        state = try state.setting("null", at: "app/items/y/a")
        #expect(state.index(at: Self.location, order: RandomData.childAB)?.count == 0)
        #expect(state.value(at: path("app")) == .null)
    }
}

extension Write {
    /// A short description for failure messages.
    var summary: String {
        switch self {
        case .set(let path, let parsed): return "set \(path) = \(parsed.node)"
        case .update(let base, let entries): return "update \(base) " + entries.map { "\($0.path)=\($0.value.node)" }.joined(separator: " ")
        }
    }
}
