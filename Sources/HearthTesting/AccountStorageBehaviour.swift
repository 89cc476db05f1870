import Foundation
import HearthAuth
import HearthCore
import Testing

/// What every ``HearthAuth/AccountStorage`` does, written once and checked against each
/// implementation (SQLite in HearthAuthTests, PostgreSQL in HearthClusterTests), so the two
/// cannot drift apart. Each case starts from an empty store.
public enum AccountStorageBehaviour: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case insertedUserIsFoundByUIDAndEmail
    case takenUIDOrEmailIsRefused
    case phoneNumbersAndIdentitiesAreUnique
    case updateReplacesFieldsAndChecksEmailAndExistence
    case replaceSwapsTheAccountWithTheSameUID
    case modifyReadsAndWritesInOneStep
    case deleteRemovesTheUserAndWhatHangsOnIt
    case usersArePagedInByteOrder
    case searchMatchesAsSQLiteLikeDoes
    case refreshTokensAreAddedFoundAndRevokedPerUser
    case aRefreshTokenKeepsItsSessionsProviderAndClaims
    case customClaimsRoundTripAsAnObject
    case actionCodesAreFoundAndExpire
    case anActionCodeIsUsedOnceWithItsChange
    case aRefusedUseLeavesTheCodeAndTheAccount
    case listedActionCodesAreOldestFirstAndCleared
    case pendingSignInsAreTakenOnce
    case providerConfigsAreCreatedUpdatedListedAndDeleted
    case serviceAccountKeysAreKeptListedAndRevokedOnce
    case concurrentInsertsOfOneEmailLetOneWin
    case concurrentUsesOfOneCodeLetOneWin

    public var testDescription: String { rawValue }

    /// Checks this behaviour on `store`, which must be empty.
    public func check(_ store: any AccountStorage) async throws {
        let check = Checks(store: store)
        switch self {
        case .insertedUserIsFoundByUIDAndEmail: try await check.insertedUserIsFoundByUIDAndEmail()
        case .takenUIDOrEmailIsRefused: try await check.takenUIDOrEmailIsRefused()
        case .phoneNumbersAndIdentitiesAreUnique: try await check.phoneNumbersAndIdentitiesAreUnique()
        case .updateReplacesFieldsAndChecksEmailAndExistence: try await check.updateReplacesFieldsAndChecksEmailAndExistence()
        case .replaceSwapsTheAccountWithTheSameUID: try await check.replaceSwapsTheAccountWithTheSameUID()
        case .modifyReadsAndWritesInOneStep: try await check.modifyReadsAndWritesInOneStep()
        case .deleteRemovesTheUserAndWhatHangsOnIt: try await check.deleteRemovesTheUserAndWhatHangsOnIt()
        case .usersArePagedInByteOrder: try await check.usersArePagedInByteOrder()
        case .searchMatchesAsSQLiteLikeDoes: try await check.searchMatchesAsSQLiteLikeDoes()
        case .refreshTokensAreAddedFoundAndRevokedPerUser: try await check.refreshTokensAreAddedFoundAndRevokedPerUser()
        case .aRefreshTokenKeepsItsSessionsProviderAndClaims: try await check.aRefreshTokenKeepsItsSessionsProviderAndClaims()
        case .customClaimsRoundTripAsAnObject: try await check.customClaimsRoundTripAsAnObject()
        case .actionCodesAreFoundAndExpire: try await check.actionCodesAreFoundAndExpire()
        case .anActionCodeIsUsedOnceWithItsChange: try await check.anActionCodeIsUsedOnceWithItsChange()
        case .aRefusedUseLeavesTheCodeAndTheAccount: try await check.aRefusedUseLeavesTheCodeAndTheAccount()
        case .listedActionCodesAreOldestFirstAndCleared: try await check.listedActionCodesAreOldestFirstAndCleared()
        case .pendingSignInsAreTakenOnce: try await check.pendingSignInsAreTakenOnce()
        case .providerConfigsAreCreatedUpdatedListedAndDeleted: try await check.providerConfigsAreCreatedUpdatedListedAndDeleted()
        case .serviceAccountKeysAreKeptListedAndRevokedOnce: try await check.serviceAccountKeysAreKeptListedAndRevokedOnce()
        case .concurrentInsertsOfOneEmailLetOneWin: try await check.concurrentInsertsOfOneEmailLetOneWin()
        case .concurrentUsesOfOneCodeLetOneWin: try await check.concurrentUsesOfOneCodeLetOneWin()
        }
    }

    /// An account as the service would make it: with an email, a password account; without, anonymous.
    public static func user(_ uid: String, email: String? = nil, at time: Int64 = 1_700_000_000_000) -> UserRecord {
        UserRecord(
            uid: uid, email: email, passwordHash: email == nil ? nil : "scrypt$1024$8$1$AAAA$BBBB",
            provider: email == nil ? "anonymous" : "password", createdAt: time, validSince: time / 1000)
    }

    /// A 32-byte digest made from `text` (the stores only compare digests).
    public static func digest(_ text: String) -> Data { Data(text.utf8) + Data(repeating: 0, count: 32 - text.utf8.count) }

    /// Expects `work` to throw `expected`.
    static func expect(
        _ expected: AuthError, sourceLocation: SourceLocation = #_sourceLocation, _ work: () async throws -> Void
    ) async {
        do {
            try await work()
            Issue.record("expected \(expected.code), nothing was thrown", sourceLocation: sourceLocation)
        } catch let error as AuthError {
            #expect(error == expected, sourceLocation: sourceLocation)
        } catch {
            Issue.record("expected \(expected.code), got \(error)", sourceLocation: sourceLocation)
        }
    }
}

