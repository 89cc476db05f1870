import Foundation
import HearthTesting
import Testing

/// GET, PUT, POST, PATCH and DELETE: what each does to the data and what each answers (as Firebase's REST API; docs/compatibility.md).
@Suite("REST reads and writes")
struct RESTReadWriteTests {
    static let pushAlphabet = Set("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")

    @Test func missingDataReadsAsNullWith200() async throws {
        try await withServer { (server: TestServer) async throws in
            for path in ["/.json", "/nothing.json", "/deep/er/still.json", "/nothing/.priority.json", "/nothing/.json"] {
                let result = try await server.request("GET", path)
                #expect(result.status == 200, "\(path)")
                #expect(result.text == "null", "\(path)")
                #expect(result.header("Content-Type") == jsonContentType)
            }
        }
    }

    @Test func putReplacesAndEchoesTheDataWritten() async throws {
        try await withServer { (server: TestServer) async throws in
            // Keys come back in Firebase order; the echo is the data as stored.
            let echo = try await server.expectOK("PUT", "/users/alice.json", body: #"{"name":"Alice","age":30,"nil":null,"empty":{}}"#)
            #expect(echo == #"{"age":30,"name":"Alice"}"#)
            #expect(try await server.read("/users/alice.json") == #"{"age":30,"name":"Alice"}"#)
            #expect(try await server.read("/users/alice/name.json") == #""Alice""#)

            // PUT replaces: children not in the new value are gone.
            #expect(try await server.expectOK("PUT", "/users/alice.json", body: #"{"age":31}"#) == #"{"age":31}"#)
            #expect(try await server.read("/users.json") == #"{"alice":{"age":31}}"#)

            // Leaves of every type, and a trailing slash before .json.
            #expect(try await server.expectOK("PUT", "/t/s.json", body: #""text""#) == #""text""#)
            #expect(try await server.expectOK("PUT", "/t/b.json", body: "false") == "false")
            #expect(try await server.expectOK("PUT", "/t/i.json", body: "-42") == "-42")
            #expect(try await server.expectOK("PUT", "/t/f/.json", body: "2.5") == "2.5")
            #expect(try await server.expectOK("PUT", "/t/whole.json", body: "1.0") == "1")
            #expect(try await server.read("/t.json") == #"{"b":false,"f":2.5,"i":-42,"s":"text","whole":1}"#)

            // Empty path segments are ignored.
            #expect(try await server.read("//t//s.json") == #""text""#)
        }
    }

    @Test func putOfNullDeletes() async throws {
        try await withSeededServer { (server: TestServer) async throws in
            #expect(try await server.expectOK("PUT", "/a/b.json", body: "null") == "null")
            #expect(try await server.read("/a.json") == #"{"c":{"d":"x"}}"#)
            // Removing the last child removes the parent too: no empty objects.
            #expect(try await server.expectOK("PUT", "/a/c/d.json", body: "null") == "null")
            #expect(try await server.read("/a.json") == "null")
            #expect(try await server.read("/.json") == #"{"list":[1,2],"n":5}"#)
        }
    }

    @Test func putResolvesServerValuesInTheEcho() async throws {
        try await withServer { (server: TestServer) async throws in
            let before = Int64(Date().timeIntervalSince1970 * 1000)
            let echo = try await server.expectOK("PUT", "/s.json", body: #"{"at":{".sv":"timestamp"},"n":{".sv":{"increment":3}}}"#)
            let after = Int64(Date().timeIntervalSince1970 * 1000)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(echo.utf8)) as? [String: Any])
            let at = try #require(object["at"] as? NSNumber).int64Value
            #expect(at >= before && at <= after + 1)
            #expect(object["n"] as? Int == 3)
            #expect(try await server.read("/s.json") == echo, "the echo is what was stored")
            let again = try await server.expectOK("PUT", "/s/n.json", body: #"{".sv":{"increment":-1.5}}"#)
            #expect(again == "1.5")
        }
    }

    @Test func postCreatesAPushChildAndReturnsItsName() async throws {
        try await withSeededServer { (server: TestServer) async throws in
            let before = try await server.dump()
            let text = try await server.expectOK("POST", "/messages.json", body: #"{"text":"hi","n":1}"#)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            #expect(object.count == 1)
            let name = try #require(object["name"] as? String)
            #expect(text == #"{"name":"\#(name)"}"#)
            #expect(name.count == 20)
            #expect(name.allSatisfy { Self.pushAlphabet.contains($0) })
            #expect(try await server.read("/messages/\(name).json") == #"{"n":1,"text":"hi"}"#)
            #expect(try await server.read("/messages.json") == #"{"\#(name)":{"n":1,"text":"hi"}}"#)
            // Nothing else changed.
            let after = try await server.dump()
            #expect(after.replacingOccurrences(of: #","messages":{"\#(name)":{"n":1,"text":"hi"}}"#, with: "") == before)

            // A second POST gets a later name; a leaf and a server value work as bodies too.
            let second = try #require(try await server.request("POST", "/messages.json", body: #"{".sv":"timestamp"}"#).json as? [String: Any])
            let secondName = try #require(second["name"] as? String)
            #expect(secondName > name)
            let stamp = Int64(try await server.read("/messages/\(secondName).json"))
            #expect(stamp != nil && stamp! > 1_600_000_000_000)
        }
    }

    @Test func patchUpdatesSeveralPathsAtOnce() async throws {
        try await withSeededServer { (server: TestServer) async throws in
            let body = #"{"b":10,"c/d":"y","c/e/f":true,"new":{"x":1},"gone":null}"#
            let echo = try await server.expectOK("PATCH", "/a.json", body: body)
            #expect(echo == #"{"b":10,"c/d":"y","c/e/f":true,"new":{"x":1},"gone":null}"#)
            // Children not named are untouched; "c" keeps its priority.
            #expect(try await server.read("/a.json?format=export") == #"{"b":10,"c":{".priority":2,"d":"y","e":{"f":true}},"new":{"x":1}}"#)

            // null deletes, including a nested path.
            #expect(try await server.expectOK("PATCH", "/.json", body: #"{"a/c/d":null,"n":null}"#) == #"{"a/c/d":null,"n":null}"#)
            #expect(try await server.read("/.json") == #"{"a":{"b":10,"c":{"e":{"f":true}},"new":{"x":1}},"list":[1,2]}"#)

            // Server values in a PATCH are resolved, and increments read the stored value.
            let resolved = try await server.expectOK("PATCH", "/a.json", body: #"{"b":{".sv":{"increment":5}},"c/e/f":null}"#)
            #expect(resolved == #"{"b":15,"c/e/f":null}"#)
            #expect(try await server.read("/a.json") == #"{"b":15,"new":{"x":1}}"#)
        }
    }

    @Test func patchIsAtomic() async throws {
        try await withSeededServer { (server: TestServer) async throws in
            // The second entry is refused, so the first must not be applied either.
            try await server.expectRejected("PATCH", "/a.json", body: #"{"b":99,"z":{".sv":"nonsense"}}"#, errorPrefix: "Invalid data")
            try await server.expectRejected(
                "PATCH", "/.json",
                body: #"{"n":6,"deep/\#((1...31).map { "k\($0)" }.joined(separator: "/"))":{"z":1}}"#,
                error: ErrorText.tooDeep
            )
            #expect(try await server.read("/n.json") == "5")
        }
    }

    @Test func deleteRemovesAndAnswersNull() async throws {
        try await withSeededServer { (server: TestServer) async throws in
            #expect(try await server.expectOK("DELETE", "/a/c.json") == "null")
            #expect(try await server.read("/a.json") == #"{"b":1}"#)
            // Deleting what is not there is fine.
            #expect(try await server.expectOK("DELETE", "/nothing/here.json") == "null")
            #expect(try await server.expectOK("DELETE", "/.json") == "null")
            #expect(try await server.read("/.json") == "null")
        }
    }

    @Test func priorityPaths() async throws {
        try await withSeededServer { (server: TestServer) async throws in
            #expect(try await server.read("/a/c/.priority.json") == "2")
            #expect(try await server.expectOK("PUT", "/a/c/.priority.json", body: "7.5") == "7.5")
            #expect(try await server.read("/a/c/.priority.json") == "7.5")
            #expect(try await server.read("/a/c.json") == #"{"d":"x"}"#, "an ordinary GET leaves priorities out")
            #expect(try await server.read("/a/c.json?format=export") == #"{".priority":7.5,"d":"x"}"#)

            #expect(try await server.expectOK("PUT", "/a/b/.priority.json", body: #""high""#) == #""high""#)
            #expect(try await server.read("/a/b/.priority.json") == #""high""#)
            #expect(try await server.read("/a/b.json?format=export") == #"{".value":1,".priority":"high"}"#)

            // PATCH can set a priority, DELETE clears it and keeps the data.
            try await server.expectOK("PATCH", "/a.json", body: #"{"c/.priority":1}"#)
            #expect(try await server.read("/a/c/.priority.json") == "1")
            #expect(try await server.expectOK("DELETE", "/a/c/.priority.json") == "null")
            #expect(try await server.read("/a/c/.priority.json") == "null")
            #expect(try await server.read("/a/c.json") == #"{"d":"x"}"#)

            // Priorities in a body.
            try await server.expectOK("PUT", "/p.json", body: #"{"x":{".value":true,".priority":-3},".priority":"top"}"#)
            #expect(try await server.read("/p/.priority.json") == #""top""#)
            #expect(try await server.read("/p/x/.priority.json") == "-3")
            #expect(try await server.read("/p.json") == #"{"x":true}"#)
        }
    }

    @Test func namespacesAreSeparateDatabases() async throws {
        try await withServer { (server: TestServer) async throws in
            try await server.expectOK("PUT", "/a.json?ns=other-db", body: "1")
            #expect(try await server.read("/a.json") == "null")
            #expect(try await server.read("/a.json?ns=other-db") == "1")
            let bad = try await server.request("GET", "/a.json?ns=Bad_Name")
            #expect(bad.status == 404)
            #expect(bad.errorText == "Database name Bad_Name is not valid.")
        }
    }

    @Test func nonJSONResourcesAreNotFound() async throws {
        try await withServer { (server: TestServer) async throws in
            let result = try await server.request("GET", "/a")
            #expect(result.status == 404)
            #expect(result.errorText == "Not found.")
        }
    }
}
