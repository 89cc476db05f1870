import Foundation
import HearthCore
import HearthTesting
import Testing
@testable import HearthAuth

/// The account database in a real SQLite file: every ``AccountStorageBehaviour`` (the checks the
/// PostgreSQL store passes too), and persistence across reopening.
@Suite struct AccountStoreTests {
    /// Runs `body` with a store in a fresh temporary directory, removed afterwards.
    static func withStore(_ body: (AccountStore, URL) async throws -> Void) async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-accounts")
        defer { directory.remove() }
        let url = directory.url.appendingPathComponent("accounts.sqlite")
        try await body(try AccountStore(path: url.path), url)
    }

    @Test(arguments: AccountStorageBehaviour.allCases)
    func behaviour(_ behaviour: AccountStorageBehaviour) async throws {
        try await Self.withStore { store, _ in try await behaviour.check(store) }
    }

    @Test func dataSurvivesReopeningTheFile() async throws {
        try await Self.withStore { store, url in
            var alice = AccountStorageBehaviour.user("alice", email: "alice@example.com")
            alice.customClaims = .object([(ChildKey("role"), .string("admin"))])
            try await store.insert(alice)
            try await store.addRefreshToken(digest: AccountStorageBehaviour.digest("a1"), .init(uid: "alice", createdAt: 7))
            let reopened = try AccountStore(path: url.path)
            #expect(try await reopened.user(uid: "alice") == alice)
            #expect(try await reopened.refreshToken(digest: AccountStorageBehaviour.digest("a1"))?.createdAt == 7)
            #expect(try await reopened.count() == 1)
        }
    }
}
