import Crypto
import CryptoExtras
import Foundation
import HearthCore
import JWTKit
import SwiftASN1
import X509

/// Signs and checks Firebase-shaped ID tokens (RS256 JWTs) with the server's own RSA key, and
/// checks custom tokens.
///
/// The key is generated on first start and kept as PEM in the data folder, readable by its
/// owner only; its public half is served as a JWKS so anyone can verify Hearth's tokens.
public final class TokenIssuer: Sendable {
    /// The project ID: the `aud` of ID tokens and the end of their `iss`.
    public let projectID: String
    /// The key ID in every token's header and in the JWKS.
    public let keyID: String
    /// How long an ID token lives, in seconds (Firebase: one hour).
    public let idTokenLifetime: Int64
    /// The audience of custom tokens, as Firebase's Admin SDKs make them.
    public static let customTokenAudience =
        "https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit"

    private let keys: JWTKeyCollection
    private let publicKey: JWTKit.Insecure.RSA.PublicKey
    /// The public key in a self-signed X.509 certificate, PEM (nil if it could not be made).
    private let certificatePEM: String?

    /// - Parameter privateKey: the signing key (see ``loadOrCreateKey(at:)``).
    public init(privateKey: JWTKit.Insecure.RSA.PrivateKey, projectID: String, idTokenLifetime: Int64 = 3600) async {
        self.projectID = projectID
        self.idTokenLifetime = idTokenLifetime
        publicKey = privateKey.publicKey
        let digest = SHA256.hash(data: publicKey.derRepresentation)
        keyID = digest.prefix(20).map { String(format: "%02x", $0) }.joined()
        keys = JWTKeyCollection()
        await keys.add(rsa: privateKey, digestAlgorithm: .sha256, kid: JWKIdentifier(string: keyID))
        certificatePEM = Self.selfSignedCertificate(privateKey)
    }

    /// The issuer of ID tokens: `https://securetoken.google.com/<project>`.
    public var issuer: String { "https://securetoken.google.com/\(projectID)" }

    /// Reads the PEM private key at `url`, or makes a 2048-bit key and writes it there (mode 0600).
    public static func loadOrCreateKey(at url: URL) throws -> JWTKit.Insecure.RSA.PrivateKey {
        if FileManager.default.fileExists(atPath: url.path) {
            return try key(pem: try String(contentsOf: url, encoding: .utf8))
        }
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let pem = try newKeyPEM()
        // Written whole under a name of its own, then linked into place: a link never replaces a
        // file, so of two processes starting at once, one key wins and both use it.
        let temporary = url.appendingPathExtension("\(UUID().uuidString).tmp")
        defer { try? FileManager.default.removeItem(at: temporary) }
        guard FileManager.default.createFile(
            atPath: temporary.path, contents: Data(pem.utf8), attributes: [.posixPermissions: 0o600])
        else { throw AuthError("INTERNAL_ERROR", detail: "cannot write the signing key") }
        if link(temporary.path, url.path) != 0 {
            guard errno == EEXIST else { throw AuthError("INTERNAL_ERROR", detail: "cannot keep the signing key: errno \(errno)") }
            return try key(pem: try String(contentsOf: url, encoding: .utf8))
        }
        return try key(pem: pem)
    }

