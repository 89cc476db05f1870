import Foundation
import HearthServer
import HearthTesting
import HTTPTypes
import Hummingbird
import NIOCore
import Testing

@testable import HearthEngine
@testable import HearthServer

/// Whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed, and sign-in limits counted by
/// the browser's address behind a proxy.
@Suite("Proxy trust")
struct ProxyTrustTests {
    static func request(_ headers: [(String, String)]) -> Request {
        var fields = HTTPFields()
        for (name, value) in headers { fields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        let head = HTTPRequest(method: .get, scheme: "http", authority: "app.example.com", path: "/", headerFields: fields)
        return Request(head: head, body: RequestBody(buffer: ByteBuffer()))
    }

    static let loopback = try! SocketAddress(ipAddress: "127.0.0.1", port: 50000)
    static let loopback6 = try! SocketAddress(ipAddress: "::1", port: 50000)
    static let remote = try! SocketAddress(ipAddress: "198.51.100.7", port: 50000)
    static let proxyElsewhere = try! SocketAddress(ipAddress: "10.0.0.2", port: 50000)

    @Test func aProxyOnThisMachineIsBelieved() {
        let trust = ProxyTrust()
        let forwarded = Self.request([("X-Forwarded-For", "203.0.113.9"), ("X-Forwarded-Proto", "https")])
        #expect(trust.clientAddress(of: forwarded, peer: Self.loopback) == "203.0.113.9")
        #expect(trust.clientAddress(of: forwarded, peer: Self.loopback6) == "203.0.113.9")
        #expect(trust.scheme(of: forwarded, peer: Self.loopback) == "https")
        // Several hops: the nearest one that is not a trusted proxy.
        let chain = Self.request([("X-Forwarded-For", "1.2.3.4, 203.0.113.9, 127.0.0.1")])
        #expect(trust.clientAddress(of: chain, peer: Self.loopback) == "203.0.113.9")
        // No header: the peer itself.
        #expect(trust.clientAddress(of: Self.request([]), peer: Self.loopback) == "127.0.0.1")
        #expect(trust.scheme(of: Self.request([]), peer: Self.loopback) == "http")
    }

    @Test func anyoneElseCannotPickTheirAddressOrClaimTLS() {
        let trust = ProxyTrust()
        let forged = Self.request([("X-Forwarded-For", "203.0.113.9"), ("X-Forwarded-Proto", "https")])
        #expect(trust.clientAddress(of: forged, peer: Self.remote) == "198.51.100.7")
        #expect(trust.scheme(of: forged, peer: Self.remote) == "http")
        #expect(trust.clientAddress(of: forged, peer: nil) == "unknown")
    }

    @Test func aNamedProxyElsewhereIsBelieved() throws {
        let address = try #require(ServerConfiguration.normalizedIPAddress("10.0.0.2"))
        let trust = ProxyTrust(addresses: [address])
        let forwarded = Self.request([("X-Forwarded-For", "203.0.113.9, 10.0.0.2"), ("X-Forwarded-Proto", "HTTPS")])
        #expect(trust.clientAddress(of: forwarded, peer: Self.proxyElsewhere) == "203.0.113.9")
        #expect(trust.scheme(of: forwarded, peer: Self.proxyElsewhere) == "https")
        #expect(ProxyTrust().scheme(of: forwarded, peer: Self.proxyElsewhere) == "http")
        #expect(ServerConfiguration.normalizedIPAddress("proxy.example.com") == nil)
        #expect(ServerConfiguration.normalizedIPAddress("::1") != nil)
    }

    @Test func signInLimitsCountTheBrowserBehindTheProxyNotTheProxy() async throws {
        try await withServer(configure: { $0.signInFailuresPerAddress = 3 }) { server in
            _ = try await AuthEndpointTests.signUp(server, "ann@example.com")
            func signIn(_ email: String, _ password: String, from address: String) async throws -> HTTPResult {
                try await server.request(
                    "POST", AuthEndpointTests.identity + "accounts:signInWithPassword",
                    body: #"{"email":"\#(email)","password":"\#(password)","returnSecureToken":true}"#,
                    headers: ["Content-Type": "application/json", "X-Forwarded-For": address])
            }
            // Someone behind the proxy guesses at other people's accounts until refused.
            for attempt in 0..<3 {
                let guess = try await signIn("nobody\(attempt)@example.com", "wrong-password", from: "203.0.113.66")
                #expect(guess.status == 400)
            }
            let refused = try await signIn("ann@example.com", AuthEndpointTests.password, from: "203.0.113.66")
            #expect(refused.text.contains("TOO_MANY_ATTEMPTS_TRY_LATER"), "\(refused.text)")
            // Ann, behind the same proxy from her own address, still signs in.
            let ann = try await signIn("ann@example.com", AuthEndpointTests.password, from: "198.51.100.20")
            #expect(ann.status == 200, "\(ann.text)")
        }
    }
}
