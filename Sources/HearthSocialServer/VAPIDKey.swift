import Crypto
import Foundation
import JWTKit

/// The application server's key for Web Push (RFC 8292, VAPID): browsers subscribe with its
/// public key (`applicationServerKey`), and each push request carries a short-lived token
/// signed with it (ES256), so a push service accepts pushes for a subscription only from the
/// server it was made for.
public struct VAPIDKey: Sendable {
    public let privateKey: P256.Signing.PrivateKey

    public init(privateKey: P256.Signing.PrivateKey = P256.Signing.PrivateKey()) {
        self.privateKey = privateKey
    }

    /// A key kept as ``rawBase64URL``.
    public init(rawBase64URL: String) throws {
        privateKey = try P256.Signing.PrivateKey(rawRepresentation: Base64URL.decode(rawBase64URL) ?? [])
    }

    /// The private key's 32 bytes, base64url: what is kept.
    public var rawBase64URL: String { Base64URL.encode(Array(privateKey.rawRepresentation)) }

    /// The public key as browsers take it (`applicationServerKey`): the uncompressed point,
    /// base64url.
    public var publicKeyBase64URL: String { Base64URL.encode(Array(privateKey.publicKey.x963Representation)) }

    /// The `Authorization` header of a push to `endpoint`: `vapid t=<token>, k=<public key>`, the
    /// token naming the endpoint's origin (`aud`), expiring at `expires` (at most a day ahead,
    /// RFC 8292 §2), with `subject` as the contact (`mailto:` or `https:`).
    public func authorization(for endpoint: URL, subject: String, expires: Date) async throws -> String {
        let origin = try Self.origin(of: endpoint)
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PrivateKey(backing: privateKey))
        let token = try await keys.sign(
            Claims(aud: AudienceClaim(value: origin), exp: ExpirationClaim(value: expires), sub: SubjectClaim(value: subject)))
        return "vapid t=\(token), k=\(publicKeyBase64URL)"
    }

    /// The origin of `endpoint` as RFC 6454 serialises it, which push services compare `aud`
    /// with: scheme and host in lower case, an IPv6 address in brackets, the port only when it is
    /// not the scheme's default.
    public static func origin(of endpoint: URL) throws -> String {
        guard let scheme = endpoint.scheme?.lowercased(), var host = endpoint.host?.lowercased(), !host.isEmpty else {
            throw Problem.badEndpoint
        }
        if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }
        let defaultPort = ["https": 443, "http": 80][scheme]
        let port = endpoint.port.flatMap { $0 == defaultPort ? nil : ":\($0)" } ?? ""
        return "\(scheme)://\(host)\(port)"
    }

    /// A push endpoint without a scheme and host.
    public enum Problem: Error {
        case badEndpoint
    }

    /// RFC 8292 §2's claims.
    struct Claims: JWTPayload {
        var aud: AudienceClaim
        var exp: ExpirationClaim
        var sub: SubjectClaim

        func verify(using algorithm: some JWTAlgorithm) async throws {
            try exp.verifyNotExpired()
        }
    }
}
