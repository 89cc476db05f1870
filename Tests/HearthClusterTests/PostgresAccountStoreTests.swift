import Foundation
import HearthAuth
import HearthCluster
import HearthCore
import HearthTesting
import Logging
import PostgresNIO
import Testing

/// A cluster's accounts in a real PostgreSQL: every ``AccountStorageBehaviour`` (the checks
/// SQLite's store passes), then what only a cluster has: nodes (each its own connection pool)
/// racing for one email or one action code, and tokens signed by one node accepted by another.
@Suite(.serialized) struct PostgresAccountStoreTests {
    /// Runs `body` with `nodes` stores (one client each, as separate nodes would have) on a new
    /// PostgreSQL, each prepared at the same time, as nodes starting together would.
    static func withStores(
        nodes: Int = 1, _ body: ([PostgresAccountStore], [PostgresClient]) async throws -> Void
    ) async throws {
        try await TestPostgres.withClients(nodes) { clients in
            let stores = clients.map { PostgresAccountStore(client: $0, logger: ClusterLogTests.logger) }
            try await withThrowingTaskGroup(of: Void.self) { preparing in
                for store in stores { preparing.addTask { try await store.prepare() } }
                try await preparing.waitForAll()
            }
            try await body(stores, clients)
        }
    }

    @Test(arguments: AccountStorageBehaviour.allCases)
    func behaviour(_ behaviour: AccountStorageBehaviour) async throws {
        try await Self.withStores { stores, _ in try await behaviour.check(stores[0]) }
    }

