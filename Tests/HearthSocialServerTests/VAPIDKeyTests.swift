import Crypto
import Foundation
import HearthSocialServer
import JWTKit
import Testing

/// RFC 8292: the token and key a push request carries, as a push service checks them.
@Suite("VAPID: the server's identity on each push (RFC 8292)")
struct VAPIDKeyTests {
    struct Claims: JWTPayload {
        var aud: AudienceClaim
        var exp: ExpirationClaim
        var sub: SubjectClaim
        func verify(using algorithm: some JWTAlgorithm) async throws { try exp.verifyNotExpired() }
    }

    static func decode(_ text: String) -> [UInt8] {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
        return Array(Data(base64Encoded: standard)!)
    }

    @Test("The header's token is signed by the key it names, for the endpoint's origin, with the contact and expiry")
    func headerVerifies() async throws {
        let key = VAPIDKey()
        let expires = Date().addingTimeInterval(12 * 3600)
        let header = try await key.authorization(
            for: URL(string: "https://push.example.net:8443/wpush/v2/abc?x=1")!, subject: "mailto:ops@example.com", expires: expires)
        let parts = header.dropFirst("vapid ".count).components(separatedBy: ", ")
        #expect(header.hasPrefix("vapid t="))
        #expect(parts.count == 2)
        let token = String(parts[0].dropFirst("t=".count))
        let publicKey = Self.decode(String(parts[1].dropFirst("k=".count)))
        #expect(publicKey.count == 65 && publicKey.first == 0x04)
        #expect(parts[1].dropFirst(2) == key.publicKeyBase64URL)

        // A push service's check: the signature with the key sent, then the claims.
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PublicKey(backing: P256.Signing.PublicKey(x963Representation: publicKey)))
        let claims = try await keys.verify(token, as: Claims.self)
        #expect(claims.aud.value == ["https://push.example.net:8443"])
        #expect(claims.sub.value == "mailto:ops@example.com")
        #expect(abs(claims.exp.value.timeIntervalSince(expires)) < 1)
        // Another server's key does not verify it.
        let other = JWTKeyCollection()
        await other.add(ecdsa: try ES256PublicKey(backing: P256.Signing.PrivateKey().publicKey))
        await #expect(throws: (any Error).self) { try await other.verify(token, as: Claims.self) }
    }

    @Test("The audience is the endpoint's origin as RFC 6454 writes it", arguments: [
        ("https://push.example.net:8443/wpush/v2/abc?x=1", "https://push.example.net:8443"),
        ("https://Push.Example.NET/send/1", "https://push.example.net"),
        ("https://push.example.net:443/send/1", "https://push.example.net"),
        ("http://127.0.0.1:80/push/1", "http://127.0.0.1"),
        ("https://[2001:db8::1]:8443/push/1", "https://[2001:db8::1]:8443"),
        ("http://[::1]:9000/push/1", "http://[::1]:9000"),
    ])
    func audience(endpoint: String, origin: String) throws {
        #expect(try VAPIDKey.origin(of: URL(string: endpoint)!) == origin)
    }

    @Test("A key kept as its raw form is the same key")
    func roundTrip() throws {
        let key = VAPIDKey()
        let kept = try VAPIDKey(rawBase64URL: key.rawBase64URL)
        #expect(kept.publicKeyBase64URL == key.publicKeyBase64URL)
        #expect(throws: (any Error).self) { try VAPIDKey(rawBase64URL: "not a key") }
    }
}
