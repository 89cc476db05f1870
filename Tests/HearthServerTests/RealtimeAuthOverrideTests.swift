import Foundation
import HearthAuth
import HearthCore
@testable import HearthEngine
import HearthProtocol
import HearthRules
import HearthStore
import HearthTesting
import Logging
import NIOCore
import Synchronization
import Testing

/// An admin's auth override (`authvar` in `gauth`: firebase-admin's
/// `databaseAuthVariableOverride`) names a uid of the admin's choosing, with no account behind
/// it. The account gate's rechecks (each keep-alive round, in case another node disabled or
/// deleted an account) must leave such a session signed in, and its onDisconnect operations
/// must run, while a session signed in with the ID token of an account deleted since is
/// signed out. Driven in process, so the recheck runs when the test says.
@Suite("Realtime auth override")
struct RealtimeAuthOverrideTests {
    static let rules = #"{"rules": {"users": {"$uid": {".read": "auth != null && auth.uid == $uid", ".write": "auth != null && auth.uid == $uid"}}}}"#

    /// A session and everything it sent, as text frames.
    final class Client {
        let session: RealtimeSession
        private(set) var received: [String] = []

        init(_ session: RealtimeSession) { self.session = session }

        /// Sends `action` with `body` as request `id`; returns the answer's status (`ok`, …)
        /// once it comes (a write answers when it is committed).
        func request(_ id: Int, _ action: String, _ body: String) async throws -> String? {
            await session.receive(try RealtimeClientMessage.parse(#"{"t":"d","d":{"r":\#(id),"a":"\#(action)","b":\#(body)}}"#))
            while true {
                for text in received {
                    guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                        let data = object["d"] as? [String: Any], data["r"] as? Int == id, let answer = data["b"] as? [String: Any]
                    else { continue }
                    return answer["s"] as? String
                }
                await session.outbound.waitForWork()
                drain()
            }
        }

        /// Takes what is waiting.
        func drain() {
            while let item = session.outbound.takeNow() {
                if case .events(let events) = item { received += events.map { String(buffer: $0.bytes) } }
            }
        }

        /// Whether it was told its sign-in ended (`ac`).
        var wasSignedOut: Bool {
            drain()
            return received.contains { $0.contains(#""a":"ac""#) && $0.contains("invalid_token") }
        }
    }

    @Test func anOverrideOutlastsTheGatesRecheckAndItsOnDisconnectRunsWhileADeletedAccountsTokenIsSignedOut() async throws {
        let directory = try TemporaryDirectory(prefix: "auth-override")
        defer { directory.remove() }
        let logger = Logger(label: "auth-override-test")
        let data = try DataFolder(url: directory.url.appendingPathComponent("data"), logger: logger)
        defer { data.close() }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let rules = RulesRegistry(defaultRules: try SecurityRules(parsing: Self.rules))
        let operations = DatabaseOperations(
            databases: data, rules: rules, hub: ListenerHub(rules: { rules.loadedRules(named: $0) }), clock: { now }, logger: logger)
        let database = try await operations.database(named: "default", creating: true)
        // Every account exists until `deleted`; then none does (as another node deleting them is seen).
        let deleted = Mutex(false)
        let gate = AccountGate(ttl: 0, clock: { now }) { uid in
            deleted.withLock { $0 } ? nil : UserRecord(uid: uid, provider: "password", createdAt: 0, validSince: 0)
        }
        let issuer = await TokenIssuer(
            privateKey: try TokenIssuer.loadOrCreateKey(at: directory.url.appendingPathComponent("key.pem")), projectID: "test")
        let service = RealtimeService(
            operations: operations, admin: AdminCredential(token: "admin-secret", emulator: false), issuer: issuer,
            disconnects: try DisconnectQueueStore(path: directory.url.appendingPathComponent("disconnects.sqlite").path),
            accounts: try AccountStore(path: directory.url.appendingPathComponent("accounts.sqlite").path), gate: gate, logger: logger)

        let worker = Client(service.openSession(on: database, host: "localhost"))
        #expect(try await worker.request(1, "gauth", #"{"cred":"admin-secret","authvar":{"uid":"worker"}}"#) == "ok")
        #expect(try await worker.request(2, "p", #"{"p":"/users/worker","d":{"online":true}}"#) == "ok")
        #expect(try await worker.request(3, "o", #"{"p":"/users/worker/online","d":false}"#) == "ok")
        let person = Client(service.openSession(on: database, host: "localhost"))
        let token = try await issuer.idToken(
            for: UserRecord(uid: "ann", provider: "password", createdAt: 0, validSince: 0), signInProvider: "password",
            authTime: now / 1000, now: now / 1000)
        #expect(try await person.request(1, "auth", #"{"cred":"\#(token)"}"#) == "ok")
        #expect(try await person.request(2, "g", #"{"p":"/users/ann"}"#) == "ok")

        deleted.withLock { $0 = true }
        await worker.session.recheckCredential()
        await person.session.recheckCredential()
        // Ann's token names an account that is gone: signed out, and told (`ac`).
        #expect(person.wasSignedOut)
        #expect(try await person.request(3, "g", #"{"p":"/users/ann"}"#) == "permission_denied")
        // The override names no account: it stays, and still reads and writes as `worker`.
        #expect(!worker.wasSignedOut)
        #expect(try await worker.request(4, "g", #"{"p":"/users/worker"}"#) == "ok")

        // Its onDisconnect write runs when it goes.
        await service.close(worker.session)
        #expect(database.value(at: try Path(parsing: "users/worker/online")) == .bool(false))
        await service.close(person.session)
    }
}
