import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HearthServer
import HearthTesting
import Testing

/// Refused requests: the status, Firebase's exact error text (docs/compatibility.md where Hearth chose), and no change to
/// the stored data (every case goes through `expectRejected`, which compares the whole tree,
/// priorities included, before and after).
@Suite("REST errors")
struct RESTErrorTests {
    @Test func unparseableBodies() async throws {
        try await withSeededServer { (server: TestServer) async throws in
            for body in ["{", #"{"a":}"#, #"{"a":1,}"#, "[1,2", "1 2", "tru", "nul", "'x'", #""unterminated"#, "01", "1.", "-", "NaN", "Infinity", #"{"a" 1}"#, #"{a:1}"#, #""\x""#, #""\ud800""#] {
                for method in ["PUT", "POST"] {
                    try await server.expectRejected(method, "/a.json", body: body, error: ErrorText.unparseable)
                }
            }
            // PATCH tells malformed JSON apart from JSON that is not an object.
            for body in ["{", #"{"a":1"#, #"{"a":}"#, "[1", "x"] {
                try await server.expectRejected("PATCH", "/a.json", body: body, error: ErrorText.unparseable)
            }
        }
    }

    /// A refusal by the rules is answered from bytes made once: the same text, status and
    /// headers as any other error, on reads and writes, repeated.
    @Test func refusalsByTheRulesAreFirebasesAnswer() async throws {
        let rules = #"{"rules": {"open": {".read": true, ".write": true}, "closed": {".read": false, ".write": false}}}"#
        try await TestServer.with(configure: { $0.defaultRules = rules }) { (server: TestServer) async throws in
            for (method, path, body) in [("GET", "/closed/a.json", nil), ("PUT", "/closed/a.json", "1"), ("GET", "/closed/a.json", nil)] as [(String, String, String?)] {
                let refused = try await server.request(method, path, body: body)
                #expect(refused.status == 401)
                #expect(refused.text == "{\n  \"error\" : \"Permission denied\"\n}\n")
                #expect(refused.header("Content-Type") == "application/json; charset=utf-8")
                #expect(refused.header("Access-Control-Allow-Origin") == "*")
                #expect(refused.header("X-Content-Type-Options") == "nosniff")
            }
            // Another error in the same shape, built as it is asked for.
            let unknown = try await server.request("GET", "/open.json?orderBy=%22x%22")
            #expect(unknown.status == 400)
            #expect(unknown.text.hasPrefix("{\n  \"error\" : "))
        }
    }

    @Test func emptyBodies() async throws {
        try await withSeededServer { (server: TestServer) async throws in
            for method in ["PUT", "POST", "PATCH"] {
                try await server.expectRejected(method, "/a.json", body: "", error: ErrorText.unparseable)
                try await server.expectRejected(method, "/a.json", body: nil, error: ErrorText.unparseable)
                try await server.expectRejected(method, "/a.json", body: "  \n ", error: ErrorText.unparseable)
            }
        }
    }

