import Foundation
import HearthServer
import HearthTesting
import Testing

/// Security rules enforced by a real server on every way in: reads, queries, sets, pushes,
/// multi-path updates, conditional writes and streams, with FriendlyPix's real rules file.
@Suite("Rules enforcement")
struct RulesEnforcementTests {
    static let friendlyPix = try! String(
        contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Fixtures/rules/friendlypix-web-database-rules.json").standardized,
        encoding: .utf8)

    static let alice = TestServer.userHeaders("alice", name: "Alice")
    static let bob = TestServer.userHeaders("bob", name: "Bob")
    static let carol = TestServer.userHeaders("carol", name: "Carol")
    static let admin = TestServer.adminHeaders
    static let denied = "Permission denied"

    /// A server with `rules` deployed through the admin endpoint.
    static func withRules(_ rules: String, _ body: (TestServer) async throws -> Void) async throws {
        try await TestServer.with(configure: { $0.defaultRules = nil }) { (server: TestServer) async throws in
            let deployed = try await server.request("PUT", "/.settings/rules.json", body: rules, headers: admin)
            #expect(deployed.status == 200, "\(deployed.text)")
            try await body(server)
        }
    }

    /// Alice's post `p1` as FriendlyPix's web client writes it: one multi-path update.
    static func alicePosts(_ server: TestServer, id: String = "p1") async throws {
        let post = """
            {"posts/\(id)": {"author": {"uid": "alice", "full_name": "Alice"}, "text": "hello",
                            "timestamp": {".sv": "timestamp"}, "client": "web"},
             "people/alice/posts/\(id)": true, "feed/alice/\(id)": true}
            """
        try await server.expectOK("PATCH", "/.json", body: post, headers: alice)
    }

    @Test func aNewDatabaseStartsClosed() async throws {
        try await TestServer.with(configure: { $0.defaultRules = nil }) { (server: TestServer) async throws in
            let read = try await server.request("GET", "/.json")
            #expect(read.status == 401)
            #expect(read.errorText == Self.denied)
            try await server.expectRejected("PUT", "/a.json", body: "1", headers: Self.alice, status: 401, error: Self.denied)
            try await server.expectRejected("POST", "/a.json", body: "1", status: 401, error: Self.denied)
            // Admins are not bound by rules.
            try await server.expectOK("PUT", "/a.json", body: "1", headers: Self.admin)
        }
    }

