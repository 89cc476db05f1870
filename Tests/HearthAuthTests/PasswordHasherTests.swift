import Foundation
import Testing
@testable import HearthAuth

/// Passwords are stored as salted scrypt hashes and checked without revealing where they differ.
@Suite struct PasswordHasherTests {
    // A cheaper cost keeps the tests quick; the format and the check are the same.
    let hasher = PasswordHasher(rounds: 1 << 10)

    @Test func aHashChecksOnlyItsOwnPassword() throws {
        let stored = try hasher.hash("correct horse")
        #expect(hasher.verify("correct horse", against: stored))
        #expect(!hasher.verify("correct horsE", against: stored))
        #expect(!hasher.verify("", against: stored))
        #expect(!stored.contains("correct"))
    }

    @Test func theSamePasswordHashesDifferentlyEachTime() throws {
        let first = try hasher.hash("secret1")
        let second = try hasher.hash("secret1")
        #expect(first != second)
        #expect(first.hasPrefix("scrypt$1024$8$1$"))
        #expect(hasher.verify("secret1", against: second))
    }

    @Test func theCostTravelsWithTheHash() throws {
        let stored = try PasswordHasher(rounds: 1 << 11).hash("pw123456")
        // A hasher configured differently still checks it with the stored cost.
        #expect(hasher.verify("pw123456", against: stored))
    }

    @Test func damagedHashesNeverMatch() {
        for stored in ["", "scrypt", "scrypt$1024$8$1$!!$!!", "bcrypt$10$x$y$z$w", "scrypt$x$8$1$AAAA$AAAA"] {
            #expect(!hasher.verify("anything", against: stored))
        }
    }
}
