import Foundation
import HearthServer
import HearthTesting
import Testing

/// A conditional write (REST `if-match`, the realtime protocol's `h`) is judged by the rules
/// before its condition: a refused writer learns nothing of the value, its hash or its
/// existence, whether the condition holds or not (Firebase answers `permission_denied`).
@Suite("Rules before conditions")
struct ConditionRulesFirstTests {
    static let admin = TestServer.adminHeaders
    static let alice = TestServer.userHeaders("alice")
    static let bob = TestServer.userHeaders("bob")
    static let denied = "Permission denied"

    /// Users read and write their own `private/<uid>`; `blocks/<uid>` is written by anyone
    /// signed in but read by its owner only; `open` is everyone's.
    static let rules = """
        {"rules": {
          "private": {"$uid": {".read": "auth.uid === $uid", ".write": "auth.uid === $uid"}},
          "blocks": {"$uid": {".read": "auth.uid === $uid", "$other": {".write": "auth !== null"}}},
          "open": {".read": true, ".write": true},
          "votes": {"$id": {".write": true}}
        }}
        """

    static let secret = #"{"messages": {"m1": "meet at noon"}}"#

    static func withSecrets(rules: String? = Self.rules, _ body: (TestServer) async throws -> Void) async throws {
        try await TestServer.with(configure: { $0.defaultRules = nil }) { (server: TestServer) async throws in
            if let rules {
                #expect(try await server.request("PUT", "/.settings/rules.json", body: rules, headers: admin).status == 200)
            }
            try await server.expectOK("PUT", "/private/alice.json", body: secret, headers: admin)
            try await server.expectOK("PUT", "/blocks/alice/bob.json", body: "true", headers: admin)
            try await body(server)
        }
    }

    /// Every way a signed-out REST client can send a conditional write at the root.
    static let conditionalRequests: [(method: String, path: String, body: String?, headers: [String: String])] = [
        ("PUT", "/.json", "null", ["if-match": "x"]),
        ("PUT", "/.json", "null", ["if-match": "null_etag"]),
        ("DELETE", "/.json", nil, ["if-match": "x"]),
        ("POST", "/.json", "null", ["if-match": "x", "X-HTTP-Method-Override": "PUT"]),
        ("POST", "/.json?x-http-method-override=DELETE", nil, ["if-match": "x"]),
        ("PUT", "/private/alice.json", "null", ["if-match": "x"]),
    ]

    @Test(arguments: [Optional(Self.rules), nil])
    func aRefusedConditionalWriteRevealsNothing(rules: String?) async throws {
        try await Self.withSecrets(rules: rules) { server in
            let before = try await server.dump()
            for request in Self.conditionalRequests {
                for headers in [[:], Self.bob] {
                    let answer = try await server.request(
                        request.method, request.path, body: request.body,
                        headers: request.headers.merging(headers) { $1 })
                    #expect(answer.status == 401, "\(request.method) \(request.path): \(answer.status) \(answer.text)")
                    #expect(answer.errorText == Self.denied)
                    #expect(!answer.text.contains("noon"))
                    #expect(answer.header("ETag") == nil)
                }
            }
            #expect(try await server.dump() == before)
        }
    }