extension AccountStorageBehaviour {
    /// The checks, one method each.
    struct Checks: Sendable {
        let store: any AccountStorage

        func user(_ uid: String, _ email: String?, _ time: Int64) -> UserRecord {
            AccountStorageBehaviour.user(uid, email: email, at: time)
        }

        func digest(_ text: String) -> Data { AccountStorageBehaviour.digest(text) }

        func insertedUserIsFoundByUIDAndEmail() async throws {
            var alice = user("alice", "alice@example.com", 1_700_000_000_000)
            alice.displayName = "Alice"
            alice.photoURL = "https://example.com/a.png"
            alice.emailVerified = true
            alice.lastLoginAt = 1_700_000_000_500
            alice.passwordUpdatedAt = 1_700_000_000_100
            alice.emailLinkSignIn = true
            try await store.insert(alice)
            #expect(try await store.user(uid: "alice") == alice)
            #expect(try await store.user(email: "alice@example.com") == alice)
            // The lookup lower-cases its argument: emails are stored lower-cased by the service.
            #expect(try await store.user(email: "Alice@Example.COM") == alice)
            #expect(try await store.user(uid: "bob") == nil)
            #expect(try await store.user(email: "bob@example.com") == nil)
            #expect(try await store.count() == 1)
        }

        func takenUIDOrEmailIsRefused() async throws {
            try await store.insert(user("alice", "alice@example.com", 1))
            await expect(.duplicateLocalID) { try await store.insert(user("alice", "other@example.com", 1)) }
            await expect(.emailExists) { try await store.insert(user("bob", "alice@example.com", 1)) }
            // Accounts without email do not clash with each other.
            try await store.insert(user("anon1", nil, 1))
            try await store.insert(user("anon2", nil, 1))
            #expect(try await store.count() == 3)
            #expect(try await store.user(uid: "alice")?.email == "alice@example.com")
            #expect(try await store.user(uid: "bob") == nil)
        }

        func phoneNumbersAndIdentitiesAreUnique() async throws {
            var alice = user("alice", nil, 1)
            alice.phoneNumber = "+15555550100"
            alice.identities = [
                LinkedIdentity(providerID: "github.com", rawID: "42", email: "a@example.com", displayName: "A", photoURL: "https://p/a"),
                LinkedIdentity(providerID: "google.com", rawID: "g-1"),
            ]
            try await store.insert(alice)
            #expect(try await store.user(phoneNumber: "+15555550100") == alice)
            #expect(try await store.user(providerID: "github.com", rawID: "42") == alice)
            #expect(try await store.user(providerID: "github.com", rawID: "43") == nil)
            var bob = user("bob", nil, 1)
            bob.phoneNumber = "+15555550100"
            await expect(.phoneNumberExists) { try await store.insert(bob) }
            bob.phoneNumber = nil
            bob.identities = [LinkedIdentity(providerID: "google.com", rawID: "g-1")]
            await expect(.federatedUserIDAlreadyLinked) { try await store.insert(bob) }
            // The same provider user ID at another provider is another identity.
            bob.identities = [LinkedIdentity(providerID: "oidc.corp", rawID: "g-1")]
            try await store.insert(bob)
            // Identities keep their order, and a write replaces them all.
            alice.identities.reverse()
            try await store.update(alice)
            #expect(try await store.user(uid: "alice")?.identities.map(\.providerID) == ["google.com", "github.com"])
            bob.identities.append(LinkedIdentity(providerID: "github.com", rawID: "42"))
            await expect(.federatedUserIDAlreadyLinked) { try await store.update(bob) }
            #expect(try await store.user(uid: "bob")?.identities.count == 1)
        }

