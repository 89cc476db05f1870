import Foundation
import HearthCore
import HearthTesting
import Testing
@testable import HearthAuth

/// The account database: users and refresh tokens in a real SQLite file, with uniqueness,
/// cascading deletes, paging and persistence across reopening.
@Suite struct AccountStoreTests {
    /// Runs `body` with a store in a fresh temporary directory, removed afterwards.
    static func withStore(_ body: (AccountStore, URL) throws -> Void) throws {
        let directory = try TemporaryDirectory(prefix: "hearth-accounts")
        defer { directory.remove() }
        let url = directory.url.appendingPathComponent("accounts.sqlite")
        try body(try AccountStore(path: url.path), url)
    }

    static func user(_ uid: String, email: String? = nil, at time: Int64 = 1_700_000_000_000) -> UserRecord {
        UserRecord(uid: uid, email: email, passwordHash: email == nil ? nil : "scrypt$1024$8$1$AAAA$BBBB",
                   provider: email == nil ? "anonymous" : "password", createdAt: time, validSince: time / 1000)
    }

    static func digest(_ text: String) -> Data { Data(text.utf8) + Data(repeating: 0, count: 32 - text.utf8.count) }

    @Test func anInsertedUserIsFoundByUIDAndEmail() throws {
        try Self.withStore { store, _ in
            var alice = Self.user("alice", email: "alice@example.com")
            alice.displayName = "Alice"
            alice.photoURL = "https://example.com/a.png"
            alice.emailVerified = true
            alice.lastLoginAt = 1_700_000_000_500
            try store.insert(alice)
            #expect(try store.user(uid: "alice") == alice)
            #expect(try store.user(email: "alice@example.com") == alice)
            // The lookup lower-cases its argument: emails are stored lower-cased by the service.
            #expect(try store.user(email: "Alice@Example.COM") == alice)
            #expect(try store.user(uid: "bob") == nil)
            #expect(try store.user(email: "bob@example.com") == nil)
            #expect(try store.count() == 1)
        }
    }

    @Test func aTakenUIDOrEmailIsRefused() throws {
        try Self.withStore { store, _ in
            try store.insert(Self.user("alice", email: "alice@example.com"))
            #expect(throws: AuthError.duplicateLocalID) { try store.insert(Self.user("alice", email: "other@example.com")) }
            #expect(throws: AuthError.emailExists) { try store.insert(Self.user("bob", email: "alice@example.com")) }
            // Accounts without email do not clash with each other.
            try store.insert(Self.user("anon1"))
            try store.insert(Self.user("anon2"))
            #expect(try store.count() == 3)
            #expect(try store.user(uid: "alice")?.email == "alice@example.com")
        }
    }

    @Test func updateReplacesFieldsAndChecksEmailAndExistence() throws {
        try Self.withStore { store, _ in
            try store.insert(Self.user("alice", email: "alice@example.com"))
            try store.insert(Self.user("bob", email: "bob@example.com"))
            var alice = try #require(try store.user(uid: "alice"))
            alice.email = "alice2@example.com"
            alice.disabled = true
            alice.displayName = "Alice"
            alice.validSince = 1_800_000_000
            try store.update(alice)
            #expect(try store.user(uid: "alice") == alice)
            #expect(try store.user(email: "alice2@example.com")?.uid == "alice")
            #expect(try store.user(email: "alice@example.com") == nil)
            // Keeping one's own email is no clash; taking another's is.
            try store.update(alice)
            alice.email = "bob@example.com"
            #expect(throws: AuthError.emailExists) { try store.update(alice) }
            #expect(try store.user(uid: "alice")?.email == "alice2@example.com")
            #expect(throws: AuthError.userNotFound) { try store.update(Self.user("carol", email: "carol@example.com")) }
            #expect(try store.user(uid: "carol") == nil)
        }
    }

    @Test func deleteRemovesTheUserAndTheirRefreshTokens() throws {
        try Self.withStore { store, _ in
            try store.insert(Self.user("alice", email: "alice@example.com"))
            try store.insert(Self.user("bob"))
            try store.addRefreshToken(digest: Self.digest("a1"), .init(uid: "alice", createdAt: 1))
            try store.addRefreshToken(digest: Self.digest("a2"), .init(uid: "alice", createdAt: 2))
            try store.addRefreshToken(digest: Self.digest("b1"), .init(uid: "bob", createdAt: 3))
            #expect(try store.delete(uid: "alice"))
            #expect(try store.user(uid: "alice") == nil)
            #expect(try store.refreshToken(digest: Self.digest("a1")) == nil)
            #expect(try store.refreshToken(digest: Self.digest("a2")) == nil)
            #expect(try store.refreshToken(digest: Self.digest("b1"))?.uid == "bob")
            #expect(try !store.delete(uid: "alice"))
            #expect(try store.count() == 1)
        }
    }

