import Foundation
import HearthCore
import Testing

/// Trigger path patterns: what they accept, what they match, and which changed locations a
/// write reports to them.
struct PathPatternTests {
    @Test func capturesAndWildcardsMatchOneKeyEach() throws {
        let pattern = try PathPattern(parsing: "/posts/{postId}/comments/*/{field=*}")
        #expect(pattern.description == "posts/{postId}/comments/*/{field}")
        #expect(pattern.match(try Path(parsing: "posts/p1/comments/c9/text")) == ["postId": "p1", "field": "text"])
        #expect(pattern.match(try Path(parsing: "posts/p1/comments/c9")) == nil)
        #expect(pattern.match(try Path(parsing: "users/p1/comments/c9/text")) == nil)
        #expect(try PathPattern(parsing: "/").match(.root) == [:])
        #expect(try PathPattern(parsing: "").segments.isEmpty)
    }

    @Test(arguments: [
        ("posts/{id}/{id}", "captured twice"),
        ("posts/{a.b}", "not a capture"),
        ("posts/{}", "not a capture"),
        ("posts/{1st}", "not a capture"),
        ("posts/{id", "not a capture"),
        ("posts/**", "several keys"),
        ("posts/{rest=**}", "several keys"),
        ("posts/a*", "a wildcard is a whole key"),
        ("posts/a.b", "not a valid key"),
        ("posts/{x=y}", "not a capture"),
    ])
    func badPatternsAreRefusedWithTheReason(text: String, reason: String) {
        #expect {
            try PathPattern(parsing: text)
        } throws: { error in
            guard let error = error as? HearthError else { return false }
            return error.code == .invalidPath && error.message.contains(reason) && error.message.contains(text)
        }
    }

    @Test func aWriteBelowAMatchReportsTheMatchedLocation() throws {
        let pattern = try PathPattern(parsing: "posts/{postId}")
        let before = try node(#"{"posts": {"p1": {"text": "a", "n": 1}, "p2": {"text": "b"}}}"#)
        let after = try node(#"{"posts": {"p1": {"text": "A", "n": 1}, "p2": {"text": "b"}}}"#)
        let changes = pattern.changes(from: before, to: after, changedPaths: [try Path(parsing: "posts/p1/text")])
        #expect(changes == [.init(
            path: try Path(parsing: "posts/p1"), parameters: ["postId": "p1"],
            before: try node(#"{"text": "a", "n": 1}"#), after: try node(#"{"text": "A", "n": 1}"#))])
    }

    @Test func aWriteAboveReportsEveryChangedMatchInKeyOrderAndSkipsTheSame() throws {
        let pattern = try PathPattern(parsing: "posts/{postId}/text")
        let before = try node(#"{"posts": {"p1": {"text": "a"}, "p2": {"text": "b"}, "p3": {"text": "c"}}}"#)
        let after = try node(#"{"posts": {"p0": {"text": "new"}, "p2": {"text": "b"}, "p3": {"text": "C"}}}"#)
        let changes = pattern.changes(from: before, to: after, changedPaths: [try Path(parsing: "posts")])
        #expect(changes.map(\.path.description) == ["/posts/p0/text", "/posts/p1/text", "/posts/p3/text"])
        #expect(changes.map(\.parameters) == [["postId": "p0"], ["postId": "p1"], ["postId": "p3"]])
        #expect(changes[0].before == .null && changes[0].after == .string("new"))
        #expect(changes[1].before == .string("a") && changes[1].after == .null)
    }

    @Test func anUpdateReportsOnlyTheLocationsItsEntriesTouched() throws {
        let pattern = try PathPattern(parsing: "users/{uid}/name")
        let before = try node(#"{"users": {"a": {"name": "Ann"}, "b": {"name": "Bo"}, "c": {"name": "Cy"}}}"#)
        let after = try node(#"{"users": {"a": {"name": "Anne"}, "b": {"name": "Bo"}, "c": {"name": "Cyd"}}}"#)
        let paths = ["users/c/name", "users/b/name", "users/a/age"].map { try! Path(parsing: $0) }
        let changes = pattern.changes(from: before, to: after, changedPaths: paths)
        // a's name changed but the write did not touch it: not this write's event.
        #expect(changes.map(\.path.description) == ["/users/c/name"])
    }

    @Test func aWriteElsewhereOrOfTheSameValueReportsNothing() throws {
        let pattern = try PathPattern(parsing: "posts/{postId}")
        let tree = try node(#"{"posts": {"p1": 1}, "other": 2}"#)
        #expect(pattern.changes(from: tree, to: tree, changedPaths: [try Path(parsing: "posts/p1")]).isEmpty)
        let after = try node(#"{"posts": {"p1": 1}, "other": 3}"#)
        #expect(pattern.changes(from: tree, to: after, changedPaths: [try Path(parsing: "other")]).isEmpty)
    }

    @Test func aPriorityChangeIsAChangeOfItsNode() throws {
        let pattern = try PathPattern(parsing: "items/{id}")
        let before = try node(#"{"items": {"x": {"v": 1}}}"#)
        let after = try node(#"{"items": {"x": {"v": 1, ".priority": 5}}}"#)
        let changes = pattern.changes(from: before, to: after, changedPaths: [try Path(parsing: "items/x/.priority", allowPriority: true)])
        #expect(changes.map(\.path.description) == ["/items/x"])
    }

    @Test func aManyPathUpdateReportsEachLocationOnceInKeyOrder() throws {
        let pattern = try PathPattern(parsing: "posts/{postId}")
        let keys = (0..<12).map { "p\($0)" }
        let before = try node(#"{"posts": {}}"#)
        var afterPosts: [String: Any] = [:]
        for key in keys { afterPosts[key] = ["text": key, "n": 1] }
        let after = try node(String(decoding: try JSONSerialization.data(withJSONObject: ["posts": afterPosts]), as: UTF8.self))
        // Two fields of each post, in reverse order, and one path outside the pattern.
        let paths = try keys.reversed().flatMap { key in
            [try Path(parsing: "posts/\(key)/text"), try Path(parsing: "posts/\(key)/n")]
        } + [try Path(parsing: "elsewhere/x/y")]
        let changes = pattern.changes(from: before, to: after, changedPaths: paths)
        #expect(changes.map(\.path.description) == keys.sorted { ChildKey($0) < ChildKey($1) }.map { "/posts/\($0)" })
        #expect(changes.allSatisfy { $0.before == .null && $0.parameters["postId"] == $0.path.keys.last?.string })
        // A path above the pattern's depth among them: every post it covers is looked at.
        let covering = pattern.changes(from: before, to: after, changedPaths: paths + [try Path(parsing: "posts")])
        #expect(covering.map(\.path) == changes.map(\.path))
    }

    @Test func theRootPatternSeesEveryChange() throws {
        let pattern = try PathPattern(parsing: "/")
        let changes = pattern.changes(from: .null, to: try node(#"{"a": 1}"#), changedPaths: [try Path(parsing: "a")])
        #expect(changes.count == 1 && changes[0].path == .root)
    }
}
