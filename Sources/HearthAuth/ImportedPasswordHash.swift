import Crypto
import CryptoExtras
import Foundation

/// A password hash brought in by a user import (`accounts:batchCreate`), kept in the form the
/// old system made it until the user next signs in, when it is replaced by Hearth's own
/// (``PasswordHasher``).
///
/// The algorithms are Firebase's: its modified scrypt (`SCRYPT`: scrypt of the password with
/// the salt and salt separator, N = 2^memoryCost, r = rounds, p = 1, 64 bytes, whose first 32
/// bytes are the AES-256-CTR key that encrypts the project's signer key), `STANDARD_SCRYPT`,
/// `PBKDF_SHA1` and `PBKDF2_SHA256`, `HMAC_*` of password then salt with a key, and `MD5`,
/// `SHA1`, `SHA256`, `SHA512` of salt then password applied `rounds` times (`passwordHashOrder`
/// can swap the order). A digest may be given raw or as lower-case hex text, as exports of
/// MD5 hashes usually are. `BCRYPT` is refused: no bcrypt implementation is among Hearth's
/// dependencies, and one is not written by hand.
///
/// Stored as `import:` followed by this value as JSON.
public struct ImportedPasswordHash: Codable, Sendable, Equatable {
    /// Firebase's algorithm name (`SCRYPT`, `HMAC_SHA256`, …).
    public var algorithm: String
    public var hash: Data
    public var salt: Data
    public var key: Data?
    public var saltSeparator: Data?
    public var rounds: Int?
    public var memoryCost: Int?
    public var parallelization: Int?
    public var blockSize: Int?
    public var derivedKeyLength: Int?
    /// The order of password and salt; nil is the algorithm's own (HMAC: password first).
    public var passwordFirst: Bool?

    static let prefix = "import:"

    public static let supportedAlgorithms: Set<String> = [
        "SCRYPT", "STANDARD_SCRYPT", "PBKDF_SHA1", "PBKDF2_SHA256", "HMAC_MD5", "HMAC_SHA1", "HMAC_SHA256", "HMAC_SHA512",
        "MD5", "SHA1", "SHA256", "SHA512",
    ]

    public init(
        algorithm: String, hash: Data, salt: Data, key: Data? = nil, saltSeparator: Data? = nil, rounds: Int? = nil,
        memoryCost: Int? = nil, parallelization: Int? = nil, blockSize: Int? = nil, derivedKeyLength: Int? = nil,
        passwordFirst: Bool? = nil
    ) {
        self.algorithm = algorithm
        self.hash = hash
        self.salt = salt
        self.key = key
        self.saltSeparator = saltSeparator
        self.rounds = rounds
        self.memoryCost = memoryCost
        self.parallelization = parallelization
        self.blockSize = blockSize
        self.derivedKeyLength = derivedKeyLength
        self.passwordFirst = passwordFirst
    }

    /// Checks the parameters and this user's hash and salt; the refusal names what is wrong.
    public func validated() throws(AuthError) -> ImportedPasswordHash {
        try validatedParameters()
        guard !hash.isEmpty, hash.count <= 1024, salt.count <= 1024 else { throw AuthError.invalidArgument("invalid passwordHash or salt") }
        return self
    }

    /// Checks the algorithm's parameters (common to every user of an import).
    public func validatedParameters() throws(AuthError) {
        guard Self.supportedAlgorithms.contains(algorithm) else {
            if algorithm == "BCRYPT" {
                throw AuthError("UNSUPPORTED_HASH_ALGORITHM", detail: "BCRYPT hashes cannot be imported into Hearth")
            }
            throw AuthError("INVALID_HASH_ALGORITHM")
        }
        switch algorithm {
        case "SCRYPT":
            guard let key, !key.isEmpty else { throw AuthError("MISSING_SIGNER_KEY") }
            guard let rounds, (1...8).contains(rounds) else { throw AuthError("INVALID_HASH_ROUNDS") }
            guard let memoryCost, (1...14).contains(memoryCost) else { throw AuthError("INVALID_HASH_MEMORY_COST") }
        case "STANDARD_SCRYPT":
            guard let memoryCost, memoryCost > 1, memoryCost <= 1 << 20, memoryCost & (memoryCost - 1) == 0 else {
                throw AuthError("INVALID_HASH_MEMORY_COST")
            }
            guard let blockSize, (1...64).contains(blockSize) else { throw AuthError("INVALID_HASH_BLOCK_SIZE") }
            guard let parallelization, (1...16).contains(parallelization) else { throw AuthError("INVALID_HASH_PARALLELIZATION") }
            guard let derivedKeyLength, (1...128).contains(derivedKeyLength) else { throw AuthError("INVALID_HASH_DERIVED_KEY_LENGTH") }
            // Every sign-in attempt on the account pays this memory (128·N·r·p bytes): at most 256 MiB.
            guard 128 * memoryCost * blockSize * parallelization <= 256 << 20 else { throw AuthError("INVALID_HASH_MEMORY_COST") }
        case "PBKDF_SHA1", "PBKDF2_SHA256":
            guard let rounds, (0...120_000).contains(rounds) else { throw AuthError("INVALID_HASH_ROUNDS") }
        case "HMAC_MD5", "HMAC_SHA1", "HMAC_SHA256", "HMAC_SHA512":
            guard let key, !key.isEmpty else { throw AuthError("MISSING_SIGNER_KEY") }
        default:
            let least = algorithm == "MD5" ? 0 : 1
            guard (least...8192).contains(rounds ?? least) else { throw AuthError("INVALID_HASH_ROUNDS") }
        }
    }

