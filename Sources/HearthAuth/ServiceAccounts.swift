import Crypto
import CryptoExtras
import Foundation
import HearthCore
import JWTKit
import Logging
import Synchronization

/// Service accounts: admin credentials for servers, as Google issues them, so `firebase_admin`
/// and Google's client libraries reach Hearth with a key file rather than the admin token.
///
/// An operator makes a key (``create(name:tokenURI:)``); its key file holds the private half
/// and names this server's token endpoint as its `token_uri`. A client signs a short-lived JWT
/// with it and trades it there for an access token (the OAuth 2.0 JWT-bearer grant, RFC 7523:
/// ``exchange(assertion:)``), which is an admin credential for an hour. Revoking the key
/// (``revoke(_:)``) stops new tokens at once and the ones given out within
/// ``recheckMilliseconds`` on every server sharing the account store.
///
/// Thread safety: the only state is the cache of keys' standing, behind a mutex.
public final class ServiceAccounts: Sendable {
    public let store: any AccountStorage
    let issuer: TokenIssuer
    let clock: @Sendable () -> Int64
    let logger: Logger

    /// How long an access token lives (seconds), as Google's do.
    public static let accessTokenLifetime: Int64 = 3600
    /// The longest an assertion may be valid for (seconds), as Google allows.
    static let maxAssertionLifetime: Int64 = 3600
    /// How far ahead of this server's clock an assertion's `iat` may be (seconds).
    static let clockSkew: Int64 = 60
    /// The audiences Google's client libraries write whatever the key file's `token_uri`
    /// (`google-auth` always addresses its assertions to Google's endpoint).
    static let googleTokenEndpoints: Set<String> = ["https://oauth2.googleapis.com/token", "https://www.googleapis.com/oauth2/v4/token"]
    /// How long a key's standing is believed before the store is asked again (milliseconds).
    public static let recheckMilliseconds: Int64 = 5000
    /// Keys whose standing is remembered; beyond, the cache starts again (keys are made by
    /// operators, so this is never reached in use, but a flood of forged key IDs cannot grow it).
    static let maxRemembered = 1024

    private struct Standing {
        var key: ServiceAccountKey?
        var checkedAt: Int64
    }

    private let standings = Mutex<[String: Standing]>([:])

    /// - Parameter clock: milliseconds since the epoch.
    public init(store: any AccountStorage, issuer: TokenIssuer, clock: @escaping @Sendable () -> Int64, logger: Logger) {
        self.store = store
        self.issuer = issuer
        self.clock = clock
        self.logger = logger
    }

    // MARK: - Keys

    /// Makes a key for the account `name` (6 to 30 lower-case letters, digits and hyphens,
    /// starting with a letter, as Google's account IDs) and keeps its public half.
    /// - Parameter tokenURI: this server's token endpoint as clients reach it.
    /// - Returns: the key and its key file (the only copy of the private key).
    public func create(name: String, tokenURI: String) async throws -> (key: ServiceAccountKey, file: ServiceAccountKeyFile) {
        guard Self.isValidName(name) else {
            throw AuthError.invalidArgument("a service account's name is 6 to 30 lower-case letters, digits and hyphens, starting with a letter")
        }
        guard let endpoint = URL(string: tokenURI), ["http", "https"].contains(endpoint.scheme ?? ""), endpoint.host != nil else {
            throw AuthError.invalidArgument("the token URI must be an http or https URL")
        }
        let privateKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let id = Self.hex(SymmetricKey(size: .bits128))
        let email = "\(name)@\(issuer.projectID).iam.gserviceaccount.com"
        let key = ServiceAccountKey(
            id: id, clientEmail: email, publicKeyPEM: privateKey.publicKey.pemRepresentation, tokenURI: tokenURI, createdAt: clock())
        try await store.addServiceAccountKey(key)
        logger.notice("service account key made", metadata: ["account": "\(email)", "key": "\(id)"])
        let file = ServiceAccountKeyFile(
            projectID: issuer.projectID, privateKeyID: id, privateKey: privateKey.pkcs8PEMRepresentation, clientEmail: email,
            clientID: Self.clientID(), tokenURI: tokenURI)
        return (key, file)
    }

    /// Every key, revoked ones included.
    public func keys() async throws -> [ServiceAccountKey] {
        try await store.serviceAccountKeys()
    }

    /// Revokes the key with ID `idOrEmail`, or every key of the account with that address.
    /// - Returns: the keys revoked now (none when nothing matched or all were revoked already).
    public func revoke(_ idOrEmail: String) async throws -> [ServiceAccountKey] {
        let now = clock()
        var revoked: [ServiceAccountKey] = []
        for key in try await store.serviceAccountKeys() where key.id == idOrEmail || key.clientEmail == idOrEmail {
            if try await store.revokeServiceAccountKey(id: key.id, now: now) { revoked.append(key) }
            standings.withLock { _ = $0.removeValue(forKey: key.id) }
            logger.notice("service account key revoked", metadata: ["account": "\(key.clientEmail)", "key": "\(key.id)"])
        }
        return revoked
    }

    // MARK: - Tokens

