import AsyncHTTPClient
import Foundation
import HearthAuth
import HearthCore
@testable import HearthFunctions
import HearthOutbox
import HearthTesting
import Logging
import Synchronization
import Testing

/// Account triggers and blocking functions against a real account service over SQLite: events
/// committed with the accounts they are about (and only then), Firebase Auth's event shape, and
/// blocking functions whose answers change accounts and sessions, whose refusals and failures
/// keep accounts out, and whose slowness is cut off at the limit.
struct AccountFunctionsTests {
    static let password = "correct horse"
    static let logger = Logger(label: "account-functions-test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// A recorder for `functions` (by change), and the account service whose store records with it.
    static func withService(
        triggers: [(String, AccountTrigger.Change)] = [], blocking: [BlockingFunction] = [],
        policy: AuthService.Policy = AuthService.Policy(),
        _ body: (AuthService, AccountStore, TestClock) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-account-functions")
        defer { directory.remove() }
        let clock = TestClock()
        let ids = Mutex(0)
        let recorder = AccountTriggerRecorder(
            subscriptions: triggers.map { .init(function: $0.0, trigger: AccountTrigger(change: $0.1)) }, projectID: "proj",
            backlog: EventBacklog(limit: 100), makeID: { "event-\(ids.withLock { $0 += 1; return $0 })" }, now: { clock.now })
        let hooks = blocking.isEmpty
            ? nil
            : try BlockingFunctions(blocking, projectID: "proj", client: .shared, activity: FunctionActivity(), now: { clock.now })
        let service = try await AuthService.open(
            in: directory.url, projectID: "proj", policy: policy, hasher: PasswordHasher(rounds: 1 << 10), events: recorder,
            blockingHooks: hooks, clock: { clock.now }, logger: logger)
        try await body(service, try #require(service.store as? AccountStore), clock)
    }

    static func events(_ store: AccountStore, for function: String) async throws -> [CloudEvent] {
        try await store.outbox.pending(for: function, after: 0, limit: 100).map { try CloudEvent(structured: $0.event.body) }
    }

    static func data(_ event: CloudEvent) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(event.data)) as? [String: Any])
    }

    // MARK: - Account triggers

    @Test func accountsMadeAndDeletedRecordFirebaseAuthEventsWithTheirCommits() async throws {
        try await Self.withService(triggers: [("made", .created), ("gone", .deleted)]) { service, store, _ in
            let session = try await service.signUp(email: "Ada@Example.com", password: Self.password, displayName: "Ada", client: "1.2.3.4")
            _ = try await service.signUp(email: nil, password: nil, client: "1.2.3.4")
            let made = try await Self.events(store, for: "made")
            #expect(made.map(\.type) == ["google.firebase.auth.user.v1.created", "google.firebase.auth.user.v1.created"])
            #expect(made[0].source == "//firebaseauth.googleapis.com/projects/proj")
            #expect(made[0].subject == "users/\(session.user.uid)")
            let data = try Self.data(made[0])
            #expect(data["uid"] as? String == session.user.uid && data["email"] as? String == "ada@example.com")
            #expect(data["displayName"] as? String == "Ada" && data["emailVerified"] as? Bool == false)
            #expect((data["providerData"] as? [[String: String]]) == [
                ["uid": "ada@example.com", "email": "ada@example.com", "displayName": "Ada", "providerId": "password"]])
            #expect((data["metadata"] as? [String: String])?["createTime"] == CloudEvent.timestamp(session.user.createdAt))
            #expect(data["passwordHash"] == nil)
            #expect(try await Self.events(store, for: "gone").isEmpty)

            try await service.deleteUser(uid: session.user.uid)
            let gone = try await Self.events(store, for: "gone")
            #expect(gone.map(\.type) == ["google.firebase.auth.user.v1.deleted"])
            #expect(try Self.data(gone[0])["email"] as? String == "ada@example.com")
            // Deleting what is not there records nothing.
            await #expect(throws: AuthError.userNotFound) { try await service.deleteUser(uid: session.user.uid) }
            #expect(try await Self.events(store, for: "gone").count == 1)
        }
    }

    @Test func refusedCreationsImportsAndCustomTokenAccountsRecordNothing() async throws {
        try await Self.withService(triggers: [("made", .created)]) { service, store, _ in
            _ = try await service.signUp(email: "ada@example.com", password: Self.password, client: "1.2.3.4")
            // A refused insert (the address is taken) rolls its event back with it.
            await #expect(throws: AuthError.emailExists) {
                _ = try await service.signUp(email: "ada@example.com", password: Self.password, client: "1.2.3.4")
            }
            // Firebase fires no creation for a first sign-in with a custom token.
            var custom = UserRecord(uid: "custom-1", provider: "custom", createdAt: 1, validSince: 0)
            try await store.insert(custom)
            // Nor for an import.
            custom.uid = "imported-1"
            custom.provider = "password"
            try await store.replace(custom)
            #expect(try await Self.events(store, for: "made").count == 1)
        }
    }

    @Test func aSwiftAccountFunctionGetsTheAccountFromItsLane() async throws {
        let seen = Mutex<[AccountChangeEvent]>([])
        let (stream, wake) = AsyncStream.makeStream(of: Void.self)
        let welcome = FunctionDefinition.onAccount(.created, name: "welcome") { event in
            seen.withLock { $0.append(event) }
            wake.yield()
        }
        let functions = try SwiftFunctionTests.service([welcome])
        let directory = try TemporaryDirectory(prefix: "hearth-account-lane")
        defer { directory.remove() }
        let service = try await AuthService.open(
            in: directory.url, projectID: "proj", hasher: PasswordHasher(rounds: 1 << 10), events: functions.accountRecorder,
            clock: { Int64(Date().timeIntervalSince1970 * 1000) }, logger: Self.logger)
        functions.attachAccounts(try #require((service.store as? AccountStore)?.outbox))
        let running = Task { await functions.run() }
        defer { running.cancel() }
        let session = try await service.signUp(email: "grace@example.com", password: Self.password, client: "1.2.3.4")
        var iterator = stream.makeAsyncIterator()
        while seen.withLock({ $0.isEmpty }) { _ = await iterator.next() }
        let event = try #require(seen.withLock { $0.first })
        #expect(event.change == .created && event.uid == session.user.uid && event.email == "grace@example.com")
        #expect(event.providerIDs == ["password"] && !event.disabled && event.customClaims == .null)
    }

    // MARK: - Blocking functions

    @Test func blockingAnswersChangeTheAccountAndTheSessionOnly() async throws {
        let asked = Mutex<[AccountBlockingEvent]>([])
        let create = BlockingFunction.swift(.beforeCreate, name: "gate") { event in
            asked.withLock { $0.append(event) }
            return AccountBlockingResponse(displayName: .some("Member"), customClaims: .object([(ChildKey("role"), .string("member"))]))
        }
        let signIn = BlockingFunction.swift(.beforeSignIn, name: "stamp") { event in
            asked.withLock { $0.append(event) }
            return AccountBlockingResponse(sessionClaims: .object([(ChildKey("via"), .string("stamp"))]))
        }
        try await Self.withService(blocking: [create, signIn]) { service, store, clock in
            let client = SignInClient(ipAddress: "10.0.0.7", userAgent: "tests", locale: "de")
            let session = try await SignInClient.$current.withValue(client) {
                try await service.signUp(email: "ada@example.com", password: Self.password, client: "10.0.0.7")
            }
            #expect(asked.withLock { $0.map(\.kind) } == [.beforeCreate, .beforeSignIn])
            #expect(asked.withLock { $0[0].client } == client && asked.withLock { $0[0].signInMethod } == "password")
            #expect(asked.withLock { $0[1].user.displayName } == "Member")
            let claims = try await service.issuer.verifyIDToken(session.idToken, now: clock.now / 1000)
            #expect(claims.child(ChildKey("role")) == .string("member") && claims.child(ChildKey("via")) == .string("stamp"))
            // The session claim belongs to the session: refreshed tokens keep it, the account does not have it.
            let refreshed = try await service.refresh(refreshToken: session.refreshToken)
            #expect(try await service.issuer.verifyIDToken(refreshed.idToken, now: clock.now / 1000).child(ChildKey("via")) == .string("stamp"))
            let stored = try #require(try await store.user(uid: session.user.uid))
            #expect(stored.displayName == "Member" && stored.customClaims.child(ChildKey("via")) == .null)
            // Admins' sign-ups and anonymous ones are not asked.
            _ = try await service.signUp(email: "bob@example.com", password: Self.password, client: nil)
            _ = try await service.signUp(email: nil, password: nil, client: "10.0.0.7")
            #expect(asked.withLock { $0.count } == 2)
        }
    }

    @Test func aRefusalOrAnUnusableAnswerKeepsTheAccountOut() async throws {
        struct Refused: Error, CustomStringConvertible { var description: String { "no thanks" } }
        let refuse = BlockingFunction.swift(.beforeCreate, name: "gate") { event in
            if event.user.email == "bad@example.com" { throw Refused() }
            // Reserved claims cannot be set.
            return AccountBlockingResponse(customClaims: .object([(ChildKey("sub"), .string("someone-else"))]))
        }
        try await Self.withService(triggers: [("made", .created)], blocking: [refuse]) { (service, store, _) async throws in
            for email in ["bad@example.com", "good@example.com"] {
                let error = await #expect(throws: AuthError.self) {
                    _ = try await service.signUp(email: email, password: Self.password, client: "1.2.3.4")
                }
                #expect(error?.code == "BLOCKING_FUNCTION_ERROR_RESPONSE")
                #expect(try await store.user(email: email) == nil)
            }
            #expect(try await Self.events(store, for: "made").isEmpty)
        }
    }

    @Test func aFunctionThatNeverAnswersIsCutOffAtTheLimit() async throws {
        var policy = AuthService.Policy()
        policy.blockingFunctionTimeout = .milliseconds(200)
        let hang = BlockingFunction.swift(.beforeSignIn, name: "hang") { _ in
            // Ignores cancellation: the sign-in must not wait for it.
            let (stream, _) = AsyncStream.makeStream(of: Void.self)
            for await _ in stream {}
            return AccountBlockingResponse()
        }
        try await Self.withService(blocking: [hang], policy: policy) { (service, store, _) async throws in
            // The function never returns and ignores cancellation: the refusal coming back at all is the cut.
            let error = await #expect(throws: AuthError.self) {
                _ = try await service.signUp(email: "ada@example.com", password: Self.password, client: "1.2.3.4")
            }
            #expect(error?.message == "BLOCKING_FUNCTION_ERROR_RESPONSE : The blocking function did not answer within 200.0 milliseconds.")
            // beforeCreate had no function: the account exists, but no session was issued for it.
            #expect(try await store.user(email: "ada@example.com") != nil)
        }
    }

    // MARK: - Firebase's wire forms

    @Test func answersAreReadAsFirebaseAuthReadsThem() throws {
        let full = #"{"userRecord":{"displayName":"A","photoURL":null,"disabled":true,"emailVerified":true,"customClaims":{"r":1},"sessionClaims":{"s":2},"updateMask":"displayName,photoURL,disabled,emailVerified,customClaims,sessionClaims"}}"#
        let answer = try BlockingFunctionAnswer.parse(status: 200, body: Array(full.utf8))
        #expect(answer.displayName == .some("A") && answer.photoURL == Optional<String?>.some(nil) && answer.disabled == true)
        #expect(answer.emailVerified == true && answer.customClaims == .object([(ChildKey("r"), .int(1))]))
        #expect(answer.sessionClaims == .object([(ChildKey("s"), .int(2))]))
        // Only masked fields count; the emulator's photoUrl spelling too.
        let masked = try BlockingFunctionAnswer.parse(
            status: 200, body: Array(#"{"userRecord":{"displayName":"A","photoUrl":"p","updateMask":"photoUrl"}}"#.utf8))
        #expect(masked == AccountBlockingResponse(photoURL: .some("p")))
        #expect(try BlockingFunctionAnswer.parse(status: 200, body: Array("{}".utf8)).isEmpty)
        for (status, body, detail) in [
            (403, #"{"error":{"message":"no","status":"PERMISSION_DENIED"}}"#,
             #"HTTP Cloud Function returned an error: {"error":{"message":"no","status":"PERMISSION_DENIED"}}"#),
            (200, "not json", "Response body is not valid JSON."),
            (200, #"{"userRecord":{"displayName":"A"}}"#, "Response UserRecord is missing updateMask."),
            (200, #"{"userRecord":{"customClaims":[1],"updateMask":"customClaims"}}"#, "Response has malformed customClaims."),
        ] {
            #expect(throws: AuthError("BLOCKING_FUNCTION_ERROR_RESPONSE", detail: detail)) {
                _ = try BlockingFunctionAnswer.parse(status: status, body: Array(body.utf8))
            }
        }
        let big = Node.object([(ChildKey("k"), .string(String(repeating: "x", count: 1001)))])
        #expect(throws: AuthError.self) { _ = try AccountBlockingResponse(sessionClaims: big).validated(for: .beforeSignIn) }
        // Session claims before a creation are dropped, as Firebase drops them.
        let early = AccountBlockingResponse(sessionClaims: .object([(ChildKey("s"), .int(1))]))
        #expect(try early.validated(for: .beforeCreate).sessionClaims == nil)
    }

    @Test func theTokenCarriesWhatFirebasesSDKsRead() throws {
        var user = UserRecord(uid: "u1", email: "ada@example.com", provider: "password", createdAt: 1_700_000_000_000, validSince: 1_700_000_000)
        user.passwordHash = "hash"
        let event = AccountBlockingEvent(
            kind: .beforeCreate, id: "e1", user: user, signInMethod: "password",
            client: SignInClient(ipAddress: "1.2.3.4", userAgent: "ua", locale: "en"), time: 1_700_000_000_500)
        let token = BlockingEventToken.make(event, trigger: BlockingTrigger(kind: .beforeCreate), projectID: "proj", audience: "http://f")
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3 && parts[2].isEmpty)
        var payload = String(parts[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        payload += String(repeating: "=", count: (4 - payload.count % 4) % 4)
        let decoded = try #require(Data(base64Encoded: payload))
        let claims = try #require(try JSONSerialization.jsonObject(with: decoded) as? [String: Any])
        #expect(claims["iss"] as? String == "https://securetoken.google.com/proj" && claims["aud"] as? String == "http://f")
        #expect(claims["event_type"] as? String == "beforeCreate" && claims["event_id"] as? String == "e1")
        #expect(claims["iat"] as? Int == 1_700_000_000 && claims["sub"] as? String == "u1")
        #expect(claims["ip_address"] as? String == "1.2.3.4" && claims["user_agent"] as? String == "ua")
        let record = try #require(claims["user_record"] as? [String: Any])
        #expect(record["uid"] as? String == "u1" && record["email"] as? String == "ada@example.com")
        #expect((record["metadata"] as? [String: Int])?["creation_time"] == 1_700_000_000_000)
        #expect((record["provider_data"] as? [[String: String]])?.first?["provider_id"] == "password")
        #expect(record["password_hash"] == nil)
    }
}