    /// Two nodes sign up the same address at the same moment, round after round: each time one
    /// account is made and the other node is told EMAIL_EXISTS, as one SQLite node would say.
    @Test func twoNodesRacingForOneEmailMakeOneAccount() async throws {
        try await Self.withStores(nodes: 2) { stores, _ in
            for round in 0..<15 {
                let email = "racer\(round)@example.com"
                let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
                    for (node, store) in stores.enumerated() {
                        group.addTask {
                            do {
                                try await store.insert(AccountStorageBehaviour.user("n\(node)-r\(round)", email: email))
                                return "created"
                            } catch let error as AuthError {
                                return error.code
                            }
                        }
                    }
                    return try await group.reduce(into: [String]()) { $0.append($1) }
                }
                #expect(outcomes.sorted() == ["EMAIL_EXISTS", "created"], "round \(round)")
                #expect(try await stores[1].user(email: email) != nil)
            }
            #expect(try await stores[0].count() == 15)
        }
    }

    /// The same uid, phone number or linked identity from two nodes at once: one wins, the
    /// other gets the refusal SQLite's store gives.
    @Test func twoNodesRacingForOtherIdentifiersGetFirebasesRefusals() async throws {
        try await Self.withStores(nodes: 2) { stores, _ in
            func race(_ make: @escaping @Sendable (Int) -> UserRecord) async throws -> [String] {
                try await withThrowingTaskGroup(of: String.self) { group in
                    for (node, store) in stores.enumerated() {
                        group.addTask {
                            do {
                                try await store.insert(make(node))
                                return "created"
                            } catch let error as AuthError {
                                return error.code
                            }
                        }
                    }
                    return try await group.reduce(into: [String]()) { $0.append($1) }.sorted()
                }
            }
            for round in 0..<5 {
                let uids = try await race { _ in AccountStorageBehaviour.user("same-\(round)") }
                #expect(uids == ["DUPLICATE_LOCAL_ID", "created"])
                let phones = try await race { node in
                    var user = AccountStorageBehaviour.user("phone-\(round)-\(node)")
                    user.phoneNumber = "+1555555010\(round)"
                    return user
                }
                #expect(phones == ["PHONE_NUMBER_EXISTS", "created"])
                let identities = try await race { node in
                    var user = AccountStorageBehaviour.user("idp-\(round)-\(node)")
                    user.identities = [LinkedIdentity(providerID: "github.com", rawID: "gh-\(round)")]
                    return user
                }
                #expect(identities == ["FEDERATED_USER_ID_ALREADY_LINKED", "created"])
            }
        }
    }

    /// One emailed code used from two nodes at once, round after round: it works once.
    @Test func aCodeUsedFromTwoNodesAtOnceWorksOnce() async throws {
        try await Self.withStores(nodes: 2) { stores, _ in
            try await stores[0].insert(AccountStorageBehaviour.user("alice", email: "alice@example.com", at: 0))
            for round in 0..<15 {
                let digest = AccountStorageBehaviour.digest("code-\(round)")
                let code = ActionCode(kind: .verifyEmail, uid: "alice", email: "alice@example.com", createdAt: 1, expiresAt: 9_000)
                try await stores[round % 2].addActionCode(digest: digest, code)
                let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
                    for store in stores {
                        group.addTask {
                            do {
                                try await store.consumeActionCode(digest: digest, now: 10) { .uid($0.uid ?? "") } apply: {
                                    _, found in
                                    guard var user = found else { throw AuthError.userNotFound }
                                    user.validSince += 1
                                    return (AccountChange(user: user), ())
                                }
                                return "used"
                            } catch let error as AuthError {
                                return error.code
                            }
                        }
                    }
                    return try await group.reduce(into: [String]()) { $0.append($1) }
                }
                #expect(outcomes.sorted() == ["INVALID_OOB_CODE", "used"], "round \(round)")
            }
            // Each use was written once, none lost.
            #expect(try await stores[1].user(uid: "alice")?.validSince == 15)
        }
    }

    /// Nodes asking for the same secret at once all get the one that was stored first.
    @Test func racingNodesShareOneSecret() async throws {
        try await Self.withStores(nodes: 3) { _, clients in
            let secrets = clients.map { ClusterSecrets(client: $0, logger: ClusterLogTests.logger) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for secret in secrets { group.addTask { try await secret.prepare() } }
                try await group.waitForAll()
            }
            let values = try await withThrowingTaskGroup(of: String.self) { group in
                for (index, secret) in secrets.enumerated() {
                    group.addTask { try await secret.loadOrCreate(name: "s") { "made by \(index)" } }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(Set(values).count == 1)
            #expect(try await secrets[0].value(name: "s") == values[0])
            #expect(try await secrets[2].loadOrCreate(name: "s") { "another" } == values[0])
            #expect(try await secrets[1].value(name: "missing") == nil)
        }
    }

    /// Two nodes' account services over one PostgreSQL and the cluster's shared key: a user
    /// signs up on one node and is known, refreshed and signed out on the other.
    @Test func tokensSignedOnOneNodeAreAcceptedByAnother() async throws {
        try await Self.withStores(nodes: 2) { stores, clients in
            let clock = TestClock()
            var services: [AuthService] = []
            for (store, client) in zip(stores, clients) {
                let secrets = ClusterSecrets(client: client, logger: ClusterLogTests.logger)
                try await secrets.prepare()
                services.append(
                    try await AuthService.open(
                        store: store, signingKeyPEM: try await secrets.signingKeyPEM(), projectID: "proj",
                        hasher: PasswordHasher(rounds: 1 << 10), clock: { clock.now }, logger: ClusterLogTests.logger))
            }
            let (a, b) = (services[0], services[1])
            #expect(a.issuer.keyID == b.issuer.keyID)
            let session = try await a.signUp(email: "Alice@Example.com", password: "correct horse")
            let claims = try await b.issuer.verifyIDToken(session.idToken, now: clock.now / 1000)
            #expect(claims.child(ChildKey("sub")) == .string(session.user.uid))
            #expect(try await b.user(idToken: session.idToken).email == "alice@example.com")
            let refreshed = try await b.refresh(refreshToken: session.refreshToken)
            #expect(try await a.user(idToken: refreshed.idToken).uid == session.user.uid)
            // Node B signs in with the password set on node A; node A refuses B's taken email.
            _ = try await b.signIn(email: "alice@example.com", password: "correct horse", client: "127.0.0.1")
            await #expect(throws: AuthError.emailExists) { _ = try await b.signUp(email: "alice@example.com", password: "other pass") }
            // Signing out everywhere on B ends the session A gave.
            clock.advance(by: 1_000)
            try await b.signOut(idToken: refreshed.idToken)
            await #expect(throws: AuthError.tokenExpired) { _ = try await a.refresh(refreshToken: session.refreshToken) }
        }
    }
}