    @Test func badKeysInBodiesReportLineAndColumn() async throws {
        try await withSeededServer { (server: TestServer) async throws in
            let cases: [(String, Int, Int)] = [
                (#"{"ok":1,"b.c":2}"#, 1, 9),
                (#"{"$x":1}"#, 1, 2),
                (#"{"a#":1}"#, 1, 2),
                (#"{"[":1}"#, 1, 2),
                (#"{"]":1}"#, 1, 2),
                (#"{"a/b":1}"#, 1, 2),
                (#"{"":1}"#, 1, 2),
                (#"{".hidden":1}"#, 1, 2),
                (#"{"tab\there":1}"#, 1, 2),
                ("{\n  \"a\": {\n    \"$x\": 1\n  }\n}", 3, 5),
                ("{\"ok\": {\"é\": 1, \"x.y\": 2}}", 1, 17),
                ("[1, {\"fine\": [ {\"bad]\": 0} ]}]", 1, 17),
            ]
            for (body, line, column) in cases {
                try await server.expectRejected("PUT", "/a.json", body: body, error: ErrorText.badKey(line: line, column: column))
                try await server.expectRejected("POST", "/a.json", body: body, error: ErrorText.badKey(line: line, column: column))
            }
            // In a PATCH, a bad key nested in a value is reported the same way.
            try await server.expectRejected("PATCH", "/a.json", body: #"{"b":{"c$":1}}"#, error: ErrorText.badKey(line: 1, column: 7))
            // A PATCH path that is not a valid path is refused too.
            for body in [#"{"a.b":1}"#, #"{"":1}"#, #"{"/":1}"#, #"{"x/$y":1}"#] {
                try await server.expectRejected("PATCH", "/a.json", body: body, errorPrefix: "Invalid data; couldn't parse")
            }
        }
    }

    @Test func badPathCharacters() async throws {
        try await withSeededServer { (server: TestServer) async throws in
            let paths = [
                "/a.b.json", "/a/b.c.json", "/a$b.json", "/a%24b.json", "/a%23b.json", "/a%5Bb.json", "/a%5Db.json",
                "/a%2Eb.json", "/a/%01.json", "/a%00b.json", "/a%1Fb.json", "/a%7Fb.json", "/a%0Ab.json",
                "/a%2Fb.json", "/a/.priority/b.json", "/.value.json", "/a/.sv.json",
            ]
            for path in paths {
                for method in ["PUT", "PATCH", "POST"] {
                    let body = method == "PATCH" ? #"{"q":1}"# : "1"
                    try await server.expectRejected(method, path, body: body, error: ErrorText.invalidPath)
                }
                try await server.expectRejected("DELETE", path, error: ErrorText.invalidPath)
                let get = try await server.request("GET", path)
                #expect(get.status == 400, "GET \(path)")
                #expect(get.errorText == ErrorText.invalidPath, "GET \(path)")
            }
        }
    }

    @Test func pathDeeperThan32Levels() async throws {
        try await withSeededServer { (server: TestServer) async throws in
            let deep = "/" + (1...33).map { "k\($0)" }.joined(separator: "/") + ".json"
            try await server.expectRejected("PUT", deep, body: "1", error: ErrorText.invalidPath)
            let ok = "/" + (1...32).map { "k\($0)" }.joined(separator: "/") + ".json"
            try await server.expectOK("PUT", ok, body: "1")
            #expect(try await server.read(ok) == "1")
        }
    }

    @Test func overlongKey() async throws {
        try await withSeededServer { (server: TestServer) async throws in
            let long = String(repeating: "k", count: 769)
            try await server.expectRejected("PUT", "/\(long).json", body: "1", error: ErrorText.invalidPath)
            try await server.expectRejected("PUT", "/a.json", body: #"{"\#(long)":1}"#, error: ErrorText.badKey(line: 1, column: 2))
            let fits = String(repeating: "k", count: 768)
            try await server.expectOK("PUT", "/\(fits).json", body: "1")
        }
    }

    @Test func patchBodyMustBeAnObject() async throws {
        try await withSeededServer { (server: TestServer) async throws in
            for body in ["1", #""text""#, "true", "null", "[1,2]", "[]", " 3.5 "] {
                try await server.expectRejected("PATCH", "/a.json", body: body, error: ErrorText.notAnObject)
                try await server.expectRejected("POST", "/a.json?x-http-method-override=PATCH", body: body, error: ErrorText.notAnObject)
            }
        }
    }

    @Test func overlappingPatchPaths() async throws {
        try await withSeededServer { (server: TestServer) async throws in
            try await server.expectRejected(
                "PATCH", "/.json", body: #"{"n":6,"a":{"b":2},"a/b":3}"#,
                error: "Invalid data; path /a is an ancestor of /a/b in the same update."
            )
            try await server.expectRejected("PATCH", "/a.json", body: #"{"c/d":"y","c":{"d":"z"}}"#, errorPrefix: "Invalid data; path /c is an ancestor")
            try await server.expectRejected("PATCH", "/a.json", body: #"{"c":1,"c/.priority":3}"#, errorPrefix: "Invalid data; path /c is an ancestor")
            // Siblings with a shared prefix are not overlapping.
            try await server.expectOK("PATCH", "/a.json", body: #"{"c/d":"y","cd":1}"#)
            #expect(try await server.read("/a.json") == #"{"b":1,"c":{"d":"y"},"cd":1}"#)
        }
    }

    @Test func dataDeeperThan32Levels() async throws {
        try await withSeededServer { (server: TestServer) async throws in
            func nested(_ depth: Int) -> String {
                String(repeating: #"{"k":"#, count: depth) + "1" + String(repeating: "}", count: depth)
            }
            try await server.expectRejected("PUT", "/.json", body: nested(33), error: ErrorText.tooDeep)
            try await server.expectRejected("PUT", "/a/b.json", body: nested(31), error: ErrorText.tooDeep)
            try await server.expectRejected("POST", "/a.json", body: nested(31), error: ErrorText.tooDeep)
            try await server.expectRejected("PATCH", "/a.json", body: #"{"x/y":\#(nested(30))}"#, error: ErrorText.tooDeep)
            try await server.expectRejected("PUT", "/a.json", body: "[" + nested(32) + "]", error: ErrorText.tooDeep)
            // Exactly 32 is fine.
            try await server.expectOK("PUT", "/a/b.json", body: nested(30))
            try await server.expectOK("POST", "/a.json", body: nested(30))
        }
    }

    @Test func oversizeWrites() async throws {
        try await withServer(maxWriteBytes: 1000) { (server: TestServer) async throws in
            try await server.expectOK("PUT", "/.json", body: #"{"keep":{"me":true,".priority":1}}"#)
            let big = #"{"x":""# + String(repeating: "a", count: 2000) + #""}"#
            try await server.expectRejected("PUT", "/a.json", body: big, error: ErrorText.tooBig)
            try await server.expectRejected("POST", "/a.json", body: big, error: ErrorText.tooBig)
            try await server.expectRejected("PATCH", "/.json", body: big, error: ErrorText.tooBig)
            try await server.expectRejected("PUT", "/a.json", body: String(repeating: " ", count: 999) + "12", error: ErrorText.tooBig)
            // Much larger than the limit, too.
            let huge = #"""# + String(repeating: "z", count: 200_000) + #"""#
            try await server.expectRejected("PUT", "/a.json", body: huge, error: ErrorText.tooBig)

            // The limit itself is allowed: exactly 1000 bytes.
            let exact = #"""# + String(repeating: "e", count: 998) + #"""#
            #expect(exact.utf8.count == 1000)
            #expect(try await server.expectOK("PUT", "/a.json", body: exact) == exact)
            #expect(try await server.read("/a.json") == exact)
        }
    }

    @Test func oversizeStreamedWriteWithoutContentLength() async throws {
        try await withServer(maxWriteBytes: 1000) { (server: TestServer) async throws in
            try await server.expectOK("PUT", "/.json", body: #"{"keep":1}"#)
            let before = try await server.dump()
            // A body sent as a stream goes out chunked, with no Content-Length to check up front.
            func streamed(_ text: String) async throws -> (status: Int, text: String) {
                var request = URLRequest(url: server.baseURL.appendingPathComponent("a.json"))
                request.httpMethod = "PUT"
                request.httpBodyStream = InputStream(data: Data(text.utf8))
                let (data, response) = try await URLSession.shared.data(for: request)
                let http = try #require(response as? HTTPURLResponse)
                return (http.statusCode, String(decoding: data, as: UTF8.self))
            }
            let big = "\"" + String(repeating: "s", count: 5000) + "\""
            let refused = try await streamed(big)
            #expect(refused.status == 400)
            #expect(refused.text == "{\n  \"error\" : \"\(ErrorText.tooBig)\"\n}\n")
            #expect(try await server.dump() == before)
            let small = try await streamed("[1,2]")
            #expect(small.status == 200)
            #expect(small.text == "[1,2]")
        }
    }

    @Test func otherRefusedValues() async throws {
        try await withSeededServer { (server: TestServer) async throws in
            try await server.expectRejected("PUT", "/a.json", body: #"{".sv":"yesterday"}"#, errorPrefix: "Invalid data; unrecognized server value")
            try await server.expectRejected("PUT", "/a.json", body: #"{"b":{".sv":{"increment":"1"}}}"#, errorPrefix: "Invalid data; unrecognized server value")
            try await server.expectRejected("PUT", "/a.json", body: #"{"b":1,".priority":true}"#, errorPrefix: "Invalid data")
            try await server.expectRejected("PUT", "/a.json", body: #"{"b":1,".value":2}"#, error: ErrorText.unparseable)
            try await server.expectRejected("POST", "/a/.priority.json", body: "1", error: ErrorText.invalidPath)
            try await server.expectRejected("PATCH", "/a/.priority.json", body: #"{"x":1}"#, error: ErrorText.invalidPath)
        }
    }
}