        func updateReplacesFieldsAndChecksEmailAndExistence() async throws {
            try await store.insert(user("alice", "alice@example.com", 1_700_000_000_000))
            try await store.insert(user("bob", "bob@example.com", 1_700_000_000_000))
            var alice = try #require(try await store.user(uid: "alice"))
            alice.email = "alice2@example.com"
            alice.disabled = true
            alice.displayName = "Alice"
            alice.validSince = 1_800_000_000
            try await store.update(alice)
            #expect(try await store.user(uid: "alice") == alice)
            #expect(try await store.user(email: "alice2@example.com")?.uid == "alice")
            #expect(try await store.user(email: "alice@example.com") == nil)
            // Keeping one's own email is no clash; taking another's is.
            try await store.update(alice)
            alice.email = "bob@example.com"
            await expect(.emailExists) { try await store.update(alice) }
            #expect(try await store.user(uid: "alice")?.email == "alice2@example.com")
            await expect(.userNotFound) { try await store.update(user("carol", "carol@example.com", 1)) }
            #expect(try await store.user(uid: "carol") == nil)
        }

        func replaceSwapsTheAccountWithTheSameUID() async throws {
            try await store.insert(user("alice", "alice@example.com", 1))
            try await store.insert(user("bob", "bob@example.com", 1))
            try await store.addRefreshToken(digest: digest("a1"), RefreshTokenRecord(uid: "alice", createdAt: 1))
            var imported = user("alice", "alice-new@example.com", 5)
            imported.displayName = "Imported"
            try await store.replace(imported)
            #expect(try await store.user(uid: "alice") == imported)
            // The old account's sessions went with it.
            #expect(try await store.refreshToken(digest: digest("a1")) == nil)
            // A new uid is simply added; another account's email is refused.
            try await store.replace(user("carol", "carol@example.com", 1))
            await expect(.emailExists) { try await store.replace(user("dave", "bob@example.com", 1)) }
            await expect(.emailExists) { try await store.replace(user("alice", "bob@example.com", 1)) }
            #expect(try await store.user(uid: "alice") == imported)
            #expect(try await store.count() == 3)
        }

