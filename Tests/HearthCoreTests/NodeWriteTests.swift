import Testing
@testable import HearthCore

@Suite struct NodeWriteTests {
    // MARK: - Set and delete

    @Test func setAtDepthCreatesTheParents() {
        let value = Node.null.setting(.int(1), at: path("a/b/c"))
        #expect(json(value) == #"{"a":{"b":{"c":1}}}"#)
        #expect(value.child(at: path("a/b/c")) == .int(1))
        #expect(Node.null.setting(.string("x"), at: .root) == .string("x"))
    }

    @Test func setReplacesTheSubtreeAndKeepsSiblings() throws {
        let start = try node(#"{"a":{"b":{"c":1,"d":2},"e":3},"f":4}"#)
        #expect(json(start.setting(try node(#"{"x":true}"#), at: path("a/b"))) == #"{"a":{"b":{"x":true},"e":3},"f":4}"#)
        #expect(json(start.setting(.int(9), at: path("a/b/c"))) == #"{"a":{"b":{"c":9,"d":2},"e":3},"f":4}"#)
        #expect(json(start.setting(.int(9), at: path("a/new"))) == #"{"a":{"b":{"c":1,"d":2},"e":3,"new":9},"f":4}"#)
        #expect(start.setting(.string("all"), at: .root) == .string("all"))
    }

    @Test func deletingRemovesTheChild() throws {
        let start = try node(#"{"a":{"b":1,"c":2},"d":3}"#)
        #expect(json(start.setting(.null, at: path("a/b"))) == #"{"a":{"c":2},"d":3}"#)
        #expect(json(start.setting(.null, at: path("a"))) == #"{"d":3}"#)
        #expect(start.setting(.null, at: .root) == .null)
    }

    @Test func deletingTheLastChildMakesParentsVanish() throws {
        let lone = try node(#"{"a":{"b":{"c":1}}}"#)
        #expect(lone.setting(.null, at: path("a/b/c")) == .null)
        let withSibling = try node(#"{"a":{"b":{"c":1}},"x":1}"#)
        #expect(json(withSibling.setting(.null, at: path("a/b/c"))) == #"{"x":1}"#)
        let deeperSibling = try node(#"{"a":{"b":{"c":1},"y":2}}"#)
        #expect(json(deeperSibling.setting(.null, at: path("a/b/c"))) == #"{"a":{"y":2}}"#)
    }

    @Test func deletingSomethingMissingChangesNothing() throws {
        let start = try node(#"{"a":{"b":1},"leaf":5}"#)
        #expect(start.setting(.null, at: path("zzz")) == start)
        #expect(start.setting(.null, at: path("a/zzz/y")) == start)
        #expect(start.setting(.null, at: path("leaf/below")) == start)
        #expect(Node.null.setting(.null, at: path("x/y")) == .null)
        #expect(Node.string("leaf").setting(.null, at: path("x")) == .string("leaf"))
    }

    @Test func settingBelowALeafReplacesTheLeaf() throws {
        let start = try node(#"{"a":5}"#)
        #expect(json(start.setting(.int(1), at: path("a/b"))) == #"{"a":{"b":1}}"#)
        #expect(json(start.setting(.int(1), at: path("a/b/c"))) == #"{"a":{"b":{"c":1}}}"#)
        #expect(json(Node.bool(true).setting(.int(1), at: path("k"))) == #"{"k":1}"#)
    }

    @Test func leafReplacedByAnObjectKeepsItsPriority() throws {
        let start = try node(#"{"a":{".value":5,".priority":3}}"#)
        let after = start.setting(.int(1), at: path("a/b"))
        #expect(after.child(key("a")).priority == .number(3))
        #expect(exportJSON(after) == #"{"a":{".priority":3,"b":1}}"#)
    }

    @Test func settingAValueDropsThePreviousPriority() throws {
        let start = try node(#"{"a":{".value":5,".priority":3}}"#)
        #expect(exportJSON(start.setting(.int(7), at: path("a"))) == #"{"a":7}"#)
        let withPriority = start.setting(.prioritized(.int(7), .string("p")), at: path("a"))
        #expect(exportJSON(withPriority) == #"{"a":{".value":7,".priority":"p"}}"#)
    }

    @Test func childWritesKeepTheParentsPriority() throws {
        let start = try node(#"{"a":{".priority":1,"b":1}}"#)
        let changed = start.setting(.int(2), at: path("a/c"))
        #expect(exportJSON(changed) == #"{"a":{".priority":1,"b":1,"c":2}}"#)
        let removed = changed.setting(.null, at: path("a/b"))
        #expect(exportJSON(removed) == #"{"a":{".priority":1,"c":2}}"#)
        // Removing the last child removes the node, priority and all.
        #expect(removed.setting(.null, at: path("a/c")) == .null)
    }

    // MARK: - Priority paths

    @Test func priorityPathWrites() throws {
        var value = try node(#"{"a":{"b":1},"leaf":"x"}"#)
        value = value.setting(.int(10), at: path("a/.priority"))
        #expect(value.child(key("a")).priority == .number(10))
        #expect(json(value) == #"{"a":{"b":1},"leaf":"x"}"#)
        value = value.setting(.string("s"), at: path("a/.priority"))
        #expect(value.child(key("a")).priority == .string("s"))
        value = value.setting(.double(2.5), at: path("leaf/.priority"))
        #expect(value.child(key("leaf")) == .prioritized(.string("x"), .number(2.5)))
        value = value.setting(.null, at: path("a/.priority"))
        #expect(value.child(key("a")).priority == nil)
        #expect(value.child(key("a")) == .object(Children(entries: [(key("b"), .int(1))])))
        // A priority on a missing node does not create it.
        #expect(value.setting(.int(1), at: path("missing/.priority")) == value)
        // The root can have a priority too.
        #expect(value.setting(.int(4), at: path(".priority")).priority == .number(4))
    }

    @Test func readingAPriorityPath() throws {
        var state = try DatabaseState().setting(#"{"a":{"b":1,".priority":7},"c":{".value":1,".priority":"p"},"d":1}"#, at: "/")
        #expect(state.value(at: path("a/.priority")) == .double(7))
        #expect(state.value(at: path("c/.priority")) == .string("p"))
        #expect(state.value(at: path("d/.priority")) == .null)
        #expect(state.value(at: path("nothing/.priority")) == .null)
        state = try state.setting("3", at: "d/.priority")
        #expect(state.value(at: path("d/.priority")) == .double(3))
        #expect(state.value(at: path("d")) == .prioritized(.int(1), .number(3)))
    }

    // MARK: - Structural sharing

    @Test func untouchedSubtreesAreShared() throws {
        let children = (0..<50_000).map { (key("k\($0)"), Node.int(Int64($0))) }
        let big = Node.object(children)
        let start = Node.object([(key("big"), big), (key("small"), .int(1))])
        let changed = start.setting(.string("new"), at: path("small"))
        #expect(try #require(changed.child(key("big")).children).isIdentical(to: try #require(big.children)))

        let grown = start.setting(.bool(true), at: path("big/k25000x"))
        let before = try #require(start.child(key("big")).children)
        let after = try #require(grown.child(key("big")).children)
        #expect(after.count == before.count + 1)
        #expect(before.count == 50_000)
        #expect(before[key("k25000x")] == nil)
        // The two versions share their untouched subtrees.
        let oldLeft = try #require(before.root?.left)
        let oldRight = try #require(before.root?.right)
        let newLeft = after.root?.left
        let newRight = after.root?.right
        #expect(newLeft === oldLeft || newRight === oldRight)
    }

    // MARK: - Multi-path updates

    @Test func updateSetsEachPathAndLeavesOthersAlone() throws {
        let state = try DatabaseState().setting(#"{"base":{"a":{"x":1,"y":2},"b":3,"c":4},"other":5}"#, at: "/")
        let entries = try JSONParser.parseUpdate(Array(#"{"a/x":10,"b":null,"d/e":"new","c":{"z":1}}"#.utf8))
        let (next, resolved) = try state.applying(.update(path("base"), entries), now: 0)
        #expect(json(next.root) == #"{"base":{"a":{"x":10,"y":2},"c":{"z":1},"d":{"e":"new"}},"other":5}"#)
        #expect(
            resolved
                == .update(path("base"), [
                    .init(path: path("a/x"), value: .int(10)),
                    .init(path: path("b"), value: .null),
                    .init(path: path("d/e"), value: .string("new")),
                    .init(path: path("c"), value: .object([(key("z"), .int(1))])),
                ])
        )
        #expect(resolved.changedPaths == [path("base/a/x"), path("base/b"), path("base/d/e"), path("base/c")])
        // Replaying the logged write gives the same tree.
        #expect(state.applying(resolved).root == next.root)
    }

    @Test func updateCanDeleteEverything() throws {
        let state = try DatabaseState().setting(#"{"a":1,"b":2}"#, at: "/")
        let entries = try JSONParser.parseUpdate(Array(#"{"a":null,"b":null}"#.utf8))
        let (next, _) = try state.applying(.update(.root, entries), now: 0)
        #expect(next.root == .null)
    }

    @Test(arguments: [
        [("a", "1"), ("a/b", "2")],
        [("a/b", "2"), ("a", "1")],
        [("x/y/z", "1"), ("q", "2"), ("x/y", "3")],
        [("a", "1"), ("a/.priority", "2")],
        [("k", "1"), ("k", "2")],
    ] as [[(String, String)]])
    func overlappingUpdatePathsAreRejectedAndNothingChanges(_ pairs: [(String, String)]) throws {
        let state = try DatabaseState().setting(#"{"a":{"b":0},"keep":true}"#, at: "/")
        let entries = try pairs.map { (path: path($0.0), value: try parsed($0.1)) }
        #expect(throws: HearthError.self) { try state.applying(.update(.root, entries), now: 0) }
        do throws(HearthError) {
            _ = try state.applying(.update(.root, entries), now: 0)
        } catch {
            #expect(error.code == .invalidData)
        }
        #expect(json(state.root) == #"{"a":{"b":0},"keep":true}"#)
    }

    @Test func siblingPathsWithACommonPrefixAreNotOverlapping() throws {
        let state = DatabaseState()
        let entries = try [("a", "1"), ("ab", "2"), ("a0/b", "3"), ("b/a", "4"), ("b/c", "5")].map { (path: path($0.0), value: try parsed($0.1)) }
        let (next, _) = try state.applying(.update(.root, entries), now: 0)
        #expect(json(next.root) == #"{"a":1,"a0":{"b":3},"ab":2,"b":{"a":4,"c":5}}"#)
    }

    @Test func anUpdateWithOneBadEntryChangesNothing() throws {
        let state = try DatabaseState().setting(#"{"a":1,"b":2}"#, at: "/")
        let entries = try JSONParser.parseUpdate(Array(#"{"a":100,"b":{".sv":"nonsense"},"c":3}"#.utf8))
        #expect(throws: HearthError.self) { try state.applying(.update(.root, entries), now: 0) }
        #expect(json(state.root) == #"{"a":1,"b":2}"#)

        let deep = (1...32).map { "k\($0)" }.joined(separator: "/")
        let tooDeep = try JSONParser.parseUpdate(Array(#"{"a":100,"\#(deep)":{"x":1}}"#.utf8))
        #expect(throws: HearthError.self) { try state.applying(.update(.root, tooDeep), now: 0) }
        #expect(json(state.root) == #"{"a":1,"b":2}"#)
    }

    @Test func updateWithPriorityPaths() throws {
        let state = try DatabaseState().setting(#"{"a":{"x":1},"b":{"y":2}}"#, at: "/")
        let entries = try JSONParser.parseUpdate(Array(#"{"a/.priority":5,"b/y":3}"#.utf8))
        let (next, _) = try state.applying(.update(.root, entries), now: 0)
        #expect(exportJSON(next.root) == #"{"a":{".priority":5,"x":1},"b":{"y":3}}"#)
        // A bare ".priority" key sets the priority of the update's base location.
        let own = try JSONParser.parseUpdate(Array(#"{".priority":"p","y":4}"#.utf8))
        let (after, _) = try next.applying(.update(path("b"), own), now: 0)
        #expect(exportJSON(after.root) == #"{"a":{".priority":5,"x":1},"b":{".priority":"p","y":4}}"#)
    }

    // MARK: - Depth limit

    private static func keys(_ count: Int) -> String {
        (1...max(count, 1)).map { "k\($0)" }.prefix(count).joined(separator: "/")
    }

    private static func nested(_ depth: Int) -> String {
        String(repeating: #"{"n":"#, count: depth) + "1" + String(repeating: "}", count: depth)
    }

    @Test func pathPlusDataMayReach32Levels() throws {
        let state = DatabaseState()
        #expect(try state.setting(Self.nested(1), at: Self.keys(31)).root.depth == 32)
        #expect(try state.setting("1", at: Self.keys(32)).value(at: path(Self.keys(32))) == .int(1))
        #expect(try state.setting(Self.nested(32), at: "/").root.depth == 32)
        #expect(try state.setting(Self.nested(16), at: Self.keys(16)).root.depth == 32)
    }

    @Test func writesDeeperThan32LevelsAreRejected() throws {
        let state = DatabaseState()
        for (pathDepth, dataDepth) in [(31, 2), (0, 33), (16, 17), (1, 32)] {
            let write = Write.set(path(Self.keys(pathDepth)), try parsed(Self.nested(dataDepth)))
            do throws(HearthError) {
                _ = try state.applying(write, now: 0)
                Issue.record("depth \(pathDepth) + \(dataDepth) was accepted")
            } catch {
                #expect(error.code == .invalidData)
            }
        }
        // In an update, the base path, the entry path and the data all count.
        let entries = [(path: path("x/y"), value: try parsed(Self.nested(2)))]
        #expect(throws: HearthError.self) { try state.applying(.update(path(Self.keys(29)), entries), now: 0) }
        let fits = [(path: path("x"), value: try parsed(Self.nested(2)))]
        #expect(try state.applying(.update(path(Self.keys(29)), fits), now: 0).0.root.depth == 32)
    }

    @Test func pathsDeeperThan32AreInvalid() throws {
        #expect(throws: HearthError.invalidPathToken) { try Path(parsing: Self.keys(33)) }
        #expect(try Path(parsing: Self.keys(32)).count == 32)
        #expect(HearthError.invalidPathToken.message == ReferenceText.invalidPath)
    }

    @Test func pathParsing() throws {
        #expect(try Path(parsing: "/a//b/").keys == [key("a"), key("b")])
        #expect(try Path(parsing: "").isRoot)
        #expect(try Path(parsing: "///").isRoot)
        #expect(try Path(parsing: "a/b").description == "/a/b")
        #expect(Path.root.description == "/")
        for bad in ["a.b", "a/$b", "a#", "[x]", "a/]", "a/.priority", ".value", "x/.sv", "a\u{1}b", "a\u{7F}", String(repeating: "k", count: 769)] {
            #expect(throws: HearthError.invalidPathToken, "\(bad.debugDescription)") { try Path(parsing: bad) }
        }
        #expect(try Path(parsing: "a/.priority", allowPriority: true).isPriorityPath)
        #expect(throws: HearthError.invalidPathToken) { try Path(parsing: "a/.priority/b", allowPriority: true) }
        #expect(try Path(parsing: String(repeating: "k", count: 768)).count == 1)
        #expect(try Path(parsing: String(repeating: "é", count: 384)).count == 1)
        #expect(throws: HearthError.invalidPathToken) { try Path(parsing: String(repeating: "é", count: 385)) }
    }

    @Test func pathRelations() {
        #expect(path("a").contains(path("a/b")))
        #expect(path("a").contains(path("a")))
        #expect(!path("a/b").contains(path("a")))
        #expect(!path("a").contains(path("ab")))
        #expect(Path.root.contains(path("x")))
        #expect(path("a/b").parent == path("a"))
        #expect(Path.root.parent == nil)
        #expect(path("a").appending(path("b/c")) == path("a/b/c"))
        #expect(path("a/b/c").dropFirst(1) == path("b/c"))
        #expect(Path.compare(path("a"), path("a/b")) < 0)
        #expect(Path.compare(path("a/z"), path("b")) < 0)
        #expect(Path.compare(path("2/x"), path("10")) < 0)
    }
}
