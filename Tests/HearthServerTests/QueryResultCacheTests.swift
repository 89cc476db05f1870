import HearthCore
import HearthTesting
import Testing

@testable import HearthEngine
@testable import HearthServer

/// Repeated queries are answered from the cache of recent answers only while the data they
/// were computed from is unchanged.
@Suite("Query result cache")
struct QueryResultCacheTests {
    static func children(_ json: String) throws -> Children {
        try #require(JSONParser.parse(Array(json.utf8)).node.children)
    }

    static let key = QueryResultCache.key(
        database: "db", path: Path(keys: [ChildKey("scores")]), parameters: ["orderBy": #""$key""#, "limitToFirst": "2"])

    @Test func anAnswerIsGivenOnlyForTheSameChildren() throws {
        let cache = QueryResultCache()
        let source = try Self.children(#"{"a":1,"b":2}"#)
        cache.keep(Array("answer".utf8), for: Self.key, from: source)
        #expect(cache.answer(for: Self.key, from: source) == Array("answer".utf8))
        // Equal data in another tree is not the same version: no answer.
        #expect(cache.answer(for: Self.key, from: try Self.children(#"{"a":1,"b":2}"#)) == nil)
        // Another query, database or location: no answer.
        let other = QueryResultCache.key(
            database: "db", path: Path(keys: [ChildKey("scores")]), parameters: ["orderBy": #""$key""#, "limitToFirst": "3"])
        #expect(cache.answer(for: other, from: source) == nil)
        let elsewhere = QueryResultCache.key(
            database: "other", path: Path(keys: [ChildKey("scores")]), parameters: ["orderBy": #""$key""#, "limitToFirst": "2"])
        #expect(cache.answer(for: elsewhere, from: source) == nil)
    }

    @Test func parametersThatDoNotShapeTheAnswerShareAnEntry() {
        let plain = QueryResultCache.key(database: "db", path: .root, parameters: ["orderBy": #""$key""#])
        let withAuth = QueryResultCache.key(database: "db", path: .root, parameters: ["orderBy": #""$key""#, "auth": "token"])
        let pretty = QueryResultCache.key(database: "db", path: .root, parameters: ["orderBy": #""$key""#, "print": "pretty"])
        #expect(plain == withAuth)
        #expect(plain != pretty)
    }

    @Test func theCacheStaysWithinItsBounds() throws {
        let cache = QueryResultCache(capacity: 3, maximumAnswerBytes: 10)
        let source = try Self.children(#"{"a":1}"#)
        for limit in 1...10 {
            let key = QueryResultCache.key(database: "db", path: .root, parameters: ["limitToFirst": "\(limit)"])
            cache.keep(Array("x".utf8), for: key, from: source)
        }
        #expect(cache.count == 3)
        let big = QueryResultCache.key(database: "db", path: .root, parameters: ["limitToFirst": "99"])
        cache.keep(Array(repeating: 0x20, count: 11), for: big, from: source)
        #expect(cache.answer(for: big, from: source) == nil)
    }

    @Test func aServerAnswersRepeatedQueriesFreshAfterEveryWrite() async throws {
        try await withServer { (server: TestServer) async throws in
            try await server.expectOK("PUT", "/scores.json", body: #"{"a":{"n":1},"b":{"n":5},"c":{"n":3}}"#)
            try await server.expectOK(
                "PUT", "/.settings/rules.json", body: #"{"rules":{".read":true,".write":true,"scores":{".indexOn":"n"}}}"#,
                headers: TestServer.adminHeaders)
            let top = #"/scores.json?orderBy="n"&limitToLast=2"#
            #expect(try await server.read(top) == #"{"b":{"n":5},"c":{"n":3}}"#)
            #expect(try await server.read(top) == #"{"b":{"n":5},"c":{"n":3}}"#)

            // A write deep under the location changes the answer at once.
            try await server.expectOK("PUT", "/scores/a/n.json", body: "9")
            #expect(try await server.read(top) == #"{"a":{"n":9},"b":{"n":5}}"#)
            // A write elsewhere leaves it as it is; a delete under it changes it.
            try await server.expectOK("PUT", "/other.json", body: "1")
            #expect(try await server.read(top) == #"{"a":{"n":9},"b":{"n":5}}"#)
            try await server.expectOK("DELETE", "/scores/b.json")
            #expect(try await server.read(top) == #"{"a":{"n":9},"c":{"n":3}}"#)

            // Pretty printing and ETags are answered as such, not from the plain answer.
            #expect(try await server.read(top + "&print=pretty").contains("\n"))
            let tagged = try await server.request("GET", top, headers: ["X-Firebase-ETag": "true"])
            #expect(tagged.status == 200)
            #expect(tagged.header("ETag") != nil)
            #expect(tagged.text == #"{"a":{"n":9},"c":{"n":3}}"#)
        }
    }
}