        func modifyReadsAndWritesInOneStep() async throws {
            try await store.insert(user("alice", "alice@example.com", 1_700_000_000_000))
            try await store.insert(user("bob", "bob@example.com", 1_700_000_000_000))
            let (changed, previous) = try await store.modify(uid: "alice") { user -> String? in
                defer { user.displayName = "Alice" }
                return user.displayName
            }
            #expect(previous == nil)
            #expect(changed.displayName == "Alice")
            #expect(try await store.user(uid: "alice") == changed)
            await expect(.userNotFound) { try await store.modify(uid: "nobody") { $0.disabled = true } }
            // A change that throws writes nothing; one that takes another's email is refused.
            await expect(.userDisabled) {
                try await store.modify(uid: "alice") { user in
                    user.displayName = "Not written"
                    throw AuthError.userDisabled
                }
            }
            await expect(.emailExists) { try await store.modify(uid: "alice") { $0.email = "bob@example.com" } }
            #expect(try await store.user(uid: "alice") == changed)
            // Changes made at once each see the one before: none is lost.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 {
                    group.addTask { try await store.modify(uid: "alice") { $0.validSince += 1 } }
                }
                try await group.waitForAll()
            }
            #expect(try await store.user(uid: "alice")?.validSince == 1_700_000_000 + 20)
        }

        func deleteRemovesTheUserAndWhatHangsOnIt() async throws {
            var alice = user("alice", "alice@example.com", 1)
            alice.identities = [LinkedIdentity(providerID: "github.com", rawID: "42")]
            try await store.insert(alice)
            try await store.insert(user("bob", nil, 1))
            try await store.addRefreshToken(digest: digest("a1"), RefreshTokenRecord(uid: "alice", createdAt: 1))
            try await store.addRefreshToken(digest: digest("a2"), RefreshTokenRecord(uid: "alice", createdAt: 2))
            try await store.addRefreshToken(digest: digest("b1"), RefreshTokenRecord(uid: "bob", createdAt: 3))
            let code = ActionCode(kind: .passwordReset, uid: "alice", email: "alice@example.com", createdAt: 1, expiresAt: 100)
            try await store.addActionCode(digest: digest("c1"), code)
            #expect(try await store.delete(uid: "alice"))
            #expect(try await store.user(uid: "alice") == nil)
            #expect(try await store.refreshToken(digest: digest("a1")) == nil)
            #expect(try await store.refreshToken(digest: digest("a2")) == nil)
            #expect(try await store.refreshToken(digest: digest("b1"))?.uid == "bob")
            #expect(try await store.user(providerID: "github.com", rawID: "42") == nil)
            await expect(.invalidOOBCode) { _ = try await store.actionCode(digest: digest("c1"), now: 2) }
            #expect(try await !store.delete(uid: "alice"))
            #expect(try await store.count() == 1)
            // The identity is free again.
            var carol = user("carol", nil, 1)
            carol.identities = alice.identities
            try await store.insert(carol)
        }

        func usersArePagedInByteOrder() async throws {
            for uid in ["d", "a", "e", "c", "b", "Z", "é"] { try await store.insert(user(uid, nil, 1)) }
            // Byte order (UTF-8), as SQLite compares text: capitals first, accented letters last.
            #expect(try await store.users(after: nil, limit: 10).map(\.uid) == ["Z", "a", "b", "c", "d", "e", "é"])
            #expect(try await store.users(after: "Z", limit: 2).map(\.uid) == ["a", "b"])
            #expect(try await store.users(after: "b", limit: 2).map(\.uid) == ["c", "d"])
            #expect(try await store.users(after: "d", limit: 2).map(\.uid) == ["e", "é"])
            #expect(try await store.users(after: "é", limit: 2).isEmpty)
            #expect(try await store.users(after: "bb", limit: 10).map(\.uid) == ["c", "d", "e", "é"])
        }

        func searchMatchesAsSQLiteLikeDoes() async throws {
            var alice = user("alice-1", "alice@example.com", 1)
            alice.displayName = "Alice Smith"
            alice.phoneNumber = "+15555550100"
            var bob = user("Bob-2", "bob@example.org", 1)
            bob.displayName = "Bob 100%_done"
            bob.disabled = true
            var elodie = user("elodie-3", nil, 1)
            elodie.displayName = "Élodie"
            for account in [alice, bob, elodie] { try await store.insert(account) }
            func uids(_ text: String, disabled: Bool? = nil, after: String? = nil, limit: Int = 10) async throws -> [String] {
                try await store.search(text, disabled: disabled, after: after, limit: limit).map(\.uid)
            }
            #expect(try await uids("SMITH") == ["alice-1"])
            #expect(try await uids("example") == ["Bob-2", "alice-1"])
            #expect(try await uids("bob-2") == ["Bob-2"])
            #expect(try await uids("5555") == ["alice-1"])
            #expect(try await uids(".org") == ["Bob-2"])
            // Wildcards are literal text.
            #expect(try await uids("100%_") == ["Bob-2"])
            #expect(try await uids("%") == ["Bob-2"])
            #expect(try await uids("_") == ["Bob-2"])
            // The disabled filter, and paging by uid.
            #expect(try await uids("example", disabled: true) == ["Bob-2"])
            #expect(try await uids("example", disabled: false) == ["alice-1"])
            #expect(try await uids("example", after: "Bob-2") == ["alice-1"])
            #expect(try await uids("example", limit: 1) == ["Bob-2"])
            #expect(try await uids("", limit: 10) == ["Bob-2", "alice-1", "elodie-3"])
            // Only ASCII letters ignore case (SQLite's LIKE and lower()).
            #expect(try await uids("lodie") == ["elodie-3"])
            #expect(try await uids("élodie").isEmpty)
            #expect(try await uids("Élodie").isEmpty)
        }

        func refreshTokensAreAddedFoundAndRevokedPerUser() async throws {
            try await store.insert(user("alice", nil, 1))
            try await store.insert(user("bob", nil, 1))
            try await store.addRefreshToken(digest: digest("a1"), RefreshTokenRecord(uid: "alice", createdAt: 1_700_000_000_123))
            try await store.addRefreshToken(digest: digest("b1"), RefreshTokenRecord(uid: "bob", createdAt: 42))
            let found = try #require(try await store.refreshToken(digest: digest("a1")))
            #expect(found.uid == "alice")
            #expect(found.createdAt == 1_700_000_000_123)
            #expect(!found.revoked)
            #expect(try await store.refreshToken(digest: digest("zz")) == nil)
            try await store.revokeRefreshTokens(uid: "alice", now: 1_700_000_001_000)
            // Kept as revoked (its refresh answers TOKEN_EXPIRED), and forgotten after 30 days.
            #expect(try await store.refreshToken(digest: digest("a1"))?.revoked == true)
            #expect(try await store.refreshToken(digest: digest("b1"))?.revoked == false)
            try await store.revokeRefreshTokens(uid: "bob", now: 1_700_000_001_000 + 31 * 24 * 3_600_000)
            #expect(try await store.refreshToken(digest: digest("a1")) == nil)
            #expect(try await store.refreshToken(digest: digest("b1"))?.revoked == true)
            // One token ends only for its own account.
            try await store.addRefreshToken(digest: digest("a2"), RefreshTokenRecord(uid: "alice", createdAt: 5))
            #expect(try await !store.revokeRefreshToken(digest: digest("a2"), uid: "bob"))
            #expect(try await store.revokeRefreshToken(digest: digest("a2"), uid: "alice"))
            #expect(try await store.refreshToken(digest: digest("a2")) == nil)
            // A token must belong to an existing account.
            await #expect(throws: (any Error).self) {
                try await store.addRefreshToken(digest: digest("x1"), RefreshTokenRecord(uid: "nobody", createdAt: 1))
            }
        }

        func aRefreshTokenKeepsItsSessionsProviderAndClaims() async throws {
            try await store.insert(user("alice", nil, 1))
            let claims = Node.object([(ChildKey("premium"), .bool(true)), (ChildKey("tier"), .int(2))])
            let session = RefreshTokenRecord(uid: "alice", createdAt: 9, provider: "custom", claims: claims)
            try await store.addRefreshToken(digest: digest("s1"), session)
            try await store.addRefreshToken(digest: digest("s2"), RefreshTokenRecord(uid: "alice", createdAt: 10))
            #expect(try await store.refreshToken(digest: digest("s1")) == session)
            let plain = try #require(try await store.refreshToken(digest: digest("s2")))
            #expect(plain.provider == nil)
            #expect(plain.claims == .null)
        }

        func customClaimsRoundTripAsAnObject() async throws {
            let claims = Node.object([
                (ChildKey("admin"), .bool(true)),
                (ChildKey("level"), .int(3)),
                (ChildKey("ratio"), .double(0.5)),
                (ChildKey("team"), .object([(ChildKey("name"), .string("red")), (ChildKey("size"), .int(4))])),
            ])
            var alice = user("alice", nil, 1)
            alice.customClaims = claims
            try await store.insert(alice)
            let stored = try #require(try await store.user(uid: "alice"))
            #expect(stored.customClaims == claims)
            #expect(stored.customClaims.child(ChildKey("team")).child(ChildKey("name")) == .string("red"))
            // Clearing them stores no claims at all.
            alice.customClaims = .null
            try await store.update(alice)
            #expect(try await store.user(uid: "alice")?.customClaims == .null)
        }

        func actionCodesAreFoundAndExpire() async throws {
            try await store.insert(user("alice", "alice@example.com", 1))
            let code = ActionCode(
                kind: .verifyAndChangeEmail, uid: "alice", email: "alice@example.com", newEmail: "new@example.com", createdAt: 1_000,
                expiresAt: 2_000, continueURL: "https://app.example.com/done")
            try await store.addActionCode(digest: digest("c1"), code)
            #expect(try await store.actionCode(digest: digest("c1"), now: 2_000) == code)
            await expect(.expiredOOBCode) { _ = try await store.actionCode(digest: digest("c1"), now: 2_001) }
            await expect(.invalidOOBCode) { _ = try await store.actionCode(digest: digest("zz"), now: 1_500) }
            // A sign-in link for an address with no account yet has no uid.
            let signIn = ActionCode(kind: .emailSignIn, uid: nil, email: "new@example.com", createdAt: 1_500, expiresAt: 9_000)
            try await store.addActionCode(digest: digest("c2"), signIn)
            #expect(try await store.actionCode(digest: digest("c2"), now: 1_600) == signIn)
            // Adding a code forgets the expired ones.
            let later = ActionCode(kind: .verifyEmail, uid: "alice", email: "alice@example.com", createdAt: 3_000, expiresAt: 4_000)
            try await store.addActionCode(digest: digest("c3"), later)
            await expect(.invalidOOBCode) { _ = try await store.actionCode(digest: digest("c1"), now: 1_500) }
            #expect(try await store.actionCode(digest: digest("c2"), now: 3_000) == signIn)
        }

        func anActionCodeIsUsedOnceWithItsChange() async throws {
            try await store.insert(user("alice", "alice@example.com", 1_000))
            try await store.addRefreshToken(digest: digest("a1"), RefreshTokenRecord(uid: "alice", createdAt: 1_000))
            let reset = ActionCode(kind: .passwordReset, uid: "alice", email: "alice@example.com", createdAt: 1_000, expiresAt: 9_000)
            let other = ActionCode(kind: .verifyEmail, uid: "alice", email: "alice@example.com", createdAt: 1_000, expiresAt: 9_000)
            try await store.addActionCode(digest: digest("r1"), reset)
            try await store.addActionCode(digest: digest("v1"), other)
            let recovery = ActionCode(kind: .recoverEmail, uid: "alice", email: "x@example.com", createdAt: 2_000, expiresAt: 9_000)
            let used = try await store.consumeActionCode(digest: digest("r1"), now: 2_000) { code in
                .uid(try #require(code.uid))
            } apply: { code, found in
                var user = try #require(found)
                user.displayName = "Reset"
                return (AccountChange(
                    user: user, revokesSessions: true, deletesActionCodes: true,
                    newActionCode: AccountChange.NewActionCode(digest: digest("n1"), code: recovery)), code)
            }
            #expect(used == reset)
            #expect(try await store.user(uid: "alice")?.displayName == "Reset")
            #expect(try await store.refreshToken(digest: digest("a1"))?.revoked == true)
            // The account's other codes went; the new one was added after they did.
            await expect(.invalidOOBCode) { _ = try await store.actionCode(digest: digest("v1"), now: 2_000) }
            #expect(try await store.actionCode(digest: digest("n1"), now: 2_000) == recovery)
            // Used up.
            await expect(.invalidOOBCode) {
                _ = try await store.consumeActionCode(digest: digest("r1"), now: 2_000) { _ in nil } apply: { _, _ in (AccountChange(), 0) }
            }
            // A use can make an account (a sign-in link to a new address), found by address.
            let link = ActionCode(kind: .emailSignIn, uid: nil, email: "bob@example.com", createdAt: 2_000, expiresAt: 9_000)
            try await store.addActionCode(digest: digest("l1"), link)
            let made = try await store.consumeActionCode(digest: digest("l1"), now: 2_500) { code in
                .email(code.email)
            } apply: { code, found in
                #expect(found == nil)
                let bob = user("bob", code.email, 2_500)
                return (AccountChange(user: bob, isNew: true), bob)
            }
            #expect(try await store.user(email: "bob@example.com") == made)
            let again = ActionCode(kind: .emailSignIn, uid: nil, email: "bob@example.com", createdAt: 2_600, expiresAt: 9_000)
            try await store.addActionCode(digest: digest("l2"), again)
            let seen = try await store.consumeActionCode(digest: digest("l2"), now: 2_600) { .email($0.email) } apply: { _, found in
                (AccountChange(), found)
            }
            #expect(seen == made)
        }

        func aRefusedUseLeavesTheCodeAndTheAccount() async throws {
            try await store.insert(user("alice", "alice@example.com", 1_000))
            try await store.insert(user("bob", "bob@example.com", 1_000))
            let change = ActionCode(
                kind: .verifyAndChangeEmail, uid: "alice", email: "alice@example.com", newEmail: "bob@example.com", createdAt: 1_000,
                expiresAt: 9_000)
            try await store.addActionCode(digest: digest("c1"), change)
            // The change takes an address another account has: refused, nothing written.
            await expect(.emailExists) {
                _ = try await store.consumeActionCode(digest: digest("c1"), now: 2_000) { .uid($0.uid ?? "") } apply: { code, found in
                    var user = try #require(found)
                    user.email = code.newEmail
                    return (AccountChange(user: user, deletesActionCodes: true), 0)
                }
            }
            #expect(try await store.actionCode(digest: digest("c1"), now: 2_000) == change)
            #expect(try await store.user(uid: "alice")?.email == "alice@example.com")
            // The lookup may refuse too.
            await expect(.invalidEmail) {
                _ = try await store.consumeActionCode(digest: digest("c1"), now: 2_000) { _ in throw AuthError.invalidEmail } apply: {
                    _, _ in (AccountChange(), 0)
                }
            }
            // An expired code is refused and kept (until a newer code sweeps it).
            await expect(.expiredOOBCode) {
                _ = try await store.consumeActionCode(digest: digest("c1"), now: 9_001) { _ in nil } apply: { _, _ in (AccountChange(), 0) }
            }
            #expect(try await store.actionCode(digest: digest("c1"), now: 2_000) == change)
        }

        func listedActionCodesAreOldestFirstAndCleared() async throws {
            try await store.insert(user("alice", "alice@example.com", 1))
            let first = ActionCode(kind: .verifyEmail, uid: "alice", email: "alice@example.com", createdAt: 10, expiresAt: 9_000)
            let second = ActionCode(kind: .passwordReset, uid: "alice", email: "alice@example.com", createdAt: 10, expiresAt: 9_000)
            let third = ActionCode(kind: .emailSignIn, uid: nil, email: "x@example.com", createdAt: 5, expiresAt: 9_000)
            try await store.addActionCode(digest: digest("c1"), first, listed: (code: "one", link: "https://l/1"))
            try await store.addActionCode(digest: digest("c2"), second, listed: (code: "two", link: "https://l/2"))
            try await store.addActionCode(digest: digest("c3"), third, listed: (code: "three", link: "https://l/3"))
            try await store.addActionCode(digest: digest("c4"), first)
            // By creation time, then in the order added.
            #expect(try await store.listedActionCodes() == [
                ListedActionCode(code: third, oobCode: "three", link: "https://l/3"),
                ListedActionCode(code: first, oobCode: "one", link: "https://l/1"),
                ListedActionCode(code: second, oobCode: "two", link: "https://l/2"),
            ])
            try await store.clearListedActionCodes()
            #expect(try await store.listedActionCodes().isEmpty)
            // Codes kept only as digests stay.
            #expect(try await store.actionCode(digest: digest("c4"), now: 20) == first)
        }

        func pendingSignInsAreTakenOnce() async throws {
            let pending = PendingSignIn(
                providerID: "github.com", state: "s", nonce: "n", codeVerifier: "v", redirectURI: "https://app/cb", expiresAt: 5_000)
            try await store.addPendingSignIn(digest: digest("p1"), pending, now: 1_000)
            #expect(try await store.takePendingSignIn(digest: digest("p1"), now: 2_000) == pending)
            #expect(try await store.takePendingSignIn(digest: digest("p1"), now: 2_000) == nil)
            // An expired one is not given, and is gone.
            try await store.addPendingSignIn(digest: digest("p2"), pending, now: 1_000)
            #expect(try await store.takePendingSignIn(digest: digest("p2"), now: 5_001) == nil)
            #expect(try await store.takePendingSignIn(digest: digest("p2"), now: 1_000) == nil)
            // Adding one forgets those expired by then.
            try await store.addPendingSignIn(digest: digest("p3"), pending, now: 1_000)
            try await store.addPendingSignIn(digest: digest("p4"), pending, now: 6_000)
            #expect(try await store.takePendingSignIn(digest: digest("p3"), now: 1_000) == nil)
        }

        func providerConfigsAreCreatedUpdatedListedAndDeleted() async throws {
            func config(_ id: String, _ name: String) -> ProviderConfig {
                ProviderConfig(
                    id: id, kind: ProviderConfig.Kind(providerID: id)!,
                    resource: .object([(ChildKey("displayName"), .string(name)), (ChildKey("enabled"), .bool(true))]))
            }
            try await store.putProviderConfig(config("oidc.b", "B"), create: true, now: 1)
            try await store.putProviderConfig(config("oidc.a", "A"), create: true, now: 1)
            try await store.putProviderConfig(config("github.com", "GitHub"), create: true, now: 1)
            try await store.putProviderConfig(config("saml.x", "X"), create: true, now: 1)
            await expect(AuthError("CONFIGURATION_EXISTS")) {
                try await store.putProviderConfig(config("oidc.a", "Again"), create: true, now: 2)
            }
            await expect(.configurationNotFound) { try await store.putProviderConfig(config("oidc.zz", "Z"), create: false, now: 2) }
            try await store.putProviderConfig(config("oidc.a", "A2"), create: false, now: 2)
            #expect(try await store.providerConfig(id: "oidc.a") == config("oidc.a", "A2"))
            #expect(try await store.providerConfig(id: "oidc.zz") == nil)
            #expect(try await store.providerConfigs(kind: nil, after: nil, limit: 10).map(\.id) == ["github.com", "oidc.a", "oidc.b", "saml.x"])
            #expect(try await store.providerConfigs(kind: .oidc, after: nil, limit: 10).map(\.id) == ["oidc.a", "oidc.b"])
            #expect(try await store.providerConfigs(kind: .oidc, after: "oidc.a", limit: 10).map(\.id) == ["oidc.b"])
            #expect(try await store.providerConfigs(kind: nil, after: nil, limit: 2).map(\.id) == ["github.com", "oidc.a"])
            #expect(try await store.deleteProviderConfig(id: "oidc.a"))
            #expect(try await !store.deleteProviderConfig(id: "oidc.a"))
            #expect(try await store.providerConfig(id: "oidc.a") == nil)
        }

        func serviceAccountKeysAreKeptListedAndRevokedOnce() async throws {
            func key(_ id: String, at time: Int64) -> ServiceAccountKey {
                ServiceAccountKey(
                    id: id, clientEmail: "ops@proj.iam.gserviceaccount.com", publicKeyPEM: "-----BEGIN PUBLIC KEY-----\n\(id)",
                    tokenURI: "https://hearth.example.com/oauth2/token", createdAt: time)
            }
            try await store.addServiceAccountKey(key("b", at: 2))
            try await store.addServiceAccountKey(key("a", at: 1))
            #expect(try await store.serviceAccountKey(id: "b") == key("b", at: 2))
            #expect(try await store.serviceAccountKey(id: "c") == nil)
            #expect(try await store.serviceAccountKeys().map(\.id) == ["a", "b"])
            #expect(try await store.revokeServiceAccountKey(id: "a", now: 5))
            #expect(try await !store.revokeServiceAccountKey(id: "a", now: 6), "revoked once, at the first time")
            #expect(try await !store.revokeServiceAccountKey(id: "c", now: 6))
            #expect(try await store.serviceAccountKey(id: "a")?.revokedAt == 5)
            #expect(try await store.serviceAccountKey(id: "b")?.revokedAt == nil)
        }

        func concurrentInsertsOfOneEmailLetOneWin() async throws {
            let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        do {
                            try await store.insert(user("u\(index)", "same@example.com", 1))
                            return "created"
                        } catch let error as AuthError {
                            return error.code
                        }
                    }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == "created" }.count == 1)
            #expect(outcomes.filter { $0 == "EMAIL_EXISTS" }.count == 7)
            #expect(try await store.count() == 1)
        }

        func concurrentUsesOfOneCodeLetOneWin() async throws {
            try await store.insert(user("alice", "alice@example.com", 1))
            let code = ActionCode(kind: .verifyEmail, uid: "alice", email: "alice@example.com", createdAt: 1, expiresAt: 9_000)
            try await store.addActionCode(digest: digest("c1"), code)
            let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        do {
                            _ = try await store.consumeActionCode(digest: digest("c1"), now: 10) { .uid($0.uid ?? "") } apply: {
                                _, found in
                                var user = try #require(found)
                                user.validSince += 1
                                return (AccountChange(user: user), 0)
                            }
                            return "used"
                        } catch let error as AuthError {
                            return error.code
                        }
                    }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == "used" }.count == 1)
            #expect(outcomes.filter { $0 == "INVALID_OOB_CODE" }.count == 7)
            #expect(try await store.user(uid: "alice")?.validSince == 1 / 1000 + 1)
        }

        private func expect(
            _ expected: AuthError, sourceLocation: SourceLocation = #_sourceLocation, _ work: () async throws -> Void
        ) async {
            await AccountStorageBehaviour.expect(expected, sourceLocation: sourceLocation, work)
        }
    }
}
