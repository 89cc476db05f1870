import Crypto
import CryptoExtras
import Foundation
import HearthAuth
import Testing

/// Imported password hashes check passwords exactly as the systems that made them did; the
/// vectors come from Firebase's own documentation of its modified scrypt and from computing
/// the digests independently (Python's hashlib in Tests/Conformance/test_auth_admin.py).
@Suite struct ImportedPasswordHashTests {
    /// firebase/scrypt's README vector: the project's signer key, separator, rounds and memory
    /// cost, a user's salt, and the stored hash of "user1password".
    @Test func firebaseScryptMatchesItsPublishedVector() throws {
        let hash = ImportedPasswordHash(
            algorithm: "SCRYPT",
            hash: try #require(Data(base64Encoded: "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==")),
            salt: try #require(Data(base64Encoded: "42xEC+ixf3L2lw==")),
            key: try #require(Data(base64Encoded: "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==")),
            saltSeparator: try #require(Data(base64Encoded: "Bw==")), rounds: 8, memoryCost: 14)
        #expect(hash.verify("user1password"))
        #expect(!hash.verify("user1passwore"))
    }

    @Test func digestsHashSaltThenPasswordAndAcceptHexText() {
        let salt = Data("NaCl".utf8)
        let raw = Data(SHA256.hash(data: salt + Data("secret".utf8)))
        #expect(ImportedPasswordHash(algorithm: "SHA256", hash: raw, salt: salt, rounds: 1).verify("secret"))
        let hex = Data(Insecure.MD5.hash(data: salt + Data("secret".utf8)).map { String(format: "%02x", $0) }.joined().utf8)
        #expect(ImportedPasswordHash(algorithm: "MD5", hash: hex, salt: salt, rounds: 0).verify("secret"))
        #expect(!ImportedPasswordHash(algorithm: "MD5", hash: hex, salt: salt, rounds: 0).verify("Secret"))
        // Several rounds hash the digest again.
        let twice = Data(SHA256.hash(data: raw))
        #expect(ImportedPasswordHash(algorithm: "SHA256", hash: twice, salt: salt, rounds: 2).verify("secret"))
        #expect(!ImportedPasswordHash(algorithm: "SHA256", hash: twice, salt: salt, rounds: 1).verify("secret"))
    }

    @Test func hmacHashesPasswordThenSaltUnlessTheOrderSaysOtherwise() {
        let key = SymmetricKey(data: Data("signer".utf8))
        let salt = Data("pepper".utf8)
        let passwordFirst = Data(HMAC<SHA256>.authenticationCode(for: Data("pw123456".utf8) + salt, using: key))
        #expect(ImportedPasswordHash(algorithm: "HMAC_SHA256", hash: passwordFirst, salt: salt, key: Data("signer".utf8)).verify("pw123456"))
        let saltFirst = Data(HMAC<SHA256>.authenticationCode(for: salt + Data("pw123456".utf8), using: key))
        #expect(!ImportedPasswordHash(algorithm: "HMAC_SHA256", hash: saltFirst, salt: salt, key: Data("signer".utf8)).verify("pw123456"))
        #expect(ImportedPasswordHash(
            algorithm: "HMAC_SHA256", hash: saltFirst, salt: salt, key: Data("signer".utf8), passwordFirst: false).verify("pw123456"))
    }

    @Test func theStoredFormRoundTripsAndTheHasherDispatchesToIt() throws {
        let salt = Data("s".utf8)
        let imported = ImportedPasswordHash(
            algorithm: "SHA1", hash: Data(Insecure.SHA1.hash(data: salt + Data("password1".utf8))), salt: salt, rounds: 1)
        let stored = imported.stored
        #expect(stored.hasPrefix("import:"))
        #expect(ImportedPasswordHash(stored: stored) == imported)
        let hasher = PasswordHasher(rounds: 1 << 10)
        #expect(hasher.verify("password1", against: stored))
        #expect(!hasher.verify("password2", against: stored))
        // The next sign-in replaces an imported (or cheaper) hash with Hearth's own.
        #expect(hasher.needsRehash(stored))
        #expect(!hasher.needsRehash(try hasher.hash("password1")))
        #expect(PasswordHasher(rounds: 1 << 12).needsRehash(try hasher.hash("password1")))
    }

    @Test func parametersAreCheckedWithFirebasesCodes() {
        func code(_ hash: ImportedPasswordHash) -> String? {
            do {
                try hash.validatedParameters()
                return nil
            } catch {
                return error.code
            }
        }
        #expect(code(ImportedPasswordHash(algorithm: "BCRYPT", hash: Data(), salt: Data())) == "UNSUPPORTED_HASH_ALGORITHM")
        #expect(code(ImportedPasswordHash(algorithm: "ROT13", hash: Data(), salt: Data())) == "INVALID_HASH_ALGORITHM")
        #expect(code(ImportedPasswordHash(algorithm: "SCRYPT", hash: Data(), salt: Data(), rounds: 8, memoryCost: 14)) == "MISSING_SIGNER_KEY")
        #expect(code(ImportedPasswordHash(algorithm: "SCRYPT", hash: Data(), salt: Data(), key: Data([1]), rounds: 9, memoryCost: 14))
            == "INVALID_HASH_ROUNDS")
        #expect(code(ImportedPasswordHash(algorithm: "SHA256", hash: Data(), salt: Data(), rounds: 0)) == "INVALID_HASH_ROUNDS")
        #expect(code(ImportedPasswordHash(algorithm: "MD5", hash: Data(), salt: Data(), rounds: 0)) == nil)
        #expect(code(ImportedPasswordHash(
            algorithm: "STANDARD_SCRYPT", hash: Data(), salt: Data(), memoryCost: 1000, parallelization: 1, blockSize: 8, derivedKeyLength: 64))
            == "INVALID_HASH_MEMORY_COST")
    }

    @Test func pbkdfDigestsMayBeHexAndScryptCostIsBounded() throws {
        let salt = Data("salt".utf8)
        let raw = try KDF.Insecure.PBKDF2.deriveKey(
            from: Data("pw-123456".utf8), salt: salt, using: .sha256, outputByteCount: 32, unsafeUncheckedRounds: 1000)
        let bytes = raw.withUnsafeBytes { Data($0) }
        let hex = Data(bytes.map { String(format: "%02x", $0) }.joined().utf8)
        #expect(ImportedPasswordHash(algorithm: "PBKDF2_SHA256", hash: bytes, salt: salt, rounds: 1000).verify("pw-123456"))
        #expect(ImportedPasswordHash(algorithm: "PBKDF2_SHA256", hash: hex, salt: salt, rounds: 1000).verify("pw-123456"))
        #expect(!ImportedPasswordHash(algorithm: "PBKDF2_SHA256", hash: hex, salt: salt, rounds: 1000).verify("pw-1234567"))
        // 128·N·r·p above 256 MiB would be paid by every sign-in attempt: refused.
        #expect(throws: AuthError("INVALID_HASH_MEMORY_COST")) {
            try ImportedPasswordHash(
                algorithm: "STANDARD_SCRYPT", hash: Data(), salt: Data(), memoryCost: 1 << 20, parallelization: 16, blockSize: 64,
                derivedKeyLength: 64
            ).validatedParameters()
        }
    }
}
