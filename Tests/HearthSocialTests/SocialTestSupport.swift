import Foundation
import HearthClient
import HearthFunctions
import HearthServer
import HearthSocial
import HearthSocialServer
import Logging
import HearthTesting
import Testing

/// A real in-process server with the app's own rules, and people using it.
struct SocialHarness {
    let server: TestServer
    /// An admin's view of the database (rules do not apply), to check what was stored. One
    /// connection, open before the test starts: a read waits only 3 s for a connection before
    /// answering from the (empty) cache, as Firebase's SDKs do, and a busy machine can take longer.
    let admin: Database

    static let rulesFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../rules").standardized
    static let databaseRules = try! String(contentsOf: rulesFolder.appendingPathComponent("database.rules.json"), encoding: .utf8)
    static let storageRules = try! String(contentsOf: rulesFolder.appendingPathComponent("storage.rules"), encoding: .utf8)

    /// The app's server side, when the harness runs it (``withServerSide(_:)``).
    var backend: SocialBackend?
    /// The server side's functions, when the harness runs them.
    var social: SocialFunctions?
    /// The words the server side masks.
    static let maskedWords = ["darn", "heck"]

    /// Runs `body` against a fresh server with the app's rules.
    static func with(_ body: @MainActor (SocialHarness) async throws -> Void) async throws {
        try await TestServer.with(configure: {
            $0.defaultRules = databaseRules
            $0.storageRules = storageRules
        }) { (server: TestServer) async throws in
            let admin = Database(url: server.baseURL, token: TestServer.adminToken)
            for await status in admin.observeSyncStatus() where status.isConnected { break }
            try await body(SocialHarness(server: server, admin: admin))
        }
    }

    /// Runs `body` against a fresh server with the app's rules and its server-side functions,
    /// in the server's process as `hearth serve` runs them.
    static func withServerSide(
        ledger: DeletedAccountsLedger? = nil, retention: SocialFunctions.Retention = .init(),
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
        _ body: @MainActor (SocialHarness) async throws -> Void
    ) async throws {
        let backend = SocialBackend()
        var logger = Logger(label: "social-functions-test")
        logger.logLevel = .warning
        let social = SocialFunctions(
            backend: backend, moderation: { TextModeration(maskedWords: maskedWords) }, now: now, ledger: ledger, retention: retention,
            logger: logger)
        let functions = try FunctionsService(
            functions: try social.definitions,
            naming: .init(databaseHost: "127.0.0.1"),
            backlog: EventBacklog(limit: 10_000),
            environment: DeliveryLane.Environment(now: { Int64(Date().timeIntervalSince1970 * 1000) }, logger: logger))
        try await TestServer.with(
            functions: functions,
            onServices: { services in
                backend.connect(SocialBackend.Parts(
                    data: DatabaseSocialData(provider: services.databases, name: services.defaultDatabase),
                    files: FileStoreSocialFiles(store: services.files), accounts: AuthServiceSocialAccounts(service: services.accounts)))
            },
            configure: {
                $0.defaultRules = databaseRules
                $0.storageRules = storageRules
            }
        ) { (server: TestServer) async throws in
            let admin = Database(url: server.baseURL, token: TestServer.adminToken)
            for await status in admin.observeSyncStatus() where status.isConnected { break }
            try await body(SocialHarness(server: server, admin: admin, backend: backend, social: social))
        }
    }

    /// Runs the server side's scheduled function `name` once, now (tests do not wait for its schedule).
    func runScheduled(_ name: String) async throws {
        let functions = try #require(social).scheduled
        let function = try #require(functions.first { $0.name == name }, "no scheduled function \(name)")
        let handler = try #require(function.handler)
        try await handler(Date())
    }

    /// The server side's account clean-up, for its checks.
    func cleanup() throws -> AccountCleanup {
        let parts = try #require(backend).parts()
        return AccountCleanup(data: parts.data, files: parts.files)
    }

    /// The profile of `uid` as stored, once `condition` holds (a write made just after signing
    /// in may still be on its way: the connection was re-authenticating, so the app did not
    /// wait for it); the last one read when it never does.
    @MainActor
    func profile(_ uid: String, until condition: (Profile) -> Bool = { _ in true }) async throws -> Profile {
        let deadline = Date().addingTimeInterval(15)
        while true {
            let snapshot = try await admin.root.child("people/\(uid)").getData()
            if snapshot.exists, let profile = try? snapshot.value(as: Profile.self), condition(profile) || Date() > deadline { return profile }
            if Date() > deadline { return try snapshot.value(as: Profile.self) }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// A new client, signed out (keeping its cache in `cacheURL`, when given).
    func client(cacheURL: URL? = nil) -> SocialClient { SocialClient(url: server.baseURL, cacheURL: cacheURL) }

    /// A new person with an account named `name` (email `<name>@example.com`, password
    /// `secret-<name>`), signed in.
    @MainActor
    func user(_ name: String, cacheURL: URL? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> SocialClient {
        let client = client(cacheURL: cacheURL)
        let session = SessionViewModel(client: client)
        session.email = "\(name.lowercased().replacingOccurrences(of: " ", with: "."))@example.com"
        session.password = "secret-\(name)"
        session.displayName = name
        await session.signUp()
        #expect(session.errorMessage == nil, "\(session.errorMessage ?? "")", sourceLocation: sourceLocation)
        _ = try #require(session.user, sourceLocation: sourceLocation)
        // Connected as them: the app does not wait for writes while its connection signs in
        // again (as after signing up), and a test that reads right after one would race it.
        for await status in client.database.observeSyncStatus() where status.isConnected && status.pendingWriteCount == 0 { break }
        return client
    }

}

/// Waits until `condition` holds (live updates arrive asynchronously), failing after `seconds`
/// (generous: a passing test never waits that long, and the whole suite shares two cores).
@MainActor
func eventually(
    _ what: String = "the condition", seconds: Double = 15, sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: @MainActor () -> Bool
) async {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline {
            Issue.record("timed out waiting for \(what)", sourceLocation: sourceLocation)
            return
        }
        try? await Task.sleep(for: .milliseconds(20))
    }
}

/// A small fake JPEG's bytes (the server does not look inside).
func jpeg(_ size: Int, seed: UInt8 = 1) -> Data {
    Data([0xFF, 0xD8, 0xFF]) + Data((0..<max(0, size - 3)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed)) })
}
