import Foundation
import HearthTesting
import Testing

/// How responses look: `print=pretty`, `print=silent`, the content type, `format=export`,
/// `shallow=true` and arrays (as Firebase's REST API); and how requests may be spelled: method
/// overrides and percent-encoded paths (docs/compatibility.md lists Hearth's choices).
@Suite("REST formatting")
struct RESTFormatTests {
    // MARK: - print=pretty

    @Test func prettyOnEveryMethod() async throws {
        try await withServer { (server: TestServer) async throws in
            let put = try await server.expectOK("PUT", "/.json?print=pretty", body: #"{"a":1}"#)
            #expect(put == "{\n  \"a\" : 1\n}")
            #expect(try await server.read("/.json?print=pretty") == "{\n  \"a\" : 1\n}")

            let nested = try await server.expectOK("PUT", "/n.json?print=pretty", body: #"{"x":{"y":"z"},"w":true}"#)
            #expect(nested == "{\n  \"w\" : true,\n  \"x\" : {\n    \"y\" : \"z\"\n  }\n}")
            #expect(try await server.read("/n.json?print=pretty") == nested)
            #expect(try await server.read("/n/w.json?print=pretty") == "true")

            let post = try await server.expectOK("POST", "/p.json?print=pretty", body: "1")
            let name = try #require(post.split(separator: "\"").dropFirst(3).first.map(String.init))
            #expect(post == "{\n  \"name\" : \"\(name)\"\n}")
            #expect(name.count == 20)

            let patch = try await server.expectOK("PATCH", "/.json?print=pretty", body: #"{"a":2,"n/x/y":"q"}"#)
            #expect(patch == "{\n  \"a\" : 2,\n  \"n/x/y\" : \"q\"\n}")
            let nestedPatch = try await server.expectOK("PATCH", "/.json?print=pretty", body: #"{"m":{"k":{"l":1}}}"#)
            #expect(nestedPatch == "{\n  \"m\" : {\n    \"k\" : {\n      \"l\" : 1\n    }\n  }\n}")

            #expect(try await server.expectOK("DELETE", "/a.json?print=pretty") == "null")
            #expect(try await server.read("/.json") == #"{"m":{"k":{"l":1}},"n":{"w":true,"x":{"y":"q"}},"p":{"\#(name)":1}}"#)
        }
    }

    // MARK: - print=silent

    @Test func silentOnEveryMethod() async throws {
        try await withServer { (server: TestServer) async throws in
            func expectSilent(_ method: String, _ path: String, body: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws {
                let result = try await server.request(method, path, body: body)
                #expect(result.status == 204, "\(method) \(path)", sourceLocation: sourceLocation)
                #expect(result.body.isEmpty, "\(method) \(path): \(result.text)", sourceLocation: sourceLocation)
            }
            try await expectSilent("PUT", "/a.json?print=silent", body: #"{"b":1}"#)
            #expect(try await server.read("/a.json") == #"{"b":1}"#, "a silent write still writes")
            try await expectSilent("GET", "/a.json?print=silent")
            try await expectSilent("POST", "/list.json?print=silent", body: #""item""#)
            let list = try #require(try await server.request("GET", "/list.json").json as? [String: String])
            #expect(Array(list.values) == ["item"])
            try await expectSilent("PATCH", "/a.json?print=silent", body: #"{"c":2}"#)
            #expect(try await server.read("/a.json") == #"{"b":1,"c":2}"#)
            try await expectSilent("DELETE", "/list.json?print=silent")
            #expect(try await server.read("/list.json") == "null")
            try await expectSilent("PUT", "/a/.priority.json?print=silent", body: "3")
            #expect(try await server.read("/a/.priority.json") == "3")

            // A refused write is still reported, silent or not.
            let refused = try await server.request("PUT", "/a.json?print=silent", body: "{")
            #expect(refused.status == 400)
            #expect(refused.errorText == ErrorText.unparseable)
        }
    }

    // MARK: - Content type

    @Test func jsonContentTypeOnEveryResponse() async throws {
        try await withServer { (server: TestServer) async throws in
            let responses = [
                try await server.request("PUT", "/a.json", body: "1"),
                try await server.request("GET", "/a.json"),
                try await server.request("GET", "/missing.json"),
                try await server.request("POST", "/b.json", body: "1"),
                try await server.request("PATCH", "/.json", body: #"{"c":1}"#),
                try await server.request("DELETE", "/c.json"),
                try await server.request("GET", "/.json?print=pretty"),
                try await server.request("GET", "/.json?format=export"),
                try await server.request("PUT", "/a.json", body: "nope"),
                try await server.request("GET", "/a$b.json"),
            ]
            for response in responses {
                #expect(response.header("Content-Type") == jsonContentType, "\(response.status) \(response.text)")
            }
        }
    }

    // MARK: - format=export

    @Test func exportIncludesPrioritiesAndNeverMakesArrays() async throws {
        try await withServer { (server: TestServer) async throws in
            let body = #"{"a":{".priority":5,"b":1},"arr":[10,20],"c":{".value":"x",".priority":"p"},"d":{"e":{".value":false,".priority":0.25}}}"#
            let echo = try await server.expectOK("PUT", "/.json?format=export", body: body)
            let exported = #"{"a":{".priority":5,"b":1},"arr":{"0":10,"1":20},"c":{".value":"x",".priority":"p"},"d":{"e":{".value":false,".priority":0.25}}}"#
            #expect(echo == exported)
            #expect(try await server.read("/.json?format=export") == exported)
            #expect(try await server.read("/.json") == #"{"a":{"b":1},"arr":[10,20],"c":"x","d":{"e":false}}"#)
            #expect(try await server.read("/c.json?format=export") == #"{".value":"x",".priority":"p"}"#)
            #expect(try await server.read("/c.json") == #""x""#)
            #expect(try await server.read("/arr.json?format=export") == #"{"0":10,"1":20}"#)
            #expect(try await server.read("/nothing.json?format=export") == "null")
            #expect(
                try await server.read("/a.json?format=export&print=pretty")
                    == "{\n  \".priority\" : 5,\n  \"b\" : 1\n}"
            )
            // What export prints can be written back unchanged.
            try await server.expectOK("PUT", "/copy.json", body: exported)
            #expect(try await server.read("/copy.json?format=export") == exported)
        }
    }

    // MARK: - shallow=true

    @Test func shallowCutsChildrenToTrue() async throws {
        try await withServer { (server: TestServer) async throws in
            try await server.expectOK("PUT", "/.json", body: #"{"dinosaurs":{"t":{"height":4}},"scores":{"x":{"y":1}},"leaf":"v"}"#)
            let shallow = try await server.read("/.json?shallow=true")
            #expect(shallow == #"{"dinosaurs":true,"leaf":true,"scores":true}"# || shallow == #"{"dinosaurs":true,"leaf":"v","scores":true}"#)
            #expect(try await server.read("/dinosaurs.json?shallow=true") == #"{"t":true}"#)
            #expect(try await server.read("/leaf.json?shallow=true") == #""v""#, "a primitive is returned as it is")
            #expect(try await server.read("/missing.json?shallow=true") == "null")
            #expect(try await server.read("/scores.json?shallow=true&print=pretty") == "{\n  \"x\" : true\n}")
        }
    }

    // MARK: - Arrays (objects with integer keys, rendered as Firebase renders them)

    @Test(arguments: [
        (#"[1,"two",{"x":3}]"#, #"[1,"two",{"x":3}]"#),
        (#"[1,null,3]"#, #"[1,null,3]"#),
        (#"{"0":"a","2":"c"}"#, #"["a",null,"c"]"#),
        (#"{"0":"a","3":"d"}"#, #"["a",null,null,"d"]"#),
        (#"{"0":"a","4":"e"}"#, #"{"0":"a","4":"e"}"#),
        (#"{"1":"b"}"#, #"[null,"b"]"#),
        (#"{"2":"c"}"#, #"{"2":"c"}"#),
        (#"{"0":"a","01":"b"}"#, #"{"0":"a","01":"b"}"#),
        (#"{"0":"a","x":"b"}"#, #"{"0":"a","x":"b"}"#),
        (#"{"0":"a","-1":"b"}"#, #"{"-1":"b","0":"a"}"#),
        (#"{"a":[[1,2],[3]]}"#, #"{"a":[[1,2],[3]]}"#),
        (#"[]"#, "null"),
        (#"[null]"#, "null"),
    ])
    func arraysRenderAsFirebaseDoes(body: String, expected: String) async throws {
        try await withServer { (server: TestServer) async throws in
            try await server.expectOK("PUT", "/v.json", body: body)
            #expect(try await server.read("/v.json") == expected)
        }
    }

    @Test func arrayElementsAreChildren() async throws {
        try await withServer { (server: TestServer) async throws in
            try await server.expectOK("PUT", "/arr.json", body: "[1,2,3]")
            #expect(try await server.read("/arr/1.json") == "2")
            try await server.expectOK("DELETE", "/arr/1.json")
            #expect(try await server.read("/arr.json") == "[1,null,3]")
            try await server.expectOK("DELETE", "/arr/0.json")
            #expect(try await server.read("/arr.json") == #"{"2":3}"#)
        }
    }

    // MARK: - Method override

    @Test func methodOverrideHeaderOnPost() async throws {
        try await withSeededServer { (server: TestServer) async throws in
            let put = try await server.expectOK("POST", "/a.json", body: #"{"z":1}"#, headers: ["X-HTTP-Method-Override": "PUT"])
            #expect(put == #"{"z":1}"#)
            #expect(try await server.read("/a.json") == #"{"z":1}"#, "replaced, not pushed")

            let patch = try await server.expectOK("POST", "/a.json", body: #"{"y/w":2}"#, headers: ["X-HTTP-Method-Override": "patch"])
            #expect(patch == #"{"y/w":2}"#)
            #expect(try await server.read("/a.json") == #"{"y":{"w":2},"z":1}"#)

            #expect(try await server.expectOK("POST", "/a/z.json", headers: ["X-HTTP-Method-Override": "DELETE"]) == "null")
            #expect(try await server.read("/a.json") == #"{"y":{"w":2}}"#)

            #expect(try await server.expectOK("POST", "/a.json", headers: ["x-http-method-override": "GET"]) == #"{"y":{"w":2}}"#)
        }
    }

    @Test func methodOverrideQueryParameterOnPost() async throws {
        try await withSeededServer { (server: TestServer) async throws in
            #expect(try await server.expectOK("POST", "/a.json?x-http-method-override=PATCH", body: #"{"b":2}"#) == #"{"b":2}"#)
            #expect(try await server.read("/a.json") == #"{"b":2,"c":{"d":"x"}}"#)
            #expect(try await server.expectOK("POST", "/a.json?x-http-method-override=PUT", body: "3") == "3")
            #expect(try await server.read("/a.json") == "3")
            #expect(try await server.expectOK("POST", "/a.json?x-http-method-override=DELETE") == "null")
            #expect(try await server.read("/a.json") == "null")
        }
    }

    @Test func overrideOnlyAppliesToPost() async throws {
        try await withSeededServer { (server: TestServer) async throws in
            #expect(try await server.expectOK("GET", "/n.json", headers: ["X-HTTP-Method-Override": "DELETE"]) == "5")
            #expect(try await server.read("/n.json") == "5")
            #expect(try await server.expectOK("PUT", "/n.json?x-http-method-override=DELETE", body: "6") == "6")
            #expect(try await server.read("/n.json") == "6")
            try await server.expectRejected("POST", "/n.json", body: "7", headers: ["X-HTTP-Method-Override": "TRACE"], error: "Invalid method: TRACE.")
        }
    }

    // MARK: - Percent-encoded paths

    @Test func percentEncodedPathsAreDecoded() async throws {
        try await withServer { (server: TestServer) async throws in
            try await server.expectOK("PUT", "/users/John%20Smith.json", body: "1")
            try await server.expectOK("PUT", "/users/caf%C3%A9.json", body: "2")
            try await server.expectOK("PUT", "/users/%E6%97%A5%E6%9C%AC/%F0%9F%98%80.json", body: "3")
            try await server.expectOK("PUT", "/users/100%25.json", body: "4")
            try await server.expectOK("PUT", "/users/a%2Bb%26c%3Dd.json", body: "5")
            #expect(try await server.read("/users.json") == #"{"100%":4,"John Smith":1,"a+b&c=d":5,"café":2,"日本":{"😀":3}}"#)
            #expect(try await server.read("/users/John%20Smith.json") == "1")
            #expect(try await server.read("/users/caf%C3%A9.json") == "2")
            #expect(try await server.read("/users/%E6%97%A5%E6%9C%AC/%F0%9F%98%80.json") == "3")
            // The same key encoded differently is the same key.
            #expect(try await server.read("/%75sers/John%20Smith.json") == "1")
            #expect(try await server.expectOK("DELETE", "/users/John%20Smith.json") == "null")
            #expect(try await server.read("/users/John%20Smith.json") == "null")
            // Unicode keys in a body and in a PATCH path.
            try await server.expectOK("PATCH", "/users.json", body: #"{"日本/月":"moon"}"#)
            #expect(try await server.read("/users/%E6%97%A5%E6%9C%AC/%E6%9C%88.json") == #""moon""#)
        }
    }
}