    /// A new 2048-bit RSA signing key as PEM text (the form ``loadOrCreateKey(at:)`` keeps, and
    /// a cluster shares through its database).
    public static func newKeyPEM() throws -> String {
        try JWTKit.Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048)).pemRepresentation
    }

    /// The signing key in PEM text.
    public static func key(pem: String) throws -> JWTKit.Insecure.RSA.PrivateKey {
        try JWTKit.Insecure.RSA.PrivateKey(pem: pem)
    }

    // MARK: - ID tokens

    /// A signed ID token for `user` with Firebase's claims and the user's custom claims.
    /// - Parameters:
    ///   - signInProvider: `password`, `anonymous` or `custom`.
    ///   - authTime: when the user signed in (seconds).
    ///   - now: the time of issue (seconds).
    ///   - sessionClaims: developer claims of this session (from a custom token); the
    ///     account's own custom claims win on a clash.
    ///   - session: names the session the token belongs to (its `jti`), so two sessions'
    ///     tokens differ even when issued in the same second for the same account. Firebase's
    ///     SDKs only take a new refresh token when the ID token beside it is new: a password
    ///     change ends the old session, and an identical token would leave the SDK holding it.
    public func idToken(
        for user: UserRecord, signInProvider: String, authTime: Int64, now: Int64, sessionClaims: Node = .null,
        session: String? = nil
    ) async throws -> String {
        var claims: [(ChildKey, Node)] = []
        // Custom claims first, so the registered ones below win on a clash.
        if let session = sessionClaims.children {
            for (key, value) in session where user.customClaims.child(key).isNull && !Self.reservedClaims.contains(key.string) {
                claims.append((key, value))
            }
        }
        if let custom = user.customClaims.children {
            for (key, value) in custom where !Self.reservedClaims.contains(key.string) { claims.append((key, value)) }
        }
        var identities: [(ChildKey, Node)] = []
        if let email = user.email {
            identities.append((ChildKey("email"), .object([(ChildKey("0"), .string(email))])))
            claims.append((ChildKey("email"), .string(email)))
            claims.append((ChildKey("email_verified"), .bool(user.emailVerified)))
        }
        if let phone = user.phoneNumber {
            identities.append((ChildKey("phone"), .object([(ChildKey("0"), .string(phone))])))
            claims.append((ChildKey("phone_number"), .string(phone)))
        }
        // Each linked provider's user IDs, as Firebase lists them (`"github.com": ["123"]`).
        var byProvider: [String: [String]] = [:]
        for identity in user.identities { byProvider[identity.providerID, default: []].append(identity.rawID) }
        for provider in byProvider.keys.sorted() {
            let ids = byProvider[provider] ?? []
            identities.append((ChildKey(provider), .object(ids.enumerated().map { (ChildKey(String($0.offset)), .string($0.element)) })))
        }
        if let name = user.displayName { claims.append((ChildKey("name"), .string(name))) }
        if let picture = user.photoURL { claims.append((ChildKey("picture"), .string(picture))) }
        claims += [
            (ChildKey("iss"), .string(issuer)),
            (ChildKey("aud"), .string(projectID)),
            (ChildKey("auth_time"), .int(authTime)),
            (ChildKey("user_id"), .string(user.uid)),
            (ChildKey("sub"), .string(user.uid)),
            (ChildKey("iat"), .int(now)),
            (ChildKey("exp"), .int(now + idTokenLifetime)),
        ]
        if let session { claims.append((ChildKey("jti"), .string(session))) }
        claims += [
            (ChildKey("firebase"), .object([
                (ChildKey("identities"), .object(identities)),
                (ChildKey("sign_in_provider"), .string(signInProvider)),
            ])),
        ]
        let payload = ClaimsPayload(.object(claims), emptyObjects: [["firebase", "identities"]])
        return try await keys.sign(payload, kid: JWKIdentifier(string: keyID))
    }

    /// Claims a custom claim may not override (Firebase refuses them too).
    public static let reservedClaims: Set<String> = [
        "acr", "amr", "at_hash", "aud", "auth_time", "azp", "cnf", "c_hash", "exp", "firebase", "iat", "iss", "jti",
        "nbf", "nonce", "sub", "user_id",
    ]

    /// Checks an ID token's signature, issuer, audience, subject and expiry.
    /// - Parameter now: seconds since the epoch.
    /// - Returns: all its claims.
    /// - Throws: `TOKEN_EXPIRED` for an expired token, `INVALID_ID_TOKEN` for anything else wrong.
    public func verifyIDToken(_ token: String, now: Int64) async throws(AuthError) -> Node {
        let registered: RegisteredClaims
        do {
            registered = try await keys.verify(token, as: RegisteredClaims.self)
        } catch {
            throw .invalidIDToken
        }
        guard registered.iss == issuer, registered.aud == projectID,
            let subject = registered.sub, !subject.isEmpty, subject.utf8.count <= 128,
            let expires = registered.exp, let issued = registered.iat, issued <= Double(now + 300)
        else { throw .invalidIDToken }
        guard expires > Double(now) else { throw .tokenExpired }
        guard let claims = Self.payload(of: token) else { throw .invalidIDToken }
        return claims
    }

    // MARK: - Session cookies

    /// The issuer of session cookies: `https://session.firebase.google.com/<project>`.
    public var sessionCookieIssuer: String { "https://session.firebase.google.com/\(projectID)" }

    /// A session cookie carrying an ID token's claims, issued now and valid for `validSeconds`.
    public func sessionCookie(fromIDTokenClaims claims: Node, user: UserRecord, validSeconds: Int64, now: Int64) async throws -> String {
        var entries = (claims.children.map { Array($0) } ?? []).filter { !["iss", "iat", "exp"].contains($0.key.string) }
        entries += [
            (ChildKey("iss"), .string(sessionCookieIssuer)),
            (ChildKey("iat"), .int(now)),
            (ChildKey("exp"), .int(now + validSeconds)),
        ]
        let payload = ClaimsPayload(.object(entries), emptyObjects: [["firebase", "identities"]])
        return try await keys.sign(payload, kid: JWKIdentifier(string: keyID))
    }

    /// Checks a session cookie's signature, issuer, audience, subject and expiry.
    /// - Throws: `SESSION_COOKIE_EXPIRED` or `INVALID_SESSION_COOKIE`.
    public func verifySessionCookie(_ cookie: String, now: Int64) async throws(AuthError) -> Node {
        let registered: RegisteredClaims
        do {
            registered = try await keys.verify(cookie, as: RegisteredClaims.self)
        } catch {
            throw AuthError("INVALID_SESSION_COOKIE")
        }
        guard registered.iss == sessionCookieIssuer, registered.aud == projectID,
            let subject = registered.sub, !subject.isEmpty, let expires = registered.exp,
            let claims = Self.payload(of: cookie)
        else { throw AuthError("INVALID_SESSION_COOKIE") }
        guard expires > Double(now) else { throw AuthError("SESSION_COOKIE_EXPIRED") }
        return claims
    }

    // MARK: - Custom tokens

    /// A custom token for `uid` signed with the server's key, as an Admin SDK makes them.
    public func customToken(uid: String, claims: Node = .null, now: Int64) async throws -> String {
        var payload: [(ChildKey, Node)] = [
            (ChildKey("iss"), .string("hearth@\(projectID)")),
            (ChildKey("sub"), .string("hearth@\(projectID)")),
            (ChildKey("aud"), .string(Self.customTokenAudience)),
            (ChildKey("iat"), .int(now)),
            (ChildKey("exp"), .int(now + 3600)),
            (ChildKey("uid"), .string(uid)),
        ]
        if claims.children != nil { payload.append((ChildKey("claims"), claims)) }
        return try await keys.sign(ClaimsPayload(.object(payload)), kid: JWKIdentifier(string: keyID))
    }

    /// The key ID a JWT's header names, if any (not checked).
    public static func keyID(of token: String) -> String? {
        guard let header = token.split(separator: ".", maxSplits: 1).first.flatMap(decodeSegment),
            case .string(let kid) = header.child(ChildKey("kid"))
        else { return nil }
        return kid
    }

    /// Checks a custom token: signed with the server's key, with `serviceAccount`'s key (as an
    /// Admin SDK holding that service account's key file signs them: issued by its address),
    /// or, when `allowUnsigned` (emulator mode), unsigned (`"alg":"none"`) as the Admin SDKs make
    /// them for the emulator.
    /// - Returns: the uid and the developer claims (an object, or `.null`).
    public func verifyCustomToken(
        _ token: String, allowUnsigned: Bool, now: Int64, serviceAccount: ServiceAccountKey? = nil
    ) async throws(AuthError) -> (uid: String, claims: Node) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Self.decodeSegment(parts[0]) else { throw .invalidCustomToken }
        if case .string("none") = header.child(ChildKey("alg")) {
            guard allowUnsigned, parts[2].isEmpty else { throw .invalidCustomToken }
        } else if let serviceAccount {
            guard serviceAccount.revokedAt == nil, await ServiceAccounts.isSigned(token, by: serviceAccount),
                case .string(serviceAccount.clientEmail) = Self.payload(of: token)?.child(ChildKey("iss"))
            else { throw .invalidCustomToken }
        } else {
            do {
                _ = try await keys.verify(token, as: RegisteredClaims.self)
            } catch {
                throw .invalidCustomToken
            }
        }
        guard let payload = Self.payload(of: token),
            case .string(Self.customTokenAudience) = payload.child(ChildKey("aud")),
            case .string(let uid) = payload.child(ChildKey("uid")), !uid.isEmpty, uid.utf8.count <= 128
        else { throw .invalidCustomToken }
        if let expires = payload.child(ChildKey("exp")).numberValue, expires <= Double(now) { throw .tokenExpired }
        let claims = payload.child(ChildKey("claims"))
        return (uid, claims.children == nil ? .null : claims)
    }

    // MARK: - Service accounts' access tokens

    /// What every access token begins with: a credential is known for one before anything is
    /// checked, so ID tokens are never tried as access tokens nor the other way round.
    public static let accessTokenPrefix = "hearth-sa."

    /// The issuer of access tokens (they are only ever read by this server).
    var accessTokenIssuer: String { "\(issuer)/service-accounts" }

    /// An OAuth 2.0 access token for a service account's key, valid for `lifetime` seconds.
    public func accessToken(clientEmail: String, serviceKeyID: String, now: Int64, lifetime: Int64) async throws -> String {
        let payload = ClaimsPayload(.object([
            (ChildKey("iss"), .string(accessTokenIssuer)),
            (ChildKey("aud"), .string(projectID)),
            (ChildKey("sub"), .string(clientEmail)),
            (ChildKey("key"), .string(serviceKeyID)),
            (ChildKey("iat"), .int(now)),
            (ChildKey("exp"), .int(now + lifetime)),
        ]))
        return Self.accessTokenPrefix + (try await keys.sign(payload, kid: JWKIdentifier(string: self.keyID)))
    }

    /// The service account and key an access token this server issued speaks for, while it has
    /// not expired; nil for anything else.
    public func verifyAccessToken(_ token: String, now: Int64) async -> (clientEmail: String, serviceKeyID: String)? {
        guard token.hasPrefix(Self.accessTokenPrefix) else { return nil }
        let jwt = String(token.dropFirst(Self.accessTokenPrefix.count))
        guard let registered = try? await keys.verify(jwt, as: RegisteredClaims.self),
            registered.iss == accessTokenIssuer, registered.aud == projectID,
            let subject = registered.sub, let expires = registered.exp, expires > Double(now),
            case .string(let keyID) = Self.payload(of: jwt)?.child(ChildKey("key"))
        else { return nil }
        return (subject, keyID)
    }

    // MARK: - Keys

    /// The public key as a JSON Web Key Set.
    public func jwks() throws -> Node {
        let (modulus, exponent) = try publicKey.getKeyPrimitives()
        return .object([
            (ChildKey("keys"), .object([
                (ChildKey("0"), .object([
                    (ChildKey("alg"), .string("RS256")),
                    (ChildKey("e"), .string(Self.base64URL(exponent))),
                    (ChildKey("kid"), .string(keyID)),
                    (ChildKey("kty"), .string("RSA")),
                    (ChildKey("n"), .string(Self.base64URL(modulus))),
                    (ChildKey("use"), .string("sig")),
                ]))
            ]))
        ])
    }

    /// The public key as Google serves its token keys to the Admin SDKs: `{"<key ID>": "<X.509
    /// certificate, PEM>"}` (`robot/v1/metadata/x509/securetoken@…`, and v3's `publicKeys` for
    /// session cookies). Only the key in it matters to them: the certificate is self-signed.
    public func x509Certificates() -> [String: String] {
        certificatePEM.map { [keyID: $0] } ?? [:]
    }

    private static func selfSignedCertificate(_ key: JWTKit.Insecure.RSA.PrivateKey) -> String? {
        do {
            let rsa = try _RSA.Signing.PrivateKey(pemRepresentation: key.pemRepresentation)
            let name = try DistinguishedName { CommonName("securetoken.system.gserviceaccount.com") }
            let now = Date()
            let certificate = try Certificate(
                version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(rsa.publicKey),
                notValidBefore: now - 3600, notValidAfter: now + 10 * 365 * 86400, issuer: name, subject: name,
                signatureAlgorithm: .sha256WithRSAEncryption, extensions: Certificate.Extensions(),
                issuerPrivateKey: Certificate.PrivateKey(rsa))
            return try certificate.serializeAsPEM().pemString
        } catch {
            return nil
        }
    }

    /// The payload claims of a JWT (not checked).
    static func payload(of token: String) -> Node? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = decodeSegment(parts[1]), payload.children != nil else { return nil }
        return payload
    }

    static func decodeSegment(_ segment: Substring) -> Node? {
        var text = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text) else { return nil }
        return try? JSONParser.parseDocument(Array(data))
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
