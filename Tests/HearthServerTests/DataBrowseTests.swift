import Foundation
import HearthServer
import HearthTesting
import Testing

/// `/.hearth/data/summary` and `/.hearth/data/children`: the console's cheap look at how big a
/// location is, and its children a page at a time, for admins only.
@Suite("Data browsing for the console")
struct DataBrowseTests {
    static let admin = ["Authorization": "Bearer \(TestServer.adminToken)"]

    static func seed(_ server: TestServer) async throws {
        // root: posts (250 children of 3 nodes each), users (2 objects), motd (a leaf).
        var posts: [String] = []
        for index in 0..<250 { posts.append(#""p\#(String(format: "%03d", index))":{"text":"t\#(index)","likes":\#(index)}"#) }
        let body = #"{"posts":{\#(posts.joined(separator: ","))},"users":{"ann":{"name":"Ann"},"bob":{"name":"Bob"}},"motd":"hi"}"#
        let put = try await server.request("PUT", "/.json", body: body, headers: Self.admin)
        #expect(put.status == 200)
    }

    static func json(_ result: HTTPResult) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: result.body) as? [String: Any], "\(result.text)")
    }

    @Test func summaryCountsNodesUpToTheCap() async throws {
        try await TestServer.with { server in
            try await Self.seed(server)
            // The root: itself, posts (1 + 250 × 3), users (1 + 2 × 2), motd.
            let root = try Self.json(try await server.request("GET", "/.hearth/data/summary?path=/&cap=100000", headers: Self.admin))
            #expect(root["children"] as? Int == 3)
            #expect(root["nodes"] as? Int == 1 + 751 + 5 + 1)
            #expect(root["more"] as? Bool == false)

            let capped = try Self.json(try await server.request("GET", "/.hearth/data/summary?path=/posts&cap=100", headers: Self.admin))
            #expect(capped["children"] as? Int == 250)
            #expect(capped["nodes"] as? Int == 100)
            #expect(capped["more"] as? Bool == true)

            let nested = try Self.json(try await server.request("GET", "/.hearth/data/summary?path=/users/ann", headers: Self.admin))
            #expect(nested["children"] as? Int == 1)
            #expect(nested["nodes"] as? Int == 2)

            let leaf = try Self.json(try await server.request("GET", "/.hearth/data/summary?path=/motd", headers: Self.admin))
            #expect(leaf["children"] as? Int == 0)
            #expect(leaf["nodes"] as? Int == 1)

            let missing = try Self.json(try await server.request("GET", "/.hearth/data/summary?path=/nothing/here", headers: Self.admin))
            #expect(missing["children"] as? Int == 0)
            #expect(missing["nodes"] as? Int == 0)
            #expect(missing["more"] as? Bool == false)

            // Another database (`ns=`) has its own data.
            let other = try Self.json(try await server.request("GET", "/.hearth/data/summary?path=/&ns=other", headers: Self.admin))
            #expect(other["nodes"] as? Int == 0)
        }
    }

    @Test func childrenComeAPageAtATimeWithTheirSizes() async throws {
        try await TestServer.with { server in
            try await Self.seed(server)
            let root = try Self.json(try await server.request("GET", "/.hearth/data/children?path=/", headers: Self.admin))
            #expect(root["children"] as? Int == 3)
            #expect(root["more"] as? Bool == false)
            let keys = try #require(root["keys"] as? [[String: Any]])
            #expect(keys.map { $0["key"] as? String } == ["motd", "posts", "users"])
            #expect(keys[0]["value"] as? String == "hi")
            #expect(keys[1]["children"] as? Int == 250)
            #expect(keys[2]["children"] as? Int == 2)

            let first = try Self.json(try await server.request("GET", "/.hearth/data/children?path=/posts&limit=100", headers: Self.admin))
            let firstKeys = try #require(first["keys"] as? [[String: Any]]).compactMap { $0["key"] as? String }
            #expect(firstKeys.count == 100)
            #expect(firstKeys.first == "p000")
            #expect(firstKeys.last == "p099")
            #expect(first["more"] as? Bool == true)

            let next = try Self.json(try await server.request(
                "GET", "/.hearth/data/children?path=/posts&limit=100&startAfter=p199", headers: Self.admin))
            let nextKeys = try #require(next["keys"] as? [[String: Any]]).compactMap { $0["key"] as? String }
            #expect(nextKeys.count == 50)
            #expect(nextKeys.first == "p200")
            #expect(next["more"] as? Bool == false)

            // A key search's range: startAt a prefix, endAt the prefix and U+F8FF.
            let range = try Self.json(try await server.request(
                "GET", "/.hearth/data/children?path=/posts&startAt=p24&endAt=p24%EF%A3%BF&limit=5", headers: Self.admin))
            let rangeKeys = try #require(range["keys"] as? [[String: Any]]).compactMap { $0["key"] as? String }
            #expect(rangeKeys == ["p240", "p241", "p242", "p243", "p244"])
            #expect(range["more"] as? Bool == true)

            let leaf = try Self.json(try await server.request("GET", "/.hearth/data/children?path=/motd", headers: Self.admin))
            #expect(leaf["children"] as? Int == 0)
            #expect((leaf["keys"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func badRequestsGetAClearErrorAndOthersAreRefused() async throws {
        try await TestServer.with { server in
            try await Self.seed(server)
            for target in ["/.hearth/data/summary?path=/posts", "/.hearth/data/children?path=/posts", "/.hearth/data/search?q=name"] {
                let anonymous = try await server.request("GET", target)
                #expect(anonymous.status == 401)
                #expect(anonymous.text.contains("Permission denied"))
                #expect(try await server.request("GET", target, headers: ["Authorization": "Bearer wrong"]).status == 401)
            }
            let cases: [(String, String)] = [
                ("/.hearth/data/summary?path=/a.b", "Invalid path"),
                ("/.hearth/data/summary?path=/posts&cap=0", "cap must be"),
                ("/.hearth/data/summary?path=/posts&cap=lots", "cap must be"),
                ("/.hearth/data/children?path=/posts&limit=5000", "limit must be"),
                ("/.hearth/data/children?path=/posts&startAt=a&startAfter=b", "cannot both"),
                ("/.hearth/data/children?path=/posts&startAt=a%23b", "key bound"),
                ("/.hearth/data/children?path=/a%5Bb", "Invalid path"),
                ("/.hearth/data/search?path=/", "q must be"),
                ("/.hearth/data/search?q=a&limit=0", "limit must be"),
                ("/.hearth/data/search?q=a&maxNodes=99999999", "maxNodes must be"),
            ]
            for (target, words) in cases {
                let result = try await server.request("GET", target, headers: Self.admin)
                #expect(result.status == 400, "\(target)")
                let error = try Self.json(result)["error"] as? String
                #expect(error?.contains(words) == true, "\(target): \(result.text)")
            }
            let post = try await server.request("POST", "/.hearth/data/summary", body: "{}", headers: Self.admin)
            #expect(post.status == 400)
            // Nothing changed.
            let root = try Self.json(try await server.request("GET", "/.hearth/data/summary?path=/", headers: Self.admin))
            #expect(root["nodes"] as? Int == 758)
        }
    }

    @Test func searchFindsKeysAnywhereBoundedForAdminsOnly() async throws {
        try await TestServer.with { server in
            try await Self.seed(server)
            let deep = #"{"a":{"b":{"c":{"d":{"Needle-Key":7}}}}}"#
            #expect(try await server.request("PUT", "/deep.json", body: deep, headers: Self.admin).status == 200)
            let found = try Self.json(try await server.request("GET", "/.hearth/data/search?q=needle", headers: Self.admin))
            let matches = try #require(found["matches"] as? [[String: Any]])
            #expect(matches.map { $0["path"] as? String } == ["/deep/a/b/c/d/Needle-Key"])
            #expect(matches.first?["value"] as? Int == 7)
            #expect(found["complete"] as? Bool == true)
            #expect(found["visited"] as? Int == 758 - 1 + 6)

            // From a location: only what is under it, with paths from the root.
            let users = try Self.json(try await server.request("GET", "/.hearth/data/search?path=/users&q=NAME", headers: Self.admin))
            let userPaths = try #require(users["matches"] as? [[String: Any]]).compactMap { $0["path"] as? String }
            #expect(userPaths == ["/users/ann/name", "/users/bob/name"])

            let capped = try Self.json(try await server.request("GET", "/.hearth/data/search?q=p&limit=3", headers: Self.admin))
            #expect((capped["matches"] as? [[String: Any]])?.count == 3)
            #expect(capped["complete"] as? Bool == false)
            #expect(capped["stoppedAt"] as? String == "results")
            let few = try Self.json(try await server.request("GET", "/.hearth/data/search?q=Needle&maxNodes=10", headers: Self.admin))
            #expect(few["stoppedAt"] as? String == "nodes")
            #expect(few["visited"] as? Int == 10)

            // The rules do not apply and do not help: a signed-in user is refused.
            let user = try await server.request("GET", "/.hearth/data/search?q=needle", headers: TestServer.userHeaders("u1"))
            #expect(user.status == 401 || user.status == 403)
            #expect(!user.text.contains("Needle"))
        }
    }
}
