import Testing
@testable import HearthCore

/// The dinosaur data of the firebase-admin-python integration tests (`integration/test_db.py`), written out here.
enum Dinosaurs {
    static let json = #"""
        {
          "dinosaurs": {
            "bruhathkayosaurus": {"appeared": -70000000, "height": 25, "length": 44, "order": "saurischia",
                                  "vanished": -70000000, "weight": 135000, "ratings": {"pos": 1}},
            "lambeosaurus": {"appeared": -76000000, "height": 2.1, "length": 12.5, "order": "ornithischia",
                             "vanished": -75000000, "weight": 5000, "ratings": {"pos": 2}},
            "linhenykus": {"appeared": -85000000, "height": 0.6, "length": 1, "order": "theropoda",
                           "vanished": -75000000, "weight": 3, "ratings": {"pos": 3}},
            "pterodactyl": {"appeared": -150000000, "height": 0.6, "length": 0.8, "order": "pterosauria",
                            "vanished": -148500000, "weight": 2, "ratings": {"pos": 4}},
            "stegosaurus": {"appeared": -155000000, "height": 4, "length": 9, "order": "ornithischia",
                            "vanished": -150000000, "weight": 2500, "ratings": {"pos": 5}},
            "triceratops": {"appeared": -68000000, "height": 3, "length": 8, "order": "ornithischia",
                            "vanished": -66000000, "weight": 11000, "ratings": {"pos": 6}}
          },
          "scores": {
            "bruhathkayosaurus": 55, "lambeosaurus": 21, "linhenykus": 80,
            "pterodactyl": 93, "stegosaurus": 5, "triceratops": 22
          }
        }
        """#

    static func root() throws -> Node { try node(json) }
    static func dinosaurs() throws -> Node { try root().child(key("dinosaurs")) }
    static func scores() throws -> Node { try root().child(key("scores")) }
}

@Suite struct QueryTests {
    static let height = Query.Order.child(Path(keys: [ChildKey("height")]))
    static let ratingsPos = Query.Order.child(Path(keys: [ChildKey("ratings"), ChildKey("pos")]))

    static func bound(_ value: Node, _ key: String? = nil, inclusive: Bool = true) -> Query.Bound {
        Query.Bound(value: value, key: key.map(ChildKey.init), inclusive: inclusive)
    }

    /// Runs a query with and without an index and checks both agree; returns the keys.
    static func run(_ query: Query, on location: Node) -> [String] {
        let scanned = location.run(query)
        let indexed = location.run(query, index: ChildIndex(order: query.order, over: location))
        #expect(keys(indexed) == keys(scanned), "index and scan disagree for \(query)")
        #expect(indexed.map(\.value) == scanned.map(\.value))
        for (key, value) in scanned { #expect(location.child(key) == value) }
        return keys(scanned)
    }

    // MARK: - The expectations of those tests

    @Test func orderByKey() throws {
        let dinosaurs = try Dinosaurs.dinosaurs()
        let all = ["bruhathkayosaurus", "lambeosaurus", "linhenykus", "pterodactyl", "stegosaurus", "triceratops"]
        #expect(Self.run(Query(order: .key), on: dinosaurs) == all)
        #expect(Self.run(Query(order: .key, limit: .first(2)), on: dinosaurs) == ["bruhathkayosaurus", "lambeosaurus"])
        #expect(Self.run(Query(order: .key, limit: .last(2)), on: dinosaurs) == ["stegosaurus", "triceratops"])
        #expect(Self.run(Query(order: .key, start: Self.bound(.string("l"))), on: dinosaurs) == Array(all[1...]))
        #expect(Self.run(Query(order: .key, end: Self.bound(.string("m"))), on: dinosaurs) == Array(all[..<3]))
        #expect(Self.run(Query(order: .key, start: Self.bound(.string("linhenykus"))), on: dinosaurs) == Array(all[2...]))
        #expect(Self.run(Query(order: .key, start: Self.bound(.string("linhenykus"), inclusive: false)), on: dinosaurs) == Array(all[3...]))
        #expect(Self.run(Query(order: .key, end: Self.bound(.string("pterodactyl"))), on: dinosaurs) == Array(all[..<4]))
        #expect(Self.run(Query(order: .key, end: Self.bound(.string("pterodactyl"), inclusive: false)), on: dinosaurs) == Array(all[..<3]))
        #expect(Self.run(.equal(order: .key, value: .string("stegosaurus")), on: dinosaurs) == ["stegosaurus"])
        #expect(Self.run(.equal(order: .key, value: .string("stego")), on: dinosaurs) == [])
        #expect(
            Self.run(Query(order: .key, start: Self.bound(.string("c")), end: Self.bound(.string("s")), limit: .last(2)), on: dinosaurs)
                == ["linhenykus", "pterodactyl"]
        )
    }

    @Test func orderByValueOnScores() throws {
        let scores = try Dinosaurs.scores()
        let ordered = ["stegosaurus", "lambeosaurus", "triceratops", "bruhathkayosaurus", "linhenykus", "pterodactyl"]
        #expect(Self.run(Query(order: .value), on: scores) == ordered)
        #expect(Self.run(Query(order: .value, limit: .last(2)), on: scores) == ["linhenykus", "pterodactyl"])
        #expect(Self.run(Query(order: .value, limit: .first(3)), on: scores) == Array(ordered[..<3]))
        #expect(Self.run(Query(order: .value, start: Self.bound(.int(22)), end: Self.bound(.int(80))), on: scores) == ["triceratops", "bruhathkayosaurus", "linhenykus"])
        #expect(Self.run(Query(order: .value, start: Self.bound(.int(22), inclusive: false)), on: scores) == ["bruhathkayosaurus", "linhenykus", "pterodactyl"])
        #expect(Self.run(Query(order: .value, end: Self.bound(.int(80), inclusive: false)), on: scores) == Array(ordered[..<4]))
        #expect(Self.run(.equal(order: .value, value: .int(55)), on: scores) == ["bruhathkayosaurus"])
        #expect(Self.run(.equal(order: .value, value: .double(55.0)), on: scores) == ["bruhathkayosaurus"])
        #expect(Self.run(.equal(order: .value, value: .string("55")), on: scores) == [])
    }

    @Test func orderByChildHeight() throws {
        let dinosaurs = try Dinosaurs.dinosaurs()
        let ordered = ["linhenykus", "pterodactyl", "lambeosaurus", "triceratops", "stegosaurus", "bruhathkayosaurus"]
        #expect(Self.run(Query(order: Self.height), on: dinosaurs) == ordered)
        #expect(Self.run(Query(order: Self.height, limit: .first(2)), on: dinosaurs) == ["linhenykus", "pterodactyl"])
        #expect(Self.run(Query(order: Self.height, limit: .first(10)), on: dinosaurs) == ordered)
        #expect(Self.run(Query(order: Self.height, limit: .last(2)), on: dinosaurs) == ["stegosaurus", "bruhathkayosaurus"])
        #expect(Self.run(Query(order: Self.height, limit: .last(10)), on: dinosaurs) == ordered)
        #expect(Self.run(Query(order: Self.height, limit: .first(0)), on: dinosaurs) == [])
        #expect(Self.run(Query(order: Self.height, limit: .last(0)), on: dinosaurs) == [])
    }

    @Test func rangesOnChildHeight() throws {
        let dinosaurs = try Dinosaurs.dinosaurs()
        let ordered = ["linhenykus", "pterodactyl", "lambeosaurus", "triceratops", "stegosaurus", "bruhathkayosaurus"]
        #expect(Self.run(Query(order: Self.height, start: Self.bound(.double(3.5))), on: dinosaurs) == Array(ordered.suffix(2)))
        #expect(Self.run(Query(order: Self.height, end: Self.bound(.double(3.5))), on: dinosaurs) == Array(ordered.prefix(4)))
        #expect(
            Self.run(Query(order: Self.height, start: Self.bound(.double(2.5)), end: Self.bound(.int(5))), on: dinosaurs)
                == ["triceratops", "stegosaurus"]
        )
        #expect(Self.run(.equal(order: Self.height, value: .double(0.6)), on: dinosaurs) == ["linhenykus", "pterodactyl"])
        #expect(Self.run(Query(order: Self.height, start: Self.bound(.int(3))), on: dinosaurs) == ["triceratops", "stegosaurus", "bruhathkayosaurus"])
        #expect(Self.run(Query(order: Self.height, start: Self.bound(.int(3), inclusive: false)), on: dinosaurs) == ["stegosaurus", "bruhathkayosaurus"])
        #expect(Self.run(Query(order: Self.height, end: Self.bound(.double(2.1), inclusive: false)), on: dinosaurs) == ["linhenykus", "pterodactyl"])
        #expect(
            Self.run(Query(order: Self.height, start: Self.bound(.double(0.6)), end: Self.bound(.int(4)), limit: .last(2)), on: dinosaurs)
                == ["triceratops", "stegosaurus"]
        )
        #expect(Self.run(Query(order: Self.height, start: Self.bound(.int(100))), on: dinosaurs) == [])
        #expect(Self.run(Query(order: Self.height, start: Self.bound(.int(5)), end: Self.bound(.int(4))), on: dinosaurs) == [])
        // Every height is a number, so a string start is past all of them and null is before.
        #expect(Self.run(Query(order: Self.height, start: Self.bound(.string("0"))), on: dinosaurs) == [])
        #expect(Self.run(Query(order: Self.height, start: Self.bound(.null)), on: dinosaurs) == ordered)
    }

    @Test func keyTieBreaks() throws {
        let dinosaurs = try Dinosaurs.dinosaurs()
        let ordered = ["linhenykus", "pterodactyl", "lambeosaurus", "triceratops", "stegosaurus", "bruhathkayosaurus"]
        // startAt(0.6, "m"): linhenykus sorts before the position, pterodactyl after.
        #expect(Self.run(Query(order: Self.height, start: Self.bound(.double(0.6), "m")), on: dinosaurs) == Array(ordered[1...]))
        #expect(Self.run(Query(order: Self.height, start: Self.bound(.double(0.6), "pterodactyl")), on: dinosaurs) == Array(ordered[1...]))
        #expect(Self.run(Query(order: Self.height, start: Self.bound(.double(0.6), "pterodactyl", inclusive: false)), on: dinosaurs) == Array(ordered[2...]))
        #expect(Self.run(Query(order: Self.height, start: Self.bound(.double(0.6), "linhenykus", inclusive: false)), on: dinosaurs) == Array(ordered[1...]))
        #expect(Self.run(Query(order: Self.height, start: Self.bound(.double(0.6), "a")), on: dinosaurs) == ordered)
        // Without a key, startAfter skips every entry with the value.
        #expect(Self.run(Query(order: Self.height, start: Self.bound(.double(0.6), inclusive: false)), on: dinosaurs) == Array(ordered[2...]))
        #expect(Self.run(Query(order: Self.height, end: Self.bound(.double(0.6), "linhenykus")), on: dinosaurs) == ["linhenykus"])
        #expect(Self.run(Query(order: Self.height, end: Self.bound(.double(0.6), "m")), on: dinosaurs) == ["linhenykus"])
        #expect(Self.run(Query(order: Self.height, end: Self.bound(.double(0.6), "pterodactyl", inclusive: false)), on: dinosaurs) == ["linhenykus"])
        #expect(Self.run(Query(order: Self.height, end: Self.bound(.double(0.6), "linhenykus", inclusive: false)), on: dinosaurs) == [])
        // Without a key, endBefore stops before every entry with the value.
        #expect(Self.run(Query(order: Self.height, end: Self.bound(.double(2.1), inclusive: false)), on: dinosaurs) == Array(ordered[..<2]))
        #expect(Self.run(Query(order: Self.height, end: Self.bound(.double(0.6), inclusive: false)), on: dinosaurs) == [])
        #expect(Self.run(.equal(order: Self.height, value: .double(0.6), key: key("pterodactyl")), on: dinosaurs) == ["pterodactyl"])
        #expect(Self.run(.equal(order: Self.height, value: .double(0.6), key: key("nobody")), on: dinosaurs) == [])
        #expect(Self.run(.equal(order: Self.height, value: .double(0.6), limit: .last(1)), on: dinosaurs) == ["pterodactyl"])
    }

    @Test func nestedChildPath() throws {
        let dinosaurs = try Dinosaurs.dinosaurs()
        #expect(Self.run(Query(order: Self.ratingsPos, start: Self.bound(.int(4))), on: dinosaurs) == ["pterodactyl", "stegosaurus", "triceratops"])
        #expect(Self.run(Query(order: Self.ratingsPos, limit: .first(1)), on: dinosaurs) == ["bruhathkayosaurus"])
        #expect(Self.run(Query(order: Self.ratingsPos, end: Self.bound(.int(2))), on: dinosaurs) == ["bruhathkayosaurus", "lambeosaurus"])
        let order = Query.Order.child(Path(keys: [key("order")]))
        #expect(
            Self.run(.equal(order: order, value: .string("ornithischia")), on: dinosaurs) == ["lambeosaurus", "stegosaurus", "triceratops"]
        )
    }

    @Test func filteredResultsAsAnObject() throws {
        let scores = try Dinosaurs.scores()
        let result = scores.queried(Query(order: .value, limit: .last(2)))
        #expect(json(result) == #"{"linhenykus":80,"pterodactyl":93}"#)
        #expect(scores.queried(Query(order: .value, start: Self.bound(.int(1_000)))) == .null)
        #expect(Node.string("leaf").queried(Query(order: .key)) == .null)
        #expect(Node.null.run(Query(order: .value)).isEmpty)
        #expect(Node.int(5).run(Query(order: .key)).isEmpty)
    }

    @Test func shallowReads() throws {
        #expect(json(try Dinosaurs.root().shallow) == #"{"dinosaurs":true,"scores":true}"#)
        #expect(Node.int(5).shallow == .int(5))
        #expect(Node.prioritized(.string("x"), .number(1)).shallow == .string("x"))
        #expect(Node.null.shallow == .null)
    }

    // MARK: - Other orderings

    @Test func orderByPriority() throws {
        let value = try node(#"""
            {"a":1,"b":{".value":1,".priority":5},"c":{".value":1,".priority":2},"d":{".value":1,".priority":"x"},
             "e":{".value":1,".priority":"a"},"f":2,"g":{".priority":2,"k":1},"10":{".value":1,".priority":2}}
            """#)
        let ordered = ["a", "f", "10", "c", "g", "b", "e", "d"]
        #expect(Self.run(Query(order: .priority), on: value) == ordered)
        #expect(Self.run(Query(order: .priority, start: Self.bound(.int(2)), end: Self.bound(.int(5))), on: value) == ["10", "c", "g", "b"])
        #expect(Self.run(Query(order: .priority, start: Self.bound(.string("a"))), on: value) == ["e", "d"])
        #expect(Self.run(Query(order: .priority, limit: .first(3)), on: value) == ["a", "f", "10"])
        #expect(Self.run(Query(order: .priority, limit: .last(2)), on: value) == ["e", "d"])
        #expect(Self.run(Query(order: .priority, end: Self.bound(.null)), on: value) == ["a", "f"])
        #expect(Self.run(.equal(order: .priority, value: .int(2)), on: value) == ["10", "c", "g"])
        #expect(Self.run(.equal(order: .priority, value: .int(2), key: key("c")), on: value) == ["c"])
        #expect(Self.run(Query(order: .priority, start: Self.bound(.int(2), "c", inclusive: false)), on: value) == ["g", "b", "e", "d"])
    }

    @Test func valuesOfMixedTypes() throws {
        let value = try node(#"""
            {"obj2":{"x":1},"s_b":"b","n10":10,"t":true,"f":false,"s_a":"a","n_neg":-1,"n_half":2.5,"obj1":{"y":2},"s_empty":""}
            """#)
        let ordered = ["f", "t", "n_neg", "n_half", "n10", "s_empty", "s_a", "s_b", "obj1", "obj2"]
        #expect(Self.run(Query(order: .value), on: value) == ordered)
        #expect(Self.run(Query(order: .value, start: Self.bound(.bool(true))), on: value) == Array(ordered[1...]))
        #expect(Self.run(Query(order: .value, start: Self.bound(.string(""))), on: value) == Array(ordered[5...]))
        #expect(Self.run(Query(order: .value, end: Self.bound(.bool(false))), on: value) == ["f"])
        #expect(Self.run(.equal(order: .value, value: .bool(true)), on: value) == ["t"])
        #expect(Self.run(Query(order: .value, start: Self.bound(.int(0)), end: Self.bound(.string("a"))), on: value) == ["n_half", "n10", "s_empty", "s_a"])
    }

    @Test func childOrderingWithMissingValues() throws {
        let value = try node(#"{"a":{"v":3},"b":{"w":1},"c":5,"d":{"v":"x"},"e":{"v":null,"z":0},"f":{"v":{"deep":1}},"g":{"v":false}}"#)
        let order = Query.Order.child(Path(keys: [key("v")]))
        // Missing (b, c, e) first by key, then false, numbers, strings, objects.
        #expect(Self.run(Query(order: order), on: value) == ["b", "c", "e", "g", "a", "d", "f"])
        #expect(Self.run(.equal(order: order, value: .null), on: value) == ["b", "c", "e"])
        #expect(Self.run(Query(order: order, start: Self.bound(.null, "c", inclusive: false)), on: value) == ["e", "g", "a", "d", "f"])
    }

    @Test func keyOrderUsesIntegerKeyOrder() throws {
        let value = try node(#"{"10":"a","9":"b","a":"c","007":"d","7":"e","-3":"f"}"#)
        #expect(Self.run(Query(order: .key), on: value) == ["-3", "7", "007", "9", "10", "a"])
        #expect(Self.run(Query(order: .key, start: Self.bound(.string("8"))), on: value) == ["9", "10", "a"])
        #expect(Self.run(Query(order: .key, end: Self.bound(.string("7"))), on: value) == ["-3", "7"])
        #expect(Self.run(Query(order: .key, start: Self.bound(.string("07"))), on: value) == ["007", "9", "10", "a"])
    }

    // MARK: - Index and scan agree on random data

    @Test(arguments: [21, 22, 23, 24] as [UInt64])
    func indexedAndScannedQueriesAgree(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        for _ in 0..<60 {
            let tree = RandomData.tree(using: &generator)
            let orders = RandomData.orders
            var indexes: [Query.Order: ChildIndex] = [:]
            for order in orders { indexes[order] = ChildIndex(order: order, over: tree) }
            for _ in 0..<40 {
                let query = RandomData.query(using: &generator)
                let scanned = tree.run(query)
                let indexed = tree.run(query, index: indexes[query.order])
                #expect(keys(indexed) == keys(scanned), "\(query) on \(tree)")
                #expect(indexed.map(\.value) == scanned.map(\.value))
                #expect(keys(scanned) == RandomData.expectedKeys(query, on: tree), "\(query) on \(tree)")
            }
        }
    }

    @Test func anIndexForAnotherOrderingIsIgnored() throws {
        let dinosaurs = try Dinosaurs.dinosaurs()
        let wrongIndex = ChildIndex(order: .value, over: dinosaurs)
        #expect(keys(dinosaurs.run(Query(order: Self.height, limit: .first(2)), index: wrongIndex)) == ["linhenykus", "pterodactyl"])
    }
}

/// Random trees and queries for comparing the indexed and scanning query paths.
enum RandomData {
    static let childA = Query.Order.child(Path(keys: [ChildKey("a")]))
    static let childAB = Query.Order.child(Path(keys: [ChildKey("a"), ChildKey("b")]))
    static let orders: [Query.Order] = [.key, .value, .priority, childA, childAB]

    static let keyPool = ["0", "1", "2", "7", "07", "10", "-1", "a", "b", "c", "aa", "z", "é", "😀", "\u{E000}", "k1", "k2", "k3", "2147483648"]

    static func primitive(using generator: inout SeededGenerator) -> Node {
        switch Int.random(in: 0..<8, using: &generator) {
        case 0: return .bool(Bool.random(using: &generator))
        case 1, 2: return .int(Int64.random(in: -3...3, using: &generator))
        case 3: return .double([0.5, -0.5, 1.0, 2.5, 3.0][Int.random(in: 0..<5, using: &generator)])
        case 4, 5: return .string(["", "a", "b", "ab", "1", "😀", "\u{E000}"][Int.random(in: 0..<7, using: &generator)])
        default: return .int(Int64.random(in: 0...1, using: &generator))
        }
    }

    static func priority(using generator: inout SeededGenerator) -> Priority? {
        switch Int.random(in: 0..<4, using: &generator) {
        case 0: return .number(Double(Int.random(in: -2...2, using: &generator)))
        case 1: return .string(["a", "b", ""][Int.random(in: 0..<3, using: &generator)])
        default: return nil
        }
    }

    /// A value for one child: a leaf, or an object that may hold `a` and `a/b`.
    static func child(using generator: inout SeededGenerator) -> Node {
        let value: Node
        switch Int.random(in: 0..<6, using: &generator) {
        case 0, 1:
            value = primitive(using: &generator)
        case 2:
            value = Node.object([(ChildKey("a"), primitive(using: &generator)), (ChildKey("x"), .int(1))])
        case 3:
            let inner = Bool.random(using: &generator) ? primitive(using: &generator) : Node.null
            value = Node.object([(ChildKey("a"), Node.object([(ChildKey("b"), inner), (ChildKey("c"), .bool(true))]))])
        case 4:
            value = Node.object([(ChildKey("x"), primitive(using: &generator))])
        default:
            value = Node.object([(ChildKey("a"), Node.object([(ChildKey("b"), Node.object([(ChildKey("deep"), .int(1))]))]))])
        }
        return value.withPriority(priority(using: &generator))
    }

    static func tree(using generator: inout SeededGenerator) -> Node {
        let count = Int.random(in: 0...14, using: &generator)
        var entries: [(ChildKey, Node)] = []
        for _ in 0..<count {
            entries.append((ChildKey(keyPool.randomElement(using: &generator)!), child(using: &generator)))
        }
        return Node.object(entries)
    }

    static func bound(for order: Query.Order, using generator: inout SeededGenerator) -> Query.Bound {
        let inclusive = Bool.random(using: &generator)
        if case .key = order {
            return Query.Bound(value: .string(keyPool.randomElement(using: &generator)!), inclusive: inclusive)
        }
        let value: Node
        switch Int.random(in: 0..<6, using: &generator) {
        case 0: value = .null
        default: value = primitive(using: &generator)
        }
        let key: ChildKey? = Bool.random(using: &generator) ? ChildKey(keyPool.randomElement(using: &generator)!) : nil
        return Query.Bound(value: value, key: key, inclusive: inclusive)
    }

    static func query(using generator: inout SeededGenerator) -> Query {
        let order = orders.randomElement(using: &generator)!
        var query = Query(order: order)
        switch Int.random(in: 0..<5, using: &generator) {
        case 0: break
        case 1: query.start = bound(for: order, using: &generator)
        case 2: query.end = bound(for: order, using: &generator)
        case 3:
            query.start = bound(for: order, using: &generator)
            query.end = bound(for: order, using: &generator)
        default:
            let equal = bound(for: order, using: &generator)
            query = .equal(order: order, value: equal.value, key: order == .key ? nil : equal.key)
        }
        switch Int.random(in: 0..<3, using: &generator) {
        case 0: query.limit = .first(Int.random(in: 0...5, using: &generator))
        case 1: query.limit = .last(Int.random(in: 0...5, using: &generator))
        default: break
        }
        return query
    }

    /// The result keys worked out the slow, obvious way: compute every child's (value, key),
    /// keep those inside the bounds, sort, then apply the limit.
    static func expectedKeys(_ query: Query, on tree: Node) -> [String] {
        guard let children = tree.children else { return [] }
        func sortValue(_ child: Node) -> SortValue {
            switch query.order {
            case .key: return .null
            case .value: return SortValue(child)
            case .priority: return SortValue(priority: child.priority)
            case .child(let path): return SortValue(child.child(at: path))
            }
        }
        // The bound's position compared with (value, key): negative when the child is before it.
        func compare(_ value: SortValue, _ key: ChildKey, with bound: Query.Bound, isStart: Bool) -> Int {
            if case .key = query.order {
                guard case .string(let text) = bound.value else { return 0 }
                return ChildKey.compare(key, ChildKey(text))
            }
            let byValue = SortValue.compare(value, SortValue(bound.value))
            if byValue != 0 { return byValue }
            if let boundKey = bound.key { return ChildKey.compare(key, boundKey) }
            // No key: the start sits before every key and the end after every key (inclusive),
            // the other way round for exclusive bounds.
            return isStart == bound.inclusive ? 1 : -1
        }
        var kept: [(SortValue, ChildKey)] = []
        for (key, child) in children {
            let value = sortValue(child)
            if let start = query.start {
                let order = compare(value, key, with: start, isStart: true)
                if order < 0 || (order == 0 && !start.inclusive) { continue }
            }
            if let end = query.end {
                let order = compare(value, key, with: end, isStart: false)
                if order > 0 || (order == 0 && !end.inclusive) { continue }
            }
            kept.append((value, key))
        }
        kept.sort { lhs, rhs in
            let byValue = SortValue.compare(lhs.0, rhs.0)
            return byValue != 0 ? byValue < 0 : ChildKey.compare(lhs.1, rhs.1) < 0
        }
        var result = kept.map(\.1.string)
        switch query.limit {
        case .first(let n)?: result = Array(result.prefix(n))
        case .last(let n)?: result = Array(result.suffix(n))
        case nil: break
        }
        return result
    }
}
