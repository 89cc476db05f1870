import Crypto
import CryptoExtras
import Foundation

/// Hashes passwords with scrypt (swift-crypto's BoringSSL implementation) and checks them.
///
/// A stored hash reads `scrypt$<N>$<r>$<p>$<salt>$<hash>` (salt and hash in base64), so the
/// cost can be raised later without losing older hashes. The defaults are Firebase's own
/// scrypt cost (N = 2^14, r = 8, p = 1).
public struct PasswordHasher: Sendable {
    public var rounds: Int
    public var blockSize: Int
    public var parallelism: Int

    public init(rounds: Int = 1 << 14, blockSize: Int = 8, parallelism: Int = 1) {
        self.rounds = rounds
        self.blockSize = blockSize
        self.parallelism = parallelism
    }

    /// A new salted hash of `password`.
    public func hash(_ password: String) throws -> String {
        let salt = SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) }
        let derived = try Self.derive(password, salt: salt, rounds: rounds, blockSize: blockSize, parallelism: parallelism)
        let hash = derived.withUnsafeBytes { Data($0) }
        return ["scrypt", String(rounds), String(blockSize), String(parallelism), salt.base64EncodedString(), hash.base64EncodedString()]
            .joined(separator: "$")
    }

    /// True when `password` matches `stored`; the comparison takes the same time wherever the
    /// hashes differ.
    public func verify(_ password: String, against stored: String) -> Bool {
        if let imported = ImportedPasswordHash(stored: stored) { return imported.verify(password) }
        let parts = stored.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0] == "scrypt",
            let rounds = Int(parts[1]), let blockSize = Int(parts[2]), let parallelism = Int(parts[3]),
            let salt = Data(base64Encoded: String(parts[4])), let expected = Data(base64Encoded: String(parts[5])),
            let derived = try? Self.derive(password, salt: salt, rounds: rounds, blockSize: blockSize, parallelism: parallelism)
        else { return false }
        // SymmetricKey's == compares in constant time.
        return derived == SymmetricKey(data: expected)
    }

    /// True when `stored` is not this hasher's own kind at its cost (an imported hash, or a
    /// cheaper scrypt): the next successful sign-in replaces it.
    public func needsRehash(_ stored: String) -> Bool {
        stored != "" && !stored.hasPrefix("scrypt$\(rounds)$\(blockSize)$\(parallelism)$")
    }

    /// A stored hash as Firebase exports it to an admin (`accounts:batchGet`): Hearth's own
    /// scrypt as base64 hash and salt; a hash imported with another algorithm as empty strings,
    /// as Firebase answers for those.
    public static func exported(_ stored: String) -> (hash: String, salt: String) {
        let parts = stored.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0] == "scrypt" else { return ("", "") }
        return (String(parts[5]), String(parts[4]))
    }

    private static func derive(_ password: String, salt: Data, rounds: Int, blockSize: Int, parallelism: Int) throws -> SymmetricKey {
        try KDF.Scrypt.deriveKey(
            from: Array(password.utf8), salt: salt, outputByteCount: 32,
            rounds: rounds, blockSize: blockSize, parallelism: parallelism)
    }
}