    @Test func usersArePagedInUIDOrder() throws {
        try Self.withStore { store, _ in
            for uid in ["d", "a", "e", "c", "b"] { try store.insert(Self.user(uid)) }
            #expect(try store.users(limit: 2).map(\.uid) == ["a", "b"])
            #expect(try store.users(after: "b", limit: 2).map(\.uid) == ["c", "d"])
            #expect(try store.users(after: "d", limit: 2).map(\.uid) == ["e"])
            #expect(try store.users(after: "e", limit: 2).isEmpty)
            #expect(try store.users(after: "bb", limit: 10).map(\.uid) == ["c", "d", "e"])
        }
    }

    @Test func refreshTokensAreAddedFoundAndRevokedPerUser() throws {
        try Self.withStore { store, _ in
            try store.insert(Self.user("alice"))
            try store.insert(Self.user("bob"))
            try store.addRefreshToken(digest: Self.digest("a1"), .init(uid: "alice", createdAt: 1_700_000_000_123))
            try store.addRefreshToken(digest: Self.digest("b1"), .init(uid: "bob", createdAt: 42))
            let found = try #require(try store.refreshToken(digest: Self.digest("a1")))
            #expect(found.uid == "alice")
            #expect(found.createdAt == 1_700_000_000_123)
            #expect(try store.refreshToken(digest: Self.digest("zz")) == nil)
            try store.revokeRefreshTokens(uid: "alice", now: 1_700_000_001_000)
            // Kept as revoked (its refresh answers TOKEN_EXPIRED), and forgotten after 30 days.
            #expect(try store.refreshToken(digest: Self.digest("a1"))?.revoked == true)
            #expect(try store.refreshToken(digest: Self.digest("b1"))?.revoked == false)
            try store.revokeRefreshTokens(uid: "bob", now: 1_700_000_001_000 + 31 * 24 * 3_600_000)
            #expect(try store.refreshToken(digest: Self.digest("a1")) == nil)
            #expect(try store.refreshToken(digest: Self.digest("b1"))?.revoked == true)
            // A token must belong to an existing account.
            #expect(throws: (any Error).self) {
                try store.addRefreshToken(digest: Self.digest("x1"), .init(uid: "nobody", createdAt: 1))
            }
        }
    }

    @Test func aRefreshTokenKeepsItsSessionsProviderAndClaims() throws {
        try Self.withStore { store, _ in
            try store.insert(Self.user("alice"))
            let claims = Node.object([(ChildKey("premium"), .bool(true)), (ChildKey("tier"), .int(2))])
            let session = AccountStore.RefreshToken(uid: "alice", createdAt: 9, provider: "custom", claims: claims)
            try store.addRefreshToken(digest: Self.digest("s1"), session)
            try store.addRefreshToken(digest: Self.digest("s2"), .init(uid: "alice", createdAt: 10))
            #expect(try store.refreshToken(digest: Self.digest("s1")) == session)
            let plain = try #require(try store.refreshToken(digest: Self.digest("s2")))
            #expect(plain.provider == nil)
            #expect(plain.claims == .null)
        }
    }

    @Test func dataSurvivesReopeningTheFile() throws {
        try Self.withStore { store, url in
            var alice = Self.user("alice", email: "alice@example.com")
            alice.customClaims = .object([(ChildKey("role"), .string("admin"))])
            try store.insert(alice)
            try store.addRefreshToken(digest: Self.digest("a1"), .init(uid: "alice", createdAt: 7))
            let reopened = try AccountStore(path: url.path)
            #expect(try reopened.user(uid: "alice") == alice)
            #expect(try reopened.refreshToken(digest: Self.digest("a1"))?.createdAt == 7)
            #expect(try reopened.count() == 1)
        }
    }

    @Test func customClaimsRoundTripAsAnObject() throws {
        try Self.withStore { store, _ in
            let claims = Node.object([
                (ChildKey("admin"), .bool(true)),
                (ChildKey("level"), .int(3)),
                (ChildKey("ratio"), .double(0.5)),
                (ChildKey("team"), .object([(ChildKey("name"), .string("red")), (ChildKey("size"), .int(4))])),
            ])
            var alice = Self.user("alice")
            alice.customClaims = claims
            try store.insert(alice)
            let stored = try #require(try store.user(uid: "alice"))
            #expect(stored.customClaims == claims)
            #expect(stored.customClaims.child(ChildKey("team")).child(ChildKey("name")) == .string("red"))
            // Clearing them stores no claims at all.
            alice.customClaims = .null
            try store.update(alice)
            #expect(try store.user(uid: "alice")?.customClaims == .null)
        }
    }
}
