import Foundation
import HearthServer
import HearthTesting
import Testing

/// `POST /.hearth/rules/simulate`, the console's rules simulator: admins only, clear errors for
/// bad input, nothing written, drafts judged without deploying, and a verdict that equals what
/// the server enforces for the same request.
@Suite("Rules simulator")
struct RulesSimulatorTests {
    static let admin = TestServer.adminHeaders
    static let endpoint = "/.hearth/rules/simulate"

    static let rules = #"""
        {
          // Posts: their author writes them; a post needs a short text and a time not in the future.
          "rules": {
            ".read": "auth != null && auth.token.admin === true",
            "posts": {
              ".read": true,
              "$postId": {
                ".write": "auth != null && (!data.exists() || data.child('uid').val() === auth.uid)",
                ".validate": "newData.hasChildren(['uid', 'text'])",
                "uid": { ".validate": "newData.val() === auth.uid" },
                "text": { ".validate": "newData.isString() && newData.val().length < 20" },
                "at": { ".validate": "newData.val() <= now" }
              }
            },
            "counts": { "$uid": { ".write": "auth.uid === $uid", ".validate": "newData.isNumber()" } },
            "verified": { ".write": "auth.token.email_verified === true && auth.provider === 'password'" },
            "feed": { ".read": "query.orderByChild === 'at' && query.limitToLast <= 10", ".indexOn": ["at"] }
          }
        }
        """#

    static let seed = #"{"posts": {"p1": {"uid": "alice", "text": "first"}}, "counts": {"alice": 1}}"#

    static func withRules(_ body: (TestServer) async throws -> Void) async throws {
        try await TestServer.with(configure: { $0.defaultRules = nil }) { (server: TestServer) async throws in
            let deployed = try await server.request("PUT", "/.settings/rules.json", body: rules, headers: admin)
            try #require(deployed.status == 200, "\(deployed.text)")
            let seeded = try await server.request("PUT", "/.json", body: seed, headers: admin)
            try #require(seeded.status == 200, "\(seeded.text)")
            try await body(server)
        }
    }

    static func simulate(_ server: TestServer, _ body: String) async throws -> [String: Any] {
        let result = try await server.request("POST", endpoint, body: body, headers: admin)
        #expect(result.status == 200, "\(body): \(result.text)")
        return try #require(result.json as? [String: Any])
    }

    static func auth(_ uid: String?, claims: String = "{}", provider: String = "custom") -> String {
        uid.map { #"{"uid": "\#($0)", "provider": "\#(provider)", "claims": \#(claims)}"# } ?? "null"
    }

    @Test func onlyAdminsMaySimulate() async throws {
        try await Self.withRules { server in
            let body = #"{"operation": "read", "path": "/", "auth": null}"#
            let signedOut = try await server.request("POST", Self.endpoint, body: body)
            #expect(signedOut.status == 401)
            #expect(signedOut.errorText == "Permission denied")
            let user = try await server.request("POST", Self.endpoint, body: body, headers: TestServer.userHeaders("alice"))
            #expect(user.status == 401)
            let wrong = try await server.request("POST", Self.endpoint, body: body, headers: ["Authorization": "Bearer wrong"])
            #expect(wrong.status == 401)
            // `/.hearth/` is never a page: other methods, GET too, are told to POST.
            let get = try await server.request("GET", Self.endpoint, headers: Self.admin)
            #expect(get.status == 400)
            #expect(get.errorText?.contains("POST") == true)
            let put = try await server.request("PUT", Self.endpoint, body: body, headers: Self.admin)
            #expect(put.status == 400)
            #expect(put.errorText?.contains("POST") == true)
        }
    }

    @Test(arguments: [
        ("not json", "The body must be a JSON object"),
        (#"[1, 2]"#, "The body must be a JSON object"),
        (#"{"operation": "read"}"#, #""path" must be a string"#),
        (#"{"operation": "read", "path": 5}"#, #""path" must be a string"#),
        (#"{"operation": "read", "path": "/a/b.c"}"#, "Invalid path: Invalid token in path"),
        (#"{"operation": "delete", "path": "/posts"}"#, #""operation" must be "read", "set" or "update""#),
        (#"{"path": "/posts"}"#, #""operation" must be"#),
        (#"{"operation": "set", "path": "/posts/p2"}"#, #"A set needs "data""#),
        (#"{"operation": "update", "path": "/posts", "data": 5}"#, "Invalid data; couldn't parse JSON object"),
        (#"{"operation": "update", "path": "/posts", "data": {}}"#, "An update needs at least one child path."),
        (#"{"operation": "set", "path": "/posts/p2", "data": {"a$": 1}}"#, "Invalid data"),
        (#"{"operation": "read", "path": "/", "auth": 5}"#, #""auth" must be null"#),
        (#"{"operation": "read", "path": "/", "auth": {"provider": "password"}}"#, #""auth" must be null"#),
        (#"{"operation": "read", "path": "/", "auth": {"uid": "a", "claims": [1]}}"#, #""claims" must be a JSON object"#),
        (#"{"operation": "read", "path": "/", "rules": 5}"#, #""rules" must be the rules text"#),
        (#"{"operation": "read", "path": "/feed", "query": "limitToLast=5"}"#, "orderBy must be defined"),
        (#"{"operation": "read", "path": "/feed", "query": "orderBy=at"}"#, "orderBy must be a valid JSON encoded path"),
        (#"{"operation": "read", "path": "/feed", "query": 5}"#, #""query" must be a REST query string"#),
        (#"{"operation": "set", "path": "/posts/p2", "data": 1, "query": "orderBy=\"$key\""}"#, "A query applies to reads only."),
        (#"{"operation": "read", "path": "/", "rules": "{\"rules\": {\".read\": \"nope(\"}}"}"#, "Line 1, column "),
    ])
    func badInputGetsAClearErrorAndChangesNothing(_ body: String, _ error: String) async throws {
        try await Self.withRules { server in
            let before = try await server.dump()
            let rulesBefore = try await server.request("GET", "/.settings/rules.json", headers: Self.admin).text
            let result = try await server.request("POST", Self.endpoint, body: body, headers: Self.admin)
            #expect(result.status == 400, "\(body): \(result.text)")
            #expect(result.errorText?.contains(error) == true, "\(body): \(result.text)")
            #expect(try await server.dump() == before)
            #expect(try await server.request("GET", "/.settings/rules.json", headers: Self.admin).text == rulesBefore)
        }
    }

    @Test func aDeniedWriteNamesTheDecidingLinesAndWritesNothing() async throws {
        try await Self.withRules { server in
            let before = try await server.dump()
            let answer = try await Self.simulate(server, #"""
                {"operation": "set", "path": "/posts/p2", "data": {"uid": "bob", "text": "hi"}, "auth": null}
                """#)
            #expect(answer["allowed"] as? Bool == false)
            #expect((answer["reason"] as? String)?.contains("no .write rule allows writing /posts/p2") == true)
            let trace = try #require(answer["trace"] as? [[String: Any]])
            let write = try #require(trace.first { $0["kind"] as? String == ".write" })
            #expect(write["path"] as? String == "/posts/p2")
            #expect(write["line"] as? Int == 8)
            #expect(write["column"] as? Int == 19)
            #expect(write["result"] as? Bool == false)
            #expect((write["expression"] as? String)?.hasPrefix("auth != null") == true)

            // A validate that fails, with its line; server values resolved at the server's clock.
            let late = try await Self.simulate(server, #"""
                {"operation": "set", "path": "/posts/p2", "data": {"uid": "bob", "text": "hi", "at": 99999999999999},
                 "auth": {"uid": "bob"}}
                """#)
            #expect(late["allowed"] as? Bool == false)
            let failed = try #require((late["trace"] as? [[String: Any]])?.last)
            #expect(failed["kind"] as? String == ".validate")
            #expect(failed["path"] as? String == "/posts/p2/at")
            #expect(failed["line"] as? Int == 12)
            let stamped = try await Self.simulate(server, #"""
                {"operation": "set", "path": "/posts/p2", "data": {"uid": "bob", "text": "hi", "at": {".sv": "timestamp"}},
                 "auth": {"uid": "bob"}}
                """#)
            #expect(stamped["allowed"] as? Bool == true, "\(stamped)")
            #expect(try await server.dump() == before)
        }
    }

    /// A read's query is what `query.*` in a `.read` rule sees, as for a real REST read.
    @Test func aQueriedReadIsJudgedWithItsQuery() async throws {
        let cases: [(query: String?, allowed: Bool)] = [
            (#"orderBy="at"&limitToLast=10"#, true),
            (#"?orderBy=%22at%22&limitToLast=3"#, true),
            (#"orderBy="at"&limitToLast=50"#, false),
            (#"orderBy="uid"&limitToLast=5"#, false),
            (#"orderBy="at"&limitToFirst=5"#, false),
            (nil, false),
        ]
        try await Self.withRules { server in
            for item in cases {
                let field = item.query.map { #", "query": "\#($0.replacingOccurrences(of: "\"", with: "\\\""))""# } ?? ""
                let simulated = try await Self.simulate(server, #"{"operation": "read", "path": "/feed", "auth": \#(Self.auth("bob"))\#(field)}"#)
                #expect(simulated["allowed"] as? Bool == item.allowed, "\(item.query ?? "no query"): \(simulated)")
                let step = try #require((simulated["trace"] as? [[String: Any]])?.last)
                #expect((step["expression"] as? String)?.hasPrefix("query.orderByChild") == true, "\(step)")
                // The same read, really sent.
                let query = item.query.map { query in
                    (query.hasPrefix("?") ? String(query.dropFirst()) : query).replacingOccurrences(of: "\"", with: "%22")
                }
                let real = try await server.request("GET", "/feed.json" + (query.map { "?" + $0 } ?? ""), headers: TestServer.userHeaders("bob"))
                #expect((real.status == 200) == item.allowed, "\(item.query ?? "no query"): \(real.status) \(real.text)")
            }
        }
    }

    @Test func aDraftIsJudgedWithoutBeingDeployed() async throws {
        try await Self.withRules { server in
            let draft = #"{"rules": {\n  // open for the test\n  "posts": {".write": true}}}"#
            let body = #"{"operation": "set", "path": "/posts/p9", "data": 1, "auth": null, "rules": "\#(draft.replacingOccurrences(of: "\"", with: "\\\""))"}"#
            let answer = try await Self.simulate(server, body)
            #expect(answer["allowed"] as? Bool == true, "\(answer)")
            let step = try #require((answer["trace"] as? [[String: Any]])?.first)
            #expect(step["line"] as? Int == 3)
            #expect(step["result"] as? Bool == true)
            // The deployed rules still say no.
            let deployed = try await Self.simulate(server, #"{"operation": "set", "path": "/posts/p9", "data": 1, "auth": null}"#)
            #expect(deployed["allowed"] as? Bool == false)
            #expect(try await server.request("GET", "/.settings/rules.json", headers: Self.admin).text == Self.rules)
        }
    }

    /// The same requests, simulated and then really sent as the same person: the verdicts agree.
    @Test func theSimulatorAgreesWithEnforcement() async throws {
        struct Case {
            var method: String
            var path: String
            var data: String
            var uid: String?
            var claims: [String: any Sendable] = [:]
            var claimsJSON = "{}"
        }
        let cases: [Case] = [
            Case(method: "PUT", path: "/posts/p2", data: #"{"uid": "bob", "text": "hi"}"#, uid: "bob"),
            Case(method: "PUT", path: "/posts/p2", data: #"{"uid": "bob", "text": "hi"}"#, uid: nil),
            Case(method: "PUT", path: "/posts/p1", data: #"{"uid": "bob", "text": "mine now"}"#, uid: "bob"),
            Case(method: "PUT", path: "/posts/p1", data: #"{"uid": "alice", "text": "edited"}"#, uid: "alice"),
            Case(method: "PUT", path: "/posts/p3", data: #"{"uid": "carol", "text": "far too long for the rule here"}"#, uid: "carol"),
            Case(method: "PUT", path: "/posts/p4", data: #"{"uid": "dave", "text": "x", "at": {".sv": "timestamp"}}"#, uid: "dave"),
            Case(method: "PUT", path: "/posts/p5", data: #"{"uid": "erin"}"#, uid: "erin"),
            Case(method: "PUT", path: "/counts/alice", data: #"{".sv": {"increment": 1}}"#, uid: "alice"),
            Case(method: "PUT", path: "/counts/alice", data: #""two""#, uid: "alice"),
            Case(method: "PUT", path: "/counts/bob", data: "1", uid: "alice"),
            Case(method: "PATCH", path: "/", data: #"{"counts/frank": 1, "posts/p6": {"uid": "frank", "text": "both"}}"#, uid: "frank"),
            Case(method: "PATCH", path: "/", data: #"{"counts/gina": 1, "counts/alice": 5}"#, uid: "gina"),
            Case(method: "PATCH", path: "/counts", data: #"{"hugo": 3}"#, uid: "hugo"),
            Case(method: "PUT", path: "/verified", data: "1", uid: "ivan",
                 claims: ["email_verified": true], claimsJSON: #"{"email_verified": true}"#),
            Case(method: "PUT", path: "/verified", data: "1", uid: "jane"),
            Case(method: "DELETE", path: "/posts/p1", data: "null", uid: "alice"),
        ]
        try await Self.withRules { server in
            var allowedCount = 0
            for item in cases {
                let operation = item.method == "PATCH" ? "update" : "set"
                // The test tokens say the provider is "custom".
                let body = #"{"operation": "\#(operation)", "path": "\#(item.path)", "data": \#(item.data), "auth": \#(Self.auth(item.uid, claims: item.claimsJSON))}"#
                let before = try await server.dump()
                let simulated = try await Self.simulate(server, body)
                #expect(try await server.dump() == before, "simulating \(body) wrote something")
                let headers = item.uid.map { TestServer.userHeaders($0, claims: item.claims) } ?? [:]
                let path = item.path == "/" ? "/.json" : item.path + ".json"
                let real = try await server.request(
                    item.method, path, body: item.method == "DELETE" ? nil : item.data, headers: headers)
                let enforced = real.status == 200
                #expect(simulated["allowed"] as? Bool == enforced, "\(item.method) \(item.path) \(item.data) as \(item.uid ?? "signed out"): simulated \(simulated), enforced \(real.status) \(real.text)")
                if enforced { allowedCount += 1 }
            }
            // The table has both verdicts.
            #expect(allowedCount > 3 && allowedCount < cases.count - 3)
        }
    }

    @Test func readsCascadeAndClaimsAndProvidersCount() async throws {
        try await Self.withRules { server in
            let asAlice = try await Self.simulate(server, #"{"operation": "read", "path": "/counts", "auth": \#(Self.auth("alice"))}"#)
            #expect(asAlice["allowed"] as? Bool == false)
            #expect((asAlice["reason"] as? String)?.contains("no .read rule allows reading /counts") == true)
            let asAdmin = try await Self.simulate(
                server, #"{"operation": "read", "path": "/counts", "auth": \#(Self.auth("root", claims: #"{"admin": true}"#))}"#)
            #expect(asAdmin["allowed"] as? Bool == true)
            #expect((asAdmin["trace"] as? [[String: Any]])?.count == 1)
            let verified = #"{"operation": "set", "path": "/verified", "data": 1, "auth": \#(Self.auth("ivan", claims: #"{"email_verified": true}"#, provider: "password"))}"#
            #expect(try await Self.simulate(server, verified)["allowed"] as? Bool == true)
            let google = verified.replacingOccurrences(of: "\"password\"", with: "\"google.com\"")
            #expect(try await Self.simulate(server, google)["allowed"] as? Bool == false)
        }
    }
}
