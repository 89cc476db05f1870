import Foundation
import HearthServer
import HearthTesting
import Testing

/// A real server running one of the reference apps' rules files with data seeded by an admin,
/// and the people a rule is about: each check sends a real request as one of them.
struct RulesScene {
    let server: TestServer

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Fixtures/rules").standardized
    static let denied = "Permission denied"

    // Signed-in users (emulator ID tokens with a `name` claim, as the apps' sign-in gives).
    static let alice = TestServer.userHeaders("alice", name: "Alice")
    static let bob = TestServer.userHeaders("bob", name: "Bob")
    static let carol = TestServer.userHeaders("carol", name: "Carol")
    static let dave = TestServer.userHeaders("dave", name: "Dave")
    /// Signed in without a name (an anonymous account).
    static let nameless = TestServer.userHeaders("anon")
    /// A user with FriendlyPix's admin claim.
    static let adminClaim = TestServer.userHeaders("root", claims: ["admin": true])
    /// The server's admin credential (a cloud function or the Admin SDK): rules do not apply.
    static let adminCredential = TestServer.adminHeaders
    static let signedOut: [String: String] = [:]

    /// Runs `body` against a fresh server with the fixture `rulesFile` deployed and `seed`
    /// written at the root by an admin.
    static func with(
        _ rulesFile: String, seed: String, _ body: (RulesScene) async throws -> Void
    ) async throws {
        let rules = try String(contentsOf: fixtures.appendingPathComponent(rulesFile), encoding: .utf8)
        try await TestServer.with(configure: { $0.defaultRules = nil }) { (server: TestServer) async throws in
            let deployed = try await server.request("PUT", "/.settings/rules.json", body: rules, headers: adminCredential)
            try #require(deployed.status == 200, "\(deployed.text)")
            let seeded = try await server.request("PUT", "/.json", body: seed, headers: adminCredential)
            try #require(seeded.status == 200, "\(seeded.text)")
            try await body(RulesScene(server: server))
        }
    }

    /// A write the rules allow: answered 200.
    func allowed(
        _ method: String, _ path: String, _ body: String? = nil, as user: [String: String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        try await server.expectOK(method, path + ".json", body: body, headers: user, sourceLocation: sourceLocation)
    }

    /// A write the rules deny: 401 `Permission denied`, and nothing stored changes.
    func denied(
        _ method: String, _ path: String, _ body: String? = nil, as user: [String: String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        try await server.expectRejected(
            method, path + ".json", body: body, headers: user, status: 401, error: Self.denied,
            sourceLocation: sourceLocation)
    }

    /// A read (or query, given in `query`) the rules allow; returns the body's JSON.
    @discardableResult
    func readable(
        _ path: String, query: String = "", as user: [String: String], sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Any? {
        let result = try await server.request("GET", path + ".json" + query, headers: user)
        #expect(result.status == 200, "GET \(path)\(query): \(result.text)", sourceLocation: sourceLocation)
        return result.json
    }

    /// A read the rules deny: 401 `Permission denied`.
    func unreadable(
        _ path: String, query: String = "", as user: [String: String], sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let result = try await server.request("GET", path + ".json" + query, headers: user)
        #expect(result.status == 401, "GET \(path)\(query): \(result.text)", sourceLocation: sourceLocation)
        #expect(result.errorText == Self.denied, sourceLocation: sourceLocation)
    }

    /// A query refused for want of an index: 400 with Firebase's text.
    func unindexed(
        _ path: String, orderBy child: String, as user: [String: String], sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let result = try await server.request("GET", "\(path).json?orderBy=%22\(child)%22&limitToFirst=1", headers: user)
        #expect(result.status == 400, "\(result.text)", sourceLocation: sourceLocation)
        #expect(result.errorText?.hasPrefix("Index not defined, add \".indexOn\": \"\(child)\"") == true,
                "\(result.text)", sourceLocation: sourceLocation)
    }

    /// The stored value at `path` as JSON text (read by an admin).
    func stored(_ path: String) async throws -> String {
        try await server.request("GET", path + ".json", headers: Self.adminCredential).text
    }
}
