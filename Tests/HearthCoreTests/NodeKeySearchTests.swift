import Testing
@testable import HearthCore

@Suite("Finding keys in a tree")
struct NodeKeySearchTests {
    @Test func findsEveryMatchingKeyAtAnyDepthIgnoringCase() throws {
        let value = try node(#"{"users":{"ann":{"Profile":{"name":"Ann"}},"bob":{"profileX":1}},"profiles":true,"misc":{"deep":{"deeper":{"myProfile":"x"}}}}"#)
        let found = value.findKeys(containing: "profile", maxResults: 10, maxNodes: 100)
        // Depth first in key order, a parent before its children.
        #expect(found.matches.map(\.path.description) == [
            "/misc/deep/deeper/myProfile", "/profiles", "/users/ann/Profile", "/users/bob/profileX",
        ])
        #expect(found.matches[1].node == .bool(true))
        #expect(found.stoppedAt == nil)
        #expect(found.visited == 11)
        #expect(value.findKeys(containing: "nothing", maxResults: 10, maxNodes: 100).matches.isEmpty)
        #expect(Node.int(1).findKeys(containing: "a", maxResults: 1, maxNodes: 1) == .init(matches: [], visited: 0, stoppedAt: nil))
    }

    @Test func stopsAtTheBoundsAndSaysWhich() throws {
        let value = try node(#"{"a1":{"a2":{"a3":1}},"b":{"a4":2},"c":3}"#)
        let firstTwo = value.findKeys(containing: "a", maxResults: 2, maxNodes: 100)
        #expect(firstTwo.matches.map(\.path.description) == ["/a1", "/a1/a2"])
        #expect(firstTwo.stoppedAt == .results)
        let fewNodes = value.findKeys(containing: "a", maxResults: 100, maxNodes: 4)
        #expect(fewNodes.matches.map(\.path.description) == ["/a1", "/a1/a2", "/a1/a2/a3"])
        #expect(fewNodes.visited == 4)
        #expect(fewNodes.stoppedAt == .nodes)
        // A wide object: bounded work, however many children it has.
        let wide = Node.object(Children(sortedUniqueEntries: (0..<100_000).map { (ChildKey("k\($0)"), Node.int(Int64($0))) }
            .sorted { ChildKey.compare($0.0, $1.0) < 0 }))
        let bounded = wide.findKeys(containing: "zzz", maxResults: 5, maxNodes: 1_000)
        #expect(bounded.visited == 1_000 && bounded.stoppedAt == .nodes && bounded.matches.isEmpty)
    }
}
