import Testing
@testable import HearthCore

@Suite("Node count up to a cap")
struct NodeCountTests {
    @Test func countsEveryObjectAndLeafIncludingItself() throws {
        #expect(Node.null.nodeCount(upTo: 10) == (0, false))
        #expect(Node.int(3).nodeCount(upTo: 10) == (1, false))
        // root, a, a/b, a/c, a/c/d, e = 6
        let value = try node(#"{"a":{"b":1,"c":{"d":"x"}},"e":true}"#)
        #expect(value.nodeCount(upTo: 100) == (6, false))
        #expect(value.nodeCount(upTo: 6) == (6, false))
    }

    @Test func stopsPastTheCap() throws {
        let value = try node(#"{"a":{"b":1,"c":{"d":"x"}},"e":true}"#)
        #expect(value.nodeCount(upTo: 5) == (5, true))
        #expect(value.nodeCount(upTo: 1) == (1, true))
        // A wide object: the count stops long before its million children would be visited.
        let wide = Node.object(Children(sortedUniqueEntries: (0..<200_000).map { (ChildKey("k\($0)"), Node.int(Int64($0))) }
            .sorted { ChildKey.compare($0.0, $1.0) < 0 }))
        #expect(wide.nodeCount(upTo: 20_000) == (20_000, true))
        #expect(wide.nodeCount(upTo: 300_000) == (200_001, false))
    }
}
