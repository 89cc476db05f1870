import Foundation
import HearthCore
import HearthTesting
import Testing
@testable import HearthAuth

/// RS256 ID tokens and custom tokens signed with a real generated RSA key: their claims, and
/// every way a token can be wrong (expired, another key, another project, tampered, unsigned).
@Suite struct TokenIssuerTests {
    static let now: Int64 = 1_700_000_000

    /// Runs `body` with an issuer for `projectID` whose key lives in a fresh temporary directory.
    static func withIssuer(
        projectID: String = "proj", _ body: (TokenIssuer, URL) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-keys")
        defer { directory.remove() }
        let keyURL = directory.url.appendingPathComponent("auth/signing-key.pem")
        let issuer = await TokenIssuer(privateKey: try TokenIssuer.loadOrCreateKey(at: keyURL), projectID: projectID)
        try await body(issuer, keyURL)
    }

    static func alice(claims: Node = .null) -> UserRecord {
        UserRecord(
            uid: "alice-uid", email: "alice@example.com", emailVerified: true, displayName: "Alice",
            customClaims: claims, provider: "password", createdAt: now * 1000, validSince: now)
    }

    // MARK: - Token text

    static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ segment: Substring) -> String {
        var text = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return String(decoding: Data(base64Encoded: text) ?? Data(), as: UTF8.self)
    }

    /// An unsigned JWT: `header.payload.` with `"alg":"none"`.
    static func unsigned(_ payload: String, header: String = #"{"alg":"none","typ":"JWT"}"#) -> String {
        base64URL(header) + "." + base64URL(payload) + "."
    }

    // MARK: - ID tokens

    @Test func anIDTokenCarriesFirebasesClaims() async throws {
        try await Self.withIssuer { issuer, _ in
            let custom = Node.object([
                (ChildKey("role"), .string("admin")), (ChildKey("level"), .int(3)),
                // Reserved names must not override the real claims.
                (ChildKey("sub"), .string("mallory")), (ChildKey("firebase"), .string("forged")),
                (ChildKey("iss"), .string("https://evil.example")),
            ])
            let token = try await issuer.idToken(
                for: Self.alice(claims: custom), signInProvider: "password", authTime: Self.now - 10, now: Self.now)
            #expect(token.split(separator: ".").count == 3)
            let claims = try await issuer.verifyIDToken(token, now: Self.now)
            func claim(_ name: String) -> Node { claims.child(ChildKey(name)) }
            #expect(claim("iss") == .string("https://securetoken.google.com/proj"))
            #expect(issuer.issuer == "https://securetoken.google.com/proj")
            #expect(claim("aud") == .string("proj"))
            #expect(claim("sub") == .string("alice-uid"))
            #expect(claim("user_id") == .string("alice-uid"))
            #expect(claim("auth_time") == .int(Self.now - 10))
            #expect(claim("iat") == .int(Self.now))
            #expect(claim("exp") == .int(Self.now + 3600))
            #expect(claim("email") == .string("alice@example.com"))
            #expect(claim("email_verified") == .bool(true))
            #expect(claim("name") == .string("Alice"))
            #expect(claim("firebase").child(ChildKey("sign_in_provider")) == .string("password"))
            #expect(claim("firebase").child(ChildKey("identities")).child(ChildKey("email")).child(ChildKey("0"))
                == .string("alice@example.com"))
            #expect(claim("role") == .string("admin"))
            #expect(claim("level") == .int(3))
            // The header names the key and the algorithm.
            let header = Self.decode(token.split(separator: ".")[0])
            #expect(header.contains(#""kid":"\#(issuer.keyID)""#))
            #expect(header.contains(#""alg":"RS256""#))
        }
    }

    @Test func anAccountWithoutEmailHasNoEmailClaims() async throws {
        try await Self.withIssuer { issuer, _ in
            let anonymous = UserRecord(uid: "anon", provider: "anonymous", createdAt: 0, validSince: 0)
            let token = try await issuer.idToken(for: anonymous, signInProvider: "anonymous", authTime: Self.now, now: Self.now)
            let claims = try await issuer.verifyIDToken(token, now: Self.now)
            #expect(claims.child(ChildKey("sub")) == .string("anon"))
            #expect(claims.child(ChildKey("email")).isNull)
            #expect(claims.child(ChildKey("email_verified")).isNull)
            #expect(claims.child(ChildKey("firebase")).child(ChildKey("sign_in_provider")) == .string("anonymous"))
        }
    }

    @Test func anIDTokenExpiresAfterAnHour() async throws {
        try await Self.withIssuer { issuer, _ in
            let token = try await issuer.idToken(for: Self.alice(), signInProvider: "password", authTime: Self.now, now: Self.now)
            _ = try await issuer.verifyIDToken(token, now: Self.now + 3599)
            await #expect(throws: AuthError.tokenExpired) { try await issuer.verifyIDToken(token, now: Self.now + 3600) }
            await #expect(throws: AuthError.tokenExpired) { try await issuer.verifyIDToken(token, now: Self.now + 86_400) }
            // Issued well in the future (beyond clock skew): not a token to trust.
            await #expect(throws: AuthError.invalidIDToken) { try await issuer.verifyIDToken(token, now: Self.now - 3000) }
        }
    }

    @Test func aTokenSignedByAnotherKeyIsInvalid() async throws {
        try await Self.withIssuer { issuer, _ in
            try await Self.withIssuer { other, _ in
                #expect(other.keyID != issuer.keyID)
                let foreign = try await other.idToken(for: Self.alice(), signInProvider: "password", authTime: Self.now, now: Self.now)
                _ = try await other.verifyIDToken(foreign, now: Self.now)
                await #expect(throws: AuthError.invalidIDToken) { try await issuer.verifyIDToken(foreign, now: Self.now) }
                // Relabelled with this issuer's key ID, the signature still does not match.
                let parts = foreign.split(separator: ".")
                let header = Self.base64URL(#"{"alg":"RS256","kid":"\#(issuer.keyID)","typ":"JWT"}"#)
                let relabelled = "\(header).\(parts[1]).\(parts[2])"
                await #expect(throws: AuthError.invalidIDToken) { try await issuer.verifyIDToken(relabelled, now: Self.now) }
            }
        }
    }

    @Test func aTokenForAnotherProjectIsInvalid() async throws {
        try await Self.withIssuer { issuer, keyURL in
            // The same key, so only the audience and issuer differ.
            let other = await TokenIssuer(privateKey: try TokenIssuer.loadOrCreateKey(at: keyURL), projectID: "other")
            #expect(other.keyID == issuer.keyID)
            let token = try await other.idToken(for: Self.alice(), signInProvider: "password", authTime: Self.now, now: Self.now)
            _ = try await other.verifyIDToken(token, now: Self.now)
            await #expect(throws: AuthError.invalidIDToken) { try await issuer.verifyIDToken(token, now: Self.now) }
        }
    }

    @Test func aTamperedTokenIsInvalid() async throws {
        try await Self.withIssuer { issuer, _ in
            let token = try await issuer.idToken(for: Self.alice(), signInProvider: "password", authTime: Self.now, now: Self.now)
            let parts = token.split(separator: ".", omittingEmptySubsequences: false)
            let payload = Self.decode(parts[1])
            #expect(payload.contains(#""sub":"alice-uid""#))
            let forged = payload.replacingOccurrences(of: "alice-uid", with: "mallory")
            let tampered = "\(parts[0]).\(Self.base64URL(forged)).\(parts[2])"
            await #expect(throws: AuthError.invalidIDToken) { try await issuer.verifyIDToken(tampered, now: Self.now) }
            // A damaged signature, or none at all.
            var signature = Array(parts[2])
            signature[10] = signature[10] == "A" ? "B" : "A"
            let damaged = "\(parts[0]).\(parts[1]).\(String(signature))"
            await #expect(throws: AuthError.invalidIDToken) { try await issuer.verifyIDToken(damaged, now: Self.now) }
            await #expect(throws: AuthError.invalidIDToken) { try await issuer.verifyIDToken("\(parts[0]).\(parts[1]).", now: Self.now) }
        }
    }

    @Test func anUnsignedIDTokenIsInvalid() async throws {
        try await Self.withIssuer { issuer, _ in
            let payload = """
                {"iss":"https://securetoken.google.com/proj","aud":"proj","sub":"alice-uid","user_id":"alice-uid",\
                "iat":\(Self.now),"exp":\(Self.now + 3600),"auth_time":\(Self.now),"firebase":{"sign_in_provider":"password"}}
                """
            await #expect(throws: AuthError.invalidIDToken) { try await issuer.verifyIDToken(Self.unsigned(payload), now: Self.now) }
            let withKeyID = Self.unsigned(payload, header: #"{"alg":"none","kid":"\#(issuer.keyID)","typ":"JWT"}"#)
            await #expect(throws: AuthError.invalidIDToken) { try await issuer.verifyIDToken(withKeyID, now: Self.now) }
        }
    }

    @Test func garbageIsInvalid() async throws {
        try await Self.withIssuer { issuer, _ in
            for garbage in ["", "abc", "a.b", "a.b.c", "..", "...", "Bearer x", "eyJhbGciOiJSUzI1NiJ9.eyJ9.sig", "🔥.🔥.🔥"] {
                await #expect(throws: AuthError.invalidIDToken, "\(garbage)") { try await issuer.verifyIDToken(garbage, now: Self.now) }
            }
        }
    }

    // MARK: - Keys

    @Test func startsAtOnceAgreeOnOneKey() async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-keys")
        let keyURL = directory.url.appendingPathComponent("signing-key.pem")
        // Eight starts racing for a folder without a key: one key is made and kept, and all use it.
        let keyIDs = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 {
                group.addTask { await TokenIssuer(privateKey: try TokenIssuer.loadOrCreateKey(at: keyURL), projectID: "proj").keyID }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(keyIDs.count == 1)
        let kept = await TokenIssuer(privateKey: try TokenIssuer.loadOrCreateKey(at: keyURL), projectID: "proj")
        #expect(keyIDs == [kept.keyID])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["signing-key.pem"])
    }

    @Test func theKeyFilePersistsAndOnlyItsOwnerMayReadIt() async throws {
        try await Self.withIssuer { issuer, keyURL in
            let again = await TokenIssuer(privateKey: try TokenIssuer.loadOrCreateKey(at: keyURL), projectID: "proj")
            #expect(again.keyID == issuer.keyID)
            #expect(issuer.keyID.count == 40)
            // Tokens from before a restart still verify.
            let token = try await issuer.idToken(for: Self.alice(), signInProvider: "password", authTime: Self.now, now: Self.now)
            _ = try await again.verifyIDToken(token, now: Self.now)
            let attributes = try FileManager.default.attributesOfItem(atPath: keyURL.path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            let pem = try String(contentsOf: keyURL, encoding: .utf8)
            #expect(pem.contains("PRIVATE KEY"))
            // No temporary file is left behind.
            let names = try FileManager.default.contentsOfDirectory(atPath: keyURL.deletingLastPathComponent().path)
            #expect(names == ["signing-key.pem"])
        }
    }

    @Test func theJWKSHoldsThePublicKey() async throws {
        try await Self.withIssuer { issuer, _ in
            let jwks = try issuer.jwks()
            let keys = jwks.child(ChildKey("keys"))
            #expect(keys.childCount == 1)
            let key = keys.child(ChildKey("0"))
            #expect(key.child(ChildKey("kty")) == .string("RSA"))
            #expect(key.child(ChildKey("alg")) == .string("RS256"))
            #expect(key.child(ChildKey("use")) == .string("sig"))
            #expect(key.child(ChildKey("kid")) == .string(issuer.keyID))
            #expect(key.child(ChildKey("e")) == .string("AQAB"))
            guard case .string(let modulus) = key.child(ChildKey("n")) else {
                Issue.record("no modulus")
                return
            }
            #expect(!modulus.contains("=") && !modulus.contains("+") && !modulus.contains("/"))
            var padded = modulus.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while padded.count % 4 != 0 { padded += "=" }
            // A 2048-bit modulus.
            #expect(Data(base64Encoded: padded)?.count == 256)
            // No private parts.
            #expect(key.child(ChildKey("d")).isNull)
        }
    }

    // MARK: - Custom tokens

    @Test func aSignedCustomTokenGivesItsUIDAndClaims() async throws {
        try await Self.withIssuer { issuer, _ in
            let claims = Node.object([(ChildKey("premium"), .bool(true)), (ChildKey("tier"), .int(2))])
            let token = try await issuer.customToken(uid: "u1", claims: claims, now: Self.now)
            let signed = try await issuer.verifyCustomToken(token, allowUnsigned: false, now: Self.now)
            #expect(signed.uid == "u1")
            #expect(signed.claims == claims)
            let plain = try await issuer.verifyCustomToken(
                try await issuer.customToken(uid: "u2", now: Self.now), allowUnsigned: false, now: Self.now)
            #expect(plain.uid == "u2")
            #expect(plain.claims == .null)
        }
    }

    @Test func anUnsignedCustomTokenIsAcceptedOnlyWhenAllowed() async throws {
        try await Self.withIssuer { issuer, _ in
            let token = Self.unsigned("""
                {"aud":"\(TokenIssuer.customTokenAudience)","uid":"u1","iat":\(Self.now),"exp":\(Self.now + 3600),\
                "claims":{"admin":true}}
                """)
            let accepted = try await issuer.verifyCustomToken(token, allowUnsigned: true, now: Self.now)
            #expect(accepted.uid == "u1")
            #expect(accepted.claims == .object([(ChildKey("admin"), .bool(true))]))
            await #expect(throws: AuthError.invalidCustomToken) {
                try await issuer.verifyCustomToken(token, allowUnsigned: false, now: Self.now)
            }
            // "none" with a signature attached is not an unsigned token either.
            await #expect(throws: AuthError.invalidCustomToken) {
                try await issuer.verifyCustomToken(token + "c2ln", allowUnsigned: true, now: Self.now)
            }
        }
    }

    @Test func aCustomTokenForAnotherAudienceOrWithoutUIDIsRefused() async throws {
        try await Self.withIssuer { issuer, _ in
            let wrongAudience = Self.unsigned(#"{"aud":"proj","uid":"u1","exp":\#(Self.now + 3600)}"#)
            await #expect(throws: AuthError.invalidCustomToken) {
                try await issuer.verifyCustomToken(wrongAudience, allowUnsigned: true, now: Self.now)
            }
            let noUID = Self.unsigned(#"{"aud":"\#(TokenIssuer.customTokenAudience)","exp":\#(Self.now + 3600)}"#)
            await #expect(throws: AuthError.invalidCustomToken) {
                try await issuer.verifyCustomToken(noUID, allowUnsigned: true, now: Self.now)
            }
            // An ID token is not a custom token, and a custom token is not an ID token.
            let idToken = try await issuer.idToken(for: Self.alice(), signInProvider: "password", authTime: Self.now, now: Self.now)
            await #expect(throws: AuthError.invalidCustomToken) {
                try await issuer.verifyCustomToken(idToken, allowUnsigned: true, now: Self.now)
            }
            let customToken = try await issuer.customToken(uid: "u1", now: Self.now)
            await #expect(throws: AuthError.invalidIDToken) { try await issuer.verifyIDToken(customToken, now: Self.now) }
        }
    }

    @Test func anExpiredOrForeignCustomTokenIsRefused() async throws {
        try await Self.withIssuer { issuer, _ in
            let token = try await issuer.customToken(uid: "u1", now: Self.now)
            await #expect(throws: AuthError.self) { try await issuer.verifyCustomToken(token, allowUnsigned: false, now: Self.now + 3600) }
            await #expect(throws: AuthError.self) { try await issuer.verifyCustomToken(token, allowUnsigned: true, now: Self.now + 7200) }
            let expiredUnsigned = Self.unsigned(#"{"aud":"\#(TokenIssuer.customTokenAudience)","uid":"u1","exp":\#(Self.now - 1)}"#)
            await #expect(throws: AuthError.self) {
                try await issuer.verifyCustomToken(expiredUnsigned, allowUnsigned: true, now: Self.now)
            }
            try await Self.withIssuer { other, _ in
                let foreign = try await other.customToken(uid: "u1", now: Self.now)
                await #expect(throws: AuthError.invalidCustomToken) {
                    try await issuer.verifyCustomToken(foreign, allowUnsigned: true, now: Self.now)
                }
            }
        }
    }
}
