import Foundation
import HearthCore
@testable import HearthEngine
@testable import HearthServer
import HummingbirdCore
import HearthTesting
import Testing

/// The ring of recent requests behind the console's request log, and `GET /.hearth/requests`.
@Suite("Request log")
struct RequestLogTests {
    static func entry(_ index: Int, status: Int? = 200, path: String = "/a.json") -> RequestLog.Entry {
        RequestLog.Entry(
            time: Date(), method: "GET", path: "\(path)?i=\(index)", status: status, milliseconds: 1, transport: "rest",
            requestID: "r\(index)", uid: nil)
    }

    @Test func theRingKeepsOnlyTheNewestInOrder() {
        let log = RequestLog(capacity: 3)
        #expect(log.newestFirst().isEmpty)
        for index in 0..<7 { log.record(Self.entry(index)) }
        #expect(log.newestFirst().map(\.requestID) == ["r6", "r5", "r4"])
        #expect(log.newestFirst(.init(limit: 2)).map(\.requestID) == ["r6", "r5"])
    }

    @Test func filtersByStatusClassAndPathPrefix() {
        let log = RequestLog(capacity: 10)
        log.record(Self.entry(0, status: 200, path: "/users/a.json"))
        log.record(Self.entry(1, status: 404, path: "/users/b.json"))
        log.record(Self.entry(2, status: 500, path: "/posts.json"))
        log.record(Self.entry(3, status: nil, path: "/users"))
        #expect(log.newestFirst(.init(statusClass: 4)).map(\.requestID) == ["r1"])
        #expect(log.newestFirst(.init(pathPrefix: "/users")).map(\.requestID) == ["r3", "r1", "r0"])
        #expect(log.newestFirst(.init(statusClass: 2, pathPrefix: "/posts")).isEmpty)
    }

    @Test func credentialsInTheQueryAreNotKept() {
        let log = RequestLog(capacity: 2)
        log.record(
            time: Date(), method: "GET", uri: URI("/a.json?auth=secret-token&orderBy=%22k%22&access_token=other"), status: 200,
            duration: .milliseconds(3), transport: "sse")
        let entry = try! #require(log.newestFirst().first)
        #expect(entry.path == "/a.json?auth=***&orderBy=%22k%22&access_token=***")
        #expect(!entry.path.contains("secret-token") && !entry.path.contains("other"))
        #expect(entry.milliseconds == 3)
    }

