import Foundation
import HearthServer
import HearthTesting
import Testing

/// The content type every JSON response carries.
let jsonContentType = "application/json; charset=utf-8"

/// Firebase's REST error texts (Hearth's own where Firebase has none: docs/compatibility.md).
enum ErrorText {
    static let unparseable = "Invalid data; couldn't parse JSON object, array, or value."
    static let notAnObject = "Invalid data; couldn't parse JSON object. Are you sending a JSON object with valid key names?"
    static let invalidPath = "Invalid path: Invalid token in path"
    static let tooBig = "Data to write exceeds the maximum size that can be modified with a single request."
    static let tooDeep = "Invalid data; the data exceeds the maximum depth of 32 levels."

    static func badKey(line: Int, column: Int) -> String {
        "Invalid data; couldn't parse key beginning at \(line):\(column). Key value can't be empty or contain $ # [ ] / or ."
    }
}

extension HTTPResult {
    /// The body parsed as JSON (fragments allowed).
    var json: Any? { try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) }

    /// The `error` text of an error body.
    var errorText: String? { (json as? [String: Any])?["error"] as? String }
}

extension TestServer {
    /// Headers that make a request an admin's (rules do not apply).
    static let adminHeaders = ["Authorization": "Bearer \(TestServer.adminToken)"]

    /// Headers that make a request the user `uid`'s (an emulator test token).
    static func userHeaders(_ uid: String, name: String? = nil, claims: [String: any Sendable] = [:]) -> [String: String] {
        ["Authorization": "Bearer " + TestToken.unsigned(uid: uid, name: name, claims: claims)]
    }

    /// The whole tree with priorities, as text: what "unchanged" is measured against.
    func dump() async throws -> String {
        let result = try await request("GET", "/.json?format=export", headers: TestServer.adminHeaders)
        #expect(result.status == 200)
        return result.text
    }

    /// GETs `path` and returns the body text, expecting 200.
    func read(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let result = try await request("GET", path)
        #expect(result.status == 200, "GET \(path)", sourceLocation: sourceLocation)
        return result.text
    }

    /// Sends a request that must succeed with 200 and returns its body text.
    @discardableResult
    func expectOK(
        _ method: String, _ path: String, body: String? = nil, headers: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> String {
        let result = try await request(method, path, body: body, headers: headers)
        #expect(result.status == 200, "\(method) \(path): \(result.text)", sourceLocation: sourceLocation)
        #expect(result.header("Content-Type") == jsonContentType, sourceLocation: sourceLocation)
        return result.text
    }

    /// Sends a request that must be refused with `status` and the error text `error` (or one
    /// starting with `errorPrefix`), then checks that the stored data did not change at all.
    func expectRejected(
        _ method: String, _ path: String, body: String? = nil, headers: [String: String] = [:],
        status: Int = 400, error: String? = nil, errorPrefix: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let before = try await dump()
        let result = try await request(method, path, body: body, headers: headers)
        let label = "\(method) \(path) \(body.map { String($0.prefix(80)) } ?? "")"
        #expect(result.status == status, "\(label): \(result.text)", sourceLocation: sourceLocation)
        #expect(result.header("Content-Type") == jsonContentType, "\(label)", sourceLocation: sourceLocation)
        if let error {
            #expect(result.errorText == error, "\(label)", sourceLocation: sourceLocation)
        }
        if let errorPrefix {
            #expect(result.errorText?.hasPrefix(errorPrefix) == true, "\(label): \(result.text)", sourceLocation: sourceLocation)
        }
        // Errors are pretty-printed as Firebase does: {\n  "error" : "..."\n}\n
        #expect(result.text.hasPrefix("{\n  \"error\" : \""), "\(label)", sourceLocation: sourceLocation)
        let after = try await dump()
        #expect(after == before, "\(label) changed the stored data", sourceLocation: sourceLocation)
    }
}

/// Runs `body` against a fresh test server. (Not generic, so that closures made only of
/// `#expect`s are still inferred as throwing.)
func withServer(
    maxWriteBytes: Int = 256 * 1024 * 1024,
    configure: (inout ServerConfiguration) -> Void = { _ in },
    _ body: (TestServer) async throws -> Void
) async throws {
    try await TestServer.with(maxWriteBytes: maxWriteBytes, configure: configure) { (server: TestServer) async throws in
        try await body(server)
    }
}

/// A test server holding `json` at the root.
func withSeededServer(
    _ json: String = #"{"a":{"b":1,"c":{".priority":2,"d":"x"}},"list":[1,2],"n":5}"#,
    maxWriteBytes: Int = 256 * 1024 * 1024,
    _ body: (TestServer) async throws -> Void
) async throws {
    try await withServer(maxWriteBytes: maxWriteBytes) { (server: TestServer) async throws in
        let put = try await server.request("PUT", "/.json", body: json)
        #expect(put.status == 200, "seeding: \(put.text)")
        try await body(server)
    }
}