    @Test func aWriterWhoMayNotReadLearnsNothingFromAHash() async throws {
        try await Self.withSecrets { server in
            // Bob may write alice's block entry for him, not read it: right and wrong guesses
            // of its ETag get the same answer.
            let etag = try #require(
                try await server.request("GET", "/blocks/alice/bob.json", headers: Self.admin.merging(["X-Firebase-ETag": "true"]) { $1 })
                    .header("ETag"))
            for guess in [etag, "wrong", "null_etag"] {
                let answer = try await server.request(
                    "PUT", "/blocks/alice/bob.json", body: "true", headers: Self.bob.merging(["if-match": guess]) { $1 })
                #expect(answer.status == 401, "\(guess): \(answer.text)")
                #expect(answer.errorText == Self.denied)
                #expect(answer.header("ETag") == nil)
            }
            // Without a condition the write rules alone decide.
            try await server.expectOK("PUT", "/blocks/alice/bob.json", body: "true", headers: Self.bob)
        }
    }

    @Test func aReaderStillGetsTheCurrentValueOnAMismatch() async throws {
        try await Self.withSecrets { server in
            let answer = try await server.request(
                "PUT", "/private/alice/messages/m1.json", body: #""later""#, headers: Self.alice.merging(["if-match": "x"]) { $1 })
            #expect(answer.status == 412)
            #expect(answer.text == #""meet at noon""#)
            #expect(answer.header("ETag") != nil)
        }
    }

    @Test func aRealtimeTransactionIsJudgedBeforeItsHash() async throws {
        try await Self.withSecrets { server in
            let hashes = try await server.request(
                "GET", "/blocks/alice/bob.json", headers: Self.admin.merging(["X-Firebase-ETag": "true"]) { $1 })
            let rightHash = try #require(hashes.header("ETag"))
            let anonymous = try await RealtimeTestClient.connect(server)
            let bob = try await RealtimeTestClient.connect(server)
            #expect(try await bob.request("auth", #"{"cred":"\#(TestToken.unsigned(uid: "bob"))"}"#).status == "ok")
            // The guess that alice blocked bob (right) and the guess that she did not (wrong):
            // the same refusal, signed out or as bob.
            for client in [anonymous, bob] {
                for hash in [rightHash, "", "wrong"] {
                    let answer = try await client.request("p", #"{"p":"/blocks/alice/bob","d":true,"h":"\#(hash)"}"#)
                    #expect(answer.status == "permission_denied", "\(hash): \(answer.status)")
                }
                let secret = try await client.request("p", #"{"p":"/private/alice","d":null,"h":"wrong"}"#)
                #expect(secret.status == "permission_denied")
            }
            // A reader that may write still gets `datastale` for a stale hash.
            let alice = try await RealtimeTestClient.connect(server)
            #expect(try await alice.request("auth", #"{"cred":"\#(TestToken.unsigned(uid: "alice"))"}"#).status == "ok")
            #expect(try await alice.request("p", #"{"p":"/private/alice/n","d":1,"h":"wrong"}"#).status == "datastale")
            try await anonymous.close()
            try await bob.close()
            try await alice.close()
            #expect(try await server.request("GET", "/private/alice/n.json", headers: Self.admin).text == "null")
        }
    }

    @Test func aRefusedQueryDoesNotSayWhichIndexesExist() async throws {
        try await Self.withSecrets { server in
            // The rules answer before "Index not defined", over REST and streams.
            let query = try await server.request("GET", #"/private/alice/messages.json?orderBy="x"&limitToFirst=1"#)
            #expect(query.status == 401)
            #expect(query.errorText == Self.denied)
            let stream = try RawHTTPConnection(
                port: server.port,
                request: "GET /private/alice/messages.json?orderBy=%22x%22&limitToFirst=1 HTTP/1.1\r\nHost: localhost\r\n"
                    + "Accept: text/event-stream\r\nAuthorization: Bearer \(TestToken.unsigned(uid: "bob"))\r\n\r\n")
            let streamAnswer = await stream.read { $0.contains("}") }
            #expect(streamAnswer.hasPrefix("HTTP/1.1 401"), "\(streamAnswer)")
            #expect(streamAnswer.contains(Self.denied) && !streamAnswer.contains("Index"))
            let anonymous = try await RealtimeTestClient.connect(server)
            let listen = try await anonymous.request("q", #"{"p":"/private/alice/messages","q":{"i":"x","l":1,"vf":"l"},"t":1,"h":""}"#)
            #expect(listen.status == "permission_denied")
            try await anonymous.close()
        }
    }

    @Test func anIncrementDoesNotShowAWriterWhatItMayNotRead() async throws {
        try await Self.withSecrets { server in
            try await server.expectOK("PUT", "/votes/v1.json", body: "41", headers: Self.admin)
            let increment = #"{".sv": {"increment": 1}}"#
            let put = try await server.request("PUT", "/votes/v1.json", body: increment, headers: ["X-Firebase-ETag": "true"])
            #expect(put.status == 200)
            #expect(!put.text.contains("42"), "\(put.text)")
            #expect(put.header("ETag") != (try await server.request(
                "GET", "/votes/v1.json", headers: Self.admin.merging(["X-Firebase-ETag": "true"]) { $1 }).header("ETag")))
            let patch = try await server.request("PATCH", "/votes.json", body: #"{"v1": \#(increment)}"#)
            #expect(patch.status == 200)
            #expect(!patch.text.contains("43"), "\(patch.text)")
            #expect(try await server.request("GET", "/votes/v1.json", headers: Self.admin).text == "43")
            // A reader sees the value the server stored.
            let open = try await server.request("PUT", "/open/n.json", body: increment)
            #expect(open.text == "1")
        }
    }
}