    @Test func postingAsYourselfIsAllowedAndAsSomeoneElseIsNot() async throws {
        try await Self.withRules(Self.friendlyPix) { server in
            try await Self.alicePosts(server)
            let stored = try await server.request("GET", "/posts/p1.json", headers: Self.bob)
            #expect(stored.status == 200)
            let timestamp = try #require(((stored.json as? [String: Any])?["timestamp"] as? NSNumber)?.int64Value)
            #expect(abs(timestamp - Int64(Date().timeIntervalSince1970 * 1000)) < 60_000)

            // Bob posting as Alice, editing her post, or deleting it: refused, nothing changes.
            let forged = #"{"author": {"uid": "alice", "full_name": "Alice"}, "text": "forged", "timestamp": {".sv": "timestamp"}}"#
            try await server.expectRejected("PUT", "/posts/p2.json", body: forged, headers: Self.bob, status: 401, error: Self.denied)
            try await server.expectRejected("PUT", "/posts/p1/text.json", body: #""edited""#, headers: Self.bob, status: 401, error: Self.denied)
            try await server.expectRejected("DELETE", "/posts/p1.json", headers: Self.bob, status: 401, error: Self.denied)
            // A client-chosen timestamp is not server time.
            let backdated = #"{"author": {"uid": "bob", "full_name": "Bob"}, "text": "x", "timestamp": 5}"#
            try await server.expectRejected("PUT", "/posts/p3.json", body: backdated, headers: Self.bob, status: 401, error: Self.denied)
            // Alice may edit and delete her own post.
            try await server.expectOK("PUT", "/posts/p1/text.json", body: #""edited""#, headers: Self.alice)
            try await server.expectOK("DELETE", "/posts/p1.json", headers: Self.alice)
        }
    }

    @Test func pushesAreCheckedAtTheirNewPath() async throws {
        try await Self.withRules(Self.friendlyPix) { server in
            let mine = #"{"author": {"uid": "bob", "full_name": "Bob"}, "text": "pushed", "timestamp": {".sv": "timestamp"}}"#
            let pushed = try await server.request("POST", "/posts.json", body: mine, headers: Self.bob)
            #expect(pushed.status == 200, "\(pushed.text)")
            let forged = #"{"author": {"uid": "alice", "full_name": "Alice"}, "text": "x", "timestamp": {".sv": "timestamp"}}"#
            try await server.expectRejected("POST", "/posts.json", body: forged, headers: Self.bob, status: 401, error: Self.denied)
        }
    }

    @Test func aMultiPathUpdateIsAllOrNothing() async throws {
        try await Self.withRules(Self.friendlyPix) { server in
            // Alice's own name is fine, but Bob's profile is not hers: the whole update is refused.
            try await server.expectRejected(
                "PATCH", "/people.json", body: #"{"alice/full_name": "Alice", "bob/full_name": "Bob"}"#,
                headers: Self.alice, status: 401, error: Self.denied)
            try await server.expectOK("PATCH", "/people.json", body: #"{"alice/full_name": "Alice"}"#, headers: Self.alice)
            // Following must update both sides at once; one side alone fails validation.
            try await server.expectRejected(
                "PUT", "/followers/alice/bob.json", body: "true", headers: Self.bob, status: 401, error: Self.denied)
            try await server.expectOK(
                "PATCH", "/.json", body: #"{"followers/alice/bob": true, "people/bob/following/alice": true}"#, headers: Self.bob)
        }
    }

    @Test func likingTwiceKeepsOneLikeAndNobodyLikesForSomeoneElse() async throws {
        try await Self.withRules(Self.friendlyPix) { server in
            try await Self.alicePosts(server)
            try await server.expectOK("PUT", "/likes/p1/bob.json", body: #"{".sv": "timestamp"}"#, headers: Self.bob)
            try await server.expectOK("PUT", "/likes/p1/bob.json", body: #"{".sv": "timestamp"}"#, headers: Self.bob)
            let likes = try await server.request("GET", "/likes/p1.json?shallow=true", headers: Self.carol)
            #expect((likes.json as? [String: Any])?.keys.sorted() == ["bob"])
            try await server.expectRejected(
                "PUT", "/likes/p1/carol.json", body: #"{".sv": "timestamp"}"#, headers: Self.bob, status: 401, error: Self.denied)
            // A like on a post that does not exist fails validation.
            try await server.expectRejected(
                "PUT", "/likes/nope/bob.json", body: #"{".sv": "timestamp"}"#, headers: Self.bob, status: 401, error: Self.denied)
        }
    }

    @Test func aBlockedUserCannotComment() async throws {
        try await Self.withRules(Self.friendlyPix) { server in
            try await Self.alicePosts(server)
            try await server.expectOK(
                "PATCH", "/.json", body: #"{"blocking/alice/bob": true, "blocked/bob/alice": true}"#, headers: Self.alice)
            let comment = { (uid: String, name: String) in
                #"{"author": {"uid": "\#(uid)", "full_name": "\#(name)"}, "text": "nice", "timestamp": {".sv": "timestamp"}}"#
            }
            try await server.expectRejected(
                "PUT", "/comments/p1/c1.json", body: comment("bob", "Bob"), headers: Self.bob, status: 401, error: Self.denied)
            try await server.expectOK("PUT", "/comments/p1/c2.json", body: comment("carol", "Carol"), headers: Self.carol)
            // Signed out, `auth.uid` is an error inside the rule, which counts as false.
            try await server.expectRejected(
                "PUT", "/comments/p1/c3.json", body: comment("carol", "Carol"), status: 401, error: Self.denied)
        }
    }

    @Test func anAdminClaimCanDoEverythingAndRulesAreNotFilters() async throws {
        try await Self.withRules(Self.friendlyPix) { server in
            let root = TestServer.userHeaders("root", claims: ["admin": true])
            try await server.expectOK("PUT", "/admins/root/email.json", body: #""root@example.com""#, headers: root)
            #expect(try await server.request("GET", "/.json", headers: root).status == 200)
            // Others cannot read the root, although parts of it are public.
            let read = try await server.request("GET", "/.json", headers: Self.alice)
            #expect(read.status == 401)
            #expect(read.errorText == Self.denied)
            try await server.expectRejected(
                "PUT", "/admins/alice.json", body: #"{"email": "a@example.com"}"#, headers: Self.alice, status: 401, error: Self.denied)
            // Queries are reads: allowed where a rule grants the location, refused elsewhere.
            #expect(try await server.request("GET", #"/posts.json?orderBy="timestamp"&limitToLast=5"#).status == 200)
            let query = try await server.request("GET", #"/blocking.json?orderBy="$key"&limitToFirst=1"#, headers: Self.alice)
            #expect(query.status == 401)
        }
    }

    @Test func conditionalWritesGoThroughTheRules() async throws {
        try await Self.withRules(Self.friendlyPix) { server in
            try await Self.alicePosts(server)
            let current = try await server.request(
                "GET", "/posts/p1/text.json", headers: Self.alice.merging(["X-Firebase-ETag": "true"]) { $1 })
            let etag = try #require(current.header("ETag"))
            try await server.expectRejected(
                "PUT", "/posts/p1/text.json", body: #""taken""#, headers: Self.bob.merging(["if-match": etag]) { $1 },
                status: 401, error: Self.denied)
            try await server.expectOK(
                "PUT", "/posts/p1/text.json", body: #""mine""#, headers: Self.alice.merging(["if-match": etag]) { $1 })
        }
    }

    // MARK: - Streams

    static func openStream(_ server: TestServer, _ path: String, headers: [String: String] = [:]) throws -> RawHTTPConnection {
        let extra = headers.map { "\($0.key): \($0.value)\r\n" }.joined()
        return try RawHTTPConnection(
            port: server.port,
            request: "GET \(path) HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\(extra)\r\n")
    }

    static let cancelEvent = "event: cancel\ndata: \"Permission denied\"\n\n"

    @Test func aStreamTheRulesRefuseIsRefused() async throws {
        try await Self.withRules(Self.friendlyPix) { server in
            let stream = try Self.openStream(server, "/privacy/alice.json", headers: Self.bob)
            let answer = await stream.read { $0.contains("}\n") }
            #expect(answer.hasPrefix("HTTP/1.1 401"))
            #expect(answer.contains(Self.denied))
            let own = try Self.openStream(server, "/privacy/alice.json", headers: Self.alice)
            #expect(await own.read { $0.contains("\"path\":\"/\"") }.hasPrefix("HTTP/1.1 200"))
        }
    }

    @Test func newRulesCancelStreamsTheyNoLongerAllow() async throws {
        try await Self.withRules(Self.friendlyPix) { server in
            let posts = try Self.openStream(server, "/posts.json")
            #expect(await posts.read { $0.contains("\"path\":\"/\"") }.contains("200 OK"))
            let privacy = try Self.openStream(server, "/privacy/alice.json", headers: Self.alice)
            #expect(await privacy.read { $0.contains("\"path\":\"/\"") }.contains("200 OK"))
            let closed = Self.friendlyPix.replacingOccurrences(of: #""posts": {\#n      ".read": true"#, with: #""posts": {\#n      ".read": false"#)
            #expect(closed != Self.friendlyPix)
            #expect(try await server.request("PUT", "/.settings/rules.json", body: closed, headers: Self.admin).status == 200)
            let ending = await posts.read(untilContaining: "event: cancel")
            #expect(ending.contains(Self.cancelEvent))
            // A stream the new rules still allow stays open and gets later writes.
            try await server.expectOK("PUT", "/privacy/alice/content.json", body: "true", headers: Self.alice)
            let event = await privacy.read { $0.contains(#""path":"/content""#) }
            #expect(!event.contains("event: cancel"))
        }
    }

    @Test func aWriteThatRevokesADataDependentGrantCancelsTheStream() async throws {
        let rules = #"{"rules": {"docs": {"$doc": {".read": "root.child('members').child($doc).child(auth.uid).exists()"}}}}"#
        try await Self.withRules(rules) { server in
            try await server.expectOK("PUT", "/members/d1/alice.json", body: "true", headers: Self.admin)
            try await server.expectOK("PUT", "/docs/d1.json", body: #""first""#, headers: Self.admin)
            let stream = try Self.openStream(server, "/docs/d1.json", headers: Self.alice)
            #expect(await stream.read { $0.contains("\"path\":\"/\"") }.contains(#""data":"first""#))
            // Alice loses membership in the same update that changes the document: she gets
            // cancel and never the new text.
            try await server.expectOK(
                "PATCH", "/.json", body: #"{"members/d1/alice": null, "docs/d1": "secret"}"#, headers: Self.admin)
            let ending = await stream.read(untilContaining: "event: cancel")
            #expect(ending.contains(Self.cancelEvent))
            #expect(!ending.contains("secret"))
        }
    }
}