    /// The stored form (see the type's description).
    public var stored: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return Self.prefix + json
    }

    /// The imported hash a stored password hash holds, if it is one.
    public init?(stored: String) {
        guard stored.hasPrefix(Self.prefix),
            let value = try? JSONDecoder().decode(Self.self, from: Data(stored.dropFirst(Self.prefix.count).utf8))
        else { return nil }
        self = value
    }

    /// True when `password` gives this hash; the comparison takes the same time wherever
    /// the hashes differ.
    public func verify(_ password: String) -> Bool {
        let bytes = Data(password.utf8)
        if let derived = try? derive(bytes, length: hash.count), !derived.isEmpty,
            SymmetricKey(data: derived) == SymmetricKey(data: hash)
        {
            return true
        }
        // Or the digest's lower-case hex text, as exports of digests often hold.
        guard hash.count % 2 == 0, let derived = try? derive(bytes, length: hash.count / 2), !derived.isEmpty,
            derived.count * 2 == hash.count
        else { return false }
        let hex = Data(derived.map { String(format: "%02x", $0) }.joined().utf8)
        return SymmetricKey(data: hex) == SymmetricKey(data: hash)
    }

    /// The algorithm's output for `password`; `length` is the key length for the key
    /// derivation functions whose output length is free (PBKDF2).
    private func derive(_ password: Data, length: Int) throws -> Data {
        switch algorithm {
        case "SCRYPT":
            guard let key, let rounds, let memoryCost else { return Data() }
            let derived = try KDF.Scrypt.deriveKey(
                from: password, salt: salt + (saltSeparator ?? Data()), outputByteCount: 64,
                rounds: 1 << memoryCost, blockSize: rounds, parallelism: 1)
            let cipherKey = derived.withUnsafeBytes { SymmetricKey(data: Data($0.prefix(32))) }
            return try AES._CTR.encrypt(key, using: cipherKey, nonce: AES._CTR.Nonce(nonceBytes: [UInt8](repeating: 0, count: 16)))
        case "STANDARD_SCRYPT":
            guard let memoryCost, let blockSize, let parallelization, let derivedKeyLength else { return Data() }
            let derived = try KDF.Scrypt.deriveKey(
                from: password, salt: salt, outputByteCount: derivedKeyLength,
                rounds: memoryCost, blockSize: blockSize, parallelism: parallelization)
            return derived.withUnsafeBytes { Data($0) }
        case "PBKDF_SHA1", "PBKDF2_SHA256":
            let function: KDF.Insecure.PBKDF2.HashFunction = algorithm == "PBKDF_SHA1" ? .insecureSHA1 : .sha256
            let derived = try KDF.Insecure.PBKDF2.deriveKey(
                from: password, salt: salt, using: function, outputByteCount: max(length, 1), unsafeUncheckedRounds: max(rounds ?? 1, 1))
            return derived.withUnsafeBytes { Data($0) }
        case "HMAC_MD5": return hmac(Insecure.MD5.self, password)
        case "HMAC_SHA1": return hmac(Insecure.SHA1.self, password)
        case "HMAC_SHA256": return hmac(SHA256.self, password)
        case "HMAC_SHA512": return hmac(SHA512.self, password)
        case "MD5": return repeated(Insecure.MD5.self, password)
        case "SHA1": return repeated(Insecure.SHA1.self, password)
        case "SHA256": return repeated(SHA256.self, password)
        case "SHA512": return repeated(SHA512.self, password)
        default: return Data()
        }
    }

    private func salted(_ password: Data, passwordFirstByDefault: Bool = false) -> Data {
        (passwordFirst ?? passwordFirstByDefault) ? password + salt : salt + password
    }

    private func hmac<H: HashFunction>(_: H.Type, _ password: Data) -> Data {
        Data(HMAC<H>.authenticationCode(for: salted(password, passwordFirstByDefault: true), using: SymmetricKey(data: key ?? Data())))
    }

    /// The digest of the salted password, then of that digest, `rounds` times in all (MD5
    /// allows 0 rounds, which hashes once as 1 does).
    private func repeated<H: HashFunction>(_: H.Type, _ password: Data) -> Data {
        var digest = Data(H.hash(data: salted(password)))
        for _ in 1..<max(rounds ?? 1, 1) { digest = Data(H.hash(data: digest)) }
        return digest
    }
}