    @Test func theEndpointListsRequestsForAdminsOnly() async throws {
        try await withServer { server in
            _ = try await server.request("PUT", "/a.json", body: "1", headers: TestServer.adminHeaders)
            _ = try await server.request("GET", "/missing/.json?auth=\(TestServer.adminToken)")
            let listed = try await server.request("GET", "/.hearth/requests?limit=10", headers: TestServer.adminHeaders)
            #expect(listed.status == 200)
            let body = try #require(try JSONSerialization.jsonObject(with: listed.body) as? [String: Any])
            let entries = try #require(body["entries"] as? [[String: Any]])
            #expect(entries.count >= 2)
            let put = try #require(entries.first { $0["method"] as? String == "PUT" })
            #expect(put["path"] as? String == "/a.json")
            #expect(put["status"] as? Int == 200)
            #expect(put["transport"] as? String == "rest")
            #expect(put["uid"] as? String == "admin")
            #expect((put["requestID"] as? String)?.isEmpty == false)
            #expect(!listed.text.contains(TestServer.adminToken), "the token in auth= is not kept")
            #expect(listed.text.contains("auth=***"))

            let errors = try await server.request("GET", "/.hearth/requests?status=4xx", headers: TestServer.adminHeaders)
            let errorEntries = try #require(
                (try JSONSerialization.jsonObject(with: errors.body) as? [String: Any])?["entries"] as? [[String: Any]])
            #expect(errorEntries.allSatisfy { ($0["status"] as? Int ?? 0) / 100 == 4 })

            let bad = try await server.request("GET", "/.hearth/requests?status=9xx", headers: TestServer.adminHeaders)
            #expect(bad.status == 400)
            #expect(bad.text.contains("status must be a status class"))
            let anonymous = try await server.request("GET", "/.hearth/requests")
            #expect(anonymous.status == 401)
            let user = try await server.request("GET", "/.hearth/requests", headers: TestServer.userHeaders("u1"))
            #expect(user.status == 401)
            _ = try await server.request("GET", "/a.json", headers: TestServer.userHeaders("u1"))
            let again = try await server.request("GET", "/.hearth/requests?limit=1", headers: TestServer.adminHeaders)
            #expect(again.text.contains(#""uid":"u1""#), "the signed-in user is named: \(again.text)")
        }
    }

    @Test func monitoringReadsAreNotKept() async throws {
        try await withServer { server in
            for path in ["/.hearth/stats", "/metrics", "/.hearth/logs", "/.hearth/requests"] {
                let read = try await server.request("GET", path, headers: TestServer.adminHeaders)
                #expect(read.status == 200, "\(path): \(read.text)")
            }
            _ = try await server.request("GET", "/kept.json", headers: TestServer.adminHeaders)
            let listed = try await server.request("GET", "/.hearth/requests", headers: TestServer.adminHeaders)
            let body = try #require(try JSONSerialization.jsonObject(with: listed.body) as? [String: Any])
            let paths = try #require(body["entries"] as? [[String: Any]]).compactMap { $0["path"] as? String }
            #expect(paths == ["/kept.json"])
        }
    }

    @Test func accountRequestsNameWhomTheySpokeFor() async throws {
        try await withServer { server in
            let signedUp = try await AuthEndpointTests.signUp(server, "logged@example.com")
            let uid = try #require(signedUp["localId"] as? String)
            let idToken = try #require(signedUp["idToken"] as? String)
            _ = try AuthEndpointTests.object(try await AuthEndpointTests.post(server, "accounts:lookup", ["idToken": idToken]))
            _ = try await AuthEndpointTests.post(server, "accounts:signInWithPassword", ["email": "logged@example.com", "password": "wrong"])
            _ = try AuthEndpointTests.object(try await AuthEndpointTests.post(
                server, "projects/p/accounts:lookup", ["localId": [uid]], headers: AuthEndpointTests.owner))
            let listed = try await server.request("GET", "/.hearth/requests?path=/identitytoolkit", headers: TestServer.adminHeaders)
            let entries = try #require(
                (try JSONSerialization.jsonObject(with: listed.body) as? [String: Any])?["entries"] as? [[String: Any]])
            let named = entries.map { ($0["path"] as? String ?? "", $0["uid"] as? String) }
            // Newest first: the admin lookup, the refused sign-in (nobody), the lookup, the sign-up.
            #expect(named.map(\.1) == ["admin", nil, uid, uid], "\(named)")
        }
    }

    @Test func aLogOfSizeZeroKeepsNothing() async throws {
        let off = RequestLog(capacity: 0)
        off.record(time: Date(), method: "GET", uri: URI("/a.json"), status: 200, duration: nil, transport: "rest")
        #expect(!off.isEnabled && off.newestFirst().isEmpty)
        try await withServer(configure: { $0.requestLogSize = 0 }) { server in
            _ = try await server.request("PUT", "/a.json", body: "1", headers: TestServer.adminHeaders)
            let client = try await RealtimeTestClient.connect(server)
            _ = try await client.request("p", #"{"p": "/rt/a", "d": 1}"#)
            try await client.close()
            let listed = try await server.request("GET", "/.hearth/requests?limit=5", headers: TestServer.adminHeaders)
            #expect(listed.status == 200)
            #expect(listed.text == #"{"capacity":0,"entries":[]}"#)
        }
    }

    @Test func realtimeConnectionsAndMessagesAreLoggedWithoutAStatus() async throws {
        try await withServer { server in
            let client = try await RealtimeTestClient.connect(server)
            _ = try await client.request("p", #"{"p": "/rt/a", "d": 1}"#)
            _ = try await client.request("q", #"{"p": "/rt", "h": ""}"#)
            let listed = try await server.request("GET", "/.hearth/requests?path=/", headers: TestServer.adminHeaders)
            let entries = try #require(
                (try JSONSerialization.jsonObject(with: listed.body) as? [String: Any])?["entries"] as? [[String: Any]])
            let realtime = entries.filter { $0["transport"] as? String == "realtime" }
            // Newest first: the listen, the put, the connection.
            #expect(realtime.map { $0["method"] as? String } == ["listen", "put", "connect"])
            #expect(realtime.map { $0["path"] as? String } == ["/rt", "/rt/a", "/.ws?ns=default"])
            #expect(realtime.allSatisfy { $0["status"] == nil && $0["milliseconds"] == nil })
            let session = try #require(realtime.last?["requestID"] as? String)
            #expect((realtime.first?["requestID"] as? String)?.hasPrefix(session + "#") == true, "messages name their session")
            let fourXX = try await server.request("GET", "/.hearth/requests?status=4xx", headers: TestServer.adminHeaders)
            #expect(!fourXX.text.contains("realtime"), "a message without a status matches no status class")
            try await client.close()
        }
    }
}
