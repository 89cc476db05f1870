import Foundation
import HearthCore
import Testing
@testable import HearthRules

/// The reference apps' real rules files (copied unmodified into Tests/Fixtures/rules from
/// shared/fixtures/rules, so a bare clone can run them): they load, compile, and their
/// expressions grant and deny as Firebase would on small trees.
@Suite struct RulesFixtureTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Fixtures/rules").standardized

    static func load(_ name: String) throws -> RulesDocument {
        let text = try String(contentsOf: fixtures.appendingPathComponent(name), encoding: .utf8)
        return try RulesDocument(parsing: text)
    }

    static func path(_ text: String) -> Path {
        Path(keys: text.split(separator: "/").map { ChildKey(String($0)) })
    }

    enum Kind { case read, write, validate }

    /// Evaluates the rule of `kind` declared exactly at `location`, with the wildcard bindings
    /// the document gives that path.
    static func check(
        _ rules: RulesDocument, _ kind: Kind, at location: String, auth: Node = .null, now: Int64 = 0,
        before: Node, after: Node? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Bool {
        let path = path(location)
        let matched = rules.nodes(along: path)
        try #require(matched.count == path.count + 1, "no rule node at \(location)", sourceLocation: sourceLocation)
        let (node, bindings) = matched[matched.count - 1]
        let expression: RulesDocument.Expression? =
            switch kind {
            case .read: node.read
            case .write: node.write
            case .validate: node.validate
            }
        let rule = try #require(expression, "no \(kind) rule at \(location)", sourceLocation: sourceLocation)
        let parsed = try RuleExpression.parse(rule)
        let context = RuleContext(
            auth: auth, now: now, root: before, newRoot: kind == .read ? nil : (after ?? before),
            location: path, wildcards: bindings)
        return parsed.evaluate(in: context)
    }

    @Test(arguments: ["friendlypix-web-database-rules.json", "quickstart-ios-database.rules.json"])
    func fixturesLoadAndCompile(_ name: String) throws {
        let rules = try Self.load(name)
        let compiled = try rules.compileAll()
        #expect(compiled.count > 5)
    }

    @Test func friendlyPixCompilesEveryExpression() throws {
        let rules = try Self.load("friendlypix-web-database-rules.json")
        let compiled = try rules.compileAll()
        // Keyed by (source, position): every .read/.write/.validate in the file (74 of them).
        #expect(compiled.count == 74)
        let feed = try #require(rules.root.children["feed"]?.wildcard?.node.wildcard?.node.validate)
        #expect(compiled[feed]?.description
            == "((newData.val() === true) && newData.parent().parent().parent().child('posts').child($postId).exists())")
    }

    // MARK: - FriendlyPix

    static let alice = signedIn("alice", token: ["name": "\"Alice\""])
    static let bob = signedIn("bob", token: ["name": "\"Bob\""])
    static let admin = signedIn("root", token: ["admin": "true"])
    static let anonymous = signedIn("anon")

    static let posts = tree("""
        {"posts": {"p1": {"author": {"uid": "alice", "full_name": "Alice"}, "text": "hi", "timestamp": 5}},
         "comments": {"p1": {"c1": {"author": {"uid": "bob"}, "text": "yo"}}},
         "blocked": {"bob": {"alice": true}}}
        """)

    @Test func adminRootRules() throws {
        let rules = try Self.load("friendlypix-web-database-rules.json")
        #expect(try Self.check(rules, .read, at: "", auth: Self.admin, before: Self.posts))
        #expect(try !Self.check(rules, .read, at: "", auth: Self.alice, before: Self.posts))
        #expect(try !Self.check(rules, .write, at: "", before: Self.posts))
        #expect(try !Self.check(rules, .read, at: "admins", auth: Self.admin, before: Self.posts)) // "false"
    }

    @Test func feedValidateNeedsTheReferencedPost() throws {
        let rules = try Self.load("friendlypix-web-database-rules.json")
        let withFeed = tree(#"{"posts": {"p1": {"text": "hi"}}, "feed": {"bob": {"p1": true}}}"#)
        #expect(try Self.check(rules, .validate, at: "feed/bob/p1", auth: Self.bob, before: .null, after: withFeed))
        let dangling = tree(#"{"posts": {"p1": {"text": "hi"}}, "feed": {"bob": {"p2": true}}}"#)
        #expect(try !Self.check(rules, .validate, at: "feed/bob/p2", auth: Self.bob, before: .null, after: dangling))
        let notTrue = tree(#"{"posts": {"p1": {"text": "hi"}}, "feed": {"bob": {"p1": "yes"}}}"#)
        #expect(try !Self.check(rules, .validate, at: "feed/bob/p1", auth: Self.bob, before: .null, after: notTrue))
        // and the feed's .write needs the owner
        #expect(try Self.check(rules, .write, at: "feed/bob", auth: Self.bob, before: .null, after: withFeed))
        #expect(try !Self.check(rules, .write, at: "feed/bob", auth: Self.alice, before: .null, after: withFeed))
        #expect(try !Self.check(rules, .write, at: "feed/bob", before: .null, after: withFeed))
    }

    @Test func postWriteAllowsNewPostsAndOwnEdits() throws {
        let rules = try Self.load("friendlypix-web-database-rules.json")
        #expect(try Self.check(rules, .write, at: "posts/p2", auth: Self.bob, before: Self.posts))
        #expect(try Self.check(rules, .write, at: "posts/p1", auth: Self.alice, before: Self.posts))
        #expect(try !Self.check(rules, .write, at: "posts/p1", auth: Self.bob, before: Self.posts))
        #expect(try !Self.check(rules, .write, at: "posts/p1", before: Self.posts))
    }

    @Test func postFieldValidation() throws {
        let rules = try Self.load("friendlypix-web-database-rules.json")
        let good = tree(#"{"posts": {"p2": {"author": {"uid": "bob", "full_name": "Bob"}, "text": "hey", "timestamp": 99, "client": "ios"}}}"#)
        #expect(try Self.check(rules, .validate, at: "posts/p2", auth: Self.bob, before: .null, after: good))
        #expect(try Self.check(rules, .validate, at: "posts/p2/text", auth: Self.bob, before: .null, after: good))
        #expect(try Self.check(rules, .validate, at: "posts/p2/timestamp", auth: Self.bob, now: 99, before: .null, after: good))
        #expect(try !Self.check(rules, .validate, at: "posts/p2/timestamp", auth: Self.bob, now: 100, before: .null, after: good))
        #expect(try Self.check(rules, .validate, at: "posts/p2/client", auth: Self.bob, before: .null, after: good))
        #expect(try Self.check(rules, .validate, at: "posts/p2/author/uid", auth: Self.bob, before: .null, after: good))
        #expect(try !Self.check(rules, .validate, at: "posts/p2/author/uid", auth: Self.alice, before: .null, after: good))
        #expect(try Self.check(rules, .validate, at: "posts/p2/author/full_name", auth: Self.bob, before: .null, after: good))
        #expect(try !Self.check(rules, .validate, at: "posts/p2/author/full_name", auth: Self.alice, before: .null, after: good))
        #expect(try !Self.check(rules, .validate, at: "posts/p2/sanitized", auth: Self.bob, before: .null, after: good))

        let bad = tree(#"{"posts": {"p2": {"author": {"full_name": "Anonymous"}, "text": 12, "client": "tv"}}}"#)
        #expect(try !Self.check(rules, .validate, at: "posts/p2", auth: Self.bob, before: .null, after: bad))
        #expect(try !Self.check(rules, .validate, at: "posts/p2/text", auth: Self.bob, before: .null, after: bad))
        #expect(try !Self.check(rules, .validate, at: "posts/p2/client", auth: Self.bob, before: .null, after: bad))
        // no name claim: only 'Anonymous' passes
        #expect(try Self.check(rules, .validate, at: "posts/p2/author/full_name", auth: Self.anonymous, before: .null, after: bad))
        #expect(try !Self.check(rules, .validate, at: "posts/p2/author/full_name", auth: Self.anonymous, before: .null, after: good))

        let long = tree(#"{"posts": {"p2": {"text": "\#(String(repeating: "x", count: 2000))"}}}"#)
        #expect(try !Self.check(rules, .validate, at: "posts/p2/text", auth: Self.bob, before: .null, after: long))
    }

    @Test func commentWriteHonoursBlocking() throws {
        let rules = try Self.load("friendlypix-web-database-rules.json")
        // carol is not blocked by alice (the post's author): a new comment is allowed
        let carol = signedIn("carol")
        #expect(try Self.check(rules, .write, at: "comments/p1/c2", auth: carol, before: Self.posts))
        // bob has been blocked by alice: denied even for a new comment
        #expect(try !Self.check(rules, .write, at: "comments/p1/c2", auth: Self.bob, before: Self.posts))
        // editing someone else's comment is denied
        #expect(try !Self.check(rules, .write, at: "comments/p1/c1", auth: carol, before: Self.posts))
        // signed out: child(auth.uid) errors, so denied
        #expect(try !Self.check(rules, .write, at: "comments/p1/c2", before: Self.posts))
    }

    @Test func postOwnerMayDeleteCommentsOnlyWithThePost() throws {
        let rules = try Self.load("friendlypix-web-database-rules.json")
        // multi-path delete of /posts/p1 and /comments/p1 by alice: newData at comments/p1 is null
        let afterBoth = tree(#"{"blocked": {"bob": {"alice": true}}}"#)
        #expect(try Self.check(rules, .write, at: "comments/p1", auth: Self.alice, before: Self.posts, after: afterBoth))
        #expect(try !Self.check(rules, .write, at: "comments/p1", auth: Self.bob, before: Self.posts, after: afterBoth))
        // the post still exists afterwards: denied
        #expect(try !Self.check(rules, .write, at: "comments/p1", auth: Self.alice, before: Self.posts, after: tree(#"{"posts": {"p1": {"text": "hi"}}}"#)))
        #expect(try Self.check(rules, .validate, at: "comments/p1", auth: Self.alice, before: Self.posts, after: Self.posts))
        #expect(try !Self.check(rules, .validate, at: "comments/p9", auth: Self.alice, before: Self.posts, after: Self.posts))
    }

    @Test func followingMustMatchFollowers() throws {
        let rules = try Self.load("friendlypix-web-database-rules.json")
        let synced = tree(#"{"followers": {"alice": {"bob": true}}, "people": {"bob": {"following": {"alice": true}}}}"#)
        #expect(try Self.check(rules, .validate, at: "people/bob/following/alice", auth: Self.bob, before: .null, after: synced))
        #expect(try Self.check(rules, .validate, at: "followers/alice/bob", auth: Self.bob, before: .null, after: synced))
        let unsynced = tree(#"{"people": {"bob": {"following": {"alice": true}}}}"#)
        #expect(try !Self.check(rules, .validate, at: "people/bob/following/alice", auth: Self.bob, before: .null, after: unsynced))
        #expect(try Self.check(rules, .write, at: "followers/alice/bob", auth: Self.bob, before: .null, after: synced))
        #expect(try !Self.check(rules, .write, at: "followers/alice/bob", auth: Self.alice, before: .null, after: synced))
    }

    @Test func privacyFlagsMustBeBooleans() throws {
        let rules = try Self.load("friendlypix-web-database-rules.json")
        let good = tree(#"{"privacy": {"alice": {"social": true}}}"#)
        let bad = tree(#"{"privacy": {"alice": {"social": "yes"}}}"#)
        #expect(try Self.check(rules, .validate, at: "privacy/alice/social", auth: Self.alice, before: .null, after: good))
        #expect(try !Self.check(rules, .validate, at: "privacy/alice/social", auth: Self.alice, before: .null, after: bad))
        #expect(try !Self.check(rules, .validate, at: "privacy/alice/other", auth: Self.alice, before: .null, after: good))
        #expect(try !Self.check(rules, .validate, at: "unknownTop", auth: Self.alice, before: .null, after: good))
    }

    // MARK: - Quickstart

    @Test func quickstartRules() throws {
        let rules = try Self.load("quickstart-ios-database.rules.json")
        let before = tree(#"{"posts": {"p1": {"uid": "alice", "title": "t"}}}"#)
        #expect(try Self.check(rules, .read, at: "users/alice", auth: Self.alice, before: before))
        #expect(try !Self.check(rules, .read, at: "users/alice", auth: Self.bob, before: before))
        #expect(try !Self.check(rules, .read, at: "users/alice", before: before))
        #expect(try Self.check(rules, .write, at: "posts", auth: Self.bob, before: before))
        #expect(try !Self.check(rules, .write, at: "posts", before: before))

        // uid is fixed once set; new posts must carry the author's uid
        let unchanged = before
        #expect(try Self.check(rules, .validate, at: "posts/p1/uid", auth: Self.bob, before: before, after: unchanged))
        let stolen = tree(#"{"posts": {"p1": {"uid": "bob", "title": "t"}}}"#)
        #expect(try Self.check(rules, .validate, at: "posts/p1/uid", auth: Self.bob, before: .null, after: stolen))
        // as written, the rule also passes when the new value is the writer's own uid
        #expect(try Self.check(rules, .validate, at: "posts/p1/uid", auth: Self.bob, before: before, after: stolen))
        #expect(try !Self.check(rules, .validate, at: "posts/p1/uid", auth: Self.alice, before: before, after: stolen))

        let userPost = tree(#"{"user-posts": {"bob": {"p2": {"uid": "bob"}}}}"#)
        #expect(try Self.check(rules, .validate, at: "user-posts/bob/p2", auth: Self.bob, before: .null, after: userPost))
        #expect(try !Self.check(rules, .validate, at: "user-posts/bob/p2", auth: Self.alice, before: .null, after: userPost))
        #expect(try Self.check(rules, .validate, at: "posts/p1/stars/bob", auth: Self.bob, before: .null, after: userPost))
        #expect(try !Self.check(rules, .validate, at: "posts/p1/stars/bob", auth: Self.alice, before: .null, after: userPost))
    }
}
