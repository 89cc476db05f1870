import Foundation
import HearthServer
import HearthStore
import HearthTesting
import Testing

/// An onDisconnect operation runs as the identity that queued it, judged by the rules in
/// force and against the data of the moment it runs; an account disabled or deleted since
/// loses its operations.
@Suite("onDisconnect judged when it runs")
struct OnDisconnectRecheckTests {
    static let admin = TestServer.adminHeaders
    static let identity = "/identitytoolkit.googleapis.com/v1/"

    /// Comments by signed-in users who are not blocked; presence for anyone signed in.
    static let rules = """
        {"rules": {
          ".read": true,
          "comments": {"$id": {
            ".write": "auth !== null && !root.child('blocked').child(auth.uid).exists()",
            ".validate": "newData.hasChildren(['by', 'text']) && root.child('posts').child($id).exists()"
          }},
          "presence": {"$uid": {".write": "auth !== null && auth.uid === $uid"}},
          "blocked": {".write": false},
          "posts": {".write": false}
        }}
        """

    static func withServer(_ body: (TestServer) async throws -> Void) async throws {
        try await TestServer.with(configure: { $0.defaultRules = Self.rules }) { server in
            try await server.expectOK("PUT", "/posts/p1.json", body: #"{"text": "a post"}"#, headers: Self.admin)
            try await body(server)
        }
    }

    /// Waits until the server has applied (or dropped) every kept onDisconnect operation: it
    /// forgets them from its queue on disk only afterwards.
    static func waitForQueueToEmpty(_ server: TestServer) async throws {
        let store = try DisconnectQueueStore(path: server.folder.url.appendingPathComponent("realtime/disconnects.sqlite").path)
        let deadline = ContinuousClock.now + .seconds(15)
        while try await !store.all().isEmpty {
            guard ContinuousClock.now < deadline else { throw TestServerError("the onDisconnect queue did not empty") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    static func connect(_ server: TestServer, token: String) async throws -> RealtimeTestClient {
        let client = try await RealtimeTestClient.open(server)
        let auth = try await client.request("auth", #"{"cred":"\#(token)"}"#)
        #expect(auth.status == "ok", "\(auth.text)")
        return client
    }

    static func queue(_ client: RealtimeTestClient, _ path: String, _ data: String) async throws {
        let queued = try await client.request("o", #"{"p":"\#(path)","d":\#(data)}"#)
        #expect(queued.status == "ok", "\(queued.text)")
    }

    @Test func aUserBlockedSinceLosesTheQueuedWrite() async throws {
        try await Self.withServer { server in
            let carol = try await Self.connect(server, token: TestToken.unsigned(uid: "carol"))
            try await Self.queue(carol, "/comments/p1", #"{"by": "carol", "text": "bye"}"#)
            try await Self.queue(carol, "/presence/carol", #""gone""#)
            try await server.expectOK("PUT", "/blocked/carol.json", body: "true", headers: Self.admin)
            try await carol.close()
            try await Self.waitForQueueToEmpty(server)
            #expect(try await server.read("/comments/p1.json") == "null")
            // What the rules still allow ran.
            #expect(try await server.read("/presence/carol.json") == #""gone""#)
        }
    }

    @Test func aTargetDeletedSinceFailsValidation() async throws {
        try await Self.withServer { server in
            let dave = try await Self.connect(server, token: TestToken.unsigned(uid: "dave"))
            try await Self.queue(dave, "/comments/p1", #"{"by": "dave", "text": "bye"}"#)
            try await server.expectOK("DELETE", "/posts/p1.json", headers: Self.admin)
            try await dave.close()
            try await Self.waitForQueueToEmpty(server)
            // The comment would be an orphan that breaks .validate: not written.
            #expect(try await server.read("/comments/p1.json") == "null")
        }
    }

    @Test func stricterRulesDeployedSinceApply() async throws {
        try await Self.withServer { server in
            let erin = try await Self.connect(server, token: TestToken.unsigned(uid: "erin"))
            try await Self.queue(erin, "/presence/erin", #""gone""#)
            let closed = Self.rules.replacingOccurrences(
                of: #""$uid": {".write": "auth !== null && auth.uid === $uid"}"#, with: #""$uid": {".write": false}"#)
            #expect(closed != Self.rules)
            #expect(try await server.request("PUT", "/.settings/rules.json", body: closed, headers: Self.admin).status == 200)
            try await erin.close()
            try await Self.waitForQueueToEmpty(server)
            #expect(try await server.read("/presence/erin.json") == "null")
        }
    }

    @Test(arguments: ["disable", "delete"])
    func anAccountDisabledOrDeletedSinceLosesItsOperations(change: String) async throws {
        try await Self.withServer { server in
            let body = #"{"email": "frank@example.com", "password": "correct horse 1", "returnSecureToken": true}"#
            let signedUp = try await server.request("POST", Self.identity + "accounts:signUp?key=k", body: body)
            let object = try #require(signedUp.json as? [String: Any])
            let uid = try #require(object["localId"] as? String)
            let token = try #require(object["idToken"] as? String)
            let frank = try await Self.connect(server, token: token)
            try await Self.queue(frank, "/presence/\(uid)", #""gone""#)
            let request = change == "disable" ? #"{"localId": "\#(uid)", "disableUser": true}"# : #"{"localId": "\#(uid)"}"#
            let endpoint = change == "disable" ? "projects/p/accounts:update" : "projects/p/accounts:delete"
            try await server.expectOK("POST", Self.identity + endpoint, body: request, headers: Self.admin)
            try await frank.close()
            try await Self.waitForQueueToEmpty(server)
            #expect(try await server.read("/presence/\(uid).json") == "null")
        }
    }

    @Test func anActiveAccountsOperationsStillRun() async throws {
        try await Self.withServer { server in
            let body = #"{"email": "grace@example.com", "password": "correct horse 1", "returnSecureToken": true}"#
            let object = try #require(try await server.request("POST", Self.identity + "accounts:signUp?key=k", body: body).json as? [String: Any])
            let uid = try #require(object["localId"] as? String)
            let grace = try await Self.connect(server, token: try #require(object["idToken"] as? String))
            try await Self.queue(grace, "/presence/\(uid)", #"{".sv": "timestamp"}"#)
            try await grace.close()
            try await Self.waitForQueueToEmpty(server)
            #expect(try await server.read("/presence/\(uid).json") != "null")
        }
    }
}