    /// Trades a signed assertion for an access token (RFC 7523 section 2.1).
    /// - Throws: ``OAuthError`` `invalid_request` without an assertion, `invalid_grant` for one
    ///   that is forged, expired, too long-lived, addressed elsewhere, or signed with a key
    ///   that is unknown or revoked.
    public func exchange(assertion: String?) async throws(OAuthError) -> (accessToken: String, expiresIn: Int64) {
        guard let assertion, !assertion.isEmpty else { throw OAuthError("invalid_request", "Missing required parameter: assertion") }
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = TokenIssuer.decodeSegment(parts[0]), let claims = TokenIssuer.decodeSegment(parts[1]),
            claims.children != nil
        else { throw .invalidGrant("Invalid JWT: the assertion is not a signed JWT.") }
        guard case .string("RS256") = header.child(ChildKey("alg")), case .string(let keyID) = header.child(ChildKey("kid")),
            keyID.utf8.count <= 64
        else { throw .invalidGrant("Invalid JWT Signature.") }
        // Read afresh: a revocation (made by another process, or another node) holds at once
        // for new tokens. Exchanges are rare: a client makes one an hour.
        guard let key = try? await standing(of: keyID, fresh: true), key.revokedAt == nil, await Self.isSigned(assertion, by: key) else {
            throw .invalidGrant("Invalid JWT Signature.")
        }
        guard case .string(key.clientEmail) = claims.child(ChildKey("iss")) else {
            throw .invalidGrant("Invalid JWT: the issuer is not the key's service account.")
        }
        if case .string(let subject) = claims.child(ChildKey("sub")), subject != key.clientEmail {
            // Acting for someone else (Google's domain-wide delegation) has no meaning here.
            throw OAuthError("unauthorized_client", "Client is unauthorized to retrieve access tokens using this method.")
        }
        guard case .string(let audience) = claims.child(ChildKey("aud")), audience == key.tokenURI || Self.googleTokenEndpoints.contains(audience)
        else { throw .invalidGrant("Invalid JWT: the audience is not this token endpoint (\(key.tokenURI)).") }
        let now = clock() / 1000
        guard let issued = claims.child(ChildKey("iat")).numberValue, let expires = claims.child(ChildKey("exp")).numberValue,
            issued <= Double(now + Self.clockSkew), expires > Double(now), expires - issued <= Double(Self.maxAssertionLifetime)
        else {
            throw .invalidGrant("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.")
        }
        do {
            let token = try await issuer.accessToken(
                clientEmail: key.clientEmail, serviceKeyID: key.id, now: now, lifetime: Self.accessTokenLifetime)
            return (token, Self.accessTokenLifetime)
        } catch {
            logger.error("cannot sign an access token", metadata: ["error": "\(error)"])
            throw OAuthError("server_error", "The access token could not be made.")
        }
    }

    /// The working key an access token was issued for, or nil: a token this server did not
    /// issue, one that expired, or one whose key was revoked.
    public func verify(accessToken: String) async -> ServiceAccountKey? {
        guard let (email, keyID) = await issuer.verifyAccessToken(accessToken, now: clock() / 1000),
            let key = try? await standing(of: keyID), key.revokedAt == nil, key.clientEmail == email
        else { return nil }
        return key
    }

    /// The key with ID `id` as the store had it at most ``recheckMilliseconds`` ago (`fresh`: now).
    private func standing(of id: String, fresh: Bool = false) async throws -> ServiceAccountKey? {
        let now = clock()
        if !fresh, let known = standings.withLock({ $0[id] }), now - known.checkedAt < Self.recheckMilliseconds { return known.key }
        let key = try await store.serviceAccountKey(id: id)
        standings.withLock { standings in
            if standings.count >= Self.maxRemembered { standings.removeAll() }
            standings[id] = Standing(key: key, checkedAt: now)
        }
        return key
    }

    /// True when `assertion` (a JWT) carries a valid RS256 signature by `key`.
    static func isSigned(_ assertion: String, by key: ServiceAccountKey) async -> Bool {
        guard let publicKey = try? JWTKit.Insecure.RSA.PublicKey(pem: key.publicKeyPEM) else { return false }
        let keys = JWTKeyCollection()
        await keys.add(rsa: publicKey, digestAlgorithm: .sha256, kid: JWKIdentifier(string: key.id))
        return (try? await keys.verify(assertion, as: RegisteredClaims.self)) != nil
    }

    // MARK: - Names

    static func isValidName(_ name: String) -> Bool {
        let characters = Array(name.utf8)
        guard (6...30).contains(characters.count), let first = characters.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first),
            characters.last != UInt8(ascii: "-")
        else { return false }
        return characters.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "-")
        }
    }

    private static func hex(_ key: SymmetricKey) -> String {
        key.withUnsafeBytes { bytes in bytes.map { String(format: "%02x", $0) }.joined() }
    }

    /// A 21-digit number, the form of Google's `client_id`s.
    private static func clientID() -> String {
        var generator = SystemRandomNumberGenerator()
        return "1" + (0..<20).map { _ in String(Int.random(in: 0...9, using: &generator)) }.joined()
    }
}
