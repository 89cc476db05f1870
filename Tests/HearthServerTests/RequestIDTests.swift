import Foundation
import HearthServer
import HearthTesting
import Testing

/// Request IDs over a real socket: whose `X-Request-Id` is believed, and where the ID shows.
@Suite("Request IDs")
struct RequestIDTests {
    static let admin = ["Authorization": "Bearer \(TestServer.adminToken)"]

    @Test func aTrustedProxysIDNamesTheRequestInTheAnswerAndTheRequestLog() async throws {
        // A loopback peer is a trusted proxy by default (nginx on the same machine).
        try await TestServer.with { server in
            let answer = try await server.request("GET", "/open.json", headers: ["X-Request-Id": "nginx-4f2a9c"])
            #expect(answer.header("X-Request-Id") == "nginx-4f2a9c")
            let log = try await server.request("GET", "/.hearth/requests?path=/open.json", headers: Self.admin)
            #expect(String(decoding: log.body, as: UTF8.self).contains(#""requestID":"nginx-4f2a9c""#), "\(log.text)")

            // Not a short token: replaced by the server's own number.
            let odd = try await server.request("GET", "/open.json", headers: ["X-Request-Id": "two words/and a slash"])
            let own = try #require(odd.header("X-Request-Id"))
            #expect(own != "two words/and a slash" && RequestIDMiddlewareProbe.isValid(own))
        }
    }

    @Test func anUntrustedPeersIDIsNotBelieved() async throws {
        try await TestServer.with(configure: { $0.trustLoopbackProxies = false }) { server in
            let answer = try await server.request("GET", "/open.json", headers: ["X-Request-Id": "forged-1"])
            let id = try #require(answer.header("X-Request-Id"))
            #expect(id != "forged-1")
            let other = try await server.request("GET", "/open.json")
            #expect(other.header("X-Request-Id") != id)
        }
    }
}

/// The test's own copy of the rule (letters, digits, `-._:`), to check the server's IDs by.
enum RequestIDMiddlewareProbe {
    static func isValid(_ id: String) -> Bool {
        !id.isEmpty && id.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-._:".unicodeScalars.contains($0)) }
    }
}
